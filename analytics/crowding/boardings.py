"""Boarding placement: each fare tap joined to the run its vehicle was running and the stop it
was at, by an as-of join on vehicle and time against the stop visits.

A stop visit takes the taps made from its arrival until the vehicle reaches the next stop
(passengers queue at the turnstile after the bus pulls away); the origin terminal also takes the
taps made while the bus waits there before departing (up to `terminal_boarding_s`, never before
the vehicle's previous run ended). The last stop of a run takes none. A tap no window holds is
kept and explained, not dropped.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

import polars as pl

from core.schema import UTC_INSTANT

RUN_KEY = ["service_date", "vehicle_id", "run_index"]

UNPLACED_REASONS = {
    "no_vehicle": "validação sem veículo: não se sabe em que viagem ocorreu",
    "vehicle_without_trips": (
        "o veículo não tem viagem reconhecida no período (GPS não casado com a programação)"
    ),
    "outside_trips": (
        "validação fora das viagens do veículo (antes da primeira, entre viagens ou após a última)"
    ),
}
"""Why a tap could not be placed, by placement code (pt-BR, shown to planners)."""

TRACE_REASONS = {
    "on_trace": "localizada no rastro GPS do veículo (sem viagem programada: sem parada nem carga)",
    "no_vehicle": "validação sem veículo: não há rastro GPS a consultar",
    "vehicle_without_gps": "o veículo não tem posições GPS no período",
    "beyond_gps_gap": "nenhuma posição GPS do veículo perto o bastante da hora da validação",
}
"""Where a tap without a run stands on its vehicle's GPS trace, by code (pt-BR)."""


@dataclass(frozen=True)
class BoardingOptions:
    """How taps (and APC readings) are placed on stop visits; units in the names."""

    terminal_boarding_s: float = 900.0
    """default: taps up to this long before the origin departure board at the origin terminal
    (layover boarding); bounded below by the end of the vehicle's previous run"""
    trace_max_gap_s: float = 300.0
    """default: a tap with no run is located on its vehicle's GPS trace at the nearest fix
    no farther than this in time (SUBE's sample has a fix every 4-6 min)"""
    last_stop_hold_s: float = 300.0
    """default: for APC readings only, the last stop holds readings this long after arrival
    (door close after the final alighting)"""


DEFAULT_BOARDING_OPTIONS = BoardingOptions()


@dataclass(frozen=True)
class VisitKey:
    """An integer key for (run key, stop sequence) over the runs of some visits: a
    mixed-radix number of the day, the vehicle's rank, the run index and the sequence, each
    from the least of the visits. Visits sorted by run key and sequence have increasing keys
    (vehicle ranks follow the ids' sort order); rows outside the visits' ranges get null, so
    no visit has their key. Joins, bisections and counts on it cost a fraction of those on
    the (string) run key."""

    vehicles: pl.Series
    """the visits' vehicle ids, sorted"""
    day_min: int
    n_days: int
    run_min: int
    n_runs: int
    seq_min: int
    n_seqs: int

    @classmethod
    def of(cls, visits: pl.DataFrame) -> VisitKey:
        """The key over `visits` (run key columns and `stop_sequence`; or placed taps, whose
        run key columns are those of their run)."""
        parts = {
            "day": pl.col("service_date").to_physical().cast(pl.Int64),
            "run": pl.col("run_index").cast(pl.Int64),
            "seq": pl.col("stop_sequence").cast(pl.Int64),
        }
        lo_hi = visits.select(
            *[e.min().alias(f"{n}_min") for n, e in parts.items()],
            *[e.max().alias(f"{n}_max") for n, e in parts.items()],
        ).row(0, named=True)
        for n in parts:  # a part with no value (no visit; taps none of which placed) is empty
            if lo_hi[f"{n}_min"] is None:
                lo_hi[f"{n}_min"], lo_hi[f"{n}_max"] = 0, -1
        return cls(
            vehicles=visits["vehicle_id"].drop_nulls().unique().sort(),
            **{f"{n}_min": lo_hi[f"{n}_min"] for n in parts},
            **{f"n_{n}s": lo_hi[f"{n}_max"] - lo_hi[f"{n}_min"] + 1 for n in parts},
        )

    def run_expr(self) -> pl.Expr:
        """The key of each row's run at its least sequence (its visits' keys lie in
        [that, that + `n_seqs`)); null outside the ranges."""
        day = pl.col("service_date").to_physical().cast(pl.Int64) - self.day_min
        run = pl.col("run_index").cast(pl.Int64) - self.run_min
        vehicle = pl.col("vehicle_id").replace_strict(
            self.vehicles,
            pl.int_range(self.vehicles.len(), eager=True),
            default=None,
            return_dtype=pl.Int64,
        )
        inside = day.is_between(0, self.n_days - 1) & run.is_between(0, self.n_runs - 1)
        return pl.when(inside).then(
            ((day * self.vehicles.len() + vehicle) * self.n_runs + run) * self.n_seqs
        )

    def expr(self, sequence: pl.Expr, run: pl.Expr | None = None) -> pl.Expr:
        """The key of each row's run and `sequence`; null outside the ranges. `run`: the
        rows' `run_expr` when computed already (two keys of one row share it)."""
        seq = sequence.cast(pl.Int64) - self.seq_min
        run = self.run_expr() if run is None else run
        return pl.when(seq.is_between(0, self.n_seqs - 1)).then(run + seq)


def is_new_run() -> pl.Expr:
    """Whether each row starts a run (its run key differs from the previous row's): on rows
    in run key order, the first row of each run."""
    return pl.any_horizontal(*[pl.col(c).ne_missing(pl.col(c).shift(1)) for c in RUN_KEY])


def is_sorted_by(frame: pl.DataFrame, columns: list[str]) -> bool:
    """Whether the rows of `frame` are in ascending `columns` order with no null there: a
    check of each row against the next, a fraction of a sort (which gathers every column)."""
    if frame.height < 2:
        return True
    # row i <= row i + 1 in `columns` order, built from the last column up: strictly before
    # on a column, or equal there and in order on the rest
    in_order: pl.Expr = pl.lit(True)
    for c in reversed(columns):
        this, after = pl.col(c), pl.col(c).shift(-1)
        in_order = (this < after) | ((this == after) & in_order)
    return bool(
        frame.select(
            in_order.head(frame.height - 1).all()
            & pl.all_horizontal(pl.col(c).null_count() == 0 for c in columns)
        ).item()
    )


def sort_by_run(visits: pl.DataFrame) -> pl.DataFrame:
    """`visits` (run key and `stop_sequence` columns, the pair unique) sorted by run key and
    sequence; the frame itself when its rows are in that order already (a check of each row
    against the next, a fraction of a sort: a sort of a month's visits gathers every column,
    their string ids included, and `compute_crowding_by_day` sorts them once for the
    boarding windows and the load profiles)."""
    columns = [*RUN_KEY, "stop_sequence"]
    if is_sorted_by(visits, columns):
        return visits
    if visits.select(pl.any_horizontal(pl.col(c).is_null().any() for c in columns)).item():
        return visits.sort(columns)
    # by one integer: (day, vehicle's rank in id order, run, sequence) as a mixed-radix
    # number, its arg sort and one gather (half the CPU of a sort on the four columns with
    # the string vehicle id); the same order, the key being unique
    ids = visits["vehicle_id"].unique().sort()
    parts: list[pl.Expr] = [
        pl.col("service_date").to_physical().cast(pl.Int64),
        pl.col("vehicle_id").cast(pl.Enum(ids)).to_physical().cast(pl.Int64),
        pl.col("run_index").cast(pl.Int64),
        pl.col("stop_sequence").cast(pl.Int64),
    ]
    ranges = visits.select(
        pl.struct(part.min().alias("lo"), part.max().alias("hi")).alias(str(i))
        for i, part in enumerate(parts)
    ).row(0)
    size = 1
    for r in ranges:
        size *= r["hi"] - r["lo"] + 1
    if size >= 2**62:
        return visits.sort(columns)
    key: pl.Expr = pl.lit(0, pl.Int64)
    for part, r in zip(parts, ranges, strict=True):
        key = key * (r["hi"] - r["lo"] + 1) + (part - r["lo"])
    return visits[visits.select(key.arg_sort()).to_series()]


def build_stop_windows(
    stop_visits: pl.DataFrame, *, include_last: bool, options: BoardingOptions
) -> pl.DataFrame:
    """The time window of each stop visit that events (taps, APC readings) are placed in.

    `stop_visits`: the `stop_visits` table (stops not reached, with no time, are ignored).
    Returns one row per usable visit: the run key, `trip_id`, `stop_sequence`, `stop_id`,
    `window_start_at` and `window_end_at` (UTC, half-open [start, end)), sorted by start.
    Windows of one vehicle never overlap. With `include_last=False` the last visited stop of
    each run has no window (nobody boards where the trip ends).
    """
    lead = pl.duration(microseconds=int(options.terminal_boarding_s * 1e6))
    hold = pl.duration(microseconds=int(options.last_stop_hold_s * 1e6))
    after_last = hold if include_last else pl.duration(microseconds=0)
    at = pl.coalesce("arrival_at", "departure_at")
    dep = pl.coalesce("departure_at", "arrival_at")
    # in run key and sequence order (the key is unique: `stop_visits`' primary key), a run's
    # first and last visits are where the run key changes, and the next visit's time is the
    # next row's: shifts, not windows over the (string) run key
    new_run = is_new_run()
    vehicle_ids = stop_visits["vehicle_id"].drop_nulls().unique().sort()
    v = (
        sort_by_run(
            stop_visits.lazy()
            .filter(at.is_not_null())
            .select(
                *RUN_KEY, "trip_id", "stop_sequence", "stop_id", at.alias("at"), dep.alias("dep")
            )
            .collect()
        )
        .lazy()
        .with_columns(
            new_run.alias("is_first"),
            new_run.shift(-1, fill_value=True).alias("is_last"),
            new_run.cum_sum().alias("run_number"),
        )
        .with_columns(
            pl.when(pl.col("is_last")).then(None).otherwise(pl.col("at").shift(-1)).alias("next_at")
        )
        # read by two branches below: collected once rather than computed for each
        .collect()
        .lazy()
    )
    # Runs of a vehicle in time order: the origin window starts no earlier than the previous
    # run's last arrival, and the last stop's (APC) window ends before the next run's start.
    # A run's first and last rows, in run order, are one row per run each (no group-by or
    # join on the string run key: the runs are numbered).
    runs = (
        pl.concat(
            [
                v.filter("is_first").select(
                    "run_number", "vehicle_id", pl.col("dep").alias("run_dep")
                ),
                v.filter("is_last").select(pl.col("at").alias("run_end")),
            ],
            how="horizontal",
        )
        .collect()
        .sort("vehicle_id", "run_dep")
        .with_columns(
            # with the last stop's window (APC), the next run starts after it is over
            (pl.col("run_end").shift(1).over("vehicle_id") + after_last).alias("prev_end"),
        )
        # one row per run, by run number (1, 2, ...): each visit's run's is a gather by
        # its number, not a join of a month of visits
        .sort("run_number")
        .get_column("prev_end")
    )
    start = (
        pl.when(pl.col("is_first"))
        .then(
            pl.max_horizontal(
                pl.min_horizontal(pl.col("at"), pl.col("dep") - lead),
                pl.col("prev_end"),
            )
        )
        .otherwise(pl.col("at"))
    )
    end = (
        pl.when(pl.col("is_last")).then(pl.max_horizontal("at", "dep") + hold).otherwise("next_at")
    )
    # the vehicle by its rank in id order: the same order as by the string id, for a
    # fraction of the sort's CPU on a month of visits
    rank = pl.col("vehicle_id").cast(pl.Enum(vehicle_ids)).to_physical().alias("vehicle_rank")
    same_vehicle = pl.col("vehicle_rank") == pl.col("vehicle_rank").shift(-1)
    w = (
        v.with_columns(
            pl.lit(runs).gather(pl.col("run_number") - 1).alias("prev_end"),
            rank,
        )
        .filter(pl.lit(include_last) | ~pl.col("is_last"))
        .select(
            *RUN_KEY,
            "trip_id",
            "stop_sequence",
            "stop_id",
            "vehicle_rank",
            start.alias("window_start_at"),
            end.alias("window_end_at"),
        )
        .collect()
    )
    # The two sorts below (by vehicle and start, to cut each window at the vehicle's next;
    # then by start) are stable arg sorts of one integer each, moving a row number only:
    # the windows' string ids are gathered once, by the last order (a sort of the whole
    # frame on its five key columns gathers every column, a month's string ids twice). The
    # rows are in run key order, so a vehicle's windows of one start stay in (service
    # date, run, sequence) order, as when sorted by those columns too.
    start_us = pl.col("window_start_at").dt.epoch("us")
    lowest, highest = w.select(start_us.min().alias("lo"), start_us.max().alias("hi")).row(0)
    width = 1 if lowest is None else highest - lowest + 1
    by_vehicle: list[pl.Expr] = [
        pl.col("vehicle_rank").cast(pl.Int64) * width + (start_us - (lowest or 0))
    ]
    if width * max(len(vehicle_ids), 1) >= 2**62:  # (centuries of windows: two keys)
        by_vehicle = [pl.col("vehicle_rank"), start_us]
    order = (
        w.lazy()
        .select(
            pl.int_range(pl.len(), dtype=pl.UInt32).alias("row"),
            "vehicle_rank",
            "window_start_at",
            "window_end_at",
            *[key.alias(f"by_vehicle_{i}") for i, key in enumerate(by_vehicle)],
        )
        .sort([f"by_vehicle_{i}" for i in range(len(by_vehicle))], maintain_order=True)
        .with_columns(
            # the vehicle's next window's start (rows in vehicle then start order: the next
            # row's, when of the same vehicle; a shift, not a window over the string id)
            pl.min_horizontal(
                "window_end_at",
                pl.when(same_vehicle).then(pl.col("window_start_at").shift(-1)),
            ).alias("window_end_at")
        )
        .filter(pl.col("window_end_at") > pl.col("window_start_at"))
        .sort("window_start_at", maintain_order=True)
        .select("row", "window_end_at")
        .collect()
    )
    # (a gather from one chunk: from the query's many, it costs several times more)
    return w.rechunk()[order["row"]].select(
        *RUN_KEY,
        "trip_id",
        "stop_sequence",
        "stop_id",
        pl.col("window_start_at").cast(UTC_INSTANT),
        order["window_end_at"].cast(UTC_INSTANT),
    )


def windows_between(windows: pl.DataFrame, start: datetime, end: datetime) -> pl.DataFrame:
    """The windows of `build_stop_windows` (sorted by start) that overlap [start, end).

    An event in [start, end) is placed on them as on all the windows: the window that holds
    it overlaps; and without one, the latest window of its vehicle begun before it (the one
    the as-of join finds) is over by then either way, since one vehicle's windows never
    overlap.
    """
    starts = windows["window_start_at"]
    bounds = pl.Series([start, end]).cast(starts.dtype)
    n = int(starts.search_sorted(bounds[1:], side="left")[0])
    return windows.head(n).filter(pl.col("window_end_at") > bounds[0])


def match_to_windows(events: pl.DataFrame, windows: pl.DataFrame) -> pl.DataFrame:
    """As-of join of events (`vehicle_id`, `event_at`) onto `build_stop_windows` output.

    Returns `events` with the run key columns prefixed by nothing (`service_date`,
    `run_index`, `trip_id`, `stop_sequence`, `stop_id`) filled where the event falls inside a
    window of its vehicle, null otherwise, and `is_placed`.
    """
    # events already in time order (taps as the store returns them) are not sorted again: the
    # sort copies every column, strings included (on a big city's day, a gigabyte of card
    # and transaction ids the result can share with the input instead)
    left = events if events["event_at"].is_sorted() else events.sort("event_at")
    joined = left.join_asof(
        windows.rename({"service_date": "window_service_date"}),
        left_on="event_at",
        right_on="window_start_at",
        by="vehicle_id",
        strategy="backward",
        check_sortedness=False,
    )
    inside = pl.col("window_start_at").is_not_null() & (
        pl.col("event_at") < pl.col("window_end_at")
    )
    keep = ["window_service_date", "run_index", "trip_id", "stop_sequence", "stop_id"]
    return joined.with_columns(
        inside.fill_null(False).alias("is_placed"),
        *[pl.when(inside).then(pl.col(c)).alias(c) for c in keep],
    ).drop("window_start_at", "window_end_at")


def compute_boardings(
    taps: pl.DataFrame,
    stop_visits: pl.DataFrame,
    *,
    timezone: str,
    options: BoardingOptions = DEFAULT_BOARDING_OPTIONS,
) -> pl.DataFrame:
    """Place each tap on the run and stop where it boarded.

    `taps`: `fare_transactions` rows (transaction_id, operator_id, event_at, vehicle_id,
    card_hash, ...; without `operator_id`, null). `stop_visits`: the `stop_visits` table.
    `timezone`: the profile's IANA zone, which decides the service date of taps that cannot be
    placed.
    Returns one row per tap with `transaction_id`, `operator_id`, `event_at` (the tap's key),
    `vehicle_id`, `card_hash`,
    `service_date` (the run's; the local date of the tap when unplaced), `placement`
    ('placed', 'no_vehicle', 'vehicle_without_trips', 'outside_trips'), `run_index`,
    `trip_id`, `stop_sequence`, `stop_id` (null when unplaced) and `reason` (pt-BR, null when
    placed). Row order follows `event_at`.
    """
    windows = build_stop_windows(stop_visits, include_last=False, options=options)
    return place_taps(taps, windows, timezone=timezone)


def _operator(taps: pl.DataFrame) -> pl.Expr:
    """The taps' `operator_id` (part of their key, `fare_transactions`); null when the frame
    has none (a test's taps, a feed without operators)."""
    if "operator_id" in taps.columns:
        return pl.col("operator_id").cast(pl.String)
    return pl.lit(None, pl.String()).alias("operator_id")


def place_taps(
    taps: pl.DataFrame,
    windows: pl.DataFrame,
    *,
    timezone: str,
    vehicles: pl.Series | None = None,
) -> pl.DataFrame:
    """`compute_boardings` on the boarding windows of the stop visits (`build_stop_windows`
    with `include_last=False`).

    Each tap's placement is its own (an as-of join on its vehicle's windows): the taps of a
    period placed a slice at a time are placed as all at once, on the windows of all its
    visits or on those that overlap the slice (`windows_between`), with `vehicles` those
    of all the windows (which tell a vehicle without trips from a tap outside its trips).
    """
    events = taps.select(
        "transaction_id",
        _operator(taps),
        pl.col("event_at").cast(UTC_INSTANT),
        "vehicle_id",
        pl.col("card_hash")
        if "card_hash" in taps.columns
        else pl.lit(None, pl.String()).alias("card_hash"),
    )
    placed = match_to_windows(events, windows)
    known = windows["vehicle_id"].unique() if vehicles is None else vehicles
    placement = (
        pl.when(pl.col("is_placed"))
        .then(pl.lit("placed"))
        .when(pl.col("vehicle_id").is_null())
        .then(pl.lit("no_vehicle"))
        .when(~pl.col("vehicle_id").is_in(known.implode()))
        .then(pl.lit("vehicle_without_trips"))
        .otherwise(pl.lit("outside_trips"))
    )
    # the local date of the taps no run holds (a time zone conversion of every tap costs more
    # than the rest of the placement)
    service_date = placed["window_service_date"]
    unplaced = service_date.is_null().arg_true()
    if unplaced.len():
        local_date = pl.col("event_at").dt.convert_time_zone(timezone).dt.date()
        service_date = service_date.scatter(
            unplaced, placed[unplaced].select(local_date).to_series()
        )
    return placed.with_columns(
        placement.alias("placement"), service_date.alias("service_date")
    ).select(
        "transaction_id",
        "operator_id",
        "event_at",
        "vehicle_id",
        "card_hash",
        "service_date",
        "placement",
        pl.col("run_index").cast(pl.Int32),
        "trip_id",
        pl.col("stop_sequence").cast(pl.Int32),
        "stop_id",
        pl.col("placement").replace_strict(UNPLACED_REASONS, default=None).alias("reason"),
    )


def match_to_trace(
    taps: pl.DataFrame,
    pings: pl.DataFrame,
    options: BoardingOptions = DEFAULT_BOARDING_OPTIONS,
) -> pl.DataFrame:
    """Locate taps on their vehicle's GPS trace: the nearest fix in time (as-of join by vehicle).

    For taps that no run holds (a feed without a timetable, e.g. SUBE in Buenos Aires): it
    says where the bus was, not which stop or run, so no load follows from it.
    `taps`: transaction_id, operator_id (optional), event_at, vehicle_id. `pings`:
    `vehicle_locations` (vehicle_id, event_at, lat, lon). Returns transaction_id, operator_id,
    vehicle_id, event_at, `trace` ('on_trace',
    'no_vehicle', 'vehicle_without_gps', 'beyond_gps_gap'), `ping_at`, `lat`, `lon`
    (degrees; null unless on the trace), `gap_s` (seconds from the tap to that fix) and
    `reason` (pt-BR).
    """
    fixes = (
        pings.select(
            "vehicle_id", pl.col("event_at").cast(UTC_INSTANT).alias("ping_at"), "lat", "lon"
        )
        .drop_nulls(["vehicle_id", "ping_at"])
        .sort("ping_at")
    )
    left = taps.select(
        "transaction_id", _operator(taps), pl.col("event_at").cast(UTC_INSTANT), "vehicle_id"
    ).sort("event_at")
    joined = left.join_asof(
        fixes,
        left_on="event_at",
        right_on="ping_at",
        by="vehicle_id",
        strategy="nearest",
        check_sortedness=False,
    )
    gap = (pl.col("event_at") - pl.col("ping_at")).dt.total_microseconds().abs() / 1e6
    with_gps = fixes.select("vehicle_id").unique().with_columns(pl.lit(True).alias("has_gps"))
    on = pl.col("ping_at").is_not_null() & (gap <= options.trace_max_gap_s)
    trace = (
        pl.when(pl.col("vehicle_id").is_null())
        .then(pl.lit("no_vehicle"))
        .when(pl.col("has_gps").is_null())
        .then(pl.lit("vehicle_without_gps"))
        .when(on)
        .then(pl.lit("on_trace"))
        .otherwise(pl.lit("beyond_gps_gap"))
    )
    return (
        joined.join(with_gps, on="vehicle_id", how="left")
        .with_columns(trace.alias("trace"), gap.alias("gap_s"))
        .select(
            "transaction_id",
            "operator_id",
            "vehicle_id",
            "event_at",
            "trace",
            *[
                pl.when(pl.col("trace") == "on_trace").then(pl.col(c)).alias(c)
                for c in ("ping_at", "lat", "lon", "gap_s")
            ],
            pl.col("trace").replace_strict(TRACE_REASONS, default=None).alias("reason"),
        )
        .sort("event_at", "transaction_id", "operator_id", nulls_last=True)
    )
