"""Fleet compliance: vehicles required vs operated, reserve, age, inspections and fees.

- vehicles required on a day by a line = distinct blocks of its scheduled trips (a block is one
  vehicle's day), plus, for trips without a block, the peak number of trips running at once;
  an operator's total counts each block once even when it serves several lines;
- vehicles operated = distinct vehicles that ran the day's trips (trip_outcomes.vehicle_id);
- cut = 1 − operated ÷ required; over `fleet.grave_cut_min_ratio` for more than
  `fleet.grave_cut_min_days` days in a row is a grave deficiency (BG art. 72 p.ú. I); days
  without service or not processed are skipped, not a reset (`compute_cut_runs`);
- reserve = active registered vehicles − required; minimum `fleet.reserve_min_ratio` of the
  required fleet, rounded up, or `reserve_small_fleet_min` when the registered (owned) fleet
  is below `reserve_small_fleet_below` (BG Anexo I XXXV); cap `reserve_max_ratio` rounded down (CGS 23);
- age in whole years = reference year − manufacture year; max and mean per service area
  (BG art. 18), age at entry = entry year − manufacture year (art. 19);
- inspection due = last inspection + the interval of the vehicle's age band (BG art. 23);
  a band's `max_age_years` is inclusive ("de 0 a 5 anos", "5 anos e 1 dia");
- fees from the profile's fee table: yearly and per-inspection fee by capacity (seats plus
  standing area × the standing limit), OTT fee per km.
"""

from __future__ import annotations

from datetime import date

import polars as pl

from analytics.indices.scopes import IndicatorSpec, to_indicator_rows
from core.periods import Period
from core.profile import FeeTable, Profile
from core.register import to_vehicle_days

OPERATOR_TOTAL = "*"
BUS_MODALITY = "collective"


def compute_peak_concurrency(trips: pl.DataFrame, keys: list[str]) -> pl.DataFrame:
    """The largest number of trips running at once per `keys` group: *keys, n_peak.

    `trips` has planned_start_at and planned_end_at. A trip ending when another starts does
    not overlap it (ends are processed before starts at the same instant).
    """
    events = pl.concat(
        [
            trips.select(*keys, pl.col("planned_start_at").alias("t"), pl.lit(1).alias("d")),
            trips.select(*keys, pl.col("planned_end_at").alias("t"), pl.lit(-1).alias("d")),
        ]
    ).sort([*keys, "t", "d"])
    return events.group_by(keys).agg(pl.col("d").cum_sum().max().cast(pl.Int32).alias("n_peak"))


def compute_vehicles_required(scheduled: pl.DataFrame, keys: list[str]) -> pl.DataFrame:
    """Vehicles the timetable needs per `keys` (e.g. service_date, operator_id, route_id).

    Returns *keys, n_vehicles_required = distinct blocks + peak of the block-less trips.
    """
    blocks = (
        scheduled.filter(pl.col("block_id").is_not_null())
        .group_by(keys)
        .agg(pl.col("block_id").n_unique().cast(pl.Int32).alias("n_blocks"))
    )
    loose = compute_peak_concurrency(scheduled.filter(pl.col("block_id").is_null()), keys)
    all_keys = scheduled.select(keys).unique()
    return (
        all_keys.join(blocks, on=keys, how="left")
        .join(loose, on=keys, how="left")
        .select(
            *keys,
            (pl.col("n_blocks").fill_null(0) + pl.col("n_peak").fill_null(0))
            .cast(pl.Int32)
            .alias("n_vehicles_required"),
        )
    )


def reserve_min_expr(required: pl.Expr, profile: Profile, owned: pl.Expr | None = None) -> pl.Expr:
    """Minimum reserve for a required fleet (BG Anexo I XXXV): ceil(ratio × required), or the
    small-fleet minimum when the fleet *owned* ("em caso de possuir menos de 10 ônibus": the
    registered fleet, `owned`; the required fleet when not given) is below the small-fleet
    size."""
    f = profile.fleet
    size = required if owned is None else owned
    return (
        pl.when(size < f.reserve_small_fleet_below.value)
        .then(pl.lit(f.reserve_small_fleet_min.value))
        .otherwise((required.cast(pl.Float64) * f.reserve_min_ratio.value - 1e-9).ceil())
        .cast(pl.Int32)
    )


def reserve_max_expr(required: pl.Expr, profile: Profile) -> pl.Expr:
    """Reserve cap (CGS art. 23: 15 %), rounded down; null when the profile has no cap."""
    cap = profile.fleet.reserve_max_ratio
    if cap is None:
        return pl.lit(None, dtype=pl.Int32)
    return (required.cast(pl.Float64) * cap.value + 1e-9).floor().cast(pl.Int32)


def compute_cut_runs(days: pl.DataFrame, keys: list[str], profile: Profile) -> pl.DataFrame:
    """Adds n_cut_days_consecutive and is_grave_cut to rows with service_date, keys and
    is_cut_over_limit.

    Only a day evaluated under the limit ends a run. A day without a row -- the line has no
    service that day (a Sunday), or the day was not processed -- is not evaluated: it neither
    counts nor resets (BG art. 72 p.ú. I; otherwise a line without Sunday service could never
    reach "more than 3 consecutive days"). n_cut_days_consecutive counts the evaluated days
    over the limit in the run."""
    over = pl.col("is_cut_over_limit")
    out = (
        days.sort([*keys, "service_date"])
        .with_columns(
            (over != over.shift(1).over(keys))
            .fill_null(True)
            .cast(pl.Int32)
            .cum_sum()
            .over(keys)
            .alias("_run")
        )
        .with_columns(
            pl.when(over)
            .then(pl.col("service_date").cum_count().over([*keys, "_run"]))
            .otherwise(0)
            .cast(pl.Int32)
            .alias("n_cut_days_consecutive")
        )
    )
    return out.with_columns(
        (pl.col("n_cut_days_consecutive") > profile.fleet.grave_cut_min_days.value).alias(
            "is_grave_cut"
        )
    ).drop("_run")


def compute_fleet_days(
    scheduled: pl.DataFrame,
    outcomes: pl.DataFrame,
    vehicles: pl.DataFrame,
    line_scopes: pl.DataFrame,
    profile: Profile,
) -> pl.DataFrame:
    """The `fleet_days` rows: per service day, operator and line, plus the operator total
    (route_id '*') with the reserve columns. `scheduled` (scheduled_trips), `outcomes`
    (trip_outcomes) and `vehicles` (the register's versions in force over those days,
    `core.register`) cover the days wanted."""
    ops = line_scopes.select("route_id", "operator_id")
    sched = scheduled.join(ops, on="route_id", how="left").with_columns(
        pl.col("operator_id").fill_null("?")
    )
    ran = (
        outcomes.filter(pl.col("vehicle_id").is_not_null())
        .select("service_date", "route_id", "vehicle_id")
        .join(ops, on="route_id", how="left")
        .with_columns(pl.col("operator_id").fill_null("?"))
    )
    line_keys = ["service_date", "operator_id", "route_id"]
    op_keys = ["service_date", "operator_id"]
    line_req = compute_vehicles_required(sched, line_keys)
    op_req = compute_vehicles_required(sched, op_keys).with_columns(
        pl.lit(OPERATOR_TOTAL).alias("route_id")
    )
    line_ops = ran.group_by(line_keys).agg(
        pl.col("vehicle_id").n_unique().cast(pl.Int32).alias("n_vehicles_operated")
    )
    op_ops = (
        ran.group_by(op_keys)
        .agg(pl.col("vehicle_id").n_unique().cast(pl.Int32).alias("n_vehicles_operated"))
        .with_columns(pl.lit(OPERATOR_TOTAL).alias("route_id"))
    )
    days = pl.concat(
        [
            line_req.join(line_ops, on=line_keys, how="left"),
            op_req.join(op_ops, on=line_keys, how="left"),
        ],
        how="diagonal_relaxed",
    ).with_columns(pl.col("n_vehicles_operated").fill_null(0))
    req = pl.col("n_vehicles_required")
    days = days.with_columns(
        pl.when(req > 0)
        .then((1.0 - pl.col("n_vehicles_operated") / req).clip(lower_bound=0.0))
        .otherwise(0.0)
        .alias("cut_ratio")
    ).with_columns(
        (pl.col("cut_ratio") > profile.fleet.grave_cut_min_ratio.value).alias("is_cut_over_limit")
    )
    days = compute_cut_runs(days, ["operator_id", "route_id"], profile)
    registered = compute_registered_per_day(vehicles, days.select("service_date").unique())
    total = pl.col("route_id") == OPERATOR_TOTAL
    reserve = pl.col("n_vehicles_registered") - req
    out = (
        days.join(registered, on=["service_date", "operator_id"], how="left")
        .with_columns(
            pl.when(total)
            .then(pl.col("n_vehicles_registered").fill_null(0))
            .alias("n_vehicles_registered")
        )
        .with_columns(
            pl.when(total).then(reserve).cast(pl.Int32).alias("n_reserve"),
            pl.when(total)
            .then(reserve_min_expr(req, profile, pl.col("n_vehicles_registered")))
            .alias("n_reserve_min"),
            pl.when(total).then(reserve_max_expr(req, profile)).alias("n_reserve_max"),
            pl.when(total & (req > 0)).then(reserve / req).alias("reserve_ratio"),
        )
        .with_columns(
            pl.when(total)
            .then(pl.col("n_reserve") >= pl.col("n_reserve_min"))
            .alias("is_reserve_ok")
        )
        .sort("service_date", "operator_id", "route_id")
    )
    if vehicles.height == 0:
        # No fleet register: the reserve is not evaluated (null), never "0 registered, a
        # reserve of minus the required fleet", and nothing is suggested from it.
        unknown = (
            "n_vehicles_registered",
            "n_reserve",
            "n_reserve_min",
            "n_reserve_max",
            "reserve_ratio",
            "is_reserve_ok",
        )
        out = out.with_columns(pl.lit(None, dtype=out.schema[c]).alias(c) for c in unknown)
    return out


def compute_registered_per_day(vehicles: pl.DataFrame, dates: pl.DataFrame) -> pl.DataFrame:
    """Vehicles in the fleet per day and operator, on the register then in force
    (`core.register.to_vehicle_days`: entered on or before the day, unknown entry = entered,
    not retired; the operator of the version in force that day): service_date, operator_id,
    n_vehicles_registered. A retired vehicle is no reserve."""
    return (
        to_vehicle_days(vehicles, dates)
        .group_by("service_date", "operator_id")
        .agg(pl.len().cast(pl.Int32).alias("n_vehicles_registered"))
    )


def compute_fleet_register(
    vehicles: pl.DataFrame, profile: Profile, as_of: date, fee_table: FeeTable | None = None
) -> pl.DataFrame:
    """The register as of a day, one row per vehicle, with:

    age_years (whole years), entry_age_years, max_age_limit_years (the service area's maximum
    age, or the vehicle type's useful life where the profile sets a shorter one, CGS art.
    10-III-a micro-ônibus 8 years), is_over_max_age (age above that limit: past its useful
    life), is_replacement (entered after the operator's first entry day: not the initial
    fleet), is_entry_over_age (a replacement older than the area's entry age, BG art. 19; null
    when the entry date is unknown), inspection_band (1-based order of the profile's bands),
    inspection_interval_months, inspection_due_on (null when never inspected), is_inspection_overdue
    (due before `as_of`, or never inspected), capacity (seats + standing area × the standing
    limit, passengers), fee_yearly and fee_per_inspection (fee-table currency, null without a
    fee table).
    """
    ages = profile.fleet.age
    area = pl.col("service_area")

    def by_area(attr: str) -> pl.Expr:
        expr = pl.lit(None, dtype=pl.Float64)
        for name, limits in ages.items():
            expr = pl.when(area == name).then(pl.lit(getattr(limits, attr).value)).otherwise(expr)
        return expr

    # a per-type useful life (CGS art. 10-III: micro-ônibus 8 years) caps the area's maximum
    life = pl.lit(None, dtype=pl.Float64)
    for name, vtype in profile.crowding.vehicle_types.items():
        if vtype.useful_life_years is not None:
            life = (
                pl.when(pl.col("vehicle_type") == name)
                .then(pl.lit(float(vtype.useful_life_years.value)))
                .otherwise(life)
            )
    max_age = pl.min_horizontal(by_area("max_age_years"), life)
    age = (pl.lit(as_of.year) - pl.col("manufacture_year")).cast(pl.Int32)
    out = (
        vehicles.with_columns(
            age.alias("age_years"),
            (pl.col("in_service_since").dt.year() - pl.col("manufacture_year"))
            .cast(pl.Int32)
            .alias("entry_age_years"),
            max_age.alias("max_age_limit_years"),
        )
        .with_columns(
            (pl.col("age_years") > pl.col("max_age_limit_years")).alias("is_over_max_age"),
            # BG art. 19 limits the entry age "na substituição da frota": the initial fleet (the
            # vehicles that entered on the operator's first entry day) answers to art. 18 only
            (
                pl.col("in_service_since") > pl.col("in_service_since").min().over("operator_id")
            ).alias("is_replacement"),
        )
        .with_columns(
            (
                pl.col("is_replacement")
                & (pl.col("entry_age_years") > by_area("entry_age_max_years"))
            ).alias("is_entry_over_age"),
        )
    )
    band_expr = pl.lit(None, dtype=pl.Int32)
    interval_expr = pl.lit(None, dtype=pl.Int32)
    # walk the bands from the last so the first band that fits wins
    for i, band in reversed(list(enumerate(profile.fleet.inspections, start=1))):
        fits = (
            pl.lit(True)
            if band.max_age_years is None
            else pl.col("age_years") <= band.max_age_years.value
        )
        fits = fits & (pl.col("age_years") >= band.min_age_years.value)
        band_expr = pl.when(fits).then(pl.lit(i)).otherwise(band_expr)
        interval_expr = (
            pl.when(fits).then(pl.lit(band.interval_months.value)).otherwise(interval_expr)
        )
    out = out.with_columns(
        band_expr.cast(pl.Int32).alias("inspection_band"),
        interval_expr.cast(pl.Int32).alias("inspection_interval_months"),
    ).with_columns(
        pl.col("last_inspection_on")
        .dt.offset_by(pl.format("{}mo", pl.col("inspection_interval_months")))
        .alias("inspection_due_on")
    )
    out = out.with_columns(
        (pl.col("inspection_due_on").is_null() | (pl.col("inspection_due_on") < as_of)).alias(
            "is_inspection_overdue"
        ),
        (
            pl.col("n_seats").fill_null(0)
            + (
                pl.col("standing_area_m2").fill_null(0.0)
                * profile.crowding.standees_max_per_m2.value
            ).floor()
        )
        .cast(pl.Int32)
        .alias("capacity"),
    )
    return out.with_columns(*compute_fee_exprs(fee_table))


def compute_fee_exprs(fee_table: FeeTable | None) -> list[pl.Expr]:
    """fee_yearly, fee_per_inspection and fee_per_inspection_chosen_place (an inspection at a
    place or time the taxpayer chooses: × `chosen_place_inspection_factor`, Lei 221/2017 item
    12) of a bus by its capacity (fee table, 'collective'); null without a fee table."""
    if fee_table is None:
        return [
            pl.lit(None, dtype=pl.Float64).alias("fee_yearly"),
            pl.lit(None, dtype=pl.Float64).alias("fee_per_inspection"),
            pl.lit(None, dtype=pl.Float64).alias("fee_per_inspection_chosen_place"),
        ]
    items = {i.capacity: i for i in fee_table.items if i.modality == BUS_MODALITY}
    small, large = items.get("up_to_20"), items.get("over_20")
    small_cap = pl.col("capacity") <= fee_table.small_capacity_max

    def pick(attr: str) -> pl.Expr:
        a = getattr(small, attr) if small else None
        b = getattr(large, attr) if large else None
        return (
            pl.when(small_cap)
            .then(pl.lit(a, dtype=pl.Float64))
            .otherwise(pl.lit(b, dtype=pl.Float64))
        )

    return [
        pick("yearly_ufitas").alias("fee_yearly"),
        pick("per_inspection_ufitas").alias("fee_per_inspection"),
        (pick("per_inspection_ufitas") * fee_table.chosen_place_inspection_factor).alias(
            "fee_per_inspection_chosen_place"
        ),
    ]


def compute_ott_fees(km_by_vehicle: pl.DataFrame, fee_table: FeeTable) -> pl.DataFrame:
    """OTT (ride-hailing) fee per km run: vehicle_id, km_run, fee_km (fee-table currency)."""
    rate = next((i.per_km_ufitas for i in fee_table.items if i.modality == "ott"), None)
    return km_by_vehicle.with_columns(
        (pl.col("km_run") * pl.lit(rate, dtype=pl.Float64)).alias("fee_km")
    )


def compute_register_indicators(
    register: pl.DataFrame, profile: Profile, period: Period
) -> pl.DataFrame:
    """Age, inspection and fee indicators per operator (and system) and service area.

    Indicator ids carry the area: fleet_age_max_years_urban, fleet_age_mean_years_district,
    fleet_mean_age_over_limit_urban (1 when the mean age exceeds the area's mean-age limit, BG
    art. 18-I-b / 18-II-b, else 0),
    vehicles_over_max_age_urban, vehicles_entry_over_age_urban, inspections_overdue_band_1
    (numerator overdue, denominator vehicles of the band), fees_yearly (fee-table currency).
    """
    parts = []
    scoped = pl.concat(
        [
            register.with_columns(pl.lit("system").alias("scope"), pl.lit("all").alias("scope_id")),
            register.with_columns(
                pl.lit("operator").alias("scope"), pl.col("operator_id").alias("scope_id")
            ),
        ]
    )
    for area, limits in profile.fleet.age.items():
        sub = scoped.filter(pl.col("service_area") == area)
        wide = sub.group_by("scope", "scope_id").agg(
            pl.col("age_years").max().alias("age_max"),
            pl.col("age_years").sum().alias("age_sum"),
            pl.len().alias("n"),
            pl.col("is_over_max_age").sum().alias("n_over"),
            pl.col("is_entry_over_age").fill_null(False).sum().alias("n_entry_over"),
        )
        wide = wide.with_columns(
            (pl.col("age_sum") / pl.col("n") > limits.mean_age_max_years.value)
            .cast(pl.Int32)
            .alias("mean_over")
        )
        src = limits.max_age_years.citation
        parts.append(
            to_indicator_rows(
                wide,
                (
                    IndicatorSpec(f"fleet_age_max_years_{area}", "age_max", None, "years", src),
                    IndicatorSpec(
                        f"fleet_age_mean_years_{area}",
                        "age_sum",
                        "n",
                        "years",
                        limits.mean_age_max_years.citation,
                    ),
                    IndicatorSpec(
                        f"fleet_mean_age_over_limit_{area}",
                        "mean_over",
                        None,
                        "flag",
                        limits.mean_age_max_years.citation,
                    ),
                    IndicatorSpec(f"vehicles_over_max_age_{area}", "n_over", "n", "ratio", src),
                    IndicatorSpec(
                        f"vehicles_entry_over_age_{area}",
                        "n_entry_over",
                        "n",
                        "ratio",
                        limits.entry_age_max_years.citation,
                    ),
                ),
                period,
            )
        )
    for i, band in enumerate(profile.fleet.inspections, start=1):
        wide = (
            scoped.filter(pl.col("inspection_band") == i)
            .group_by("scope", "scope_id")
            .agg(
                pl.col("is_inspection_overdue").sum().alias("n_overdue"),
                pl.col("inspection_due_on")
                .is_between(period.start, period.end)
                .sum()
                .alias("n_due"),
                pl.len().alias("n"),
            )
        )
        src = band.interval_months.citation
        parts.append(
            to_indicator_rows(
                wide,
                (
                    IndicatorSpec(f"inspections_overdue_band_{i}", "n_overdue", "n", "ratio", src),
                    IndicatorSpec(f"inspections_due_band_{i}", "n_due", "n", "ratio", src),
                ),
                period,
            )
        )
    fees = scoped.group_by("scope", "scope_id").agg(pl.col("fee_yearly").sum().alias("fees"))
    if register["fee_yearly"].is_not_null().any():
        parts.append(
            to_indicator_rows(
                fees,
                (IndicatorSpec("fees_yearly", "fees", None, "ufitas", "fee table (Lei 221/2017)"),),
                period,
            )
        )
    return (
        pl.concat([p for p in parts if p.height], how="vertical_relaxed")
        if parts
        else pl.DataFrame()
    )


def compute_fleet_day_indicators(fleet_days: pl.DataFrame, period: Period) -> pl.DataFrame:
    """Per operator, over every day of the period (not its last day): days with the reserve
    below the minimum, days above the cap (CGS art. 23), days of grave cut, mean cut."""
    total = fleet_days.filter(pl.col("route_id") == OPERATOR_TOTAL)
    wide = total.group_by(pl.col("operator_id").alias("scope_id")).agg(
        pl.lit("operator").alias("scope"),
        # Null (not evaluated) when no day had a register to judge the reserve by.
        pl.when(pl.col("is_reserve_ok").is_not_null().any())
        .then((~pl.col("is_reserve_ok")).sum())
        .alias("n_reserve_below"),
        # CGS art. 23 caps the reserve at 15 %: days above the cap (none without a cap)
        pl.when(pl.col("is_reserve_ok").is_not_null().any())
        .then((pl.col("n_reserve") > pl.col("n_reserve_max")).fill_null(False).sum())
        .alias("n_reserve_above"),
        pl.col("is_grave_cut").sum().alias("n_grave"),
        pl.col("is_cut_over_limit").sum().alias("n_cut"),
        pl.len().alias("n_days"),
        pl.col("n_vehicles_operated").sum().alias("operated"),
        pl.col("n_vehicles_required").sum().alias("required"),
    )
    return to_indicator_rows(
        wide,
        (
            IndicatorSpec(
                "days_reserve_below_min",
                "n_reserve_below",
                "n_days",
                "days",
                "BG Anexo I XXXV; CGS art. 23",
            ),
            IndicatorSpec(
                "days_reserve_above_max", "n_reserve_above", "n_days", "days", "CGS art. 23"
            ),
            IndicatorSpec(
                "days_fleet_cut_over_limit", "n_cut", "n_days", "days", "BG art. 72 p.ú. I"
            ),
            IndicatorSpec("days_grave_fleet_cut", "n_grave", "n_days", "days", "BG art. 72 p.ú. I"),
            IndicatorSpec(
                "fleet_operated_ratio", "operated", "required", "ratio", "BG art. 72 p.ú. I"
            ),
        ),
        period,
    )
