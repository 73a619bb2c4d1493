"""Speeding episodes from the AVL (BG art. 77: speed records are evidence; Anexo I LXXII,
"dirigir o veículo de forma perigosa").

A fix is *fast* when the unit's reported speed is above the profile's limit
(`infractions.speed_limit_m_s`) **and** the distance from the vehicle's previous fix, over the
time between them, is at least `speeding_position_ratio` × the limit: a speedometer glitch
(fast reading, normal displacement) and a GPS jump (huge displacement, normal reading) are
each one source alone and raise nothing. An episode is a run of consecutive fast fixes of one
vehicle; it counts when it lasts at least `speeding_min_duration_s` (first to last fast fix).
One suggestion per vehicle and local day, listing every episode with its fixes (ping ids).
"""

from __future__ import annotations

from datetime import datetime

import polars as pl

from analytics.indices.infractions import FACT_COLUMNS
from core.profile import Profile
from core.store import Store

EARTH_RADIUS_M = 6_371_000.0
PING_COLUMNS = ("ping_id", "vehicle_id", "operator_id", "event_at", "lat", "lon", "speed_m_s")

EPISODE_SCHEMA = pl.Schema(
    {
        "vehicle_id": pl.String(),
        "operator_id": pl.String(),
        "start_at": pl.Datetime("us", "UTC"),
        "end_at": pl.Datetime("us", "UTC"),
        "duration_s": pl.Float64(),
        "n_pings": pl.UInt32(),
        "max_speed_m_s": pl.Float64(),
        "ping_ids": pl.String(),
    }
)


def _position_speed() -> pl.Expr:
    """Metres per second from the vehicle's previous fix (local flat-earth distance: fixes are
    seconds apart, the error is far below GPS noise)."""
    lat0 = pl.col("lat").shift(1).over("vehicle_id")
    lon0 = pl.col("lon").shift(1).over("vehicle_id")
    t0 = pl.col("event_at").shift(1).over("vehicle_id")
    rad = 3.141592653589793 / 180.0
    dy = (pl.col("lat") - lat0) * rad * EARTH_RADIUS_M
    dx = (pl.col("lon") - lon0) * rad * EARTH_RADIUS_M * (pl.col("lat") * rad).cos()
    dt = (pl.col("event_at") - t0).dt.total_microseconds() / 1e6
    return pl.when(dt > 0).then((dx**2 + dy**2).sqrt() / dt)


def compute_speeding_episodes(pings: pl.DataFrame, profile: Profile) -> pl.DataFrame:
    """Speeding episodes (EPISODE_SCHEMA) in `pings` (PING_COLUMNS, any order): vehicle_id,
    operator_id, start_at / end_at (first and last fast fix, UTC), duration_s, n_pings (fast
    fixes), max_speed_m_s (highest reported speed), ping_ids (the fast fixes, comma-separated).
    Empty when the profile sets no speed limit."""
    inf = profile.infractions
    if inf.speed_limit_m_s is None or pings.height == 0:
        return pl.DataFrame(schema=EPISODE_SCHEMA)
    limit = inf.speed_limit_m_s.value
    ratio = inf.speeding_position_ratio.value if inf.speeding_position_ratio else 0.0
    min_s = inf.speeding_min_duration_s.value if inf.speeding_min_duration_s else 0
    fast = (pl.col("speed_m_s") > limit) & (
        pl.col("position_speed_m_s") >= ratio * limit
    ).fill_null(False)
    return (
        pings.select(PING_COLUMNS)
        .sort("vehicle_id", "event_at")
        .with_columns(_position_speed().alias("position_speed_m_s"))
        .with_columns(fast.fill_null(False).alias("is_fast"))
        # a new run starts wherever the flag changes
        .with_columns(
            (pl.col("is_fast") != pl.col("is_fast").shift(1).over("vehicle_id"))
            .fill_null(True)
            .cum_sum()
            .over("vehicle_id")
            .alias("run")
        )
        .filter(pl.col("is_fast"))
        .group_by("vehicle_id", "run")
        .agg(
            pl.col("operator_id").first(),
            pl.col("event_at").min().alias("start_at"),
            pl.col("event_at").max().alias("end_at"),
            pl.len().alias("n_pings"),
            pl.col("speed_m_s").max().alias("max_speed_m_s"),
            pl.col("ping_id").sort().cast(pl.String).str.join(",").alias("ping_ids"),
        )
        .with_columns(
            ((pl.col("end_at") - pl.col("start_at")).dt.total_microseconds() / 1e6).alias(
                "duration_s"
            )
        )
        .filter(pl.col("duration_s") >= min_s)
        .select(list(EPISODE_SCHEMA))
        .cast(EPISODE_SCHEMA)
        .sort("start_at", "vehicle_id")
    )


def match_speeding_facts(episodes: pl.DataFrame, profile: Profile) -> pl.DataFrame:
    """Facts LXXII (FACT_COLUMNS), one per vehicle and local day of its episodes' starts."""
    tz = profile.general.timezone.value
    limit = profile.infractions.speed_limit_m_s
    kmh = round(limit.value * 3.6) if limit else 0
    local = pl.col("start_at").dt.convert_time_zone(tz)
    one = pl.format(
        "{}–{} ({} s, máx. {} km/h, pings {})",
        local.dt.strftime("%H:%M:%S"),
        pl.col("end_at").dt.convert_time_zone(tz).dt.strftime("%H:%M:%S"),
        pl.col("duration_s").round(0).cast(pl.Int64),
        (pl.col("max_speed_m_s") * 3.6).round(0).cast(pl.Int64),
        "ping_ids",
    )
    return (
        episodes.with_columns(local.dt.date().alias("occurred_on"), one.alias("_ev"))
        .group_by("operator_id", "vehicle_id", "occurred_on")
        .agg(
            pl.col("start_at").min().alias("occurred_at"),
            pl.len().alias("_n"),
            (pl.col("max_speed_m_s").max() * 3.6).round(0).cast(pl.Int64).alias("_max"),
            pl.col("_ev").sort_by("start_at").str.join("; ").alias("evidence"),
            pl.col("ping_ids").sort_by("start_at").str.join(",").alias("ping_ids"),
        )
        .select(
            pl.lit("LXXII").alias("item"),
            "operator_id",
            pl.lit(None, dtype=pl.String).alias("route_id"),
            "vehicle_id",
            "occurred_on",
            "occurred_at",
            pl.format(
                "veículo {}: {} episódio(s) acima de {} km/h (máx. {} km/h), velocidade "
                "registrada pelo AVL e confirmada pela posição (BG art. 77)",
                "vehicle_id",
                "_n",
                pl.lit(kmh),
                "_max",
            ).alias("fact"),
            "evidence",
            pl.lit(None, dtype=pl.String).alias("trip_ids"),
            "ping_ids",
        )
        .select(FACT_COLUMNS)
        .sort("occurred_on", "vehicle_id")
    )


def read_speeding_pings(
    store: Store, start_at: datetime, end_at: datetime, profile: Profile
) -> pl.DataFrame:
    """PING_COLUMNS of the vehicle-days (UTC days, one before and after kept whole by the
    window) that reported at least one speed above the limit: the rest cannot hold an episode,
    and a year of pings does not fit in memory."""
    limit = profile.infractions.speed_limit_m_s
    if limit is None:
        return pl.DataFrame(schema={c: pl.String for c in PING_COLUMNS})
    cols = ", ".join(f"p.{c}" for c in PING_COLUMNS)
    return store.query(
        f"""
        WITH hot AS (
            SELECT DISTINCT vehicle_id, CAST(event_at AS DATE) AS d FROM vehicle_locations
            WHERE event_at >= ? AND event_at < ? AND speed_m_s > ?
        )
        SELECT {cols} FROM vehicle_locations p
        JOIN hot h ON p.vehicle_id = h.vehicle_id AND CAST(p.event_at AS DATE) = h.d
        WHERE p.event_at >= ? AND p.event_at < ?
        ORDER BY p.vehicle_id, p.event_at
        """,
        [start_at, end_at, limit.value, start_at, end_at],
    )
