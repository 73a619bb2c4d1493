"""The case layer's refusals are English ids shown in pt-BR at the edges (docs/adr/0093)."""

from __future__ import annotations

import pytest

from cases.errors import MESSAGES, CaseError, said
from core.texts import LANG_ENV, catalogue


def test_every_case_id_has_its_pt_br_text() -> None:
    texts = catalogue().singular
    assert [m for m in MESSAGES if not texts.get(m)] == []


def test_the_dashboard_says_a_refusal_as_the_cli_did(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(LANG_ENV, raising=False)
    exc = CaseError(
        "case 3 is 'sugerida': 'julgar' is not allowed",
        where="case 3, field fact_at",
        hint="the case is closed",
    )
    assert said(exc) == (
        "o caso 3 está 'sugerida': 'julgar' não é permitido (caso 3, campo fact_at)"
        " — o caso está encerrado"
    )
