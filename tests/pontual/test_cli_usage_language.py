"""argparse's own texts through the catalogue (pontual/parser.py): usage errors print ``erro:``
and ``dica:`` in pt-BR and exit 2; every help text of every verb is pt-BR; English by setting."""

from __future__ import annotations

import argparse
import re

import pytest

from pontual.cli import build_parser, main
from pontual.messages import LANG_ENV, translate

# English prose in a help text once translated (option names, env names, formats excluded).
ENGLISH = re.compile(
    r"\b(the|of|and|or|with|without|from|into|every|only|default|file|files|folder|day|days|"
    r"first|last|show|list|print|load|write|read|stop|after|before|each|per|one|this|its)\b"
)
NAMES = re.compile(
    r"`[^`]*`|'[^']*'|--[a-z-]+|\b[A-Z_]{2,}\b|\b[a-z]+(?:_[a-z]+)+\b|\S+\.(?:txt|toml|csv|"
    r"duckdb|json|jsonl|parquet|zip|pb)\b|\S*/\S*|\{[a-z]+\}|\b(?:csv|pdf|xlsx|zstd|local|spark)\b"
)


def _help_texts(parser: argparse.ArgumentParser) -> list[str]:
    out = [parser.description] if parser.description else []
    for action in parser._actions:
        if action.help and action.help != argparse.SUPPRESS:
            out.append(action.help)
        if isinstance(action, argparse._SubParsersAction):
            out += [a.help for a in action._choices_actions if a.help]
            for child in action.choices.values():
                out += _help_texts(child)
    return out


def test_every_help_text_is_pt_br(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(LANG_ENV, raising=False)
    texts = _help_texts(build_parser())
    assert len(texts) > 150
    english = [t for t in texts if ENGLISH.search(NAMES.sub(" ", translate(t)))]
    assert english == []


@pytest.mark.parametrize(
    ("argv", "pt", "en"),
    [
        (
            ["match", "--from", "xx"],
            "erro: argumento --from: esperava uma data AAAA-MM-DD, veio 'xx'",
            "error: argument --from: expected a date YYYY-MM-DD, got 'xx'",
        ),
        (
            ["gtfs"],
            "erro: os seguintes argumentos são obrigatórios: ACTION",
            "error: the following arguments are required: ACTION",
        ),
        (
            ["profiles", "list", "--nope"],
            "erro: argumentos não reconhecidos: --nope",
            "error: unrecognized arguments: --nope",
        ),
        (
            ["dashboard", "--port", "x"],
            "erro: argumento --port: valor inválido para int: 'x'",
            "error: argument --port: invalid int value: 'x'",
        ),
    ],
)
def test_usage_errors_in_both_languages(
    argv: list[str],
    pt: str,
    en: str,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv(LANG_ENV, raising=False)
    with pytest.raises(SystemExit) as done:
        main(argv)
    assert done.value.code == 2
    err = capsys.readouterr().err.splitlines()
    assert err[0].startswith("uso: pontual")
    assert pt in err
    assert err[-1].startswith("dica: veja `pontual")
    monkeypatch.setenv(LANG_ENV, "en")
    with pytest.raises(SystemExit):
        main(argv)
    err = capsys.readouterr().err.splitlines()
    assert err[0].startswith("usage: pontual")
    assert en in err
    assert err[-1].startswith("hint: see `pontual")


def test_an_unknown_verb_lists_the_choices_in_pt_br(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(LANG_ENV, raising=False)
    with pytest.raises(SystemExit) as done:
        main(["bogus"])
    assert done.value.code == 2
    err = capsys.readouterr().err
    assert "erro: argumento VERB: escolha inválida: 'bogus' (escolha entre 'init'," in err


def test_help_sections_in_both_languages(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(LANG_ENV, raising=False)
    with pytest.raises(SystemExit) as done:
        main(["gtfs", "load", "--help"])
    assert done.value.code == 0
    out = capsys.readouterr().out
    assert out.startswith("uso: pontual gtfs load")
    assert "argumentos posicionais:" in out and "opções:" in out
    assert "mostra esta ajuda e sai" in out
    assert "último dia de serviço a programar" in out
    monkeypatch.setenv(LANG_ENV, "en")
    with pytest.raises(SystemExit):
        main(["gtfs", "load", "--help"])
    out = capsys.readouterr().out
    assert out.startswith("usage: pontual gtfs load")
    assert "show this help message and exit" in out
    assert "last service day to schedule" in out


def test_cases_help_and_messages_in_both_languages(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(LANG_ENV, raising=False)
    with pytest.raises(SystemExit) as done:
        main(["cases", "--help"])
    assert done.value.code == 0
    assert "casos com ato da administração atrasado" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        main(["cases", "overdue", "--by", "x", "--today", "xx"])
    assert "veio 'xx'" in capsys.readouterr().err
    monkeypatch.setenv(LANG_ENV, "en")
    with pytest.raises(SystemExit):
        main(["cases", "--help"])
    out = capsys.readouterr().out
    assert "cases with an overdue act of the administration" in out
    assert "casos com ato" not in out
    with pytest.raises(SystemExit):
        main(["cases", "overdue", "--by", "x", "--today", "xx"])
    assert "expected a date YYYY-MM-DD, got 'xx'" in capsys.readouterr().err
