"""A simulated service day read as the matching engine's inputs (schedule, pings, incidents),
straight from the simulator's files (no store), for accuracy tests against its truth."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import polars as pl

from analytics.matching.day import Schedule, build_schedule
from analytics.matching.trip_context import DayEvidence
from core.tables.observed import INCIDENTS
from gtfs.read import read_feed

SimulatedDay = tuple[Schedule, pl.DataFrame, pl.DataFrame]
"""a day's schedule, pings and incidents"""


def read_simulated_day(sim: Path, day: date) -> SimulatedDay:
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


def read_simulated_evidence(sim: Path) -> DayEvidence:
    """The register, fare taps and routes of a simulator folder (what `read_day_evidence`
    reads from a store)."""
    taps = pl.read_csv(sim / "fares.csv", columns=["event_at", "vehicle_id", "route_id"])
    return DayEvidence(
        vehicles=pl.read_csv(
            sim / "vehicles.csv",
            columns=["vehicle_id", "operator_id", "is_reserve"],
            schema_overrides={"vehicle_id": pl.String},
        ),
        taps=taps.with_columns(
            pl.col("event_at").str.to_datetime(time_zone="UTC", time_unit="us"),
            pl.col("vehicle_id").cast(pl.String),
        ),
        routes=read_feed(sim / "gtfs")["routes"].select("route_id", "agency_id"),
    )
