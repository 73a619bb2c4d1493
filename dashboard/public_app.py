"""The public transparency page (Streamlit, pt-BR, no login): `pontual dashboard --public`.

Its own app and its own process, so that it can be exposed to the internet while the planners'
dashboard stays behind the login: it opens the published snapshot read-only and runs only the
readers of `dashboard.queries.public` (monthly ICV and its parts per line, operator and system;
crowding by line and hour; annual grades). It never opens the case database and registers no
other page.
"""

from __future__ import annotations

import polars as pl
import streamlit as st

from core.profile import load_profile
from core.settings import Settings
from core.store import Store
from dashboard.format import format_column, to_indicator_value, to_period
from dashboard.labels import label_indicators
from dashboard.queries import public as q
from dashboard.queries.snapshot import open_source, read_snapshot_mtime

SCOPE_LABELS = {"system": "Sistema", "operator": "Operadora", "line": "Linha"}

st.set_page_config(page_title="Pontual — transparência", page_icon=":material/directions_bus:")


@st.cache_resource(show_spinner=False, max_entries=2)
def _snapshot(store_path: str, mtime: float) -> Store:
    return open_source(store_path)


@st.cache_data(show_spinner=False, max_entries=16)
def _read(name: str, store_path: str, mtime: float, *args: str) -> pl.DataFrame:
    shared = _snapshot(store_path, mtime)
    cursor = shared.con.cursor()
    try:
        frame: pl.DataFrame = getattr(q, name)(Store(shared.path, cursor, read_only=True), *args)
        return frame
    finally:
        cursor.close()


def render_public() -> None:
    """The page: three sections of published aggregates."""
    settings = Settings.resolve()
    path = str(settings.lake_path or settings.store_path)  # a lake: `pontual --lake PATH`
    mtime = read_snapshot_mtime(path)
    tz = load_profile(settings.profile_id).general.timezone.value
    st.title("Transparência do transporte coletivo")
    st.caption(
        "Indicadores publicados pelo órgão gestor: cumprimento de viagens, pontualidade, lotação e "
        "conceito anual das operadoras. Somente agregados; nenhum dado de passageiro, veículo ou "
        "processo."
    )
    if mtime == 0.0:
        st.info("Ainda não há indicadores publicados.")
        return

    indicators = _read("read_public_indicators", path, mtime)
    st.header("Índice de cumprimento de viagens (ICV) por mês")
    if indicators.is_empty():
        st.info("Nenhum indicador mensal publicado.")
    else:
        periods = indicators["period"].unique().sort(descending=True).to_list()
        period = st.selectbox("Mês", periods, format_func=to_period)
        shown = indicators.filter(pl.col("period") == period)
        st.dataframe(
            shown.select(
                pl.col("scope")
                .replace_strict(SCOPE_LABELS, default=pl.col("scope"))
                .alias("Âmbito"),
                pl.col("scope_id").replace("all", "todas").alias("Identificação"),
                label_indicators(shown["indicator"]).alias("Indicador"),
                pl.Series(
                    "Valor",
                    [
                        to_indicator_value(v, u or "")
                        for v, u in zip(shown["value"], shown["unit"], strict=True)
                    ],
                    dtype=pl.String,
                ),
            ),
            hide_index=True,
            width="stretch",
        )

    st.header("Lotação por linha e hora")
    crowding = _read("read_public_crowding", path, mtime, tz)
    if crowding.is_empty():
        st.info("Nenhuma medida de lotação publicada.")
    else:
        st.dataframe(
            crowding.select(
                pl.col("route_id").alias("Linha"),
                pl.format("{}h", pl.col("hour")).alias("Hora"),
                format_column(crowding["n_trips"], "integer").alias("Viagens medidas"),
                format_column(crowding["over_limit_share"], "percent").alias("Acima do limite"),
                format_column(crowding["mean_peak_load"], "number").alias(
                    "Pico médio (passageiros)"
                ),
            ),
            hide_index=True,
            width="stretch",
        )

    st.header("Conceito anual")
    grades = _read("read_public_grades", path, mtime)
    if grades.is_empty():
        st.info("Nenhum conceito anual publicado.")
    else:
        st.dataframe(
            grades.select(
                pl.col("year").cast(pl.String).alias("Ano"),
                pl.col("scope")
                .replace_strict(SCOPE_LABELS, default=pl.col("scope"))
                .alias("Âmbito"),
                pl.col("scope_id").replace("all", "todas").alias("Identificação"),
                pl.col("grade").alias("Conceito"),
                format_column(grades["annual_score"], "number").alias("Pontos"),
                pl.when(pl.col("is_provisional").fill_null(False))
                .then(pl.lit("provisório"))
                .otherwise(pl.lit("—"))
                .alias("Situação"),
            ),
            hide_index=True,
            width="stretch",
        )


# st.navigation with this one page: without it Streamlit would list and serve the scripts of
# dashboard/pages/ (the planners' pages) beside this app.
st.navigation(
    [st.Page(render_public, title="Transparência", url_path="transparencia", default=True)],
    position="hidden",
).run()
