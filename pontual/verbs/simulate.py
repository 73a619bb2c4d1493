"""`pontual simulate`: a simulated city operation (GTFS, AVL, fares, registers) with its truth."""

from __future__ import annotations

import argparse
import time
from dataclasses import replace
from datetime import date
from pathlib import Path

from core.errors import ConfigError, InputError
from pontual.context import Context
from pontual.messages import gettext
from sample_data.options import SimulationOptions


def register(sub: argparse._SubParsersAction) -> None:
    d = SimulationOptions()
    p = sub.add_parser(
        "simulate",
        help="simulate a city's bus operation with its ground truth (GTFS, AVL, fares, registers)",
    )
    p.add_argument("--out", required=True, type=Path, help="output folder (created)")
    p.add_argument(
        "--gtfs", type=Path, help="simulate on this GTFS feed instead of the built-in city"
    )
    p.add_argument(
        "--start", default=d.start.isoformat(), help=f"first service date (default {d.start})"
    )
    p.add_argument("--days", type=int, default=d.days, help=f"number of days (default {d.days})")
    p.add_argument(
        "--year",
        type=int,
        help="simulate a sampled year instead of --start/--days: --days-per-month working days "
        "of each month of YEAR",
    )
    p.add_argument(
        "--days-per-month",
        type=int,
        default=1,
        help="with --year: working days simulated in each month, spread over it (default 1)",
    )
    p.add_argument("--seed", type=int, default=d.seed, help="random seed (same seed -> same files)")
    p.add_argument(
        "--vehicles",
        type=int,
        default=d.n_vehicles,
        help=f"vehicles at the peak (default {d.n_vehicles}; above "
        f"{d.grid_city_above_vehicles} a synthetic grid city is used)",
    )
    p.add_argument(
        "--ping-interval", type=int, default=d.ping_interval_s, help="AVL ping interval, s"
    )
    p.add_argument("--gps-sigma", type=float, default=d.gps_sigma_m, help="GPS noise σ, metres")
    p.add_argument("--with-trip-id", action="store_true", help="add reported_trip_id to the AVL")
    p.add_argument(
        "--text-days",
        type=int,
        default=d.text_days,
        help="days covered by avl.csv and the MQTT files (0: all; Parquet has all)",
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace, ctx: Context) -> int:
    from sample_data.simulate import simulate
    from sample_data.timetable import sampled_year_dates

    try:
        start = date.fromisoformat(args.start)
    except ValueError as exc:
        raise ConfigError(
            f"--start must be a date YYYY-MM-DD, got {args.start!r}",
            where="--start",
            hint="e.g. --start 2026-03-02",
        ) from exc
    if args.vehicles < 1 or args.ping_interval < 1:
        raise ConfigError(
            "--vehicles and --ping-interval must be positive", hint="e.g. --vehicles 40"
        )
    dates = None
    if args.year is not None:
        if not 1 <= args.days_per_month <= 20 or not 1900 <= args.year <= 2999:
            raise ConfigError(
                f"--year {args.year} --days-per-month {args.days_per_month}: expected a year "
                "YYYY and 1 to 20 working days a month",
                where="--year / --days-per-month",
                hint="e.g. --year 2026 --days-per-month 1",
            )
        dates = sampled_year_dates(args.year, args.days_per_month)
    opts = replace(
        SimulationOptions(),
        start=start,
        days=args.days,
        dates=dates,
        seed=args.seed,
        n_vehicles=args.vehicles,
        ping_interval_s=args.ping_interval,
        gps_sigma_m=args.gps_sigma,
        gtfs_path=args.gtfs,
        with_trip_id=args.with_trip_id,
        text_days=args.text_days or None,
        profile_id=ctx.settings.profile_id,
    )
    if args.out.exists() and not args.out.is_dir():
        raise InputError("--out is a file, not a folder", where=str(args.out))
    t0 = time.perf_counter()
    summary = simulate(opts, args.out)
    outcomes = ", ".join(f"{k} {v}" for k, v in summary.outcome_counts.items())
    ctx.say(
        gettext(
            "simulated {n_days} day(s), {n_routes} lines, {n_vehicles} vehicles in the register, "
            "{n_trips} scheduled trips ({outcomes}), {n_pings} pings, {n_taps} fare taps in "
            "{seconds} s -> {folder} (see README.md there)",
            n_days=summary.n_days,
            n_routes=summary.n_routes,
            n_vehicles=summary.n_vehicles_register,
            n_trips=summary.n_scheduled_trips,
            outcomes=outcomes,
            n_pings=summary.n_pings,
            n_taps=summary.n_fare_taps,
            seconds=f"{time.perf_counter() - t0:.1f}",
            folder=summary.out_dir,
        )
    )
    return 0
