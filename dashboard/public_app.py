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
from core.texts import N_, Labels
from core.texts import gettext as _
from dashboard.format import format_column, to_indicator_value, to_period
from dashboard.labels import label_indicators
from dashboard.not_found import asked_unknown_path, build_not_found, home_pages, page_at
from dashboard.queries import public as q
from dashboard.queries.snapshot import open_source, read_snapshot_mtime

SCOPE_LABELS = Labels({"system": N_("System"), "operator": N_("Operator"), "line": N_("Line")})

st.set_page_config(page_title=_("Pontual — transparency"), page_icon=":material/directions_bus:")


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
    st.title(_("Public transport transparency"))
    st.caption(
        _(
            "Indicators published by the managing body: trip fulfilment, punctuality, "
            "crowding and the operators' annual grade. Aggregates only; no data on "
            "passengers, vehicles or proceedings."
        )
    )
    if mtime == 0.0:
        st.info(_("No indicators published yet."))
        return

    indicators = _read("read_public_indicators", path, mtime)
    st.header(_("Trip fulfilment index (ICV) by month"))
    if indicators.is_empty():
        st.info(_("No monthly indicator published."))
    else:
        periods = indicators["period"].unique().sort(descending=True).to_list()
        period = st.selectbox(_("Month"), periods, format_func=to_period)
        shown = indicators.filter(pl.col("period") == period)
        st.dataframe(
            shown.select(
                pl.col("scope")
                .replace_strict(SCOPE_LABELS, default=pl.col("scope"))
                .alias(_("Level (scope)")),
                pl.col("scope_id").replace("all", _("all (scopes)")).alias(_("Identification")),
                label_indicators(shown["indicator"]).alias(_("Indicator")),
                pl.Series(
                    _("Value"),
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

    st.header(_("Crowding by line and hour"))
    crowding = _read("read_public_crowding", path, mtime, tz)
    if crowding.is_empty():
        st.info(_("No crowding measure published."))
    else:
        st.dataframe(
            crowding.select(
                pl.col("route_id").alias(_("Line")),
                pl.format("{}h", pl.col("hour")).alias(_("Hour")),
                format_column(crowding["n_trips"], "integer").alias(_("Trips measured")),
                format_column(crowding["over_limit_share"], "percent").alias(_("Over the limit")),
                format_column(crowding["mean_peak_load"], "number").alias(
                    _("Mean peak (passengers)")
                ),
            ),
            hide_index=True,
            width="stretch",
        )

    st.header(_("Annual grade"))
    grades = _read("read_public_grades", path, mtime)
    if grades.is_empty():
        st.info(_("No annual grade published."))
    else:
        st.dataframe(
            grades.select(
                pl.col("year").cast(pl.String).alias(_("Year")),
                pl.col("scope")
                .replace_strict(SCOPE_LABELS, default=pl.col("scope"))
                .alias(_("Level (scope)")),
                pl.col("scope_id").replace("all", _("all (scopes)")).alias(_("Identification")),
                pl.col("grade").alias(_("Grade")),
                format_column(grades["annual_score"], "number").alias(_("Points")),
                pl.when(pl.col("is_provisional").fill_null(False))
                .then(pl.lit(_("provisional")))
                .otherwise(pl.lit("—"))
                .alias(_("Status")),
            ),
            hide_index=True,
            width="stretch",
        )


# st.navigation with this one page: without it Streamlit would list and serve the scripts of
# dashboard/pages/ (the planners' pages) beside this app. The page is served at the root and at
# its own address, /transparencia (`home_pages`); any other address gets the pt-BR "page not
# found" page (never Streamlit's English dialog), linking to this one.
home, own_address = home_pages(render_public, _("Transparency"), "transparencia")
unknown = asked_unknown_path((own_address.url_path,))
notice = _("The address “/{path}” is not a page of the transparency panel.")
st.navigation(
    [home, own_address]
    + (
        [
            page_at(
                build_not_found(unknown, notice, home, _("Open the transparency page")),
                _("Page not found"),
                unknown,
            )
        ]
        if unknown
        else []
    ),
    position="hidden",
).run()
