"""Lotação: where and when buses are over the crowding limit (BG art. 59: seats plus the
profile's standees per m²), a trip's load profile, and the extra trips needed (art. 59 §1)."""

from __future__ import annotations

from datetime import date

import polars as pl
import streamlit as st

from dashboard import charts, data, state
from dashboard.format import format_column, to_date, to_number

f = state.filters()
start, end = data.compute_period_dates(f.period)
limit = state.profile().crowding.standees_max_per_m2
st.title("Lotação")
st.caption(
    f"Limite: todos os assentos ocupados mais {to_number(limit.value, 1)} passageiros em pé "
    f"por m² ({limit.source or 'perfil'})."
)

st.subheader("Viagens acima do limite por linha e hora")
cells: pl.DataFrame = state.load("read_crowding_heatmap", start, end, f.route_ids, f.direction)
if f.route_id != data.ALL and cells.height:
    cells = cells.filter(pl.col("route_id") == f.route_id)
if cells.is_empty():
    state.empty_notice("lotação", f"pontual crowding --from {start} --to {end}")
else:
    st.altair_chart(charts.build_heatmap(cells), width="stretch")

st.subheader("Viagens extras necessárias (art. 59 §1)")
summary: pl.DataFrame = state.load("read_crowding_summary", start, end, f.route_ids)
extra_col = next(
    (c for c in summary.columns if c.startswith("n_extra") or c.startswith("extra")), None
)
if summary.is_empty() or extra_col is None:
    state.empty_notice("resumo de lotação", f"pontual crowding --from {start} --to {end}")
else:
    needed = summary.filter(pl.col(extra_col) > 0)
    st.metric(
        "Viagens extras por dia (soma das faixas horárias)", to_number(needed[extra_col].sum(), 0)
    )
    st.dataframe(needed, hide_index=True, width="stretch")

st.subheader("Perfil de carga de uma viagem")
crowded: pl.DataFrame = state.load("read_crowded_trips", start, end, f.route_ids)
if crowded.is_empty():
    state.empty_notice("carga por parada", f"pontual crowding --from {start} --to {end}")
    st.stop()
keys = list(zip(crowded["service_date"].to_list(), crowded["trip_id"].to_list(), strict=True))
labels = {
    k: f"{to_date(k[0])} · linha {r} · {k[1]} · máx. {to_number(m, 0)} a bordo, "
    f"{to_number(s, 1)} em pé/m²"
    for k, r, m, s in zip(
        keys,
        crowded["route_id"].to_list(),
        crowded["max_load"].to_list(),
        crowded["max_standees_per_m2"].to_list(),
        strict=True,
    )
}
chosen: tuple[date, str] = st.selectbox(
    "Viagem (as mais lotadas primeiro)", keys, format_func=labels.__getitem__, key="crowd_trip"
)
loads: pl.DataFrame = state.load("read_trip_loads", chosen[0], chosen[1])
load_col = "load_after" if "load_after" in loads.columns else "load"
seats = loads["n_seats"].drop_nulls().max() if "n_seats" in loads.columns else None
area = loads["standing_area_m2"].drop_nulls().max() if "standing_area_m2" in loads.columns else None
standing_limit = (
    float(seats) + float(area) * limit.value  # type: ignore[arg-type]
    if seats is not None and area is not None
    else None
)
profile_chart = charts.build_load_profile(loads, load_col, seats, standing_limit)  # type: ignore[arg-type]
st.altair_chart(profile_chart, width="stretch")  # type: ignore[call-overload]
show = [
    c
    for c in (
        "stop_sequence",
        "stop_id",
        "n_boardings",
        "n_alightings",
        load_col,
        "standees_per_m2",
        "is_over_limit",
        "los",
    )
    if c in loads.columns
]
table = loads.select(show)
if "standees_per_m2" in table.columns:
    table = table.with_columns(format_column(table["standees_per_m2"], "number"))
st.dataframe(table, hide_index=True, width="stretch")
