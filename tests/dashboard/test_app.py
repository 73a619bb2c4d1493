"""Every page of the dashboard through Streamlit's AppTest, on the small fixture store."""

from __future__ import annotations

from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl
from zoneinfo import ZoneInfo

import polars as pl
import pytest
from streamlit.testing.v1 import AppTest

from cases.accounts import add_user
from cases.db import CaseDB
from cases.register import open_case
from cases.states import Auto
from cases.workflow import Workflow
from core.profile import load_profile
from core.settings import CASES_DB_ENV
from core.store import Store, open_snapshot
from core.texts import gettext
from dashboard.format import (
    to_date,
    to_integer,
    to_number,
    to_percent,
    to_points_change,
    to_signed,
)
from dashboard.pages import PAGES
from dashboard.queries import trends as q_trends
from tests.dashboard.store_builder import DAY

APP = str(Path(__file__).resolve().parents[2] / "dashboard" / "app.py")


def _app(store: Path, monkeypatch: pytest.MonkeyPatch) -> AppTest:
    monkeypatch.setenv("PONTUAL_STORE", str(store))
    monkeypatch.setenv("PONTUAL_LIVE_URL", "http://127.0.0.1:9")  # nobody listens: fallback
    at = AppTest.from_file(APP, default_timeout=60)
    at.run()
    return at


def _metrics(at: AppTest) -> dict[str, tuple[str, str | None]]:
    return {m.label: (m.value, m.delta) for m in at.metric}


@pytest.mark.parametrize(("path", "title"), [(p[0], gettext(p[1])) for p in PAGES])
def test_every_page_renders_without_error(
    dashboard_store: Path, monkeypatch: pytest.MonkeyPatch, path: str, title: str
) -> None:
    at = _app(dashboard_store, monkeypatch)
    at.switch_page(path).run()
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]
    assert at.title[0].value == title


def test_overview_headlines_equal_the_indicators_rows(
    dashboard_store: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    at = _app(dashboard_store, monkeypatch)
    shown = _metrics(at)
    with open_snapshot(dashboard_store) as store:
        rows = store.query("SELECT period, indicator, value FROM indicators WHERE scope='system'")
    value = {(p, i): v for p, i, v in rows.iter_rows()}
    # Ratios as pt-BR percentages, the change in percentage points.
    fulfilment = value["2026-03", "icv_fulfilment"]
    change = fulfilment - value["2026-02", "icv_fulfilment"]
    assert shown["Cumprimento de viagens"] == (to_percent(fulfilment), to_points_change(change))
    assert shown["Cumprimento de viagens"] == ("97,3 %", "+1,2 p.p.")  # hand-checked
    assert shown["Pontualidade"][0] == to_percent(value["2026-03", "icv_punctuality"]) == "88,0 %"
    assert shown["Km rodado / programado"][0] == "95,4 %"
    assert shown["ICV (nota 0–100)"] == (to_number(value["2026-03", "icv_score"]), "+2,5")
    assert shown["Quebras por 10.000 km"] == ("1,25", "")  # no February value
    assert shown["IPK (passageiros/km)"][0] == "1,87"
    # Fewer suppressed trips than in February: a negative change, shown as good (inverse).
    assert shown["Viagens suprimidas"] == ("40", to_signed(-5.0, 0)) == ("40", "-5")
    # From trip_crowding: 1 of the 2 runs of the day over the limit.
    assert shown["Viagens acima do limite de lotação"] == ("50,0 %", "")
    # 84 points so far in 2026: grade B under the Bento Gonçalves bands (B >= 80).
    assert shown["Nota anual parcial 2026 (conceito B)"][0] == "84,0"


def test_filters_are_kept_across_pages_and_narrow_the_scope(
    dashboard_store: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    at = _app(dashboard_store, monkeypatch)
    at.selectbox(key="f_route").set_value("L1").run()
    assert _metrics(at)["Cumprimento de viagens"][0] == "100,0 %"  # the line L1 row
    at.switch_page("pages/lines.py").run()
    assert at.selectbox(key="f_route").value == "L1"
    assert at.selectbox(key="lines_route").value == "L1"
    at.switch_page("pages/overview.py").run()
    assert at.selectbox(key="f_route").value == "L1"
    assert "Linha L1" in at.caption[0].value


def test_lines_page_counts_the_day_outcomes(
    dashboard_store: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    at = _app(dashboard_store, monkeypatch)
    at.switch_page("pages/lines.py").run()
    ranking = pl.from_pandas(at.dataframe[0].value)
    r1 = ranking.filter(pl.col("Linha") == "L1").row(0, named=True)
    # 2 run (on time, late) of 3 evaluated; 1 of the 2 run on time
    assert (r1["Cumprimento"], r1["Pontualidade"], r1["Realizadas"]) == ("66,7 %", "50,0 %", "2")
    counts = pl.from_pandas(at.dataframe[1].value)
    l1 = counts.filter(pl.col("Linha") == "L1").row(0, named=True)
    got = (l1["Programadas"], l1["No horário"], l1["Atrasada"], l1["Suprimida"])
    assert got == ("3", "1", "1", "1")
    assert l1["Justificadas"] == "1"
    trips = pl.from_pandas(at.dataframe[2].value)
    assert trips["Partida programada"].to_list() == ["07:00:00", "08:00:00", "09:00:00"]
    assert trips["Atraso na origem"].to_list() == ["+2 min 00 s", "—", "+7 min 00 s"]
    # every trip links to its page (number -> line -> trip -> pings)
    assert trips["Viagem"][0] == "viagem?data=2026-03-02&viagem=L1-0700"
    assert at.metric[0].value == "1,3 min"  # EWT: mean of 30 s and 120 s


def test_trip_page_opened_from_an_evidence_link(
    dashboard_store: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    at = _app(dashboard_store, monkeypatch)
    at.query_params["data"] = "2026-03-02"
    at.query_params["viagem"] = "L1-0800"
    at.switch_page("pages/trip.py").run()
    assert at.subheader[0].value == "Resultado: suprimida (justificada)"
    assert "Ocorrência INC1 (obstrução da via)" in at.success[0].value
    at.selectbox(key="trip_id").set_value("L1-0700").run()
    shown = _metrics(at)
    assert shown["Atraso na origem"][0] == "+2 min 00 s"
    assert shown["Partida programada (02/03/2026)"][0] == "07:00"
    stops = pl.from_pandas(at.dataframe[0].value)
    assert stops["Atraso"].to_list() == ["+2 min 00 s", "+3 min 00 s", "+2 min 00 s"]
    # ... down to the pings behind the verdict, with a playback over them
    pings = pl.from_pandas(at.dataframe[1].value)
    assert pings.height > 1 and pings.columns[:2] == ["Registro", "Hora"]
    at.slider(key="trip_playback").set_value(2).run()
    assert f"Registro {pings['Registro'][1]} às " in " ".join(c.value for c in at.caption)


def test_the_drill_down_reaches_a_ping_from_a_kpi(
    dashboard_store: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 20's drill-down, each step by the link the page itself offers: the trip
    fulfilment KPI of Visão geral -> its lines -> the line's trips -> a trip's page -> the pings
    behind its verdict."""
    at = _app(dashboard_store, monkeypatch)
    # each KPI is drawn with its link under it (both lists in the page's order)
    kpi = [m.label for m in at.metric].index("Cumprimento de viagens")
    link = at.get("page_link")[kpi].proto
    assert (link.label, link.page) == ("O que explica: Viagens por linha", "linhas")
    at.switch_page(next(p for p, _t, url, _i in PAGES if url == link.page)).run()
    assert at.title[0].value == "Linhas"
    trip_link = pl.from_pandas(at.dataframe[2].value)["Viagem"][0]
    page, query = trip_link.split("?")
    for key, value in parse_qsl(query):
        at.query_params[key] = value
    at.switch_page(next(p for p, _t, url, _i in PAGES if url == page)).run()
    assert at.title[0].value == "Viagem"
    assert at.selectbox(key="trip_id").value == "L1-0700"
    pings = pl.from_pandas(at.dataframe[1].value)
    assert pings.height > 1 and pings.columns[:2] == ["Registro", "Hora"]


def test_fleet_page_applies_the_age_and_reserve_rules(
    dashboard_store: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    at = _app(dashboard_store, monkeypatch)
    at.switch_page("pages/fleet.py").run()
    shown = _metrics(at)
    assert shown["Veículos cadastrados"][0] == "4"
    assert shown["Acima da idade máxima"][0] == "1"  # V2, urban, 14 years > 12 (BG art. 18)
    assert shown["Vistorias vencidas"][0] == "0"
    # BG adopts no fee table (the Lei 221/2017 table is Itaboraí's, issue 17): no fee shown
    assert "Total anual (UFITAS)" not in shown
    assert any("não indica tabela de taxas" in i.value for i in at.info)


def test_annual_page_flags_the_cassacao_watch(
    dashboard_store: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    at = _app(dashboard_store, monkeypatch)
    at.switch_page("pages/annual.py").run()
    assert "OP2" in at.warning[0].value  # E for 3 consecutive years
    grades = pl.from_pandas(at.dataframe[0].value)
    assert grades["Conceito"].to_list() == ["B", "E"]
    assert grades["Alerta de cassação"].to_list() == ["não", "sim"]  # text, not a checkbox
    # each operator's verdict criteria, as `profiles show` and the dossier list them
    criteria = [pl.from_pandas(d.value) for d in at.dataframe if "Critério" in d.value.columns]
    assert len(criteria) == 2  # OP1, OP2
    fiscal = criteria[1].filter(pl.col("Artigo") == "BG art. 32-II, 38-II").row(0, named=True)
    assert fiscal["Situação"] == "não calculado pelo Pontual (informado pelo Município)"
    # OP2's renewal waits for the city's fiscal record; one E year raises no cassação alert
    title = load_profile("bento-goncalves-2021").verdicts.renewal.title
    assert sum(m.value == f"{title}: **em aberto**" for m in at.markdown) == 2


def test_pages_explain_which_command_fills_an_empty_store(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "empty.duckdb"
    with Store.open(path) as store:
        store.publish_snapshot()
    at = _app(path, monkeypatch)
    assert "pontual indices" in at.info[0].value
    for page, *_ in PAGES:
        at.switch_page(page).run()
        assert not at.exception, (page, [e.value for e in at.exception])
        assert at.info, page
        assert "pontual " in " ".join(i.value for i in at.info), page


def test_without_a_snapshot_the_app_says_how_to_publish_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    at = _app(tmp_path / "none.duckdb", monkeypatch)
    assert not at.exception
    assert "pontual demo --no-serve" in at.info[0].value


def test_fleet_page_shows_the_grave_cut(
    dashboard_store: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    at = _app(dashboard_store, monkeypatch)
    at.switch_page("pages/fleet.py").run()
    assert _metrics(at)["Maior sequência de dias com redução > 10 %"][0] == "4 dias"
    assert "OP1" in at.warning[0].value


def test_infractions_page_marks_suggestions_with_evidence_links(
    dashboard_store: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    at = _app(dashboard_store, monkeypatch)
    at.switch_page("pages/infractions.py").run()
    assert "não são autos de infração" in at.warning[0].value
    assert _metrics(at)["Total (URM)"][0] == "10,0"
    table = pl.from_pandas(at.dataframe[0].value)
    assert table["evidência"].to_list() == ["viagem?data=2026-03-02&viagem=L1-0900"]


def test_overview_table_names_indicators_in_pt_br(
    dashboard_store: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    at = _app(dashboard_store, monkeypatch)
    table = pl.from_pandas(at.dataframe[0].value)
    row = table.filter(pl.col("Indicador") == "ICV — cumprimento de viagens").row(0, named=True)
    assert (row["Valor"], row["Numerador"], row["Denominador"]) == ("97,3 %", "1.449", "1.489")
    assert "icv_fulfilment" not in table["Indicador"].to_list()


def test_crowding_page_reads_the_crowding_tables(
    dashboard_store: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    at = _app(dashboard_store, monkeypatch)
    at.switch_page("pages/crowding.py").run()
    assert not at.exception, [e.value for e in at.exception]
    shown = _metrics(at)
    assert shown["Viagens com perfil de carga"][0] == "2"
    assert shown["Acima do limite"][0] == "1"
    assert shown["Parcela acima do limite"][0] == "50,0 %"
    # Art. 59 §1: 70 passengers through the peak segment, 62 per trip at the limit -> 2 trips.
    assert shown["Faixas linha × hora com reforço exigido"][0] == "1"
    assert shown["Viagens extras no período"][0] == "1"
    actions = pl.from_pandas(at.dataframe[0].value).row(0, named=True)
    assert actions["Hora"] == "09:00"  # 12:00 UTC in Bento Gonçalves
    assert actions["Trecho mais carregado"] == "Praça → Terminal Bairro"
    assert (actions["Viagens necessárias"], actions["Viagens extras"]) == (2, 1)
    # The load profile of the most crowded run with a register capacity: 38 + 4 × 6 = 62.
    assert at.selectbox(key="crowd_trip").value == (DAY, "V2", 1)
    at.selectbox(key="crowd_trip").set_value((DAY, "V1", 0)).run()
    shown = _metrics(at)
    assert (shown["Assentos"][0], shown["Limite (assentos + em pé)"][0]) == ("38", "62")
    loads = pl.from_pandas(at.dataframe[1].value)
    assert loads["Parada"].to_list() == ["Terminal Centro", "Praça", "Terminal Bairro"]
    assert loads["A bordo ao sair"].to_list() == ["50,0", "60,0", "0,0"]
    assert loads["Em pé/m²"].to_list() == ["2,0", "3,7", "0,0"]


def test_fleet_page_reserve_is_the_laws_from_fleet_days(
    dashboard_store: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    at = _app(dashboard_store, monkeypatch)
    at.switch_page("pages/fleet.py").run()
    reserve = pl.from_pandas(at.dataframe[-1].value).row(0, named=True)
    # Every day of the period, not its last: 2 registered, 2 required on each of the 5 days ->
    # no reserve, 1 required (fleet under 10), below the minimum on all 5 days.
    assert (reserve["Dias avaliados"], reserve["Dias abaixo da reserva mínima"]) == (5, 5)
    assert (reserve["Menor reserva"], reserve["Reserva mínima exigida (maior)"]) == (0, 1)
    assert reserve["Cumpre todos os dias"] == "não"
    assert any("Anexo I, item XXXV" in c.value for c in at.caption)
    # Only one reserve figure: the register's 'reserva' flag is not shown any more.
    assert sum("Reserva" in str(list(d.value.columns)) for d in at.dataframe) == 1


def test_live_page_falls_back_to_the_stored_positions(
    dashboard_store: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    at = _app(dashboard_store, monkeypatch)
    at.switch_page("pages/live.py").run()
    assert "pontual serve" in at.info[0].value
    assert "http://127.0.0.1:9" in at.info[0].value


def test_annual_page_offers_the_reports(
    dashboard_store: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    at = _app(dashboard_store, monkeypatch)
    at.switch_page("pages/annual.py").run()
    texts = " ".join(m.value for m in at.markdown)
    assert "Relatório mensal de operação 03/2026 (art. 62-VII)" in texts
    assert "Relatório semestral 1º sem./2026" in texts


def test_fleet_page_says_a_reserve_without_register_is_not_evaluated(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue #22: with an empty fleet register the reserve is not judged (null), and the page
    says "não avaliado" rather than a dash that reads like a missing figure."""
    from tests.dashboard.store_builder import build_store

    path = build_store(tmp_path / "pontual.duckdb")
    with Store.open(path) as store:
        days = store.read("fleet_days").with_columns(
            pl.lit(None, pl.Boolean).alias("is_reserve_ok")
        )
        store.replace("fleet_days", days, "TRUE", [])
        store.publish_snapshot()
    at = _app(path, monkeypatch)
    at.switch_page("pages/fleet.py").run()
    assert not at.exception, [e.value for e in at.exception]
    tables = [pl.from_pandas(d.value) for d in at.dataframe]
    reserve = next(t for t in tables if "Cumpre todos os dias" in t.columns).row(0, named=True)
    assert reserve["Cumpre todos os dias"] == "não avaliado"


def test_risk_panel_lists_the_overdue_cases_per_operator(
    dashboard_store: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Two cases of OP1 drawn up and never notified (BG art. 68 §2: the notice goes out
    within 15 days) and one of OP2 notified in time: the "em risco" panel counts OP1's two and
    names the oldest; an operadora of OP2 sees none of them."""
    profile = load_profile("bento-goncalves-2021")
    url = f"sqlite:///{tmp_path / 'cases.sqlite'}"
    with CaseDB.open(url) as db:
        boss = add_user(db, "ana", "planejamento", "uma senha longa o bastante")
        fiscal = add_user(db, "fabio", "fiscal", "uma senha longa o bastante", by=boss)
        wf = Workflow(db, profile)
        ids = []
        for n, (operator, lavrada_on) in enumerate(
            (("OP1", date(2026, 3, 5)), ("OP1", date(2026, 4, 1)), ("OP2", date(2026, 3, 5)))
        ):
            cid = open_case(db, _suggestion(f"k{n}", operator), fiscal)
            wf.lavrar(cid, fiscal, _auto(f"AI-{n}"), on=lavrada_on)
            ids.append(cid)
        wf.notificar(ids[2], fiscal, on=date(2026, 3, 10))
        op2 = add_user(db, "op2", "operadora", None, operator_id="OP2", by=boss)
        today = datetime.now(ZoneInfo(profile.general.timezone.value)).date()
        assert q_trends.build_overdue_by_operator(wf.overdue(op2, today)).is_empty()
    monkeypatch.setenv(CASES_DB_ENV, url)
    at = _app(dashboard_store, monkeypatch)
    at.switch_page("pages/trends.py").run()
    assert not at.exception, [e.value for e in at.exception]
    late = next(
        pl.from_pandas(d.value) for d in at.dataframe if "Casos vencidos" in d.value.columns
    )
    due = date(2026, 3, 20)  # 15 calendar days after 5 March
    assert late.rows() == [
        ("OP1", "2", ids[0], "notificar (art. 68 §2)", to_date(due), to_integer((today - due).days))
    ]


def _suggestion(key: str, operator_id: str) -> dict[str, Any]:
    return {
        "infraction_key": key,
        "group": "B",
        "item": "IV",
        "description": "texto do item IV",
        "operator_id": operator_id,
        "route_id": "L1",
        "vehicle_id": "V1",
        "occurred_on": date(2026, 3, 2),
        "fact": "viagem suprimida",
        "source": "BG Anexo I, grupo B, inciso IV; art. 65",
        "urm": 1.0,
    }


def _auto(number: str) -> Auto:
    return Auto(
        number,
        datetime(2026, 3, 2, 10, 15, tzinfo=UTC),
        place_stop_id="S1",
        vehicle_plate="IAB1C23",
    )


BUNCHING_TRUTH_SQL = """
WITH v AS (
  SELECT v.service_date, s.direction_id, v.stop_id,
    coalesce(v.departure_at, v.arrival_at) AS left_at,
    to_timestamp(floor(epoch(s.planned_start_at) / 3600) * 3600) AS hour_at
  FROM stop_visits v JOIN trip_outcomes s ON s.service_date = v.service_date
    AND s.trip_id = v.trip_id AND s.vehicle_id = v.vehicle_id AND s.run_index = v.run_index
  WHERE s.route_id = ? AND coalesce(v.departure_at, v.arrival_at) IS NOT NULL
), h AS (
  SELECT *, epoch(left_at) - epoch(lag(left_at) OVER (
    PARTITION BY service_date, direction_id, stop_id ORDER BY left_at)) AS headway_s
  FROM v
)
SELECT count(*) FILTER (WHERE h.headway_s < ? * o.planned_headway_mean_s) AS n_bunched,
  count(*) AS n_judged
FROM h JOIN headway_observations o ON o.service_date = h.service_date AND o.route_id = ?
  AND o.direction_id = h.direction_id AND o.hour_at = h.hour_at
WHERE h.headway_s IS NOT NULL
"""
"""Bunching by its definition, written again in SQL (a window over each stop): the ground
truth the Linhas page is checked against."""


def test_lines_page_shows_bunching_on_the_simulated_trunk(
    pipeline_store: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """T10, the simulated city's frequent trunk (7-10 min), runs bunched now and then: the
    page's share of bunched stop headways and its table of hours equal the SQL count."""
    at = _app(pipeline_store, monkeypatch)
    at.selectbox(key="f_route").set_value("T10").run()
    at.switch_page("pages/lines.py").run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.selectbox(key="lines_route").value == "T10"
    with open_snapshot(pipeline_store) as store:
        profile_id = store.query("SELECT any_value(profile_id) FROM headway_observations").item()
        ratio = load_profile(profile_id).trips.bunching_max_ratio
        n_bunched, n_judged = store.query(BUNCHING_TRUTH_SQL, ["T10", ratio, "T10"]).row(0)
    assert 0 < n_bunched < n_judged / 5  # some, not most
    assert _metrics(at)["Intervalos em comboio nas paradas"][0] == to_percent(n_bunched / n_judged)
    hours = next(
        pl.from_pandas(d.value) for d in at.dataframe if "Intervalos em comboio" in d.value.columns
    )
    assert hours["Intervalos em comboio"].cast(pl.Int64).sum() == n_bunched
    assert "▼" in " ".join(c.value for c in at.caption)
