"""`pontual indices`: read a period's inputs from the store, compute every index, write them.

The pure parts live in `icv`, `km`, `ridership`, `fleet`, `coverage`, `grades` and
`infractions`; this module reads their inputs, writes `indicators`, `fleet_days`,
`annual_grades` and `suggested_infractions` (replacing the period's rows, so a re-run is
idempotent) and traces an indicator back to its trips and pings (`trace_indicator`).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, replace
from datetime import UTC, date, datetime
from pathlib import Path

import polars as pl

from analytics.indices.coverage import compute_coverage_indicators, match_nearest_stop
from analytics.indices.data_coverage import (
    compute_data_coverage,
    compute_data_coverage_indicators,
    split_evaluated,
    stamp_provisional,
)
from analytics.indices.fares_charged import compute_fare_violations, match_fare_facts
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
from analytics.indices.ridership import compute_ridership_indicators
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


def read_index_inputs(store: Store, period: Period, profile: Profile) -> IndexInputs:
    """Read everything the period's indices need (the km window reaches back before it)."""
    days = period.days()
    start_at, end_at = local_bounds(period, profile.general.timezone.value)
    window = months_back(period.end, profile.km.window_months.value)
    feeds = store.read("feed_versions").sort("loaded_at")
    crs = int(feeds["crs_epsg"][-1]) if feeds.height else None
    inputs = IndexInputs(
        outcomes=store.read("trip_outcomes", "service_date BETWEEN ? AND ?", days),
        breakdowns=store.read("breakdowns", "service_date BETWEEN ? AND ?", days),
        headways=store.read("headway_observations", "service_date BETWEEN ? AND ?", days),
        trips_performed=store.read("trips_performed", "service_date BETWEEN ? AND ?", days),
        scheduled=store.read("scheduled_trips", "service_date BETWEEN ? AND ?", days),
        vehicles=read_register(store, period.start, period.end),
        routes=store.read("gtfs_routes").unique("route_id", keep="last"),
        taps=store.read(
            "fare_transactions",
            "event_at >= ? AND event_at < ?",
            [start_at, end_at],
            columns=TAP_COLUMNS,
        ),
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
) -> IndexResults:
    """Every index of the period (pure: frames in, frames out). Trips `not_evaluated` (no data
    to judge them) leave every index and are counted beside them (`data_coverage`)."""
    # who owns a vehicle for the period's scopes: its owner at the end (its latest version)
    owners = to_register_latest(inputs.vehicles)
    scopes = compute_line_scopes(inputs.routes, inputs.outcomes, owners)
    coverage = compute_data_coverage(attach_scopes(inputs.outcomes, scopes))
    # stoppages see the trips that could not be judged too: they break a stretch (no data is
    # no stoppage)
    every_trip = attach_scopes(inputs.outcomes, scopes)
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
    if taps.height:
        parts.append(compute_ridership_indicators(taps, km_rows, profile, period, cost_per_km))

    # only the days that were matched: a day without outcomes is unknown, not a fleet cut
    # and only the trips that could be judged: a dark vehicle's block is no fleet cut
    matched_days = inputs.outcomes.select("service_date", "trip_id")
    scheduled = inputs.scheduled.join(matched_days, on=["service_date", "trip_id"], how="semi")
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
    inputs = read_index_inputs(store, period, profile)
    if inputs.outcomes.height == 0:
        raise ConfigError(
            f"no trip outcomes between {period.start} and {period.end}",
            where=f"store {store.path}, table trip_outcomes",
            hint="run `pontual match` for those days first (or choose another --period)",
        )
    history = read_grade_history_from_store(store, period.start.year)
    if grade_history is not None:
        history = pl.concat(
            [history, grade_history.select(history.columns)], how="vertical_relaxed"
        )
        history = history.unique(["scope", "scope_id", "year"], keep="last")
    results = compute_index_results(
        inputs,
        profile,
        period,
        cost_per_km=cost_per_km,
        costs=costs,
        population=population,
        grade_history=history,
        previous_infractions=read_previous_infractions(store, period, profile),
    )
    if write:
        write_index_results(store, results, profile, period)
    return results
