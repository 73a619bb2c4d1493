"""Raw days out of the store and into the lake, and their deletion past the retention
(docs/adr/0099, docs/retention.md).

- `archive_days(store, lake, profile, before)`: each raw day (vehicle_locations,
  fare_transactions) older than `before` is written to the lake's partitions, digested again
  *from the lake* with the store's digest (`cases.evidence.compute_lake_day_digest`), and only
  when that equals the recorded digest deleted from the store and recorded in `archived_days`,
  in one store transaction per day. A day without a recorded digest is digested first. A re-run
  archives nothing twice.
- `plan_prune(...)` / `prune_days(...)`: the lake's raw days older than `before` that may be
  deleted (`cases.evidence.deletable_days`: past the retention, held by no case) and those
  refused with their reason; deleting marks `archived_days.pruned_at`, and the recorded digest
  stays as the proof of what the day held.
- `read_held_cases(db)`: case ids on legal hold per service day; `find_absent_held_days`: held
  days whose raw data is neither in the store nor in the lake.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, date, datetime
from pathlib import Path

import polars as pl
import sqlalchemy as sa

from cases.db import CASES, CaseDB
from cases.digests import split_method
from cases.evidence import (
    RAW_TABLES,
    compute_lake_day_digest,
    deletable_days,
    raw_days,
    record_day_digests,
)
from core import __version__
from core.lake import delete_day_partitions, export_table, lake_raw_days, raw_day_files
from core.periods import local_bounds, range_period
from core.profile import Profile
from core.schema import table
from core.store import Store

ARCHIVED = "archived"
"""archive outcome: the day left the store, its lake copy digests as recorded"""
DIFFERS = "differs"
"""archive outcome: the lake copy does not give the recorded digest; the day stays in the store"""

ARCHIVE_SCHEMA = {
    "service_date": pl.Date,
    "table_name": pl.String,
    "n_rows": pl.Int64,
    "outcome": pl.String,
}

RETENTION = "retention"
"""prune refusal: the day is within the retention (settings retention_years)"""
LEGAL_HOLD = "legal_hold"
"""prune refusal: a case on legal hold needs the day"""

PRUNE_SCHEMA: dict[str, pl.DataType | type[pl.DataType]] = {
    "service_date": pl.Date,
    "is_deletable": pl.Boolean,
    "reason": pl.String,
    "case_ids": pl.List(pl.Int64),
    "kept_until": pl.Date,
}


def archive_days(store: Store, lake: str | Path, profile: Profile, before: date) -> pl.DataFrame:
    """Move the raw days before `before` from the store into `lake`; one row per day and
    table handled (ARCHIVE_SCHEMA: outcome ARCHIVED or DIFFERS). Days archived already are not
    touched (a re-run returns no row); a day is archived whole (both tables) or not at all."""
    root = Path(lake).resolve()
    tz = profile.general.timezone.value
    present = raw_days(store, tz).filter(pl.col("service_date") < before)
    done = store.query("SELECT table_name, service_date FROM archived_days")
    todo = present.join(done, on=["table_name", "service_date"], how="anti")
    days = sorted(set(todo["service_date"].to_list()))
    record_day_digests(store, profile, days=days)  # a day never digested is digested first
    recorded = store.query(
        "SELECT service_date, table_name, n_rows, sha256, digest_method, time_zone "
        "FROM raw_day_digests WHERE list_contains(?, service_date)",
        [days],
    )
    out: list[tuple[date, str, int, str]] = []
    for day in days:  # atomic per day: both tables leave the store together, or neither
        rows = recorded.filter(
            (pl.col("service_date") == day)
            & pl.col("table_name").is_in(
                todo.filter(pl.col("service_date") == day)["table_name"].to_list()
            )
        )
        checked = []
        for r in rows.sort("table_name").iter_rows(named=True):
            name, day_tz = r["table_name"], r["time_zone"]
            export_table(store, root, table(name), day_tz, (day, day))
            method, columns = split_method(r["digest_method"], f"raw_day_digests {day} {name}")
            got = compute_lake_day_digest(root, name, day, day_tz, columns, method=method)
            same = got is not None and got == (r["n_rows"], r["sha256"])
            checked.append((name, r["n_rows"], r["sha256"], day_tz, same))
        is_all_same = all(c[4] for c in checked)
        if is_all_same:
            now = datetime.now(UTC)
            with store.transaction():
                for name, n_rows, sha256, day_tz, _ in checked:
                    start, end = local_bounds(range_period(day, day), day_tz)
                    store.con.execute(
                        f'DELETE FROM "{name}" WHERE event_at >= ? AND event_at < ?', [start, end]
                    )
                    store.con.execute(
                        "INSERT INTO archived_days (service_date, table_name, n_rows, sha256, "
                        "lake_path, archived_at, pontual_version) VALUES (?, ?, ?, ?, ?, ?, ?)",
                        [day, name, n_rows, sha256, str(root), now, __version__],
                    )
        for name, n_rows, _, _, _ in checked:
            out.append((day, name, n_rows, ARCHIVED if is_all_same else DIFFERS))
    if out:
        # the deleted days' blocks become free blocks that later writes reuse (the file keeps
        # its size: DuckDB does not truncate it; a copy of the database shrinks it)
        store.con.execute("CHECKPOINT")
    return pl.DataFrame(out, schema=ARCHIVE_SCHEMA, orient="row")


def read_held_cases(db: CaseDB) -> dict[date, list[int]]:
    """The ids of the cases on legal hold, per service day of their fact."""
    with db.read() as conn:
        rows = conn.execute(
            sa.select(CASES.c.occurred_on, CASES.c.case_id)
            .where(CASES.c.is_legal_hold.is_(True))
            .order_by(CASES.c.case_id)
        ).all()
    held: dict[date, list[int]] = {}
    for day, case_id in rows:
        held.setdefault(day, []).append(int(case_id))
    return held


def plan_prune(
    days: Iterable[date], before: date, today: date, years: int, held: dict[date, list[int]]
) -> pl.DataFrame:
    """Of the lake's raw `days` before `before`, which may be deleted (PRUNE_SCHEMA): only
    `deletable_days` (past the retention of `years`, held by no case); the others with their
    reason, RETENTION (kept_until: the day the retention lets it go) or LEGAL_HOLD (case_ids)."""
    candidates = sorted({d for d in days if d < before})
    allowed = set(deletable_days(candidates, today, years, set(held)))
    rows: list[tuple[date, bool, str | None, list[int], date | None]] = []
    for day in candidates:
        if day in allowed:
            rows.append((day, True, None, [], None))
        elif day in held:
            rows.append((day, False, LEGAL_HOLD, held[day], None))
        else:
            rows.append((day, False, RETENTION, [], _years_after(day, years)))
    return pl.DataFrame(rows, schema=PRUNE_SCHEMA, orient="row")


def _years_after(day: date, years: int) -> date:
    """The last day a raw day must be kept under a retention of `years` (`retention_cutoff`
    read the other way: it may go once today's cutoff is past it)."""
    try:
        return day.replace(year=day.year + years)
    except ValueError:  # 29 February
        return day.replace(year=day.year + years, day=28)


def read_lake_raw_days(lake: str | Path) -> list[date]:
    """The service days with a raw partition (pings or taps) in the lake."""
    return sorted({d for name in RAW_TABLES for d in lake_raw_days(lake, name)})


def prune_days(store: Store, lake: str | Path, plan: pl.DataFrame) -> list[date]:
    """Delete the lake's raw partitions of the plan's deletable days, each day at once, and
    mark those days `pruned_at` in `archived_days`; the days deleted."""
    root = Path(lake).resolve()
    gone = []
    for day in plan.filter(pl.col("is_deletable"))["service_date"].to_list():
        with store.transaction():
            store.con.execute(
                "UPDATE archived_days SET pruned_at = ? WHERE service_date = ? "
                "AND lake_path = ? AND pruned_at IS NULL",
                [datetime.now(UTC), day, str(root)],
            )
            deleted = [delete_day_partitions(root, name, day) for name in RAW_TABLES]
        if any(deleted):
            gone.append(day)
    return gone


def find_absent_held_days(
    store: Store, held: dict[date, list[int]], lakes: Iterable[str | Path], tz: str
) -> dict[date, list[int]]:
    """The held days (with their cases) that have no raw ping nor tap in the store and no raw
    partition in any of `lakes`: the evidence a case on hold needs is gone."""
    roots = [Path(p) for p in lakes]
    absent = {}
    for day, cases in sorted(held.items()):
        start, end = local_bounds(range_period(day, day), tz)
        in_store = any(
            store.query(
                f'SELECT count(*) AS n FROM "{name}" WHERE event_at >= ? AND event_at < ?',
                [start, end],
            )["n"][0]
            for name in RAW_TABLES
        )
        in_lake = any(raw_day_files(root, name, day) for root in roots for name in RAW_TABLES)
        if not in_store and not in_lake:
            absent[day] = cases
    return absent
