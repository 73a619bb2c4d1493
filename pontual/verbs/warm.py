"""`pontual warm` (not listed in --help): compile matching's kernels into the cache, once.

`make demo` and `make test` run it first so that the ~30 s compilation happens once, with its
notice, instead of inside the first `pontual match` or in every parallel test worker. It runs
the real pipeline (simulate, gtfs load, ingest, match) on a one-day, three-vehicle city in a
temporary folder: every kernel is compiled with the argument types the real runs use. When the
cache is already warm it returns at once.
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from core.errors import PontualError
from pontual.context import Context
from pontual.messages import gettext

WARM_DAY = "2026-03-02"


def register(sub: argparse._SubParsersAction) -> None:
    # no help=: argparse then leaves the verb out of `pontual --help` (a build step, not a task)
    p = sub.add_parser("warm", description="compile the matching kernels into the user cache")
    p.set_defaults(func=run)


def run(args: argparse.Namespace, ctx: Context) -> int:
    from analytics.matching import day  # noqa: F401  (imports every kernel module)
    from core.kernel_cache import CACHE_DIR, announce_if_cold, is_cache_cold
    from pontual.cli import main

    if not announce_if_cold():
        ctx.say(gettext("matching kernels already compiled ({folder})", folder=CACHE_DIR))
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
        ]
        for argv in stages:
            small = ["--vehicles", "3", "--text-days", "1"] if argv[0] == "simulate" else []
            code = main(["--store", store, "--quiet", *argv, *small])
            if code != 0:
                raise PontualError(
                    f"compiling the matching kernels failed at `pontual {' '.join(argv)}`",
                    where=tmp,
                    hint="run `pontual --debug warm` to see why",
                )
    if is_cache_cold():
        ctx.err.print(gettext("warning: some kernels were not compiled by the warm-up day"))
    ctx.say(gettext("matching kernels compiled in {folder}", folder=CACHE_DIR))
    return 0
