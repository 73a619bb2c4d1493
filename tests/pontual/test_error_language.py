"""User errors reach the user in one language: pt-BR by default, English with PONTUAL_LANG=en.

A dozen errors users actually hit, through the real command line (`main`, as the console
script calls it): each exits 2, prints its what/where/hint in the chosen language with the
prefixes erro/onde/dica (error/where/hint), and no traceback. The English texts are the ids
raised below the command line; the pt-BR ones come from the catalogue (`pontual.messages.CATALOGUE`, read from the .po).
"""

from __future__ import annotations

import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from pontual.cli import main
from pontual.messages import CATALOGUE
from tests.conftest import FIXTURES

BAD = FIXTURES / "bad"


@dataclass(frozen=True)
class Case:
    name: str
    argv: list[str]  # after --store STORE; "{tmp}" is the test's folder
    pt: tuple[str, ...]  # lines (or their start) printed in pt-BR
    en: tuple[str, ...]  # the same in English


CASES = [
    Case(
        "invalid_period",
        ["indices", "--period", "2026-13x"],
        (
            "erro: período inválido '2026-13x': esperado AAAA-MM (mês)",
            "onde: --period",
            "dica: ex.: --period 2026-03, --period 2026, ou --from 2026-03-01",
        ),
        (
            "error: invalid period '2026-13x': expected YYYY-MM (month)",
            "where: --period",
            "hint: e.g. --period 2026-03, --period 2026, or --from 2026-03-01",
        ),
    ),
    Case(
        "dates_swapped",
        ["match", "--from", "2026-03-05", "--to", "2026-03-01"],
        (
            "erro: --to 2026-03-01 é anterior a --from 2026-03-05",
            "onde: linha de comando, campo --to",
            "dica: troque as duas datas",
        ),
        (
            "error: --to 2026-03-01 is before --from 2026-03-05",
            "where: command line, field --to",
            "hint: swap the two dates",
        ),
    ),
    Case(
        "gtfs_not_found",
        ["gtfs", "load", "{tmp}/feed.zip"],
        (
            "erro: feed GTFS não encontrado",
            "onde: {tmp}/feed.zip",
            "dica: dê um arquivo .zip ou uma pasta de .txt",
        ),
        (
            "error: GTFS feed not found",
            "where: {tmp}/feed.zip",
            "hint: give a .zip file or a folder of .txt",
        ),
    ),
    Case(
        "gtfs_not_a_zip",
        ["gtfs", "load", "{tmp}/notzip.zip"],
        ("erro: não é um feed GTFS: esperado um arquivo zip ou uma pasta de arquivos .txt",),
        ("error: not a GTFS feed: expected a zip archive or a folder of .txt files",),
    ),
    Case(
        "gtfs_path_traversal",
        ["gtfs", "load", str(BAD / "gtfs" / "zip_member_path_traversal.zip")],
        (
            "erro: o arquivo zip contém um membro chamado ../../evil.txt, fora da sua própria "
            "pasta (travessia de caminho): recusado",
        ),
        (
            "error: the zip archive holds a member named ../../evil.txt, outside its own folder "
            "(path traversal): refused",
        ),
    ),
    Case(
        "ingest_file_missing",
        ["ingest", "avl", "{tmp}/pings.csv"],
        ("erro: arquivo não encontrado", "onde: {tmp}/pings.csv"),
        ("error: file not found", "where: {tmp}/pings.csv"),
    ),
    Case(
        "ingest_unknown_format",
        ["ingest", "avl", "{tmp}/pings.xyz"],
        (
            "erro: formato de arquivo desconhecido '.xyz'",
            "dica: esperado .csv, .parquet, .jsonl, .json (Olho Vivo), .pb (GTFS-RT) ou .gpx",
        ),
        (
            "error: unknown file format '.xyz'",
            "hint: expected .csv, .parquet, .jsonl, .json (Olho Vivo), .pb (GTFS-RT) or .gpx",
        ),
    ),
    Case(
        "ingest_latin1",
        ["ingest", "avl", str(BAD / "avl_latin1_not_utf8.csv")],
        (
            "erro: não é texto UTF-8: o byte 0xe9 na posição 90 não pode ser lido",
            f"onde: {BAD / 'avl_latin1_not_utf8.csv'}, linha 2",
        ),
        (
            "error: not UTF-8 text: byte 0xe9 at byte 90 cannot be read",
            f"where: {BAD / 'avl_latin1_not_utf8.csv'}, line 2",
        ),
    ),
    Case(
        "ingest_unknown_layout",
        ["ingest", "avl", str(BAD / "avl_layout_unknown_columns.csv")],
        (
            "erro: as colunas do arquivo não seguem o leiaute avl: nenhuma coluna para "
            "vehicle_id, event_at, lat, lon. Colunas encontradas: bus_no, when, y, x",
            "dica: salve este mapeamento como vendor.toml",
        ),
        (
            "error: the file's columns do not match the avl layout: no column for vehicle_id, "
            "event_at, lat, lon. Columns found: bus_no, when, y, x",
            "hint: save this mapping as vendor.toml",
        ),
    ),
    Case(
        "unknown_profile",
        ["--profile", "nosuch", "indices", "--period", "2026-03"],
        ("erro: perfil desconhecido 'nosuch'", "dica: perfis incluídos: bento-goncalves-2021"),
        ("error: unknown profile 'nosuch'", "hint: shipped profiles: bento-goncalves-2021"),
    ),
    Case(
        "no_outcomes",
        ["indices", "--period", "2026-03"],
        (
            "erro: nenhum resultado de viagem entre 2026-03-01 e 2026-03-31",
            "onde: banco {tmp}/s.duckdb, tabela trip_outcomes",
            "dica: rode `pontual match` para esses dias antes (ou escolha outro --period)",
        ),
        (
            "error: no trip outcomes between 2026-03-01 and 2026-03-31",
            "where: store {tmp}/s.duckdb, table trip_outcomes",
            "hint: run `pontual match` for those days first (or choose another --period)",
        ),
    ),
    Case(
        "store_is_a_folder",
        ["--store", "{tmp}/folder", "indices", "--period", "2026-03"],
        ("erro: o caminho do banco é uma pasta", "dica: dê o caminho do arquivo do banco"),
        ("error: the store path is a folder", "hint: give the store file's path"),
    ),
    Case(
        "bad_profile_toml",
        ["profiles", "show", "{tmp}/broken.toml"],
        ("erro: TOML inválido: ", "onde: {tmp}/broken.toml"),
        ("error: not valid TOML: ", "where: {tmp}/broken.toml"),
    ),
    Case(
        "lake_without_spark",  # written in pt-BR until session 29: the same pt-BR text
        ["match", "--from", "2026-03-01", "--lake", "{tmp}"],
        (
            "erro: --lake só vale com --engine spark (o motor local escreve o arquivo do "
            "armazenamento)",
            "onde: linha de comando, campo --lake",
            "dica: acrescente --engine spark",
        ),
        (
            "error: --lake goes with --engine spark (the local engine writes the store file)",
            "where: command line, field --lake",
            "hint: add --engine spark",
        ),
    ),
    Case(
        "months_of_a_month",  # English without a catalogue entry until session 29
        ["indices", "--period", "2026-03", "--months"],
        ("erro: --months vale com um período de um ano", "dica: ex.: --period 2026 --months"),
        ("error: --months goes with a year period", "hint: e.g. --period 2026 --months"),
    ),
    Case(
        "simulate_bad_start",
        ["simulate", "--start", "2026-02-30", "--out", "{tmp}/sim"],
        (
            "erro: --start deve ser uma data AAAA-MM-DD, recebido '2026-02-30'",
            "dica: ex.: --start 2026-03-02",
        ),
        (
            "error: --start must be a date YYYY-MM-DD, got '2026-02-30'",
            "hint: e.g. --start 2026-03-02",
        ),
    ),
]


def _prepare(tmp: Path) -> None:
    (tmp / "notzip.zip").write_text("not a zip\n")
    (tmp / "pings.xyz").write_text("vehicle_id,event_at,lat,lon\n")
    (tmp / "folder").mkdir()
    (tmp / "broken.toml").write_text("id = \n")


def _run(case: Case, tmp: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, list[str]]:
    _prepare(tmp)
    argv = ["--store", str(tmp / "s.duckdb"), *(a.replace("{tmp}", str(tmp)) for a in case.argv)]
    code = main(argv)
    err = capsys.readouterr().err
    assert "Traceback" not in err
    return code, err.splitlines()


def _assert_lines(lines: list[str], expected: tuple[str, ...], tmp: Path) -> None:
    for want in expected:
        want = want.replace("{tmp}", str(tmp))
        assert any(line.startswith(want) for line in lines), (want, lines)


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_user_error_in_pt_br_by_default(
    case: Case, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("PONTUAL_LANG", raising=False)
    code, lines = _run(case, tmp_path, capsys)
    assert code == 2
    _assert_lines(lines, case.pt, tmp_path)
    assert not any(line.startswith(("error:", "hint:", "where:")) for line in lines)


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_user_error_in_english_by_setting(
    case: Case, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PONTUAL_LANG", "en")
    code, lines = _run(case, tmp_path, capsys)
    assert code == 2
    _assert_lines(lines, case.en, tmp_path)


def test_console_script_prints_pt_br_error_without_traceback(tmp_path: Path) -> None:
    """The installed entry point (a fresh process) speaks pt-BR, exits 2, no traceback."""
    import os

    env = {k: v for k, v in os.environ.items() if k != "PONTUAL_LANG"}
    done = subprocess.run(
        [sys.executable, "-m", "pontual.cli", "--store", "", "indices", "--period", "2026-03"],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert done.returncode == 2
    assert done.stderr.splitlines() == [
        "erro: --store está vazio",
        "onde: opção --store",
        "dica: dê o caminho do arquivo do banco",
    ]


def test_catalogue_templates_keep_their_fields() -> None:
    """Every pt-BR text carries the same {fields} as its English id (else formatting fails)."""
    import re

    field = re.compile(r"\{([a-z_]+)\}")
    for msgid, text in CATALOGUE.items():
        assert sorted(field.findall(msgid)) == sorted(field.findall(text)), msgid


def test_catalogue_has_each_id_once() -> None:
    """Each message id is listed once in `MESSAGES` (its pt-BR text is in the .po)."""
    from collections import Counter

    from pontual.messages import MESSAGES

    ids = Counter(MESSAGES)
    assert [k for k, n in ids.items() if n > 1] == []
    assert len(ids) == len(CATALOGUE) > 250


def test_translate_prefers_the_most_specific_template(monkeypatch: pytest.MonkeyPatch) -> None:
    """ "'{value}' is not {expected}" would also match a reference finding; the template with
    more literal text wins, whatever the catalogue's order."""
    from pontual.messages import translate

    monkeypatch.delenv("PONTUAL_LANG", raising=False)
    assert translate("'R9' is not defined in routes.txt") == (
        "'R9' não está definido em routes.txt"
    )
    assert translate("'8h10' is not a time H:MM:SS (hours may pass 24)") == (
        "'8h10' não é um horário H:MM:SS (as horas podem passar de 24)"
    )
    assert translate("'Mars/Base' is not an IANA time zone (e.g. America/Sao_Paulo)") == (
        "'Mars/Base' não é um fuso horário IANA (ex.: America/Sao_Paulo)"
    )


@pytest.mark.parametrize(
    ("line", "pt"),
    [
        ("connected to 127.0.0.1:1883 (session new)", "conectado a 127.0.0.1:1883 (sessão nova)"),
        (
            "connected to 10.0.0.2:8883 (session resumed)",
            "conectado a 10.0.0.2:8883 (sessão retomada)",
        ),
        (
            "disconnected from the broker (Unspecified error); will reconnect",
            "desconectado do broker (Unspecified error); vai reconectar",
        ),
        (
            "batch 7: 120 messages, 118 accepted, 1 duplicate, 1 quarantined (12 ms)",
            "lote 7: 120 mensagens, 118 aceitas, 1 duplicadas, 1 em quarentena (12 ms)",
        ),
        (
            "broker unreachable ([Errno 111] Connection refused); retrying",
            "broker inalcançável ([Errno 111] Connection refused); tentando de novo",
        ),
    ],
)
def test_mqtt_consumer_lines_in_both_languages(
    line: str, pt: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The lines `ingest.mqtt.MqttConsumer` writes (English ids) as `listen`/`serve` print them."""
    from pontual.messages import translate

    monkeypatch.delenv("PONTUAL_LANG", raising=False)
    assert translate(line) == pt
    monkeypatch.setenv("PONTUAL_LANG", "en")
    assert translate(line) == line
