"""The case state machine on both databases: every state, refusals with clear errors, deadlines
in business days (hand-checked against the 2026 calendar of RS), judged repeats, sanctions."""

from __future__ import annotations

from datetime import UTC, date, datetime
from typing import Any

import pytest
import sqlalchemy as sa

from cases.db import AUDIT_LOG, CASE_EVENTS, CaseDB
from cases.errors import AccessDenied, CaseError, said
from cases.register import get_case, list_cases, open_case
from cases.roles import Account
from cases.states import Auto, to_sanctions_label
from cases.workflow import Workflow
from core.profile import load_profile
from core.texts import LANG_ENV

PROFILE = load_profile("bento-goncalves-2021")


def suggestion(key: str = "B-IV|O1|2026-03-02|V12", **over: Any) -> dict[str, Any]:
    row = {
        "infraction_key": key,
        "group": "B",
        "item": "IV",
        "description": "texto do item IV",
        "operator_id": "O1",
        "route_id": "R1",
        "vehicle_id": "V12",
        "occurred_on": date(2026, 3, 2),
        "fact": "viagem suprimida",
        "source": "BG Anexo I, grupo B, inciso IV; art. 65",
        "urm": 1.0,
    }
    row.update(over)
    return row


def auto(number: str = "AI-2026-0001", **over: Any) -> Auto:
    fields: dict[str, Any] = {
        "auto_number": number,
        "fact_at": datetime(2026, 3, 2, 10, 15, tzinfo=UTC),
        "place_stop_id": "S7",
        "vehicle_plate": "IAB1C23",
    }
    fields.update(over)
    return Auto(**fields)


def lavrada_notificada(wf: Workflow, db: CaseDB, people: dict[str, Account], **kw: Any) -> int:
    cid = open_case(db, suggestion(**kw), people["fiscal"])
    wf.lavrar(cid, people["fiscal"], auto(number=f"AI-{cid}"), on=date(2026, 3, 5))
    wf.notificar(cid, people["fiscal"], on=date(2026, 3, 10))
    return cid


def test_business_day_deadlines_hand_checked(case_db: CaseDB) -> None:
    wf = Workflow(case_db, PROFILE)
    # 15 business days after 10 Mar 2026 (no holiday in March in RS): 31 Mar
    assert wf.defence_due(date(2026, 3, 10)) == date(2026, 3, 31)
    # after 30 Mar: Good Friday (3 Apr) and Tiradentes (21 Apr) are skipped: 22 Apr
    assert wf.appeal_due(date(2026, 3, 30)) == date(2026, 4, 22)
    # after 18 Dec: Christmas and New Year skipped: 12 Jan 2027
    assert wf.defence_due(date(2026, 12, 18)) == date(2027, 1, 12)
    # a municipal holiday of the profile (13 Jun, Saturday in 2026 -> take 2025, a Friday)
    assert not wf.calendar.is_business_day(date(2025, 6, 13))
    # a state holiday of RS (20 Sep 2027 is a Monday)
    assert not wf.calendar.is_business_day(date(2027, 9, 20))
    assert wf.auto_due(date(2026, 3, 5)) == date(2026, 3, 20)
    assert wf.judgment_due(date(2026, 3, 20)) == date(2026, 6, 18)


def test_a_case_through_every_state(case_db: CaseDB, people: dict[str, Account]) -> None:
    wf = Workflow(case_db, PROFILE)
    fiscal, boss = people["fiscal"], people["autoridade"]
    op = people["operadora"]
    cid = open_case(case_db, suggestion(), fiscal)
    assert get_case(case_db, fiscal, cid)["state"] == "sugerida"
    evidence = ('{"x":1}', "ab" * 32)
    assert wf.lavrar(cid, fiscal, auto(), on=date(2026, 3, 5), evidence=evidence) == "lavrada"
    assert wf.notificar(cid, fiscal, on=date(2026, 3, 10)) == "notificada"
    assert wf.defesa(cid, op, on=date(2026, 3, 20), reason="o veículo quebrou") == "em defesa"
    assert wf.julgar(cid, boss, "procedente", on=date(2026, 3, 30), reason="sem prova") == "julgada"
    assert wf.recurso(cid, op, on=date(2026, 4, 10), reason="recorre") == "em recurso"
    assert (
        wf.encerrar(cid, boss, on=date(2026, 5, 5), reason="mantido", appeal_outcome="improvido")
        == "encerrada"
    )
    case = get_case(case_db, boss, cid)
    assert case["state"] == "encerrada"
    assert case["auto_number"] == "AI-2026-0001"
    assert case["lavrada_by"] == "fabio"
    assert case["vehicle_plate"] == "IAB1C23"
    assert case["fact_at"] == datetime(2026, 3, 2, 10, 15, tzinfo=UTC)
    assert case["verdict"] == "procedente"
    assert case["sanctions"] == "multa"
    assert case["urm"] == 1.0  # B-IV first offence
    assert case["sanction_authority"] == "Agente de Fiscalização do Município"
    assert case["appeal_outcome"] == "improvido"
    assert case["evidence_sha256"] == "ab" * 32
    states = [(e["from_state"], e["to_state"], e["actor"]) for e in case["events"]]
    assert states == [
        ("sugerida", "lavrada", "fabio"),
        ("lavrada", "notificada", "fabio"),
        ("notificada", "em defesa", "op1"),
        ("em defesa", "julgada", "alice"),
        ("julgada", "em recurso", "op1"),
        ("em recurso", "encerrada", "alice"),
    ]
    # every transition is audited
    with case_db.read() as conn:
        n = conn.execute(
            sa.select(sa.func.count())
            .select_from(AUDIT_LOG)
            .where(AUDIT_LOG.c.action == "case_transition")
        ).scalar()
    assert n == 6
    # and descartada, from a second suggestion
    other = open_case(case_db, suggestion("B-IV|O1|2026-03-03|V12"), fiscal)
    assert wf.descartar(other, fiscal, on=date(2026, 3, 4), reason="GPS falhou") == "descartada"
    assert get_case(case_db, fiscal, other)["discard_reason"] == "GPS falhou"


def test_illegal_transition_is_refused_clearly(case_db: CaseDB, people: dict[str, Account]) -> None:
    wf = Workflow(case_db, PROFILE)
    cid = open_case(case_db, suggestion(), people["fiscal"])
    with pytest.raises(CaseError, match="is 'sugerida': 'julgar' is not allowed") as err:
        wf.julgar(cid, people["autoridade"], "procedente", on=date(2026, 3, 5), reason="x")
    assert "lavrar" in (err.value.hint or "")
    # nothing was recorded
    with case_db.read() as conn:
        n = conn.execute(sa.select(sa.func.count()).select_from(CASE_EVENTS)).scalar()
    assert n == 0
    wf.descartar(cid, people["fiscal"], on=date(2026, 3, 5), reason="falso positivo")
    with pytest.raises(CaseError, match="is 'descartada'") as err:
        wf.lavrar(cid, people["fiscal"], auto(), on=date(2026, 3, 6))
    assert err.value.hint == "the case is closed"


def test_missing_art_68_field_is_refused(
    case_db: CaseDB, people: dict[str, Account], monkeypatch: pytest.MonkeyPatch
) -> None:
    wf = Workflow(case_db, PROFILE)
    cid = open_case(case_db, suggestion(), people["fiscal"])
    with pytest.raises(CaseError, match=r"art\. 68 §1.*--plate.*--stop or --lat/--lon") as err:
        wf.lavrar(
            cid, people["fiscal"], auto(vehicle_plate=None, place_stop_id=None), on=date(2026, 3, 5)
        )
    assert err.value.where == f"case {cid}"
    # the fields are catalogue texts too: each is shown in the chosen language
    monkeypatch.delenv(LANG_ENV, raising=False)
    assert said(err.value) == (
        "faltam campos obrigatórios do auto de infração (art. 68 §1): --plate (prefixo ou "
        f"placa, II); --stop ou --lat/--lon (local, III) (caso {cid})"
    )
    monkeypatch.setenv(LANG_ENV, "en")
    assert said(err.value) == (
        "required fields of the infraction notice missing (art. 68 §1): --plate (fleet number "
        f"or plate, II); --stop or --lat/--lon (place, III) (case {cid})"
    )
    with pytest.raises(CaseError, match=r"--at \(date and time"):
        wf.lavrar(cid, people["fiscal"], auto(fact_at=None), on=date(2026, 3, 5))
    assert get_case(case_db, people["fiscal"], cid)["state"] == "sugerida"
    # coordinates are an accepted place
    wf.lavrar(
        cid,
        people["fiscal"],
        auto(place_stop_id=None, place_lat=-29.17, place_lon=-51.52),
        on=date(2026, 3, 5),
    )


def test_defence_after_its_deadline_is_refused(case_db: CaseDB, people: dict[str, Account]) -> None:
    wf = Workflow(case_db, PROFILE)
    cid = lavrada_notificada(wf, case_db, people)
    with pytest.raises(CaseError, match=r"defence past the deadline: it ended on 2026-03-31"):
        wf.defesa(cid, people["operadora"], on=date(2026, 4, 1), reason="tarde")
    # on the last day it is accepted
    assert (
        wf.defesa(cid, people["operadora"], on=date(2026, 3, 31), reason="a tempo") == "em defesa"
    )


def test_judgment_waits_for_the_defence_window(case_db: CaseDB, people: dict[str, Account]) -> None:
    wf = Workflow(case_db, PROFILE)
    cid = lavrada_notificada(wf, case_db, people)
    with pytest.raises(CaseError, match="defence deadline is open until 2026-03-31"):
        wf.julgar(cid, people["autoridade"], "procedente", on=date(2026, 3, 20), reason="x")
    wf.julgar(cid, people["autoridade"], "improcedente", on=date(2026, 4, 1), reason="revelia")
    with pytest.raises(CaseError, match="only a procedente verdict can be appealed"):
        wf.recurso(cid, people["operadora"], on=date(2026, 4, 2), reason="x")


def test_late_notification_is_refused(case_db: CaseDB, people: dict[str, Account]) -> None:
    wf = Workflow(case_db, PROFILE)
    cid = open_case(case_db, suggestion(), people["fiscal"])
    wf.lavrar(cid, people["fiscal"], auto(), on=date(2026, 3, 5))
    with pytest.raises(CaseError, match=r"sending deadline of the notice passed on 2026-03-20"):
        wf.notificar(cid, people["fiscal"], on=date(2026, 3, 21))


def test_roles_each_act(case_db: CaseDB, people: dict[str, Account]) -> None:
    wf = Workflow(case_db, PROFILE)
    cid = open_case(case_db, suggestion(), people["fiscal"])
    with pytest.raises(AccessDenied, match="may not do 'lavrar'"):
        wf.lavrar(cid, people["autoridade"], auto(), on=date(2026, 3, 5))
    with pytest.raises(AccessDenied):
        wf.lavrar(cid, people["planejamento"], auto(), on=date(2026, 3, 5))
    wf.lavrar(cid, people["fiscal"], auto(), on=date(2026, 3, 5))
    wf.notificar(cid, people["fiscal"], on=date(2026, 3, 10))
    # another operator cannot answer O1's case, nor read it
    with pytest.raises(AccessDenied, match="of operator 'O1'"):
        wf.defesa(cid, people["operadora2"], on=date(2026, 3, 11), reason="x")
    with pytest.raises(AccessDenied):
        get_case(case_db, people["operadora2"], cid)
    with pytest.raises(AccessDenied, match="may not do 'julgar'"):
        wf.julgar(cid, people["fiscal"], "procedente", on=date(2026, 4, 1), reason="x")


def test_lists_are_filtered_by_role(case_db: CaseDB, people: dict[str, Account]) -> None:
    wf = Workflow(case_db, PROFILE)
    c1 = open_case(case_db, suggestion(), people["fiscal"])
    c2 = open_case(
        case_db, suggestion("B-IV|O2|2026-03-02|V40", operator_id="O2"), people["fiscal"]
    )
    assert list_cases(case_db, people["planejamento"])["case_id"].to_list() == [c1, c2]
    assert list_cases(case_db, people["operadora"])["case_id"].to_list() == [c1]
    assert list_cases(case_db, people["operadora2"])["case_id"].to_list() == [c2]
    # the board sees verdicts only
    assert list_cases(case_db, people["conselho"]).height == 0
    wf.lavrar(c1, people["fiscal"], auto(), on=date(2026, 3, 5))
    wf.notificar(c1, people["fiscal"], on=date(2026, 3, 10))
    wf.julgar(c1, people["autoridade"], "procedente", on=date(2026, 4, 1), reason="revelia")
    assert list_cases(case_db, people["conselho"])["case_id"].to_list() == [c1]
    with pytest.raises(AccessDenied):
        list_cases(case_db, Account("x", "public"))


def test_repeat_counts_only_after_a_procedente_judgment(
    case_db: CaseDB, people: dict[str, Account]
) -> None:
    """Two facts of B-IV 20 days apart: the second is a repeat (double fine, art. 65) only once
    the first has been judged procedente; an improcedente first one never makes it a repeat."""
    wf = Workflow(case_db, PROFILE)
    fiscal, boss = people["fiscal"], people["autoridade"]
    first = lavrada_notificada(wf, case_db, people, key="k1", occurred_on=date(2026, 2, 10))
    second = lavrada_notificada(wf, case_db, people, key="k2", occurred_on=date(2026, 3, 2))
    third = lavrada_notificada(wf, case_db, people, key="k3", occurred_on=date(2026, 3, 2))
    # the second judged while the first is still unjudged: not a repeat
    wf.julgar(second, boss, "procedente", on=date(2026, 4, 1), reason="r")
    got = get_case(case_db, fiscal, second)
    assert (got["is_repeat"], got["urm"]) == (False, 1.0)
    # the first judged procedente: the third, judged after it, is a repeat (B-IV repeat: 2 URM)
    wf.julgar(first, boss, "procedente", on=date(2026, 4, 2), reason="r")
    wf.julgar(third, boss, "procedente", on=date(2026, 4, 3), reason="r")
    got = get_case(case_db, fiscal, third)
    assert (got["is_repeat"], got["urm"], got["sanctions"]) == (True, 2.0, "multa")


def test_improcedente_and_reversed_cases_do_not_make_repeats(
    case_db: CaseDB, people: dict[str, Account]
) -> None:
    wf = Workflow(case_db, PROFILE)
    boss = people["autoridade"]
    first = lavrada_notificada(wf, case_db, people, key="k1", occurred_on=date(2026, 2, 10))
    wf.julgar(first, boss, "improcedente", on=date(2026, 4, 1), reason="r")
    later = lavrada_notificada(wf, case_db, people, key="k2", occurred_on=date(2026, 3, 2))
    wf.julgar(later, boss, "procedente", on=date(2026, 4, 2), reason="r")
    assert get_case(case_db, boss, later)["is_repeat"] is False


def test_sanctions_by_name_and_suspension_count(
    case_db: CaseDB, people: dict[str, Account], monkeypatch: pytest.MonkeyPatch
) -> None:
    wf = Workflow(case_db, PROFILE)
    boss = people["autoridade"]
    # group A, first offence: advertência without fine (art. 67-I); repeat: multa 1 URM
    assert wf.sanctions_for("A", "I", is_repeat=False) == (["advertência"], 0.0)
    assert wf.sanctions_for("A", "I", is_repeat=True) == (["multa"], 1.0)
    assert wf.sanctions_for("I", "LXXXVI", is_repeat=False) == (["multa", "cassação"], 10.0)
    assert wf.sanctions_for("F", "LXXII", is_repeat=False) == (["multa", "afastamento"], 4.0)
    ids = []
    for n, day in enumerate((date(2025, 1, 6), date(2026, 2, 2))):
        cid = lavrada_notificada(
            wf, case_db, people, key=f"h{n}", group="H", item="LXXXII", occurred_on=day
        )
        ids.append(cid)
    wf.julgar(ids[0], boss, "procedente", on=date(2026, 4, 1), reason="r")
    case = get_case(case_db, boss, ids[0])
    assert case["sanctions"] == "multa, suspensão"
    # stored as the law's words; shown in the chosen language
    assert to_sanctions_label(case["sanctions"]) == "multa, suspensão"
    monkeypatch.setenv(LANG_ENV, "en")
    assert to_sanctions_label(case["sanctions"]) == "fine, suspension"
    monkeypatch.delenv(LANG_ENV)
    assert case["sanction_authority"] == "Agente de Fiscalização do Município; Prefeito Municipal"
    assert wf.count_suspensions("O1", date(2026, 4, 30)) == 1
    wf.julgar(ids[1], boss, "procedente", on=date(2026, 4, 2), reason="r")
    assert wf.count_suspensions("O1", date(2026, 4, 30)) == 2  # > 1: art. 72-I ground
    assert wf.count_suspensions("O1", date(2028, 4, 2)) == 0  # both older than 24 months
    assert wf.count_suspensions("O2", date(2026, 4, 30)) == 0


def test_overdue_cases_are_listed(case_db: CaseDB, people: dict[str, Account]) -> None:
    wf = Workflow(case_db, PROFILE)
    cid = open_case(case_db, suggestion(), people["fiscal"])
    wf.lavrar(cid, people["fiscal"], auto(), on=date(2026, 3, 5))
    assert wf.overdue(people["planejamento"], date(2026, 3, 20)).height == 0
    late = wf.overdue(people["planejamento"], date(2026, 3, 23))
    assert late.select("case_id", "due_on", "days_late").row(0) == (cid, date(2026, 3, 20), 3)


def test_acts_cannot_be_dated_in_the_future_or_before_the_last(
    case_db: CaseDB, people: dict[str, Account]
) -> None:
    wf = Workflow(case_db, PROFILE)
    cid = open_case(case_db, suggestion(), people["fiscal"])
    with pytest.raises(CaseError, match="in the future"):
        wf.descartar(cid, people["fiscal"], on=date(2999, 1, 1), reason="x")
    wf.lavrar(cid, people["fiscal"], auto(), on=date(2026, 3, 5))
    with pytest.raises(CaseError, match="before the case's last act"):
        wf.notificar(cid, people["fiscal"], on=date(2026, 3, 4))
    with pytest.raises(CaseError, match="say why"):
        wf.descartar(cid, people["fiscal"], on=date(2026, 3, 6), reason=" ")
