"""Checks: each crafted bad record lands in quarantine with its first failing rule;
nothing read is lost."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core.store import Store
from ingest.writing import write_avl_records, write_fare_records
from tests.ingest.conftest import KEY, ingest_fixture


def test_bad_avl_lines_land_in_quarantine_with_their_reasons(store_path: Path) -> None:
    with Store.open(store_path) as store:
        counts = ingest_fixture(store, "avl_bad_lines.csv", "avl", source_tz="America/Sao_Paulo")
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
        again = ingest_fixture(store, "avl_bad_lines.csv", "avl", source_tz="America/Sao_Paulo")
        assert (again.n_accepted, again.n_duplicate, again.n_quarantined) == (0, 4, 9)
        assert store.count("vehicle_locations") == 3
        assert store.count("quarantine") == 9
        runs = store.query("SELECT n_accepted, n_duplicate FROM ingest_runs ORDER BY started_at")
        assert runs.rows() == [(3, 1), (0, 4)]


_text = st.one_of(st.none(), st.text(max_size=12), st.sampled_from(["", "nan", "1e999", "-0"]))
_number = st.one_of(
    _text, st.floats(allow_nan=True).map(str), st.integers(-(10**12), 10**12).map(str)
)


@pytest.mark.slow
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
def test_random_records_are_stored_or_quarantined(tmp_path_factory, records) -> None:
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
