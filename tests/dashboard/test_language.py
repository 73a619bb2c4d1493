"""The dashboard in English (PONTUAL_LANG=en): the same pages, their texts from the catalogue's
English ids (docs/adr/0106); numbers stay pt-BR. pt-BR, the default, is what test_app reads."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest
from streamlit.testing.v1 import AppTest

APP = str(Path(__file__).resolve().parents[2] / "dashboard" / "app.py")


def test_overview_and_trends_pages_read_in_english(
    dashboard_store: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PONTUAL_STORE", str(dashboard_store))
    monkeypatch.setenv("PONTUAL_LIVE_URL", "http://127.0.0.1:9")
    monkeypatch.setenv("PONTUAL_LANG", "en")
    at = AppTest.from_file(APP, default_timeout=60)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.title[0].value == "Overview"
    assert {"Trip fulfilment", "Punctuality", "Suppressed trips"} <= {m.label for m in at.metric}
    table = pl.from_pandas(at.dataframe[0].value)
    row = table.filter(pl.col("Indicator") == "ICV — trip fulfilment").row(0, named=True)
    assert (row["Value"], row["Numerator"], row["Denominator"]) == ("97,3 %", "1.449", "1.489")
    assert [s.label for s in at.sidebar.selectbox] == [
        "Period",
        "Operator",
        "Lot",
        "Line",
        "Direction",
    ]
    assert at.sidebar.selectbox[-1].options == ["Both directions", "Outbound (0)", "Return (1)"]

    at.switch_page("pages/trends.py").run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.title[0].value == "Trends and risk"
    assert [h.value for h in at.subheader][:1] == ["Operators at risk"]
