"""Frota: the register with the age rules (BG art. 18-19), inspections due (art. 23), the
reserve share (Anexo I XXXV), daily availability against the required fleet and the > 10 % for
3 days rule (art. 72, parágrafo único, I), and the yearly fees (Lei 221/2017)."""

from __future__ import annotations

import polars as pl
import streamlit as st

from core.periods import parse_period
from core.profile import load_fee_table
from dashboard import charts, fleet, labels, state
from dashboard.format import format_column, to_integer, to_number, to_percent
from dashboard.queries import fleet as q

f = state.filters()
profile = state.profile()
period = parse_period(f.period)
start, end = period.start, period.end
st.title("Frota")

vehicles: pl.DataFrame = state.load(q.read_vehicles, f.operator_id, f.lot_id)
if vehicles.is_empty():
    state.empty_notice("cadastro da frota", "pontual ingest vehicles")
    st.stop()
register = fleet.build_fleet_register(vehicles, profile, end)

c1, c2, c3, c4 = st.columns(4)
c1.metric("Veículos cadastrados", to_integer(register.height))
c2.metric("Idade média (anos)", to_number(register["age_years"].mean(), 1))
c3.metric("Acima da idade máxima", to_integer(register["is_over_age"].sum()))
c4.metric("Vistorias vencidas", to_integer((register["inspection_status"] == "vencida").sum()))

st.subheader("Cadastro, idade e vistorias")
st.dataframe(
    register.select(
        pl.col("vehicle_id").alias("Veículo"),
        pl.col("plate").alias("Placa"),
        pl.col("operator_id").alias("Operadora"),
        pl.col("service_area")
        .replace({"urban": "urbano", "district": "distrital"})
        .alias("Serviço"),
        pl.col("vehicle_type").alias("Tipo"),
        pl.col("age_years").alias("Idade (anos)"),
        pl.col("max_age_years").alias("Idade máxima"),
        format_column(register["last_inspection_on"], "date").alias("Última vistoria"),
        format_column(register["next_inspection_on"], "date").alias("Próxima vistoria"),
        pl.col("inspection_status").alias("Situação da vistoria"),
    ),
    hide_index=True,
    width="stretch",
)

st.subheader("Disponibilidade diária × frota exigida")
days: pl.DataFrame = state.load(q.read_fleet_days, start, end, f.operator_id)
cut = profile.fleet.grave_cut_min_ratio
n_days = profile.fleet.grave_cut_min_days
if days.is_empty():
    state.empty_notice("frota diária", f"pontual indices --period {f.period}")
else:
    st.altair_chart(
        charts.build_fleet_availability(
            days, "service_date", "n_vehicles_required", "n_vehicles_operated"
        ),
        width="stretch",
    )
    longest = int(days["n_cut_days_consecutive"].max() or 0)  # type: ignore[arg-type]
    st.metric(
        f"Maior sequência de dias com redução > {to_percent(cut.value, 0)}",
        f"{to_integer(longest)} dias",
        help=f"Falta grave acima de {n_days.value} dias consecutivos ({labels.to_source(n_days.source)}).",
    )
    grave = days.filter(pl.col("is_grave_cut"))
    if grave.height:
        st.warning(
            f"Redução da frota acima de {to_percent(cut.value, 0)} por mais de {n_days.value} "
            f"dias consecutivos (BG art. 72, parágrafo único, I): "
            f"{', '.join(sorted(set(grave['operator_id'].to_list())))}."
        )

st.subheader("Frota reserva (BG Anexo I, XXXV)")
if days.is_empty():
    state.empty_notice("frota reserva", f"pontual indices --period {f.period}")
else:
    latest = days.sort("service_date").group_by("operator_id").last().sort("operator_id")
    st.dataframe(
        latest.select(
            pl.col("operator_id").alias("Operadora"),
            format_column(latest["service_date"], "date").alias("Dia"),
            pl.col("n_vehicles_registered").alias("Cadastrados"),
            pl.col("n_vehicles_required").alias("Exigidos pela tabela horária"),
            pl.col("n_reserve").alias("Reserva"),
            pl.col("n_reserve_min").alias("Reserva mínima"),
            format_column(latest["reserve_ratio"], "percent").alias("Reserva ÷ exigidos"),
            pl.col("is_reserve_ok")
            .replace_strict({True: "sim", False: "não"}, default="não avaliado")
            .alias("Cumpre"),
        ),
        hide_index=True,
        width="stretch",
    )
    ratio = profile.fleet.reserve_min_ratio
    small_below = profile.fleet.reserve_small_fleet_below.value
    small_min = profile.fleet.reserve_small_fleet_min.value
    st.caption(
        f"Reserva = veículos cadastrados − veículos exigidos pela tabela horária para operar "
        f"todas as linhas, no último dia do período. A lei ({labels.to_source(ratio.source)}) exige "
        f"reserva de ao menos {to_percent(ratio.value, 0)} da frota necessária à operação de "
        f"todas as linhas, e {to_integer(small_min)} veículo quando essa frota tem menos de "
        f"{to_integer(small_below)}. A marcação 'reserva' do cadastro não entra na conta: "
        "vale a frota que a operação do dia realmente exige."
    )

st.subheader("Taxas anuais de fiscalização e vistoria")
fee_id = profile.fee_table
if not fee_id:
    st.info("O perfil regulatório não indica tabela de taxas.")
else:
    table = load_fee_table(fee_id)
    fees = fleet.compute_fees(register, table)
    st.metric(f"Total anual ({table.currency_unit})", to_number(fees["yearly_fee"].sum(), 0))
    st.caption(f"{table.name} — {table.law}")
