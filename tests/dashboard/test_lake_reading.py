"""The dashboard and the reports on a lake (`pontual --lake PATH dashboard|report`): the same
pages and the same report files as on the store file, from a lake exported from the store the
real pipeline filled (`pontual demo --days 1`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from streamlit.testing.v1 import AppTest

from core.lake import export_lake
from core.store import Store, open_snapshot
from dashboard.queries.snapshot import open_source, read_snapshot_mtime
from pontual.cli import main

APP = str(Path(__file__).resolve().parents[2] / "dashboard" / "app.py")
TZ = "America/Sao_Paulo"
PAGES_COMPARED = ("pages/overview.py", "pages/lines.py", "pages/crowding.py", "pages/fleet.py")


@pytest.fixture(scope="module")
def lake(pipeline_store: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("lake")
    with Store.open(pipeline_store, read_only=True) as store:
        export_lake(store, root, TZ)
    return root


def _month(store: Path) -> str:
    with open_snapshot(store) as s:
        rows = s.query("SELECT min(period) AS p FROM indicators WHERE length(period) = 7")
    return str(rows["p"][0])


def test_the_dashboard_source_is_the_lake_when_one_is_given(
    lake: Path, pipeline_store: Path
) -> None:
    assert read_snapshot_mtime(lake) > 0.0
    with open_source(lake) as parquet, open_source(pipeline_store) as file:
        sql = "SELECT period, scope, scope_id, indicator, value FROM indicators ORDER BY ALL"
        assert parquet.query(sql).equals(file.query(sql))
        assert parquet.query(sql).height > 100


def _shown(at: AppTest) -> tuple[list[Any], list[Any]]:
    metrics = [(m.label, m.value, m.delta) for m in at.metric]
    frames = [df.value.to_dict("list") for df in at.dataframe]
    return metrics, frames


@pytest.mark.parametrize("page", PAGES_COMPARED)
def test_a_page_shows_the_same_on_the_lake_and_on_the_file(
    lake: Path, pipeline_store: Path, monkeypatch: pytest.MonkeyPatch, page: str
) -> None:
    shown = []
    for source in ("file", "lake"):
        monkeypatch.setenv("PONTUAL_STORE", str(pipeline_store))
        monkeypatch.setenv("PONTUAL_LIVE_URL", "http://127.0.0.1:9")  # nobody listens
        if source == "lake":
            monkeypatch.setenv("PONTUAL_LAKE", str(lake))
        else:
            monkeypatch.delenv("PONTUAL_LAKE", raising=False)
        at = AppTest.from_file(APP, default_timeout=120)
        at.run()
        at.switch_page(page).run()
        assert not at.exception, [e.value for e in at.exception]
        assert not at.error, [e.value for e in at.error]
        shown.append(_shown(at))
    assert shown[0] == shown[1]
    assert shown[0][0] or shown[0][1], "the page showed no figure to compare"


def test_a_report_is_the_same_on_the_lake_and_on_the_file(
    lake: Path, pipeline_store: Path, tmp_path: Path
) -> None:
    month = _month(pipeline_store)
    outs = {}
    for source in ("file", "lake"):
        out = tmp_path / source
        argv = ["--quiet", "--store", str(pipeline_store)]
        if source == "lake":
            argv += ["--lake", str(lake)]
        argv += ["report", "monthly", "--month", month, "--out", str(out), "--format", "csv-raw"]
        assert main(argv) == 0, source
        outs[source] = {p.relative_to(out): p.read_bytes() for p in out.rglob("*.csv")}
    assert outs["file"], "no CSV written"
    assert outs["lake"] == outs["file"]


def test_the_dashboard_verb_refuses_a_missing_lake(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["--lake", str(tmp_path / "nowhere"), "dashboard"]) == 2
    assert "lago de dados não encontrado" in capsys.readouterr().err
