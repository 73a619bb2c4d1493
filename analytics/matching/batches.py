"""The partition step of matching and the pool that runs it: pings of a batch of vehicles ->
runs, track and breakdown stands.

A day's pings are cut into batches by a hash of the vehicle (a vehicle is never split); each
batch is cleaned, referenced on the shapes and cut into runs (`match_vehicles`). Batches run
two at a time in threads (Polars and the compiled kernels release the GIL), or in a `spawn`
process pool when `workers > 1`; each worker reads the day's built network once, from a file
(`to_network_file`).
"""

from __future__ import annotations

import pickle
import sys
from collections import deque
from collections.abc import Callable, Iterator
from concurrent.futures import Executor, Future
from functools import lru_cache
from pathlib import Path

import numpy as np
import polars as pl
from pyproj import Transformer

from analytics.matching.breakdowns import find_stands
from analytics.matching.clean import clean_pings
from analytics.matching.network import Network
from analytics.matching.options import ANY_GAP, GapCredit, MatchOptions
from analytics.matching.project import project_pings
from analytics.matching.runs import build_runs
from core.errors import InputError

PING_OPTIONAL: dict[str, pl.DataType] = {
    "event_code": pl.String(),
    "reported_trip_id": pl.String(),
    "lat": pl.Float64(),
    "lon": pl.Float64(),
}
"""ping columns the partition steps read when present (null when not)"""
STORED_PING_COLUMNS = ("ping_id", "vehicle_id", "event_at", *PING_OPTIONAL)
"""the columns of `vehicle_locations` matching reads (a day of a large city is ~10 M rows:
the others would be a third of its memory)"""
PING_COLUMNS = (*STORED_PING_COLUMNS, "x_m", "y_m")
"""the ping columns the partition steps read (positions projected, or projected by them)"""


@lru_cache(maxsize=4)
def _to_metres_transformer(crs_epsg: int) -> Transformer:
    """The WGS 84 -> `crs_epsg` transformer, made once per run (pyproj >= 3.1: one object is
    safe to share between threads; it makes its PROJ state once in each thread that uses it).
    Making it cost ~7 ms a batch, ~30 ms a day of 4 batches."""
    return Transformer.from_crs(4326, crs_epsg, always_xy=True)


def to_metres(pings: pl.DataFrame, crs_epsg: int) -> pl.DataFrame:
    """Add `x_m`, `y_m` (feed CRS, metres) from lat/lon, vectorised with pyproj."""
    tr = _to_metres_transformer(crs_epsg)
    x, y = tr.transform(pings["lon"].to_numpy(), pings["lat"].to_numpy())
    return pings.with_columns(pl.Series("x_m", x), pl.Series("y_m", y))


def match_vehicles(
    pings: pl.DataFrame,
    network: Network,
    options: MatchOptions,
    breakdown_stop_min_s: float | None = None,
    crs_epsg: int | None = None,
    gap_credit: GapCredit = ANY_GAP,
) -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame]:
    """The partition step for a batch of vehicles: clean, reference on shapes, cut into runs.

    Returns (runs, track, stands): `stands` is the batch's breakdown evidence (`find_stands`;
    empty when `breakdown_stop_min_s` is None), so the batch's pings can be dropped after it.
    `pings` needs ping_id, vehicle_id, event_at, and x_m, y_m or lat, lon (projected here to
    `crs_epsg`). `gap_credit`: which GPS silences inside a run are credited (the profile's;
    by default every one).
    """
    if "x_m" not in pings.columns:
        if crs_epsg is None:
            raise InputError(
                "pings without x_m/y_m and no CRS to project their lat/lon to",
                where="pings, columns x_m/y_m",
                hint="pass crs_epsg (the feed's metric CRS, feed_versions.crs_epsg)",
            )
        pings = to_metres(pings, crs_epsg)
    for name, dtype in PING_OPTIONAL.items():
        if name not in pings.columns:
            pings = pings.with_columns(pl.lit(None, dtype).alias(name))
    clean = clean_pings(pings, options).filter(~pl.col("is_outlier"))
    clean = clean.with_row_index("row").with_columns(pl.col("row").cast(pl.Int64))
    cand = project_pings(
        clean["x_m"].to_numpy(),
        clean["y_m"].to_numpy(),
        clean["t_s"].to_numpy(),
        clean["vehicle_rank"].to_numpy(),
        network,
        options,
    )
    runs, track = build_runs(clean, cand, network, options, gap_credit)
    keep = [
        "vehicle_id",
        "vehicle_rank",
        "ping_id",
        "t_s",
        "x_m",
        "y_m",
        "lat",
        "lon",
        "event_code",
    ]
    min_s = float("inf") if breakdown_stop_min_s is None else breakdown_stop_min_s
    stands = find_stands(clean.select(keep), network, options, min_s)
    return runs, track, stands


_WORKER: dict[str, object] = {}
BATCH_THREADS = 2
"""batches matched at once in a process (threads): the partition steps are single-threaded
for long stretches (small Polars steps, compiled kernels), so two keep two cores busy"""


def end_with_parent() -> None:
    """Linux: have the kernel send SIGTERM to this worker when the process that started it
    dies, however it dies (a `kill -9` of `pontual match --workers 2` left its workers running,
    holding memory and CPU). Elsewhere a no-op."""
    if not sys.platform.startswith("linux"):
        return
    import ctypes
    import os
    import signal

    pr_set_pdeathsig = 1  # <linux/prctl.h>
    ctypes.CDLL(None, use_errno=True).prctl(pr_set_pdeathsig, signal.SIGTERM)
    if os.getppid() == 1:  # the parent died before the line above: nobody will ask for us
        os._exit(1)


def to_network_file(network: Network, folder: Path) -> Path:
    """`network` pickled into a file in `folder`, for the pool's workers to read at start.

    Why not the pool's `initargs`: those travel in the start-up data that the parent writes
    into the new worker's pipe. Past the pipe's 64 KiB buffer, CPython's spawn blocks until the
    worker reads it, while itself holding the pipe's read end open: a worker that died before
    reading (killed for memory, or unable to start) left the parent blocked for good. With a
    path instead of the network the write never blocks, and the pool reports the dead worker
    (`BrokenProcessPool`)."""
    path = folder / "network.pickle"
    with path.open("wb") as out:
        pickle.dump(network, out, protocol=pickle.HIGHEST_PROTOCOL)
    return path


def init_worker(
    network: Network | Path | None,
    options: MatchOptions,
    min_s: float,
    crs_epsg: int,
    gap_credit: GapCredit = ANY_GAP,
) -> None:
    """A pool worker's start: `network` itself, or the file `to_network_file` wrote it to."""
    end_with_parent()
    if isinstance(network, Path):
        with network.open("rb") as source:
            network = pickle.load(source)  # written by this run's parent, just before
    _WORKER["network"] = network
    _WORKER["options"] = options
    _WORKER["min_s"] = min_s
    _WORKER["crs_epsg"] = crs_epsg
    _WORKER["gap_credit"] = gap_credit


def work_batch(pings: pl.DataFrame) -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame]:
    return match_vehicles(
        pings,
        _WORKER["network"],  # type: ignore[arg-type]
        _WORKER["options"],  # type: ignore[arg-type]
        _WORKER["min_s"],  # type: ignore[arg-type]
        _WORKER["crs_epsg"],  # type: ignore[arg-type]
        _WORKER["gap_credit"],  # type: ignore[arg-type]
    )


def map_bounded(
    pool: Executor,
    work: Callable[[pl.DataFrame], tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame]],
    batches: Iterator[pl.DataFrame],
    in_flight: int,
) -> list[tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame]]:
    """`work` over the batches in the pool, in order, with at most `in_flight` submitted."""
    pending: deque[Future[tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame]]] = deque()
    results = []
    for batch in batches:
        pending.append(pool.submit(work, batch))
        if len(pending) >= in_flight:
            results.append(pending.popleft().result())
    results.extend(f.result() for f in pending)
    return results


def batch_codes(pings: pl.DataFrame, n_batches: int) -> pl.Series:
    """The batch (0 .. n_batches - 1) of each ping, by a hash of its vehicle (never split)."""
    return pings["vehicle_id"].hash() % max(n_batches, 1)


def cut_batches(pings: pl.DataFrame, n_batches: int) -> Iterator[pl.DataFrame]:
    """The pings of each batch (`batch_codes`), one at a time, rows in their input order.

    Each batch is gathered by its row positions (one stable radix sort of the codes for the
    day) and only the columns the partition steps read: a filter per batch scans the whole
    day's frame every time, about 7x the cost on a day of 11 M pings.
    """
    codes = batch_codes(pings, n_batches).to_numpy()
    narrow = np.uint16 if n_batches <= 2**16 else np.uint32
    order = np.argsort(codes.astype(narrow), kind="stable")
    bounds = np.searchsorted(codes[order], np.arange(n_batches + 1))
    needed = pings.select(c for c in PING_COLUMNS if c in pings.columns)
    for b in range(n_batches):
        yield needed[order[bounds[b] : bounds[b + 1]]]
