"""The store's tap reader (`job.read_tap_inputs`): one read of the taps of several periods (a
year and its months) gives each period the counts, integrations and fare suspects its own taps
give tap by tap (`match_integrations`, `compute_fare_violations`)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from polars.testing import assert_frame_equal

from analytics.indices.fares_charged import compute_fare_violations
from analytics.indices.job import TAP_COLUMNS, read_tap_inputs
from analytics.indices.ridership import match_integrations
from core.periods import local_bounds, parse_period, range_period
from core.profile import load_profile
from core.store import Store

BG = load_profile("bento-goncalves-2021")
CGS = load_profile("campina-grande-do-sul-2003")
FEB, MAR = parse_period("2026-02"), parse_period("2026-03")
BOTH = range_period(FEB.start, MAR.end)
VEHICLES = pl.DataFrame(
    {
        "vehicle_id": ["V1", "V2", "V3", "S1"],
        "service_area": "urban",
        "service_class": ["conventional", "conventional", "conventional", "selective"],
    }
)
AMOUNTS = {"full": 5.20, "vale_transporte": 5.20, "student": 2.60, "integration": 2.60}


def _taps(n: int, seed: int) -> pl.DataFrame:
    """Random taps of 40 cards over the last days of February and the first of March (local
    midnight of the month's end inside many journeys), some unknown cards, lines and vehicles,
    some taps of one card at one instant (two validators), a few charged a centavo over and
    students on the selective vehicle."""
    rng = np.random.default_rng(seed)
    # local midnight of 1 March is 03:00 UTC; the taps span 26 Feb 03:00 to 4 Mar 03:00 UTC
    first = datetime(2026, 2, 26, 3, tzinfo=UTC)
    seconds = np.sort(rng.integers(0, 6 * 86400, n))
    card = rng.integers(0, 40, n)
    route = rng.integers(0, 5, n)
    vehicle = rng.integers(0, 5, n)
    classes = rng.choice(["full", "vale_transporte", "student", "integration", "elderly"], n)
    over = rng.random(n) < 0.01
    frame = pl.DataFrame(
        {
            "transaction_id": [f"T{i:05d}" for i in rng.permutation(n)],
            "event_at": [first + timedelta(seconds=int(s)) for s in seconds],
            "vehicle_id": [None if v == 0 else ["V1", "V2", "V3", "S1"][v - 1] for v in vehicle],
            "route_id": [None if r == 0 else f"R{r}" for r in route],
            "card_hash": [None if c == 0 else f"{c:064x}" for c in card],
            "fare_class": classes,
            "amount": [
                AMOUNTS.get(c, 0.0) + (0.01 if o else 0.0)
                for c, o in zip(classes.tolist(), over.tolist(), strict=True)
            ],
            "operator_id": "O1",
        },
        schema_overrides={"event_at": pl.Datetime("us", "UTC")},
    )
    # a second validator's tap of the same card at the same instant, on another line
    twins = frame.filter(pl.col("card_hash").is_not_null()).sample(40, seed=seed)
    twins = twins.with_columns(
        ("U" + pl.col("transaction_id")).alias("transaction_id"),
        pl.lit("R9").alias("route_id"),
    )
    # a journey across the months' bound: 23:50 on 28 February, local time, then 00:10
    across = frame.head(2).with_columns(
        pl.Series("transaction_id", ["X1", "X2"]),
        pl.Series(
            "event_at",
            [datetime(2026, 3, 1, 2, 50, tzinfo=UTC), datetime(2026, 3, 1, 3, 10, tzinfo=UTC)],
            dtype=pl.Datetime("us", "UTC"),
        ),
        pl.Series("route_id", ["R1", "R2"]),
        pl.lit("f" * 64).alias("card_hash"),
        pl.lit("full").alias("fare_class"),
        pl.lit(5.20).alias("amount"),
    )
    return pl.concat([frame, twins, across]).sample(fraction=1.0, shuffle=True, seed=seed)


def _store(tmp_path: Path, taps: pl.DataFrame) -> Path:
    path = tmp_path / "pontual.duckdb"
    with Store.open(path) as store:
        store.append(
            "fare_transactions",
            taps.with_columns(
                pl.lit("test").alias("source"),
                pl.lit(datetime(2026, 3, 5, tzinfo=UTC)).alias("ingested_at"),
            ),
        )
    return path


def _counted(taps: pl.DataFrame, profile: object) -> pl.DataFrame:
    return (
        match_integrations(taps, profile)  # type: ignore[arg-type]
        .group_by("route_id", "fare_class", "is_integration")
        .agg(pl.len().cast(pl.Int64).alias("n_taps"))
        .sort("route_id", "fare_class", "is_integration", nulls_last=True)
    )


def test_one_read_gives_each_period_what_its_own_taps_give(tmp_path: Path) -> None:
    taps = _taps(6000, seed=11)
    path = _store(tmp_path, taps)
    periods = [FEB, MAR, BOTH]
    with Store.open(path, read_only=True) as store:
        got = read_tap_inputs(store, periods, BG, VEHICLES)
    tz = BG.general.timezone.value
    crossing = 0
    for period, inputs in zip(periods, got, strict=True):
        start, end = local_bounds(period, tz)
        own = taps.filter((pl.col("event_at") >= start) & (pl.col("event_at") < end))
        # the same integrations as chaining the period's own taps (journeys are cut at the
        # period's bounds: a month's first tap starts a journey)
        assert_frame_equal(inputs.counts, _counted(own, BG))
        # every tap charged against the law is among the suspects, and few others are
        found = compute_fare_violations(inputs.suspects, VEHICLES, BG).sort("transaction_id")
        truth = compute_fare_violations(own, VEHICLES, BG).sort("transaction_id")
        assert truth.height > 10
        assert_frame_equal(found, truth)
        assert inputs.suspects.height < own.height / 5
        assert inputs.suspects.columns == list(TAP_COLUMNS)
        crossing += int(inputs.counts["n_taps"].sum())
    # the two months hold every tap of the span, and chaining them apart differs from the span
    assert crossing == 2 * got[2].counts["n_taps"].sum()
    month_integrations = sum(
        int(g.counts.filter(pl.col("is_integration"))["n_taps"].sum()) for g in got[:2]
    )
    span_integrations = int(got[2].counts.filter(pl.col("is_integration"))["n_taps"].sum())
    assert month_integrations < span_integrations


def test_a_profile_without_integration_infers_none(tmp_path: Path) -> None:
    taps = _taps(800, seed=3)
    path = _store(tmp_path, taps)
    with Store.open(path, read_only=True) as store:
        (got,) = read_tap_inputs(store, [BOTH], CGS, VEHICLES)
    assert_frame_equal(got.counts, _counted(taps, CGS))
    # only the taps the validator recorded as integrations are integrations
    recorded = got.counts.filter(pl.col("is_integration"))
    assert set(recorded["fare_class"]) == {"integration"}


def test_many_instants_are_read_again_by_a_join_with_the_same_taps(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the ties and the suspects are read again by a filter on the scan when their instants are
    # few (`job.FEW_INSTANTS`), by a semi join when many: the same taps either way
    import analytics.indices.job as job

    taps = _taps(3000, seed=5)
    path = _store(tmp_path, taps)
    with Store.open(path, read_only=True) as store:
        few = read_tap_inputs(store, [FEB, MAR], BG, VEHICLES)
        monkeypatch.setattr(job, "FEW_INSTANTS", 0)
        many = read_tap_inputs(store, [FEB, MAR], BG, VEHICLES)
    for a, b in zip(few, many, strict=True):
        assert_frame_equal(a.counts, b.counts)
        assert_frame_equal(a.suspects.sort("transaction_id"), b.suspects.sort("transaction_id"))
        assert a.suspects.height > 5
