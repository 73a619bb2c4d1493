"""Stop coverage (CGS art. 4): share of the population within walking reach of a stop.

Walking distance = straight-line distance to the nearest stop (in the feed's metric CRS) ×
`coverage.walking_factor`; a point is covered when it is at most `coverage.urban_walk_max_m`
(urban) or `coverage.rural_walk_max_m` (rural) from a stop. Population points come from a CSV:
lat, lon, people, area ('urban' or 'rural').
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl
from pyproj import Transformer
from scipy.spatial import cKDTree

from analytics.indices.scopes import SYSTEM_ID, IndicatorSpec, to_indicator_rows
from core.errors import InputError, where
from core.periods import Period
from core.profile import Profile

AREAS = ("urban", "rural")
POPULATION_COLUMNS = ("lat", "lon", "people", "area")


def read_population(path: str | Path) -> pl.DataFrame:
    """Population points (lat, lon in WGS 84 degrees; people; area urban/rural)."""
    path = Path(path)
    try:
        raw = pl.read_csv(path, infer_schema=False)
    except (OSError, pl.exceptions.ComputeError, pl.exceptions.NoDataError) as exc:
        raise InputError(f"cannot read the population CSV: {exc}", where=str(path)) from exc
    missing = [c for c in POPULATION_COLUMNS if c not in raw.columns]
    if missing:
        raise InputError(
            f"population CSV lacks columns {missing}; expected {', '.join(POPULATION_COLUMNS)}",
            where=str(path),
            hint="header line: lat,lon,people,area (area is urban or rural)",
        )
    frame = raw.with_row_index("line", offset=2).with_columns(
        pl.col("lat").cast(pl.Float64, strict=False).alias("lat_f"),
        pl.col("lon").cast(pl.Float64, strict=False).alias("lon_f"),
        pl.col("people").cast(pl.Float64, strict=False).alias("people_f"),
        pl.col("area").str.strip_chars().str.to_lowercase(),
    )
    checks = (
        ("lat", pl.col("lat_f").is_null() | ~pl.col("lat_f").is_between(-90, 90), "a latitude"),
        ("lon", pl.col("lon_f").is_null() | ~pl.col("lon_f").is_between(-180, 180), "a longitude"),
        ("people", pl.col("people_f").is_null() | (pl.col("people_f") < 0), "a count >= 0"),
        ("area", ~pl.col("area").is_in(AREAS).fill_null(False), "'urban' or 'rural'"),
    )
    for field, bad, expected in checks:
        rows = frame.filter(bad)
        if rows.height:
            first = rows.row(0, named=True)
            raise InputError(
                f"invalid {field} {first[field]!r} in the population CSV: expected {expected}",
                where=where(path, int(first["line"]), field),
            )
    return frame.select(
        pl.col("lat_f").alias("lat"),
        pl.col("lon_f").alias("lon"),
        pl.col("people_f").alias("people"),
        "area",
    )


def match_nearest_stop(
    population: pl.DataFrame, stops: pl.DataFrame, crs_epsg: int, profile: Profile
) -> pl.DataFrame:
    """Population points plus nearest_stop_m (straight line, metres), walk_m (× the walking
    factor) and is_covered (within the area's walking limit)."""
    to_metric = Transformer.from_crs(4326, crs_epsg, always_xy=True)
    px, py = to_metric.transform(population["lon"].to_numpy(), population["lat"].to_numpy())
    if stops.height == 0:
        dist = np.full(population.height, np.inf)
    else:
        if "stop_x_m" in stops.columns and stops["stop_x_m"].null_count() == 0:
            sx, sy = stops["stop_x_m"].to_numpy(), stops["stop_y_m"].to_numpy()
        else:
            sx, sy = to_metric.transform(stops["stop_lon"].to_numpy(), stops["stop_lat"].to_numpy())
        dist, _ = cKDTree(np.column_stack([sx, sy])).query(np.column_stack([px, py]))
    cov = profile.coverage
    limit = (
        pl.when(pl.col("area") == "urban")
        .then(cov.urban_walk_max_m.value)
        .otherwise(cov.rural_walk_max_m.value)
    )
    return (
        population.with_columns(pl.Series("nearest_stop_m", dist, dtype=pl.Float64))
        .with_columns((pl.col("nearest_stop_m") * cov.walking_factor.value).alias("walk_m"))
        .with_columns((pl.col("walk_m") <= limit).alias("is_covered"))
    )


def compute_coverage_indicators(
    covered: pl.DataFrame, profile: Profile, period: Period
) -> pl.DataFrame:
    """System indicators coverage_urban, coverage_rural and coverage_total: people within
    reach ÷ people (ratio 0-1)."""
    people = pl.col("people")
    wide = covered.select(
        pl.lit("system").alias("scope"),
        pl.lit(SYSTEM_ID).alias("scope_id"),
        *[people.filter(pl.col("area") == a).sum().alias(f"n_{a}") for a in AREAS],
        *[
            people.filter((pl.col("area") == a) & pl.col("is_covered")).sum().alias(f"c_{a}")
            for a in AREAS
        ],
        people.sum().alias("n_total"),
        people.filter(pl.col("is_covered")).sum().alias("c_total"),
    )
    cov = profile.coverage
    return to_indicator_rows(
        wide,
        (
            IndicatorSpec(
                "coverage_urban", "c_urban", "n_urban", "ratio", cov.urban_walk_max_m.citation
            ),
            IndicatorSpec(
                "coverage_rural", "c_rural", "n_rural", "ratio", cov.rural_walk_max_m.citation
            ),
            IndicatorSpec(
                "coverage_total", "c_total", "n_total", "ratio", "CGS art. 4 (coverage.*)"
            ),
        ),
        period,
    )
