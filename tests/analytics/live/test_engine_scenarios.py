"""The live engine on a transformed simulated morning: two buses swap blocks during their
layovers, and a third lays over 20 minutes longer than planned.

The simulator's day-2 pings (09:00-12:00 UTC) are rewritten before the replay: from the swap
instant the two buses' fleet numbers are exchanged (each then runs the other's block), and the
third bus's pings are held at its layover position for 20 extra minutes, every later ping shifted
by as much. The truth is transformed the same way.
"""

from __future__ import annotations

from datetime import datetime, timedelta

import polars as pl
import pytest

from analytics.live.engine import LiveEngine, LiveView
from analytics.live.options import LiveOptions
from analytics.live.reference import read_live_reference
from analytics.matching.options import MatchOptions
from core.profile import load_profile
from core.store import Store
from tests.analytics.live.simulated import LIVE_DAY, PROFILE_ID, build_simulated_store

START, END = "2026-03-03T09:00:00Z", "2026-03-03T12:00:00Z"
EXTRA_S = 1200


def _iso(t: datetime) -> str:
    return t.strftime("%Y-%m-%dT%H:%M:%SZ")


def _layovers(truth: pl.DataFrame) -> pl.DataFrame:
    """vehicle_id, trip_id (the next trip), l0 (arrival), l1 (next departure), true instants."""
    return (
        truth.drop_nulls(["vehicle_id", "actual_start_at"])
        .sort("vehicle_id", "actual_start_at")
        .with_columns(pl.col("actual_end_at").shift(1).over("vehicle_id").alias("l0"))
        .select("vehicle_id", "trip_id", "l0", pl.col("actual_start_at").alias("l1"))
        .drop_nulls()
    )


@pytest.fixture(scope="module")
def scenario(tmp_path_factory: pytest.TempPathFactory):
    sim = build_simulated_store(tmp_path_factory.mktemp("scenario"))
    truth = pl.read_parquet(sim.sim_dir / "truth" / "trips.parquet").filter(
        pl.col("service_date") == LIVE_DAY
    )
    lay = _layovers(truth)
    lo, hi = (
        datetime.fromisoformat("2026-03-03T10:00:00+00:00"),
        datetime.fromisoformat("2026-03-03T10:45:00+00:00"),
    )
    # the swap: two buses laying over at the same time for at least 4 minutes
    pairs = (
        lay.filter(pl.col("l0").is_between(lo, hi))
        .join(lay.filter(pl.col("l0").is_between(lo, hi)), how="cross", suffix="_b")
        .filter(pl.col("vehicle_id") < pl.col("vehicle_id_b"))
        .with_columns(
            pl.max_horizontal("l0", "l0_b").alias("o0"), pl.min_horizontal("l1", "l1_b").alias("o1")
        )
        .filter(pl.col("o1") - pl.col("o0") >= timedelta(minutes=4))
        .sort("vehicle_id", "vehicle_id_b")
    )
    a, b, o0, o1 = pairs.select("vehicle_id", "vehicle_id_b", "o0", "o1").row(0)
    swap_at = o0 + (o1 - o0) / 2
    # the long layover: another bus arriving in the hour after 10:00
    c, c_next, c_l0 = (
        lay.filter(
            ~pl.col("vehicle_id").is_in([a, b])
            & pl.col("l0").is_between(lo, lo + timedelta(hours=1))
        )
        .sort("l0", "vehicle_id")
        .select("vehicle_id", "trip_id", "l0")
        .row(0)
    )
    hold_from = c_l0 + timedelta(seconds=60)

    avl = (
        pl.read_ndjson(sim.sim_dir / "avl_mqtt.jsonl", infer_schema_length=None)
        .unnest("payload")
        .with_columns(pl.all().cast(pl.String))
        .filter(pl.col("event_at").is_between(pl.lit("2026-03-03T08:30:00Z"), pl.lit(END)))
        .with_columns(pl.col("event_at").str.to_datetime(time_zone="UTC").alias("_t"))
    )
    swapped = (
        pl.when(pl.col("_t") >= swap_at)
        .then(
            pl.when(pl.col("vehicle_id") == a)
            .then(pl.lit(b))
            .when(pl.col("vehicle_id") == b)
            .then(pl.lit(a))
            .otherwise(pl.col("vehicle_id"))
        )
        .otherwise(pl.col("vehicle_id"))
    )
    avl = avl.with_columns(swapped.alias("vehicle_id"))
    mine = (pl.col("vehicle_id") == c) & (pl.col("_t") >= hold_from)
    parked = avl.filter((pl.col("vehicle_id") == c) & (pl.col("_t") < hold_from)).sort("_t").tail(1)
    held = pl.concat(
        [
            parked.with_columns(pl.lit(hold_from + timedelta(seconds=30 * i)).alias("_t"))
            for i in range(EXTRA_S // 30)
        ]
    )
    avl = (
        pl.concat(
            [
                avl.filter(~mine),
                held,
                avl.filter(mine).with_columns(pl.col("_t") + timedelta(seconds=EXTRA_S)),
            ]
        )
        .filter(
            (pl.col("_t") >= pl.lit(datetime.fromisoformat(START.replace("Z", "+00:00"))))
            & (pl.col("_t") < pl.lit(datetime.fromisoformat(END.replace("Z", "+00:00"))))
        )
        .with_columns(pl.col("_t").dt.strftime("%Y-%m-%dT%H:%M:%SZ").alias("event_at"))
        .sort("_t")
    )
    # the truth, transformed alike
    after = pl.col("actual_start_at") >= swap_at
    truth = truth.with_columns(
        pl.when(after & (pl.col("vehicle_id") == a)).then(pl.lit(b))
        .when(after & (pl.col("vehicle_id") == b)).then(pl.lit(a))
        .otherwise(pl.col("vehicle_id")).alias("vehicle_id")
    ).with_columns(
        pl.when((pl.col("vehicle_id") == c) & (pl.col("actual_start_at") >= hold_from))
        .then(pl.col("actual_start_at") + timedelta(seconds=EXTRA_S))
        .otherwise(pl.col("actual_start_at"))
        .alias("actual_start_at")
    )  # fmt: skip

    profile = load_profile(PROFILE_ID)
    with Store.open(sim.store_path, read_only=True) as store:
        ref = read_live_reference(store, LIVE_DAY, profile, LiveOptions(), MatchOptions())
    engine = LiveEngine(ref, profile)
    views: list[LiveView] = []
    for _, part in sorted(
        avl.with_columns(pl.col("_t").dt.truncate("1m").alias("_b"))
        .partition_by("_b", as_dict=True)
        .items()
    ):
        views.append(engine.update(part.drop("_t", "_b"), pl.DataFrame()))
    return {
        "views": views, "truth": truth, "a": a, "b": b, "swap_at": swap_at, "c": c,
        "c_next": c_next, "hold_from": hold_from,
    }  # fmt: skip


def test_buses_that_swapped_blocks_are_followed_on_their_new_blocks(scenario) -> None:
    s = scenario
    since = (s["swap_at"] + timedelta(minutes=10)).timestamp()
    seen = pl.concat(
        [
            v.positions.filter(pl.col("dist_m").is_finite())
            .select("vehicle_id", "trip_id")
            .with_columns(pl.lit(v.clock_s).alias("t"))
            for v in s["views"]
            if v.clock_s >= since
        ]
    ).filter(pl.col("vehicle_id").is_in([s["a"], s["b"]]))
    check = seen.join(
        s["truth"].select("trip_id", pl.col("vehicle_id").alias("true_v")), on="trip_id", how="left"
    )
    assert check.height >= 30
    agree = (check["vehicle_id"] == check["true_v"]).mean()
    assert agree >= 0.9, check.filter(pl.col("vehicle_id") != pl.col("true_v"))


def test_a_long_layover_neither_cancels_the_next_trip_nor_predicts_it_in_the_past(scenario) -> None:
    s = scenario
    start = s["hold_from"].timestamp() + 300
    end = s["hold_from"].timestamp() + EXTRA_S
    waiting = [v for v in s["views"] if start <= v.clock_s < end]
    assert len(waiting) >= 10
    for v in waiting:
        assert s["c_next"] not in v.canceled["trip_id"].to_list()
        nxt = v.predictions.filter(pl.col("trip_id") == s["c_next"])
        # its own bus predicts it (or the bus before it in the block): never before now
        assert nxt.height > 0
        assert nxt["predicted_s"].min() >= v.clock_s - 1
