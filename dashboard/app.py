"""The planners' dashboard (Streamlit, pt-BR): `streamlit run dashboard/app.py`.

Started by `pontual dashboard`, which passes the store path in PONTUAL_STORE. The app reads only
the store's published snapshot (never the store file, never its write lock). Before anything
else the session's account is known (`dashboard.auth_ui`: a login form, OpenID Connect, or no
login on the loopback): only the pages its role may open are registered; any other page's URL
answers a refusal, and a path that is no page at all a pt-BR notice (never Streamlit's English
"Page not found" dialog; the first run of a fresh server is no exception, `dashboard.launch`;
nor the first page's own address, `/visao-geral`, served beside the root: `home_pages`).
The sidebar filters (period, operator/lot, line, direction) are rendered
here, before the page, so they are the same on every page.
"""

from __future__ import annotations

from collections.abc import Callable

import streamlit as st

from core.texts import gettext as _
from dashboard import auth_ui, state
from dashboard.auth import EXTRA_PAGES, pages_for
from dashboard.not_found import asked_unknown_path, build_not_found, home_pages, page_at
from dashboard.pages import PAGES


def _build_not_found(path: str, default: str | None) -> Callable[[], None]:
    notice = _("The address “/{path}” is not a page of the dashboard. Choose a page in the menu.")
    return build_not_found(path, notice, default, _("Open the home page"))


st.set_page_config(
    page_title=_("Pontual — dashboard"), page_icon=":material/directions_bus:", layout="wide"
)
account = auth_ui.current_account()
unknown = asked_unknown_path({url for _p, _t, url, _i in (*PAGES, *EXTRA_PAGES)} | {"entrar"})
if account is None:
    # Every page's URL shows the login form (then, logged in, the same URL opens that page or
    # its refusal); st.navigation is always called, or Streamlit would list pages/ itself.
    st.navigation(
        home_pages(auth_ui.build_login("visao-geral"), _("Log in"), "entrar")
        + [
            st.Page(auth_ui.build_login(url), title=_(title), url_path=url, visibility="hidden")
            for _path, title, url, _icon in (*PAGES, *EXTRA_PAGES)
        ]
        + ([page_at(auth_ui.build_login(unknown), _("Log in"), unknown)] if unknown else []),
        position="hidden",
    ).run()
    st.stop()
allowed = pages_for(account)
allowed_urls = {url for _p, _t, url, _i in allowed}
# The role's first page at the root and at its own address (`home_pages`), and at the login's
# address too: a bookmark of /entrar, once logged in, opens the home page.
home: list[st.Page] = []
if allowed:
    first_path, first_title, first_url, first_icon = allowed[0]
    home = [
        *home_pages(first_path, _(first_title), first_url, icon=first_icon),
        st.Page(first_path, title=_(first_title), url_path="entrar", visibility="hidden"),
    ]
navigation = st.navigation(
    home[:1]
    + [
        st.Page(path, title=_(title), url_path=url, icon=icon)
        for path, title, url, icon in allowed[1:]
    ]
    + home[1:]
    + [
        st.Page(
            auth_ui.build_refusal(account, _(title), url),
            title=_(title),
            url_path=url,
            visibility="hidden",
        )
        for _path, title, url, _icon in (*PAGES, *EXTRA_PAGES)
        if url not in allowed_urls
    ]
    + (
        [
            page_at(
                _build_not_found(unknown, allowed[0][0] if allowed else None),
                _("Page not found"),
                unknown,
            )
        ]
        if unknown
        else []
    ),
    # every page of the role in the menu: collapsed, Streamlit hides those past the tenth
    # behind "view more" (a planner has 14)
    expanded=True,
)
auth_ui.render_account(account)
st.session_state["filters"] = state.render_filters() if allowed else None
st.sidebar.caption(_("Regulatory profile: {name}", name=state.profile().name))
navigation.run()
