"""Side records of the simulated city: IQS surveys, population points, cost per km."""

from __future__ import annotations

from datetime import date

import numpy as np
import polars as pl
from scipy.spatial import cKDTree

from core.tables.observed import IQS_SURVEYS
from sample_data.network import to_wgs84


def build_iqs_surveys(
    operators: list[str], dimensions: list[str], months: list[str], seed: int
) -> pl.DataFrame:
    """One survey score (0-100) per operator, IQS dimension and month (columns of IQS_SURVEYS
    minus source/ingested_at)."""
    rng = np.random.default_rng([seed, 8001])
    rows = [(m, o, d) for m in months for o in operators for d in dimensions]
    df = pl.DataFrame(rows, schema=["period", "operator_id", "dimension"], orient="row")
    df = df.with_columns(
        score=pl.Series(np.round(rng.uniform(55.0, 92.0, df.height), 1)),
        n_respondents=pl.Series(rng.integers(120, 400, df.height)).cast(pl.Int32),
    )
    names = [c for c in IQS_SURVEYS.column_names if c not in ("source", "ingested_at")]
    return df.select(pl.col(c).cast(IQS_SURVEYS.column(c).dtype) for c in names)


def build_population(stops: pl.DataFrame, seed: int) -> pl.DataFrame:
    """Population points for stop coverage: lat, lon, people, area ('urban'|'rural').

    Urban blocks on a 200 m grid around urban stops (most within 400 m, some beyond it),
    rural households scattered within ~3 km of the rural stops.
    """
    rng = np.random.default_rng([seed, 8002])
    urban = stops.filter(pl.col("area") == "urban")
    ux, uy = urban["x_m"].to_numpy(), urban["y_m"].to_numpy()
    gx = np.arange(ux.min() - 800, ux.max() + 800, 200.0)
    gy = np.arange(uy.min() - 800, uy.max() + 800, 200.0)
    xx, yy = (a.ravel() for a in np.meshgrid(gx, gy))
    dist, _ = cKDTree(np.column_stack([ux, uy])).query(
        np.column_stack([xx, yy]), distance_upper_bound=650.0
    )
    near = np.isfinite(dist)
    xx, yy = xx[near], yy[near]
    people_u = rng.poisson(60, len(xx))
    rural = stops.filter(pl.col("area") == "rural")
    n_r = 40 * max(rural.height, 1)
    if rural.height:
        pick = rng.integers(0, rural.height, n_r)
        ang = rng.uniform(0, 2 * np.pi, n_r)
        r = rng.uniform(100.0, 3000.0, n_r)
        rx = rural["x_m"].to_numpy()[pick] + np.cos(ang) * r
        ry = rural["y_m"].to_numpy()[pick] + np.sin(ang) * r
    else:
        rx = ry = np.zeros(0)
    x = np.concatenate([xx, rx])
    y = np.concatenate([yy, ry])
    lat, lon = to_wgs84(x, y)
    return pl.DataFrame(
        {
            "lat": np.round(lat, 6),
            "lon": np.round(lon, 6),
            "people": np.concatenate([people_u, rng.integers(2, 8, len(rx))]).astype(np.int32),
            "area": ["urban"] * len(xx) + ["rural"] * len(rx),
        }
    )


def build_cost_per_km(operators: list[str], months: list[str], seed: int) -> pl.DataFrame:
    """Operating cost per km (BRL) per operator and month: the tariff's numerator (CGS art. 7)."""
    rng = np.random.default_rng([seed, 8003])
    rows = [(o, m) for o in operators for m in months]
    df = pl.DataFrame(rows, schema=["operator_id", "month"], orient="row")
    return df.with_columns(cost_per_km=pl.Series(np.round(rng.uniform(7.2, 9.4, df.height), 2)))


def months_of(dates: list[date]) -> list[str]:
    return sorted({d.strftime("%Y-%m") for d in dates})
