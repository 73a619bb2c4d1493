"""A simulated service day read as the matching engine's inputs (schedule, pings, incidents),
straight from the simulator's files (no store), for accuracy tests against its truth."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import polars as pl

from analytics.matching.day import Schedule, build_schedule
from core.tables.observed import INCIDENTS
from gtfs.read import read_feed


def read_simulated_day(sim: Path, day: date) -> tuple[Schedule, pl.DataFrame, pl.DataFrame]:
    """(schedule of `day`, every ping with a ping_id, the incidents) of a simulator folder."""
    schedule = build_schedule(read_feed(sim / "gtfs"), day)
    pings = (
        pl.read_parquet(sim / "avl.parquet")
        .with_row_index("ping_id")
        .with_columns(pl.col("ping_id").cast(pl.Int64))
    )
    raw = pl.read_csv(sim / "incidents.csv", infer_schema_length=0)
    incidents = INCIDENTS.conform(
        raw.with_columns(
            pl.col("starts_at", "ends_at").str.to_datetime(time_zone="UTC"),
            pl.col("is_justified") == "true",
            pl.lit("simulator").alias("source"),
        ).with_columns(pl.col("starts_at").alias("ingested_at"))
    )
    return schedule, pings, incidents
