"""AVL pings from the true movement, with the faults real feeds have.

True position at each ping comes from the legs (uniform motion along a path, standing still
between legs). Then, as declared in the options: GPS noise (σ metres, isotropic), outages (no
pings for minutes), random loss, jumps (a fix hundreds of metres off), duplicates, out-of-order
delivery (a late message) and a few units whose clock is skewed (their event_at is off by a
constant). Frames are built for a chunk of vehicles at a time.
"""

from __future__ import annotations

import numpy as np
import polars as pl

from sample_data.network import Paths, to_wgs84
from sample_data.options import SimulationOptions


def _key_span(time_range_s: float) -> float:
    """Width of a piece's slot in a (piece, time) sort key: 4e5 s, or more when the times of
    the run span more (so pieces of later days do not overlap the next piece's slot)."""
    return max(4.0e5, time_range_s + 1.0)


def build_true_pings(
    pieces: pl.DataFrame, legs: pl.DataFrame, paths: Paths, interval_s: int, seed: int
) -> pl.DataFrame:
    """True pings of the given pieces: piece, t (Unix s, true), x_m, y_m, speed_m_s, heading_deg,
    moving. Ping phase is random per piece; one ping every `interval_s` within the power window."""
    rng = np.random.default_rng([seed, 7002, int(pieces["piece"].to_numpy().min(initial=0))])
    on = pieces["on_s"].to_numpy()
    off = pieces["off_s"].to_numpy()
    pid = pieces["piece"].to_numpy()
    phase = np.floor(rng.uniform(0, interval_s, len(on)))
    start = np.floor(on / interval_s) * interval_s + phase
    counts = np.maximum(0, np.floor((off - start) / interval_s).astype(np.int64) + 1)
    total = int(counts.sum())
    which = np.repeat(np.arange(len(on)), counts)
    first_idx = np.cumsum(counts) - counts
    k = np.arange(total) - np.repeat(first_idx, counts)
    t = start[which] + k * interval_s
    piece = pid[which]
    lg = legs.filter(pl.col("piece").is_in(pid)).sort("piece", "t0")
    lp = lg["piece"].to_numpy()
    t0, t1 = lg["t0"].to_numpy(), lg["t1"].to_numpy()
    path, d0, d1 = lg["path"].to_numpy(), lg["d0"].to_numpy(), lg["d1"].to_numpy()
    # one sorted key for (piece, time): the time part must stay below `span` for every piece,
    # so it grows with the run's time range (a week, a sampled year), 4e5 s at least
    base = float(np.min(on)) - 1.0
    span = _key_span(float(np.max(t, initial=base)) - base)
    leg_key = lp * span + (t0 - base)
    ping_key = piece * span + (t - base)
    i = np.searchsorted(leg_key, ping_key, side="right") - 1
    piece_first = np.searchsorted(lp, piece, side="left")
    before = i < piece_first
    i = np.maximum(i, piece_first)
    dt = np.maximum(t1[i] - t0[i], 1e-6)
    f = np.clip((t - t0[i]) / dt, 0.0, 1.0)
    f = np.where(before, 0.0, f)
    d = d0[i] + (d1[i] - d0[i]) * f
    moving = (~before) & (t >= t0[i]) & (t < t1[i])
    x, y, heading = paths.locate(path[i], d)
    speed = np.where(moving, (d1[i] - d0[i]) / dt, 0.0)
    return pl.DataFrame(
        {
            "piece": piece,
            "t": t,
            "x_m": x,
            "y_m": y,
            "speed_m_s": speed,
            "heading_deg": heading,
            "moving": moving,
        }
    )


def to_reported_pings(
    true: pl.DataFrame,
    pieces: pl.DataFrame,
    skew: pl.DataFrame,
    opts: SimulationOptions,
    chunk_no: int,
) -> pl.DataFrame:
    """What the units send: noise, outages, loss, jumps, skew, duplicates and delivery order.

    Returns vehicle_id, operator_id, event_at (UTC, as the unit stamps it), lat, lon, speed_m_s,
    heading_deg, event_code (null), piece, t_true, delivered_s — in delivery order.
    """
    rng = np.random.default_rng([opts.seed, 7003, chunk_no])
    n = true.height
    keep = rng.random(n) >= opts.loss_rate
    # outages: Poisson per piece, each a window with no pings
    pcs = pieces.select("piece", "on_s", "off_s")
    n_out = rng.poisson(opts.outages_per_vehicle_day, pcs.height)
    out_piece = np.repeat(pcs["piece"].to_numpy(), n_out)
    on_r = np.repeat(pcs["on_s"].to_numpy(), n_out)
    off_r = np.repeat(pcs["off_s"].to_numpy(), n_out)
    o_start = on_r + rng.random(len(on_r)) * np.maximum(off_r - on_r, 0)
    o_end = o_start + rng.uniform(*opts.outage_duration_s, len(on_r))
    piece = true["piece"].to_numpy()
    t = true["t"].to_numpy()
    if len(out_piece):
        order = np.lexsort((o_start, out_piece))
        out_piece, o_start, o_end = out_piece[order], o_start[order], o_end[order]
        span = _key_span(float(max(t.max(), o_start.max())) - float(t.min()))
        key_o = out_piece * span + (o_start - t.min())
        key_p = piece * span + (t - t.min())
        j = np.searchsorted(key_o, key_p, side="right") - 1
        jj = np.maximum(j, 0)
        inside = (j >= 0) & (out_piece[jj] == piece) & (t < o_end[jj])
        keep &= ~inside
    x = true["x_m"].to_numpy() + rng.normal(0.0, opts.gps_sigma_m, n)
    y = true["y_m"].to_numpy() + rng.normal(0.0, opts.gps_sigma_m, n)
    jump = rng.random(n) < opts.jump_rate
    ang = rng.uniform(0, 2 * np.pi, n)
    dist = rng.uniform(*opts.jump_distance_m, n)
    x = np.where(jump, x + np.cos(ang) * dist, x)
    y = np.where(jump, y + np.sin(ang) * dist, y)
    lat, lon = to_wgs84(x, y)
    speed = np.maximum(0.0, true["speed_m_s"].to_numpy() * rng.normal(1.0, 0.05, n))
    latency = rng.uniform(1.0, 5.0, n) + np.where(
        rng.random(n) < opts.out_of_order_rate, rng.uniform(*opts.out_of_order_delay_s, n), 0.0
    )
    df = pl.DataFrame(
        {
            "piece": piece,
            "t_true": t,
            "lat": np.round(lat, 6),
            "lon": np.round(lon, 6),
            "speed_m_s": np.round(speed, 1),
            "heading_deg": np.round(true["heading_deg"].to_numpy(), 0),
            "delivered_s": t + latency,
            "is_jump": jump,
        }
    ).filter(pl.Series(keep))
    df = (
        df.join(pieces.select("piece", "vehicle_id", "operator_id"), on="piece")
        .join(skew, on="vehicle_id", how="left")
        .with_columns(pl.col("clock_skew_s").fill_null(0.0))
    )
    dup = df.filter(pl.Series(rng.random(df.height) < opts.duplicate_rate)).with_columns(
        pl.col("delivered_s") + 30.0
    )
    df = pl.concat([df, dup])
    return df.with_columns(
        event_at=pl.from_epoch(
            ((pl.col("t_true") + pl.col("clock_skew_s")) * 1_000_000).cast(pl.Int64), time_unit="us"
        ).dt.replace_time_zone("UTC"),
        event_code=pl.lit(None, pl.String),
    ).sort("delivered_s", "vehicle_id", "t_true")


def build_dark_windows(pieces: pl.DataFrame, opts: SimulationOptions) -> pl.DataFrame:
    """The data-coverage faults of the run (options `dark_vehicle_day_rate`,
    `feed_outages_per_day`): kind ('vehicle_dark' or 'feed_outage'), service_date,
    operator_id, vehicle_id (null for a feed outage), start_s, end_s (Unix s; a dark vehicle's
    whole power window). Drawn from their own stream over every piece at once, so they do not
    depend on the vehicle chunks."""
    rng = np.random.default_rng([opts.seed, 7010])
    days = (
        pieces.group_by("vehicle_id", "service_date")
        .agg(pl.col("operator_id").first(), pl.col("on_s").min(), pl.col("off_s").max())
        .sort("service_date", "vehicle_id")
    )
    dark = days.filter(pl.Series(rng.random(days.height) < opts.dark_vehicle_day_rate)).select(
        pl.lit("vehicle_dark").alias("kind"),
        "service_date",
        "operator_id",
        "vehicle_id",
        # the first fix may fall up to one interval before the power window's start
        (pl.col("on_s") - opts.ping_interval_s).alias("start_s"),
        (pl.col("off_s") + opts.ping_interval_s).alias("end_s"),
    )
    spans = (
        days.group_by("service_date", "operator_id")
        .agg(pl.col("on_s").min(), pl.col("off_s").max())
        .sort("service_date", "operator_id")
    )
    outages = []
    for day in spans["service_date"].unique().sort().to_list():
        ops = spans.filter(pl.col("service_date") == day)
        for _ in range(opts.feed_outages_per_day):
            row = ops.row(int(rng.integers(ops.height)), named=True)
            length = float(rng.uniform(*opts.feed_outage_duration_s))
            # inside the operator's service, an hour clear of its first and last unit
            lo, hi = row["on_s"] + 3600.0, max(row["on_s"] + 3600.0, row["off_s"] - 3600.0 - length)
            start = lo + float(rng.random()) * (hi - lo)
            outages.append((day, row["operator_id"], round(start), round(start + length)))
    feed = pl.DataFrame(
        outages,
        schema={
            "service_date": pl.Date,
            "operator_id": pl.String,
            "start_s": pl.Float64,
            "end_s": pl.Float64,
        },
        orient="row",
    ).select(
        pl.lit("feed_outage").alias("kind"),
        "service_date",
        "operator_id",
        pl.lit(None, pl.String).alias("vehicle_id"),
        "start_s",
        "end_s",
    )
    return pl.concat(
        [dark.with_columns(pl.col("vehicle_id").cast(pl.String)), feed], how="vertical_relaxed"
    )


def drop_dark(rep: pl.DataFrame, dark: pl.DataFrame) -> pl.DataFrame:
    """`rep` (reported pings with vehicle_id, operator_id, t_true) less the fixes a dark
    vehicle or a feed outage of `dark` (`build_dark_windows`) swallowed."""
    if dark.height == 0:
        return rep
    v = dark.filter(pl.col("kind") == "vehicle_dark")
    f = dark.filter(pl.col("kind") == "feed_outage")
    key = rep.select(
        pl.col("vehicle_id").cast(pl.String).alias("_v"), "operator_id", "t_true"
    ).with_row_index("_i")
    hit_v = key.join(v, left_on="_v", right_on="vehicle_id").filter(
        pl.col("t_true").is_between("start_s", "end_s")
    )
    hit_f = key.join(f, on="operator_id").filter(pl.col("t_true").is_between("start_s", "end_s"))
    gone = pl.concat([hit_v.select("_i"), hit_f.select("_i")])["_i"]
    return rep.with_row_index("_i").filter(~pl.col("_i").is_in(gone.implode())).drop("_i")


def build_mid_route_silences(trips: pl.DataFrame, opts: SimulationOptions) -> pl.DataFrame:
    """Silences drawn on the trips run end to end (option `mid_route_silence_rate`): piece,
    start_s, end_s (Unix s), inside the trip's run at least 60 s clear of its departure and
    arrival. `trips`: piece, trip_id, actual_start, arrival (null: not run to the end)."""
    rng = np.random.default_rng([opts.seed, 7020])
    run = trips.filter(pl.col("arrival").is_not_null() & pl.col("piece").is_not_null()).sort(
        "trip_id"
    )
    length = rng.uniform(*opts.mid_route_silence_s, run.height)
    room = (run["arrival"] - run["actual_start"]).to_numpy() - 120.0 - length
    pick = (rng.random(run.height) < opts.mid_route_silence_rate) & (room > 0)
    start = run["actual_start"].to_numpy() + 60.0 + rng.random(run.height) * np.maximum(room, 0)
    return pl.DataFrame({"piece": run["piece"], "start_s": start, "end_s": start + length}).filter(
        pl.Series(pick)
    )


def drop_silences(rep: pl.DataFrame, silences: pl.DataFrame) -> pl.DataFrame:
    """`rep` (reported pings with piece, t_true) less the fixes inside `silences`
    (`build_mid_route_silences`)."""
    if silences.height == 0:
        return rep
    hit = (
        rep.select("piece", "t_true")
        .with_row_index("_i")
        .join(silences, on="piece")
        .filter(pl.col("t_true").is_between("start_s", "end_s"))["_i"]
    )
    return rep.with_row_index("_i").filter(~pl.col("_i").is_in(hit.implode())).drop("_i")


def find_trip_silences(rep: pl.DataFrame, trips: pl.DataFrame, min_s: float) -> pl.DataFrame:
    """The silences of at least `min_s` between consecutive fixes the units sent (`rep`:
    piece, t_true) that lie inside a trip's run (`trips`: piece, trip_id, actual_start,
    arrival, service_date): service_date, trip_id, start_s (last fix before), end_s (first
    fix after), silence_s."""
    fixes = rep.select("piece", "t_true").unique().sort("piece", "t_true")
    gaps = fixes.with_columns(
        pl.col("t_true").shift(1).over("piece").alias("start_s"),
    ).filter((pl.col("t_true") - pl.col("start_s")) >= min_s)
    return (
        gaps.join(trips.drop_nulls("arrival"), on="piece")
        .filter(
            (pl.col("start_s") >= pl.col("actual_start")) & (pl.col("t_true") <= pl.col("arrival"))
        )
        .select(
            "service_date",
            "trip_id",
            "start_s",
            pl.col("t_true").alias("end_s"),
            (pl.col("t_true") - pl.col("start_s")).alias("silence_s"),
        )
    )
