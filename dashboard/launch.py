"""`python -m dashboard.launch run APP ...`: Streamlit's own command line, with the page-folder
discovery of its first multipage API switched off before the server starts (ADR 0105).

Both apps (`dashboard/app.py`, `dashboard/public_app.py`) sit beside a `pages/` folder and
build their page list with `st.navigation`. Streamlit only learns that from the first
`st.navigation` call: until then a fresh server process treats `pages/` as its old-style page
folder, so the very first script run of the process lists the page files by file name. A cold
deep link (`/linhas`) then matched no page and drew Streamlit's English "Page not found"
dialog, and a path named after a page file (`/lines`) would run that planners' page script in
the public app. With the discovery off, the first run is like every other one. A nested address
(`/a/b`) reaches the app too (`dashboard.nested_paths`), which answers it with its pt-BR page.

The modules every page imports (Polars, DuckDB, Altair, pydeck, Babel, the page queries) are
imported here, before the server answers its health check: Streamlit imports an app's modules
only on its first script run, so the first visitor of a fresh server waited for them (several
seconds on a busy machine, the bulk of the cold first page; issue 20). Not `dashboard.state`
nor `dashboard.auth_ui`: their Streamlit caches must be made once the runtime exists.
"""

from __future__ import annotations

import importlib

from streamlit.runtime.pages_manager import PagesManager
from streamlit.web.cli import main

from dashboard import nested_paths

PRELOAD = (
    "polars",
    "duckdb",
    "altair",
    "pydeck",
    "babel.dates",
    "core.store",
    "core.profile",
    "cases.audit",
    "cases.accounts",
    "dashboard.auth",
    "dashboard.charts",
    "dashboard.format",
    "dashboard.labels",
    "dashboard.maps",
    *(
        f"dashboard.queries.{name}"
        for name in (
            *("accuracy", "annual", "crowding", "filters", "fleet", "infractions", "lines"),
            *("live", "network", "overview", "quality", "scope", "snapshot", "trends", "trip"),
        )
    ),
)
"""Imported before the server starts (none of them makes a Streamlit cache)."""


def run() -> None:
    """Streamlit's `main`, its page-folder discovery off (it reads `sys.argv` itself)."""
    # A class attribute read once per process; `st.navigation` sets the same value on its
    # first call. Checked by tests/dashboard/test_browser_links.py on a fresh server.
    PagesManager.uses_pages_directory = False
    nested_paths.install()  # `/a/b` reaches the app's pt-BR "not found" page
    for name in PRELOAD:
        importlib.import_module(name)
    main(prog_name="streamlit")


if __name__ == "__main__":
    run()
