"""Partitions matched in a process pool, or in a process's batch threads, give the same day as
one batch in one process (issue 5: partitions run in parallel; the pool only changes where the
work runs, never the result)."""

from __future__ import annotations

from pathlib import Path

import polars as pl
from polars.testing import assert_frame_equal

from analytics.matching.day import match_day
from analytics.matching.options import MatchOptions
from core.profile import load_profile
from sample_data.simulate import default_options, simulate
from tests.analytics.simulated_day import read_simulated_day


def test_two_workers_and_batch_threads_match_the_day_as_one_batch(tmp_path: Path) -> None:
    simulate(default_options(days=1, write_text_avl=False), tmp_path)
    truth = pl.read_parquet(tmp_path / "truth" / "trips.parquet")
    schedule, pings, incidents = read_simulated_day(tmp_path, truth["service_date"][0])
    profile = load_profile("bento-goncalves-2021")
    # small batches, so both workers (and both threads of one process) get several and
    # results come back out of batch order
    whole = match_day(pings, schedule, incidents, profile, MatchOptions(), batch_pings=10**9)
    one = match_day(pings, schedule, incidents, profile, MatchOptions(), batch_pings=20_000)
    two = match_day(
        pings, schedule, incidents, profile, MatchOptions(), workers=2, batch_pings=20_000
    )
    assert one.trip_outcomes.height == truth.height
    for name in ("trips_performed", "stop_visits", "trip_outcomes", "breakdowns"):
        key = [
            c
            for c in ("trip_id", "vehicle_id", "run_index", "stop_sequence", "started_at")
            if c in getattr(one, name).columns
        ]
        for other in (one, two):
            assert_frame_equal(
                getattr(whole, name).sort(key, nulls_last=True),
                getattr(other, name).sort(key, nulls_last=True),
            )
