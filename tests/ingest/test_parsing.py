"""Parsing: raw values to declared dtypes, each value once; unreadable lines named."""

from __future__ import annotations

from pathlib import Path

import polars as pl

from core.store import Store
from ingest.writing import write_avl_records
from tests.ingest.conftest import ingest_fixture


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


def test_json_lines_that_are_not_json_are_quarantined_as_such(store_path: Path) -> None:
    with Store.open(store_path) as store:
        counts = ingest_fixture(store, "avl_lines_not_valid_json.jsonl", "avl")
        assert (counts.n_read, counts.n_accepted, counts.n_quarantined) == (6, 2, 4)
        q = store.query(
            "SELECT record_key, field, reason, raw_record FROM quarantine ORDER BY record_key::INT"
        )
        assert q.select("record_key", "field", "reason").rows() == [
            ("2", None, "not valid JSON: expected one JSON object a line"),
            ("3", None, "not valid JSON: expected one JSON object a line"),
            ("4", None, "not a JSON object: expected one object a line"),
            # A JSON object without the field is read; its field is missing.
            ("5", "vehicle_id", "missing vehicle_id"),
        ]
        assert q["raw_record"][1] == "vehicle_id=301;lat=-29.17"
        again = ingest_fixture(store, "avl_lines_not_valid_json.jsonl", "avl")
        assert (again.n_accepted, again.n_duplicate, again.n_quarantined) == (0, 2, 4)
        assert store.count("quarantine") == 4
