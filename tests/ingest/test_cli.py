"""`pontual ingest ...` and `pontual quarantine` through the real CLI entry point."""

from __future__ import annotations

from pathlib import Path

from pontual.cli import main
from tests.conftest import FIXTURES


def test_ingest_avl_prints_counts_and_quarantine_lists(store_path: Path, capsys) -> None:
    csv = str(FIXTURES / "ingest" / "avl_bad_lines.csv")
    assert main(["--store", str(store_path), "ingest", "avl", csv]) == 0
    out = " ".join(capsys.readouterr().out.split())  # rich wraps lines
    assert "13 lidos, 3 aceitos, 1 duplicados, 9 em quarentena" in out
    assert "no GTFS stops loaded" in out
    assert main(["--store", str(store_path), "ingest", "avl", csv]) == 0
    assert "0 aceitos, 4 duplicados, 9 em quarentena" in " ".join(capsys.readouterr().out.split())
    assert main(["--store", str(store_path), "quarantine", "--source", "avl_bad"]) == 0
    assert "quarentena: 9 registros" in capsys.readouterr().out


def test_unknown_mapping_is_a_user_error(store_path: Path, capsys) -> None:
    csv = str(FIXTURES / "ingest" / "fares_with_card_ids.csv")
    code = main(["--store", str(store_path), "ingest", "fares", csv, "--map", "nope"])
    assert code == 2
    err = " ".join(capsys.readouterr().err.split())
    assert "mapping nope not found" in err and "sube" in err
