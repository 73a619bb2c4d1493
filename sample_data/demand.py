"""Demand: card holders whose day is a tour, their rides, the loads and the fare taps.

One card is one person, with a home stop and a destination (work, school) that stay the same
on every day the person rides. A day's tour goes out in the morning peak (or at midday) and
comes back later the same day in the opposite direction, from near where the outbound ended to
near home, so destinations can be inferred from the next tap (trip chaining, Barry et al.
2002; Trépanier et al. 2007). Some tours change line at a stop within a short walk of the
first leg's alighting stop (integration fare, BG art. 7-V); on a circular line the return
rides round to the terminal and takes the next run on to the home stop. Noise that real
chaining meets: person-days that ride one way only, returns that alight a stop away from home,
transfers with a walk of up to `transfer_walk_max_m`. Riders wait for the first bus that
actually runs (suppressed trips carry nobody) and board at its planned time; riders whose stop
is skipped by a detour or lies beyond a breakdown do not ride that bus.
"""

from __future__ import annotations

from collections.abc import Collection

import numpy as np
import polars as pl
from scipy.spatial import cKDTree

from sample_data.options import SimulationOptions

# integer key of (service day, shape, stop): the as-of join's single `by` column
BENEFIT_CLASSES = ("student", "elderly", "disabled")
"""Card types with a discount or an exemption (BG art. 50-51): none on selective service."""
_DAY_K = 10_000_000_000
_SHAPE_K = 10_000


def build_pattern_stops(
    trips: pl.DataFrame, plan: pl.DataFrame, stops: pl.DataFrame
) -> pl.DataFrame:
    """Stops of each line-direction's main pattern (the shape with most operated trips).

    Returns shape_no (0-based), shape_id, route_id, direction_id, is_circular, n_trips,
    stop_sequence, stop_id, x_m, y_m (metres), n_stops.
    """
    ops = trips.filter(pl.col("vehicle_id").is_not_null())
    main = (
        ops.group_by("route_id", "direction_id", "shape_id", "is_circular")
        .agg(n_trips=pl.len())
        .sort(
            "route_id",
            "direction_id",
            "n_trips",
            "shape_id",
            descending=[False, False, True, False],
        )
        .unique(["route_id", "direction_id"], keep="first", maintain_order=True)
        .sort("shape_id")
        .with_row_index("shape_no")
        .with_columns(
            pl.col("shape_no").cast(pl.Int64), pl.col("direction_id").fill_null(0).cast(pl.Int32)
        )
    )
    pattern = plan.select("shape_id", "stop_sequence", "stop_id").unique(
        ["shape_id", "stop_sequence"]
    )
    return (
        main.join(pattern, on="shape_id")
        .join(stops.select("stop_id", "x_m", "y_m"), on="stop_id")
        .with_columns(n_stops=pl.col("stop_sequence").max().over("shape_no"))
        .sort("shape_no", "stop_sequence")
    )


def build_reverse_stops(ps: pl.DataFrame) -> pl.DataFrame:
    """For each stop of a non-circular main pattern, the nearest stop of the same line's
    opposite direction: shape_no, stop_sequence -> rev_shape_no, rev_seq."""
    side = ps.filter(~pl.col("is_circular")).select(
        "route_id", "direction_id", "shape_no", "stop_sequence", "x_m", "y_m"
    )
    other = side.select(
        "route_id",
        direction_id=1 - pl.col("direction_id"),
        rev_shape_no="shape_no",
        rev_seq="stop_sequence",
        rx="x_m",
        ry="y_m",
    )
    return (
        side.join(other, on=["route_id", "direction_id"])
        .with_columns(d2=(pl.col("x_m") - pl.col("rx")) ** 2 + (pl.col("y_m") - pl.col("ry")) ** 2)
        .sort("shape_no", "stop_sequence", "d2", "rev_seq")
        .unique(["shape_no", "stop_sequence"], keep="first", maintain_order=True)
        .select("shape_no", "stop_sequence", "rev_shape_no", "rev_seq")
    )


def build_transfer_options(ps: pl.DataFrame, walk_max_m: float) -> pl.DataFrame:
    """Where a tour can change line: a stop `seq1` (≥ 2) of main pattern `s1` and a stop
    `seq2` of another line's main pattern `s2` (with a stop after it) within `walk_max_m`.

    Returns s1, seq1, s2, seq2, walk_m, sorted by s1 (same stop: walk_m = 0).
    """
    open_ = ps.filter(~pl.col("is_circular"))
    xy = open_.select("stop_id", "x_m", "y_m").unique("stop_id").sort("stop_id")
    tree = cKDTree(np.column_stack([xy["x_m"].to_numpy(), xy["y_m"].to_numpy()]))
    pairs = tree.query_pairs(walk_max_m, output_type="ndarray")
    ids = xy["stop_id"].to_numpy()
    i = np.concatenate([np.arange(len(ids)), pairs[:, 0], pairs[:, 1]])
    j = np.concatenate([np.arange(len(ids)), pairs[:, 1], pairs[:, 0]])
    near = pl.DataFrame({"stop_a": ids[i], "stop_b": ids[j]})
    a = open_.filter(pl.col("stop_sequence") >= 2).select(
        "route_id", s1="shape_no", seq1="stop_sequence", stop_a="stop_id", ax="x_m", ay="y_m"
    )
    b = open_.filter(pl.col("stop_sequence") < pl.col("n_stops")).select(
        route_b="route_id",
        s2="shape_no",
        seq2="stop_sequence",
        stop_b="stop_id",
        bx="x_m",
        by="y_m",
    )
    return (
        a.join(near, on="stop_a")
        .join(b, on="stop_b")
        .filter(pl.col("route_id") != pl.col("route_b"))
        .select(
            "s1",
            "seq1",
            "s2",
            "seq2",
            walk_m=((pl.col("ax") - pl.col("bx")) ** 2 + (pl.col("ay") - pl.col("by")) ** 2).sqrt(),
        )
        .sort("s1", "seq1", "s2", "seq2")
    )


def _after(rng: np.random.Generator, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """A uniform integer in [lo, hi] (element-wise, hi >= lo)."""
    return lo + np.floor(rng.random(len(lo)) * (hi - lo + 1)).astype(np.int64)


def build_persons(
    ps: pl.DataFrame,
    weights: dict[str, float],
    n_persons: int,
    opts: SimulationOptions,
    rng: np.random.Generator,
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """The population: each person's card, fare class, time habit and tour.

    Returns (persons: person, card_id, fare_class, is_peak; tour legs: person, chain (0 out,
    1 back), pos (0, 1: order in the chain), shape_no, board_seq, alight_seq, walk_s (walk
    from the chain's previous alighting, s)).
    """
    shapes = ps.group_by("shape_no").agg(
        pl.col("route_id", "direction_id", "is_circular", "n_trips", "n_stops").first()
    )
    routes = (
        shapes.group_by("route_id")
        .agg(
            pl.col("is_circular").first(),
            n_trips=pl.col("n_trips").filter(pl.col("direction_id") == 0).sum(),
            s0=pl.col("shape_no").filter(pl.col("direction_id") == 0).first(),
            s1=pl.col("shape_no").filter(pl.col("direction_id") == 1).first(),
        )
        .filter(pl.col("s0").is_not_null())
        .sort("route_id")
        .with_columns(
            w=pl.col("n_trips")
            * pl.col("route_id").replace_strict(weights, default=1.0, return_dtype=pl.Float64)
        )
    )
    m = n_persons
    w = routes["w"].to_numpy().astype(float)
    r = rng.choice(routes.height, m, p=w / w.sum())
    circular = routes["is_circular"].to_numpy()[r]
    s_back = routes["s1"].to_numpy()[r]
    two_way = ~circular & ~routes["s1"].is_null().to_numpy()[r]
    use_back = two_way & (rng.random(m) < 0.5)
    s1 = np.where(use_back, s_back, routes["s0"].to_numpy()[r]).astype(np.int64)
    n_of = dict(shapes.select("shape_no", "n_stops").iter_rows())
    n_stops = (
        np.array([n_of[k] for k in range(max(n_of) + 1)], dtype=np.int64)
        if n_of
        else np.zeros(0, np.int64)
    )
    n1 = n_stops[s1]
    b = _after(rng, np.ones(m, np.int64), n1 - 1)
    a = _after(rng, b + 1, n1)
    # transfers: the outbound leg ends at a stop from which another line is a short walk away
    topt = build_transfer_options(ps, opts.transfer_walk_max_m)
    o_s1 = topt["s1"].to_numpy()
    first = np.searchsorted(o_s1, s1, side="left")
    count = np.searchsorted(o_s1, s1, side="right") - first
    is_tr = two_way & (count > 0) & (rng.random(m) < opts.second_leg_rate)
    k = first + np.floor(rng.random(m) * np.maximum(count, 1)).astype(np.int64)
    k = np.where(is_tr, k, 0)
    if len(o_s1) == 0:
        is_tr[:] = False
    pick = topt[k] if len(o_s1) else None
    s2 = np.full(m, -1, np.int64)
    b2 = np.zeros(m, np.int64)
    a2 = np.zeros(m, np.int64)
    walk_m = np.zeros(m)
    if pick is not None:
        a = np.where(is_tr, pick["seq1"].to_numpy(), a)
        b = np.where(is_tr, _after(rng, np.ones(m, np.int64), np.maximum(a - 1, 1)), b)
        s2 = np.where(is_tr, pick["s2"].to_numpy(), -1)
        b2 = np.where(is_tr, pick["seq2"].to_numpy(), 0)
        a2 = np.where(is_tr, _after(rng, b2 + 1, np.maximum(n_stops[np.maximum(s2, 0)], b2 + 1)), 0)
        walk_m = np.where(is_tr, pick["walk_m"].to_numpy(), 0.0)
    walk_s = walk_m / opts.walk_speed_m_s
    classes, shares = zip(*opts.fare_class_shares, strict=True)
    share = np.array(shares) / np.sum(shares)
    persons = pl.DataFrame(
        {
            "person": np.arange(m, dtype=np.int64),
            "card_id": pl.Series(np.arange(m, dtype=np.int64) + 10**9).cast(pl.String),
            "fare_class": np.array(classes)[rng.choice(len(classes), m, p=share)],
            # commuters ride at the peaks (and make them crowded); the others during the day
            "is_peak": rng.random(m) < 0.65,
        }
    ).with_columns(card_id=pl.format("6{}", "card_id"))
    pid = np.arange(m, dtype=np.int64)
    rev = build_reverse_stops(ps)
    # returns: the opposite direction from the stop nearest where the outbound ended to the
    # stop nearest where it began (some alight a stop early or late and walk)
    home_walk = rng.random(m) < opts.home_walk_rate
    home_shift = np.where(rng.random(m) < 0.5, -1, 1) * home_walk
    legs = [
        _legs(pid, 0, 0, s1, b, a, 0.0),
        _legs(pid[is_tr], 0, 1, s2[is_tr], b2[is_tr], a2[is_tr], walk_s[is_tr]),
    ]
    # circular lines: round to the terminal, then the next run from the terminal home
    # (already there when the destination is the terminal)
    c = circular & (a < n1)
    legs.append(_legs(pid[c], 1, 0, s1[c], a[c], n1[c], 0.0))
    ch = circular & (b > 1)
    pos = np.where(a[ch] < n1[ch], 1, 0)
    legs.append(_legs(pid[ch], 1, 0, s1[ch], np.ones(int(ch.sum()), np.int64), b[ch], 0.0))
    legs[-1] = legs[-1].with_columns(pos=pl.Series(pos))
    back = pl.DataFrame(
        {
            "person": pid,
            "s1": s1,
            "b": b,
            "a": a,
            "s2": s2,
            "b2": b2,
            "a2": a2,
            "walk_s": walk_s,
            "shift": home_shift,
            "is_tr": is_tr,
        }
    ).filter(pl.Series(two_way))
    rv = rev.rename({"shape_no": "s", "stop_sequence": "q"})
    back = (
        back.join(
            rv.rename({"s": "s1", "q": "a", "rev_shape_no": "r1", "rev_seq": "rb1"}),
            on=["s1", "a"],
            how="left",
        )
        .join(
            rv.rename({"s": "s1", "q": "b", "rev_seq": "ra1"}).drop("rev_shape_no"),
            on=["s1", "b"],
            how="left",
        )
        .join(
            rv.rename({"s": "s2", "q": "a2", "rev_shape_no": "r2", "rev_seq": "rb2"}),
            on=["s2", "a2"],
            how="left",
        )
        .join(
            rv.rename({"s": "s2", "q": "b2", "rev_seq": "ra2"}).drop("rev_shape_no"),
            on=["s2", "b2"],
            how="left",
        )
        .join(ps.group_by(r1="shape_no").agg(n_r1=pl.col("n_stops").first()), on="r1", how="left")
        .with_columns(
            ra1=pl.when(
                (pl.col("ra1") + pl.col("shift") > pl.col("rb1"))
                & (pl.col("ra1") + pl.col("shift") <= pl.col("n_r1"))
            )
            .then(pl.col("ra1") + pl.col("shift"))
            .otherwise(pl.col("ra1"))
        )
    )
    tr = back.filter(pl.col("is_tr") & pl.col("r2").is_not_null() & (pl.col("ra2") > pl.col("rb2")))
    legs.append(
        tr.select(
            "person",
            chain=pl.lit(1),
            pos=pl.lit(0),
            shape_no="r2",
            board_seq="rb2",
            alight_seq="ra2",
            walk_s=pl.lit(0.0),
        )
    )
    one = back.filter(pl.col("r1").is_not_null() & (pl.col("ra1") > pl.col("rb1")))
    legs.append(
        one.select(
            "person",
            chain=pl.lit(1),
            # after the other line's return leg when the tour has one
            pos=pl.when(pl.col("person").is_in(tr["person"].implode())).then(1).otherwise(0),
            shape_no="r1",
            board_seq="rb1",
            alight_seq="ra1",
            walk_s="walk_s",
        )
    )
    tour = pl.concat(
        [
            f.cast(
                {
                    "chain": pl.Int32,
                    "pos": pl.Int32,
                    "shape_no": pl.Int64,
                    "board_seq": pl.Int32,
                    "alight_seq": pl.Int32,
                    "walk_s": pl.Float64,
                }
            )
            for f in legs
        ]
    )
    return persons, tour.sort("person", "chain", "pos")


def _legs(
    person: np.ndarray,
    chain: int,
    pos: int,
    shape_no: np.ndarray,
    board: np.ndarray,
    alight: np.ndarray,
    walk_s: float | np.ndarray,
) -> pl.DataFrame:
    n = len(person)
    return pl.DataFrame(
        {
            "person": person,
            "chain": np.full(n, chain),
            "pos": np.full(n, pos),
            "shape_no": shape_no,
            "board_seq": board,
            "alight_seq": alight,
            "walk_s": np.broadcast_to(np.asarray(walk_s, dtype=float), (n,)),
        }
    )


def _board(want: pl.DataFrame, stops: pl.DataFrame, times: pl.DataFrame) -> pl.DataFrame:
    """The first operated bus at or after `wish` at the boarding stop (as-of join on the key);
    adds tkey, arr_planned (planned time at the alighting stop) and reach (alighting stop
    visited). Legs with no bus left are dropped."""
    key = (
        pl.col("day_no").cast(pl.Int64) * _DAY_K
        + pl.col("shape_no").cast(pl.Int64) * _SHAPE_K
        + pl.col("board_seq").cast(pl.Int64)
    )
    return (
        want.with_columns(key=key)
        .sort("key", "wish")
        .join_asof(stops, on="wish", by="key", strategy="forward", check_sortedness=False)
        .filter(pl.col("tkey").is_not_null())
        .join(times, left_on=["tkey", "alight_seq"], right_on=["tkey", "stop_sequence"], how="left")
        .drop("key")
    )


def build_journeys(
    trips: pl.DataFrame,
    plan: pl.DataFrame,
    stops: pl.DataFrame,
    weights: dict[str, float],
    opts: SimulationOptions,
) -> pl.DataFrame:
    """One row per ridden leg: card_id, fare_class (card type), tkey, board_seq, alight_seq,
    leg (1, 2 out; 3, 4 back).

    `trips` are the operation's trips, `plan` the (trip, stop) plan with `planned_time` and
    `visited`, `stops` the stops with x_m, y_m (metres); `weights` the demand weight of each
    route.
    """
    rng = np.random.default_rng([opts.seed, 5001])
    ops = trips.filter(pl.col("vehicle_id").is_not_null())
    ps = build_pattern_stops(trips, plan, stops)
    days = (
        ops.group_by("service_date")
        .agg(n=pl.col("vehicle_id").n_unique(), day_epoch_s=pl.col("day_epoch_s").first())
        .sort("service_date")
        .with_row_index("day_no")
    )
    if days.height == 0 or ps.height == 0:
        return pl.DataFrame(
            schema={
                "card_id": pl.String,
                "fare_class": pl.String,
                "tkey": pl.UInt32,
                "board_seq": pl.Int32,
                "alight_seq": pl.Int32,
                "leg": pl.Int32,
            }
        )
    legs_per_card = (2.0 + 2.0 * opts.second_leg_rate) * (1.0 - opts.one_way_rate / 2.0)
    n_cards = (opts.riders_per_vehicle_day * days["n"].to_numpy() / legs_per_card).astype(np.int64)
    n_persons = max(int(np.ceil(n_cards.max() / opts.ride_day_share)), 1)
    persons, tour = build_persons(ps, weights, n_persons, opts, rng)
    # who rides on each day: the same people come back on other days
    pd_parts = [
        pl.DataFrame(
            {
                "day_no": np.full(int(k), d, np.int64),
                "person": np.sort(rng.choice(n_persons, min(int(k), n_persons), replace=False)),
            }
        )
        for d, k in enumerate(n_cards)
    ]
    pday = (
        pl.concat(pd_parts)
        .join(persons.select("person", "is_peak"), on="person")
        .sort("day_no", "person")  # joins keep no order: draws follow a fixed one
    )
    m = pday.height
    peak = pday["is_peak"].to_numpy()
    t1 = np.where(peak, rng.normal(7.3, 0.45, m), rng.uniform(9.0, 15.0, m)) * 3600.0
    t2 = np.where(peak, rng.normal(17.8, 0.55, m) * 3600.0, t1 + rng.uniform(1.0, 5.0, m) * 3600.0)
    t2 = np.minimum(t2, 22.0 * 3600.0)
    # one-way person-days keep only the outbound (chain 0) or only the return (chain 1)
    one_way = rng.random(m) < opts.one_way_rate
    drop_chain = np.where(one_way, (rng.random(m) < 0.5).astype(np.int64), -1)
    slack = rng.uniform(*opts.transfer_slack_s, m)
    pday = (
        pday.with_row_index("pd")
        .with_columns(
            pl.col("pd").cast(pl.Int64),
            t1=pl.Series(t1),
            t2=pl.Series(t2),
            drop_chain=pl.Series(drop_chain),
            slack=pl.Series(slack),
        )
        .join(days.select(pl.col("day_no").cast(pl.Int64), "day_epoch_s"), on="day_no")
    )
    want = (
        pday.join(tour, on="person")
        .filter(pl.col("chain") != pl.col("drop_chain"))
        .with_columns(
            wish=pl.col("day_epoch_s").cast(pl.Float64)
            + pl.when(pl.col("chain") == 0).then("t1").otherwise("t2"),
        )
    )
    day_no = days.select("service_date", pl.col("day_no").cast(pl.Int64))
    shapes = ps.select("shape_id", "shape_no").unique()
    visited = (
        plan.filter(pl.col("operated"))
        .join(shapes, on="shape_id")
        .join(day_no, on="service_date")
        .select("tkey", "day_no", "shape_no", "stop_sequence", "planned_time", "visited")
    )
    board_at = (
        visited.filter("visited")
        .select(
            key=pl.col("day_no") * _DAY_K
            + pl.col("shape_no") * _SHAPE_K
            + pl.col("stop_sequence").cast(pl.Int64),
            wish=pl.col("planned_time"),
            tkey="tkey",
        )
        .sort("key", "wish")
    )
    times = visited.select(
        "tkey", pl.col("stop_sequence"), arr_planned="planned_time", reach="visited"
    )
    cols = [
        "pd",
        "person",
        "chain",
        "pos",
        "day_no",
        "shape_no",
        "board_seq",
        "alight_seq",
        "tkey",
        "arr_planned",
        "reach",
    ]
    rides: list[pl.DataFrame] = []
    for chain in (0, 1):
        w = want.filter(pl.col("chain") == chain)
        if chain == 1 and rides:
            # the return starts after the stay at the destination
            out_end = pl.concat(rides).group_by("pd").agg(out_end=pl.col("arr_planned").max())
            w = w.join(out_end, on="pd", how="left").with_columns(
                wish=pl.max_horizontal("wish", pl.col("out_end") + opts.min_stay_s)
            )
        first = _board(w.filter(pl.col("pos") == 0), board_at, times)
        rides.append(first.select(cols))
        nxt = (
            w.filter(pl.col("pos") == 1)
            .drop("wish")
            .join(first.select("pd", prev_arr="arr_planned"), on="pd")
            .with_columns(wish=pl.col("prev_arr") + pl.col("walk_s") + pl.col("slack"))
        )
        rides.append(_board(nxt, board_at, times).select(cols))
    out = (
        pl.concat(rides)
        .filter(pl.col("reach").fill_null(False))
        .join(persons.select("person", "card_id", "fare_class"), on="person")
        .select(
            "card_id",
            "fare_class",
            "tkey",
            pl.col("board_seq").cast(pl.Int32),
            pl.col("alight_seq").cast(pl.Int32),
            leg=(pl.col("chain") * 2 + pl.col("pos") + 1).cast(pl.Int32),
        )
    )
    return out.sort("tkey", "board_seq", "card_id", "leg")


def compute_loads(plan: pl.DataFrame, rides: pl.DataFrame) -> pl.DataFrame:
    """Boardings, alightings and the load after each stop of every operated trip.

    Returns plan's (tkey, stop_sequence) rows with n_boardings, n_alightings, load_after.
    """
    on = rides.group_by("tkey", stop_sequence="board_seq").agg(n_boardings=pl.len())
    off = rides.group_by("tkey", stop_sequence="alight_seq").agg(n_alightings=pl.len())
    return (
        plan.select("tkey", "stop_sequence")
        .join(
            on.with_columns(pl.col("stop_sequence").cast(pl.Int32)),
            on=["tkey", "stop_sequence"],
            how="left",
        )
        .join(
            off.with_columns(pl.col("stop_sequence").cast(pl.Int32)),
            on=["tkey", "stop_sequence"],
            how="left",
        )
        .with_columns(
            pl.col("n_boardings").fill_null(0).cast(pl.Int32),
            pl.col("n_alightings").fill_null(0).cast(pl.Int32),
        )
        .sort("tkey", "stop_sequence")
        .with_columns(
            load_after=(pl.col("n_boardings") - pl.col("n_alightings"))
            .cum_sum()
            .over("tkey")
            .cast(pl.Int32)
        )
    )


def build_fares(
    rides: pl.DataFrame,
    visits: pl.DataFrame,
    trips: pl.DataFrame,
    fare_full: float,
    integration_window_s: float,
    integration_ratio: float,
    seed: int,
    selective_routes: Collection[str] = (),
) -> pl.DataFrame:
    """Fare taps: one per ridden leg, while the bus stands at the boarding stop.

    On `selective_routes` every benefit card (student, elderly, disabled) pays the full fare:
    selective service admits no exemption or discount (BG art. 6-II, 50 §2, 51 §2).

    Returns transaction_id, event_s (Unix seconds), vehicle_id, route_id, operator_id, card_id,
    fare_class, amount (BRL), and the truth: tkey, board_seq, alight_seq, leg. A paying tap within `integration_window_s` of the same card's
    previous tap on another line is 'integration', charged `integration_ratio` of the fare.
    """
    rng = np.random.default_rng([seed, 5002])
    taps = rides.join(
        visits.select("tkey", board_seq="stop_sequence", arr="arrived", dep="departed"),
        on=["tkey", "board_seq"],
    ).join(trips.select("tkey", "vehicle_id", "route_id", "operator_id"), on="tkey")
    taps = taps.sort("tkey", "board_seq", "card_id", "leg")  # draws follow a fixed order
    on_selective = pl.col("route_id").is_in(
        pl.Series(list(selective_routes), dtype=pl.String).implode()
    )
    taps = taps.with_columns(
        fare_class=pl.when(on_selective & pl.col("fare_class").is_in(BENEFIT_CLASSES))
        .then(pl.lit("full"))
        .otherwise(pl.col("fare_class"))
    )
    u = pl.Series(rng.random(taps.height))
    taps = taps.with_columns(event_s=(pl.col("arr") + u * (pl.col("dep") - pl.col("arr"))).round(0))
    taps = taps.sort("card_id", "event_s", "tkey").with_columns(
        prev_s=pl.col("event_s").shift(1).over("card_id"),
        prev_route=pl.col("route_id").shift(1).over("card_id"),
    )
    paying = pl.col("fare_class").is_in(["full", "vale_transporte", "student"])
    integration = (
        paying
        & (pl.col("event_s") - pl.col("prev_s") <= integration_window_s)
        & (pl.col("prev_route") != pl.col("route_id"))
    )
    ratio = {"full": 1.0, "vale_transporte": 1.0, "student": 0.5, "elderly": 0.0, "disabled": 0.0}
    taps = (
        taps.with_columns(
            fare_class=pl.when(integration)
            .then(pl.lit("integration"))
            .otherwise(pl.col("fare_class")),
        )
        .with_columns(
            amount=pl.when(pl.col("fare_class") == "integration")
            .then(fare_full * integration_ratio)
            .otherwise(
                pl.col("fare_class").replace_strict(ratio, default=1.0, return_dtype=pl.Float64)
                * fare_full
            )
            .round(2),
        )
        .sort("event_s", "vehicle_id", "card_id")
    )
    return taps.with_row_index("n").select(
        transaction_id=pl.format("TX{}", pl.col("n").cast(pl.String).str.zfill(9)),
        event_s="event_s",
        vehicle_id="vehicle_id",
        route_id="route_id",
        operator_id="operator_id",
        card_id="card_id",
        fare_class="fare_class",
        amount="amount",
        tkey="tkey",
        board_seq="board_seq",
        alight_seq="alight_seq",
        leg="leg",
    )
