"""The day's operation: who runs which block, what goes wrong, and the true times.

Everything is vectorised over all trips of the run; the only loop is over a trip's position in
its vehicle's day (delays propagate from one trip to the next through the layover), which is at
most a few dozen iterations whatever the fleet size.

Frames (times are float seconds since the Unix epoch, UTC):
- trips: one row per scheduled trip per day (`tkey` is its row number) with vehicle_id
  (null when suppressed), injected, dev_s (departure deviation drawn), is_detour,
  break_seg (segment of the breakdown, -1 none), obstruction_delay_s, incident_id.
- plan: one row per (trip, stop) with planned time, dist_m and `visited` (false for stops
  skipped by a detour or after a breakdown).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime
from zoneinfo import ZoneInfo

import numpy as np
import polars as pl

from sample_data.fleet import GROUP
from sample_data.options import SimulationOptions
from sample_data.timetable import Timetable, service_ids_on

_DEADHEAD_MARGIN_S = 600.0
_GARAGE_GAP_S = 7200.0
INJECTIONS = ("suppressed", "early", "late", "breakdown", "detour")


def midnight_epoch(day: date, tz: str) -> int:
    """Unix time of local midnight of a service day (the GTFS reference when there is no DST)."""
    return int(datetime(day.year, day.month, day.day, tzinfo=ZoneInfo(tz)).timestamp())


def build_trip_days(
    tt: Timetable, dates: list[date], tz: str, day_services: pl.DataFrame | None = None
) -> pl.DataFrame:
    """Scheduled trips of every simulated day: the timetable's trips of the day's services.

    `day_services` (service_date, service_id) gives the services of each day (from a feed's
    calendar); by default the built-in city's WD/SAT/SUN calendar decides.
    """
    line_info = pl.DataFrame(
        {
            "route_id": [ln.route_id for ln in tt.lines],
            "operator_id": [ln.operator_id for ln in tt.lines],
            "lot_id": [ln.lot_id for ln in tt.lines],
            "service_area": [ln.area for ln in tt.lines],
            "service_class": [ln.service_class for ln in tt.lines],
            "vehicle_type": [ln.vehicle_type for ln in tt.lines],
            "is_circular": [ln.circular for ln in tt.lines],
        }
    )
    if day_services is None:
        day_services = pl.DataFrame(
            {"service_date": dates, "service_id": [service_ids_on(d) for d in dates]}
        )
    epochs = pl.DataFrame(
        {"service_date": dates, "day_epoch_s": [midnight_epoch(d, tz) for d in dates]}
    )
    days = day_services.select("service_date", "service_id").join(epochs, on="service_date")
    return (
        days.join(tt.trips, on="service_id", how="inner")
        .join(line_info, on="route_id", how="left")
        .with_columns(
            planned_start=pl.col("day_epoch_s").cast(pl.Float64) + pl.col("start_s"),
            planned_end=pl.col("day_epoch_s").cast(pl.Float64)
            + pl.col("start_s")
            + pl.col("run_s"),
            block_key=pl.format("{}|{}", pl.col("service_date"), pl.col("block_id")),
        )
        .sort("service_date", "block_id", "start_s")
        .with_row_index("tkey")
        .with_columns(
            pos_in_block=pl.int_range(0, pl.len()).over("block_key"),
            n_in_block=pl.len().over("block_key"),
        )
    )


@dataclass
class Operation:
    trips: pl.DataFrame
    fleet_days: pl.DataFrame
    incidents: pl.DataFrame


def assign_operation(
    trips: pl.DataFrame, fleet: pl.DataFrame, opts: SimulationOptions, dates: list[date]
) -> Operation:
    """Vehicles on blocks, the fleet cut, and every trip-level injection (see module doc)."""
    rng = np.random.default_rng([opts.seed, 4001])
    group = list(GROUP)
    blocks = (
        trips.group_by("service_date", "block_key", *group)
        .agg(first_start=pl.col("start_s").min())
        .sort("service_date", "block_key")
    )
    # Fleet cut: on `fleet_cut_days` days one operator leaves a share of its blocks unserved.
    cut_dates = dates[opts.fleet_cut_start_day : opts.fleet_cut_start_day + opts.fleet_cut_days]
    biggest = blocks.group_by(group).len().sort("len", *group, descending=True).row(0, named=True)
    is_cut_group = pl.all_horizontal(pl.col(c) == biggest[c] for c in group)
    blocks = (
        blocks.with_columns(
            u_cut=pl.Series(rng.random(blocks.height)),
        )
        .with_columns(
            cut_rank=pl.col("u_cut").rank("ordinal").over("service_date", *group),
            n_group=pl.len().over("service_date", *group),
        )
        .with_columns(
            is_cut=(
                pl.col("service_date").is_in(cut_dates)
                & is_cut_group
                & (pl.col("cut_rank") <= (pl.col("n_group") * opts.fleet_cut_ratio).ceil())
                & (opts.fleet_cut_ratio > 0)
            ),
        )
    )
    # Vehicles: each day a new permutation of each group's register over its blocks.
    vehicles = fleet.select("vehicle_id", *group)
    vday = pl.DataFrame({"service_date": dates}).join(vehicles, how="cross")
    vday = vday.with_columns(u=pl.Series(rng.random(vday.height))).with_columns(
        vrank=pl.col("u").rank("ordinal").over("service_date", *group)
    )
    run_blocks = blocks.filter(~pl.col("is_cut")).with_columns(
        vrank=pl.col("first_start").rank("ordinal").over("service_date", *group).cast(pl.UInt32)
    )
    n_running = run_blocks.group_by("service_date", *group).agg(n_run=pl.len())
    block_vehicle = run_blocks.join(
        vday.select("service_date", *group, "vrank", "vehicle_id"),
        on=["service_date", *group, "vrank"],
        how="left",
    )
    spares = (
        vday.join(n_running, on=["service_date", *group], how="left")
        .filter(pl.col("vrank") > pl.col("n_run").fill_null(0))
        .with_columns(spare_rank=pl.int_range(0, pl.len()).over("service_date", *group))
        .select("service_date", *group, "spare_rank", spare_vehicle=pl.col("vehicle_id"))
    )

    t = trips.join(
        block_vehicle.select("block_key", "vehicle_id", "is_cut"), on="block_key", how="left"
    )
    t = t.join(
        blocks.select("block_key", "is_cut").rename({"is_cut": "blk_cut"}),
        on="block_key",
        how="left",
    )
    n = t.height
    # One exclusive injection per trip (suppression only on trips that start a round).
    probs = np.array(
        [
            opts.suppressed_rate,
            opts.early_rate,
            opts.late_rate,
            opts.breakdown_rate,
            opts.detour_rate,
        ]
    )
    u = rng.random(n)
    edges = np.cumsum(probs)
    kind = np.searchsorted(edges, u, side="right")  # len(INJECTIONS) = none
    names = np.array([*INJECTIONS, ""])
    t = t.with_columns(inj=pl.Series(names[np.minimum(kind, len(INJECTIONS))]).replace("", None))
    starts_round = (pl.col("direction_id") == 0) | pl.col("is_circular")
    t = t.with_columns(
        inj=pl.when((pl.col("inj") == "suppressed") & ~starts_round)
        .then(None)
        .otherwise(pl.col("inj"))
    ).with_columns(
        inj=pl.when(
            pl.col("inj").is_null()
            & (pl.col("inj").shift(1).over("block_key") == "suppressed")
            & (pl.col("direction_id") == 1)
        )
        .then(pl.lit("suppressed"))
        .otherwise(pl.col("inj"))
    )
    # Breakdowns: the block's later trips go to a spare vehicle, or are not run.
    t = t.with_columns(
        bd_pos=pl.when(pl.col("inj") == "breakdown")
        .then(pl.col("pos_in_block"))
        .min()
        .over("block_key")
    ).with_columns(
        inj=pl.when((pl.col("inj") == "breakdown") & (pl.col("pos_in_block") > pl.col("bd_pos")))
        .then(None)
        .otherwise(pl.col("inj"))
    )
    events = (
        t.filter(pl.col("inj") == "breakdown")
        .group_by("block_key")
        .agg(pl.first("service_date"), *[pl.first(c) for c in group], pl.first("bd_pos"))
        .sort("block_key")  # group_by keeps no order: the draws below follow a fixed one
    )
    events = events.with_columns(
        replaced=pl.Series(rng.random(events.height) < opts.replacement_rate, dtype=pl.Boolean),
        kind=pl.lit("replacement"),
        at_pos=pl.col("bd_pos") + 1,
    )
    swaps = blocks.filter(~pl.col("is_cut")).select("service_date", "block_key", *group)
    swaps = swaps.with_columns(
        u=pl.Series(rng.random(swaps.height)), v=pl.Series(rng.random(swaps.height))
    ).filter(pl.col("u") < opts.swap_rate_per_block)
    n_blk = t.group_by("block_key").agg(n_in_block=pl.first("n_in_block"), bd=pl.first("bd_pos"))
    swaps = swaps.join(n_blk, on="block_key").filter(
        (pl.col("n_in_block") >= 4) & pl.col("bd").is_null()
    )
    swaps = swaps.with_columns(
        at_pos=(1 + (pl.col("v") * (pl.col("n_in_block") - 2)).floor()).cast(pl.Int64),
        replaced=pl.lit(True),
        kind=pl.lit("vehicle_swap"),
        bd_pos=pl.lit(None, pl.Int64),
    ).select(events.columns)
    changes = (
        pl.concat(
            [
                events.with_columns(
                    pl.col("at_pos").cast(pl.Int64), pl.col("bd_pos").cast(pl.Int64)
                ),
                swaps,
            ]
        )
        .sort("service_date", "block_key")
        .with_columns(
            spare_rank=pl.when(pl.col("replaced"))
            .then(pl.int_range(0, pl.len()).over("service_date", *group, "replaced"))
            .cast(pl.UInt32)
        )
        .join(spares, on=["service_date", *group, "spare_rank"], how="left")
        .filter((pl.col("kind") == "replacement") | pl.col("spare_vehicle").is_not_null())
    )
    t = t.join(
        changes.select("block_key", "at_pos", "spare_vehicle", "kind"), on="block_key", how="left"
    )
    later = pl.col("at_pos").is_not_null() & (pl.col("pos_in_block") >= pl.col("at_pos"))
    t = t.with_columns(
        vehicle_id=pl.when(later).then(pl.col("spare_vehicle")).otherwise(pl.col("vehicle_id")),
        inj=pl.when(later & pl.col("spare_vehicle").is_null() & (pl.col("kind") == "replacement"))
        .then(pl.lit("breakdown_not_replaced"))
        .when(
            later
            & (pl.col("pos_in_block") == pl.col("at_pos"))
            & (pl.col("kind") == "vehicle_swap")
        )
        .then(pl.lit("vehicle_swap"))
        .when(pl.col("blk_cut"))
        .then(pl.lit("fleet_cut"))
        .otherwise(pl.col("inj")),
    )
    t = t.with_columns(
        vehicle_id=pl.when(
            pl.col("inj").is_in(["suppressed", "breakdown_not_replaced", "fleet_cut"])
        )
        .then(None)
        .otherwise(pl.col("vehicle_id")),
    )
    # Departure deviation at the origin: a normal core with a late tail, plus injections.
    dev = rng.normal(opts.departure_mean_s, opts.departure_sigma_s, n)
    tail = rng.random(n) < opts.late_tail_rate
    dev = np.where(tail, dev + rng.lognormal(np.log(opts.late_tail_median_s), 0.6, n), dev)
    t = t.with_columns(
        dev_s=pl.Series(dev),
        u_dev=pl.Series(rng.uniform(0.0, 1.0, n)),
        u_seg=pl.Series(rng.uniform(0.0, 1.0, n)),
        u_frac=pl.Series(rng.uniform(0.2, 0.8, n)),
        break_stand_s=pl.Series(np.round(rng.uniform(*opts.breakdown_duration_s, n))),
        has_event_code=pl.Series(rng.random(n) < opts.breakdown_event_code_rate),
        detour_justified=pl.Series(rng.random(n) < opts.detour_justified_rate),
    )
    t, incidents = _obstructions(t, opts, rng)
    t = t.drop("spare_vehicle", "at_pos", "kind", "blk_cut", "bd_pos", "is_cut")
    fleet_days = _fleet_days(t)
    return Operation(t.rename({"inj": "injected"}), fleet_days, incidents)


def _obstructions(
    t: pl.DataFrame, opts: SimulationOptions, rng: np.random.Generator
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Road obstructions with an approved incident: trips of the line starting in the window
    lose `obstruction_delay_s` mid-trip and are justified."""
    days = t.select("service_date", "day_epoch_s").unique().sort("service_date")
    routes = t["route_id"].unique().sort()
    counts = rng.poisson(opts.obstructions_per_day, days.height)
    rows = []
    k = 0
    for (day, epoch), c in zip(days.iter_rows(), counts, strict=True):
        for _ in range(int(c)):
            k += 1
            start = epoch + int(rng.uniform(7 * 3600, 18 * 3600) // 60 * 60)
            rows.append(
                (
                    f"OBS-{k:04d}",
                    float(start),
                    float(start + int(rng.uniform(1800, 5400) // 60 * 60)),
                    routes[int(rng.integers(0, len(routes)))],
                    float(rng.uniform(*opts.obstruction_delay_s)),
                    day,
                )
            )
    obs = pl.DataFrame(
        rows,
        schema=["incident_id", "starts", "ends", "route_id", "delay_s", "service_date"],
        orient="row",
    )
    if obs.height:
        hit = (
            t.select("tkey", "route_id", "planned_start", "vehicle_id", "service_date")
            .join(obs, on=["route_id", "service_date"])
            .filter(
                (pl.col("planned_start") >= pl.col("starts"))
                & (pl.col("planned_start") < pl.col("ends"))
                & pl.col("vehicle_id").is_not_null()
            )
            .unique("tkey", keep="first")
        )
        t = t.join(
            hit.select("tkey", "incident_id", obstruction_delay_s="delay_s"), on="tkey", how="left"
        )
    else:
        t = t.with_columns(
            incident_id=pl.lit(None, pl.String), obstruction_delay_s=pl.lit(None, pl.Float64)
        )
    t = t.with_columns(pl.col("obstruction_delay_s").fill_null(0.0))
    incidents = (
        obs.select(
            "incident_id",
            starts_at=pl.col("starts"),
            ends_at=pl.col("ends"),
            route_id="route_id",
            trip_id=pl.lit(None, pl.String),
            vehicle_id=pl.lit(None, pl.String),
            kind=pl.lit("obstruction"),
            is_justified=pl.lit(True),
            note=pl.lit("obstrução da via (obra/acidente), desvio de tempo aprovado"),
        )
        if obs.height
        else pl.DataFrame()
    )
    return t, incidents


def _fleet_days(t: pl.DataFrame) -> pl.DataFrame:
    """Vehicles required (blocks of the day) and operated (distinct vehicles that ran a trip)."""
    return (
        t.group_by("service_date", "operator_id", "route_id")
        .agg(
            n_vehicles_required=pl.col("block_key").n_unique(),
            n_vehicles_operated=pl.col("vehicle_id").drop_nulls().n_unique(),
        )
        .rename({"service_date": "date", "route_id": "line"})
        .sort("date", "operator_id", "line")
    )
