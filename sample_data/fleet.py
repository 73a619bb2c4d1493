"""The fleet register ('cadastro da frota') of the simulated operators.

Each group of compatible blocks (operator, lot, urban/district, conventional/selective, vehicle
type) gets as many vehicles as its weekday blocks plus a reserve. Manufacture years and
inspection dates are drawn so that a few vehicles break the profile's age limits (BG art. 18),
entry age (art. 19) and inspection intervals (art. 23): that is what the fleet checks must find.
"""

from __future__ import annotations

from datetime import date

import numpy as np
import polars as pl

from core.profile import Profile
from core.tables.reference import VEHICLES

GROUP = ("operator_id", "lot_id", "service_area", "service_class", "vehicle_type")
# Register values by type: seats and standing area (m²) — NBR 15570-like bodies.
_BODIES = {
    "micro": (21, 2.5),
    "convencional": (38, 6.0),
    "padron": (40, 8.0),
    "articulado": (50, 12.0),
}
_RESERVE_RATIO = 0.12


def build_fleet(required: pl.DataFrame, profile: Profile, on: date, seed: int) -> pl.DataFrame:
    """The register: one row per vehicle, columns of VEHICLES minus source/ingested_at.

    `required` has the GROUP columns and `n_blocks` (vehicles needed at the weekday peak).
    `on` is the first simulated day: ages and inspection dates are relative to it. About 7 % of
    vehicles exceed the maximum age, 7 % are overdue for inspection, 4 % entered too old.
    """
    rng = np.random.default_rng([seed, 3001])
    req = (
        required.sort(list(GROUP))
        .with_columns(
            n_reserve=(pl.col("n_blocks") * _RESERVE_RATIO)
            .ceil()
            .cast(pl.Int64)
            .clip(lower_bound=1)
        )
        .with_columns(n_total=pl.col("n_blocks") + pl.col("n_reserve"))
    )
    fleet = (
        req.select(*GROUP, "n_blocks", idx=pl.int_ranges(0, pl.col("n_total")))
        .explode("idx")
        .with_columns(
            is_reserve=pl.col("idx") >= pl.col("n_blocks"),
            op_num=pl.col("operator_id").rank("dense").cast(pl.Int64),
        )
        .with_columns(
            seq=pl.int_range(0, pl.len()).over("operator_id"),
        )
        .with_columns(
            vehicle_id=pl.format(
                "{}{}", pl.col("op_num"), pl.col("seq").add(1).cast(pl.String).str.zfill(4)
            ),
        )
    )
    n = fleet.height
    max_age = np.array([profile.fleet.age[a].max_age_years.value for a in fleet["service_area"]])
    entry_max = np.array(
        [profile.fleet.age[a].entry_age_max_years.value for a in fleet["service_area"]]
    )
    age = rng.uniform(0.5, np.minimum(max_age, 11.0) * 0.8, n)
    too_old = rng.random(n) < 0.07
    age = np.where(too_old, max_age + rng.uniform(0.5, 3.0, n), age)
    manufacture_year = (on.year - np.floor(age)).astype(np.int32)
    entry_age = np.where(
        rng.random(n) < 0.04,
        entry_max + rng.uniform(0.5, 3.0, n),
        rng.uniform(0.0, np.minimum(entry_max, age), n),
    )
    entry_age = np.minimum(entry_age, age)
    since_days = ((age - entry_age) * 365.25).astype(np.int64)
    interval_days = np.array([_inspection_interval_months(profile, a) for a in age]) * 30.44
    overdue = rng.random(n) < 0.07
    last_days = np.where(
        overdue, interval_days + rng.uniform(15, 120, n), rng.uniform(10, interval_days * 0.9, n)
    ).astype(np.int64)
    seats = np.array([_BODIES[t][0] for t in fleet["vehicle_type"]]) + rng.integers(0, 3, n)
    area = np.array([_BODIES[t][1] for t in fleet["vehicle_type"]]) + np.round(
        rng.uniform(0, 0.5, n), 1
    )
    letters = pl.Series(list("ABCDEFGHIJKLMNOPQRSTUVWXYZ"))
    pick = rng.integers(0, 26, (4, n))
    digits = rng.integers(0, 10, (3, n))
    # Mercosul plate: LLLNLNN
    plates = (
        letters.gather(pick[0])
        + letters.gather(pick[1])
        + letters.gather(pick[2])
        + pl.Series(digits[0]).cast(pl.String)
        + letters.gather(pick[3])
        + pl.Series(digits[1]).cast(pl.String)
        + pl.Series(digits[2]).cast(pl.String)
    )
    out = fleet.with_columns(
        plate=plates,
        manufacture_year=pl.Series(manufacture_year),
        n_seats=pl.Series(seats.astype(np.int32)),
        standing_area_m2=pl.Series(area),
        in_service_since=pl.Series(np.datetime64(on, "D") - since_days.astype("timedelta64[D]")),
        last_inspection_on=pl.Series(np.datetime64(on, "D") - last_days.astype("timedelta64[D]")),
    )
    # the register file a city sends: no history columns (every vehicle is in the fleet)
    skip = ("source", "ingested_at", "retired_on", "valid_from", "valid_to")
    names = [c for c in VEHICLES.column_names if c not in skip]
    return out.select(pl.col(c).cast(VEHICLES.column(c).dtype) for c in names).sort("vehicle_id")


def _inspection_interval_months(profile: Profile, age_years: float) -> int:
    for band in profile.fleet.inspections:
        upper = band.max_age_years.value if band.max_age_years else float("inf")
        if band.min_age_years.value <= age_years < upper:
            return band.interval_months.value
    return profile.fleet.inspections[-1].interval_months.value
