"""`pontual indices`: read a period's inputs from the store, compute every index, write them.

The pure parts live in `icv`, `km`, `ridership`, `fleet`, `coverage`, `grades` and
`infractions`; this module reads their inputs, writes `indicators`, `fleet_days`,
`annual_grades` and `suggested_infractions` (replacing the period's rows, so a re-run is
idempotent) and traces an indicator back to its trips and pings (`trace_indicator`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import numpy as np
import polars as pl

from analytics.indices.coverage import compute_coverage_indicators, match_nearest_stop
from analytics.indices.data_coverage import (
    compute_data_coverage,
    compute_data_coverage_indicators,
    split_evaluated,
    stamp_provisional,
)
from analytics.indices.fares_charged import (
    BENEFIT_CLASSES,
    compute_fare_violations,
    match_fare_facts,
    to_suspect_floors,
)
from analytics.indices.fleet import (
    compute_fleet_day_indicators,
    compute_fleet_days,
    compute_fleet_register,
    compute_register_indicators,
)
from analytics.indices.grades import compute_annual_grades, compute_iqs, compute_iqs_by_scope
from analytics.indices.icv import (
    attach_breakdown_routes,
    compute_icv_indicators,
    compute_trip_flags,
)
from analytics.indices.infractions import (
    compute_suggested_infractions,
    match_fleet_facts,
    match_grade_facts,
    match_trip_facts,
    repeat_window_start,
)
from analytics.indices.km import compute_km_efficiency, compute_km_indicators
from analytics.indices.off_stop import (
    compute_off_stop_doors,
    match_off_stop_facts,
    read_door_events,
)
from analytics.indices.ridership import compute_ridership_indicators, compute_tap_counts
from analytics.indices.scopes import UNKNOWN, attach_scopes, compute_by_scope, compute_line_scopes
from analytics.indices.skipped_stops import (
    compute_skipped_stops,
    match_skipped_stop_facts,
    read_door_stop_visits,
    read_stop_taps,
    read_zone_pings,
    to_excused_trips,
)
from analytics.indices.speeding import (
    compute_speeding_episodes,
    match_speeding_facts,
    read_speeding_pings,
)
from analytics.indices.stoppage import compute_stoppages, match_stoppage_facts
from core import __version__
from core.errors import ConfigError, InputError, where
from core.periods import Period, local_bounds, months_back
from core.profile import Profile, load_fee_table
from core.register import in_fleet_expr, read_register, to_register_latest, to_register_on
from core.schema import table
from core.store import Store

TAP_COLUMNS = tuple(
    c for c in table("fare_transactions").column_names if c not in ("source", "ingested_at")
)
"""The taps' columns the indices read: not where and when each was ingested (a year's taps
are tens of millions of rows)."""


@dataclass(frozen=True)
class IndexInputs:
    """What the indices of a period are computed from (frames of the store tables)."""

    outcomes: pl.DataFrame
    breakdowns: pl.DataFrame
    headways: pl.DataFrame
    trips_performed: pl.DataFrame
    scheduled: pl.DataFrame
    vehicles: pl.DataFrame  # the register's versions in force over the period (core.register)
    routes: pl.DataFrame
    taps: pl.DataFrame
    surveys: pl.DataFrame
    monthly_km: pl.DataFrame
    stops: pl.DataFrame
    crs_epsg: int | None
    # the pings of the vehicle-days that reported a speed over the limit (speeding.py)
    speeding_pings: pl.DataFrame = dataclasses.field(default_factory=pl.DataFrame)
    # the period's taps counted by line, class and integration (`ridership.compute_tap_counts`,
    # as the store reader gives them): ridership is summed from these, and `taps` then holds
    # only the taps that may be charged against the law (`read_fare_suspects`); None: `taps`
    # holds every tap and ridership chains them itself
    tap_counts: pl.DataFrame | None = None
    # the AVL door events of the period (off_stop.py)
    door_events: pl.DataFrame = dataclasses.field(default_factory=pl.DataFrame)
    # the stop visits of the vehicles with door events, and their fixes through the zones of
    # the stops found skipped (skipped_stops.py)
    door_stop_visits: pl.DataFrame = dataclasses.field(default_factory=pl.DataFrame)
    skipped_zone_pings: pl.DataFrame = dataclasses.field(default_factory=pl.DataFrame)
    skipped_stop_taps: pl.DataFrame | None = None  # placed taps there (None: not read)


@dataclass(frozen=True)
class IndexResults:
    indicators: pl.DataFrame
    fleet_days: pl.DataFrame
    annual_grades: pl.DataFrame
    suggested_infractions: pl.DataFrame
    line_scopes: pl.DataFrame


def read_monthly_km(store: Store, start: date, end: date) -> pl.DataFrame:
    """route_id, month (first day), km_run (capped at the programmed km, as in `icv`),
    km_programmed per line and month of trip_outcomes between two service days."""
    frame = store.query(
        """
        SELECT route_id, CAST(date_trunc('month', service_date) AS DATE) AS month,
               sum(least(coalesce(distance_run_m, 0), planned_distance_m)) / 1000.0 AS km_run,
               sum(planned_distance_m) / 1000.0 AS km_programmed
        FROM trip_outcomes WHERE service_date BETWEEN ? AND ? AND outcome <> 'not_evaluated'
        GROUP BY ALL ORDER BY ALL
        """,
        [start, end],
    )
    if frame.height == 0:
        return pl.DataFrame(
            schema={
                "route_id": pl.String,
                "month": pl.Date,
                "km_run": pl.Float64,
                "km_programmed": pl.Float64,
            }
        )
    return frame.with_columns(pl.col("month").cast(pl.Date))


DAY_TABLES = {
    "outcomes": "trip_outcomes",
    "breakdowns": "breakdowns",
    "headways": "headway_observations",
    "trips_performed": "trips_performed",
    "scheduled": "scheduled_trips",
}
"""The IndexInputs fields read by service day, and their tables."""


@dataclass(frozen=True)
class TapCodes:
    """The taps of a span as `read_tap_codes` gives them: `codes` (compute_tap_counts' frame,
    in time order), `charges` (at_us, fare, vehicle, amount of each tap, for the fare check),
    the lines and fare classes their indices point to, and the vehicles (`vehicle_ids`) with
    the codes the taps give them (`vehicle_codes`, their 64-bit hashes; 0: unknown)."""

    codes: pl.DataFrame
    charges: pl.DataFrame
    route_ids: list[str]
    fare_classes: list[str]
    vehicle_ids: list[str]
    vehicle_codes: list[int]


@dataclass(frozen=True)
class TapInputs:
    """The taps of a period as the indices use them: counted (`compute_tap_counts`) and the
    few that may be charged against the law (`read_fare_suspects`)."""

    counts: pl.DataFrame
    suspects: pl.DataFrame


COLUMN_OF = {"r": "route_id", "v": "vehicle_id", "f": "fare_class"}


def read_tap_codes(store: Store, start_at: datetime, end_at: datetime) -> TapCodes:
    """The taps between two instants as `compute_tap_counts` reads them (codes in time
    order), with the lines and fare classes their indices point to.

    No string crosses into Python per tap: a card is its 64-bit DuckDB `hash` (two cards
    share one with a probability of about n²/2⁶⁵: 10⁻¹⁰ for the 50 000 cards of the
    simulated city; docs/adr/0110), then a dense code (`tap_kernels.to_card_codes`); a line,
    vehicle or class its hash checked one to one on the few distinct values. The taps stay
    in time order (the store's, sorted only when it is not); the rare taps of one card at
    one instant are read again with their transaction ids and put in that order."""
    from analytics.indices.tap_kernels import to_card_codes  # numba: only for the store's taps

    where = "event_at >= ? AND event_at < ?"
    bounds = [start_at, end_at]
    distinct = store.query(
        "SELECT list(DISTINCT route_id) AS r, list(DISTINCT vehicle_id) AS v, "
        f"list(DISTINCT fare_class) AS f FROM fare_transactions WHERE {where}",
        bounds,
    ).row(0, named=True)
    keys = {}
    for name, values in distinct.items():
        known = sorted(v for v in values or [] if v is not None)
        hashed = store.query(
            "SELECT v, hash(v) AS h FROM (SELECT unnest(?::VARCHAR[]) AS v) ORDER BY h", [known]
        )
        # never seen: 64-bit hashes of a few names clashing, or one being 0 (unknown below)
        if hashed["h"].n_unique() != hashed.height or (hashed["h"] == 0).any():
            raise InputError(
                f"two values of the taps' {COLUMN_OF[name]} share a 64-bit hash",
                where="fare_transactions",
                hint="report it: the indices cannot tell those taps apart",
            )
        keys[name] = hashed
    # 0 stands for an unknown card, line or vehicle (DuckDB's hash(NULL) is a number like any
    # other); no card hashes to 0 but with the probability of two cards clashing, and lines
    # and vehicles were checked above
    hashed_or_0 = "CASE WHEN {0} IS NULL THEN 0::UBIGINT ELSE hash({0}) END AS {1}"
    columns = ", ".join(
        (
            hashed_or_0.format("card_hash", "card"),
            "epoch_us(event_at) AS at_us",
            hashed_or_0.format("route_id", "route"),
            hashed_or_0.format("vehicle_id", "vehicle"),
            "hash(fare_class) AS fare, amount",
        )
    )
    read = store.query(f"SELECT {columns} FROM fare_transactions WHERE {where}", bounds)
    card, t = read["card"].to_numpy(), read["at_us"].to_numpy()
    route, vehicle, fare = _tap_indices(read, keys)
    amount = read["amount"].fill_null(-np.inf).to_numpy()
    del read
    if t.shape[0] > 1 and bool(np.any(t[1:] < t[:-1])):
        # time order (the store usually gives it: taps are appended day by day)
        order = np.argsort(t, kind="stable")
        card, t, route, vehicle, fare, amount = (
            a[order] for a in (card, t, route, vehicle, fare, amount)
        )
        del order
    codes, _, tied = to_card_codes(card, t)
    if tied.any():
        # each card's taps of one instant in transaction id order (ADR 0110): read again
        rows = np.flatnonzero(tied)
        # the tied rows by (card, instant), each group in its rows' order: a group's rows
        # take its taps in transaction id order
        rows = rows[np.lexsort((rows, t[rows], card[rows]))]
        tied_keys = pl.DataFrame({"card": card[rows], "at_us": t[rows]}).unique()
        instants = pl.Series(np.unique(t[rows])).cast(pl.Datetime("us", "UTC"))
        again = (
            store.query(
                f"SELECT {columns}, transaction_id FROM fare_transactions WHERE {where} "
                f"AND {_at_instants(instants.len())}",
                [*bounds, instants.to_list()],
            )
            .join(tied_keys, on=["card", "at_us"], how="semi")
            .sort("card", "at_us", "transaction_id", nulls_last=True, maintain_order=True)
        )
        if (
            again.height != rows.shape[0]
            or not np.array_equal(again["card"].to_numpy(), card[rows])
            or not np.array_equal(again["at_us"].to_numpy(), t[rows])
        ):
            raise InputError(
                "the taps changed while the indices read them",
                where="fare_transactions",
                hint="run the indices again",
            )
        vehicle, amount = vehicle.copy(), amount.copy()  # the reader's are read-only
        route[rows], vehicle[rows], fare[rows] = _tap_indices(again, keys)
        amount[rows] = again["amount"].fill_null(-np.inf).to_numpy()
    frame = pl.DataFrame(
        {"card": codes, "at_us": t, "route": route, "vehicle": vehicle, "fare": fare}
    )
    charges = pl.DataFrame({"at_us": t, "fare": fare, "vehicle": vehicle, "amount": amount})
    return TapCodes(
        frame,
        charges,
        keys["r"]["v"].to_list(),
        keys["f"]["v"].to_list(),
        keys["v"]["v"].to_list(),
        keys["v"]["h"].to_list(),
    )


FEW_INSTANTS = 256
"""Up to this many instants, the taps at them are read with a filter on the scan (only the
vectors holding one decode their other columns: 0.4 s of CPU for 60 instants of a year's 27 M
taps, against 2.4 s for a semi join, which decodes every column of every tap); beyond it a
filter tested against each instant costs more than the join."""


def _at_instants(n: int) -> str:
    """SQL: a tap's event_at is one of the instants of the (one) list parameter, of `n`."""
    if n <= FEW_INSTANTS:
        return "list_contains(?::TIMESTAMPTZ[], event_at)"
    return "event_at IN (SELECT unnest(?::TIMESTAMPTZ[]))"


def _tap_indices(
    read: pl.DataFrame, keys: dict[str, pl.DataFrame]
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """route (int32 place among the distinct lines `keys`, -1 unknown), vehicle (its hash, 0
    unknown: the hashes were checked one to one) and fare (place) of each tap, from the
    hashes `read_tap_codes` reads."""
    from analytics.indices.tap_kernels import to_places

    route = to_places(read["route"].to_numpy(), keys["r"]["h"].to_numpy())
    fare = to_places(read["fare"].to_numpy(), keys["f"]["h"].to_numpy())
    if (route < -1).any() or (fare < 0).any():  # a line or class not read a moment before
        raise InputError(
            "the taps changed while the indices read them",
            where="fare_transactions",
            hint="run the indices again",
        )
    return route, read["vehicle"].to_numpy(), fare


def read_fare_suspects(
    store: Store,
    start_at: datetime,
    end_at: datetime,
    taps: TapCodes,
    profile: Profile,
    vehicles: pl.DataFrame,
) -> pl.DataFrame:
    """TAP_COLUMNS of the taps between two instants at the instants of those that may be
    charged against the law (`fares_charged.to_suspect_floors`: at or above their class's
    floor, or a benefit class on a vehicle selective in any version of `vehicles`), found on
    the codes already read; a year holds few, and none where every tap is charged right."""
    from analytics.indices.tap_kernels import find_suspects  # numba: only for the store's taps

    floors = to_suspect_floors(profile)
    schema = {c: table("fare_transactions").column(c).dtype for c in TAP_COLUMNS}
    charges = taps.charges
    if floors is None or charges.height == 0:
        return pl.DataFrame(schema=schema)
    by_class, other = floors
    floor = np.array([by_class.get(c, other) for c in taps.fare_classes], dtype=np.float64)
    benefit = np.array([c in BENEFIT_CLASSES for c in taps.fare_classes], dtype=np.bool_)
    chosen = set(vehicles.filter(pl.col("service_class") == "selective")["vehicle_id"])
    selective = [
        code for v, code in zip(taps.vehicle_ids, taps.vehicle_codes, strict=True) if v in chosen
    ]
    suspect = find_suspects(
        charges["fare"].to_numpy(),
        charges["amount"].to_numpy(),
        charges["vehicle"].to_numpy(),
        floor,
        benefit,
        np.array(selective, dtype=np.uint64),
    )
    if not suspect.any():
        return pl.DataFrame(schema=schema)
    instants = pl.Series(np.unique(charges["at_us"].to_numpy()[suspect]))
    return store.read(
        "fare_transactions",
        f"event_at >= ? AND event_at < ? AND {_at_instants(instants.len())}",
        [start_at, end_at, instants.cast(pl.Datetime("us", "UTC")).to_list()],
        columns=TAP_COLUMNS,
    )


def read_tap_inputs(
    store: Store, periods: Sequence[Period], profile: Profile, vehicles: pl.DataFrame
) -> list[TapInputs]:
    """The taps of each of `periods` (one read of them all: a year and its months read the
    year's taps once), chained within each period on its own. `vehicles`: the register over
    all the periods."""
    tz = profile.general.timezone.value
    spans = [local_bounds(p, tz) for p in periods]
    start_at, end_at = min(s for s, _ in spans), max(e for _, e in spans)
    taps = read_tap_codes(store, start_at, end_at)
    window = profile.fares.integration_window_s
    epoch, micro = datetime(1970, 1, 1, tzinfo=UTC), timedelta(microseconds=1)
    us = [((s - epoch) // micro, (e - epoch) // micro) for s, e in spans]
    counts = compute_tap_counts(
        taps.codes,
        taps.route_ids,
        taps.fare_classes,
        None if window is None else int(window.value * 1_000_000),
        us,
    )
    suspects = read_fare_suspects(store, start_at, end_at, taps, profile, vehicles)
    return [
        TapInputs(
            count,
            suspects.filter((pl.col("event_at") >= s) & (pl.col("event_at") < e)),
        )
        for count, (s, e) in zip(counts, spans, strict=True)
    ]


def read_index_inputs(
    store: Store,
    period: Period,
    profile: Profile,
    *,
    taps: TapInputs | None = None,
    days_of: IndexInputs | None = None,
) -> IndexInputs:
    """Read everything the period's indices need (the km window reaches back before it).

    `taps`: the period's taps when already read (`read_tap_inputs` of several periods);
    `days_of`: inputs of a period holding this one, whose rows by service day are kept
    (a month's rows of the year's frames are the rows a read of the month gives, in order)."""
    days = period.days()
    start_at, end_at = local_bounds(period, profile.general.timezone.value)
    window = months_back(period.end, profile.km.window_months.value)
    feeds = store.read("feed_versions").sort("loaded_at")
    crs = int(feeds["crs_epsg"][-1]) if feeds.height else None
    vehicles = read_register(store, period.start, period.end)
    if taps is None:
        taps = read_tap_inputs(store, [period], profile, vehicles)[0]
    by_day = {
        field: (
            getattr(days_of, field).filter(
                pl.col("service_date").is_between(period.start, period.end)
            )
            if days_of is not None
            else store.read(name, "service_date BETWEEN ? AND ?", days)
        )
        for field, name in DAY_TABLES.items()
    }
    inputs = IndexInputs(
        **by_day,
        vehicles=vehicles,
        routes=store.read("gtfs_routes").unique("route_id", keep="last"),
        taps=taps.suspects,
        tap_counts=taps.counts,
        surveys=store.read("iqs_surveys"),
        monthly_km=read_monthly_km(store, window.start, period.end),
        stops=store.read("gtfs_stops").unique("stop_id", keep="last"),
        crs_epsg=crs,
        speeding_pings=read_speeding_pings(store, start_at, end_at, profile),
        door_events=read_door_events(store, start_at, end_at),
    )
    margin = profile.infractions.skipped_stop_margin_s
    if inputs.door_events.height == 0 or margin is None:
        return inputs
    visits = read_door_stop_visits(store, period.start, period.end, start_at, end_at)
    # the fixes through the zones of the stops found skipped: only those windows are read
    skipped = compute_skipped_stops(
        visits,
        inputs.door_events,
        inputs.stops,
        profile,
        excused_trips=to_excused_trips(inputs.outcomes),
    )
    return replace(
        inputs,
        door_stop_visits=visits,
        skipped_zone_pings=read_zone_pings(store, skipped, margin.value),
        skipped_stop_taps=read_stop_taps(store, skipped, demand.value)
        if (demand := profile.infractions.skipped_stop_demand_window_s) is not None
        else None,
    )


def read_cost_per_km(path: str | Path) -> pl.DataFrame:
    """Cost per km per operator and month (CSV: operator_id, month 'YYYY-MM', cost_per_km in
    the local currency per km)."""
    path = Path(path)
    try:
        raw = pl.read_csv(path, infer_schema=False)
    except (OSError, pl.exceptions.ComputeError, pl.exceptions.NoDataError) as exc:
        raise InputError(f"cannot read the cost-per-km CSV: {exc}", where=str(path)) from exc
    need = ("operator_id", "month", "cost_per_km")
    missing = [c for c in need if c not in raw.columns]
    if missing:
        raise InputError(
            f"cost-per-km CSV lacks columns {missing}; expected {', '.join(need)}",
            where=str(path),
            hint="header line: operator_id,month,cost_per_km (e.g. O1,2026-03,8.15)",
        )
    frame = raw.with_row_index("line", offset=2).with_columns(
        pl.col("cost_per_km").cast(pl.Float64, strict=False).alias("cost"),
        pl.col("month").str.to_date("%Y-%m", strict=False).alias("month_date"),
    )
    for field, bad in (
        ("cost_per_km", pl.col("cost").is_null() | (pl.col("cost") < 0)),
        ("month", pl.col("month_date").is_null()),
    ):
        rows = frame.filter(bad)
        if rows.height:
            first = rows.row(0, named=True)
            raise InputError(
                f"invalid {field} {first[field]!r} in the cost-per-km CSV: expected "
                + ("a cost >= 0" if field == "cost_per_km" else "a month YYYY-MM"),
                where=where(path, int(first["line"]), field),
            )
    return frame.select(
        "operator_id", pl.col("month_date").alias("month"), pl.col("cost").alias("cost_per_km")
    )


def compute_index_results(
    inputs: IndexInputs,
    profile: Profile,
    period: Period,
    *,
    cost_per_km: float | None = None,
    costs: pl.DataFrame | None = None,
    population: pl.DataFrame | None = None,
    grade_history: pl.DataFrame | None = None,
    previous_infractions: pl.DataFrame | None = None,
    covered: pl.DataFrame | None = None,
) -> IndexResults:
    """Every index of the period (pure: frames in, frames out). Trips `not_evaluated` (no data
    to judge them) leave every index and are counted beside them (`data_coverage`).
    `covered`: `match_nearest_stop` of `population` when already computed (it depends on no
    period: a year and its months match it once)."""
    # who owns a vehicle for the period's scopes: its owner at the end (its latest version)
    owners = to_register_latest(inputs.vehicles)
    scopes = compute_line_scopes(inputs.routes, inputs.outcomes, owners)
    # stoppages see the trips that could not be judged too: they break a stretch (no data is
    # no stoppage)
    every_trip = attach_scopes(inputs.outcomes, scopes)
    coverage = compute_data_coverage(every_trip)
    inputs = replace(inputs, outcomes=split_evaluated(inputs.outcomes))
    flags = attach_scopes(
        compute_trip_flags(inputs.outcomes, profile.trips.excused_outcomes), scopes
    )
    bd = attach_breakdown_routes(inputs.breakdowns, inputs.outcomes)
    bd = attach_scopes(bd, scopes).with_columns(
        # a breakdown off any line belongs to the vehicle's operator
        pl.when(pl.col("operator_id") == UNKNOWN)
        .then(
            pl.col("vehicle_id").replace_strict(
                owners["vehicle_id"], owners["operator_id"], default=UNKNOWN
            )
        )
        .otherwise(pl.col("operator_id"))
        .alias("operator_id")
    )
    headways = attach_scopes(inputs.headways, scopes)
    parts = [
        compute_icv_indicators(flags, bd, headways, profile, period),
        compute_data_coverage_indicators(coverage, period),
    ]

    monthly = compute_by_scope(
        attach_scopes(inputs.monthly_km, scopes),
        [pl.col("km_run").sum(), pl.col("km_programmed").sum()],
        by=("month",),
    )
    km_eff = compute_km_efficiency(monthly, profile)
    if km_eff.height:
        parts.append(compute_km_indicators(km_eff, period))

    taps = attach_scopes(inputs.taps, scopes)
    km_rows = flags.select("route_id", "operator_id", "lot_id", "km_run", "service_date")
    if costs is not None and costs.height:
        km_rows = (
            km_rows.with_columns(pl.col("service_date").dt.truncate("1mo").alias("month"))
            .join(costs, on=["operator_id", "month"], how="left")
            .with_columns((pl.col("km_run") * pl.col("cost_per_km")).alias("cost_km"))
        )
    # ridership from the period's tap counts when the reader gave them (`taps` is then only
    # the fare suspects), else from every tap
    riders = taps if inputs.tap_counts is None else attach_scopes(inputs.tap_counts, scopes)
    if riders.height:
        parts.append(compute_ridership_indicators(riders, km_rows, profile, period, cost_per_km))

    # only the days that were matched: a day without outcomes is unknown, not a fleet cut
    # and only the trips that could be judged: a dark vehicle's block is no fleet cut
    # (a filter on the (day, trip) pairs: a third of a semi join's CPU on a year's million
    # trips, the same rows in the same order; neither column is ever null)
    matched_days = inputs.outcomes.select(pl.struct("service_date", "trip_id")).to_series()
    scheduled = inputs.scheduled.filter(
        pl.struct("service_date", "trip_id").is_in(matched_days.implode())
    )
    fleet_days = compute_fleet_days(scheduled, inputs.outcomes, inputs.vehicles, scopes, profile)
    if fleet_days.height:
        parts.append(compute_fleet_day_indicators(fleet_days, period))
    # ages and inspections: the fleet on the period's last day, as the register then stood
    at_end = to_register_on(inputs.vehicles, period.end).filter(in_fleet_expr(pl.lit(period.end)))
    if at_end.height:
        fee_table = load_fee_table(profile.fee_table) if profile.fee_table else None
        register = compute_fleet_register(at_end, profile, period.end, fee_table)
        parts.append(compute_register_indicators(register, profile, period))
    if population is not None and inputs.stops.height and inputs.crs_epsg:
        if covered is None:
            covered = match_nearest_stop(population, inputs.stops, inputs.crs_epsg, profile)
        parts.append(compute_coverage_indicators(covered, profile, period))

    iqs_parts = []
    for year in range(period.start.year, period.end.year + 1):
        iqs = compute_iqs(inputs.surveys, year, profile)
        if iqs.height and period.kind == "year":
            iqs_parts.append(
                compute_iqs_by_scope(iqs, scopes).with_columns(pl.lit(year).alias("year"))
            )
    indicators = pl.concat([p for p in parts if p.height], how="vertical_relaxed")

    grades = table("annual_grades").empty()
    if period.kind == "year":
        grades = build_year_grades(indicators, iqs_parts, profile, period, grade_history)
        if grades.height:
            grades = stamp_provisional(grades, coverage, profile)
        if grades.height:
            parts_iqs = grades.filter(~pl.col("is_history")).select(
                "scope", "scope_id", "iqs_score", "annual_score"
            )
            indicators = pl.concat(
                [indicators, _grade_indicators(parts_iqs, profile, period)], how="vertical_relaxed"
            )

    facts = [
        match_trip_facts(flags, inputs.trips_performed, profile),
        match_fleet_facts(fleet_days),
        match_stoppage_facts(compute_stoppages(every_trip, profile), profile),
        match_speeding_facts(
            compute_speeding_episodes(
                _with_vehicle_operator(inputs.speeding_pings, inputs.vehicles), profile
            ),
            profile,
        ),
    ]
    if inputs.door_events.height and inputs.trips_performed.height:
        doors = compute_off_stop_doors(
            _with_vehicle_operator(inputs.door_events, inputs.vehicles),
            inputs.stops,
            inputs.trips_performed,
            profile,
        )
        facts.append(match_off_stop_facts(doors, profile))
    if inputs.door_events.height and inputs.door_stop_visits.height:
        skipped = compute_skipped_stops(
            inputs.door_stop_visits,
            _with_vehicle_operator(inputs.door_events, inputs.vehicles),
            inputs.stops,
            profile,
            excused_trips=to_excused_trips(inputs.outcomes),
            zone_pings=inputs.skipped_zone_pings,
            placed_taps=inputs.skipped_stop_taps,
        )
        facts.append(match_skipped_stop_facts(skipped, inputs.outcomes, profile))
    if inputs.taps.height:
        facts.append(
            match_fare_facts(compute_fare_violations(taps, inputs.vehicles, profile), profile)
        )
    if grades.height:
        facts.append(match_grade_facts(grades, profile))
    infractions = compute_suggested_infractions(
        pl.concat([f for f in facts if f.height], how="vertical_relaxed")
        if any(f.height for f in facts)
        else facts[0],
        previous_infractions,
        profile,
    )
    return IndexResults(indicators, fleet_days, grades, infractions, scopes)


def _with_vehicle_operator(pings: pl.DataFrame, vehicles: pl.DataFrame) -> pl.DataFrame:
    """`pings` whose operator_id is filled from the fleet register where the feed gave none
    (a fact needs its operator: it is the one the suggestion is addressed to)."""
    if pings.height == 0 or "operator_id" not in pings.columns:
        return pings
    return pings.with_columns(
        pl.coalesce(
            pl.col("operator_id"),
            pl.col("vehicle_id").replace_strict(
                vehicles["vehicle_id"], vehicles["operator_id"], default=UNKNOWN
            ),
        ).alias("operator_id")
    )


def build_year_grades(
    indicators: pl.DataFrame,
    iqs_parts: list[pl.DataFrame],
    profile: Profile,
    period: Period,
    history: pl.DataFrame | None,
) -> pl.DataFrame:
    """annual_grades for the year period from its ICV score, IQS and km efficiency."""
    wanted = indicators.filter(
        pl.col("scope").is_in(["system", "operator", "lot"])
        & pl.col("indicator").is_in(["icv_score", "km_efficiency"])
    ).pivot(on="indicator", index=["scope", "scope_id"], values="value")
    for col in ("icv_score", "km_efficiency"):
        if col not in wanted.columns:
            wanted = wanted.with_columns(pl.lit(None, dtype=pl.Float64).alias(col))
    iqs = (
        pl.concat(iqs_parts).select("scope", "scope_id", "iqs_score")
        if iqs_parts
        else pl.DataFrame(
            schema={"scope": pl.String, "scope_id": pl.String, "iqs_score": pl.Float64}
        )
    )
    year_scores = (
        wanted.filter(pl.col("icv_score").is_not_null() & (pl.col("scope_id") != UNKNOWN))
        .join(iqs, on=["scope", "scope_id"], how="left")
        .with_columns(pl.lit(period.start.year).alias("year"))
    )
    return compute_annual_grades(year_scores, history, profile)


def _grade_indicators(grades: pl.DataFrame, profile: Profile, period: Period) -> pl.DataFrame:
    from analytics.indices.scopes import IndicatorSpec, to_indicator_rows

    return to_indicator_rows(
        grades,
        (
            IndicatorSpec("iqs", "iqs_score", None, "points", "BG art. 57-II"),
            IndicatorSpec(
                "annual_score",
                "annual_score",
                None,
                "points",
                "BG art. 56-58 (quality.annual_weight_*)",
            ),
        ),
        period,
    ).filter(pl.col("value").is_not_null())


def _stamp(df: pl.DataFrame, profile: Profile, computed_at: datetime, name: str) -> pl.DataFrame:
    extra = {"pontual_version": __version__, "profile_id": profile.id}
    if "computed_at" in table(name).column_names:
        extra["computed_at"] = computed_at  # type: ignore[assignment]
    return df.with_columns(*[pl.lit(v).alias(k) for k, v in extra.items()])


def write_index_results(
    store: Store, results: IndexResults, profile: Profile, period: Period
) -> dict[str, int]:
    """Replace the period's rows of the four tables in one transaction; rows written per table."""
    now = datetime.now(UTC)
    days = period.days()
    written = {}
    with store.transaction():
        written["indicators"] = store.replace(
            "indicators",
            _stamp(results.indicators, profile, now, "indicators"),
            "period = ?",
            [period.label],
        )
        written["fleet_days"] = store.replace(
            "fleet_days",
            _stamp(results.fleet_days, profile, now, "fleet_days"),
            "service_date BETWEEN ? AND ?",
            days,
        )
        if period.kind == "year":
            written["annual_grades"] = store.replace(
                "annual_grades",
                _stamp(results.annual_grades, profile, now, "annual_grades"),
                "year = ?",
                [period.start.year],
            )
            # history rows are kept as entered; a later computed year replaces none of them
            history = results.annual_grades.filter(pl.col("is_history"))
            if history.height:
                store.append("annual_grades", _stamp(history, profile, now, "annual_grades"))
        written["suggested_infractions"] = store.replace(
            "suggested_infractions",
            _stamp(results.suggested_infractions, profile, now, "suggested_infractions"),
            "occurred_on BETWEEN ? AND ?",
            days,
        )
    return written


def read_previous_infractions(store: Store, period: Period, profile: Profile) -> pl.DataFrame:
    """Suggestions before the period, within the repeat window (they make repeats)."""
    since = repeat_window_start(period.start, profile.infractions.repeat_window_months.value)
    return store.query(
        'SELECT operator_id, "group", item, occurred_on FROM suggested_infractions '
        "WHERE occurred_on >= ? AND occurred_on < ?",
        [since, period.start],
    )


def read_grade_history_from_store(store: Store, year: int) -> pl.DataFrame:
    """annual_grades of earlier years (computed or history) as a history frame."""
    return store.query(
        "SELECT scope, scope_id, year, grade FROM annual_grades WHERE year < ?", [year]
    )


def run_indices(
    store: Store,
    profile: Profile,
    period: Period,
    *,
    cost_per_km: float | None = None,
    costs: pl.DataFrame | None = None,
    population: pl.DataFrame | None = None,
    grade_history: pl.DataFrame | None = None,
    write: bool = True,
) -> IndexResults:
    """Read, compute and (unless `write` is false) write every index of the period."""
    return run_indices_each(
        store,
        profile,
        [period],
        cost_per_km=cost_per_km,
        costs=costs,
        population=population,
        grade_history=grade_history,
        write=write,
    )[0]


def run_indices_each(
    store: Store,
    profile: Profile,
    periods: Sequence[Period],
    *,
    cost_per_km: float | None = None,
    costs: pl.DataFrame | None = None,
    population: pl.DataFrame | None = None,
    grade_history: pl.DataFrame | None = None,
    write: bool = True,
) -> list[IndexResults]:
    """`run_indices` of each period in turn (each reads the suggestions the ones before it
    wrote: a year's months, then the year), the same rows as one run per period. What does
    not change between them is read or computed once: the taps of all the periods in one
    read (`read_tap_inputs`), the day tables of the last period when it holds the others (a
    year after its months: each month keeps its days' rows) and the population's stops."""
    if not periods:
        return []
    last = periods[-1]
    first_day = min(p.start for p in periods)
    last_day = max(p.end for p in periods)
    taps = read_tap_inputs(store, periods, profile, read_register(store, first_day, last_day))
    holds_all = all(last.start <= p.start and p.end <= last.end for p in periods)
    outer = (
        read_index_inputs(store, last, profile, taps=taps[-1])
        if holds_all and len(periods) > 1
        else None
    )
    covered = None
    results = []
    for period, tap in zip(periods, taps, strict=True):
        inputs = (
            outer
            if period is last and outer is not None
            else read_index_inputs(store, period, profile, taps=tap, days_of=outer)
        )
        if inputs.outcomes.height == 0:
            raise ConfigError(
                f"no trip outcomes between {period.start} and {period.end}",
                where=f"store {store.path}, table trip_outcomes",
                hint="run `pontual match` for those days first (or choose another --period)",
            )
        if covered is None and population is not None and inputs.stops.height and inputs.crs_epsg:
            covered = match_nearest_stop(population, inputs.stops, inputs.crs_epsg, profile)
        history = read_grade_history_from_store(store, period.start.year)
        if grade_history is not None:
            history = pl.concat(
                [history, grade_history.select(history.columns)], how="vertical_relaxed"
            )
            history = history.unique(["scope", "scope_id", "year"], keep="last")
        results.append(
            compute_index_results(
                inputs,
                profile,
                period,
                cost_per_km=cost_per_km,
                costs=costs,
                population=population,
                grade_history=history,
                previous_infractions=read_previous_infractions(store, period, profile),
                covered=covered,
            )
        )
        if write:
            write_index_results(store, results[-1], profile, period)
    return results
