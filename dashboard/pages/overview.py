"""Visão geral: the headline indices of the selected scope and period, each with its change
against the previous period and a link to the page that explains it."""

from __future__ import annotations

from dataclasses import dataclass

import polars as pl
import streamlit as st

from dashboard import data, state
from dashboard.format import (
    to_integer,
    to_number,
    to_percent,
    to_period,
    to_points_change,
    to_signed,
)


@dataclass(frozen=True)
class Kpi:
    """One headline number: the `indicators` ids it may be stored under, how it reads."""

    ids: tuple[str, ...]
    label: str
    kind: str  # 'percent' (ratio 0-1), 'number', 'integer'
    page: str
    page_label: str
    higher_is_better: bool = True
    decimals: int = 1


KPIS = (
    Kpi(("icv_score",), "ICV (nota 0–100)", "number", "pages/lines.py", "Viagens por linha"),
    Kpi(
        ("icv_fulfilment",),
        "Cumprimento de viagens",
        "percent",
        "pages/lines.py",
        "Viagens por linha",
    ),
    Kpi(("icv_punctuality",), "Pontualidade", "percent", "pages/lines.py", "Atrasos por linha"),
    Kpi(
        ("breakdowns_per_10000_km",),
        "Quebras por 10.000 km",
        "number",
        "pages/fleet.py",
        "Frota",
        higher_is_better=False,
        decimals=2,
    ),
    Kpi(
        ("suppressed_trips", "n_suppressed", "trips_suppressed"),
        "Viagens suprimidas",
        "integer",
        "pages/lines.py",
        "Supressões por linha",
        higher_is_better=False,
    ),
    Kpi(("km_efficiency",), "Km rodado / programado", "percent", "pages/lines.py", "Km por linha"),
    Kpi(("ipk",), "IPK (passageiros/km)", "number", "pages/crowding.py", "Lotação", decimals=2),
    Kpi(
        ("crowded_trip_share", "over_limit_trip_share", "crowding_over_limit_share"),
        "Viagens lotadas (acima do limite)",
        "percent",
        "pages/crowding.py",
        "Lotação por linha e hora",
        higher_is_better=False,
    ),
    Kpi(("annual_score",), "Nota anual parcial", "number", "pages/annual.py", "Avaliação anual"),
)


def _value_text(kpi: Kpi, value: float | None) -> str:
    if kpi.kind == "percent":
        return to_percent(value, kpi.decimals)
    if kpi.kind == "integer":
        return to_integer(value)
    return to_number(value, kpi.decimals)


def _change_text(kpi: Kpi, change: float | None) -> str | None:
    if change is None:
        return None
    if kpi.kind == "percent":
        return to_points_change(change, kpi.decimals)
    return to_signed(change, 0 if kpi.kind == "integer" else kpi.decimals)


def _grade(score: float | None) -> str:
    """Grade A–E of an annual score from the profile's bands."""
    if score is None:
        return "—"
    bands = state.profile().quality.grade_min_points.value
    return next((g for g in ("A", "B", "C", "D") if score >= bands[g]), "E")


f = state.filters()
scope, scope_id = data.compute_scope(f.operator_id, f.lot_id, f.route_id)
previous = data.compute_previous_period(f.period)
year = f.period[:4]
periods = tuple(dict.fromkeys((f.period, previous, year)))
indicators: pl.DataFrame = state.load("read_indicators", scope, scope_id, periods)
changes = data.build_changes(indicators, f.period, previous)
annual = data.build_changes(indicators, year, str(int(year) - 1))

scope_text = {
    "system": "Sistema inteiro",
    "operator": f"Operadora {scope_id}",
    "lot": f"Lote {scope_id}",
    "line": f"Linha {scope_id}",
}[scope]
st.title("Visão geral")
st.caption(f"{scope_text} · {to_period(f.period)} · variação em relação a {to_period(previous)}")

if changes.is_empty():
    state.empty_notice("índices", f"pontual indices --period {f.period}")

values = {r["indicator"]: r for r in changes.iter_rows(named=True)}
values.update({f"annual:{r['indicator']}": r for r in annual.iter_rows(named=True)})
columns = st.columns(3)
for i, kpi in enumerate(KPIS):
    key = next((k for k in kpi.ids if k in values), None)
    if kpi.ids == ("annual_score",):
        key = next((f"annual:{k}" for k in kpi.ids if f"annual:{k}" in values), key)
    row = values.get(key) if key else None
    value = row["value"] if row else None
    with columns[i % 3].container(border=True):
        label = kpi.label
        if kpi.ids == ("annual_score",):
            label = f"{kpi.label} {year} (conceito {_grade(value)})"
        st.metric(
            label,
            _value_text(kpi, value),
            delta=_change_text(kpi, row["change"] if row else None),
            delta_color="normal" if kpi.higher_is_better else "inverse",
            help=f"Indicador `{' / '.join(kpi.ids)}` da tabela indicators",
        )
        st.page_link(
            kpi.page, label=f"O que explica: {kpi.page_label}", icon=":material/arrow_forward:"
        )

if not indicators.is_empty():
    st.subheader("Todos os indicadores do período")
    table = indicators.filter(pl.col("period") == f.period)
    shown = table.select(
        pl.col("indicator").alias("Indicador"),
        *(
            pl.col(c).map_elements(lambda v: to_number(v, 2), return_dtype=pl.String).alias(t)
            for c, t in (
                ("numerator", "Numerador"),
                ("denominator", "Denominador"),
                ("value", "Valor"),
            )
            if c in table.columns
        ),
        *([pl.col("unit").alias("Unidade")] if "unit" in table.columns else []),
    )
    st.dataframe(shown, hide_index=True, width="stretch")
