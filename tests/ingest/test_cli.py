"""`pontual ingest ...` and `pontual quarantine` through the real CLI entry point."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.store import Store
from pontual.cli import main
from tests.conftest import FIXTURES


def test_ingest_avl_prints_counts_and_quarantine_lists(store_path: Path, capsys) -> None:
    csv = str(FIXTURES / "ingest" / "avl_bad_lines.csv")
    assert main(["--store", str(store_path), "ingest", "avl", csv]) == 0
    captured = capsys.readouterr()
    out = " ".join(captured.out.split())  # rich wraps lines
    assert "13 lidos, 3 aceitos, 1 duplicados, 9 em quarentena" in out
    # The per-file table of reasons, each with an example record.
    assert "em quarentena em" in out and "lat fora de -90..90 graus" in out
    assert "registro 6:" in out
    assert "aviso: nenhuma parada GTFS carregada" in " ".join(captured.err.split())
    assert main(["--store", str(store_path), "ingest", "avl", csv]) == 0
    assert "0 aceitos, 4 duplicados, 9 em quarentena" in " ".join(capsys.readouterr().out.split())
    assert main(["--store", str(store_path), "quarantine", "--source", "avl_bad"]) == 0
    assert "quarentena: 9 registros" in capsys.readouterr().out


def test_unknown_mapping_is_a_user_error(store_path: Path, capsys) -> None:
    csv = str(FIXTURES / "ingest" / "fares_with_card_ids.csv")
    code = main(["--store", str(store_path), "ingest", "fares", csv, "--map", "nope"])
    assert code == 2
    err = " ".join(capsys.readouterr().err.split())
    assert "mapeamento nope não encontrado" in err and "sube" in err


def test_user_errors_exit_2_with_a_clear_message(
    store_path: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store = ["--store", str(store_path)]
    bad_parquet = str(FIXTURES / "ingest" / "avl_not_parquet_at_all.parquet")
    binary_profile = str(FIXTURES / "ingest" / "profile_binary_not_text.toml")
    a_file = tmp_path / "already_here.txt"
    a_file.write_text("x")
    cases = [
        ([*store, "ingest", "avl", bad_parquet], "não foi possível ler como Parquet"),
        ([*store, "profiles", "show", binary_profile], "não é um arquivo de texto"),
        ([*store, "simulate", "--out", str(a_file)], "--out é um arquivo, não uma pasta"),
        ([*store, "quarantine", "--limit", "-1"], "--limit deve ser 0 ou mais"),
    ]
    for argv, message in cases:
        assert main(argv) == 2, argv
        err = " ".join(capsys.readouterr().err.split())
        assert message in err, (argv, err)
        assert "erro interno" not in err and "internal error" not in err


def test_times_of_a_clock_never_set_are_quarantined(store_path: Path, capsys) -> None:
    csv = str(FIXTURES / "ingest" / "avl_clock_never_set.csv")
    assert main(["--store", str(store_path), "ingest", "avl", csv]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "6 lidos, 1 aceitos, 0 duplicados, 5 em quarentena" in out
    with Store.open(store_path) as store:
        reasons = store.query("SELECT DISTINCT reason FROM quarantine")["reason"].to_list()
    assert reasons == ["event_at before 2000: a clock that was never set"]


def test_quiet_hides_the_summary_never_the_warnings(store_path: Path, capsys) -> None:
    csv = str(FIXTURES / "bad" / "avl_aliases_ts_epoch_seconds.csv")
    assert main(["--quiet", "--store", str(store_path), "ingest", "avl", csv]) == 0
    captured = capsys.readouterr()
    assert captured.out == ""
    err = " ".join(captured.err.split())
    assert "aviso: colunas reconhecidas pelos nomes usuais: ts -> event_at" in err
    assert "aviso: horários lidos como segundos desde 1970 (epoch)" in err
    assert "cadastro de frota vazio" in err


def test_english_by_setting(store_path: Path, capsys, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PONTUAL_LANG", "en")
    csv = str(FIXTURES / "bad" / "avl_header_only_no_records.csv")
    assert main(["--store", str(store_path), "ingest", "avl", csv]) == 0
    captured = capsys.readouterr()
    assert "0 read, 0 stored, 0 duplicate, 0 quarantined" in " ".join(captured.out.split())
    err = " ".join(captured.err.split())
    assert "warning: no records read: the file has a header line and no records" in err


def test_every_catalogue_message_keeps_its_fields_in_pt_br() -> None:
    import re

    from pontual.messages import CATALOGUE, translate

    for msgid, text in CATALOGUE.items():
        assert sorted(re.findall(r"\{(\w+)\}", msgid)) == sorted(re.findall(r"\{(\w+)\}", text))
    # A note made in English below the CLI comes out in pt-BR, its fields translated too.
    assert (
        translate("times read as epoch seconds")
        == "horários lidos como segundos desde 1970 (epoch)"
    )
    assert translate("an unknown text") == "an unknown text"


# Ingests pings and taps (their days digested at the end) in a fresh interpreter and says
# whether pandas was loaded.
NO_PANDAS = """
import sys
from pontual.cli import main
store, avl, fares = sys.argv[1:]
assert main(["--quiet", "--store", store, "init"]) == 0
assert main(["--quiet", "--store", store, "ingest", "avl", avl]) == 0
assert main(["--quiet", "--store", store, "ingest", "fares", fares]) == 0
print("pandas", "pandas" in sys.modules)
"""


def test_ingest_never_loads_pandas(tmp_path: Path) -> None:
    """pandas costs half a second of CPU to import, and an ingest has no use for it: pyarrow
    loads it behind `to_numpy` (the digests read Arrow buffers with numpy instead)."""
    import subprocess
    import sys

    ingest = FIXTURES / "ingest"
    argv = [str(tmp_path / "s.duckdb"), str(ingest / "avl_bad_lines.csv")]
    argv.append(str(ingest / "fares_with_card_ids.csv"))
    root = Path(__file__).resolve().parents[2]
    done = subprocess.run(
        [sys.executable, "-c", NO_PANDAS, *argv], capture_output=True, text=True, cwd=root
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split()[-2:] == ["pandas", "False"]
    # the days were digested (the code that loaded pandas ran)
    with Store.open(tmp_path / "s.duckdb", read_only=True) as s:
        n = s.query("SELECT count(*) AS n FROM raw_day_fingerprints")["n"][0]
    assert n >= 2
