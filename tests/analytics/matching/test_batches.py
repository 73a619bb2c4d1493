"""The batch pool: a day's pings cut into batches by vehicle; partitions matched in a process
pool, or in a process's batch threads, give the same day as one batch in one process (issue 5:
partitions run in parallel; the pool only changes where the work runs, never the result)."""

from __future__ import annotations

import sys
import types
from datetime import UTC, datetime
from pathlib import Path

import polars as pl
import pytest
from polars.testing import assert_frame_equal

from analytics.matching.batches import batch_codes, cut_batches
from analytics.matching.day import match_day
from analytics.matching.options import MatchOptions
from core.errors import PontualError
from core.profile import load_profile
from sample_data.simulate import default_options, simulate
from tests.analytics.simulated_day import SimulatedDay, read_simulated_day


@pytest.fixture(scope="module")
def day(tmp_path_factory: pytest.TempPathFactory) -> tuple[pl.DataFrame, SimulatedDay]:
    """The simulator's truth and its first day, as matching reads them."""
    folder = tmp_path_factory.mktemp("city")
    simulate(default_options(days=1, write_text_avl=False), folder)
    truth = pl.read_parquet(folder / "truth" / "trips.parquet")
    return truth, read_simulated_day(folder, truth["service_date"][0])


def test_two_workers_and_batch_threads_match_the_day_as_one_batch(
    day: tuple[pl.DataFrame, SimulatedDay],
) -> None:
    truth, (schedule, pings, incidents) = day
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


@pytest.mark.timeout(180)
def test_a_worker_that_dies_at_start_is_an_error_not_a_hang(
    day: tuple[pl.DataFrame, SimulatedDay], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # a spawn worker runs the parent's main script first: one that exits makes every worker
    # die before it reads its start-up data (as a Streamlit page script left as `__main__`
    # did in a CI run, where the pool's parent then waited for good)
    script = tmp_path / "exits.py"
    script.write_text("raise SystemExit(1)\n")
    main = types.ModuleType("__main__")
    main.__file__ = str(script)
    monkeypatch.setitem(sys.modules, "__main__", main)
    _, (schedule, pings, incidents) = day
    profile = load_profile("bento-goncalves-2021")
    with pytest.raises(PontualError, match="matching worker process ended") as raised:
        match_day(pings, schedule, incidents, profile, MatchOptions(), workers=2)
    assert raised.value.hint is not None and "--workers 1" in raised.value.hint


def test_batches_never_split_a_vehicle_and_keep_the_input_order() -> None:
    pings = pl.DataFrame(
        {
            "ping_id": list(range(12)),
            "vehicle_id": ["A", "B", "C", "D"] * 3,
            "event_at": [datetime(2026, 3, 2, 11, 0, s, tzinfo=UTC) for s in range(12)],
            "x_m": 0.0,
            "y_m": 0.0,
            "other": 1,  # a column the partition steps do not read
        }
    )
    batches = list(cut_batches(pings, 3))
    assert len(batches) == 3
    codes = batch_codes(pings, 3).to_list()
    for b, batch in enumerate(batches):
        assert batch.columns == ["ping_id", "vehicle_id", "event_at", "x_m", "y_m"]
        want = [i for i in range(12) if codes[i] == b]
        assert batch["ping_id"].to_list() == want
    seen = [set(batch["vehicle_id"]) for batch in batches]
    assert sum(len(s) for s in seen) == 4  # each vehicle in one batch only
