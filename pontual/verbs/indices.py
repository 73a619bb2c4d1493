"""`pontual indices`: the quality indices of a period, written to the store and printed.

pontual indices --period 2026-03            # a month
pontual indices --period 2026 --grade-history notas.csv
pontual indices --period 2026 --months      # each month, then the year, in one run
pontual indices --from 2026-03-01 --to 2026-03-15 --format csv
pontual indices --period 2026-03 --trace icv_punctuality --scope line:T10
pontual indices --period 2026-03 --engine spark --lake lake/   # read and write a lake

With `--engine spark` the period roll-up runs on DuckDB over the lake's partitions and its
tables are filed in the lake (analytics/engines/lake_indices.py): no index is a per-day step
Spark could group (docs/adr/0080-engines-over-the-lake.md), so no Spark job is started.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import TYPE_CHECKING

from core.errors import ConfigError
from pontual.context import Context
from pontual.messages import gettext
from pontual.verbs.arguments import engine_lake

if TYPE_CHECKING:
    import polars as pl

    from analytics.indices.job import IndexResults
    from core.periods import Period
    from core.profile import Profile
    from core.store import Store

RATIO_UNITS = {"ratio"}
DEFAULT_SHOWN = (
    "trips_programmed",
    "trips_run",
    "trips_suppressed",
    "trips_late",
    "trips_early",
    "icv_fulfilment",
    "icv_punctuality",
    "breakdowns_per_10000_km",
    "icv_score",
    "km_efficiency",
    "ipk",
    "ipk_equivalent",
    "technical_tariff_brl",
    "iqs",
    "annual_score",
)


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "indices",
        help="ICV, IQS, km, IPK, fleet, grades and suggested infractions of a period",
        description="Computes the quality indices of a period from the matched trips, writes "
        "`indicators`, `fleet_days`, `annual_grades` (year periods) and "
        "`suggested_infractions`, and prints them.",
    )
    p.add_argument("--period", help="YYYY-MM (month), YYYY (year) or YYYY-MM-DD..YYYY-MM-DD")
    p.add_argument("--from", dest="date_from", help="first service day (YYYY-MM-DD)")
    p.add_argument("--to", dest="date_to", help="last service day (YYYY-MM-DD)")
    p.add_argument("--format", choices=("table", "json", "csv"), default="table")
    p.add_argument(
        "--scope",
        help="show one scope: system, operator[:ID], lot[:ID] or line[:ID] (default: system "
        "and operators)",
    )
    p.add_argument("--all", action="store_true", help="print every indicator, not the main ones")
    p.add_argument("--trace", metavar="INDICATOR", help="list the trips (and pings) behind a value")
    p.add_argument("--pings", action="store_true", help="with --trace: list the pings too")
    p.add_argument("--cost-per-km", type=float, help="operating cost per km (R$) for the tariff")
    p.add_argument("--costs", help="CSV operator_id,month,cost_per_km (R$/km) for the tariff")
    p.add_argument("--population", help="CSV lat,lon,people,area for stop coverage (CGS art. 4)")
    p.add_argument("--grade-history", help="CSV scope,scope_id,year,grade of earlier years")
    p.add_argument("--no-write", action="store_true", help="compute and print only")
    p.add_argument(
        "--months",
        action="store_true",
        help="with a year --period: each of its months first, then the year, in one run (the "
        "same rows as one command per month then the year; months without matched trips are "
        "left out)",
    )
    p.add_argument(
        "--engine",
        choices=("local", "spark"),
        default="local",
        help="local: the store file (default); spark: a lake, the period rolled up on DuckDB "
        "over its partitions (indices have no per-day step)",
    )
    p.add_argument(
        "--lake",
        help="with --engine spark: the lake to read and write (default: the global --lake)",
    )
    p.set_defaults(func=run)


def resolve_period(args: argparse.Namespace) -> Period:
    from core.periods import parse_period, range_period

    if args.period and (args.date_from or args.date_to):
        raise ConfigError("give --period or --from/--to, not both", where="--period")
    if args.period:
        return parse_period(args.period)
    if args.date_from and args.date_to:
        from datetime import date

        try:
            start, end = date.fromisoformat(args.date_from), date.fromisoformat(args.date_to)
        except ValueError as exc:
            raise ConfigError(f"invalid date: {exc}", where="--from/--to") from exc
        return range_period(start, end)
    raise ConfigError(
        "no period given",
        where="--period",
        hint="e.g. --period 2026-03, --period 2026, or --from 2026-03-01 --to 2026-03-15",
    )


def parse_scope(text: str | None) -> tuple[str | None, str | None]:
    if not text:
        return None, None
    scope, _, scope_id = text.partition(":")
    if scope not in ("system", "operator", "lot", "line"):
        raise ConfigError(
            f"unknown scope {scope!r}",
            where="--scope",
            hint="system, operator:O1, lot:L1, line:T10",
        )
    return scope, (scope_id or ("all" if scope == "system" else None))


def run(args: argparse.Namespace, ctx: Context) -> int:
    import polars as pl

    from analytics.indices.coverage import read_population
    from analytics.indices.grades import read_grade_history
    from analytics.indices.job import read_cost_per_km, run_indices_each
    from core.periods import months_in

    period = resolve_period(args)
    profile = ctx.profile
    if args.months and period.kind != "year":
        raise ConfigError(
            "--months goes with a year period", where="--months", hint="e.g. --period 2026 --months"
        )
    if args.trace:
        return run_trace(args, ctx, period)
    population = read_population(args.population) if args.population else None
    history = read_grade_history(args.grade_history) if args.grade_history else None
    costs = read_cost_per_km(args.costs) if args.costs else None
    lake = engine_lake(args, ctx.settings.lake_path)
    if lake is not None and args.months:
        raise ConfigError(
            "--months reads the store file, not a lake",
            where="--months",
            hint="run one `pontual indices --period YYYY-MM` per month over the lake",
        )
    if lake is not None:
        from analytics.engines.lake_indices import run_indices_on_lake

        results = run_indices_on_lake(
            lake,
            profile,
            period,
            cost_per_km=args.cost_per_km,
            costs=costs,
            population=population,
            grade_history=history,
            write=not args.no_write,
        )
    else:
        with ctx.store(read_only=args.no_write) as store:
            if ctx.settings.lake_path is None:  # over the lake, archived days are all there
                from core.lake import check_not_archived

                check_not_archived(store, period.start, period.end)  # ADR 0099
            # month by month in order, then the year, as separate commands would (each
            # month's repeats read the suggestions the months before it wrote), reading the
            # year's taps and days once; a month without matched trips is left out (its own
            # command would stop there)
            periods = (
                [*(m for m in months_in(period) if has_outcomes(store, m)), period]
                if args.months
                else [period]
            )
            runs = run_indices_each(
                store,
                profile,
                periods,
                cost_per_km=args.cost_per_km,
                costs=costs,
                population=population,
                grade_history=history,
                write=not args.no_write,
            )
            results = runs[-1]
    if args.months and len(runs) > 1 and args.format != "table":
        shown = pl.concat([select_rows(r.indicators, args) for r in runs], how="vertical_relaxed")
    else:
        shown = select_rows(results.indicators, args)
    if args.format == "json":
        sys.stdout.write(json.dumps(shown.to_dicts(), default=str, ensure_ascii=False, indent=1))
        sys.stdout.write("\n")
        return 0
    if args.format == "csv":
        sys.stdout.write(shown.write_csv())
        return 0
    print_table(ctx, shown, period, profile.name)
    print_summary(ctx, results, profile)
    return 0


def has_outcomes(store: Store, period: Period) -> bool:
    """Whether the store holds trip outcomes of the period (it was matched)."""
    found = store.query(
        "SELECT count(*) AS n FROM trip_outcomes WHERE service_date BETWEEN ? AND ?",
        list(period.days()),
    )
    return bool(found["n"][0])


def select_rows(indicators: pl.DataFrame, args: argparse.Namespace) -> pl.DataFrame:
    import polars as pl

    scope, scope_id = parse_scope(args.scope)
    rows = indicators
    if scope is None:
        rows = rows.filter(pl.col("scope").is_in(["system", "operator"]))
    else:
        rows = rows.filter(pl.col("scope") == scope)
        if scope_id:
            rows = rows.filter(pl.col("scope_id") == scope_id)
    if not args.all and args.format == "table":
        rows = rows.filter(pl.col("indicator").is_in(DEFAULT_SHOWN))
    order = {name: i for i, name in enumerate(("system", "operator", "lot", "line"))}
    return (
        rows.with_columns(pl.col("scope").replace_strict(order, return_dtype=pl.Int32).alias("_o"))
        .sort("_o", "scope_id", "indicator")
        .drop("_o")
    )


def format_value(value: float | None, unit: str) -> str:
    """An indicator value as the CLI table shows it (pt-BR, Babel): ratios as percentages,
    counts as integers, the rest with two decimals."""
    from core.pt_br import to_integer, to_number, to_percent

    if value is None:
        return "—"
    if unit in RATIO_UNITS:
        return to_percent(value)
    if unit in ("trips", "breakdowns", "passengers", "days", "vehicles", "months"):
        return to_integer(value)
    return to_number(value, 2)


def print_table(ctx: Context, rows: pl.DataFrame, period: Period, profile_name: str) -> None:
    from rich.table import Table

    from core.indicators import to_label

    out = Table(
        gettext("scope"),
        gettext("indicator"),
        gettext("value"),
        gettext("numerator"),
        gettext("denominator"),
        title=gettext("Indices of {period} — {profile}", period=period.label, profile=profile_name),
    )
    for r in rows.iter_rows(named=True):
        out.add_row(
            f"{r['scope']} {r['scope_id']}",
            to_label(r["indicator"]),
            format_value(r["value"], r["unit"]),
            "" if r["denominator"] is None else format_value(r["numerator"], "n"),
            "" if r["denominator"] is None else format_value(r["denominator"], "n"),
        )
    ctx.console.print(out)


def print_summary(ctx: Context, results: IndexResults, profile: Profile) -> None:
    import polars as pl
    from rich.table import Table

    # the verdict criteria are needed only when a year is graded
    from analytics.indices.infractions import DISCLAIMER
    from analytics.indices.verdicts import (
        Inputs,
        build_verdict_criteria,
        compute_verdict_outcomes,
    )

    grades = results.annual_grades.filter(~pl.col("is_history"))
    if grades.height:
        v = profile.verdicts
        g = Table(
            gettext("scope"),
            gettext("year"),
            "ICV",
            "IQS",
            gettext("annual score"),
            gettext("grade (letter)"),
            v.renewal.title.lower(),
            v.termination.title.split(" (")[0].lower(),
            caption=gettext(
                "Each verdict lists its criteria with their article in the annual dossier "
                "(`pontual report annual`); the grade is indicative while the bands are "
                "defaults."
            ),
        )
        for r in grades.sort("scope", "scope_id").iter_rows(named=True):
            criteria = build_verdict_criteria(
                Inputs(
                    profile,
                    r["scope"],
                    r["scope_id"],
                    r["year"],
                    grades=results.annual_grades,
                    fleet_days=results.fleet_days,
                )
            )
            outcome = dict(compute_verdict_outcomes(criteria).select("verdict", "outcome").rows())
            g.add_row(
                f"{r['scope']} {r['scope_id']}",
                str(r["year"]),
                format_value(r["icv_score"], "points"),
                format_value(r["iqs_score"], "points"),
                format_value(r["annual_score"], "points"),
                r["grade"],
                outcome.get("renewal", "—"),
                outcome.get("termination", "—"),
            )
        ctx.console.print(g)
    inf = results.suggested_infractions
    if inf.height:
        counts = (
            inf.group_by("group", "item", "description")
            .agg(pl.len().alias("n"), pl.col("urm").sum(), pl.col("is_repeat").sum().alias("rep"))
            .sort("group", "item")
        )
        t = Table(
            gettext("group"),
            gettext("item"),
            gettext("description"),
            gettext("occurrences"),
            gettext("repeat offences"),
            "URM",
            title=gettext("Suggested infractions (suggestion)"),
        )
        for r in counts.iter_rows(named=True):
            t.add_row(
                r["group"],
                r["item"],
                r["description"],
                str(r["n"]),
                str(r["rep"]),
                format_value(r["urm"], "urm"),
            )
        ctx.console.print(t)
        ctx.say(gettext(DISCLAIMER))


def run_trace(args: argparse.Namespace, ctx: Context, period: Period) -> int:
    import polars as pl
    from rich.table import Table

    from analytics.indices.trace import read_trace_pings, trace_indicator
    from core.indicators import to_label

    scope, scope_id = parse_scope(args.scope or "system")
    assert scope is not None
    with ctx.store(read_only=True) as store:
        trace = trace_indicator(store, ctx.profile, scope, scope_id or "all", period, args.trace)
        pings = read_trace_pings(store, trace) if args.pings else None
    if args.format == "csv":
        sys.stdout.write((pings if pings is not None else trace).write_csv())
        return 0
    if args.format == "json":
        data = (pings if pings is not None else trace).to_dicts()
        sys.stdout.write(json.dumps(data, default=str, ensure_ascii=False, indent=1) + "\n")
        return 0
    used = trace.filter((pl.col("in_numerator") != 0) | (pl.col("in_denominator") != 0))
    t = Table(
        gettext("day"),
        gettext("trip"),
        gettext("line"),
        gettext("outcome"),
        gettext("delay (s)"),
        gettext("vehicle"),
        "pings",
        gettext("in the numerator"),
        gettext("in the denominator"),
        title=f"{to_label(args.trace)} — {scope} {scope_id} — {period.label}",
    )
    for r in used.iter_rows(named=True):
        pings_txt = (
            f"{r['run_first_ping_id']}–{r['run_last_ping_id']} ({r['run_n_pings']})"
            if r["run_first_ping_id"] is not None
            else "—"
        )
        t.add_row(
            str(r["service_date"]),
            r["trip_id"],
            r["route_id"],
            r["outcome"],
            "" if r["departure_delay_s"] is None else str(r["departure_delay_s"]),
            r["vehicle_id"] or "—",
            pings_txt,
            f"{r['in_numerator']:g}",
            f"{r['in_denominator']:g}",
        )
    ctx.console.print(t)
    ctx.say(
        gettext(
            "numerator {numerator}, denominator {denominator}",
            numerator=f"{used['in_numerator'].sum():g}",
            denominator=f"{used['in_denominator'].sum():g}",
        )
    )
    if pings is not None:
        ctx.say(gettext("{n} pings in the trips listed", n=pings.height))
    return 0
