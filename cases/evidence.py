"""Evidence that survives: the package of a case and the digests of raw days.

- `build_evidence_package(store, key, profile)`: at lavratura, the suggestion, the trips, the
  stop visits, the raw pings and taps behind the fact (ids and values), the profile and Pontual
  versions, as canonical JSON with its SHA-256; stored with the case (`case_evidence`).
- `record_day_digests(store, profile)`: the SHA-256 of each service day's raw
  `vehicle_locations` and `fare_transactions`, recorded once per day (`raw_day_digests`);
  `verify_day_digests` recomputes them and names every day whose raw data changed.
- `retention_cutoff` / `deletable_days`: raw days may be deleted only past the retention setting
  (default 9 years, the longest legal horizon) and never while a case on legal hold needs them.
- A day archived to the lake (`cases.archive`, `archived_days`) is digested from its lake
  partition with the same function (`compute_lake_day_digest`): the digest depends on the rows,
  never on where they are stored.
- `compute_period_day_digests`: the current digest of each raw day of a period, for a
  report's input hash: reused from `raw_day_fingerprints` while the day's fingerprint holds
  (`cases.digests`, ADR 0113); `verify_day_digests` never reuses, it recomputes every SHA-256.

A day's digest (`cases.digests.compute_day_digest`) is SHA-256 over its rows ordered by every
recorded column, by a method: arrow-binary-v1 for new digests (each column's values as bytes,
hashed per column), duckdb-text-v1 for those recorded before it (each row written as its
columns cast to text by DuckDB). The method and the columns are recorded in `digest_method`,
so a day is always verified by the method that recorded it, and a column added to the table
later does not change the digest of a day already recorded.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

import duckdb
import polars as pl
import sqlalchemy as sa

from cases.db import CASES, CaseDB
from cases.digests import (
    CURRENT_SCHEMA,
    DIGEST_METHOD,
    RAW_TABLES,
    compute_day_digest,
    compute_raw_day_digests,
    read_local_days,
    record_day_fingerprints,
    split_method,
)
from cases.errors import CaseError
from core import __version__
from core.lake import open_lake_day
from core.periods import local_bounds, range_period
from core.profile import Profile
from core.register import to_register_latest
from core.schema import table
from core.store import Store

DIGEST_SCHEMA = {
    "service_date": pl.Date,
    "table_name": pl.String,
    "n_rows": pl.Int64,
    "sha256": pl.String,
    "digest_method": pl.String,
}


def compute_lake_day_digest(
    lake: str | Path,
    name: str,
    day: date,
    tz: str,
    columns: list[str] | None = None,
    *,
    method: str = DIGEST_METHOD,
) -> tuple[int, str] | None:
    """(n_rows, sha256) of the day's partition of raw table `name` in the lake, by the very
    digest of the store (`compute_day_digest` by `method`: same rows, same bytes, same
    SHA-256); None when the lake has no partition of that day."""
    day_store = open_lake_day(lake, name, day)
    if day_store is None:
        return None
    with day_store:
        n, digest, _ = compute_day_digest(
            day_store, name, day, tz, columns, whole=True, method=method
        )
    return n, digest


def raw_days(store: Store, tz: str) -> pl.DataFrame:
    """Service days present in each raw table: table_name, service_date (`read_local_days`)."""
    parts = [
        pl.DataFrame(
            {"table_name": name, "service_date": read_local_days(store, name, tz)},
            schema={"table_name": pl.String, "service_date": pl.Date},
        )
        for name in RAW_TABLES
    ]
    return pl.concat(parts).sort("table_name", "service_date")


def record_day_digests(
    store: Store, profile: Profile, *, days: Iterable[date] | None = None
) -> pl.DataFrame:
    """Digest the raw days not digested yet (all present days, or only `days`); the rows
    recorded (DIGEST_SCHEMA). A day already digested is never re-recorded: its first digest is
    the reference that `verify_day_digests` checks. A day's current digest is taken from
    `raw_day_fingerprints` while its fingerprint holds (`record_day_fingerprints`, which
    brings that table up to date for the days digested here)."""
    tz = profile.general.timezone.value
    present = raw_days(store, tz)
    if days is not None:
        present = present.filter(pl.col("service_date").is_in(list(days)))
    done = store.query("SELECT table_name, service_date FROM raw_day_digests")
    todo = present.join(done, on=["table_name", "service_date"], how="anti")
    parts = []
    for name in RAW_TABLES:
        wanted = todo.filter(pl.col("table_name") == name)["service_date"].to_list()
        if wanted:
            got = record_day_fingerprints(store, tz, days=wanted, tables=(name,))
            parts.append(got.select(*DIGEST_SCHEMA))
    out = (
        pl.concat(parts).sort("table_name", "service_date")
        if parts
        else pl.DataFrame(schema=DIGEST_SCHEMA)
    )
    if out.height:
        store.append(
            "raw_day_digests",
            out.with_columns(
                pl.lit(tz).alias("time_zone"),
                pl.lit(datetime.now(UTC)).alias("digested_at"),
                pl.lit(__version__).alias("pontual_version"),
            ),
        )
    return out


CHANGED = "changed"
"""verify: the day's rows no longer give the recorded digest"""
MISSING_IN_LAKE = "missing_in_lake"
"""verify: an archived day whose lake partition is gone"""
BACK_IN_STORE = "back_in_store"
"""verify: an archived day that has rows in the store again (ingested after archival)"""
UNREADABLE = "unreadable"
"""verify: an archived day whose lake files cannot be read (damaged Parquet)"""

VERIFY_SCHEMA = {
    "service_date": pl.Date,
    "table_name": pl.String,
    "n_rows": pl.Int64,
    "n_rows_now": pl.Int64,
    "sha256": pl.String,
    "sha256_now": pl.String,
    "is_ok": pl.Boolean,
    "location": pl.String,
    "problem": pl.String,
}
"""What `verify_day_digests` returns: a row per recorded day digest. location: where the day
was checked (store, lake, or pruned: deleted from the lake past the retention, not checked);
problem: null, CHANGED, MISSING_IN_LAKE, UNREADABLE or BACK_IN_STORE."""


def _digest_method(row: dict[str, Any]) -> tuple[str, list[str]]:
    """(method, columns) a recorded day digest was computed by (CaseError: unknown)."""
    where = f"raw_day_digests {row['service_date']} {row['table_name']}"
    return split_method(row["digest_method"], where)


def _count_day_rows(store: Store, name: str, day: date, tz: str) -> int:
    start, end = local_bounds(range_period(day, day), tz)
    return int(
        store.query(
            f'SELECT count(*) AS n FROM "{name}" WHERE event_at >= ? AND event_at < ?',
            [start, end],
        )["n"][0]
    )


def verify_day_digests(
    store: Store, lake: str | Path | None = None, *, lake_only: bool = False
) -> pl.DataFrame:
    """Recompute every recorded day digest where the day lives, by the method and the
    columns it was recorded with (VERIFY_SCHEMA).

    A day in the store is digested from the store; a day archived to the lake
    (`archived_days`) from its lake partition: in `lake` when given (the lake moved), else in
    the lake recorded at archival. `lake_only`: `store` is the lake itself (`open_lake`, its
    exported raw_day_digests) and every day is digested from its partitions in `lake`."""
    if lake_only and lake is None:
        raise CaseError("verifying only the lake needs the lake's path")
    recorded = store.query(
        "SELECT d.service_date, d.table_name, d.n_rows, d.sha256, d.digest_method, d.time_zone, "
        "a.lake_path, a.pruned_at FROM raw_day_digests d LEFT JOIN archived_days a "
        "USING (service_date, table_name) ORDER BY d.service_date, d.table_name"
    )
    rows: list[tuple[date, str, int, int, str, str | None, bool, str, str | None]] = []
    for r in recorded.iter_rows(named=True):  # one query per recorded day
        method, cols = _digest_method(r)
        name, day, tz = r["table_name"], r["service_date"], r["time_zone"]
        n_now: int | None
        digest: str | None
        problem: str | None
        if r["pruned_at"] is not None:  # deleted past the retention: the digest is what is left
            rows.append((day, name, r["n_rows"], 0, r["sha256"], None, True, "pruned", None))
            continue
        if lake_only or r["lake_path"] is not None:
            root = lake if lake is not None else r["lake_path"]
            try:
                got = compute_lake_day_digest(root, name, day, tz, cols, method=method)
            except duckdb.Error:  # a damaged file is a changed day, named as such
                got, problem = None, UNREADABLE
            else:
                problem = MISSING_IN_LAKE if got is None else None
            n_now, digest = got if got is not None else (0, None)
            if problem is None and digest != r["sha256"]:
                problem = CHANGED
            if problem is None and not lake_only and _count_day_rows(store, name, day, tz):
                problem = BACK_IN_STORE
            location = "lake"
        else:
            n_now, digest, _ = compute_day_digest(store, name, day, tz, cols, method=method)
            problem = None if digest == r["sha256"] else CHANGED
            location = "store"
        rows.append(
            (day, name, r["n_rows"], n_now, r["sha256"], digest, problem is None, location, problem)
        )
    return pl.DataFrame(rows, schema=VERIFY_SCHEMA, orient="row")


def record_verified_fingerprints(store: Store, verified: pl.DataFrame) -> pl.DataFrame:
    """After `verify_day_digests` on a writable store: `raw_day_fingerprints` of every store
    day it checked, from the digest it has just recomputed in full (for a day recorded with
    the table's current columns, by its recorded method; any other day through
    `record_day_fingerprints`). A report
    then reuses what verify proved, and a row of that table edited behind Pontual's back is
    overwritten. Returns the rows brought up to date (CURRENT_SCHEMA)."""
    recorded = store.query(
        "SELECT service_date, table_name, digest_method, time_zone FROM raw_day_digests"
    ).with_columns(pl.col("service_date").cast(pl.Date))
    checked = verified.filter(pl.col("location") == "store").join(
        recorded, on=["service_date", "table_name"]
    )
    parts = []
    for (name, tz), group in checked.group_by("table_name", "time_zone"):
        columns = ",".join(table(str(name)).column_names)
        known = group.filter(
            pl.col("digest_method").str.split(":").list.get(1, null_on_oob=True) == columns
        ).select(
            "service_date",
            pl.col("n_rows_now").alias("n_rows"),
            pl.col("sha256_now").alias("sha256"),
            "digest_method",
        )
        parts.append(
            record_day_fingerprints(
                store,
                str(tz),
                days=group["service_date"].to_list(),
                tables=(str(name),),
                known=known,
            )
        )
    return pl.concat(parts) if parts else pl.DataFrame(schema=CURRENT_SCHEMA)


def compute_period_day_digests(store: Store, start: date, end: date, tz: str) -> pl.DataFrame:
    """The digest of each raw day from `start` to `end` (inclusive) as the store holds it *now*
    (recomputed, not the recorded reference; for a day archived to the lake, whose rows left
    the store, its recorded digest): table_name, service_date, n_rows, sha256,
    is_recorded (a reference digest exists) and is_as_recorded (it equals the reference; null
    when none). `compute_raw_day_digests`: the digest with the table's current columns, reused
    from `raw_day_fingerprints` for a day whose fingerprint is unchanged, else hashed in full
    (one query per day: a day's rows are ordered and hashed at once)."""
    now = pl.concat(
        [compute_raw_day_digests(store, name, start, end, tz) for name in RAW_TABLES]
    ).select("table_name", "service_date", "n_rows", "sha256")
    # archived days are out of the store: their recorded digest stands for their rows (it was
    # checked equal on the lake when they left; `pontual verify` re-checks it there)
    archived = store.query(
        "SELECT d.table_name, d.service_date, d.n_rows, d.sha256 FROM raw_day_digests d "
        "JOIN archived_days a USING (service_date, table_name) "
        "WHERE d.service_date BETWEEN ? AND ?",
        [start, end],
    ).with_columns(pl.col("service_date").cast(pl.Date))
    now = pl.concat(
        [now, archived.join(now, on=["table_name", "service_date"], how="anti")],
        how="vertical_relaxed",
    )
    recorded = store.query(
        "SELECT table_name, service_date, sha256 AS recorded_sha256 FROM raw_day_digests "
        "WHERE service_date BETWEEN ? AND ?",
        [start, end],
    ).with_columns(pl.col("service_date").cast(pl.Date))
    return (
        now.join(recorded, on=["table_name", "service_date"], how="left")
        .with_columns(
            pl.col("recorded_sha256").is_not_null().alias("is_recorded"),
            (pl.col("sha256") == pl.col("recorded_sha256")).alias("is_as_recorded"),
        )
        .drop("recorded_sha256")
        .sort("table_name", "service_date")
    )


def period_raw_digest(store: Store, start: date, end: date) -> str:
    """One SHA-256 over the recorded digests of the raw days from `start` to `end` (inclusive),
    in date and table order: what a report's input hash includes so that it changes when a raw
    ping or tap of the period changes (after `record_day_digests` / `pontual verify`)."""
    rows = store.query(
        "SELECT service_date, table_name, n_rows, sha256 FROM raw_day_digests "
        "WHERE service_date BETWEEN ? AND ? ORDER BY service_date, table_name",
        [start, end],
    )
    text = "\n".join(f"{d}|{t}|{n}|{h}" for d, t, n, h in rows.iter_rows())
    return hashlib.sha256(text.encode()).hexdigest()


# -- the evidence package of a case ----------------------------------------------------------
def _ping_ranges(text: str | None) -> list[tuple[int, int]]:
    """'10-42,50-80' -> [(10, 42), (50, 80)] (a lone id is a range of one)."""
    out = []
    for part in (text or "").split(","):
        part = part.strip()
        if not part:
            continue
        first, _, last = part.partition("-")
        out.append((int(first), int(last or first)))
    return out


def _records(frame: pl.DataFrame) -> list[dict[str, Any]]:
    return frame.to_dicts()


def canonical_json(obj: Any) -> str:
    """Sorted keys, no spaces, ISO dates: the same package always gives the same text."""

    def default(value: Any) -> str:
        if isinstance(value, datetime | date):
            return value.isoformat()
        return str(value)

    return json.dumps(
        obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=default
    )


def build_evidence_package(store: Store, infraction_key: str, profile: Profile) -> tuple[str, str]:
    """(canonical JSON, SHA-256) of the evidence behind a suggested infraction.

    Keys of the package: suggestion (the store row), trip_outcomes (of its scheduled trips on
    the day), trips (trips_performed of those trips), stop_visits (of those runs), pings (raw vehicle_locations of its ping id ranges),
    taps (raw fare_transactions of the vehicle during those pings, or for a fare fact, LXVI or
    XIV, the taps charged against the law; card ids are keyed hashes),
    raw_day_digests (of the day), profile (id, version), pontual_version, built_at (UTC).
    """
    sug = read_suggestion(store, infraction_key)
    day = sug["occurred_on"]
    archived = store.query("SELECT count(*) AS n FROM archived_days WHERE service_date = ?", [day])[
        "n"
    ][0]
    if archived:  # the package must hold the raw pings and taps: they left the store
        raise CaseError(
            f"the raw data of {day} were archived to the lake: the evidence package would lack "
            "the fact's pings and transactions",
            where=f"suggestion {infraction_key}",
            hint="draw up the cases of a period before archiving it (docs/retention.md)",
        )
    trip_ids = [t for t in (sug["trip_ids"] or "").split(",") if t]
    # the outcome of each scheduled trip of the fact (a suppressed trip has no run: its outcome
    # row is the evidence of its absence)
    outcomes = store.query(
        "SELECT * FROM trip_outcomes WHERE service_date = ? AND list_contains(?, trip_id) "
        "ORDER BY trip_id",
        [day, trip_ids],
    )
    trips = store.query(
        "SELECT * FROM trips_performed WHERE service_date = ? AND list_contains(?, trip_id) "
        "ORDER BY vehicle_id, run_index",
        [day, trip_ids],
    )
    visits = store.query(
        "SELECT v.* FROM stop_visits v JOIN (SELECT DISTINCT vehicle_id, run_index FROM "
        "trips_performed WHERE service_date = ? AND list_contains(?, trip_id)) r "
        "USING (vehicle_id, run_index) WHERE v.service_date = ? "
        "ORDER BY v.vehicle_id, v.run_index, v.stop_sequence",
        [day, trip_ids, day],
    )
    ranges = _ping_ranges(sug["ping_ids"])
    pings = pl.DataFrame()
    taps = pl.DataFrame()
    if ranges:
        where = " OR ".join("ping_id BETWEEN ? AND ?" for _ in ranges)
        params: list[Any] = [v for r in ranges for v in r]
        pings = store.query(
            f"SELECT * FROM vehicle_locations WHERE {where} ORDER BY ping_id", params
        )
        if pings.height:
            span = pings.group_by("vehicle_id").agg(
                pl.col("event_at").min().alias("first_at"),
                pl.col("event_at").max().alias("last_at"),
            )
            taps = pl.concat(
                [
                    store.query(
                        "SELECT * FROM fare_transactions WHERE vehicle_id = ? AND event_at "
                        "BETWEEN ? AND ? ORDER BY event_at, transaction_id",
                        [v, a, b],
                    )
                    for v, a, b in span.sort("vehicle_id").iter_rows()
                ],
                how="vertical_relaxed",
            )
    if sug["item"] in FARE_ITEMS:
        taps = read_fact_taps(store, sug, profile)
    digests = store.query(
        "SELECT table_name, n_rows, sha256, digest_method FROM raw_day_digests "
        "WHERE service_date = ? ORDER BY table_name",
        [day],
    )
    package = {
        "suggestion": sug,
        "trip_outcomes": _records(outcomes),
        "trips": _records(trips),
        "stop_visits": _records(visits),
        "pings": _records(pings),
        "taps": _records(taps),
        "raw_day_digests": _records(digests),
        "profile": {"id": profile.id, "version": profile.version},
        "pontual_version": __version__,
        "built_at": datetime.now(UTC),
    }
    text = canonical_json(package)
    return text, hashlib.sha256(text.encode()).hexdigest()


FARE_ITEMS = {"LXVI": "over_tariff", "XIV": "benefit_on_selective"}
"""Items whose fact is a set of taps (analytics.indices.fares_charged)."""


def read_fact_taps(store: Store, sug: dict[str, Any], profile: Profile) -> pl.DataFrame:
    """The raw taps behind a fare fact (LXVI, XIV): the fact's line and local day, the taps
    charged against the law for the fact's reason, found again with the profile's fares."""
    from analytics.indices.fares_charged import compute_fare_violations

    start, end = local_bounds(
        range_period(sug["occurred_on"], sug["occurred_on"]), profile.general.timezone.value
    )
    taps = store.query(
        "SELECT * FROM fare_transactions WHERE event_at >= ? AND event_at < ? "
        "AND route_id IS NOT DISTINCT FROM ? AND operator_id IS NOT DISTINCT FROM ? "
        "ORDER BY event_at, transaction_id",
        [start, end, sug["route_id"], sug["operator_id"]],
    )
    bad = compute_fare_violations(taps, store.read("vehicles"), profile).filter(
        pl.col("kind") == FARE_ITEMS[sug["item"]]
    )
    return taps.join(bad.select("transaction_id", "event_at"), on=["transaction_id", "event_at"])


def read_suggestion(store: Store, infraction_key: str) -> dict[str, Any]:
    """The suggested_infractions row of `infraction_key` (CaseError when absent)."""
    found = store.query(
        "SELECT * FROM suggested_infractions WHERE infraction_key = ?", [infraction_key]
    )
    if found.height == 0:
        raise CaseError(
            f"suggestion {infraction_key!r} is not in the store",
            hint="see the suggestions with `pontual indices` or in the dashboard",
        )
    return found.row(0, named=True)


def registered_plate(store: Store, vehicle_id: str) -> str | None:
    """The plate of a vehicle in the fleet register (None when unregistered or without one)."""
    got = to_register_latest(store.read("vehicles", "vehicle_id = ?", [vehicle_id]))
    return None if got.height == 0 else got["plate"].item()


# -- retention and legal holds -----------------------------------------------------------------
def retention_cutoff(today: date, years: int) -> date:
    """The first service day that must still be kept under a retention of `years`."""
    try:
        return today.replace(year=today.year - years)
    except ValueError:  # 29 February
        return today.replace(year=today.year - years, day=28)


def held_days(db: CaseDB) -> set[date]:
    """Service days of the facts of cases on legal hold."""
    with db.read() as conn:
        rows = conn.execute(
            sa.select(CASES.c.occurred_on).where(CASES.c.is_legal_hold.is_(True))
        ).all()
    return {r.occurred_on for r in rows}


def deletable_days(days: Iterable[date], today: date, years: int, held: set[date]) -> list[date]:
    """Of `days`, those raw data may be deleted for: older than the retention and held by no
    case. (Compaction keeps the digests: only this list may ever be dropped.)"""
    cutoff = retention_cutoff(today, years)
    return sorted(d for d in set(days) if d < cutoff and d not in held)


def evidence_matches(package: str, sha256: str) -> bool:
    """Whether a stored package still has its recorded digest."""
    return hashlib.sha256(package.encode()).hexdigest() == sha256
