"""`pontual match --from DATE --to DATE`: match pings to scheduled trips, day by day.

Writes trips_performed, stop_visits, trip_outcomes, breakdowns and headway_observations,
replacing the rows of each day it matches (re-running a day is idempotent).
"""

from __future__ import annotations

import argparse
import os
from datetime import timedelta

from core.errors import ConfigError
from pontual.context import Context
from pontual.messages import gettext
from pontual.verbs.arguments import service_date


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "match", help="match AVL pings to scheduled trips: outcomes, stop visits, breakdowns"
    )
    p.add_argument(
        "--from",
        dest="start",
        type=service_date,
        required=True,
        help="first service day (YYYY-MM-DD)",
    )
    p.add_argument("--to", dest="end", type=service_date, help="last service day (default: --from)")
    p.add_argument(
        "--workers",
        type=int,
        help="processes for the vehicle partitions (each runs two batches at once in threads; "
        "default: one per two cores)",
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace, ctx: Context) -> int:
    from rich.table import Table

    from analytics.matching.batches import BATCH_THREADS
    from analytics.matching.day import DERIVED_TABLES, run_match_day
    from analytics.matching.kernel_cache import announce_if_cold
    from analytics.matching.options import MatchOptions

    # each process matches BATCH_THREADS batches at once in threads: a process per pair of
    # cores (on two cores one process with two threads is faster, and lighter, than two)
    workers = args.workers
    if workers is None:
        workers = max(1, (os.cpu_count() or 1) // BATCH_THREADS)
    end = args.end or args.start
    if end < args.start:
        raise ConfigError(
            f"--to {end} is before --from {args.start}",
            where="command line, field --to",
            hint="swap the two dates",
        )
    if not ctx.settings.quiet:
        announce_if_cold()  # one line before the ~30 s pause of the first compilation
    days = [args.start + timedelta(days=i) for i in range((end - args.start).days + 1)]
    summary = Table("dia", *DERIVED_TABLES)
    with ctx.store() as store:
        for day in ctx.progress(days, gettext("matching"), total=len(days)):
            written = run_match_day(
                store, day, ctx.profile, MatchOptions(), workers=max(1, workers)
            )
            summary.add_row(day.isoformat(), *(str(written[t]) for t in DERIVED_TABLES))
    if not ctx.settings.quiet:
        ctx.console.print(summary)
    return 0
