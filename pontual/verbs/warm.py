"""`pontual warm` (not listed in --help): compile the analytics' kernels into the cache, once.

`make demo` and `make test` run it first so that the compilation (~30 s for matching's, ~15 s
for crowding's and the indices' tap kernels) happens once, with its notice, instead of inside
the first `pontual match`, `crowding` or `indices`, or in every parallel test worker. It runs
the real pipeline (simulate, gtfs load, ingest, match, crowding, indices) on a one-day,
three-vehicle city in a temporary folder: every kernel is compiled with the argument types the
real runs use. When the cache is already warm it returns at once.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import tempfile
from pathlib import Path

from core.errors import PontualError
from pontual.context import Context
from pontual.messages import gettext

WARM_DAY = "2026-03-02"


def register(sub: argparse._SubParsersAction) -> None:
    # no help=: argparse then leaves the verb out of `pontual --help` (a build step, not a task)
    p = sub.add_parser("warm", description="compile the analytics kernels into the user cache")
    p.set_defaults(func=run)


def run(args: argparse.Namespace, ctx: Context) -> int:
    # every module with kernels, so that the cache check below sees them all
    from analytics.crowding import alightings, loads  # noqa: F401
    from analytics.indices import tap_kernels  # noqa: F401
    from analytics.matching import day  # noqa: F401
    from core.kernel_cache import CACHE_DIR, announce_if_cold, is_cache_cold
    from pontual.cli import main

    if not announce_if_cold():
        ctx.say(gettext("analytics kernels already compiled ({folder})", folder=CACHE_DIR))
        return 0
    with tempfile.TemporaryDirectory(prefix="pontual-warm-") as tmp:
        sample, store = Path(tmp) / "sample", str(Path(tmp) / "warm.duckdb")
        stages = [
            ["simulate", "--out", str(sample), "--start", WARM_DAY, "--days", "1"],
            ["init"],
            ["gtfs", "load", str(sample / "gtfs.zip"), "--from", WARM_DAY, "--to", WARM_DAY],
            ["ingest", "vehicles", str(sample / "vehicles.csv")],
            ["ingest", "avl", str(sample / "avl.parquet")],
            ["match", "--from", WARM_DAY, "--workers", "1"],
            ["ingest", "fares", str(sample / "fares.csv")],
            ["crowding", "--from", WARM_DAY, "--to", WARM_DAY],
            ["indices", "--period", WARM_DAY[:7]],
        ]
        for argv in stages:
            small = ["--vehicles", "3", "--text-days", "1"] if argv[0] == "simulate" else []
            # the warm-up city's results (the indices' tables) are nobody's output
            with contextlib.redirect_stdout(io.StringIO()):
                code = main(["--store", store, "--quiet", *argv, *small])
            if code != 0:
                raise PontualError(
                    f"compiling the analytics kernels failed at `pontual {' '.join(argv)}`",
                    where=tmp,
                    hint="run `pontual --debug warm` to see why",
                )
    if is_cache_cold():
        ctx.err.print(gettext("warning: some kernels were not compiled by the warm-up day"))
    ctx.say(gettext("analytics kernels compiled in {folder}", folder=CACHE_DIR))
    return 0
