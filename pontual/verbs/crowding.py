"""`pontual crowding --from D --to D`: boardings, inferred alightings, load profiles and the
crowding summary (BG art. 59) for a range of service days.

Needs the matched stop visits (`pontual match`) and the fare taps of those days; replaces the
days' rows of tap_placements, trip_loads, trip_crowding and crowding_summary.

`--engine spark --lake PATH [--master local[2] | spark://host:7077]` computes the same tables
one service day per Spark group over a lake and writes the days' partitions of the lake
(analytics/engines/spark_crowding.py).
"""

from __future__ import annotations

import argparse
import time
from datetime import date
from typing import TYPE_CHECKING

from core.errors import ConfigError
from pontual.context import Context
from pontual.messages import gettext
from pontual.verbs.arguments import (
    add_engine_arguments,
    engine_lake,
    print_spark_summary,
    service_date,
)

if TYPE_CHECKING:
    from analytics.crowding.job import CrowdingRun

# Line-hours listed in the "worst" table.
MAX_SHOWN = 10


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "crowding", help="place taps, infer alightings, compute loads and crowding (art. 59)"
    )
    p.add_argument("--from", dest="date_from", type=service_date, required=True, help="YYYY-MM-DD")
    p.add_argument("--to", dest="date_to", type=service_date, help="YYYY-MM-DD (default: --from)")
    add_engine_arguments(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace, ctx: Context) -> int:
    from analytics.crowding.job import run_crowding

    start: date = args.date_from
    end: date = args.date_to or start
    if end < start:
        raise ConfigError(
            f"period ends ({end}) before it starts ({start})",
            where="--from/--to",
            hint="give --to on or after --from",
        )
    lake = engine_lake(args, ctx.settings.lake_path)
    if lake is not None:
        return _run_spark(args, ctx, start, end, lake)
    profile = ctx.profile
    began = time.perf_counter()
    with ctx.store() as store:
        from core.lake import check_not_archived

        check_not_archived(store, start, end)  # its taps are in the lake (ADR 0099)
        result = run_crowding(store, profile, start, end)
    elapsed = time.perf_counter() - began
    print_result(
        ctx,
        result,
        profile.crowding.standees_max_per_m2.value,
        elapsed,
        profile.general.timezone.value,
    )
    return 0


def _run_spark(args: argparse.Namespace, ctx: Context, start: date, end: date, lake: str) -> int:
    from datetime import timedelta

    from analytics.engines.spark import start_session
    from analytics.engines.spark_crowding import crowd_days_on_spark

    days = [start + timedelta(days=i) for i in range((end - start).days + 1)]
    spark = start_session(
        args.master, app_name="pontual-crowding", executor_memory=args.executor_memory
    )
    try:
        summary = crowd_days_on_spark(spark, lake, days, ctx.profile)
    finally:
        spark.stop()
    print_spark_summary(ctx, summary)
    return 0


def print_result(
    ctx: Context,
    result: CrowdingRun,
    limit_per_m2: float,
    elapsed_s: float,
    timezone: str = "America/Sao_Paulo",
) -> None:
    """Counts of placed and unplaced taps (with why), linked share, runs over the limit; hours
    in the profile's local time (`timezone`), numbers in pt-BR. Nothing under --quiet (which
    prints only errors): its tables, the catalogue's texts and Rich are then not made."""
    if ctx.settings.quiet:
        return
    from zoneinfo import ZoneInfo

    import polars as pl
    from rich.table import Table

    from analytics.crowding.alightings import UNLINKED_REASONS
    from analytics.crowding.boardings import TRACE_REASONS, UNPLACED_REASONS
    from core.pt_br import to_date, to_number, to_percent

    counts = result.tap_counts
    n = int(counts["n"].sum())
    placed = counts.filter(pl.col("placement") == "placed")
    n_placed = int(placed["n"].sum())
    ctx.say(
        gettext(
            "{n} taps in {seconds} s; {placed} boardings placed ({share})",
            n=to_number(n, 0),
            seconds=to_number(elapsed_s),
            placed=to_number(n_placed, 0),
            share=to_percent(n_placed / n if n else 0),
        )
    )
    if n > n_placed:
        why = Table(gettext("taps not placed"), "n", gettext("reason"))
        unplaced = (
            counts.filter(pl.col("placement") != "placed")
            .group_by("placement")
            .agg(pl.col("n").sum().alias("len"))
        )
        for code, count in unplaced.sort("len", descending=True).iter_rows():
            why.add_row(code, to_number(count, 0), UNPLACED_REASONS.get(code, ""))
        ctx.console.print(why)
    if result.trace_placements is not None:
        trace = result.trace_placements.group_by("trace").len().sort("len", descending=True)
        ctx.say(
            gettext(
                "no recognised trip, on the vehicle's GPS trace: {counts}",
                counts="; ".join(
                    f"{c} {n} ({TRACE_REASONS.get(c, '')})" for c, n in trace.iter_rows()
                ),
            )
        )
    if n_placed:
        methods = (
            placed.group_by("alighting_method")
            .agg(pl.col("n").sum().alias("len"))
            .sort("len", descending=True)
        )
        ctx.say(
            gettext(
                "alightings: {methods}",
                methods=", ".join(
                    f"{m} {c} ({100 * c / n_placed:.1f} %)" for m, c in methods.iter_rows()
                ),
            )
        )
        unlinked = (
            placed.filter(pl.col("alighting_method") == "unlinked")
            .group_by("reason")
            .agg(pl.col("n").sum().alias("len"))
        )
        if unlinked.height:
            codes = {v: k for k, v in UNLINKED_REASONS.items()}
            for reason, count in unlinked.sort("len", descending=True).iter_rows():
                ctx.say(
                    "  "
                    + gettext(
                        "not linked ({code}): {n} — {reason}",
                        code=codes.get(reason, "?"),
                        n=count,
                        reason=reason,
                    )
                )
    trips = result.trip_crowding
    over = trips.filter(pl.col("is_over_limit").fill_null(False)).height
    ctx.say(
        gettext(
            "{n} trips with a load profile; {over} above {limit} standing pass/m² ({share})",
            n=to_number(trips.height, 0),
            over=to_number(over, 0),
            limit=to_number(limit_per_m2, 0 if float(limit_per_m2).is_integer() else 1),
            share=to_percent(over / trips.height if trips.height else 0),
        )
    )
    summary = result.crowding_summary.filter("is_action_required")
    if summary.height == 0:
        return
    ctx.say(
        gettext(
            "{n} line × direction × hour need more trips or bigger vehicles (art. 59 §1); "
            "{extra} extra trips in all",
            n=summary.height,
            extra=summary["extra_trips_needed"].sum(),
        )
    )
    table = Table(
        gettext("date"),
        gettext("line"),
        gettext("direction"),
        gettext("hour (local)"),
        gettext("trips (data)"),
        gettext("over the limit (trips)"),
        gettext("worst stretch"),
        gettext("mean standing pass/m²"),
        gettext("extra trips"),
        gettext("bigger vehicle"),
        title=gettext("Where and when it is crowded"),
    )
    worst = summary.sort("over_limit_share", "max_standees_per_m2", descending=True).head(MAX_SHOWN)
    for row in worst.iter_rows(named=True):
        table.add_row(
            to_date(row["service_date"]),
            row["route_id"],
            str(row["direction_id"]),
            row["hour_at"].astimezone(ZoneInfo(timezone)).strftime("%H:%M"),
            str(row["n_trips"]),
            str(row["n_over_limit"]),
            f"{row['worst_from_stop_id']} → {row['worst_to_stop_id']}",
            ""
            if row["worst_mean_standees_per_m2"] is None
            else to_number(row["worst_mean_standees_per_m2"]),
            str(row["extra_trips_needed"]),
            row["larger_vehicle_type"] or "",
        )
    ctx.console.print(table)
