"""`pontual match --from DATE --to DATE`: match pings to scheduled trips, day by day.

Writes trips_performed, stop_visits, trip_outcomes, breakdowns and headway_observations,
replacing the rows of each day it matches (re-running a day is idempotent).

`--engine spark --lake PATH [--master local[2] | spark://host:7077]` runs the same functions as
Spark jobs over a lake (`pontual export parquet`) and writes the days' partitions of the lake
instead of the store file (analytics/engines/spark.py).
"""

from __future__ import annotations

import argparse
import os
from datetime import date, timedelta

from core.errors import ConfigError
from pontual.context import Context
from pontual.messages import gettext
from pontual.verbs.arguments import add_engine_arguments, print_spark_summary, service_date


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
    add_engine_arguments(p)
    p.add_argument(
        "--batch-pings",
        type=int,
        default=150_000,
        help="pings per vehicle batch, the unit of work (default 150000)",
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace, ctx: Context) -> int:
    from rich.table import Table

    from analytics.matching.batches import BATCH_THREADS
    from analytics.matching.day import DERIVED_TABLES, run_match_days
    from analytics.matching.options import MatchOptions
    from core.kernel_cache import announce_if_cold

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
    lake = args.lake or ctx.settings.lake_path
    if args.engine == "spark":
        if lake is None:
            raise ConfigError(
                "the spark engine reads and writes a Parquet lake: --lake is missing",
                where="command line, field --lake",
                hint="write the lake with `pontual export parquet --lake PATH` and pass --lake PATH",
            )
        return _run_spark(args, ctx, days, str(lake))
    if args.lake is not None:
        raise ConfigError(
            "--lake goes with --engine spark (the local engine writes the store file)",
            where="command line, field --lake",
            hint="add --engine spark",
        )
    summary = Table(gettext("day"), *DERIVED_TABLES)
    with ctx.store() as store:
        from core.lake import check_not_archived

        check_not_archived(store, days[0], days[-1])  # its pings are in the lake (ADR 0099)
        # a pipeline: while a day's batches run, the day before is assembled, the next
        # day read and the one before written (ADR 0005 addenda)
        matched = run_match_days(store, days, ctx.profile, MatchOptions(), workers=max(1, workers))
        month = None
        for day, written in ctx.progress(matched, gettext("matching"), total=len(days)):
            summary.add_row(day.isoformat(), *(str(written[t]) for t in DERIVED_TABLES))
            if month is not None and day.strftime("%Y-%m") != month:
                # days come committed and in order: the month before is finished, so its
                # snapshot files are written while the next month is matched (ADR 0104)
                store.write_parts_ahead({month})
            month = day.strftime("%Y-%m")
    if not ctx.settings.quiet:
        ctx.console.print(summary)
    return 0


def _run_spark(args: argparse.Namespace, ctx: Context, days: list[date], lake: str) -> int:
    from pathlib import Path

    from analytics.engines.spark import match_days_on_spark, start_session
    from analytics.matching.options import MatchOptions

    if not Path(lake).is_dir():
        raise ConfigError(
            "lake not found",
            where=lake,
            hint="write one with `pontual export parquet --lake PATH`",
        )
    if args.batch_pings < 1:
        raise ConfigError("--batch-pings must be at least 1", where="command line, --batch-pings")
    spark = start_session(args.master, executor_memory=args.executor_memory)
    try:
        summary = match_days_on_spark(
            spark, lake, days, ctx.profile, MatchOptions(), batch_pings=args.batch_pings
        )
    finally:
        spark.stop()
    print_spark_summary(ctx, summary)
    return 0
