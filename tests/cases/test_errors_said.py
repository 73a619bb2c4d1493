"""The case layer's refusals are English ids shown in pt-BR at the edges (docs/adr/0093)."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from cases.accounts import add_user, authenticate, get_account
from cases.db import CaseDB
from cases.errors import MESSAGES, CaseError, said
from cases.roles import READ_INDICES, Account, authorize, scope_sql
from core.errors import PontualError
from core.texts import LANG_ENV, catalogue
from tests.cases.conftest import PASSWORD


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


def _refusal(call: Callable[[], object]) -> PontualError:
    with pytest.raises(PontualError) as err:
        call()
    return err.value


def test_account_and_role_refusals_in_both_languages(
    case_db: CaseDB, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The sign-in page and the command line say the account and role refusals as before they
    were ids (pt-BR, the texts written until session 29), and in English by setting."""
    operator = Account("op1", "operadora", "O1")
    refusals = [
        _refusal(lambda: add_user(case_db, "x", "admin", PASSWORD)),
        _refusal(lambda: add_user(case_db, "x", "fiscal", PASSWORD)),
        _refusal(lambda: add_user(case_db, "x", "fiscal", "curta")),
        _refusal(lambda: authenticate(case_db, "ninguem", PASSWORD)),
        _refusal(lambda: get_account(case_db, "x")),
        _refusal(lambda: authorize(operator, READ_INDICES, operator_id="O2")),
        _refusal(lambda: scope_sql(operator, READ_INDICES, ["route_id"])),
    ]
    monkeypatch.delenv(LANG_ENV, raising=False)
    assert [said(r) for r in refusals] == [
        "papel desconhecido 'admin' — papéis: planejamento, fiscal, autoridade, conselho, "
        "operadora",
        "a primeira conta deve ser de planejamento (é quem cria as demais) — pontual users add "
        "NOME --role planejamento",
        "senha curta demais: use ao menos 12 caracteres",
        "nome ou senha incorretos",
        "conta desconhecida 'x' — crie-a com `pontual users add NOME --role PAPEL`",
        "a conta 'op1' (operadora O1) não tem acesso a dados da operadora 'O2' — uma operadora "
        "vê e responde apenas os seus próprios casos",
        "a conta 'op1' (operadora) só lê tabelas com a coluna operator_id — esta tabela não "
        "pode ser limitada aos dados da operadora",
    ]
    monkeypatch.setenv(LANG_ENV, "en")
    assert [said(r) for r in refusals] == [
        "unknown role 'admin' — roles: planejamento, fiscal, autoridade, conselho, operadora",
        "the first account must be of the role planejamento (it creates the others) — pontual "
        "users add NAME --role planejamento",
        "password too short: use at least 12 characters",
        "wrong name or password",
        "unknown account 'x' — create it with `pontual users add NAME --role ROLE`",
        "the account 'op1' (operator O1) has no access to data of operator 'O2' — an operator "
        "sees and answers only its own cases",
        "the account 'op1' (operadora) reads only tables with a column operator_id — this table "
        "cannot be limited to the operator's data",
    ]
