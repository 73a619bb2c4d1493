"""The dashboard in English (PONTUAL_LANG=en): the same pages, their texts from the catalogue's
English ids (docs/adr/0106); numbers stay pt-BR. pt-BR, the default, is what test_app reads."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

from cases.roles import ROLE_LABELS
from cases.states import to_state_label
from core.profile import load_profile
from core.texts import gettext
from dashboard import maps
from dashboard.auth import EXTRA_PAGES
from dashboard.labels import label_states
from dashboard.pages import PAGES
from dashboard.reports.reproducibility import PROFILE_UNIT_LABELS

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


def test_the_annual_page_reads_its_verdicts_in_english(
    dashboard_store: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The verdict texts made in analytics (outcome, status) follow the language too. They are
    made inside the page's cached queries: a server has one language for its life, but this
    process runs the page in pt-BR in other tests, so its caches are cleared before and after."""
    monkeypatch.setenv("PONTUAL_STORE", str(dashboard_store))
    monkeypatch.setenv("PONTUAL_LIVE_URL", "http://127.0.0.1:9")
    monkeypatch.setenv("PONTUAL_LANG", "en")
    st.cache_data.clear()
    try:
        at = AppTest.from_file(APP, default_timeout=60)
        at.run()
        at.switch_page("pages/annual.py").run()
    finally:
        st.cache_data.clear()
    assert not at.exception, [e.value for e in at.exception]
    assert at.title[0].value == "Annual evaluation"
    title = load_profile("bento-goncalves-2021").verdicts.renewal.title
    assert sum(m.value == f"{title}: **not decided**" for m in at.markdown) == 2
    assert any(c.value.startswith("Regulatory profile: ") for c in at.sidebar.caption)


def test_menu_maps_case_states_and_profile_units_read_in_english(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """What issue 20 moved into the catalogue, in both languages: the menu's page titles, the
    maps' legends and statuses, the case states (stored as they are) and the profile units."""
    vehicles = pl.DataFrame(
        {"delay_s": [400.0, -200.0, 0.0, None], "occupancy_status": ["FULL", None, None, None]}
    )
    states = pl.Series("state", ["sugerida", "em defesa", "desconhecido"])
    shown = {}
    for lang in ("en", "pt_BR"):
        monkeypatch.setenv("PONTUAL_LANG", lang)
        shown[lang] = (
            [gettext(title) for _path, title, _url, _icon in (*PAGES, *EXTRA_PAGES)][:3],
            maps.compute_live_colours(vehicles, "delay", 300, 120)["status"].to_list(),
            maps.compute_live_colours(vehicles, "occupancy", 300, 120)["status"].to_list()[:2],
            maps.to_network_legend("crowding"),
            label_states(states).to_list(),
            to_state_label("julgada"),
            PROFILE_UNIT_LABELS["ratio"],
            ROLE_LABELS["fiscal"],
        )
    assert shown["en"] == (
        ["Overview", "Lines", "Trip"],
        ["late", "early", "on time", "no prediction"],
        ["full", "no information"],
        ":red[■] 15 % or more of the trips above the limit · :orange[■] 5 % to 15 % · "
        ":yellow[■] under 5 % · :green[■] none above the limit · :gray[■] no data in the period",
        ["suggested", "in defence", "desconhecido"],
        "judged",
        "fraction (unit)",
        "Inspector (enforcement agent)",
    )
    assert shown["pt_BR"] == (
        ["Visão geral", "Linhas", "Viagem"],
        ["atrasado", "adiantado", "no horário", "sem previsão"],
        ["lotado", "sem informação"],
        ":red[■] 15 % ou mais das viagens acima do limite · :orange[■] 5 % a 15 % · "
        ":yellow[■] menos de 5 % · :green[■] nenhuma · :gray[■] sem dados no período",
        ["sugerida", "em defesa", "desconhecido"],  # the stored states, as they are
        "julgada",
        "fração",
        "Fiscal (agente de fiscalização)",
    )


def test_the_pending_acts_of_the_reports_cases_table_in_both_languages(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """`cases.reporting` names the act a case waits for by its English id; the reports show it
    in the chosen language (`label_texts`), a case waiting for nothing as null."""
    from cases.reporting import PENDING_LABELS
    from dashboard.labels import label_texts

    pending = pl.Series("pending", [PENDING_LABELS[0], None, PENDING_LABELS[3]])
    monkeypatch.setenv("PONTUAL_LANG", "en")
    assert label_texts(pending).to_list() == [
        "notify the operator (art. 68 §2)",
        None,
        "the operator's appeal (art. 69-III)",
    ]
    monkeypatch.delenv("PONTUAL_LANG")
    assert label_texts(pending).to_list() == [
        "notificar a operadora (art. 68 §2)",
        None,
        "recurso da operadora (art. 69-III)",
    ]
