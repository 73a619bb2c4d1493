"""`pontual cases list|show|lavrar|notificar|defesa|julgar|recurso|encerrar|descartar|overdue|hold`.

Every act names the account that does it (`--by NAME`); its role must allow the act
(`cases.roles`), and the act is recorded with its legal date (`--on`, default today in the
profile's time zone), the reason and the SHA-256 of each attached file. `lavrar` and `descartar`
take a case id or the `infraction_key` of a suggestion (the case is opened from the store);
`lavrar` stores the evidence package built from the store with the case.
Heavy imports live inside the functions (verbs are imported at start-up).
"""

from __future__ import annotations

import argparse
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import date, datetime
from typing import TYPE_CHECKING, Any

from core.texts import N_, gettext

if TYPE_CHECKING:
    from cases.db import CaseDB
    from cases.roles import Account
    from cases.states import Attachment
    from cases.workflow import Workflow
    from core.store import Store
    from pontual.context import Context


def _date(text: str) -> date:
    try:
        return date.fromisoformat(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"expected a date YYYY-MM-DD, got {text!r}") from exc


def _instant(text: str) -> datetime:
    try:
        return datetime.fromisoformat(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(
            "expected a date and time YYYY-MM-DDTHH:MM (local time) or with a time zone, "
            f"got {text!r}"
        ) from exc


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("cases", help="infraction cases: from suggestion to sanction (art. 63-73)")
    verbs = p.add_subparsers(dest="cases_verb", metavar="ATO")
    verbs.required = True

    def act(name: str, help_: str, *, reason_required: bool = True) -> argparse.ArgumentParser:
        a = verbs.add_parser(name, help=help_)
        a.add_argument("case", help="case number (or the suggestion's infraction_key)")
        a.add_argument("--by", required=True, help="account that performs the act")
        a.add_argument("--on", type=_date, help="date of the act (default: today, local time)")
        a.add_argument("--reason", required=reason_required, help="reason / grounds")
        a.add_argument("--attach", action="append", default=[], help="attached file (repeatable)")
        a.set_defaults(func=run_act, act=name)
        return a

    ls = verbs.add_parser("list", help="cases the account can see")
    ls.add_argument("--by", required=True)
    ls.add_argument("--state", help="only the cases in this state")
    ls.set_defaults(func=run_list)
    show = verbs.add_parser("show", help="one case, its deadlines and its acts")
    show.add_argument("case", type=int)
    show.add_argument("--by", required=True)
    show.set_defaults(func=run_show)
    over = verbs.add_parser("overdue", help="cases with an overdue act of the administration")
    over.add_argument("--by", required=True)
    over.add_argument("--today", type=_date, help="reference date (default: today)")
    over.set_defaults(func=run_overdue)

    lav = act(
        "lavrar", "draw up the infraction notice (inspector; art. 68 §1)", reason_required=False
    )
    lav.add_argument("--auto", dest="auto_number", help="notice number")
    lav.add_argument(
        "--at", type=_instant, help="date and time of the fact (default: the suggestion's)"
    )
    lav.add_argument("--stop", help="place: stop (stop_id)")
    lav.add_argument("--lat", type=float, help="place: latitude WGS 84")
    lav.add_argument("--lon", type=float, help="place: longitude WGS 84")
    lav.add_argument("--plate", help="plate (default: from the fleet register)")
    lav.add_argument("--article", help="provision violated (default: the suggestion's)")
    act("notificar", "notice sent to the operator (inspector; art. 68 §2)", reason_required=False)
    act("defesa", "written defence of the operator (art. 69)")
    jul = act("julgar", "judgement (authority; art. 69)")
    jul.add_argument("verdict", choices=("procedente", "improcedente"))
    act("recurso", "appeal of the operator (art. 69-III)")
    enc = act("encerrar", "close the case (after an appeal: --appeal)")
    enc.add_argument("--appeal", choices=("provido", "improvido"), help="decision on the appeal")
    act("descartar", "dismiss the suggestion, with the reason")
    hold = verbs.add_parser("hold", help="legal hold of the case's evidence (planning)")
    hold.add_argument("case", type=int)
    hold.add_argument("--by", required=True)
    hold.add_argument("--off", action="store_true", help="lift the hold")
    hold.add_argument("--reason", required=True)
    hold.set_defaults(func=run_hold)


@contextmanager
def _session(ctx: Context, by: str) -> Iterator[tuple[CaseDB, Account]]:
    from cases.accounts import get_account
    from cases.db import CaseDB

    db = CaseDB.open(ctx.settings.cases_db_url)
    try:
        yield db, get_account(db, by)
    finally:
        db.close()


def _today(ctx: Context) -> date:
    from zoneinfo import ZoneInfo

    return datetime.now(ZoneInfo(ctx.profile.general.timezone.value)).date()


@contextmanager
def _store_for_evidence(ctx: Context) -> Iterator[tuple[Store, bool]]:
    """The store (writable when free, so the fact's day gets its digest recorded), else its
    published snapshot read-only. Yields (store, is_writable)."""
    from core.errors import StoreError
    from core.store import Store, open_snapshot

    try:
        store = Store.open(ctx.settings.store_path)
        writable = True
    except StoreError as exc:
        if not exc.what.startswith("cannot open the store"):
            raise
        store, writable = open_snapshot(ctx.settings.store_path), False
    try:
        yield store, writable
    finally:
        store.close()


def _resolve_case(ctx: Context, db: CaseDB, by: Account, ref: str, *, may_open: bool) -> int:
    """A case id from a number, or from an infraction key (opening the case when allowed)."""
    import sqlalchemy as sa

    from cases.db import CASES
    from cases.errors import CaseError
    from cases.evidence import read_suggestion
    from cases.register import open_case

    if ref.isdigit():
        return int(ref)
    with db.read() as conn:
        got = conn.execute(sa.select(CASES.c.case_id).where(CASES.c.infraction_key == ref)).scalar()
    if got is not None:
        return int(got)
    if not may_open:
        raise CaseError(
            f"no case for suggestion {ref!r}", hint="record it as a case or dismiss it first"
        )
    with _store_for_evidence(ctx) as (store, _):
        suggestion = read_suggestion(store, ref)
    return open_case(db, suggestion, by)


def run_act(args: argparse.Namespace, ctx: Context) -> int:
    from cases.states import Attachment
    from cases.workflow import Workflow

    attachments = [Attachment.of_file(p) for p in args.attach]
    with _session(ctx, args.by) as (db, by):
        wf = Workflow(db, ctx.profile)
        on = args.on or _today(ctx)
        case_id = _resolve_case(
            ctx, db, by, args.case, may_open=args.act in ("lavrar", "descartar")
        )
        if args.act == "lavrar":
            state = _lavrar(ctx, wf, by, case_id, args, on, attachments)
        elif args.act == "notificar":
            state = wf.notificar(
                case_id, by, on=on, reason=args.reason or "auto remetido", attachments=attachments
            )
        elif args.act == "defesa":
            state = wf.defesa(case_id, by, on=on, reason=args.reason, attachments=attachments)
        elif args.act == "julgar":
            state = wf.julgar(
                case_id, by, args.verdict, on=on, reason=args.reason, attachments=attachments
            )
        elif args.act == "recurso":
            state = wf.recurso(case_id, by, on=on, reason=args.reason, attachments=attachments)
        elif args.act == "encerrar":
            state = wf.encerrar(
                case_id,
                by,
                on=on,
                reason=args.reason,
                appeal_outcome=args.appeal,
                attachments=attachments,
            )
        else:
            state = wf.descartar(case_id, by, on=on, reason=args.reason, attachments=attachments)
    ctx.say(gettext("case {case}: {state}", case=case_id, state=_state(state)))
    return 0


def _lavrar(
    ctx: Context,
    wf: Workflow,
    by: Account,
    case_id: int,
    args: argparse.Namespace,
    on: date,
    attachments: list[Attachment],
) -> str:
    from zoneinfo import ZoneInfo

    from cases.errors import CaseError
    from cases.evidence import (
        build_evidence_package,
        read_suggestion,
        record_day_digests,
        registered_plate,
    )
    from cases.register import get_case
    from cases.states import Auto

    case = get_case(wf.db, by, case_id)
    with _store_for_evidence(ctx) as (store, writable):
        if writable:
            record_day_digests(store, ctx.profile, days=[case["occurred_on"]])
        suggestion = read_suggestion(store, case["infraction_key"])
        plate = registered_plate(store, case["vehicle_id"]) if case["vehicle_id"] else None
        evidence = build_evidence_package(store, case["infraction_key"], ctx.profile)
    if args.plate and plate and args.plate != plate:
        raise CaseError(
            f"plate {args.plate} is not that of vehicle {case['vehicle_id']} in the register ({plate})",
            where=f"case {case_id}",
        )
    fact_at = args.at or suggestion.get("occurred_at")
    if fact_at is not None and fact_at.tzinfo is None:
        fact_at = fact_at.replace(tzinfo=ZoneInfo(ctx.profile.general.timezone.value))
    auto = Auto(
        auto_number=args.auto_number,
        fact_at=fact_at,
        place_stop_id=args.stop,
        place_lat=args.lat,
        place_lon=args.lon,
        vehicle_plate=args.plate or plate,
        article=args.article,
    )
    reason = args.reason or "auto de infração lavrado"
    return wf.lavrar(
        case_id, by, auto, on=on, reason=reason, attachments=attachments, evidence=evidence
    )


def _state(code: str) -> str:
    """A case state as shown (the law's word in pt-BR, `cases.states.STATE_LABELS`)."""
    from cases.states import to_state_label  # heavy imports when the verb runs

    return to_state_label(code)


def _sanctions(stored: str) -> str:
    """A case's sanctions as shown (`cases.states.SANCTION_LABELS`)."""
    from cases.states import to_sanctions_label

    return to_sanctions_label(stored)


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        return f"{value:g}"
    if isinstance(value, bool):
        return gettext("yes") if value else gettext("no")
    return str(value)


def run_list(args: argparse.Namespace, ctx: Context) -> int:
    from rich.table import Table

    from cases.register import list_cases

    with _session(ctx, args.by) as (db, by):
        cases = list_cases(db, by, state=args.state)
    table = Table(
        gettext("case"),
        gettext("state"),
        gettext("operator"),
        gettext("item"),
        gettext("fact on"),
        gettext("notice"),
        gettext("judgement"),
        gettext("sanctions"),
        gettext("URM"),
        gettext("competent authority"),
    )
    for r in cases.iter_rows(named=True):
        table.add_row(
            str(r["case_id"]),
            _state(r["state"]),
            r["operator_id"],
            f"{r['group']}-{r['item']}",
            _cell(r["occurred_on"]),
            _cell(r["auto_number"]),
            _cell(r["verdict"]),
            _cell(r["sanctions"] and _sanctions(r["sanctions"])),
            _cell(r["urm"]),
            _cell(r["sanction_authority"]),
        )
    ctx.console.print(table)
    return 0


def run_show(args: argparse.Namespace, ctx: Context) -> int:
    from cases.register import get_case
    from cases.workflow import Workflow

    with _session(ctx, args.by) as (db, by):
        wf = Workflow(db, ctx.profile)
        case = get_case(db, by, args.case)
        n_susp = wf.count_suspensions(case["operator_id"], _today(ctx))
    say = ctx.console.print
    if case.get("fact_at") is not None:  # shown in local time, the time the auto states
        from zoneinfo import ZoneInfo

        tz = ctx.profile.general.timezone.value
        case["fact_at"] = f"{case['fact_at'].astimezone(ZoneInfo(tz)):%Y-%m-%d %H:%M} ({tz})"
    say(
        "[bold]"
        + gettext("case {case}", case=case["case_id"])
        + f"[/] — {_state(case['state'])} — {case['infraction_key']}"
    )
    for label, key in (
        (N_("operator"), "operator_id"),
        (N_("item"), "item"),
        (N_("description"), "description"),
        (N_("provision"), "article"),
        (N_("fact"), "fact"),
        (N_("notice"), "auto_number"),
        (N_("plate"), "vehicle_plate"),
        (N_("place (stop)"), "place_stop_id"),
        (N_("date and time"), "fact_at"),
        (N_("drawn up by"), "lavrada_by"),
        (N_("judgement"), "verdict"),
        (N_("sanctions"), "sanctions"),
        (N_("URM"), "urm"),
        (N_("repeat offence (art. 65)"), "is_repeat"),
        (N_("competent authority (art. 64)"), "sanction_authority"),
        (N_("appeal"), "appeal_outcome"),
        (N_("reason for dismissal"), "discard_reason"),
        (N_("legal hold of the evidence"), "is_legal_hold"),
        (N_("evidence (SHA-256)"), "evidence_sha256"),
    ):
        if case.get(key) not in (None, ""):
            value = _sanctions(case[key]) if key == "sanctions" else case[key]
            say(f"  {gettext(label)}: {_cell(value)}", highlight=False, markup=False)
    for label, due in wf.deadlines(case).items():
        say(
            "  " + gettext("deadline — {label}: {due}", label=gettext(label), due=due),
            highlight=False,
            markup=False,
        )
    say(
        "  " + gettext("suspensions applied in 24 months (art. 72-I): {n}", n=n_susp),
        highlight=False,
    )
    for e in case["events"]:
        say(
            "  "
            + gettext(
                "{on} {before} → {after} by {actor} ({role}): {reason}",
                on=e["on_date"],
                before=_state(e["from_state"]),
                after=_state(e["to_state"]),
                actor=e["actor"],
                role=e["role"],
                reason=e["reason"],
            ),
            highlight=False,
            markup=False,
        )
    return 0


def run_overdue(args: argparse.Namespace, ctx: Context) -> int:
    from rich.table import Table

    from cases.workflow import Workflow

    with _session(ctx, args.by) as (db, by):
        late = Workflow(db, ctx.profile).overdue(by, args.today or _today(ctx))
    if late.height == 0:
        ctx.say(gettext("no case overdue"))
        return 0
    table = Table(
        gettext("case"),
        gettext("state"),
        gettext("operator"),
        gettext("pending act"),
        gettext("deadline"),
        gettext("days late"),
    )
    for r in late.iter_rows(named=True):
        table.add_row(
            str(r["case_id"]),
            _state(r["state"]),
            r["operator_id"],
            gettext(r["pending"]),
            str(r["due_on"]),
            str(r["days_late"]),
        )
    ctx.console.print(table)
    return 0


def run_hold(args: argparse.Namespace, ctx: Context) -> int:
    from cases.workflow import Workflow

    with _session(ctx, args.by) as (db, by):
        Workflow(db, ctx.profile).hold(args.case, by, on=not args.off, reason=args.reason)
    if args.off:
        ctx.say(gettext("case {case}: legal hold lifted", case=args.case))
    else:
        ctx.say(gettext("case {case}: legal hold on", case=args.case))
    return 0
