"""`python -m dashboard.launch run APP ...`: Streamlit's own command line, with the page-folder
discovery of its first multipage API switched off before the server starts (ADR 0105).

Both apps (`dashboard/app.py`, `dashboard/public_app.py`) sit beside a `pages/` folder and
build their page list with `st.navigation`. Streamlit only learns that from the first
`st.navigation` call: until then a fresh server process treats `pages/` as its old-style page
folder, so the very first script run of the process lists the page files by file name. A cold
deep link (`/linhas`) then matched no page and drew Streamlit's English "Page not found"
dialog, and a path named after a page file (`/lines`) would run that planners' page script in
the public app. With the discovery off, the first run is like every other one.

The modules every page imports (Polars, DuckDB, Altair, pydeck, Babel, pandas, the page
queries) are imported here, before the server answers its health check, with the other
once-per-process work of a first script run (`warm`): Streamlit imports an app's modules only
on its first script run, so the first visitor of a fresh server waited for them (several
seconds on a busy machine, the bulk of the cold first page; issue 20). Not `dashboard.state`
nor `dashboard.auth_ui`: their Streamlit caches must be made once the runtime exists.
"""

from __future__ import annotations

import contextlib
import gc
import importlib

from streamlit import delta_generator
from streamlit.runtime.pages_manager import PagesManager
from streamlit.web.cli import main

from core.errors import PontualError
from core.profile import load_profile

PRELOAD = (
    "polars",
    "duckdb",
    "altair",
    "pydeck",
    "babel.dates",
    # what Streamlit imports only when a page first draws a table, a metric or an icon
    "pandas",
    "pyarrow.compute",
    "streamlit.emojis",
    "streamlit.material_icon_names",
    "requests",  # the live page's feed check
    "analytics.live.options",
    "core.store",
    "core.profile",
    "cases.audit",
    "cases.accounts",
    "dashboard.auth",
    "dashboard.charts",
    "dashboard.downloads",
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
    warm()
    main(prog_name="streamlit")


def warm() -> None:
    """What the first script run of a fresh process would otherwise do for its visitor
    (ADR 0108): import the pages' modules, read the text catalogue and the regulation
    profile, and skip Streamlit's once-per-process check of the first drawn element for a
    Python prompt (`inspect.stack()`, 0.3-0.9 s with these modules loaded; this process is
    `streamlit run`). Then everything so far is frozen out of the garbage collector's sight:
    Streamlit collects after every script run (`runner.postScriptGC`), and walking the
    libraries' 200 000 objects took 0.35 s of every page view."""
    from core.settings import Settings
    from core.texts import catalogue

    for name in PRELOAD:
        importlib.import_module(name)
    catalogue()  # pt-BR, the default
    with contextlib.suppress(PontualError):  # a bad profile is the page's to report
        load_profile(Settings.resolve().profile_id)
    delta_generator._use_warning_has_been_displayed = True
    gc.freeze()


if __name__ == "__main__":
    run()
