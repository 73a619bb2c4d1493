"""`pontual demo`: the whole pipeline on the simulated sample city, ending with the dashboard.

Each stage is the same command a user would type (`pontual simulate`, `gtfs load`, `ingest ...`,
`match`, `crowding`, `indices`), run in-process in order against one store, so the demo
exercises exactly the public paths. `--no-serve` stops after the pipeline (scripts and CI).

The demo writes into its own store, `data/demo/pontual.duckdb`, with the simulated city in
`data/demo/sample/`. A store named with --store (or PONTUAL_STORE) is used only with
`--into-store`, and a folder it would simulate into that the demo did not create is never
overwritten. Then, unless `--no-live`, it starts the live side (`pontual.live_demo`: a local
Mosquitto, `pontual serve`, `pontual replay` of the last simulated day at `--live-speed` times
real time) before the dashboard, and stops it when the dashboard ends.
"""

from __future__ import annotations

import argparse
import os
import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from datetime import date, timedelta
from datetime import time as clock
from pathlib import Path

from core.errors import ConfigError, PontualError
from pontual.context import Context
from pontual.messages import gettext

DEFAULT_START = date(2026, 3, 2)
DEFAULT_DAYS = 7
DEMO_STORE = Path("data") / "demo" / "pontual.duckdb"
"""The demo's own store (its simulated city in `sample/` beside it)."""
SAMPLE_MARK = ".pontual-demo"
"""Written in a sample folder the demo simulated into: only such a folder is overwritten."""
DEFAULT_LIVE_FROM = clock(6, 30)


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "demo",
        help="simulate a sample city, run every pipeline stage into the store, start the dashboard",
    )
    p.add_argument(
        "--sample", type=Path, help="folder for the simulated city (default: beside the store)"
    )
    p.add_argument("--days", type=int, default=DEFAULT_DAYS, help="days to simulate (default 7)")
    p.add_argument("--seed", type=int, default=7, help="simulator seed")
    p.add_argument("--no-serve", action="store_true", help="run the pipeline and exit")
    p.add_argument("--port", type=int, default=8501, help="dashboard port")
    p.add_argument(
        "--into-store",
        action="store_true",
        help="write the simulated city into the store of --store / PONTUAL_STORE (default: "
        f"the demo's own, {DEMO_STORE})",
    )
    p.add_argument(
        "--no-live", action="store_true", help="no live feed (broker, serve, replay) on the side"
    )
    p.add_argument(
        "--live-speed", type=float, default=10.0, help="replay at S times real time (10)"
    )
    p.add_argument(
        "--live-from",
        type=clock.fromisoformat,
        default=None,
        help="local time of the last simulated day the replay starts at (06:30, or 5 min before that day's first departure when later)",
    )
    p.set_defaults(func=run)


def build_stages(sample: Path, start: date, days: int, seed: int) -> list[tuple[str, list[str]]]:
    """The pipeline as (title, argv) pairs, global options excluded."""
    end = start + timedelta(days=days - 1)
    first, last = start.isoformat(), end.isoformat()
    months = sorted({(start + timedelta(d)).strftime("%Y-%m") for d in range(days)})
    stages: list[tuple[str, list[str]]] = [
        (
            gettext("simulation of the sample city"),
            [
                "simulate",
                "--out",
                str(sample),
                "--start",
                first,
                "--days",
                str(days),
                "--seed",
                str(seed),
            ],
        ),
        (gettext("store (the DuckDB file)"), ["init"]),
        (gettext("GTFS (timetable and routes)"), ["gtfs", "load", str(sample / "gtfs.zip")]),
        (gettext("fleet register"), ["ingest", "vehicles", str(sample / "vehicles.csv")]),
        (gettext("incidents (demo stage)"), ["ingest", "incidents", str(sample / "incidents.csv")]),
        (gettext("IQS surveys"), ["ingest", "surveys", str(sample / "iqs_surveys.csv")]),
        (gettext("GPS/AVL positions"), ["ingest", "avl", str(sample / "avl.parquet")]),
        (gettext("electronic ticketing"), ["ingest", "fares", str(sample / "fares.csv")]),
        (gettext("trip matching"), ["match", "--from", first, "--to", last]),
        (gettext("crowding (demo stage)"), ["crowding", "--from", first, "--to", last]),
    ]
    extra = [
        "--costs",
        str(sample / "cost_per_km.csv"),
        "--population",
        str(sample / "population.csv"),
    ]
    for month in months:
        stages.append(
            (gettext("indices of {month}", month=month), ["indices", "--period", month, *extra])
        )
    stages.append(
        (
            gettext("annual evaluation {year}", year=start.year),
            ["indices", "--period", str(start.year), *extra],
        )
    )
    return stages


def run_stages(
    ctx: Context, stages: Sequence[tuple[str, list[str]]], main: Callable[[list[str]], int]
) -> None:
    """Run each stage through the CLI entry point; stop at the first failure."""
    globals_ = ["--store", str(ctx.settings.store_path), "--profile", ctx.settings.profile_id]
    if ctx.settings.quiet:
        globals_.append("--quiet")
    for i, (title, argv) in enumerate(stages, 1):
        ctx.say(f"[bold]({i}/{len(stages)}) {title}[/]: pontual {' '.join(argv)}")
        t0 = time.perf_counter()
        code = main([*globals_, *argv])
        if code != 0:
            raise PontualError(
                f"demo stage '{title}' failed with exit code {code}",
                where=f"pontual {' '.join(argv)}",
                hint="run that command alone with --debug to see why",
            )
        ctx.say(f"    [dim]{time.perf_counter() - t0:.1f} s[/]")


def resolve_demo_paths(store: Path, sample: Path | None, into_store: bool) -> tuple[Path, Path]:
    """(store, sample folder) of the demo. The default store (no --store, no PONTUAL_STORE)
    becomes the demo's own; another is refused without `into_store`. The sample folder (given,
    else `sample/` beside the store) is refused when it exists, is not empty and was not made
    by an earlier demo (`SAMPLE_MARK`)."""
    from core.settings import DEFAULT_STORE

    if store == DEFAULT_STORE:
        store = DEMO_STORE
    elif store != DEMO_STORE and not into_store:
        raise ConfigError(
            f"the demo does not write the simulated city into {store} without --into-store",
            where="--store / PONTUAL_STORE",
            hint=f"run `pontual demo` without --store (it uses {DEMO_STORE}) or add --into-store",
        )
    folder = sample or store.parent / "sample"
    if folder.exists() and any(folder.iterdir()) and not (folder / SAMPLE_MARK).exists():
        raise ConfigError(
            f"folder {folder} exists and was not made by the demo: it will not be overwritten",
            where="--sample",
            hint="choose another folder with --sample FOLDER",
        )
    return store, folder


LIVE_LEAD_S = 5 * 60
"""The replay starts this long before the day's first departure when that is after
DEFAULT_LIVE_FROM: buses are seen leaving, not parked."""


def choose_live_start(store: Path, day: date, earliest: clock) -> clock:
    """The local time the live replay of `day` starts at: `earliest` (the morning peak), or,
    on a day whose service starts later (the simulated week ends on a Sunday, first departure
    07:00), LIVE_LEAD_S before its first scheduled departure, so that the *Ao vivo* page shows
    buses running and arrivals counting down from its first look."""
    from core.store import Store

    with Store.open(store, read_only=True) as s:
        first = s.query(
            "SELECT min(planned_start_s) AS first_s FROM scheduled_trips WHERE service_date = ?",
            [day],
        )["first_s"][0]
    if first is None:
        return earliest
    lead = max(0, int(first) - LIVE_LEAD_S)
    return max(earliest, clock(lead // 3600 % 24, lead % 3600 // 60))


DEMO_ACCOUNT = "demo"


def ensure_demo_account(ctx: Context, store: Path) -> None:
    """The first demo that serves the dashboard creates a `planejamento` account with a random
    password, kept in a 0600 file beside the store, and says how to log in (issue #23)."""
    import os
    import secrets

    from cases.accounts import add_user, count_users
    from cases.db import CaseDB
    from core.settings import Settings

    settings = Settings.resolve(str(store), ctx.settings.profile_id)
    login_file = store.with_name("demo-login.txt")
    with CaseDB.open(settings.cases_db_url) as db:
        if count_users(db) > 0:
            if login_file.exists():
                ctx.say(
                    gettext(
                        "dashboard: log in with the account and password kept in {path}",
                        path=login_file,
                    )
                )
            return
        password = secrets.token_urlsafe(12)
        add_user(db, DEMO_ACCOUNT, "planejamento", password)
    fd = os.open(login_file, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as out:
        out.write(f"conta: {DEMO_ACCOUNT}\nsenha: {password}\n")
    ctx.say(
        gettext(
            "dashboard: log in with the account [bold]{account}[/] and the password "
            "[bold]{password}[/] (kept in {path}; other accounts: pontual users add NAME "
            "--role ROLE --by {account})",
            account=DEMO_ACCOUNT,
            password=password,
            path=login_file,
        )
    )


def run(args: argparse.Namespace, ctx: Context) -> int:
    from pontual.cli import main  # the demo drives the same entry point a user types

    store, sample = resolve_demo_paths(ctx.settings.store_path, args.sample, args.into_store)
    ctx.settings = replace(ctx.settings, store_path=store)
    sample.mkdir(parents=True, exist_ok=True)
    (sample / SAMPLE_MARK).write_text("simulated by pontual demo; it may overwrite this folder\n")
    stages = build_stages(sample, DEFAULT_START, args.days, args.seed)
    t0 = time.perf_counter()
    run_stages(ctx, stages, main)
    ctx.say(
        gettext(
            "whole pipeline in {seconds} s; store: {path}",
            seconds=f"{time.perf_counter() - t0:.0f}",
            path=store,
        )
    )
    if args.no_serve:
        return 0
    ensure_demo_account(ctx, store)
    dashboard = [
        *("--store", str(store), "--profile", ctx.settings.profile_id),
        *("dashboard", "--port", str(args.port), "--headless"),
    ]
    if args.no_live:
        return main(dashboard)
    import signal

    from pontual.live_demo import LiveDemo

    def stop(_signum: int, _frame: object) -> None:
        # SIGTERM would end the demo without its `finally`s: the broker, the feed server, the
        # replays and Streamlit would stay behind. As an exit, everything is stopped in order
        raise SystemExit(0)

    signal.signal(signal.SIGTERM, stop)
    day = DEFAULT_START + timedelta(days=args.days - 1)
    if args.live_from is None:
        args.live_from = choose_live_start(store, day, DEFAULT_LIVE_FROM)
    with LiveDemo(
        store=store,
        profile_id=ctx.settings.profile_id,
        avl=sample / "avl.parquet",
        day=day,
        start=args.live_from,
        timezone=ctx.profile.general.timezone.value,
        speed=args.live_speed,
        folder=store.parent / "live",
    ) as live:
        ctx.say(
            gettext(
                "live: {day} from {start}, {speed}× real time; GTFS-RT feed at {url}, a stop's "
                "arrivals for a phone at {url}/paradas (logs in {folder})",
                day=f"{day:%d/%m/%Y}",
                start=f"{args.live_from:%H:%M}",
                speed=f"{args.live_speed:g}",
                url=live.feed_url,
                folder=live.folder,
            )
        )
        os.environ["PONTUAL_LIVE_URL"] = live.feed_url  # the dashboard's "Ao vivo" page
        return main(dashboard)
