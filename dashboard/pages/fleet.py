"""Frota: the register with the age rules (BG art. 18-19), inspections due (art. 23), the
reserve share (Anexo I XXXV), daily availability against the required fleet and the > 10 % for
3 days rule (art. 72, parágrafo único, I), and the yearly fees (Lei 221/2017)."""

from __future__ import annotations

import polars as pl
import streamlit as st

from core.periods import parse_period
from core.profile import load_fee_table
from dashboard import charts, fleet, labels, state
from dashboard.format import format_column, format_yes_no, to_integer, to_number, to_percent
from dashboard.queries import fleet as q

f = state.filters()
profile = state.profile()
period = parse_period(f.period)
start, end = period.start, period.end
st.title("Frota")

# the fleet on the period's last day, as the register and its inspections then stood
vehicles: pl.DataFrame = state.load(q.read_vehicles, f.operator_id, f.lot_id, end)
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

st.subheader("Frota reserva, dia a dia no período (BG Anexo I, XXXV; CGS art. 23)")
reserve: pl.DataFrame = state.load(q.read_reserve_over_period, start, end, f.operator_id)
if reserve.is_empty():
    state.empty_notice("frota reserva", f"pontual indices --period {f.period}")
else:
    has_cap = profile.fleet.reserve_max_ratio is not None
    shown = reserve.select(
        pl.col("operator_id").alias("Operadora"),
        pl.col("n_days").alias("Dias avaliados"),
        pl.col("n_days_below_min").alias("Dias abaixo da reserva mínima"),
        *([pl.col("n_days_above_max").alias("Dias acima do teto")] if has_cap else []),
        pl.col("n_reserve_lowest").alias("Menor reserva"),
        format_column(reserve["lowest_on"], "date").alias("Dia da menor reserva"),
        pl.col("n_reserve_min_max").alias("Reserva mínima exigida (maior)"),
        format_column(reserve["reserve_ratio_lowest"], "percent").alias("Menor reserva ÷ exigidos"),
        pl.col("n_registered_max").alias("Cadastrados (máx.)"),
        format_yes_no(pl.col("is_reserve_ok_every_day"), "não avaliado").alias(
            "Cumpre todos os dias"
        ),
    )
    st.dataframe(shown, hide_index=True, width="stretch")
    ratio = profile.fleet.reserve_min_ratio
    small_below = profile.fleet.reserve_small_fleet_below.value
    small_min = profile.fleet.reserve_small_fleet_min.value
    st.caption(
        f"Reserva = veículos da frota no dia − veículos exigidos pela tabela horária do dia, "
        f"apurada em cada dia do período (um domingo com poucas viagens não esconde a falta de "
        f"reserva nos dias úteis). A lei ({labels.to_source(ratio.source)}) exige reserva de ao "
        f"menos {to_percent(ratio.value, 0)} da frota necessária à operação de todas as linhas, "
        f"e {to_integer(small_min)} veículo quando essa frota tem menos de "
        f"{to_integer(small_below)}. Vale o cadastro em vigor em cada dia: veículo baixado "
        "deixa de contar a partir da baixa. A marcação 'reserva' do cadastro não entra na conta."
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
