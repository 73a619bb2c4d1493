"""CLI conventions: global options before the verb, one error format, exit codes."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from pontual.cli import main


def test_user_error_prints_what_where_and_hint_without_traceback(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "broken.toml"
    bad.write_text("id = \n")
    code = main(["--store", str(tmp_path / "s.duckdb"), "profiles", "show", str(bad)])
    err = capsys.readouterr().err
    assert code == 2
    assert err.startswith("erro: TOML inválido")
    assert str(bad) in err
    assert "Traceback" not in err


def test_init_creates_store_and_key_without_printing_the_key(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store = tmp_path / "x" / "p.duckdb"
    assert main(["--store", str(store), "init"]) == 0
    out = capsys.readouterr().out
    key = (tmp_path / "x" / "p.hashkey").read_text().strip()
    assert store.exists() and len(key) == 64
    assert key not in out
    assert (tmp_path / "x" / "p.hashkey").stat().st_mode & 0o777 == 0o600


def test_profiles_show_prints_sources() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "pontual", "profiles", "show", "bento-goncalves-2021"],
        capture_output=True,
        text=True,
        check=True,
        env={"COLUMNS": "250", "PATH": "/usr/bin:/bin"},
    )
    assert "BG art. 59" in result.stdout
    assert "standees_max_per_m2" in result.stdout
    assert "Atrasar o cumprimento do horário" in result.stdout


def test_profiles_show_lists_verdict_criteria_with_articles() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "pontual", "profiles", "show", "bento-goncalves-2021"],
        capture_output=True,
        text=True,
        check=True,
        env={"COLUMNS": "250", "PATH": "/usr/bin:/bin"},
    )
    assert "Prorrogação do contrato" in result.stdout
    assert "BG art. 32-II, 38-II" in result.stdout  # fiscal qualification, recorded by the city
    assert "BG art. 72-IV, parágrafo único, I" in result.stdout
    assert "Cassação da concessão ou permissão" in result.stdout


def test_profiles_show_headings_in_the_chosen_language() -> None:
    """The criteria tables' headings and yes/no come from the catalogue (issue 20)."""

    def shown(**lang: str) -> str:
        return subprocess.run(
            [sys.executable, "-m", "pontual", "profiles", "show", "bento-goncalves-2021"],
            capture_output=True,
            text=True,
            check=True,
            env={"COLUMNS": "250", "PATH": "/usr/bin:/bin", **lang},
        ).stdout

    pt, en = shown(), shown(PONTUAL_LANG="en")
    assert "critério" in pt and "decide sozinho" in pt and "sim" in pt
    assert "criterion" in en and "decides alone" in en and "yes" in en
    assert "decide sozinho" not in en


def test_help_lists_verbs() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "pontual", "--help"], capture_output=True, text=True, check=True
    )
    assert "profiles" in result.stdout and "init" in result.stdout
