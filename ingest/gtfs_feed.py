"""Load a GTFS feed into the store as one feed version, and read the schedule back.

A load validates first and writes nothing when the feed has errors (`GtfsError`). A valid feed
is written in ONE store transaction: its `feed_versions` row, every `gtfs_*` table, an
`ingest_runs` row and the scheduled trips of its service days; a failure anywhere rolls all of
it back. Scheduled trips are written compactly (ADR 0102): timetable trips to
`scheduled_timetable_trips`, frequency templates once per day to `scheduled_frequency_trips`;
readers read the `scheduled_trips` view, which expands the templates into their instances.

The feed id is derived from the hash of the feed's files, so loading the same feed again is a
no-op that says so.

Several versions can be stored. The version in force on a date is the latest loaded one whose
validity covers it; materialising a date replaces whatever scheduled trips that date had.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import polars as pl

from core import __version__
from core.errors import InputError
from core.store import Store
from core.tables.reference import GTFS_TABLE_NAMES
from gtfs.calendar import compute_validity
from gtfs.errors import GtfsError, GtfsIssue, errors_of, warnings_of
from gtfs.frequencies import count_instances
from gtfs.geography import GeographyLimits, check_stops_on_shapes
from gtfs.read import Feed, read_feed
from gtfs.schedule import (
    FeedGeometry,
    build_geometry,
    build_schedule_days,
    from_store_frames,
    to_store_frames,
)
from gtfs.validate import validate_feed

# Default number of service days materialised at load (from the first); `pontual gtfs
# schedule --from --to` materialises other ranges.
DEFAULT_MATERIALISE_DAYS = 400
# Service dates of scheduled trips built and written at a time (bounds a load's memory) ...
SCHEDULE_CHUNK_DAYS = 92
# ... or more dates, while a chunk stays under this many rows at one row per trips.txt trip
# and date (a frequency feed's few templates, or a small feed, fit a whole range in one chunk:
# each chunk costs a build and two inserts, ~0.05 s, whatever its size).
SCHEDULE_CHUNK_ROWS = 400_000
# The stored tables behind the `scheduled_trips` view (ADR 0102).
SCHEDULE_TABLES = ("scheduled_timetable_trips", "scheduled_frequency_trips")

GTFS_TABLES = GTFS_TABLE_NAMES


@dataclass(frozen=True)
class GtfsLoadResult:
    """What a load did. `is_new` is false when the same feed was already stored (no-op)."""

    feed_id: str
    source: str
    is_new: bool
    valid_from: date
    valid_to: date
    crs_epsg: int
    warnings: list[GtfsIssue] = field(default_factory=list)
    n_rows: dict[str, int] = field(default_factory=dict)
    scheduled_from: date | None = None
    scheduled_to: date | None = None
    n_scheduled_trips: int = 0


def feed_id_of(sha256: str) -> str:
    """The feed id: a short, stable prefix of the feed's content hash."""
    return "gtfs-" + sha256[:16]


def clip_range(
    start: date, end: date, valid_from: date, valid_to: date
) -> tuple[date, date] | None:
    """[start, end] ∩ [valid_from, valid_to], or None when they do not meet."""
    lo, hi = max(start, valid_from), min(end, valid_to)
    return (lo, hi) if lo <= hi else None


def load_gtfs(
    store: Store,
    path: str | Path,
    *,
    materialise_days: tuple[date, date] | None = None,
    limits: GeographyLimits | None = None,
) -> GtfsLoadResult:
    """Read, validate and load the feed at `path` as one feed version (see the module doc).

    `limits`: thresholds of the geography checks (default `GeographyLimits()`).

    `materialise_days` is the service-day range of `scheduled_trips` to build (clipped to the
    feed's validity); by default the first `DEFAULT_MATERIALISE_DAYS` days of the feed.
    Raises `GtfsError` (nothing written) when the feed has errors.
    """
    started = datetime.now(UTC)
    feed = read_feed(path)
    limits = limits or GeographyLimits()
    issues = validate_feed(feed, limits)
    if errors_of(issues):
        raise GtfsError(issues, source=str(path))
    warnings = warnings_of(issues)
    validity = compute_validity(feed)
    if validity is None:
        raise GtfsError(
            [GtfsIssue("error", "calendar.txt", None, None, "no service date in the feed")],
            source=str(path),
        )
    valid_from, valid_to = validity
    feed_id = feed_id_of(feed.sha256)
    known = store.query(
        "SELECT feed_id, crs_epsg FROM feed_versions WHERE source_sha256 = ?", [feed.sha256]
    )
    if known.height:
        return GtfsLoadResult(
            feed_id=str(known["feed_id"][0]),
            source=str(path),
            is_new=False,
            valid_from=valid_from,
            valid_to=valid_to,
            crs_epsg=int(known["crs_epsg"][0]),
            warnings=warnings,
        )
    geometry = build_geometry(feed)
    warnings += check_stops_on_shapes(geometry.stop_times, feed, limits)
    frames = to_store_frames(feed, feed_id, geometry)
    if materialise_days is None:
        materialise_days = (valid_from, valid_from + timedelta(days=DEFAULT_MATERIALISE_DAYS - 1))
    days = clip_range(*materialise_days, valid_from, valid_to)
    version = pl.DataFrame(
        {
            "feed_id": [feed_id],
            "source": [str(path)],
            "source_sha256": [feed.sha256],
            "loaded_at": [started],
            "timezone": [str(frames["gtfs_agency"]["agency_timezone"][0])],
            "crs_epsg": [geometry.epsg],
            "valid_from": [valid_from],
            "valid_to": [valid_to],
            "n_warnings": [len(warnings)],
            "pontual_version": [__version__],
        }
    )
    n_rows: dict[str, int] = {}
    with store.transaction():
        # a new feed id (its content hash is not stored) keys every row: nothing to skip, and
        # validation refused repeated keys within each file
        store.append("feed_versions", version, new_keys=True)
        for name, frame in frames.items():
            n_rows[name] = store.append(name, frame, new_keys=True).n_inserted
        n_sched = (
            write_schedule(store, feed, days, feed_id=feed_id, geometry=geometry) if days else 0
        )
        n_read = sum(n_rows.values())
        store.append(
            "ingest_runs",
            pl.DataFrame(
                {
                    "run_id": [str(uuid.uuid4())],
                    "kind": ["gtfs"],
                    "source": [str(path)],
                    "source_sha256": [feed.sha256],
                    "started_at": [started],
                    "finished_at": [datetime.now(UTC)],
                    "n_read": [n_read],
                    "n_accepted": [n_read],
                    "n_duplicate": [0],
                    "n_quarantined": [0],
                }
            ),
        )
    return GtfsLoadResult(
        feed_id=feed_id,
        source=str(path),
        is_new=True,
        valid_from=valid_from,
        valid_to=valid_to,
        crs_epsg=geometry.epsg,
        warnings=warnings,
        n_rows=n_rows,
        scheduled_from=days[0] if days else None,
        scheduled_to=days[1] if days else None,
        n_scheduled_trips=n_sched,
    )


def write_schedule(
    store: Store, feed: Feed, days: tuple[date, date], *, feed_id: str, geometry: FeedGeometry
) -> int:
    """Replace the scheduled trips of every service date in `days` with `feed`'s, built and
    written `SCHEDULE_CHUNK_DAYS` dates at a time, or more while a chunk stays under
    `SCHEDULE_CHUNK_ROWS` rows (one transaction). Returns the number of
    trips the `scheduled_trips` view now has on those dates.

    Frequency templates are written once per day, not expanded (ADR 0102): a frequency-based
    city feed runs thousands of instances a day, millions over a year (2.4 M rows, 42-51 s and
    2.1 GB for the São Paulo sample when they were expanded at load).
    """
    n = 0
    freq = feed.get("frequencies")
    trips = feed.get("trips")
    n_trips = trips.height if trips is not None else 0
    chunk_days = max(SCHEDULE_CHUNK_DAYS, SCHEDULE_CHUNK_ROWS // max(1, n_trips))
    with store.transaction():
        # every date of the range is now this feed's: clear it even where it runs no trip
        delete_schedule(store, "service_date BETWEEN ? AND ?", [days[0], days[1]])
        lo = days[0]
        while lo <= days[1]:
            hi = min(days[1], lo + timedelta(days=chunk_days - 1))
            chunk = build_schedule_days(feed, lo, hi, feed_id=feed_id, geometry=geometry)
            # the range's days were just deleted: every key (date, trip) is new
            n += store.append(
                "scheduled_timetable_trips", chunk.timetable, new_keys=True
            ).n_inserted
            store.append("scheduled_frequency_trips", chunk.frequency, new_keys=True)
            n += count_instances(chunk.frequency, freq)
            lo = hi + timedelta(days=1)
    return n


def delete_schedule(store: Store, where_sql: str, params: list[object]) -> None:
    """Delete the scheduled trips matching `where_sql` from both tables of the view."""
    for name in SCHEDULE_TABLES:
        store.con.execute(f"DELETE FROM {name} WHERE {where_sql}", params)


def read_feed_versions(store: Store) -> pl.DataFrame:
    """Every stored feed version, the latest loaded first."""
    return store.read("feed_versions").sort("loaded_at", descending=True)


def compute_feeds_in_force(store: Store, start: date, end: date) -> pl.DataFrame:
    """For each date in [start, end] covered by a feed: `service_date`, `feed_id` in force.

    The version in force is the latest loaded feed whose validity covers the date.
    """
    versions = read_feed_versions(store)
    days = pl.DataFrame({"service_date": pl.date_range(start, end, eager=True)})
    if versions.height == 0:
        return days.with_columns(pl.lit(None, pl.String).alias("feed_id")).head(0)
    cover = days.join(
        versions.select("feed_id", "valid_from", "valid_to", "loaded_at"), how="cross"
    )
    cover = cover.filter(
        pl.col("service_date").is_between(pl.col("valid_from"), pl.col("valid_to"))
    )
    return (
        cover.sort("loaded_at", descending=True)
        .group_by("service_date", maintain_order=True)
        .first()
        .select("service_date", "feed_id")
        .sort("service_date")
    )


def read_stored_feed(store: Store, feed_id: str) -> tuple[Feed, FeedGeometry]:
    """The stored feed version `feed_id` rebuilt as (Feed, FeedGeometry)."""
    frames = {name: store.read(name, "feed_id = ?", [feed_id]) for name in GTFS_TABLES}
    epsg = store.query("SELECT crs_epsg FROM feed_versions WHERE feed_id = ?", [feed_id])
    # the distances decided at load, per trips.txt trip: a timetable trip's rows, a template's
    # day rows (and the instances an older load expanded into the timetable table: each
    # carries its template's distance)
    distances = store.query(
        "SELECT DISTINCT template_trip_id AS trip_id, planned_distance_m "
        "FROM scheduled_timetable_trips WHERE feed_id = ? "
        "UNION SELECT DISTINCT template_trip_id, planned_distance_m "
        "FROM scheduled_frequency_trips WHERE feed_id = ?",
        [feed_id, feed_id],
    )
    return from_store_frames(frames, int(epsg["crs_epsg"][0]), distances)


def materialise_schedule(store: Store, start: date, end: date) -> dict[str, int]:
    """Build the scheduled trips of every date in [start, end] from the feed in force that day.

    Returns the number of trips written per feed id (as the `scheduled_trips` view counts
    them). Dates no feed covers are left alone.
    """
    in_force = compute_feeds_in_force(store, start, end)
    written: dict[str, int] = {}
    with store.transaction():
        for (feed_id,), dates in in_force.group_by("feed_id", maintain_order=True):
            feed, geometry = read_stored_feed(store, str(feed_id))
            service_dates: list[date] = dates["service_date"].to_list()
            lo, hi = min(service_dates), max(service_dates)
            built = build_schedule_days(feed, lo, hi, feed_id=str(feed_id), geometry=geometry)
            in_dates = pl.col("service_date").is_in(dates["service_date"].implode())
            delete_schedule(store, "service_date IN (SELECT unnest(?::DATE[]))", [service_dates])
            frequency = built.frequency.filter(in_dates)
            store.append("scheduled_frequency_trips", frequency)
            written[str(feed_id)] = store.append(
                "scheduled_timetable_trips", built.timetable.filter(in_dates)
            ).n_inserted + count_instances(frequency, feed.get("frequencies"))
    return written


@dataclass
class ScheduleCache:
    """The stop times and shapes read so far in a run over several days, by feed version and
    the day's template trips (state only: `read_schedule_from_store` uses it). A feed repeats
    a few service patterns (weekday, Saturday, Sunday) for months, and a day's stop times are
    most of its schedule's read (0.06 of 0.09 s on the 300-bus city). For one run of a command
    that writes no GTFS table (matching): a feed loaded meanwhile is a new feed version, a new
    key. At most `size` patterns are kept, the oldest dropped first."""

    size: int = 8
    entries: dict[tuple[str, tuple[str, ...]], tuple[pl.DataFrame, pl.DataFrame]] = field(
        default_factory=dict
    )


def read_schedule_from_store(
    store: Store, service_date: date, cache: ScheduleCache | None = None
) -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame]:
    """The planned service of one day for the matching engine.

    Raises `InputError` when no loaded feed covers the date. Returns (scheduled_trips of that date, gtfs_stop_times of their template trips, gtfs_shapes
    of their shapes), all from the feed version in force on that date. `cache`: a run over
    several days (`ScheduleCache`) reads a service pattern's stop times and shapes once.
    """
    in_force = compute_feeds_in_force(store, service_date, service_date)
    if in_force.height == 0:
        raise InputError(
            f"no GTFS feed in force on {service_date.isoformat()}",
            hint="load a feed that covers this date with `pontual gtfs load PATH`",
        )
    feed_id = str(in_force["feed_id"][0])
    # no row can also mean a day without service (a holiday): not an error
    trips = store.read(
        "scheduled_trips", "service_date = ? AND feed_id = ?", [service_date, feed_id]
    ).sort("planned_start_s", "trip_id")
    key = (feed_id, tuple(trips["template_trip_id"].unique().sort().to_list()))
    if cache is not None and key in cache.entries:
        return trips, *cache.entries[key]
    # through the view, not its two tables: a lake exported before ADR 0102 has only the view's
    stop_times = store.read(
        "gtfs_stop_times",
        "feed_id = ? AND trip_id IN (SELECT DISTINCT template_trip_id FROM scheduled_trips "
        "WHERE service_date = ? AND feed_id = ?)",
        [feed_id, service_date, feed_id],
    ).sort("trip_id", "stop_sequence")
    shapes = store.read(
        "gtfs_shapes",
        "feed_id = ? AND shape_id IN (SELECT DISTINCT shape_id FROM scheduled_trips "
        "WHERE service_date = ? AND feed_id = ?)",
        [feed_id, service_date, feed_id],
    ).sort("shape_id", "shape_pt_sequence")
    if cache is not None:
        if len(cache.entries) >= cache.size:
            cache.entries.pop(next(iter(cache.entries)))  # the oldest
        cache.entries[key] = (stop_times, shapes)
    return trips, stop_times, shapes
