"""The planners' dashboard (Streamlit, pt-BR): `streamlit run dashboard/app.py`.

Started by `pontual dashboard`, which passes the store path in PONTUAL_STORE. The app reads only
the store's published snapshot (never the store file, never its write lock). The sidebar filters
(period, operator/lot, line, direction) are rendered here, before the page, so they are the
same on every page.
"""

from __future__ import annotations

import streamlit as st

from dashboard import state

PAGES = (
    ("pages/overview.py", "Visão geral", "visao-geral", ":material/dashboard:"),
    ("pages/lines.py", "Linhas", "linhas", ":material/timeline:"),
    ("pages/trip.py", "Viagem", "viagem", ":material/directions_bus:"),
    ("pages/crowding.py", "Lotação", "lotacao", ":material/groups:"),
    ("pages/fleet.py", "Frota", "frota", ":material/garage:"),
    ("pages/live.py", "Ao vivo", "ao-vivo", ":material/sensors:"),
    ("pages/annual.py", "Avaliação anual", "avaliacao-anual", ":material/grading:"),
    ("pages/infractions.py", "Infrações sugeridas", "infracoes", ":material/gavel:"),
)
"""(file, title, URL path, icon) of every page, in menu order."""

st.set_page_config(
    page_title="Pontual — painel", page_icon=":material/directions_bus:", layout="wide"
)
navigation = st.navigation(
    [
        st.Page(path, title=title, url_path=url, icon=icon, default=(i == 0))
        for i, (path, title, url, icon) in enumerate(PAGES)
    ]
)
st.session_state["filters"] = state.render_filters()
st.sidebar.caption(f"Perfil regulatório: {state.profile().name}")
navigation.run()
