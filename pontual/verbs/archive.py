"""`pontual lake archive` and `pontual lake prune`: raw days out of the store into the lake,
and their deletion from the lake past the retention (docs/retention.md, docs/adr/0099).

pontual lake archive --before 2026-01-01 --lake lake/
pontual lake prune --before 2017-01-01 --lake lake/            # dry run: lists, deletes nothing
pontual lake prune --before 2017-01-01 --lake lake/ --apply    # deletes the deletable days

Registered under `pontual lake` by `pontual.verbs.export`. Heavy modules are imported when the
action runs (the CLI starts without them).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from pontual.verbs.arguments import service_date

if TYPE_CHECKING:
    from pontual.context import Context


def register_lake_actions(actions: argparse._SubParsersAction) -> None:
    """`archive` and `prune` under `pontual lake`."""
    archive = actions.add_parser(
        "archive",
        help="move the raw days (pings and taps) before a date from the store into the lake",
        description="Each raw day before --before is written to the lake, digested there, and leaves "
        "the store only when the lake copy gives the day's recorded reference digest.",
    )
    archive.add_argument(
        "--before",
        type=service_date,
        required=True,
        help="first day kept in the store YYYY-MM-DD",
    )
    archive.add_argument(
        "--lake",
        dest="archive_lake",
        metavar="LAKE",
        help="folder of the lake (default: the global --lake)",
    )
    archive.set_defaults(func=run_archive)
    prune = actions.add_parser(
        "prune",
        help="delete from the lake the raw days past the retention and without legal hold (a dry run by default)",
        description="Lists the lake's raw days before --before that may be deleted (past the "
        "retention, held by no case) and those kept with the reason; deletes only with "
        "--apply.",
    )
    prune.add_argument(
        "--before", type=service_date, required=True, help="delete only days before YYYY-MM-DD"
    )
    prune.add_argument(
        "--lake",
        dest="archive_lake",
        metavar="LAKE",
        help="folder of the lake (default: the global --lake)",
    )
    prune.add_argument(
        "--apply", action="store_true", help="delete (without it, a dry run that only lists)"
    )
    prune.set_defaults(func=run_prune)


def _lake(args: argparse.Namespace, ctx: Context) -> Path:
    from core.errors import ConfigError

    given = args.archive_lake or ctx.settings.lake_path
    if not given:
        raise ConfigError(
            "no lake given", where="option --lake", hint="give --lake PATH (the lake folder)"
        )
    return Path(given)


def run_archive(args: argparse.Namespace, ctx: Context) -> int:
    from datetime import datetime
    from zoneinfo import ZoneInfo

    import polars as pl

    from cases.archive import ARCHIVED, archive_days
    from core.errors import ConfigError, PontualError
    from core.store import Store
    from pontual.messages import gettext

    lake = _lake(args, ctx)
    today = datetime.now(ZoneInfo(ctx.profile.general.timezone.value)).date()
    if args.before > today:  # today's pings are still coming in
        raise ConfigError(
            f"--before {args.before} is after today ({today}): a day still receiving data "
            "cannot be archived",
            where="option --before",
            hint="archive closed periods only (docs/retention.md)",
        )
    # the store file itself, not `ctx.store()`: the lake may come from the global --lake, which
    # makes `ctx.store()` open the lake; the readers' snapshot is published as writers do
    with Store.open(ctx.settings.store_path) as store:
        done = archive_days(store, lake, ctx.profile, args.before)
        if done.height:
            store.publish_snapshot()
    if done.height == 0:
        ctx.say(gettext("nothing to archive before {date}", date=args.before))
        return 0
    moved = done.filter(pl.col("outcome") == ARCHIVED)
    if moved.height:
        ctx.say(
            gettext(
                "{days} day(s) archived to {lake}: {rows} raw rows left the store",
                days=moved["service_date"].n_unique(),
                lake=lake,
                rows=int(moved["n_rows"].sum()),
            )
        )
    refused = sorted(set(done.filter(pl.col("outcome") != ARCHIVED)["service_date"].to_list()))
    if refused:
        raise PontualError(
            f"the lake copy of {', '.join(map(str, refused))} does not give the recorded "
            "reference digest: those days stay in the store",
            where=str(lake),
            hint="run `pontual verify` to see which raw data changed",
        )
    return 0


def run_prune(args: argparse.Namespace, ctx: Context) -> int:
    from datetime import datetime
    from zoneinfo import ZoneInfo

    from cases.archive import (
        LEGAL_HOLD,
        plan_prune,
        prune_days,
        read_held_cases,
        read_lake_raw_days,
    )
    from cases.db import CaseDB
    from core.errors import ConfigError
    from core.store import Store
    from pontual.messages import gettext

    lake = _lake(args, ctx)
    if not lake.is_dir():
        raise ConfigError(
            "lake not found", where=str(lake), hint="give --lake PATH (the lake folder)"
        )
    today = datetime.now(ZoneInfo(ctx.profile.general.timezone.value)).date()
    years = ctx.settings.retention_years
    with CaseDB.open(ctx.settings.cases_db_url) as db:
        held = read_held_cases(db)
    plan = plan_prune(read_lake_raw_days(lake), args.before, today, years, held)
    for r in plan.iter_rows(named=True):
        if r["is_deletable"]:
            line = gettext("{day}: may be deleted", day=r["service_date"])
        elif r["reason"] == LEGAL_HOLD:
            line = gettext(
                "{day}: kept: legal hold of case(s) {cases}",
                day=r["service_date"],
                cases=", ".join(map(str, r["case_ids"])),
            )
        else:
            line = gettext(
                "{day}: kept: retention of {years} years (until {until})",
                day=r["service_date"],
                years=years,
                until=r["kept_until"],
            )
        ctx.say(line)
    n = int(plan["is_deletable"].sum())
    if not args.apply:
        ctx.say(gettext("dry run: nothing deleted (--apply deletes the {n} day(s))", n=n))
        return 0
    with Store.open(ctx.settings.store_path) as store:
        gone = prune_days(store, lake, plan)
        store.publish_snapshot()
    ctx.say(gettext("{n} day(s) of raw data deleted from {lake}", n=len(gone), lake=lake))
    return 0
