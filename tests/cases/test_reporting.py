"""What the monthly and semester reports say about cases and about their own due days: cases
of the period by state with the act pending and its deadline (hand-checked against the 2026
calendar of RS), and report due days (BG art. 62-VII: 30 business days; Anexo I XLII: July and
December) with late ones flagged. On both databases."""

from __future__ import annotations

from datetime import date

import pytest

from cases.db import CaseDB
from cases.register import open_case
from cases.report_dues import read_report_dues, record_report_delivery, report_due_on
from cases.reporting import count_cases_by_state, read_period_cases
from cases.roles import Account
from cases.workflow import Workflow
from core.periods import parse_period
from core.texts import LANG_ENV
from tests.cases.test_workflow import PROFILE, auto, suggestion


def test_report_due_days_hand_checked() -> None:
    # March 2026 ends on Tue 31; 30 business days: April has 22 weekdays less Good Friday
    # (3 Apr) and Tiradentes (21 Apr) = 20; May 1 is Labour Day; 4-8 and 11-15 May make 30
    assert report_due_on("monthly", parse_period("2026-03"), PROFILE)[0] == date(2026, 5, 15)
    due, basis = report_due_on("semester", parse_period("2026-S1"), PROFILE)
    assert due == date(2026, 7, 31) and "XLII" in basis
    assert report_due_on("semester", parse_period("2026-S2"), PROFILE)[0] == date(2026, 12, 31)


def test_late_reports_are_flagged(case_db: CaseDB, monkeypatch: pytest.MonkeyPatch) -> None:
    record_report_delivery(case_db, "monthly", "2026-03", date(2026, 5, 18), "ana", "ab" * 32)
    record_report_delivery(case_db, "monthly", "2026-01", date(2026, 2, 20), "ana")
    dues = read_report_dues(
        case_db, "monthly", ["2026-01", "2026-02", "2026-03", "2026-04"], PROFILE, date(2026, 6, 1)
    )
    got = {r["period"]: r for r in dues.iter_rows(named=True)}
    # January's, delivered on 20 Feb, was on time
    assert got["2026-01"]["status"] == "entregue no prazo" and not got["2026-01"]["is_late"]
    # March's: due Fri 15 May, delivered Mon 18 May: 3 days late
    assert got["2026-03"]["status"] == "entregue com atraso"
    assert got["2026-03"]["days_late"] == 3
    # February's never delivered: due 30 business days after 28 Feb (Carnival is no national
    # holiday in `holidays`), long past on 1 June
    assert got["2026-02"]["status"] == "atrasado — não entregue" and got["2026-02"]["is_late"]
    # April's is not due yet on 1 June
    assert got["2026-04"]["status"] == "no prazo — não entregue"
    assert dues["is_late"].to_list() == [False, True, True, False]
    # a correction replaces the delivery day
    record_report_delivery(case_db, "monthly", "2026-03", date(2026, 5, 14), "ana")
    again = read_report_dues(case_db, "monthly", ["2026-03"], PROFILE, date(2026, 6, 1))
    assert again["status"].to_list() == ["entregue no prazo"]
    monkeypatch.setenv(LANG_ENV, "en")  # shown, never stored: in the chosen language
    again = read_report_dues(case_db, "monthly", ["2026-03"], PROFILE, date(2026, 6, 1))
    assert again.select("report", "status").row(0) == (
        "Monthly management report",
        "delivered on time",
    )
    assert again["basis"].item().startswith("30 working days after the end of the month (")


def test_cases_of_the_period_by_state_with_deadlines(
    case_db: CaseDB, people: dict[str, Account]
) -> None:
    wf = Workflow(case_db, PROFILE)
    fiscal, boss = people["fiscal"], people["autoridade"]
    op = people["operadora"]

    def opened(n: int, day: date) -> int:
        return open_case(case_db, suggestion(key=f"B-IV|O1|{day}|V{n}", occurred_on=day), fiscal)

    sugerida = opened(1, date(2026, 3, 2))
    lavrada = opened(2, date(2026, 3, 3))
    wf.lavrar(lavrada, fiscal, auto(number="AI-2"), on=date(2026, 3, 5))
    notificada = opened(3, date(2026, 3, 4))
    wf.lavrar(notificada, fiscal, auto(number="AI-3"), on=date(2026, 3, 5))
    wf.notificar(notificada, fiscal, on=date(2026, 3, 10))
    julgada = opened(4, date(2026, 3, 5))
    wf.lavrar(julgada, fiscal, auto(number="AI-4"), on=date(2026, 3, 6))
    wf.notificar(julgada, fiscal, on=date(2026, 3, 10))
    wf.defesa(julgada, op, on=date(2026, 3, 20), reason="trânsito")
    wf.julgar(julgada, boss, "procedente", on=date(2026, 3, 30), reason="provas do GPS")
    april = opened(5, date(2026, 4, 2))  # outside March

    cases = read_period_cases(
        case_db, PROFILE, date(2026, 3, 1), date(2026, 3, 31), date(2026, 4, 1)
    )
    rows = {r["case_id"]: r for r in cases.iter_rows(named=True)}
    assert april not in rows
    assert cases["state"].to_list() == ["sugerida", "lavrada", "notificada", "julgada"]
    assert rows[sugerida]["due_on"] is None and not rows[sugerida]["is_overdue"]
    # the auto lavrado on 5 Mar had to reach the operator by 20 Mar (15 days): 12 days late
    assert rows[lavrada]["pending"] == "notify the operator (art. 68 §2)"
    assert (rows[lavrada]["due_on"], rows[lavrada]["days_late"]) == (date(2026, 3, 20), 12)
    # notified 10 Mar: defence by 31 Mar (15 business days), not late on 1 Apr... by a day
    assert (rows[notificada]["due_on"], rows[notificada]["days_late"]) == (date(2026, 3, 31), 1)
    # judged procedente 30 Mar: appeal by 22 Apr (Good Friday and Tiradentes skipped)
    assert rows[julgada]["pending"] == "the operator's appeal (art. 69-III)"
    assert (rows[julgada]["due_on"], rows[julgada]["is_overdue"]) == (date(2026, 4, 22), False)
    by_state = {r["state"]: r for r in count_cases_by_state(cases).iter_rows(named=True)}
    assert len(by_state) == 8  # every state listed
    assert (by_state["lavrada"]["n_cases"], by_state["lavrada"]["n_overdue"]) == (1, 1)
    assert by_state["encerrada"]["n_cases"] == 0


def test_reports_without_a_case_database_still_track_their_due_days() -> None:
    dues = read_report_dues(None, "semester", ["2025-S2", "2026-S1"], PROFILE, date(2026, 8, 3))
    assert dues.select("period", "due_on", "is_late").rows() == [
        ("2025-S2", date(2025, 12, 31), True),
        ("2026-S1", date(2026, 7, 31), True),
    ]
