"""Errors of the case layer: all are `core.errors.PontualError` (exit 2 with a hint)."""

from __future__ import annotations

import re
from functools import cache

from core.errors import PontualError
from core.texts import N_, compile_templates, gettext, language, match_template


class CaseError(PontualError):
    """A case operation the law or the case's state does not allow (illegal transition,
    missing art. 68 §1 field, a deadline passed)."""


class AccessDenied(PontualError):
    """An account asked for something its role does not allow."""


class AccountError(PontualError):
    """An unknown account, a wrong password, a bad role or operator."""


AUTO_FIELDS: dict[str, str] = {
    "auto_number": N_("--auto (notice number)"),
    "operator_id": N_("operator (I)"),
    "vehicle_plate": N_("--plate (fleet number or plate, II)"),
    "place": N_("--stop or --lat/--lon (place, III)"),
    "fact_at": N_("--at (date and time, III)"),
    "article": N_("--article (legal provision violated, IV)"),
    "lavrada_by": N_("--by (signing authority, V)"),
}
"""The fields of an auto (art. 68 §1), by the name the command line's option gives them: the
English ids that the refusal "required fields ... missing: {fields}" lists, joined by "; "
(each translated in turn where the refusal is shown)."""

MESSAGES: tuple[str, ...] = (
    N_("unknown digest method {method}"),
    N_("verify with the Pontual version that recorded it"),
    N_("verifying only the lake needs the lake's path"),
    N_(
        "the raw data of {day} were archived to the lake: the evidence package would lack the fact's pings and transactions"
    ),
    N_("draw up the cases of a period before archiving it (docs/retention.md)"),
    N_("suggestion {key} is not in the store"),
    N_("see the suggestions with `pontual indices` or in the dashboard"),
    N_("case {case_id} does not exist"),
    N_("see `pontual cases list`"),
    N_("case {case_id} has no evidence package (not drawn up yet)"),
    N_("unknown state {state}"),
    N_("states: {states}"),
    N_("profile {profile} sets no deadline for the monthly report"),
    N_("add procedure.monthly_report_business_days to the profile"),
    N_("profile {profile} sets no month for the semester report"),
    N_("add procedure.semester_report_months to the profile"),
    N_("unknown report {kind}"),
    N_("reports: monthly, semester"),
    N_("item {item} is not in the catalogue of profile {profile}"),
    N_("attachment not found"),
    N_("say why (--reason)"),
    N_("every act of a case records its reason"),
    N_("act date {on} in the future (today is {today})"),
    N_("record the act on the date it was done"),
    N_("case {case_id} is '{state}': '{action}' is not allowed"),
    N_("acts possible now: {acts}"),
    N_("the case is closed"),
    N_("act date {on} before the case's last act ({last})"),
    N_("the acts of a case follow the order of time"),
    N_("case {case_id} was changed by someone else at the same time"),
    N_("look the case up and repeat the act"),
    N_("date and time of the fact without a time zone"),
    N_("required fields of the infraction notice missing (art. 68 §1): {fields}"),
    N_("coordinates outside the WGS 84 range"),
    N_("notice number {number} already used in another case"),
    N_(
        "sending deadline of the notice passed on {due} (art. 68 §2: {days} days from drawing up on {drawn_on})"
    ),
    N_("a notice sent past the deadline is void: discard the case with the reason"),
    N_(
        "defence past the deadline: it ended on {due} ({days} business days from notice on {notified_on}, art. 69)"
    ),
    N_("the case goes to judgement without a defence"),
    N_("verdict {verdict}: use procedente or improcedente"),
    N_("the defence deadline is open until {due} (art. 69, suspensive effect)"),
    N_("judge after the deadline, or after the defence is filed"),
    N_("only a procedente verdict can be appealed (art. 69-III)"),
    N_("appeal past the deadline: it ended on {due} (art. 69-III)"),
    N_("decide the appeal: --appeal provido or improvido"),
    N_("the case is not under appeal"),
    N_("the appeal deadline is open until {due}"),
    N_("plate {plate} is not that of vehicle {vehicle} in the register ({registered})"),
    *AUTO_FIELDS.values(),
    # accounts and roles (cases.accounts, cases.roles): the dashboard's sign-in says them too
    N_("unknown role {role}"),
    N_("roles: {roles}"),
    N_("an operadora account needs --operator"),
    N_("e.g. --operator O1"),
    N_("--operator is only for accounts of the role operadora"),
    N_("account name empty or too long (at most 100 characters)"),
    N_("password too short: use at least {n} characters"),
    N_("the account {name} already exists"),
    N_("accounts exist already: say who creates this one with --by"),
    N_("a planning account (see `pontual users list`)"),
    N_("the first account must be of the role planejamento (it creates the others)"),
    N_("pontual users add NAME --role planejamento"),
    N_("unknown account {name}"),
    N_("create it with `pontual users add NAME --role ROLE`"),
    N_("wrong name or password"),
    N_("the account {name} (operator {own}) has no access to data of operator {operator}"),
    N_("an operator sees and answers only its own cases"),
    N_("the account {name} ({role}) may not do '{action}'"),
    N_("ask an account of the competent role (see `pontual users list`)"),
    N_("the account {name} (operadora) reads only tables with a column operator_id"),
    N_("this table cannot be limited to the operator's data"),
    # the procedure's calendar and the case database (cases.calendar, cases.db)
    N_("profile {profile} defines no infraction procedure ([procedure])"),
    N_("add the [procedure] section to the profile (deadlines, state, municipal holidays)"),
    N_("the case database is at schema version {current}, newer than this Pontual ({latest})"),
    N_("upgrade Pontual"),
    N_("cannot use the case database URL: {text}"),
    N_("e.g. sqlite:///data/pontual.cases.sqlite or postgresql+psycopg://user@host/db"),
    N_("the case database refused the write: {text}"),
    N_("try again; if it persists, check that the database is reachable"),
    N_("cannot open the case database: {text}"),
    N_("check PONTUAL_CASES_DB and that the server is running"),
    # an identity provider's person without an account (dashboard.auth, shown at sign-in)
    N_("{name} signed in through the identity provider but has no Pontual account"),
    N_("`pontual users add {name} --role ROLE --oidc`"),
)
"""The English ids of this layer's refusals and hints (docs/adr/0093): the command line
translates them with its own (`pontual.messages`), the dashboard with `said`."""


@cache
def _templates() -> list[tuple[re.Pattern[str], str]]:
    return compile_templates(MESSAGES)


def to_local_text(text: str) -> str:
    """A refusal's or hint's English text in the chosen language, its fields translated in
    turn when they are texts of this layer (a list of them, "a; b", item by item), else kept
    as they are; a text no id matches is shown as it is."""
    if language() == "en":
        return text
    if text in MESSAGES:
        return gettext(text)
    matched = match_template(text, _templates())
    if matched is None:
        return text
    msgid, fields = matched
    return gettext(
        msgid, **{k: "; ".join(map(to_local_text, v.split("; "))) for k, v in fields.items()}
    )


def said(exc: PontualError) -> str:
    """A refusal of this layer as the dashboard shows it, in the chosen language: the text,
    its place ("case 3, field fact_at") and its hint."""
    text = to_local_text(exc.what)
    if exc.where:
        where = re.sub(r"^(case|suggestion) ", lambda m: gettext(m[1]) + " ", exc.where)
        text += f" ({where.replace(', field ', ', ' + gettext('field') + ' ')})"
    return text + (f" — {to_local_text(exc.hint)}" if exc.hint else "")
