"""Online trip assignment: the batch matcher's rules applied to each vehicle's recent trace.

Per batch, the pings of the vehicles that reported are cut into runs by `match_vehicles`
(cleaning, projection on the shapes, run cutting: exactly the batch code) over the last
`window_s` of their trace; each vehicle's *current run* is its latest run if it is still going.
The current runs of every active vehicle are then assigned to the day's trips by
`match_runs_to_trips` (departure deviation, early penalty, block continuity, exclusive
assignment across vehicles), leaving out trips already completed today. No driver sign-in is
needed; a device-reported trip id only earns the batch matcher's bonus.
"""

from __future__ import annotations

import polars as pl

from analytics.matching.assign import match_runs_to_trips
from analytics.matching.batches import match_vehicles
from analytics.matching.network import Network
from analytics.matching.options import MatchOptions


def compute_current_runs(
    pings: pl.DataFrame, network: Network, options: MatchOptions, run_stale_s: float
) -> pl.DataFrame:
    """The run each vehicle is on now (one row per vehicle; vehicles between runs are absent).

    `pings`: the recent window of the vehicles to refresh (ping_id, vehicle_id, event_at, x_m,
    y_m, reported_trip_id). Output: the columns of `build_runs` for the latest run of each
    vehicle whose last ping on it is within `run_stale_s` of the vehicle's last ping.
    """
    runs, _, _ = match_vehicles(pings, network, options)
    if runs.height == 0:
        return runs
    last = pings.group_by("vehicle_id").agg(
        (pl.col("event_at").max().dt.epoch("us") / 1e6).alias("_last_s")
    )
    return (
        runs.sort("ended_s")
        .group_by("vehicle_id")
        .last()
        .join(last, on="vehicle_id")
        .filter(pl.col("ended_s") >= pl.col("_last_s") - run_stale_s)
        .drop("_last_s")
    )


def match_current_runs(
    runs: pl.DataFrame, trips: pl.DataFrame, completed: pl.DataFrame, options: MatchOptions
) -> pl.DataFrame:
    """Assign current runs to trips with the batch rules; `completed` (trip_id) are excluded.

    Output: `runs` with trip_id (null: no trip), departure_delay_s and match_method.
    """
    open_trips = trips.join(completed.select("trip_id"), on="trip_id", how="anti")
    return match_runs_to_trips(runs, open_trips, options)
