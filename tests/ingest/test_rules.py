"""Rules of the tables: the network's box, the fleet register, the smaller inputs."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from core.store import Store
from ingest.writing import write_avl_records
from tests.ingest.conftest import ingest_fixture


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
        ("iqs_surveys.csv", "surveys", 3, ["score outside 0..100"]),
        ("passenger_counts.csv", "counts", 1, ["n_alightings negative"]),
        ("avl_lines.jsonl", "avl", 2, ["not valid JSON (line 3)", "cannot read lat as a number"]),
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
