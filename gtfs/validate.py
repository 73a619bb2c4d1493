"""Cross-file and cross-row checks of a read feed, vectorised with Polars joins.

Errors refuse the feed: duplicate primary keys, references to undefined agencies, routes,
services, trips, stops or shapes, stop times with only one of arrival/departure, trips without
timed first and last stops or with fewer than two stop times, times that go backwards, unknown
or mixed time zones, used stops without valid coordinates or near (0,0) or a pole, shape
points near (0,0) or a pole. Warnings let it load: unused stops, stops at the same place under
different ids, missing shapes, bad coordinates of unused stops, trips without stop times, stops
far from every other stop or with latitude and longitude swapped, a network wider than a city.
"""

from __future__ import annotations

import os
import zoneinfo
from functools import cache
from importlib import resources

import polars as pl

from gtfs.errors import ERROR, WARNING, GtfsIssue, Severity
from gtfs.geography import GeographyLimits, check_geography
from gtfs.read import LINE, Feed, rows_issues
from gtfs.spec import FILE_SPECS

# Stops closer than this (as rounded WGS84 degrees, about 1 m) are "the same place".
_SAME_PLACE_DECIMALS = 5


@cache
def _is_zone(name: str) -> bool:
    """Whether `name` is one of `zoneinfo.available_timezones()`, tested for this name alone.

    Listing them all walks the whole zone folder and reads every file's header (75-230 ms, a
    tenth of a small feed's load); a feed names one or two zones. The same rule per name: in
    the tzdata package's list, or a file under a TZPATH folder starting with the TZif magic,
    outside its `posix/` and `right/` copies, and not `posixrules`.
    """
    parts = name.split("/")
    if not name or name == "posixrules" or parts[0] in ("posix", "right"):
        return False
    if any(p in ("", ".", "..") for p in parts) or "\\" in name or "\0" in name:
        return False
    if name in _tzdata_zones():
        return True
    for root in zoneinfo.TZPATH:
        try:
            with open(os.path.join(root, *parts), "rb") as f:
                if f.read(4) == b"TZif":
                    return True
        except OSError:
            continue
    return False


@cache
def _tzdata_zones() -> frozenset[str]:
    """The zone list of the tzdata package, when it is installed (empty otherwise)."""
    try:
        listing = resources.files("tzdata").joinpath("zones").read_text()
    except (ImportError, FileNotFoundError):
        return frozenset()
    return frozenset(z.strip() for z in listing.splitlines() if z.strip())


def _check_primary_keys(feed: Feed) -> list[GtfsIssue]:
    out: list[GtfsIssue] = []
    for table, spec in FILE_SPECS.items():
        df = feed.get(table)
        if df is None or not spec.primary_key or not all(k in df.columns for k in spec.primary_key):
            continue
        key = list(spec.primary_key)
        if key == ["agency_id"]:
            continue  # agency ids are checked with the several-agencies rule below
        dup = df.filter(pl.struct(key).is_duplicated() & pl.struct(key).is_first_distinct().not_())
        dup = dup.filter(pl.all_horizontal(pl.col(key).is_not_null()))
        if dup.height:
            label = "+".join(key)
            dup = dup.with_columns(
                pl.concat_str([pl.col(k).cast(pl.String) for k in key], separator="/").alias("_key")
            )
            out += rows_issues(
                dup,
                ERROR,
                spec.name,
                key[-1],
                f"duplicate {label} '{{value}}'; each must be unique",
                "_key",
            )
    return out


def _undefined(
    df: pl.DataFrame | None,
    column: str,
    target: pl.Series | None,
    file: str,
    what: str,
    severity: Severity = ERROR,
) -> list[GtfsIssue]:
    """Rows of `df` whose non-null `column` is not in `target` (an anti-join)."""
    if df is None or column not in df.columns or target is None:
        return []
    ref = pl.DataFrame({column: target.drop_nulls().unique()})
    bad = df.filter(pl.col(column).is_not_null()).join(ref, on=column, how="anti").sort(LINE)
    return rows_issues(bad, severity, file, column, f"'{{value}}' is not defined in {what}")


def _col(feed: Feed, table: str, column: str) -> pl.Series | None:
    df = feed.get(table)
    if df is None or column not in df.columns:
        return None
    return df[column]


def _check_agency(feed: Feed) -> list[GtfsIssue]:
    out: list[GtfsIssue] = []
    agency = feed.get("agency")
    if agency is None or agency.height == 0:
        return out
    if "agency_timezone" in agency.columns:
        tz = agency.filter(pl.col("agency_timezone").is_not_null())
        names = tz["agency_timezone"].unique().to_list()
        valid = [n for n in names if _is_zone(n)]
        bad = tz.filter(~pl.col("agency_timezone").is_in(valid))
        out += rows_issues(
            bad,
            ERROR,
            "agency.txt",
            "agency_timezone",
            "'{value}' is not an IANA time zone (e.g. America/Sao_Paulo)",
        )
        if tz["agency_timezone"].n_unique() > 1:
            out.append(
                GtfsIssue(
                    ERROR,
                    "agency.txt",
                    None,
                    "agency_timezone",
                    "agencies with different time zones; all must share one",
                )
            )
    ids = (
        agency["agency_id"]
        if "agency_id" in agency.columns
        else pl.Series("agency_id", [None] * agency.height, pl.String)
    )
    if agency.height > 1:
        no_id = agency.filter(ids.is_null())
        out += rows_issues(
            no_id,
            ERROR,
            "agency.txt",
            "agency_id",
            "agency_id missing; required when the feed has several agencies",
        )
    with_id = agency.filter(ids.is_not_null()) if "agency_id" in agency.columns else agency.head(0)
    if "agency_id" in with_id.columns:
        dup = with_id.filter(
            pl.col("agency_id").is_duplicated() & ~pl.col("agency_id").is_first_distinct()
        )
        out += rows_issues(
            dup,
            ERROR,
            "agency.txt",
            "agency_id",
            "duplicate agency_id '{value}'; each must be unique",
        )
    routes = feed.get("routes")
    if routes is not None:
        if agency.height > 1:
            if "agency_id" not in routes.columns:
                out.append(
                    GtfsIssue(
                        ERROR,
                        "routes.txt",
                        1,
                        "agency_id",
                        "column required when the feed has several agencies",
                    )
                )
            else:
                out += rows_issues(
                    routes.filter(pl.col("agency_id").is_null()),
                    ERROR,
                    "routes.txt",
                    "agency_id",
                    "agency_id missing; required when the feed has several agencies",
                )
        if "agency_id" in agency.columns:
            out += _undefined(routes, "agency_id", agency["agency_id"], "routes.txt", "agency.txt")
        elif "agency_id" in routes.columns:
            out += _undefined(
                routes,
                "agency_id",
                pl.Series([], dtype=pl.String),
                "routes.txt",
                "agency.txt (which has no agency_id)",
            )
    return out


def _check_references(feed: Feed) -> list[GtfsIssue]:
    out: list[GtfsIssue] = []
    out += _undefined(
        feed.get("trips"), "route_id", _col(feed, "routes", "route_id"), "trips.txt", "routes.txt"
    )
    services = [
        s
        for s in (_col(feed, "calendar", "service_id"), _col(feed, "calendar_dates", "service_id"))
        if s is not None
    ]
    if services:
        out += _undefined(
            feed.get("trips"),
            "service_id",
            pl.concat(services),
            "trips.txt",
            "calendar.txt or calendar_dates.txt",
        )
    out += _undefined(
        feed.get("stop_times"),
        "trip_id",
        _col(feed, "trips", "trip_id"),
        "stop_times.txt",
        "trips.txt",
    )
    out += _undefined(
        feed.get("stop_times"),
        "stop_id",
        _col(feed, "stops", "stop_id"),
        "stop_times.txt",
        "stops.txt",
    )
    out += _undefined(
        feed.get("frequencies"),
        "trip_id",
        _col(feed, "trips", "trip_id"),
        "frequencies.txt",
        "trips.txt",
    )
    out += _undefined(
        feed.get("stops"),
        "parent_station",
        _col(feed, "stops", "stop_id"),
        "stops.txt",
        "stops.txt",
    )
    trips = feed.get("trips")
    if feed.has("shapes"):
        out += _undefined(
            trips, "shape_id", _col(feed, "shapes", "shape_id"), "trips.txt", "shapes.txt"
        )
    elif (
        trips is not None and "shape_id" in trips.columns and trips["shape_id"].is_not_null().any()
    ):
        out.append(
            GtfsIssue(
                WARNING,
                "trips.txt",
                None,
                "shape_id",
                "shape_id given but shapes.txt is missing; shapes are built from the stop sequences",
            )
        )
    if not feed.has("shapes"):
        out.append(
            GtfsIssue(
                WARNING,
                "shapes.txt",
                None,
                None,
                "no shapes.txt; each trip's shape is built from its stop sequence (planned km are then straight lines between stops)",
            )
        )
    elif trips is not None and "shape_id" in trips.columns:
        n = trips["shape_id"].null_count()
        if n:
            first = int(trips.filter(pl.col("shape_id").is_null())[LINE][0])
            out.append(
                GtfsIssue(
                    WARNING,
                    "trips.txt",
                    first,
                    "shape_id",
                    f"{n} trip(s) without shape_id (first here); their shape is built from the stop sequence",
                )
            )
    return out


def _check_stop_times(feed: Feed) -> list[GtfsIssue]:
    st = feed.get("stop_times")
    out: list[GtfsIssue] = []
    if st is None or not {"trip_id", "stop_sequence"} <= set(st.columns) or st.height == 0:
        return out
    cols = set(st.columns)
    arr = pl.col("arrival_time") if "arrival_time" in cols else pl.lit(None, pl.Int32)
    dep = pl.col("departure_time") if "departure_time" in cols else pl.lit(None, pl.Int32)
    s = (
        st.select(LINE, "trip_id", "stop_sequence", arr.alias("arr"), dep.alias("dep"))
        .filter(pl.col("trip_id").is_not_null() & pl.col("stop_sequence").is_not_null())
        .sort("trip_id", "stop_sequence")
    )
    only_arr = s.filter(pl.col("arr").is_not_null() & pl.col("dep").is_null())
    out += rows_issues(
        only_arr,
        ERROR,
        "stop_times.txt",
        "departure_time",
        "departure_time missing where arrival_time is given; expected both or neither",
    )
    only_dep = s.filter(pl.col("arr").is_null() & pl.col("dep").is_not_null())
    out += rows_issues(
        only_dep,
        ERROR,
        "stop_times.txt",
        "arrival_time",
        "arrival_time missing where departure_time is given; expected both or neither",
    )
    s = s.with_columns(
        pl.int_range(pl.len()).over("trip_id").alias("_pos"),
        pl.len().over("trip_id").alias("_n"),
        (pl.col("arr").is_not_null() | pl.col("dep").is_not_null()).alias("_timed"),
    )
    ends = s.filter(
        ((pl.col("_pos") == 0) | (pl.col("_pos") == pl.col("_n") - 1)) & ~pl.col("_timed")
    )
    out += rows_issues(
        ends,
        ERROR,
        "stop_times.txt",
        "arrival_time",
        "first and last stop of a trip must have times; this one has none",
    )
    short = s.filter((pl.col("_n") < 2) & (pl.col("_pos") == 0))
    out += rows_issues(
        short,
        ERROR,
        "stop_times.txt",
        "trip_id",
        "trip '{value}' has fewer than two stop times; expected at least two timed stops",
    )
    dwell = s.filter(pl.col("dep") < pl.col("arr"))
    out += rows_issues(
        dwell, ERROR, "stop_times.txt", "departure_time", "departure_time before arrival_time"
    )
    # Times must not go backwards along the stop sequence (compare with the last timed stop).
    t = s.filter(pl.col("_timed")).with_columns(
        pl.col("dep").fill_null(pl.col("arr")).shift(1).over("trip_id").alias("_prev_dep"),
        pl.col("arr").fill_null(pl.col("dep")).alias("_arr"),
    )
    back = t.filter(pl.col("_arr") < pl.col("_prev_dep"))
    out += rows_issues(
        back,
        ERROR,
        "stop_times.txt",
        "arrival_time",
        "time earlier than at the previous stop of the trip; expected times that never decrease along stop_sequence",
    )
    trips = feed.get("trips")
    if trips is not None and "trip_id" in trips.columns:
        idle = trips.join(s.select("trip_id").unique(), on="trip_id", how="anti")
        if idle.height:
            out.append(
                GtfsIssue(
                    WARNING,
                    "trips.txt",
                    int(idle[LINE][0]),
                    "trip_id",
                    f"{idle.height} trip(s) without stop times (first here); they are not scheduled",
                )
            )
    return out


def _check_stops(feed: Feed) -> list[GtfsIssue]:
    stops = feed.get("stops")
    out: list[GtfsIssue] = []
    if stops is None or "stop_id" not in stops.columns:
        return out
    st = feed.get("stop_times")
    if st is None:
        return out  # without stop_times every stop would be "unused": that error is enough
    used_ids = (
        st["stop_id"].unique()
        if st is not None and "stop_id" in st.columns
        else pl.Series([], dtype=pl.String)
    )
    parents = (
        stops["parent_station"].drop_nulls().unique()
        if "parent_station" in stops.columns
        else pl.Series([], dtype=pl.String)
    )
    s = stops.with_columns(
        pl.col("stop_id").is_in(used_ids.implode()).alias("_used"),
        pl.col("stop_id").is_in(parents.implode()).alias("_parent"),
    )
    lat = pl.col("stop_lat") if "stop_lat" in s.columns else pl.lit(None, pl.Float64)
    lon = pl.col("stop_lon") if "stop_lon" in s.columns else pl.lit(None, pl.Float64)
    s = s.with_columns(lat.alias("_lat"), lon.alias("_lon"))
    missing = pl.col("_lat").is_null() | pl.col("_lon").is_null()
    out_of_range = ~missing & (
        ~pl.col("_lat").is_between(-90, 90)
        | ~pl.col("_lon").is_between(-180, 180)
        | ((pl.col("_lat") == 0) & (pl.col("_lon") == 0))
    )
    out += rows_issues(
        s.filter(pl.col("_used") & missing),
        ERROR,
        "stops.txt",
        "stop_lat",
        "stop used by stop_times has no coordinates",
    )
    out += rows_issues(
        s.filter(pl.col("_used") & out_of_range),
        ERROR,
        "stops.txt",
        "stop_lat",
        "coordinates out of range (latitude -90..90, longitude -180..180, not 0,0)",
    )
    out += rows_issues(
        s.filter(~pl.col("_used") & out_of_range),
        WARNING,
        "stops.txt",
        "stop_lat",
        "unused stop with coordinates out of range",
    )
    lt = pl.col("location_type").fill_null(0) if "location_type" in s.columns else pl.lit(0)
    unused = s.filter(~pl.col("_used") & ~pl.col("_parent") & (lt == 0))
    out += rows_issues(
        unused, WARNING, "stops.txt", "stop_id", "stop '{value}' is not used by any trip"
    )
    placed = s.filter((lt == 0) & ~missing).with_columns(
        pl.col("_lat").round(_SAME_PLACE_DECIMALS).alias("_rlat"),
        pl.col("_lon").round(_SAME_PLACE_DECIMALS).alias("_rlon"),
    )
    same = placed.filter(pl.struct("_rlat", "_rlon").is_duplicated()).sort(LINE)
    if same.height:
        groups = same.group_by("_rlat", "_rlon", maintain_order=True).agg(
            pl.col("stop_id"), pl.col(LINE).min()
        )
        for row in groups.head(20).iter_rows(named=True):
            out.append(
                GtfsIssue(
                    WARNING,
                    "stops.txt",
                    row[LINE],
                    "stop_lat",
                    "stops "
                    + ", ".join(row["stop_id"])
                    + " are at the same place (duplicate stop?)",
                )
            )
    return out


def _check_calendar(feed: Feed) -> list[GtfsIssue]:
    out: list[GtfsIssue] = []
    cal = feed.get("calendar")
    if cal is not None and {"start_date", "end_date"} <= set(cal.columns):
        bad = cal.filter(pl.col("end_date") < pl.col("start_date"))
        out += rows_issues(bad, ERROR, "calendar.txt", "end_date", "end_date before start_date")
    freq = feed.get("frequencies")
    if freq is not None and {"start_time", "end_time"} <= set(freq.columns):
        bad = freq.filter(pl.col("end_time") <= pl.col("start_time"))
        out += rows_issues(
            bad, ERROR, "frequencies.txt", "end_time", "end_time not after start_time"
        )
        out += _check_overlapping_frequencies(freq)
    shapes = feed.get("shapes")
    if shapes is not None and "shape_id" in shapes.columns:
        short = (
            shapes.group_by("shape_id").agg(pl.len(), pl.col(LINE).min()).filter(pl.col("len") < 2)
        )
        out += rows_issues(
            short,
            WARNING,
            "shapes.txt",
            "shape_id",
            "shape '{value}' has fewer than two points; it is rebuilt from the stops",
        )
    return out


def _check_overlapping_frequencies(freq: pl.DataFrame) -> list[GtfsIssue]:
    """A window of a trip that starts before the previous window of the same trip ends (the
    canonical validator's `overlapping_frequency`, an error): both would expand to instances,
    two of them at the same start with the same id."""
    if not {"trip_id", "start_time", "end_time"} <= set(freq.columns) or not freq.height:
        return []
    ordered = freq.sort("trip_id", "start_time", LINE)
    # the latest end among the trip's earlier windows: a window nested in a long one still counts
    earlier_end = pl.col("end_time").cum_max().shift(1).over("trip_id")
    bad = ordered.filter(pl.col("start_time") < earlier_end)
    return rows_issues(
        bad,
        ERROR,
        "frequencies.txt",
        "start_time",
        "frequency window of trip '{value}' starts before its previous window ends; "
        "expected windows that do not overlap",
        value_column="trip_id",
    )


def validate_feed(feed: Feed, limits: GeographyLimits | None = None) -> list[GtfsIssue]:
    """Every issue of the feed: those found while reading, then the cross-file checks, then the
    geography (`gtfs.geography.check_geography`, with `limits`). Stops far from their shapes
    need the feed's geometry: `gtfs.geography.check_stops_on_shapes`.

    The result is sorted errors first, then by file and line. A feed loads when it has no error.
    """
    issues = list(feed.issues)
    issues += _check_primary_keys(feed)
    issues += _check_agency(feed)
    issues += _check_references(feed)
    issues += _check_stop_times(feed)
    issues += _check_stops(feed)
    issues += _check_calendar(feed)
    issues += check_geography(feed, limits or GeographyLimits())
    order = {ERROR: 0, WARNING: 1}
    return sorted(issues, key=lambda i: (order[i.severity], i.file, i.line or 0))
