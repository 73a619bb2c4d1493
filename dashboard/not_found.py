"""The pt-BR "page not found" page of both apps (`dashboard/app.py`, `dashboard/public_app.py`)
for an address that names none of their pages, one segment or nested (`/a/b`, which reaches the
app through `dashboard.nested_paths`): never Streamlit's English "Page not found" dialog, which
it draws when `st.navigation` has no page for the asked name (issue 20). And the default page's
own address (`/transparencia`, `/visao-geral`), which Streamlit gives no page (`home_pages`)."""

from __future__ import annotations

import re
from collections.abc import Callable, Collection
from typing import Any

import streamlit as st
from streamlit.runtime.scriptrunner import get_script_run_ctx

from core.texts import gettext as _

URL_PATH = re.compile(r"[A-Za-z0-9._~-]+(?:/[A-Za-z0-9._~-]+)*")
"""What an app accepts as an unknown page's URL path: one segment or several, URL-safe."""


def asked_unknown_path(known: Collection[str]) -> str | None:
    """The URL path the browser asked for when it is none of the `known` page paths, else None
    (the root, a known page, or a path of other characters)."""
    ctx = get_script_run_ctx()
    asked = ctx.pages_manager.intended_page_name if ctx is not None else None
    if not asked or asked in known or not URL_PATH.fullmatch(asked):
        return None
    return asked


def page_at(page: Callable[[], None], title: str, path: str) -> st.Page:
    """A hidden page answering the URL path `path`, nested (`a/b`) or not: `st.Page` refuses
    a "/" in its `url_path`, so a nested path is set on the page once made (the path Streamlit
    matches the asked page name against, and the one the browser keeps showing)."""
    made = st.Page(page, title=title, url_path=path.replace("/", "-"), visibility="hidden")
    made._url_path = path  # the attribute `url_path` reads; no public way to nest it
    return made


def home_pages(
    page: str | Callable[[], None], title: str, path: str, **kwargs: Any
) -> list[st.Page]:
    """The default page of an app, served at the root, and the same page (script or callable)
    at its own address `path`, hidden from the menu.

    Streamlit serves its default page at the root only: the page's `url_path` becomes ''
    once it is the default (`st.Page.url_path`), so `/path` matches no page and the front end
    draws its English "Page not found" dialog over the default page (issue 20). A second page
    cannot simply claim `path` while the default page was made with it, for a page's identity
    is the hash of the `url_path` it was made with (two pages with one path are refused); so
    the default page is made with the root's own path, '', and the page at `path` is a hidden
    second page of the same source. It keeps the address, with no redirect (a redirect to the
    root would push a history entry the back button returns to, and redirects again). Both
    share every cache; `st.page_link` to the script opens the first registered, the root.
    `kwargs`: `st.Page`'s other arguments (the icon)."""
    return [
        st.Page(page, title=title, url_path="", default=True, **kwargs),
        st.Page(page, title=title, url_path=path, visibility="hidden", **kwargs),
    ]


def build_not_found(
    path: str, notice: str, home: str | st.Page | None, home_label: str
) -> Callable[[], None]:
    """The page for `path`: its title, the `notice` (a template with ``{path}``) and a link to
    the `home` page (a page's script or callable; None: no link)."""

    def not_found() -> None:
        st.title(_("Page not found"))
        st.info(notice.format(path=path))
        if home is not None:
            st.page_link(home, label=home_label, icon=":material/home:")

    return not_found
