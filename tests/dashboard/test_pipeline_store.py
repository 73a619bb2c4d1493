"""The dashboard over a store built by the real pipeline (`pontual demo --days 1`): the
Visão geral headlines equal the store's `indicators` rows, and every page renders with the
pipeline's own tables (column names as the jobs declare them)."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest
from streamlit.testing.v1 import AppTest

from core.indicators import indicator
from core.store import open_snapshot
from core.texts import gettext
from dashboard.format import to_integer, to_number, to_percent
from dashboard.labels import label_indicators
from dashboard.pages import PAGES

APP = str(Path(__file__).resolve().parents[2] / "dashboard" / "app.py")


@pytest.fixture
def app(pipeline_store: Path, monkeypatch: pytest.MonkeyPatch) -> AppTest:
    monkeypatch.setenv("PONTUAL_STORE", str(pipeline_store))
    monkeypatch.setenv("PONTUAL_LIVE_URL", "http://127.0.0.1:9")
    at = AppTest.from_file(APP, default_timeout=90)
    at.run()
    return at


def test_overview_headlines_equal_the_pipelines_indicators(
    app: AppTest, pipeline_store: Path
) -> None:
    assert not app.exception, [e.value for e in app.exception]
    period = app.selectbox(key="f_period").value
    assert period == "2026-03"
    with open_snapshot(pipeline_store) as store:
        rows = store.query("SELECT period, indicator, value FROM indicators WHERE scope = 'system'")
        crowded = store.query(
            "SELECT sum(is_over_limit::INT) AS n, count(*) AS d FROM trip_crowding "
            "WHERE is_over_limit IS NOT NULL"
        ).row(0)
    value = {(p, i): v for p, i, v in rows.iter_rows()}
    shown = {m.label: m.value for m in app.metric}
    assert shown["ICV (nota 0–100)"] == to_number(value[period, "icv_score"])
    assert shown["Cumprimento de viagens"] == to_percent(value[period, "icv_fulfilment"])
    assert shown["Pontualidade"] == to_percent(value[period, "icv_punctuality"])
    assert shown["Quebras por 10.000 km"] == to_number(value[period, "breakdowns_per_10000_km"], 2)
    assert shown["Viagens suprimidas"] == to_integer(value[period, "trips_suppressed"])
    assert shown["Km rodado / programado"] == to_percent(value[period, "km_efficiency"])
    assert shown["IPK (passageiros/km)"] == to_number(value[period, "ipk"], 2)
    assert shown["Viagens acima do limite de lotação"] == to_percent(crowded[0] / crowded[1])
    annual = next(k for k in shown if k.startswith("Nota anual parcial 2026"))
    assert shown[annual] == to_number(value["2026", "annual_score"])
    # No KPI is left without its row in a store the pipeline filled.
    assert "—" not in shown.values(), shown
    # The full table lists every system indicator of the month, by its pt-BR name.
    table = pl.from_pandas(app.dataframe[0].value)
    assert table.height == sum(1 for p, _ in value if p == period)


@pytest.mark.parametrize(("path", "title"), [(p[0], gettext(p[1])) for p in PAGES])
def test_every_page_renders_on_the_pipeline_store(app: AppTest, path: str, title: str) -> None:
    app.switch_page(path).run()
    assert not app.exception, [e.value for e in app.exception]
    assert not app.error, [e.value for e in app.error]
    assert app.title[0].value == title
    # Every page the pipeline fills shows data, not a 'run this command' notice (the live page
    # and the accuracy of its predictions are filled by `pontual serve`, not the pipeline).
    if path not in ("pages/live.py", "pages/accuracy.py"):
        assert not [i.value for i in app.info if "Rode `pontual" in i.value], path


def test_every_indicator_the_pipeline_writes_is_in_the_catalogue(pipeline_store: Path) -> None:
    """The ids and units a real run writes (`pontual demo`) are the catalogue's, so every
    page, report and CLI table names them in pt-BR and formats them as declared."""
    with open_snapshot(pipeline_store) as store:
        written = store.query("SELECT DISTINCT indicator, unit FROM indicators").rows()
    assert len(written) >= 50
    entries = {i: indicator(i) for i, _ in written}
    assert not [i for i, entry in entries.items() if entry is None]
    wrong_unit = [(i, u) for i, u in written if (e := entries[i]) is not None and e.unit != u]
    assert not wrong_unit, wrong_unit
    shown = label_indicators(pl.Series([i for i, _ in written]))
    assert all(label != id for label, (id, _) in zip(shown, written, strict=True))
