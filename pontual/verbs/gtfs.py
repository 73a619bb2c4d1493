"""`pontual gtfs load|validate|schedule`: GTFS feeds into the store, checked first.

- ``gtfs validate PATH``: read and check a feed, print its errors and warnings; exit 2 on errors.
- ``gtfs load PATH [--from D --to D]``: validate, then load it as one feed version in one
  transaction (a refused feed leaves the store untouched) and materialise its scheduled trips.
- ``gtfs schedule --from D --to D``: materialise scheduled trips from the feed in force each day.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING

from core.errors import ConfigError
from pontual.context import Context
from pontual.messages import gettext, translate
from pontual.verbs.arguments import service_date

if TYPE_CHECKING:
    from gtfs.errors import GtfsIssue

# Issues printed in the table before "... and N more" (the full list: `gtfs validate`).
MAX_SHOWN = 40


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("gtfs", help="validate and load GTFS feeds; materialise scheduled trips")
    verbs = p.add_subparsers(dest="gtfs_verb", metavar="ACTION")
    verbs.required = True

    load = verbs.add_parser("load", help="validate a feed (zip or folder) and load it")
    load.add_argument("path", help="GTFS .zip or folder of .txt files")
    load.add_argument(
        "--from", dest="date_from", type=service_date, help="first service day to schedule"
    )
    load.add_argument(
        "--to", dest="date_to", type=service_date, help="last service day to schedule"
    )
    load.add_argument(
        "--stop-shape-max-m",
        type=float,
        default=100.0,
        help="warn of a stop farther than this from its trip's shape, m (default 100, as the "
        "canonical GTFS validator)",
    )
    load.set_defaults(func=run_load)

    check = verbs.add_parser("validate", help="check a feed and list its errors and warnings")
    check.add_argument("path", help="GTFS .zip or folder of .txt files")
    check.add_argument("--all", action="store_true", help="list every issue, not the first 40")
    check.add_argument(
        "--stop-shape-max-m",
        type=float,
        default=100.0,
        help="warn of a stop farther than this from its trip's shape, m (default 100, as the "
        "canonical GTFS validator)",
    )
    check.set_defaults(func=run_validate)

    sched = verbs.add_parser("schedule", help="materialise scheduled trips for a date range")
    sched.add_argument(
        "--from", dest="date_from", type=service_date, required=True, help="YYYY-MM-DD"
    )
    sched.add_argument("--to", dest="date_to", type=service_date, required=True, help="YYYY-MM-DD")
    sched.set_defaults(func=run_schedule)


def print_issues(
    ctx: Context, issues: Sequence[GtfsIssue], *, limit: int | None = MAX_SHOWN
) -> None:
    """The issues as a rich table (errors first), to stderr."""
    if not issues:
        return
    from rich.table import Table

    table = Table(title=gettext("GTFS issues"), show_lines=False)
    for header in ("severity", "file", "line", "column", "message"):
        table.add_column(gettext(header), overflow="fold")
    shown = issues if limit is None else issues[:limit]
    for i in shown:
        style = "red" if i.is_error else "yellow"
        table.add_row(
            f"[{style}]{gettext(i.severity)}[/]",
            i.file,
            "" if i.line is None else str(i.line),
            i.column or "",
            translate(i.message),
        )
    ctx.err.print(table)
    if len(shown) < len(issues):
        ctx.err.print(
            gettext("... and {n} more (`pontual gtfs validate --all`)", n=len(issues) - len(shown))
        )


def run_validate(args: argparse.Namespace, ctx: Context) -> int:
    from gtfs.errors import errors_of
    from gtfs.geography import GeographyLimits, check_stops_on_shapes
    from gtfs.read import read_feed
    from gtfs.schedule import build_geometry
    from gtfs.validate import validate_feed

    t0 = time.perf_counter()
    feed = read_feed(args.path)
    limits = GeographyLimits(stop_shape_max_m=args.stop_shape_max_m)
    issues = validate_feed(feed, limits)
    if not errors_of(issues):
        # stops far from their shapes need the feed's geometry, which only a valid feed has
        issues += check_stops_on_shapes(build_geometry(feed).stop_times, feed, limits)
    print_issues(ctx, issues, limit=None if args.all else MAX_SHOWN)
    n_err = len(errors_of(issues))
    sizes = ", ".join(f"{name} {df.height}" for name, df in feed.tables.items())
    ctx.say(f"{args.path}: {sizes}")
    ctx.say(
        gettext(
            "{n_errors} error(s), {n_warnings} warning(s) in {seconds} s",
            n_errors=n_err,
            n_warnings=len(issues) - n_err,
            seconds=f"{time.perf_counter() - t0:.2f}",
        )
    )
    return 2 if n_err else 0


def run_load(args: argparse.Namespace, ctx: Context) -> int:
    from gtfs.errors import GtfsError
    from gtfs.geography import GeographyLimits
    from ingest.gtfs_feed import load_gtfs

    days = None
    if args.date_from or args.date_to:
        if not (args.date_from and args.date_to):
            raise ConfigError("--from and --to go together", hint="give both service dates")
        days = (args.date_from, args.date_to)
    t0 = time.perf_counter()
    with ctx.store() as store:
        try:
            result = load_gtfs(
                store,
                args.path,
                materialise_days=days,
                limits=GeographyLimits(stop_shape_max_m=args.stop_shape_max_m),
            )
        except GtfsError as exc:
            print_issues(ctx, exc.issues)
            raise
    elapsed = time.perf_counter() - t0
    print_issues(ctx, result.warnings)  # data warnings (stderr): --quiet does not hide them
    if not result.is_new:
        ctx.say(
            gettext(
                "feed {feed_id} is already loaded (same content): nothing to do",
                feed_id=result.feed_id,
            )
        )
        return 0
    counts = ", ".join(f"{name.removeprefix('gtfs_')} {n}" for name, n in result.n_rows.items())
    ctx.say(
        gettext(
            "loaded feed {feed_id} (valid {start} to {end}, EPSG:{epsg}): {counts}",
            feed_id=result.feed_id,
            start=result.valid_from,
            end=result.valid_to,
            epsg=result.crs_epsg,
            counts=counts,
        )
    )
    if result.scheduled_from:
        ctx.say(
            gettext(
                "scheduled trips {start} to {end}: {n}",
                start=result.scheduled_from,
                end=result.scheduled_to,
                n=result.n_scheduled_trips,
            )
        )
    ctx.say(
        gettext("{n} warning(s); {seconds} s", n=len(result.warnings), seconds=f"{elapsed:.2f}")
    )
    return 0


def run_schedule(args: argparse.Namespace, ctx: Context) -> int:
    from ingest.gtfs_feed import materialise_schedule

    if args.date_to < args.date_from:
        raise ConfigError("--to is before --from", hint="give the first service day, then the last")
    t0 = time.perf_counter()
    with ctx.store() as store:
        written = materialise_schedule(store, args.date_from, args.date_to)
    if not written:
        ctx.say(
            gettext(
                "no loaded feed covers {start} to {end}: nothing scheduled",
                start=args.date_from,
                end=args.date_to,
            )
        )
        return 0
    for feed_id, n in written.items():
        ctx.say(gettext("feed {feed_id}: {n} scheduled trips", feed_id=feed_id, n=n))
    ctx.say(f"{time.perf_counter() - t0:.2f} s")
    return 0
