"""The in-between frames of matching: each step returns exactly its declared frame, with the
values of a noise-free trip computed by hand."""

from __future__ import annotations

import polars as pl
import pytest

from analytics.matching.batches import PING_OPTIONAL, match_vehicles
from analytics.matching.clean import clean_pings
from analytics.matching.frames import (
    BREAKDOWN_STANDS,
    PING_CANDIDATES,
    RUNS,
    STRETCH_POINTS,
    STRETCHES,
    TRACK,
)
from analytics.matching.network import Network, build_network
from analytics.matching.options import MatchOptions
from analytics.matching.project import project_pings
from analytics.matching.stretches import cut_stretches
from core.errors import PontualError
from tests.analytics import synthetic as sy

H = 3600
OPTIONS = MatchOptions()


@pytest.fixture(scope="module")
def network() -> Network:
    trips, stop_times = sy.schedule([("A1", "S1", "B1", 8 * H)])
    return build_network(sy.shapes(), trips, stop_times, sy.stops(), OPTIONS)


def _pings() -> pl.DataFrame:
    """V1 stands at x = 0 from 7:56, departs at 8:01:00 along S1 (8 m/s, 20 s at each stop
    every 500 m) and reaches x = 5 000 at 8:14:25 (60 + 10 x 62.5 + 9 x 20 s); no noise."""
    return sy.drive("V1", [("S1", 8 * H + 60, None, 0)], sigma_m=0.0)


def test_each_step_returns_its_declared_frame(network: Network) -> None:
    pings = _pings().with_columns(pl.lit(None, t).alias(c) for c, t in PING_OPTIONAL.items())
    clean = (
        clean_pings(pings, OPTIONS).with_row_index("row").with_columns(pl.col("row").cast(pl.Int64))
    )
    cand = project_pings(
        clean["x_m"].to_numpy(),
        clean["y_m"].to_numpy(),
        clean["t_s"].to_numpy(),
        clean["vehicle_rank"].to_numpy(),
        network,
        OPTIONS,
    )
    assert cand.schema == PING_CANDIDATES.polars_schema
    # every ping lies on S1, the only shape of the day, at its own x
    assert cand.height == clean.height
    assert (cand["dist_m"] - clean["x_m"]).abs().max() < 1e-6  # type: ignore[operator]
    t = pl.col("t_s")
    stretch_pings = clean.with_columns(
        pl.col("vehicle_rank").cast(pl.Int64),
        (t - t.shift(1)).alias("dt_prev_s"),
        (t.shift(-1) - t).alias("dt_next_s"),
    )
    stretches, points = cut_stretches(cand, stretch_pings, network, OPTIONS)
    assert stretches.schema == STRETCHES.polars_schema
    assert points.schema == STRETCH_POINTS.polars_schema
    # one stretch: from the departure anchor (the last ping at x = 0, 8:01:00) to the
    # arrival anchor (the first at x = 5 000, 8:14:30), the whole itinerary run
    row = stretches.row(0, named=True)
    assert stretches.height == 1
    assert (row["is_departed"], row["is_arrived"]) == (True, True)
    assert (row["start_dist_m"], row["end_dist_m"], row["distance_run_m"]) == (0.0, 5000.0, 5000.0)
    kinds = points.filter(pl.col("stretch_index") == row["stretch_index"])["point_kind"]
    assert (kinds[0], kinds[-1], kinds.n_unique()) == (0, 2, 3)


def test_a_batch_returns_declared_runs_track_and_stands(network: Network) -> None:
    runs, track, stands = match_vehicles(_pings(), network, OPTIONS)
    assert runs.schema == RUNS.polars_schema
    assert track.schema == TRACK.polars_schema
    assert stands.schema == BREAKDOWN_STANDS.polars_schema
    run = runs.row(0, named=True)
    ref = sy.REF.timestamp() + 8 * H
    assert runs.height == 1
    assert (run["run_index"], run["shape_id"], run["coverage_ratio"]) == (0, "S1", 1.0)
    assert run["started_s"] - ref == pytest.approx(60.0)
    assert run["ended_s"] - ref == pytest.approx(865.0)
    # pings every 30 s from 7:56:00 (id 1): 8:01:00 is id 11, 8:14:30 id 38
    assert (run["first_ping_id"], run["last_ping_id"], run["n_pings"]) == (11, 38, 28)
    assert track["ping_id"].to_list() == list(range(11, 39))
    assert track["prog_m"].is_sorted() and track["prog_m"][-1] == 5000.0
    assert stands.height == 0  # it never stood away from a stop or terminal


def test_a_batch_without_pings_returns_the_declared_empty_frames(network: Network) -> None:
    runs, track, stands = match_vehicles(_pings().clear(), network, OPTIONS)
    assert (runs.height, track.height, stands.height) == (0, 0, 0)
    assert runs.schema == RUNS.polars_schema
    assert track.schema == TRACK.polars_schema
    assert stands.schema == BREAKDOWN_STANDS.polars_schema


def test_a_frame_missing_a_required_column_is_refused(network: Network) -> None:
    runs, _, _ = match_vehicles(_pings(), network, OPTIONS)
    with pytest.raises(PontualError, match="started_s"):
        RUNS.conform(runs.drop("started_s"))
    with pytest.raises(PontualError, match="nulls in required columns"):
        RUNS.conform(runs.with_columns(pl.lit(None, pl.Float64).alias("ended_s")))
