"""`pontual verify`: are the raw pings and taps still what they were when first digested?

Digests the service days not digested yet (unless --no-record), recomputes every recorded day
digest where the day lives (the store, or the lake for a day archived by `pontual lake
archive`: the global --lake, else the lake recorded at archival) and every case's evidence
package digest, and names each day or case that changed, each archived day whose lake
partition is missing, and each day under a case's legal hold whose raw data is in neither
(exit 2). With --lake and no store file, the lake is verified alone against the digests
exported beside its partitions. Unless --no-record, the digests recomputed in full become the
current ones reports reuse (`raw_day_fingerprints`, ADR 0113). Heavy imports live inside `run`
(verbs are imported at start-up).
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pontual.context import Context


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "verify", help="check the digests of the raw data per day and of the cases' evidence"
    )
    p.add_argument(
        "--no-record",
        action="store_true",
        help="only check (do not record the digest of new days; opens the store read-only)",
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace, ctx: Context) -> int:
    from contextlib import AbstractContextManager
    from datetime import date
    from pathlib import Path

    import polars as pl
    import sqlalchemy as sa

    from cases.archive import find_absent_held_days, read_held_cases
    from cases.db import CASE_EVIDENCE, CaseDB
    from cases.evidence import (
        BACK_IN_STORE,
        MISSING_IN_LAKE,
        UNREADABLE,
        evidence_matches,
        record_day_digests,
        record_verified_fingerprints,
        verify_day_digests,
    )
    from core.errors import PontualError
    from core.lake import open_lake
    from core.store import Store
    from pontual.messages import gettext

    lake = ctx.settings.lake_path
    # with --lake and no store file, the lake is verified alone (its exported digests)
    lake_only = lake is not None and not ctx.settings.store_path.exists()
    opened: AbstractContextManager[Store] = (
        open_lake(lake)
        if lake_only and lake is not None
        else Store.open(ctx.settings.store_path, read_only=args.no_record)
    )
    url = ctx.settings.cases_db_url
    held: dict[date, list[int]] = {}
    bad_cases: list[int] = []
    # a lake verified alone, without the store, has no case database beside it unless one is set
    is_absent = url.startswith("sqlite:///") and not Path(url.removeprefix("sqlite:///")).exists()
    if not (lake_only and is_absent):
        with CaseDB.open(url) as db:
            held = read_held_cases(db)
            with db.read() as conn:
                for case_id, package, digest in conn.execute(
                    sa.select(
                        CASE_EVIDENCE.c.case_id, CASE_EVIDENCE.c.package, CASE_EVIDENCE.c.sha256
                    )
                ):
                    if not evidence_matches(package, digest):
                        bad_cases.append(int(case_id))
    with opened as store:
        if lake_only:
            ctx.say(gettext("verifying the lake {lake} alone", lake=lake))
        new = None if (args.no_record or lake_only) else record_day_digests(store, ctx.profile)
        report = verify_day_digests(store, lake, lake_only=lake_only)
        if not (args.no_record or lake_only):
            # the digests just recomputed in full become the ones reports reuse (ADR 0113)
            record_verified_fingerprints(store, report)
        lakes = (
            [lake]
            if lake is not None
            else store.query(
                "SELECT DISTINCT lake_path FROM archived_days WHERE pruned_at IS NULL"
            )["lake_path"].to_list()
        )
        absent = find_absent_held_days(store, held, lakes, ctx.profile.general.timezone.value)
    if new is not None and new.height:
        ctx.say(gettext("digests recorded for {n} new table-day(s)", n=new.height))
    changed = report.filter(~pl.col("is_ok"))
    problems = []
    for r in changed.iter_rows(named=True):
        fields = {"day": r["service_date"], "table": r["table_name"]}
        if r["problem"] == MISSING_IN_LAKE:
            text = gettext("{day} ({table}: archived, its lake partition is missing)", **fields)
        elif r["problem"] == UNREADABLE:
            text = gettext("{day} ({table}: archived, its lake files cannot be read)", **fields)
        elif r["problem"] == BACK_IN_STORE:
            text = gettext(
                "{day} ({table}: archived, yet the store has rows of it again)", **fields
            )
        else:
            text = gettext(
                "{day} ({table}: {n} rows recorded, {n_now} now)",
                n=r["n_rows"],
                n_now=r["n_rows_now"],
                **fields,
            )
        if r["service_date"] in held:
            text += gettext(
                ", legal hold of case(s) {cases}",
                cases=", ".join(map(str, held[r["service_date"]])),
            )
        problems.append(text)
    ok = report.height - changed.height
    ctx.say(gettext("{ok} of {n} table-day(s) check out", ok=ok, n=report.height))
    pruned = int((report["location"] == "pruned").sum())
    if pruned:
        ctx.say(gettext("{n} table-day(s) deleted past the retention (digest kept)", n=pruned))
    if problems or bad_cases or absent:
        parts = []
        if problems:
            parts.append(gettext("raw data changed on {days}", days="; ".join(problems)))
        if absent:
            # each day's text made apart: pybabel's extractor misses a gettext nested in another
            missing = [
                gettext(
                    "{day} (legal hold of case(s) {cases})",
                    day=day,
                    cases=", ".join(map(str, cases)),
                )
                for day, cases in absent.items()
            ]
            parts.append(
                gettext(
                    "raw data missing from the store and the lake on {days}",
                    days="; ".join(missing),
                )
            )
        if bad_cases:
            parts.append(
                gettext(
                    "evidence package changed in cases {cases}",
                    cases=", ".join(map(str, bad_cases)),
                )
            )
        raise PontualError(
            " — ".join(parts),
            hint=gettext(
                "restore the day from the backup; the recorded digest is the reference (art. 77)"
            ),
        )
    ctx.say(gettext("no changes"))
    return 0
