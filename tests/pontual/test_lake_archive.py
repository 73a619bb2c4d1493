"""`pontual lake archive`, `pontual lake prune` and `pontual verify` across the store and the
lake, as an operator of the city would run them years after the data came in."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from cases.accounts import add_user
from cases.db import CaseDB
from cases.register import open_case
from cases.workflow import Workflow
from core.store import Store
from tests.cases.test_cli import Cli
from tests.cases.test_evidence import fill_store
from tests.cases.test_workflow import PROFILE

PASSWORD = "uma senha longa o bastante"
YEARS_BACK = 11
"""the test's raw days are moved this many years back: past the 9-year retention today"""


@pytest.fixture
def cli(
    store_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> Cli:
    """The store of tests/cases (pings of 2 and 3 Mar, taps of 2 Mar), its raw data 11 years
    back: days 2015-03-02 (5 pings, 3 taps) and 2015-03-03 (1 ping)."""
    fill_store(store_path)
    with Store.open(store_path) as store:
        for name in ("vehicle_locations", "fare_transactions"):
            store.con.execute(f"UPDATE {name} SET event_at = event_at - INTERVAL {YEARS_BACK} YEAR")
    monkeypatch.delenv("PONTUAL_RETENTION_YEARS", raising=False)
    monkeypatch.delenv("PONTUAL_LAKE", raising=False)
    return Cli(store_path, capsys, monkeypatch)


def _hold_case_on(store_path: Path, day: str) -> int:
    """A case on legal hold whose fact is on `day`, in the case database beside the store."""
    from datetime import date

    db = CaseDB.open(f"sqlite:///{store_path.with_name(store_path.stem + '.cases.sqlite')}")
    try:
        boss = add_user(db, "ana", "planejamento", PASSWORD)
        fiscal = add_user(db, "fabio", "fiscal", PASSWORD, by=boss)
        sug = {
            "infraction_key": "B-IV|O1|2015-03-02|V12",
            "group": "B",
            "item": "IV",
            "description": "t",
            "operator_id": "O1",
            "occurred_on": date.fromisoformat(day),
            "fact": "f",
            "source": "BG",
        }
        cid = open_case(db, sug, fiscal)
        Workflow(db, PROFILE).hold(cid, boss, on=True, reason="processo judicial")
    finally:
        db.close()
    return cid


def test_archive_verify_and_prune_from_the_command_line(cli: Cli) -> None:
    lake = cli.store.parent / "lake"
    code, out, err = cli("verify")  # digests at "ingestion"
    assert code == 0 and "3 de 3 dia(s)-tabela conferem" in out, err
    code, out, err = cli("lake", "archive", "--before", "2015-03-04", "--lake", str(lake))
    assert code == 0, err
    assert f"2 dia(s) arquivado(s) em {lake}: 9 linhas brutas saíram do banco" in out
    code, out, _ = cli("lake", "archive", "--before", "2015-03-04", "--lake", str(lake))
    assert (code, out.strip()) == (0, "nada a arquivar antes de 2015-03-04")
    with Store.open(cli.store, read_only=True) as store:
        assert store.count("vehicle_locations") == 0 and store.count("fare_transactions") == 0
    # verify finds the archived days in the lake recorded at archival
    code, out, err = cli("verify", "--no-record")
    assert code == 0 and "3 de 3 dia(s)-tabela conferem" in out and "nenhuma alteração" in out, err
    # the lake moved: the global --lake says where
    moved = cli.store.parent / "lake-moved"
    shutil.move(lake, moved)
    code, _, err = cli("verify", "--no-record")
    assert code == 2 and "2015-03-03 (vehicle_locations: arquivado, sua partição no lago" in err
    code, out, err = cli("--lake", str(moved), "verify", "--no-record")
    assert code == 0 and "nenhuma alteração" in out, err
    shutil.move(moved, lake)

    cid = _hold_case_on(cli.store, "2015-03-02")
    # dry run by default: lists, deletes nothing
    code, out, err = cli("lake", "prune", "--before", "2015-03-04", "--lake", str(lake))
    assert code == 0, err
    assert out.splitlines() == [
        f"2015-03-02: mantido: guarda legal do(s) caso(s) {cid}",
        "2015-03-03: pode ser apagado",
        "simulação: nada foi apagado (--apply apaga o(s) 1 dia(s))",
    ]
    assert (lake / "vehicle_locations" / "service_date=2015-03-03").exists()
    # a longer retention keeps both days (12 years: until March 2027)
    cli.mp.setenv("PONTUAL_RETENTION_YEARS", "12")
    code, out, _ = cli("lake", "prune", "--before", "2015-03-04", "--lake", str(lake), "--apply")
    assert code == 0
    assert "2015-03-03: mantido: retenção de 12 anos (até 2027-03-03)" in out
    assert "0 dia(s) de dados brutos apagado(s)" in out
    cli.mp.delenv("PONTUAL_RETENTION_YEARS")
    code, out, err = cli("lake", "prune", "--before", "2015-03-04", "--lake", str(lake), "--apply")
    assert code == 0 and f"1 dia(s) de dados brutos apagado(s) de {lake}" in out, err
    assert not (lake / "vehicle_locations" / "service_date=2015-03-03").exists()
    assert (lake / "vehicle_locations" / "service_date=2015-03-02").exists()
    code, out, err = cli("verify", "--no-record")
    assert code == 0, err
    assert "3 de 3 dia(s)-tabela conferem" in out
    assert "1 dia(s)-tabela apagado(s) após a retenção (digest mantido)" in out
    # the held day's evidence lost from the lake: named, with the case that needs it
    shutil.rmtree(lake / "vehicle_locations" / "service_date=2015-03-02")
    shutil.rmtree(lake / "fare_transactions" / "service_date=2015-03-02")
    code, _, err = cli("verify", "--no-record")
    assert code == 2
    assert (
        f"2015-03-02 (vehicle_locations: arquivado, sua partição no lago não existe), "
        f"guarda legal do(s) caso(s) {cid}"
    ) in err
    assert (
        f"dados brutos ausentes do banco e do lago em 2015-03-02 (guarda legal do(s) caso(s) {cid})"
        in err
    )


def test_a_lake_alone_is_verified_without_the_store(cli: Cli) -> None:
    lake = cli.store.parent / "lake"
    cli("verify")
    code, _, err = cli("lake", "archive", "--before", "2015-03-03", "--lake", str(lake))
    assert code == 0, err
    code, _, err = cli("lake", "export", "--lake", str(lake))
    assert code == 0, err
    alone = Cli(cli.store.parent / "elsewhere" / "none.duckdb", cli.capsys, cli.mp)
    code, out, err = alone("--lake", str(lake), "verify")
    assert code == 0, err
    assert f"conferindo só o lago {lake}" in out and "3 de 3 dia(s)-tabela conferem" in out
    assert not alone.store.exists()


def test_recomputing_an_archived_period_on_the_store_is_refused(cli: Cli) -> None:
    """Matching, crowding and indices read the raw pings and taps: on the store they would
    replace the archived days' results with ones computed without their data."""
    lake = cli.store.parent / "lake"
    cli("verify")
    code, _, err = cli("lake", "archive", "--before", "2015-03-03", "--lake", str(lake))
    assert code == 0, err
    refused = "os dados brutos de 1 dia(s) do período (2015-03-02 a 2015-03-02) foram arquivados"
    for argv in (
        ("--quiet", "match", "--from", "2015-03-01", "--to", "2015-03-05"),
        ("crowding", "--from", "2015-03-02"),
        ("indices", "--period", "2015-03"),
    ):
        code, _, err = cli(*argv)
        assert code == 2 and refused in err and "Traceback" not in err, (argv, err)
    code, _, err = cli("--quiet", "match", "--from", "2015-03-03")
    assert refused not in err


def test_archive_needs_a_lake_and_a_closed_period(cli: Cli) -> None:
    code, _, err = cli("lake", "archive", "--before", "2015-03-04")
    assert code == 2 and "nenhum lago informado" in err and "dê --lake CAMINHO" in err
    code, _, err = cli("lake", "archive", "--before", "2999-01-01", "--lake", "lake")
    assert code == 2 and "--before 2999-01-01 é posterior a hoje" in err
    assert "arquive só períodos encerrados" in err
