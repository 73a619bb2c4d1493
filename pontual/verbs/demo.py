"""`pontual demo`: the whole pipeline on the simulated sample city, ending with the dashboard.

Each stage is the same command a user would type (`pontual simulate`, `gtfs load`, `ingest ...`,
`match`, `crowding`, `indices`), run in-process in order against one store, so the demo
exercises exactly the public paths. `--no-serve` stops after the pipeline (scripts and CI).
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable, Sequence
from datetime import date, timedelta
from pathlib import Path

from core.errors import PontualError
from pontual.context import Context

DEFAULT_START = date(2026, 3, 2)
DEFAULT_DAYS = 7


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
    p.set_defaults(func=run)


def build_stages(sample: Path, start: date, days: int, seed: int) -> list[tuple[str, list[str]]]:
    """The pipeline as (title, argv) pairs, global options excluded."""
    end = start + timedelta(days=days - 1)
    first, last = start.isoformat(), end.isoformat()
    months = sorted({(start + timedelta(d)).strftime("%Y-%m") for d in range(days)})
    stages: list[tuple[str, list[str]]] = [
        (
            "simulação da cidade de exemplo",
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
        ("armazenamento", ["init"]),
        ("GTFS (tabela horária e itinerários)", ["gtfs", "load", str(sample / "gtfs.zip")]),
        ("cadastro da frota", ["ingest", "vehicles", str(sample / "vehicles.csv")]),
        ("ocorrências", ["ingest", "incidents", str(sample / "incidents.csv")]),
        ("pesquisas IQS", ["ingest", "surveys", str(sample / "iqs_surveys.csv")]),
        ("posições GPS/AVL", ["ingest", "avl", str(sample / "avl.parquet")]),
        ("bilhetagem eletrônica", ["ingest", "fares", str(sample / "fares.csv")]),
        ("casamento de viagens", ["match", "--from", first, "--to", last]),
        ("lotação", ["crowding", "--from", first, "--to", last]),
    ]
    extra = [
        "--costs",
        str(sample / "cost_per_km.csv"),
        "--population",
        str(sample / "population.csv"),
    ]
    for month in months:
        stages.append((f"índices de {month}", ["indices", "--period", month, *extra]))
    stages.append(
        (f"avaliação anual {start.year}", ["indices", "--period", str(start.year), *extra])
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


DEMO_ACCOUNT = "demo"


def ensure_demo_account(ctx: Context) -> None:
    """The first demo that serves the dashboard creates a `planejamento` account with a random
    password, kept in a 0600 file beside the store, and says how to log in (issue #23)."""
    import os
    import secrets

    from cases.accounts import add_user, count_users
    from cases.db import CaseDB

    login_file = ctx.settings.store_path.with_name("demo-login.txt")
    with CaseDB.open(ctx.settings.cases_db_url) as db:
        if count_users(db) > 0:
            if login_file.exists():
                ctx.say(f"painel: entre com a conta e a senha guardadas em {login_file}")
            return
        password = secrets.token_urlsafe(12)
        add_user(db, DEMO_ACCOUNT, "planejamento", password)
    fd = os.open(login_file, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as out:
        out.write(f"conta: {DEMO_ACCOUNT}\nsenha: {password}\n")
    ctx.say(
        f"painel: entre com a conta [bold]{DEMO_ACCOUNT}[/] e a senha [bold]{password}[/] "
        f"(guardadas em {login_file}; outras contas: pontual users add NOME --role PAPEL "
        f"--by {DEMO_ACCOUNT})"
    )


def run(args: argparse.Namespace, ctx: Context) -> int:
    from pontual.cli import main  # the demo drives the same entry point a user types

    sample = args.sample or ctx.settings.store_path.parent / "sample"
    stages = build_stages(sample, DEFAULT_START, args.days, args.seed)
    t0 = time.perf_counter()
    run_stages(ctx, stages, main)
    ctx.say(
        f"pipeline completo em {time.perf_counter() - t0:.0f} s; armazenamento: {ctx.settings.store_path}"
    )
    if args.no_serve:
        return 0
    ensure_demo_account(ctx)
    return main(
        [
            "--store",
            str(ctx.settings.store_path),
            "--profile",
            ctx.settings.profile_id,
            "dashboard",
            "--port",
            str(args.port),
            "--headless",
        ]
    )
