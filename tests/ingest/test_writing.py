"""Writing: upserts of the register, whole-chunk transactions and idempotent re-runs."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from core.store import Store
from tests.ingest.conftest import ingest_fixture


def test_vehicle_register_upserts_by_vehicle_id(store_path: Path) -> None:
    with Store.open(store_path) as store:
        first = ingest_fixture(store, "vehicles.csv", "vehicles")
        assert (first.n_accepted, first.n_quarantined) == (2, 2)
        changed = ingest_fixture(store, "vehicles_changed.csv", "vehicles")
        assert (changed.n_accepted, changed.n_duplicate) == (1, 1)
        rows = store.query(
            "SELECT vehicle_id, last_inspection_on::VARCHAR, is_reserve FROM vehicles ORDER BY 1"
        ).rows()
        assert rows == [("101", "2026-03-01", False), ("102", "2025-11-20", True)]


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

    def failing_append(self: Store, name: str, df: pl.DataFrame, **kw: object):  # type: ignore[no-untyped-def]
        if name == "vehicle_locations":
            calls[name] += 1
            if calls[name] == 2:
                raise OSError("disk full")
        return real_append(self, name, df, **kw)  # type: ignore[arg-type]

    with Store.open(store_path) as store:
        monkeypatch.setattr(Store, "append", failing_append)
        with pytest.raises(OSError):
            ingest_fixture(store, str(path), "avl", chunk_rows=4)
        monkeypatch.setattr(Store, "append", real_append)
        # The first chunk (4 records, one out of range) committed whole; the second not at all.
        assert store.count("vehicle_locations") == 3
        assert store.count("quarantine") == 1
        assert store.count("ingest_runs") == 1
        counts = ingest_fixture(store, str(path), "avl", chunk_rows=4)
        assert (counts.n_read, counts.n_accepted, counts.n_duplicate, counts.n_quarantined) == (
            10,
            6,
            3,
            1,
        )
        assert store.count("vehicle_locations") == 9
        assert store.count("quarantine") == 1
