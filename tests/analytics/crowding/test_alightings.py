"""Alighting inference by trip chaining on the line R scenario (hand-checked)."""

from __future__ import annotations

from datetime import UTC, datetime

import numpy as np
import polars as pl
import pytest

from analytics.crowding import alightings
from analytics.crowding.alightings import AlightingOptions, compute_alightings
from analytics.crowding.boardings import compute_boardings
from tests.analytics.crowding.test_boardings import TZ, line_r

# the line R scenario is drawn with a 1 km walking limit (c2's return walk is 800 m)
WALK_1KM = AlightingOptions(walk_max_m=1000.0)


def placements(options: AlightingOptions | None = None) -> pl.DataFrame:
    taps = line_r("taps", "fare_transactions")
    visits = line_r("stop_visits", "stop_visits")
    b = compute_boardings(taps, visits, timezone=TZ)
    out = compute_alightings(b, visits, line_r("stops"), options or WALK_1KM)
    return out.sort("transaction_id")


@pytest.fixture(scope="module")
def alighted() -> pl.DataFrame:
    return placements()


def by_tap(df: pl.DataFrame, *columns: str) -> dict[str, tuple[object, ...]]:
    return {r[0]: tuple(r[1:]) for r in df.select("transaction_id", *columns).rows()}


def test_chained_legs_alight_nearest_to_the_next_boarding(alighted: pl.DataFrame) -> None:
    got = by_tap(alighted, "alighting_stop_id", "alighting_method", "walk_m")
    # c1 boards V1 at A, next at C: alights at C; its return leg heads home to A
    assert got["t01"] == ("C", "chained", 0.0)
    assert got["t13"] == ("C", "chained", 0.0)  # second tap on the same run: same leg
    assert got["t05"] == ("A", "chained_home", 0.0)
    # c2 boards V1 at A, next on V2 at B; its last leg (V2 from B) goes home toward A:
    # the nearest stop V2 reaches after B is C, 800 m away
    assert got["t02"] == ("B", "chained", 0.0)
    assert got["t07"] == ("C", "chained_home", 800.0)
    assert got["t09"] == ("B", "chained_home", 0.0)


def test_unlinked_taps_say_why(alighted: pl.DataFrame) -> None:
    got = by_tap(alighted, "alighting_method", "alighting_stop_id", "reason")
    assert got["t03"][:2] == ("unlinked", None)
    assert str(got["t03"][2]).startswith("validação sem cartão identificado")
    assert str(got["t04"][2]).startswith("único embarque do cartão no dia")
    assert str(got["t06"][2]).startswith("único embarque do cartão no dia")
    # c5 boards V2 at B at 10:22:30 and V1 at 10:23: V2 reaches no stop in between
    assert str(got["t08"][2]).startswith("nenhuma parada seguinte da viagem foi alcançada")
    assert all("desembarque estimado" in str(got[t][2]) for t in ("t03", "t04", "t06", "t08"))


def test_unplaced_taps_have_no_alighting(alighted: pl.DataFrame) -> None:
    unplaced = alighted.filter(pl.col("placement") != "placed")
    assert unplaced["alighting_method"].null_count() == unplaced.height == 3
    assert unplaced["reason"].null_count() == 0


def test_a_walk_beyond_the_limit_leaves_the_leg_unlinked() -> None:
    got = by_tap(placements(AlightingOptions(walk_max_m=300.0)), "alighting_method", "reason")
    assert got["t07"][0] == "unlinked"
    assert str(got["t07"][1]).startswith("o próximo embarque do cartão fica longe")
    assert got["t02"][0] == "chained"  # 0 m: still linked


def test_cards_sharing_a_hash_are_still_told_apart(
    alighted: pl.DataFrame, monkeypatch: pytest.MonkeyPatch
) -> None:
    # every card id on one 64-bit key: the chaining must notice and number the ids exactly
    monkeypatch.setattr(alightings, "_card_key", lambda card_hash: pl.lit(7, pl.UInt64))
    assert placements().equals(alighted)


def test_runs_found_by_bisection_give_the_same_alightings(
    alighted: pl.DataFrame, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(alightings, "_DENSE_RUNS_MAX", 0)  # keys beyond the table of runs
    assert placements().equals(alighted)


def test_the_chaining_does_not_depend_on_the_order_of_the_taps(alighted: pl.DataFrame) -> None:
    taps = line_r("taps", "fare_transactions")
    visits = line_r("stop_visits", "stop_visits")
    b = compute_boardings(taps, visits, timezone=TZ)
    # a second tap of card c1 in the same instant as t13 (two validators); the chaining
    # breaks same-instant ties by transaction id, so any input order gives one answer
    tie = b.filter(pl.col("transaction_id") == "t13").with_columns(
        pl.lit("t00").alias("transaction_id")
    )
    with_tie = pl.concat([b, tie])
    outs = [
        compute_alightings(
            with_tie.sample(fraction=1.0, shuffle=True, seed=s), visits, line_r("stops"), WALK_1KM
        ).sort("transaction_id")
        for s in range(4)
    ]
    assert all(o.equals(outs[0]) for o in outs[1:])
    got = by_tap(outs[0], "alighting_stop_id", "alighting_method")
    assert got["t00"] == got["t13"] == got["t01"] == ("C", "chained")  # one leg
    assert outs[0].filter(pl.col("transaction_id") != "t00").equals(alighted)


def test_same_instant_taps_in_time_order_chain_in_transaction_id_order(
    alighted: pl.DataFrame,
) -> None:
    # taps in time order take the short path (a stable sort on the card alone), which must
    # still put a card's same-instant taps in transaction id order: t13 and its twin t00
    # come here in the reverse order
    taps = line_r("taps", "fare_transactions")
    visits = line_r("stop_visits", "stop_visits")
    b = compute_boardings(taps, visits, timezone=TZ)
    tie = b.filter(pl.col("transaction_id") == "t13").with_columns(
        pl.lit("t00").alias("transaction_id")
    )
    in_time_order = pl.concat([b, tie]).sort(
        "event_at", "transaction_id", descending=[False, True], maintain_order=True
    )
    assert in_time_order["event_at"].is_sorted()
    out = compute_alightings(in_time_order, visits, line_r("stops"), WALK_1KM)
    got = by_tap(out, "alighting_stop_id", "alighting_method")
    assert got["t00"] == got["t13"] == got["t01"] == ("C", "chained")  # one leg
    leg_of_tap, _ = alightings.build_legs(in_time_order)
    row = {t: i for i, t in enumerate(in_time_order["transaction_id"])}
    assert leg_of_tap[row["t00"]] == leg_of_tap[row["t13"]] == leg_of_tap[row["t01"]]
    assert out.filter(pl.col("transaction_id") != "t00").sort("transaction_id").equals(alighted)
    # the order itself: card, instant, then transaction id within the instant
    t0, t1 = datetime(2026, 3, 2, 12, 0, tzinfo=UTC), datetime(2026, 3, 2, 12, 5, tzinfo=UTC)
    card_key = np.array([2, 1, 1, 1, 1], dtype=np.uint64)
    at = pl.Series([t0, t0, t1, t1, t1]).to_physical().to_numpy()
    taps = pl.DataFrame({"transaction_id": ["a", "z", "y", "x", "w"]})
    rows = np.arange(5)
    order = alightings._in_chain_order(card_key, at, taps, rows)
    assert order.tolist() == [1, 4, 3, 2, 0]
    shuffled = np.random.default_rng(3).permutation(5)
    order = alightings._in_chain_order(card_key[shuffled], at[shuffled], taps, rows[shuffled])
    assert rows[shuffled][order].tolist() == [1, 4, 3, 2, 0]


def test_a_card_whose_service_dates_go_back_keeps_each_day_whole() -> None:
    taps = line_r("taps", "fare_transactions")
    visits = line_r("stop_visits", "stop_visits")
    b = compute_boardings(taps, visits, timezone=TZ)
    # c2's 10:22 tap (V2 at B) handed to c1 on the night run of the day before: c1 rides
    # 09:50 on day D, 10:22 on day D-1, 10:27 on day D
    moved = pl.col("transaction_id") == "t07"
    b = b.with_columns(
        pl.when(moved).then(pl.lit("c1")).otherwise("card_hash").alias("card_hash"),
        pl.when(moved)
        .then(pl.col("service_date") - pl.duration(days=1))
        .otherwise("service_date")
        .alias("service_date"),
    )
    leg_of_tap, legs = alightings.build_legs(b)
    row = {t: i for i, t in enumerate(b["transaction_id"])}
    leg = {t: legs.row(int(leg_of_tap[row[t]]), named=True) for t in ("t01", "t13", "t07", "t05")}
    assert leg["t01"] == leg["t13"]  # one leg
    assert (leg["t01"]["next_stop_id"], leg["t01"]["n_legs"]) == ("C", 2)
    assert (leg["t05"]["next_stop_id"], leg["t05"]["home_stop_id"], leg["t05"]["n_legs"]) == (
        None,
        "A",
        2,
    )
    assert (leg["t07"]["next_stop_id"], leg["t07"]["home_stop_id"], leg["t07"]["n_legs"]) == (
        None,
        "B",
        1,
    )
    assert legs["leg_id"].to_list() == list(range(legs.height))
