"""Rules of the tables: the network's box, the fleet register, the smaller inputs."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from core.store import Store
from ingest.checks import JudgedBatch
from ingest.rules import (
    REASON_UNPROCESSABLE,
    NetworkContext,
    compute_avl_judged,
    compute_judged_isolating,
)
from ingest.writing import write_avl_records, write_fare_records
from tests.ingest.conftest import KEY, ingest_fixture


def test_positions_outside_the_network_box_are_quarantined(store_path: Path) -> None:
    with Store.open(store_path) as store:
        stops = pl.DataFrame(
            {
                "feed_id": ["f"] * 2,
                "stop_id": ["a", "b"],
                "stop_lat": [-29.18, -29.15],
                "stop_lon": [-51.53, -51.50],
            }
        )
        store.append("gtfs_stops", stops)
        raw = pl.DataFrame(
            {
                "vehicle_id": ["1", "1"],
                "event_at": ["2026-03-02T13:00:00Z", "2026-03-02T13:01:00Z"],
                "lat": [-29.17, -23.55],
                "lon": [-51.52, -46.63],
                "record_key": ["m1", "m2"],
            }
        )
        counts = write_avl_records(store, raw, source="mqtt/test")
        assert (counts.n_accepted, counts.n_quarantined) == (1, 1)
        assert store.query("SELECT record_key, reason FROM quarantine").row(0) == (
            "m2",
            "position outside the network's area (bounding box of the stops plus 5000 m)",
        )
        assert not any("GTFS" in n for n in counts.notes)


def test_unknown_vehicles_need_explicit_acceptance(store_path: Path) -> None:
    with Store.open(store_path) as store:
        ingest_fixture(store, "vehicles.csv", "vehicles")
        refused = ingest_fixture(store, "inspection_track.gpx", "avl")
        assert refused.n_quarantined == 3
        reason = store.query(
            "SELECT DISTINCT reason FROM quarantine WHERE target_table = 'vehicle_locations'"
        ).item()
        assert reason.startswith("vehicle_id not in the fleet register")
        accepted = ingest_fixture(
            store, "inspection_track.gpx", "avl", accept_unknown_vehicles=True
        )
        assert accepted.n_accepted == 3
        ids = store.query("SELECT DISTINCT vehicle_id FROM vehicle_locations").item()
        assert ids == "BUS-205"  # the track's name


@pytest.mark.parametrize(
    ("name", "kind", "accepted", "reasons"),
    [
        (
            "incidents.csv",
            "incidents",
            1,
            ["ends_at before starts_at", "kind unknown", "cannot read is_justified as yes/no"],
        ),
        (
            "iqs_surveys.csv",
            "surveys",
            2,
            ["score outside 0..100", "period not YYYY, YYYY-S1/S2 or YYYY-MM (month 01..12)"],
        ),
        ("passenger_counts.csv", "counts", 1, ["n_alightings negative"]),
        ("iqs_surveys_year_before_2000.csv", "surveys", 1, ["period year outside 2000"] * 3),
        (
            "avl_lines.jsonl",
            "avl",
            2,
            ["not valid JSON: expected one JSON object a line", "cannot read lat as a number"],
        ),
    ],
)
def test_small_inputs(
    store_path: Path, name: str, kind: str, accepted: int, reasons: list[str]
) -> None:
    with Store.open(store_path) as store:
        counts = ingest_fixture(store, name, kind)
        assert counts.n_accepted == accepted
        got = store.query("SELECT reason FROM quarantine ORDER BY record_key")["reason"].to_list()
        assert len(got) == len(reasons)
        assert all(g.startswith(r) for g, r in zip(got, reasons, strict=True))


def test_a_ping_or_tap_for_another_operators_vehicle_is_quarantined(store_path: Path) -> None:
    # 101 and 102 are OP1's (vehicles.csv). OP2 sends a ping and a tap naming 101: forged.
    with Store.open(store_path) as store:
        ingest_fixture(store, "vehicles.csv", "vehicles")
        pings = pl.DataFrame(
            {
                "vehicle_id": ["101", "101", "102"],
                "event_at": [
                    "2026-03-02T13:00:00Z",
                    "2026-03-02T13:00:05Z",
                    "2026-03-02T13:00:00Z",
                ],
                "lat": ["-29.17"] * 3,
                "lon": ["-51.52"] * 3,
                "operator_id": ["OP2", "OP1", None],
            }
        )
        avl = write_avl_records(store, pings, source="mqtt/test")
        taps = pl.DataFrame(
            {
                "transaction_id": ["T1", "T1"],
                "event_at": ["2026-03-02T13:00:00Z"] * 2,
                "vehicle_id": ["101", "101"],
                "card_id": ["123456789", "123456789"],
                "fare_class": ["full", "full"],
                "operator_id": ["OP2", "OP1"],
            }
        )
        fares = write_fare_records(store, taps, source="mqtt/test-fares", key=KEY)
        q = store.query(
            "SELECT target_table, record_key, field, reason FROM quarantine "
            "WHERE target_table <> 'vehicles' ORDER BY 1"
        )
        stored = store.query("SELECT operator_id, transaction_id FROM fare_transactions").rows()
    assert (avl.n_accepted, avl.n_quarantined) == (2, 1)
    assert (fares.n_accepted, fares.n_quarantined) == (1, 1)
    other = "vehicle of another operator (the fleet register names OP1)"
    assert q.rows() == [
        ("fare_transactions", "1", "operator_id", other),
        ("vehicle_locations", "1", "operator_id", other),
    ]
    # OP2's forged tap T1 did not block OP1's real T1.
    assert stored == [("OP1", "T1")]


def test_a_record_whose_validation_fails_alone_is_quarantined_the_rest_judged() -> None:
    raw = pl.DataFrame(
        {
            "vehicle_id": [str(i) for i in range(8)],
            "event_at": ["2026-03-02T13:00:00Z"] * 8,
            "lat": ["-29.17"] * 8,
            "lon": ["-51.52"] * 8,
            "card_id": ["secret-card"] * 8,
            "record_key": [f"m{i}" for i in range(8)],
        }
    )
    ctx = NetworkContext(None, None)

    def judge(frame: pl.DataFrame) -> JudgedBatch:
        if "5" in frame["vehicle_id"].to_list():
            raise pl.exceptions.PanicException("a native failure on this record")
        return compute_avl_judged(frame.drop("card_id"), ctx, source="s")

    batch = compute_judged_isolating(judge, raw, target="vehicle_locations", source="s")
    assert batch.n_read == 8
    assert sorted(batch.accepted["vehicle_id"].to_list()) == ["0", "1", "2", "3", "4", "6", "7"]
    q = batch.quarantined
    assert q.select("record_key", "reason").rows() == [("m5", REASON_UNPROCESSABLE)]
    assert '"vehicle_id":"5"' in q["raw_record"][0]
    assert "secret-card" not in q["raw_record"][0]
