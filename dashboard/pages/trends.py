"""Tendências e risco: monthly ICV, its three parts (BG art. 57-I a, b, c) and the IQS (57-II)
per operator, side by side, with the profile's band lines; and an "em risco" panel: operators
heading for grade E, under the cassação watch (art. 72-VII), or with the latest grade E."""

from __future__ import annotations

import polars as pl
import streamlit as st

from core.periods import parse_period
from dashboard import charts, state
from dashboard.format import format_column, format_yes_no, to_number
from dashboard.queries import annual as annual_queries
from dashboard.queries import trends as q

f = state.filters()
profile = state.profile()
year = parse_period(f.period).start.year
st.title("Tendências e risco")
st.caption(
    f"Meses de {year - 1} e {year}, por operadora. Linhas tracejadas: as faixas do perfil "
    "(pontuação 0 e 100 de cada parte; notas mínimas dos conceitos) — padrões a fixar por "
    "decreto (BG art. 58) enquanto o perfil assim as marcar."
)

series: pl.DataFrame = state.load(q.read_monthly_series, f.operator_id, year)
grades: pl.DataFrame = state.load(annual_queries.read_annual_grades, f.operator_id, f.lot_id)
grade_min = profile.quality.grade_min_points.value

st.subheader("Operadoras em risco")
risk = q.build_risk(series, grades, float(grade_min["D"]))
if risk.is_empty():
    st.info("Nenhuma operadora em risco pelos critérios abaixo.", icon=":material/check_circle:")
else:
    st.dataframe(
        pl.DataFrame(
            [
                risk["operator_id"].alias("Operadora"),
                risk["last_grade"].alias("Último conceito"),
                format_column(risk["recent_icv"], "number").alias("ICV recente (pontos)"),
                format_column(risk["n_e_consecutive"], "integer").alias("Anos E seguidos"),
                format_yes_no(risk["is_provisional"], None).alias("Provisório"),
                risk["reasons"].alias("Por quê"),
            ]
        ),
        hide_index=True,
        width="stretch",
    )
st.caption(
    "Casos com prazo vencido: página Infrações (processo); os prazos correm em dias úteis "
    "(BG art. 68-69)."
)

if series.is_empty():
    state.empty_notice("índices mensais por operadora", f"pontual indices --period {year}")
    st.stop()

icv = profile.icv
panels: tuple[tuple[str, str, str, list[tuple[float, str]]], ...] = (
    (
        "icv_score",
        "ICV (pontos)",
        ",.0f",
        [(float(v), f"mínimo do conceito {g}") for g, v in grade_min.items()],
    ),
    (
        "icv_fulfilment",
        "Cumprimento de viagens",
        ".0%",
        [
            (icv.fulfilment_band.value[0], "0 ponto"),
            (icv.fulfilment_band.value[1], "100 pontos"),
        ],
    ),
    (
        "icv_punctuality",
        "Pontualidade",
        ".0%",
        [
            (icv.punctuality_band.value[0], "0 ponto"),
            (icv.punctuality_band.value[1], "100 pontos"),
        ],
    ),
    (
        "breakdowns_per_10000_km",
        "Quebras por 10.000 km",
        ",.1f",
        [
            (icv.breakdowns_band_per_10000_km.value[0], "0 ponto"),
            (icv.breakdowns_band_per_10000_km.value[1], "100 pontos"),
        ],
    ),
    ("iqs", "IQS (pontos)", ",.0f", []),
)
left, right = st.columns(2)
for i, (indicator, title, fmt, bands) in enumerate(panels):
    part = series.filter(pl.col("indicator") == indicator)
    with (left if i % 2 == 0 else right).container(border=True):
        st.markdown(f"**{title}**")
        if part.is_empty():
            st.caption("Sem valores mensais neste período.")
        else:
            st.altair_chart(charts.build_monthly_lines(part, title, fmt, bands), width="stretch")

st.subheader("Operadoras lado a lado — último mês com dados")
last = series.filter(pl.col("month") == pl.col("month").max().over("operator_id"))
side = last.pivot(on="indicator", index="operator_id", values="value").sort("operator_id")
columns = [side["operator_id"].alias("Operadora")]
for indicator, title, fmt, _ in panels:
    if indicator in side.columns:
        kind = "percent" if fmt.endswith("%") else "number"
        columns.append(format_column(side[indicator], kind).alias(title))
st.dataframe(pl.DataFrame(columns), hide_index=True, width="stretch")
st.caption(
    f"Conceitos: A ≥ {to_number(grade_min['A'], 0)}, B ≥ {to_number(grade_min['B'], 0)}, "
    f"C ≥ {to_number(grade_min['C'], 0)}, D ≥ {to_number(grade_min['D'], 0)} pontos "
    "(nota anual)."
)
