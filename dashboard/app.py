"""The planners' dashboard (Streamlit, pt-BR): `streamlit run dashboard/app.py`.

Started by `pontual dashboard`, which passes the store path in PONTUAL_STORE. The app reads only
the store's published snapshot (never the store file, never its write lock). The sidebar filters
(period, operator/lot, line, direction) are rendered here, before the page, so they are the
same on every page.
"""

from __future__ import annotations

import streamlit as st

from dashboard import state
from dashboard.pages import PAGES

st.set_page_config(
    page_title="Pontual — painel", page_icon=":material/directions_bus:", layout="wide"
)
navigation = st.navigation(
    [
        st.Page(path, title=title, url_path=url, icon=icon, default=(url == PAGES[0][2]))
        for path, title, url, icon in PAGES
    ]
)
st.session_state["filters"] = state.render_filters()
st.sidebar.caption(f"Perfil regulatório: {state.profile().name}")
navigation.run()
