"""The validation core: crafted bad records land in quarantine with their reasons, re-ingest
adds nothing, card ids are hashed (HMAC-SHA256) and never reach the store file."""

from __future__ import annotations

import hashlib
import hmac
from pathlib import Path

import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core.profile import load_profile
from core.store import AppendResult, Store
from ingest.files import ingest_file
from ingest.options import IngestOptions
from ingest.records import compute_card_hashes, write_avl_records, write_fare_records
from tests.conftest import FIXTURES

DATA = FIXTURES / "ingest"
KEY = bytes(range(32))
PROFILE = load_profile("bento-goncalves-2021")


def _ingest(store: Store, name: str, kind: str, **opts: object):
    return ingest_file(
        store,
        DATA / name,
        kind,
        options=IngestOptions.model_validate(opts),
        profile=PROFILE,
        key=KEY,
    )


def test_bad_avl_lines_land_in_quarantine_with_their_reasons(store_path: Path) -> None:
    with Store.open(store_path) as store:
        counts = _ingest(store, "avl_bad_lines.csv", "avl", source_tz="America/Sao_Paulo")
        assert (counts.n_read, counts.n_accepted, counts.n_duplicate, counts.n_quarantined) == (
            13,
            3,
            1,
            9,
        )
        q = store.query("SELECT record_key, field, reason FROM quarantine ORDER BY record_key::INT")
        assert q.rows() == [
            ("4", "vehicle_id", "missing vehicle_id"),
            (
                "5",
                "event_at",
                "cannot read event_at as a time (ISO 8601 with offset, local "
                "ISO 8601, or epoch seconds)",
            ),
            ("6", "lat", "lat outside -90..90 degrees"),
            ("7", "speed_m_s", "speed_m_s outside 0..40 m/s"),
            ("8", "heading_deg", "heading_deg outside 0..360"),
            ("9", "lat", "position 0,0: the device had no GPS fix"),
            ("10", "event_at", "event_at more than 300 s in the future (clock skew allowance)"),
            ("11", "speed_m_s", "cannot read speed_m_s as a number"),
            ("12", "reported_direction_id", "reported_direction_id not 0 or 1"),
        ]
        raw = store.query("SELECT raw_record FROM quarantine WHERE record_key = '6'").item()
        assert '"lat":"95.0"' in raw
        # A local time without offset is read in the source zone (UTC-3 in March 2026).
        local = store.query("SELECT event_at FROM vehicle_locations WHERE vehicle_id = '102'")
        assert str(local.item()) == "2026-03-02 13:08:00+00:00"
        again = _ingest(store, "avl_bad_lines.csv", "avl", source_tz="America/Sao_Paulo")
        assert (again.n_accepted, again.n_duplicate, again.n_quarantined) == (0, 4, 9)
        assert store.count("vehicle_locations") == 3
        assert store.count("quarantine") == 9
        runs = store.query("SELECT n_accepted, n_duplicate FROM ingest_runs ORDER BY started_at")
        assert runs.rows() == [(3, 1), (0, 4)]


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
        _ingest(store, "vehicles.csv", "vehicles")
        refused = _ingest(store, "inspection_track.gpx", "avl")
        assert refused.n_quarantined == 3
        reason = store.query(
            "SELECT DISTINCT reason FROM quarantine WHERE target_table = 'vehicle_locations'"
        ).item()
        assert reason.startswith("vehicle_id not in the fleet register")
        accepted = _ingest(store, "inspection_track.gpx", "avl", accept_unknown_vehicles=True)
        assert accepted.n_accepted == 3
        ids = store.query("SELECT DISTINCT vehicle_id FROM vehicle_locations").item()
        assert ids == "BUS-205"  # the track's name


def test_card_hash_is_hmac_sha256_of_the_card_id() -> None:
    df = pl.DataFrame(
        {"card_id": ["3839538659", None, " 42 "], "raw_record": ["a,3839538659", "b", "42"]}
    )
    out = compute_card_hashes(df, KEY)
    expected = hmac.new(KEY, b"3839538659", hashlib.sha256).hexdigest()
    assert out["card_hash"].to_list() == [
        expected,
        None,
        hmac.new(KEY, b"42", hashlib.sha256).hexdigest(),
    ]
    assert out["raw_record"][0] == "a," + expected
    assert "card_id" not in out.columns


def test_fares_store_no_raw_card_id(store_path: Path) -> None:
    with Store.open(store_path) as store:
        counts = _ingest(store, "fares_with_card_ids.csv", "fares")
        assert (counts.n_accepted, counts.n_quarantined) == (3, 2)
        reasons = store.query("SELECT record_key, field FROM quarantine ORDER BY record_key").rows()
        assert reasons == [("4", "fare_class"), ("5", "amount")]
        classes = store.query("SELECT fare_class FROM fare_transactions ORDER BY event_at")
        assert classes["fare_class"].to_list() == ["full", "student", "elderly"]
        derived = store.query(
            "SELECT transaction_id FROM fare_transactions WHERE vehicle_id = '102'"
        )
        assert derived.item().startswith("derived:")
        store.con.execute("CHECKPOINT").fetchall()
    data = b"".join(p.read_bytes() for p in store_path.parent.iterdir() if p.is_file())
    for card in (b"918273645", b"555000111", b"777444222", b"333222111"):
        assert card not in data


def test_vehicle_register_upserts_by_vehicle_id(store_path: Path) -> None:
    with Store.open(store_path) as store:
        first = _ingest(store, "vehicles.csv", "vehicles")
        assert (first.n_accepted, first.n_quarantined) == (2, 2)
        changed = _ingest(store, "vehicles_changed.csv", "vehicles")
        assert (changed.n_accepted, changed.n_duplicate) == (1, 1)
        rows = store.query(
            "SELECT vehicle_id, last_inspection_on::VARCHAR, is_reserve FROM vehicles ORDER BY 1"
        ).rows()
        assert rows == [("101", "2026-03-01", False), ("102", "2025-11-20", True)]


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
        counts = _ingest(store, name, kind)
        assert counts.n_accepted == accepted
        got = store.query("SELECT reason FROM quarantine ORDER BY record_key")["reason"].to_list()
        assert len(got) == len(reasons)
        assert all(g.startswith(r) for g, r in zip(got, reasons, strict=True))


def test_json_lines_that_are_not_json_are_quarantined_as_such(store_path: Path) -> None:
    with Store.open(store_path) as store:
        counts = _ingest(store, "avl_lines_not_valid_json.jsonl", "avl")
        assert (counts.n_read, counts.n_accepted, counts.n_quarantined) == (6, 2, 4)
        q = store.query(
            "SELECT record_key, field, reason, raw_record FROM quarantine ORDER BY record_key::INT"
        )
        assert q.select("record_key", "field", "reason").rows() == [
            ("2", None, "not valid JSON (line 2): expected one JSON object a line"),
            ("3", None, "not valid JSON (line 3): expected one JSON object a line"),
            ("4", None, "not a JSON object (line 4): expected one object a line"),
            # A JSON object without the field is read; its field is missing.
            ("5", "vehicle_id", "missing vehicle_id"),
        ]
        assert q["raw_record"][1] == "vehicle_id=301;lat=-29.17"
        again = _ingest(store, "avl_lines_not_valid_json.jsonl", "avl")
        assert (again.n_accepted, again.n_duplicate, again.n_quarantined) == (0, 2, 4)
        assert store.count("quarantine") == 4


_text = st.one_of(st.none(), st.text(max_size=12), st.sampled_from(["", "nan", "1e999", "-0"]))
_number = st.one_of(
    _text, st.floats(allow_nan=True).map(str), st.integers(-(10**12), 10**12).map(str)
)


@pytest.mark.slow  # 40 random batches, each written to a fresh store
@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    st.lists(
        st.fixed_dictionaries(
            {
                "vehicle_id": _text,
                "event_at": st.one_of(
                    _text,
                    st.sampled_from(["2026-03-02T13:00:00Z", "1772456400", "2026-03-02 10:00:00"]),
                ),
                "lat": _number,
                "lon": _number,
                "speed_m_s": _number,
                "heading_deg": _number,
                "reported_direction_id": _number,
            }
        ),
        min_size=1,
        max_size=20,
    )
)
def test_random_records_are_stored_or_quarantined(
    tmp_path_factory: pytest.TempPathFactory, records: list[dict[str, object]]
) -> None:
    path = tmp_path_factory.mktemp("prop") / "p.duckdb"
    raw = pl.DataFrame(records, schema={k: pl.String for k in records[0]})
    with Store.open(path) as store:
        counts = write_avl_records(store, raw, source="prop")
        assert counts.n_accepted + counts.n_duplicate + counts.n_quarantined == len(records)
        assert store.count("vehicle_locations") == counts.n_accepted
        assert store.count("quarantine") == counts.n_quarantined
        fares = raw.select(
            pl.col("vehicle_id").alias("transaction_id"),
            "event_at",
            pl.col("lat").alias("card_id"),
            pl.col("lon").alias("fare_class"),
            pl.col("speed_m_s").alias("amount"),
        )
        f = write_fare_records(store, fares, source="prop-fares", key=KEY)
        assert f.n_accepted + f.n_duplicate + f.n_quarantined == len(records)


def test_padded_and_odd_values_parse_once_as_before(store_path: Path) -> None:
    raw = pl.DataFrame(
        {
            "vehicle_id": [" 101 ", "101", "101", "101", "101", "101"],
            "event_at": [f"2026-03-02T13:0{i}:00Z" for i in range(6)],
            "lat": ["  -29.17 ", "NaN", "-29.17", "", "-29.17", "-29.17"],
            "lon": ["-51.52"] * 6,
            "speed_m_s": ["5", "5", "inf", "5", "5", " 5 "],
            "heading_deg": ["   ", "0", "0", "0", "0", "0"],
            "reported_direction_id": ["1.0", "0", "0", "0", "1.5", None],
        }
    )
    with Store.open(store_path) as store:
        counts = write_avl_records(store, raw, source="odd")
        assert (counts.n_accepted, counts.n_quarantined) == (2, 4)
        stored = store.query(
            "SELECT vehicle_id, lat, speed_m_s, heading_deg, reported_direction_id "
            "FROM vehicle_locations ORDER BY event_at"
        ).rows()
        assert stored == [("101", -29.17, 5.0, None, 1), ("101", -29.17, 5.0, 0.0, None)]
        reasons = store.query("SELECT record_key, reason FROM quarantine ORDER BY record_key")
        assert reasons.rows() == [
            ("2", "cannot read lat as a number"),
            ("3", "cannot read speed_m_s as a number"),
            ("4", "missing lat"),
            ("5", "cannot read reported_direction_id as a whole number"),
        ]


def test_crash_mid_file_keeps_whole_chunks_and_a_rerun_completes_it(
    store_path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pings = pl.DataFrame(
        {
            "vehicle_id": ["101", "102"] * 5,
            "event_at": [f"2026-03-02T13:00:0{i}Z" for i in range(10)],
            "lat": [-29.17] * 10,
            "lon": [-51.52] * 10,
        }
    ).with_columns(pl.when(pl.int_range(pl.len()) == 1).then(95.0).otherwise("lat").alias("lat"))
    path = tmp_path / "pings.parquet"
    pings.write_parquet(path)
    real_append = Store.append
    calls = {"vehicle_locations": 0}

    def failing_append(self: Store, name: str, df: pl.DataFrame, **kw: object) -> AppendResult:
        if name == "vehicle_locations":
            calls[name] += 1
            if calls[name] == 2:
                raise OSError("disk full")
        return real_append(self, name, df, **kw)  # type: ignore[arg-type]

    with Store.open(store_path) as store:
        monkeypatch.setattr(Store, "append", failing_append)
        with pytest.raises(OSError):
            _ingest(store, str(path), "avl", chunk_rows=4)
        monkeypatch.setattr(Store, "append", real_append)
        # The first chunk (4 records, one out of range) committed whole; the second not at all.
        assert store.count("vehicle_locations") == 3
        assert store.count("quarantine") == 1
        assert store.count("ingest_runs") == 1
        counts = _ingest(store, str(path), "avl", chunk_rows=4)
        assert (counts.n_read, counts.n_accepted, counts.n_duplicate, counts.n_quarantined) == (
            10,
            6,
            3,
            1,
        )
        assert store.count("vehicle_locations") == 9
        assert store.count("quarantine") == 1
