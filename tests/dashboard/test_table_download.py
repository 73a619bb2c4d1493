"""The tables' own "Baixar CSV" button (issue 20): the bytes are the pt-BR CSV of the table as
shown, written by the reports' writer, and each download is in the audit log."""

from __future__ import annotations

import io
from datetime import date
from pathlib import Path
from typing import Any

import polars as pl
import pytest
import streamlit as st
from streamlit.runtime.media_file_manager import MediaFileManager
from streamlit.runtime.memory_media_file_storage import MemoryMediaFileStorage
from streamlit.testing.v1 import AppTest, app_test

from cases.audit import read_audit
from cases.db import CaseDB
from cases.roles import Account
from core.settings import CASES_DB_ENV
from dashboard.auth import LOCAL_PLANNER
from dashboard.reports.render_csv import to_brazilian_csv
from dashboard.server import APP as APP_PATH
from dashboard.server import PUBLIC_APP, build_command
from dashboard.table_download import to_shown_frame

APP = str(Path(__file__).resolve().parents[2] / "dashboard" / "app.py")
BOM = "\ufeff".encode()


def test_the_csv_is_for_a_brazilian_spreadsheet() -> None:
    frame = pl.DataFrame(
        {
            "Dia": [date(2026, 3, 2), date(2026, 3, 31)],
            "Linha": ["L1", "L2; expressa"],
            "Viagens": [1234.5, 7.0],
            "Numerador": ["1.449", "—"],  # a column the page formatted as text (Babel pt_BR)
            "Cumpriu": [True, None],
        }
    )
    data = to_brazilian_csv(frame)
    assert data.startswith(BOM)
    assert data[len(BOM) :].decode("utf-8").splitlines() == [
        "Dia;Linha;Viagens;Numerador;Cumpriu",
        "02/03/2026;L1;1234,5;1.449;sim",
        '31/03/2026;"L2; expressa";7,0;—;',
    ]
    # a pt-BR spreadsheet reads it back: ';' fields, ',' decimals
    back = pl.read_csv(io.BytesIO(data), separator=";", decimal_comma=True)
    assert back["Viagens"].to_list() == [1234.5, 7.0]


def test_the_shown_frame_follows_the_column_config() -> None:
    frame = pl.DataFrame({"Dia": ["02/03/2026"], "evidência": ["viagem?x=1"], "id": [1]})
    config = {"evidência": st.column_config.LinkColumn("Viagem"), "id": None}
    shown = to_shown_frame(frame, config)
    assert shown.columns == ["Dia", "Viagem"]
    assert to_shown_frame(frame, None, ["evidência", "Dia"]).columns == ["evidência", "Dia"]


def test_the_tables_own_export_is_off_in_both_apps() -> None:
    for app in (APP_PATH, PUBLIC_APP):
        command = build_command(8501, "127.0.0.1", True, app=app)
        flag = command.index("--client.disableDataExport")
        assert command[flag + 1] == "true"


def _record_media_managers(monkeypatch: pytest.MonkeyPatch) -> list[MediaFileManager]:
    """The media file managers of AppTest's runtimes, kept to click a download button with."""
    managers: list[MediaFileManager] = []

    class Recorded(MediaFileManager):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            managers.append(self)

    monkeypatch.setattr(app_test, "MediaFileManager", Recorded)
    return managers


def _click(manager: MediaFileManager, file_id: str) -> tuple[str, bytes]:
    """What the browser gets for a click on a download button: the file's name and bytes."""
    url = manager.execute_deferred(file_id)
    storage = manager._storage
    assert isinstance(storage, MemoryMediaFileStorage)
    stored = storage.get_file(url.rsplit("/", 1)[-1].split(".")[0])
    assert stored.mimetype == "text/csv"
    return str(stored.filename), stored.content


def test_overview_table_downloads_as_pt_br_csv_and_is_audited(
    dashboard_store: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    managers = _record_media_managers(monkeypatch)
    cases_url = f"sqlite:///{tmp_path / 'cases.sqlite'}"
    monkeypatch.setenv(CASES_DB_ENV, cases_url)
    monkeypatch.setenv("PONTUAL_STORE", str(dashboard_store))
    monkeypatch.setenv("PONTUAL_LIVE_URL", "http://127.0.0.1:9")
    at = AppTest.from_file(APP, default_timeout=60)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    buttons = [b.proto for b in at.get("download_button")]
    assert [b.label for b in buttons] == ["Baixar CSV"]
    button = buttons[0]
    assert button.deferred_file_id  # built on click, not on every page run

    with CaseDB.open(cases_url) as db:
        before = read_audit(db, Account("ana", "planejamento"))
    assert "table_download" not in before["action"].to_list()

    file_name, data = _click(managers[-1], button.deferred_file_id)
    assert file_name == "indicadores-2026-03.csv"
    assert data.startswith(BOM)
    rows = data[len(BOM) :].decode("utf-8").splitlines()
    shown = pl.from_pandas(at.dataframe[0].value)
    assert rows[0] == ";".join(shown.columns)  # the pt-BR headers as shown
    assert rows[0].startswith("Indicador;")
    icv = next(r for r in rows if r.startswith("ICV — cumprimento de viagens;"))
    assert ";97,3 %;1.449;1.489;" in icv  # the table's own pt-BR numbers
    assert len(rows) == shown.height + 1

    with CaseDB.open(cases_url) as db:
        log = read_audit(db, Account("ana", "planejamento"))
    row = log.filter(pl.col("action") == "table_download").row(0, named=True)
    assert (row["actor"], row["target"], row["detail"]) == (
        LOCAL_PLANNER.name,
        "indicadores-2026-03.csv",
        "tabela do painel, período 2026-03",
    )


def test_public_tables_download_without_opening_the_case_database(
    dashboard_store: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    managers = _record_media_managers(monkeypatch)
    cases = tmp_path / "cases.sqlite"
    monkeypatch.setenv(CASES_DB_ENV, f"sqlite:///{cases}")
    monkeypatch.setenv("PONTUAL_STORE", str(dashboard_store))
    at = AppTest.from_file(str(PUBLIC_APP), default_timeout=60)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    buttons = [b.proto for b in at.get("download_button")]
    assert len(buttons) == len(at.dataframe) > 0
    file_name, data = _click(managers[-1], buttons[0].deferred_file_id)
    assert file_name == "icv-mensal.csv"
    shown = pl.from_pandas(at.dataframe[0].value)
    assert data.startswith(BOM)
    rows = data[len(BOM) :].decode("utf-8").splitlines()
    assert rows[0] == ";".join(shown.columns) and len(rows) == shown.height + 1
    assert not cases.exists()  # no account, no audit: aggregates only
