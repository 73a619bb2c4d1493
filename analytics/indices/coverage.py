"""Stop coverage (CGS art. 4): a region is served when its population's *mean* walking
displacement to the nearest stop, from home or from the workplace, is at most
`coverage.urban_walk_max_m` (urban) or `coverage.rural_walk_max_m` (rural).

Walking distance = straight-line distance to the nearest stop (in the feed's metric CRS) ×
`coverage.walking_factor`. Population points come from a CSV: lat, lon, people, area ('urban'
or 'rural'), and optionally region (an id; default: one region per area) and kind ('home', the
default, or 'work': where the people work). Per region, area and kind, the people-weighted
mean walk is compared with the area's limit (`compute_region_coverage`); a region is served
when every kind given for it is within the limit. The share of people within the limit of a
stop (coverage_urban, ...) is kept as a supplementary measure: it is not the law's metric.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl

from analytics.indices.scopes import SYSTEM_ID, IndicatorSpec, to_indicator_rows
from core.errors import InputError, where
from core.periods import Period
from core.profile import Profile

AREAS = ("urban", "rural")
KINDS = ("home", "work")
POPULATION_COLUMNS = ("lat", "lon", "people", "area")


def read_population(path: str | Path) -> pl.DataFrame:
    """Population points (lat, lon in WGS 84 degrees; people; area urban/rural; region, and
    kind home/work, when the CSV has those columns)."""
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
    if "region" not in raw.columns:
        raw = raw.with_columns(pl.col("area").str.strip_chars().str.to_lowercase().alias("region"))
    if "kind" not in raw.columns:
        raw = raw.with_columns(pl.lit("home").alias("kind"))
    frame = raw.with_row_index("line", offset=2).with_columns(
        pl.col("kind").str.strip_chars().str.to_lowercase(),
        pl.col("region").str.strip_chars(),
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
        ("kind", ~pl.col("kind").is_in(KINDS).fill_null(False), "'home' or 'work'"),
        ("region", pl.col("region").is_null() | (pl.col("region") == ""), "a region id"),
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
        "region",
        "kind",
    )


def match_nearest_stop(
    population: pl.DataFrame, stops: pl.DataFrame, crs_epsg: int, profile: Profile
) -> pl.DataFrame:
    """Population points plus nearest_stop_m (straight line, metres), walk_m (× the walking
    factor) and is_covered (within the area's walking limit)."""
    # imported here: pyproj and scipy take a second or two to import, and only a run given
    # population points needs them
    from pyproj import Transformer
    from scipy.spatial import cKDTree

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


def compute_region_coverage(covered: pl.DataFrame, profile: Profile) -> pl.DataFrame:
    """Per region, area and kind (CGS art. 4): people, mean_walk_m (people-weighted mean of
    walk_m), limit_m (the area's limit) and is_served (mean_walk_m <= limit_m); plus, per
    region, is_region_served (every kind within the limit). `covered`: match_nearest_stop
    output; a frame without region/kind counts each area as one region of homes."""
    cov = profile.coverage
    if "region" not in covered.columns:
        covered = covered.with_columns(pl.col("area").alias("region"))
    if "kind" not in covered.columns:
        covered = covered.with_columns(pl.lit("home").alias("kind"))
    limit = (
        pl.when(pl.col("area") == "urban")
        .then(cov.urban_walk_max_m.value)
        .otherwise(cov.rural_walk_max_m.value)
    )
    people = pl.col("people")
    return (
        covered.group_by("region", "area", "kind")
        .agg(
            people.sum().alias("people"),
            ((pl.col("walk_m") * people).sum() / people.sum()).alias("mean_walk_m"),
        )
        .with_columns(limit.cast(pl.Float64).alias("limit_m"))
        .with_columns((pl.col("mean_walk_m") <= pl.col("limit_m")).alias("is_served"))
        .with_columns(pl.col("is_served").all().over("region", "area").alias("is_region_served"))
        .sort("area", "region", "kind")
    )


def compute_coverage_indicators(
    covered: pl.DataFrame, profile: Profile, period: Period
) -> pl.DataFrame:
    """System indicators. CGS art. 4: regions_served_urban / _rural (regions whose mean walk,
    from home and from work, is within the limit ÷ regions) and mean_walk_m_urban / _rural
    (people-weighted mean walk from home, m). Supplementary, from home points: coverage_urban,
    coverage_rural and coverage_total (people within reach ÷ people, ratio 0-1)."""
    regions = (
        compute_region_coverage(covered, profile)
        .select("region", "area", "is_region_served")
        .unique()
    )
    # the shares and means count each resident once: their home points
    homes = covered.filter(pl.col("kind") == "home") if "kind" in covered.columns else covered
    people = pl.col("people")
    wide = homes.select(
        pl.lit("system").alias("scope"),
        pl.lit(SYSTEM_ID).alias("scope_id"),
        *[people.filter(pl.col("area") == a).sum().alias(f"n_{a}") for a in AREAS],
        *[
            people.filter((pl.col("area") == a) & pl.col("is_covered")).sum().alias(f"c_{a}")
            for a in AREAS
        ],
        people.sum().alias("n_total"),
        people.filter(pl.col("is_covered")).sum().alias("c_total"),
    ).with_columns(
        *[pl.lit(regions.filter(pl.col("area") == a).height).alias(f"r_{a}") for a in AREAS],
        *[
            pl.lit(regions.filter((pl.col("area") == a) & pl.col("is_region_served")).height).alias(
                f"s_{a}"
            )
            for a in AREAS
        ],
        *[
            pl.lit(
                homes.filter(pl.col("area") == a).select((pl.col("walk_m") * people).sum()).item(),
                dtype=pl.Float64,
            ).alias(f"w_{a}")
            for a in AREAS
        ],
    )
    cov = profile.coverage
    return to_indicator_rows(
        wide,
        (
            IndicatorSpec(
                "regions_served_urban", "s_urban", "r_urban", "ratio", cov.urban_walk_max_m.citation
            ),
            IndicatorSpec(
                "regions_served_rural", "s_rural", "r_rural", "ratio", cov.rural_walk_max_m.citation
            ),
            IndicatorSpec(
                "mean_walk_m_urban", "w_urban", "n_urban", "m", cov.urban_walk_max_m.citation
            ),
            IndicatorSpec(
                "mean_walk_m_rural", "w_rural", "n_rural", "m", cov.rural_walk_max_m.citation
            ),
            IndicatorSpec(
                "coverage_urban",
                "c_urban",
                "n_urban",
                "ratio",
                "medida complementar: parcela da população dentro da distância do CGS art. 4",
            ),
            IndicatorSpec(
                "coverage_rural",
                "c_rural",
                "n_rural",
                "ratio",
                "medida complementar: parcela da população dentro da distância do CGS art. 4",
            ),
            IndicatorSpec(
                "coverage_total", "c_total", "n_total", "ratio", "CGS art. 4 (coverage.*)"
            ),
        ),
        period,
    )
