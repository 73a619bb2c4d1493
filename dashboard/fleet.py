"""The fleet register as the Frota page shows it: age rules, inspections due, reserve, fees.

Pure frame-in, frame-out functions over the `vehicles` table and the regulation profile (BG art.
18-19 ages, art. 23 inspection intervals) and its fee table (Lei 221/2017). The reserve fleet is
not computed here: the Frota page reads it from `fleet_days` (the indices job), which measures
it against the fleet the timetable requires, as BG Anexo I XXXV asks.
"""

from __future__ import annotations

from datetime import date

import polars as pl

from core.profile import FeeTable, Profile

DUE_SOON_DAYS = 30
"""An inspection due within this many days is shown as 'vence em breve' (a display choice)."""

CAPACITY_SPLIT_PASSENGERS = 20
"""The fee table's capacity classes: up to 20 passengers, over 20 (Lei 221/2017)."""


def build_fleet_register(vehicles: pl.DataFrame, profile: Profile, on: date) -> pl.DataFrame:
    """The register with its compliance columns, as of day `on`.

    Adds: `age_years` (on.year - manufacture_year), `max_age_years` (profile, by service
    area, capped by the vehicle type's useful life where the profile sets one),
    `is_over_age`, `inspection_interval_months` (profile band for the age),
    `next_inspection_on` (last inspection + interval; null when never inspected),
    `inspection_status` ('vencida', 'vence em breve', 'em dia', 'sem vistoria'),
    `capacity_passengers` (seats + standing area × the crowding limit, profile fallbacks by type).
    """
    if vehicles.is_empty():
        return vehicles
    age = pl.lit(on.year) - pl.col("manufacture_year")
    area_max = pl.lit(None, dtype=pl.Float64)
    for area, limits in profile.fleet.age.items():
        area_max = (
            pl.when(pl.col("service_area") == area)
            .then(pl.lit(float(limits.max_age_years.value)))
            .otherwise(area_max)
        )
    # a vehicle type's shorter useful life caps it, as the indices do (CGS art. 10-III-a:
    # micro-ônibus 8 years)
    life = pl.lit(None, dtype=pl.Float64)
    for vtype, spec in profile.crowding.vehicle_types.items():
        if spec.useful_life_years is not None:
            life = (
                pl.when(pl.col("vehicle_type") == vtype)
                .then(pl.lit(float(spec.useful_life_years.value)))
                .otherwise(life)
            )
    max_age = pl.min_horizontal(area_max, life)
    interval = pl.lit(None, dtype=pl.Int32)
    for band in reversed(profile.fleet.inspections):
        upper = band.max_age_years.value if band.max_age_years is not None else float("inf")
        interval = (
            pl.when(
                (pl.col("age_years") >= band.min_age_years.value) & (pl.col("age_years") < upper)
            )
            .then(pl.lit(band.interval_months.value, dtype=pl.Int32))
            .otherwise(interval)
        )
    seats_fb = pl.lit(None, dtype=pl.Int32)
    area_fb = pl.lit(None, dtype=pl.Float64)
    for vtype, spec in profile.crowding.vehicle_types.items():
        is_type = pl.col("vehicle_type") == vtype
        seats_fb = pl.when(is_type).then(pl.lit(spec.n_seats.value)).otherwise(seats_fb)
        area_fb = pl.when(is_type).then(pl.lit(spec.standing_area_m2.value)).otherwise(area_fb)
    limit = profile.crowding.standees_max_per_m2.value
    out = vehicles.with_columns(
        age.cast(pl.Int32).alias("age_years"), max_age.alias("max_age_years")
    )
    out = out.with_columns(
        (pl.col("age_years") > pl.col("max_age_years")).alias("is_over_age"),
        interval.alias("inspection_interval_months"),
        (
            pl.coalesce(pl.col("n_seats"), seats_fb)
            + (pl.coalesce(pl.col("standing_area_m2"), area_fb) * limit).floor().cast(pl.Int32)
        ).alias("capacity_passengers"),
    )
    due = pl.col("last_inspection_on").dt.offset_by(
        pl.format("{}mo", pl.col("inspection_interval_months"))
    )
    out = out.with_columns(due.alias("next_inspection_on"))
    days_left = (pl.col("next_inspection_on") - pl.lit(on)).dt.total_days()
    status = (
        pl.when(pl.col("next_inspection_on").is_null())
        .then(pl.lit("sem vistoria"))
        .when(days_left < 0)
        .then(pl.lit("vencida"))
        .when(days_left <= DUE_SOON_DAYS)
        .then(pl.lit("vence em breve"))
        .otherwise(pl.lit("em dia"))
    )
    return out.with_columns(status.alias("inspection_status"))


def compute_fees(register: pl.DataFrame, fees: FeeTable) -> pl.DataFrame:
    """Yearly inspection-control fee per vehicle (collective transport items of the fee table):
    `vehicle_id`, `capacity_class` ('up_to_20' / 'over_20'), `yearly_fee`, `per_inspection_fee`
    (in the table's unit, e.g. UFITAS)."""
    items = pl.DataFrame(
        [
            {
                "capacity_class": i.capacity,
                "yearly_fee": i.yearly_ufitas,
                "per_inspection_fee": i.per_inspection_ufitas,
            }
            for i in fees.items
            if i.modality == "collective"
        ],
        schema={
            "capacity_class": pl.String,
            "yearly_fee": pl.Float64,
            "per_inspection_fee": pl.Float64,
        },
    )
    klass = (
        pl.when(pl.col("capacity_passengers") <= CAPACITY_SPLIT_PASSENGERS)
        .then(pl.lit("up_to_20"))
        .otherwise(pl.lit("over_20"))
    )
    return (
        register.select("vehicle_id", "operator_id", klass.alias("capacity_class"))
        .join(items, on="capacity_class", how="left")
        .sort("vehicle_id")
    )
