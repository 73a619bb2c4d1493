"""Demand: card holders who ride several times a day, their trips, loads and fare taps.

Each rider (a card) makes an outbound journey (morning peak or midday) and the return journey
in the opposite direction later that day, so destinations can be inferred from the next tap
(trip chaining). Some outbound journeys continue on a second line a few minutes later: that
tap falls inside the integration window and is charged as 'integration'. Riders wait for the
first bus that actually runs (suppressed trips carry nobody) and board at its planned time;
riders whose stop is skipped by a detour or lies beyond a breakdown do not ride.
"""

from __future__ import annotations

import numpy as np
import polars as pl

from sample_data.options import SimulationOptions


def build_journeys(
    trips: pl.DataFrame, plan: pl.DataFrame, weights: dict[str, float], opts: SimulationOptions
) -> pl.DataFrame:
    """One row per ridden leg: card_id, fare_class (card type), tkey, board_seq, alight_seq.

    `trips` are the operation's trips, `plan` the (trip, stop) plan with `planned_time` and
    `visited`; `weights` the demand weight of each route.
    """
    rng = np.random.default_rng([opts.seed, 5001])
    ops = trips.filter(pl.col("vehicle_id").is_not_null())
    n_stops = plan.group_by("shape_id").agg(n_stops=pl.col("stop_sequence").max())
    supply = (
        ops.filter(pl.col("direction_id").fill_null(0) == 0)
        .group_by("service_date", "route_id", "is_circular", "shape_id")
        .agg(n_trips=pl.len())
        .join(n_stops, on="shape_id")
        # riders are drawn on each line's main pattern (direction 0 first, most trips)
        .sort(
            "service_date",
            "route_id",
            "n_trips",
            "shape_id",
            descending=[False, False, True, False],
        )
        .unique(["service_date", "route_id"], keep="first", maintain_order=True)
        .with_columns(
            w=pl.col("n_trips")
            * pl.col("route_id").replace_strict(weights, default=1.0, return_dtype=pl.Float64)
        )
        .sort("service_date", "route_id")
    )
    n_veh = ops.group_by("service_date").agg(n=pl.col("vehicle_id").n_unique()).sort("service_date")
    legs_per_card = 2.0 + opts.second_leg_rate
    parts = []
    for day, n in n_veh.iter_rows():
        sup = supply.filter(pl.col("service_date") == day)
        n_cards = int(opts.riders_per_vehicle_day * n / legs_per_card)
        if n_cards == 0 or sup.height == 0:
            continue
        p = (sup["w"] / sup["w"].sum()).to_numpy()
        pick = rng.choice(sup.height, n_cards, p=p)
        parts.append(sup[pick].with_columns(service_date=pl.lit(day)))
    cards = pl.concat(parts)
    m = cards.height
    # card population larger than a day's riders: the same cards come back on other days
    card_no = rng.integers(0, max(1, int(m / max(len(parts), 1) * 1.3)), m)
    classes, shares = zip(*opts.fare_class_shares, strict=True)
    share = np.array(shares) / np.sum(shares)
    fare_class = np.array(classes)[rng.choice(len(classes), m, p=share)]
    n = cards["n_stops"].to_numpy()
    b = np.floor(rng.random(m) * (n - 1)).astype(np.int64) + 1
    a = b + 1 + np.floor(rng.random(m) * (n - b)).astype(np.int64)
    a = np.minimum(a, n)
    circular = cards["is_circular"].to_numpy()
    outbound_dir = np.where(circular, 0, rng.integers(0, 2, m))
    # commuters ride at the peaks (and make them crowded); the others during the day
    peak = rng.random(m) < 0.65
    t1 = np.where(peak, rng.normal(7.3, 0.45, m), rng.uniform(9.0, 15.0, m)) * 3600.0
    t2 = np.where(peak, rng.normal(17.8, 0.55, m) * 3600.0, t1 + rng.uniform(1.0, 5.0, m) * 3600.0)
    t2 = np.minimum(t2, 22.0 * 3600.0)
    base = cards.select(
        "service_date",
        "route_id",
        card_id=pl.format("6{}", pl.Series(card_no + 10**9).cast(pl.String)),
        fare_class=pl.Series(fare_class),
    )
    # outbound in `outbound_dir` b -> a; return in the other direction from a back to b (same
    # stop ids in reverse order); circular lines return round the loop to the terminal.
    ret_b = np.where(circular, a, n + 1 - a)
    ret_a = np.where(circular, n, n + 1 - b)
    ret_b = np.minimum(ret_b, ret_a - 1)
    out = base.with_columns(
        direction_id=pl.Series(outbound_dir),
        board_seq=pl.Series(b),
        alight_seq=pl.Series(a),
        wish_s=pl.Series(t1),
        leg=pl.lit(1),
    )
    ret = base.with_columns(
        direction_id=pl.Series(np.where(circular, 0, 1 - outbound_dir)),
        board_seq=pl.Series(ret_b),
        alight_seq=pl.Series(ret_a),
        wish_s=pl.Series(t2),
        leg=pl.lit(3),
    )
    legs = [out, ret]
    second = rng.random(m) < opts.second_leg_rate
    if second.any():
        sec = cards.filter(pl.Series(second))
        k = sec.height
        other = supply.sample(n=k, with_replacement=True, seed=int(rng.integers(0, 2**31)))
        n2 = other["n_stops"].to_numpy()
        b2 = np.floor(rng.random(k) * (n2 - 1)).astype(np.int64) + 1
        a2 = np.minimum(b2 + 1 + np.floor(rng.random(k) * (n2 - b2)).astype(np.int64), n2)
        ride_s = (a[second] - b[second]) * 90.0
        legs.append(
            base.filter(pl.Series(second)).with_columns(
                route_id=other["route_id"],
                direction_id=pl.Series(np.zeros(k, dtype=np.int64)),
                board_seq=pl.Series(b2),
                alight_seq=pl.Series(a2),
                wish_s=pl.Series(t1[second] + ride_s + rng.uniform(120.0, 900.0, k)),
                leg=pl.lit(2),
            )
        )
    want = (
        pl.concat(legs)
        .with_columns(
            pl.col("direction_id").cast(pl.Int32),
            pl.col("board_seq").cast(pl.Int32),
            pl.col("alight_seq").cast(pl.Int32),
        )
        .join(trips.select("service_date", "day_epoch_s").unique(), on="service_date")
        .with_columns(
            wish=pl.col("day_epoch_s").cast(pl.Float64) + pl.col("wish_s"),
        )
        .sort("wish")
    )
    # one integer key per (day, route, direction, stop): asof joins on a single `by` column
    routes = plan.select(pl.col("route_id").unique().sort())
    rid = routes.with_row_index("route_no")
    key = (
        pl.col("service_date").cast(pl.Int64) * 10_000_000_000
        + pl.col("route_no").cast(pl.Int64) * 1_000_000
        + pl.col("direction_id").cast(pl.Int64) * 100_000
        + pl.col("board_seq").cast(pl.Int64)
    )
    stops = (
        plan.filter(pl.col("operated") & pl.col("visited"))
        .join(rid, on="route_id")
        .select(
            "service_date",
            "route_no",
            "direction_id",
            board_seq="stop_sequence",
            tkey="tkey",
            wish="planned_time",
        )
        .with_columns(key=key)
        .select("key", "tkey", "wish")
        .sort("key", "wish")
    )
    want = want.join(rid, on="route_id").with_columns(key=key).sort("key", "wish")
    rides = want.join_asof(
        stops, on="wish", by="key", strategy="forward", check_sortedness=False
    ).filter(pl.col("tkey").is_not_null())
    # riders whose alighting stop is not reached (detour, breakdown) do not take this bus
    reach = plan.filter(pl.col("visited")).select("tkey", alight_seq="stop_sequence")
    rides = rides.join(reach, on=["tkey", "alight_seq"], how="semi")
    return rides.select("card_id", "fare_class", "tkey", "board_seq", "alight_seq", "leg").sort(
        "tkey", "board_seq", "card_id", "leg"
    )


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
) -> pl.DataFrame:
    """Fare taps: one per ridden leg, while the bus stands at the boarding stop.

    Returns transaction_id, event_s (Unix seconds), vehicle_id, route_id, operator_id, card_id,
    fare_class, amount (BRL). A paying tap within `integration_window_s` of the same card's
    previous tap on another line is 'integration', charged `integration_ratio` of the fare.
    """
    rng = np.random.default_rng([seed, 5002])
    taps = rides.join(
        visits.select("tkey", board_seq="stop_sequence", arr="arrived", dep="departed"),
        on=["tkey", "board_seq"],
    ).join(trips.select("tkey", "vehicle_id", "route_id", "operator_id"), on="tkey")
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
    )
