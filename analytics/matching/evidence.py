"""Evidence besides GPS: what shows a trip without a matched GPS run ran (see
`analytics.matching.coverage` for whether there was data to judge it):

- ticketing (BG art. 57 §2): at least `evidence.ticketing_min_taps` taps on one vehicle, on the
  trip's line (or a validator without a line), within the trip's planned window ±
  `evidence.ticketing_margin_s`, outside every GPS run of that vehicle (taps inside a run are
  that run's). The vehicle is the block's (the one that ran its other trips) when known; for a
  block without any run, the vehicle with most such taps, one trip at a time per vehicle;
- an in-loco inspection (BG art. 57 §2, art. 77): the trip's vehicle, or its line, seen at a
  stop of the trip (or anywhere when the record names no stop) within the planned window ±
  `evidence.inspection_margin_s`.

Reads the trips without a GPS run (with their planned window and block vehicle), the day's
taps or inspections, the GPS runs and the profile's [evidence]; returns the trips shown run by
ticketing and by inspection. Per day, vectorised.
"""

from __future__ import annotations

import polars as pl

from core.profile import Profile


def compute_ticketing_evidence(
    missing: pl.DataFrame,
    taps: pl.DataFrame,
    runs: pl.DataFrame,
    profile: Profile,
    activity: pl.DataFrame | None = None,
) -> pl.DataFrame:
    """Trips shown run by ticketing: trip_id, vehicle_id, n_taps, first_tap_s.

    `missing`: trips without a GPS run: trip_id, route_id, _p0, _p1 (planned window, epoch s),
    block_vehicle_id (null when the block has no run), is_watched (`compute_watched`). Rule in the module docstring; taps up
    to `ticketing_margin_s` before a GPS run of their vehicle are that run's too (boarding at
    the terminal before it leaves), and a vehicle seen by GPS running another trip over the whole
    of the trip's planned window cannot have run it.
    """
    ev = profile.evidence
    margin = float(ev.ticketing_margin_s.value)
    need = int(ev.ticketing_min_taps.value)
    schema = {
        "trip_id": pl.String(),
        "vehicle_id": pl.String(),
        "n_taps": pl.Int64(),
        "first_tap_s": pl.Float64(),
    }
    if taps.height == 0 or missing.height == 0:
        return pl.DataFrame(schema=schema)
    t = taps.filter(pl.col("vehicle_id").is_not_null()).select(
        "vehicle_id",
        pl.col("route_id").alias("_tap_route"),
        (pl.col("event_at").dt.epoch("ms") / 1000.0).alias("_tap_s"),
    )
    # taps inside a GPS run of their vehicle (or boarding just before it) are that run's
    spans = runs.select(
        "vehicle_id", (pl.col("started_s") - margin).alias("_from_s"), "ended_s"
    ).sort("_from_s")
    t = (
        t.sort("_tap_s")
        .join_asof(
            spans,
            left_on="_tap_s",
            right_on="_from_s",
            by="vehicle_id",
            # both sides sorted by time; Polars cannot check that with `by`
            check_sortedness=False,
        )
        .filter(pl.col("ended_s").is_null() | (pl.col("_tap_s") > pl.col("ended_s")))
        .select("vehicle_id", "_tap_route", "_tap_s")
    )
    inside = (pl.col("_tap_s") >= pl.col("_p0") - margin) & (
        pl.col("_tap_s") <= pl.col("_p1") + margin
    )
    agg = [pl.len().alias("n_taps"), pl.col("_tap_s").min().alias("first_tap_s")]
    known = (
        missing.filter(pl.col("block_vehicle_id").is_not_null())
        .join(t, left_on="block_vehicle_id", right_on="vehicle_id")
        .filter(
            inside & (pl.col("_tap_route").is_null() | (pl.col("_tap_route") == pl.col("route_id")))
        )
        .group_by("trip_id", pl.col("block_vehicle_id").alias("vehicle_id"), "_p0", "_p1")
        .agg(*agg)
        .filter(pl.col("n_taps") >= need)
    )
    # otherwise, when the trip's vehicle is not watched by GPS (`compute_watched`: no block
    # vehicle, or one that ran the block only in part): the taps of any vehicle on the line,
    # in hour buckets so the join stays small on a dark day
    orphans = (
        missing.filter(~pl.col("is_watched").fill_null(False))
        .join(known.select("trip_id"), on="trip_id", how="anti")
        .with_columns(
            pl.int_ranges(
                ((pl.col("_p0") - margin) // 3600).cast(pl.Int64),
                ((pl.col("_p1") + margin) // 3600).cast(pl.Int64) + 1,
            ).alias("_h")
        )
        .explode("_h")
    )
    loose = (
        orphans.join(
            t.with_columns((pl.col("_tap_s") // 3600).cast(pl.Int64).alias("_h")),
            left_on=["route_id", "_h"],
            right_on=["_tap_route", "_h"],
        )
        .filter(inside)
        .group_by("trip_id", "vehicle_id", "_p0", "_p1")
        .agg(*agg)
        .filter(pl.col("n_taps") >= need)
    )
    # a vehicle GPS saw running another trip over this one's window did not run it
    busy = (
        pl.concat([known, loose])
        .join(
            runs.filter(pl.col("trip_id").is_not_null()).select(
                "vehicle_id", "started_s", "ended_s"
            ),
            on="vehicle_id",
        )
        # over all of it: a late vehicle still finishing its previous trip is not busy
        .filter((pl.col("started_s") <= pl.col("_p0")) & (pl.col("ended_s") >= pl.col("_p1")))
        .select("trip_id", "vehicle_id")
        .unique()
    )
    known = known.join(busy, on=["trip_id", "vehicle_id"], how="anti")
    if activity is not None and activity.height:
        seen_idle = _seen_idle(pl.concat([known, loose]), activity, runs)
        known = known.join(seen_idle, on=["trip_id", "vehicle_id"], how="anti")
        loose = loose.join(seen_idle, on=["trip_id", "vehicle_id"], how="anti")
    loose = (
        loose.join(busy, on=["trip_id", "vehicle_id"], how="anti")
        .join(known.select("trip_id"), on="trip_id", how="anti")
        # one vehicle per trip (most taps), then one trip at a time per vehicle
        .sort(["trip_id", "n_taps", "vehicle_id"], descending=[False, True, False])
        .unique("trip_id", keep="first")
        .sort("vehicle_id", "_p0")
        .filter((pl.col("_p0") >= pl.col("_p1").shift(1).over("vehicle_id")).fill_null(True))
    )
    return pl.concat([known.select(*schema), loose.select(*schema)]).cast(
        schema  # type: ignore[arg-type]
    )


def _seen_idle(pairs: pl.DataFrame, activity: pl.DataFrame, runs: pl.DataFrame) -> pl.DataFrame:
    """(trip_id, vehicle_id) of `pairs` (with _p0, _p1) whose vehicle sent fixes outside its
    runs in at least half the minutes of the trip's planned window."""
    spans = runs.select("vehicle_id", "started_s", "ended_s").sort("started_s")
    idle = (
        activity.select("vehicle_id", "minute", (pl.col("minute") * 60 + 30.0).alias("_t"))
        .sort("_t")
        .join_asof(
            spans,
            left_on="_t",
            right_on="started_s",
            by="vehicle_id",
            check_sortedness=False,
        )
        .filter(pl.col("ended_s").is_null() | (pl.col("_t") > pl.col("ended_s")))
        .select("vehicle_id", "minute")
    )
    return (
        pairs.select(
            "trip_id",
            "vehicle_id",
            pl.int_ranges(
                (pl.col("_p0") // 60).cast(pl.Int64), (pl.col("_p1") // 60).cast(pl.Int64) + 1
            ).alias("minute"),
        )
        .with_columns(pl.col("minute").list.len().alias("_n"))
        .explode("minute")
        .join(idle, on=["vehicle_id", "minute"])
        .group_by("trip_id", "vehicle_id")
        .agg(pl.len().alias("_idle"), pl.col("_n").first())
        .filter(pl.col("_idle") >= 0.5 * pl.col("_n"))
        .select("trip_id", "vehicle_id")
    )


def compute_inspection_evidence(
    missing: pl.DataFrame,
    inspections: pl.DataFrame,
    trip_stops: pl.DataFrame,
    profile: Profile,
) -> pl.DataFrame:
    """Trips shown run by an in-loco inspection: trip_id, vehicle_id (the one seen, may be
    null), inspection_id, inspector, observed_s. `trip_stops`: trip_id, stop_id."""
    margin = float(profile.evidence.inspection_margin_s.value)
    schema = {
        "trip_id": pl.String(),
        "vehicle_id": pl.String(),
        "inspection_id": pl.String(),
        "inspector": pl.String(),
        "observed_s": pl.Float64(),
    }
    seen = inspections.filter(pl.col("is_vehicle_seen"))
    if seen.height == 0 or missing.height == 0:
        return pl.DataFrame(schema=schema)
    ins = seen.select(
        "inspection_id",
        "inspector",
        pl.col("vehicle_id").alias("_seen_vehicle"),
        pl.col("route_id").alias("_seen_route"),
        pl.col("stop_id").alias("_seen_stop"),
        (pl.col("observed_at").dt.epoch("ms") / 1000.0).alias("observed_s"),
    )
    pairs = missing.join(ins, how="cross").filter(
        (pl.col("observed_s") >= pl.col("_p0") - margin)
        & (pl.col("observed_s") <= pl.col("_p1") + margin)
        & (
            (pl.col("_seen_vehicle") == pl.col("block_vehicle_id")).fill_null(False)
            | (pl.col("_seen_route") == pl.col("route_id")).fill_null(False)
        )
    )
    at_stop = pairs.filter(pl.col("_seen_stop").is_not_null()).join(
        trip_stops.select("trip_id", pl.col("stop_id").alias("_seen_stop")).unique(),
        on=["trip_id", "_seen_stop"],
        how="semi",
    )
    anywhere = pairs.filter(pl.col("_seen_stop").is_null())
    return (
        pl.concat([at_stop, anywhere])
        .sort("trip_id", "observed_s")
        .unique("trip_id", keep="first")
        .select(
            "trip_id",
            pl.coalesce("_seen_vehicle", "block_vehicle_id").alias("vehicle_id"),
            "inspection_id",
            "inspector",
            "observed_s",
        )
    )
