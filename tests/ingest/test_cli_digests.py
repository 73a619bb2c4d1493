"""`pontual ingest avl|fares FILE...` records each raw day's digest file by file, on a worker
thread beside the ingest (ADR 0113): the recorded digests are those of the days' rows as
stored at the end, whichever files wrote them."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import polars as pl

from cases.digests import compute_raw_day_digests
from core.store import Store
from pontual.cli import main
from tests.conftest import FIXTURES

HEADER = (
    "vehicle_id,event_at,lat,lon,speed_m_s,heading_deg,reported_trip_id,reported_route_id,"
    "reported_direction_id,event_code,reported_occupancy,operator_id"
)
TZ = "America/Sao_Paulo"  # the default profile's zone
COMPARED = ["service_date", "n_rows", "sha256", "digest_method", "row_hash_sum_a", "row_hash_sum_b"]


def _pings(path: Path, times: list[str], vehicle: str = "101") -> str:
    rows = [f"{vehicle},{t},-29.1700,-51.5200,8.5,90,T1,R1,0,,,OP1" for t in times]
    path.write_text("\n".join([HEADER, *rows]) + "\n", encoding="utf-8")
    return str(path)


def _recorded(store: Store, name: str) -> pl.DataFrame:
    return store.query(
        "SELECT service_date, n_rows, sha256, digest_method, row_hash_sum_a, row_hash_sum_b "
        "FROM raw_day_fingerprints WHERE table_name = ? ORDER BY service_date",
        [name],
    ).with_columns(pl.col("service_date").cast(pl.Date))


def _hashed_again(store: Store, name: str, first: date, last: date) -> pl.DataFrame:
    """Every day of the stored rows hashed in full now (nothing reused): the oracle."""
    fresh = compute_raw_day_digests(store, name, first, last, TZ, is_changed=True)
    return fresh.select(COMPARED).sort("service_date")


def test_days_written_by_several_files_are_digested_whole(tmp_path: Path) -> None:
    store = str(tmp_path / "s.duckdb")
    a = _pings(tmp_path / "a.csv", ["2026-03-02T10:00:00-03:00", "2026-03-03T08:00:00-03:00"])
    # the 3rd again (a later file writes a day an earlier one wrote), then a new day
    b = _pings(tmp_path / "b.csv", ["2026-03-03T09:00:00-03:00", "2026-03-04T23:59:00-03:00"])
    # a late ping of the first day, a repeat of a stored ping (a duplicate: not stored)
    c = _pings(tmp_path / "c.csv", ["2026-03-02T22:00:00-03:00", "2026-03-02T10:00:00-03:00"])
    assert main(["--quiet", "--store", store, "ingest", "avl", a, b, c]) == 0
    with Store.open(store, read_only=True) as s:
        recorded = _recorded(s, "vehicle_locations")
        assert recorded["service_date"].to_list() == [
            date(2026, 3, 2),
            date(2026, 3, 3),
            date(2026, 3, 4),
        ]
        assert recorded["n_rows"].to_list() == [2, 2, 1]
        oracle = _hashed_again(s, "vehicle_locations", date(2026, 3, 2), date(2026, 3, 4))
        assert recorded.equals(oracle)


def test_fares_days_are_digested_as_the_avl_days(tmp_path: Path) -> None:
    store = str(tmp_path / "s.duckdb")
    fares = str(FIXTURES / "ingest" / "fares_with_card_ids.csv")
    assert main(["--quiet", "--store", store, "ingest", "fares", fares]) == 0
    with Store.open(store, read_only=True) as s:
        recorded = _recorded(s, "fare_transactions")
        assert recorded.height >= 1
        first, last = recorded["service_date"].min(), recorded["service_date"].max()
        assert isinstance(first, date) and isinstance(last, date)
        assert recorded.equals(_hashed_again(s, "fare_transactions", first, last))


def test_a_refused_file_keeps_the_digests_of_the_files_before_it(tmp_path: Path) -> None:
    store = str(tmp_path / "s.duckdb")
    a = _pings(tmp_path / "a.csv", ["2026-03-02T10:00:00-03:00", "2026-03-03T08:00:00-03:00"])
    broken = tmp_path / "b.xyz"
    broken.write_text("not a format\n", encoding="utf-8")
    assert main(["--quiet", "--store", store, "ingest", "avl", a, str(broken)]) == 2
    with Store.open(store, read_only=True) as s:
        recorded = _recorded(s, "vehicle_locations")
        assert recorded["n_rows"].to_list() == [1, 1]
        oracle = _hashed_again(s, "vehicle_locations", date(2026, 3, 2), date(2026, 3, 3))
        assert recorded.equals(oracle)
