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
import logging
import math
import os
import sys
import threading
import time
import urllib.request
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from streamlit import delta_generator
from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from streamlit.runtime.pages_manager import PagesManager
from streamlit.web.cli import main
from websockets.sync.client import connect
from websockets.typing import Subprotocol

from core.errors import PontualError
from core.profile import load_profile
from dashboard import nested_paths
from dashboard.queries.snapshot import read_snapshot_mtime

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

PREWARM_ENV = "PONTUAL_DASHBOARD_PREWARM"
"""'0' turns the warm-up session off (`prewarm`), at start and at each new snapshot."""
SNAPSHOT_POLL_ENV = "PONTUAL_DASHBOARD_SNAPSHOT_POLL_S"
"""Seconds between two looks at the snapshot (`keep_warm`) instead of `SNAPSHOT_POLL_S` (a
value that is no positive finite number is ignored)."""
SNAPSHOT_POLL_S = 10.0
"""How often the warm-up thread looks whether a new snapshot was published: one `stat` of the
snapshot's file (a lake: of its folders). A publication is warmed between one and two of these
after it ends (`keep_warm`); a visitor who comes sooner reads it, as without the warm-up."""
VISITOR_POLL_S = 0.1
"""How often the warm-up looks whether a visitor's run has ended before its next page."""


def run() -> None:
    """Streamlit's `main`, its page-folder discovery off (it reads `sys.argv` itself), the
    process warmed (`warm`) and, once the server answers, every page run once (`prewarm`),
    and again after each new snapshot (`keep_warm`)."""
    # A class attribute read once per process; `st.navigation` sets the same value on its
    # first call. Checked by tests/dashboard/test_browser_links.py on a fresh server.
    PagesManager.uses_pages_directory = False
    nested_paths.install()  # `/a/b` reaches the app's pt-BR "not found" page
    quiet_streamlit()
    warm()
    if os.environ.get(PREWARM_ENV, "1") != "0":
        threading.Thread(target=keep_warm, args=(sys.argv,), name="prewarm", daemon=True).start()
    main(prog_name="streamlit")


STREAMLIT_LINES = ("Stopping...", "Uvicorn server started on")
"""Streamlit's own English terminal lines that `quiet_streamlit` drops (prefixes)."""


class _DropStreamlitLines(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        return not str(record.msg).startswith(STREAMLIT_LINES)


def quiet_streamlit() -> None:
    """Keep Streamlit's own English lines off the terminal ("You can now view your Streamlit
    app in your browser", its URLs, "Uvicorn server started on …", "Stopping..."): `pontual
    dashboard` and `pontual demo` say where the dashboard is and that it stops, in pt-BR from
    the catalogue (issue 20). Warnings and errors still print."""
    from streamlit import cli_util
    from streamlit.web import bootstrap

    bootstrap._print_url = lambda is_running_hello: None
    print_to_cli = cli_util.print_to_cli

    def print_unless_ours(message: str, **kwargs: Any) -> None:
        if not message.strip().startswith(STREAMLIT_LINES):
            print_to_cli(message, **kwargs)

    cli_util.print_to_cli = print_unless_ours
    logging.getLogger("streamlit.web.server.starlette.starlette_server").addFilter(
        _DropStreamlitLines()
    )


def keep_warm(argv: Sequence[str]) -> None:
    """Warm the server of command line `argv` once it answers (`prewarm`), then again each
    time a new snapshot is published, for the process' life: the pages' reads are cached under
    the snapshot's modification time (`dashboard.state`), so after a publication every page's
    first view would read again. Looks every `SNAPSHOT_POLL_S` seconds and warms a snapshot
    once: when its time differs from the one last warmed and has not moved since the look
    before (a lake's partitions are written one by one: its time settles when the job ends).
    The time is read before the warm-up, so a publication during one is warmed by the next
    (its pages already read are cache hits). The warm-up waits for visitors' runs before each
    page, as at start (ADR 0108)."""
    from core.settings import Settings

    try:
        settings = Settings.resolve()
        source = str(settings.lake_path or settings.store_path)
    except PontualError:  # the pages report a bad setting; warm once, watch nothing
        prewarm(argv)
        return
    poll_s = _poll_seconds()
    warmed: float | None = None
    seen: float | None = None
    while True:
        try:
            now = read_snapshot_mtime(source)
        except OSError:  # a lake folder replaced while listed: look again next time
            now = seen if seen is not None else 0.0
        if warmed is None or (now != warmed and now == seen):
            prewarm(argv)
            warmed = now
        seen = now
        time.sleep(poll_s)


def _poll_seconds() -> float:
    """`SNAPSHOT_POLL_ENV`'s seconds when it holds a positive number, else `SNAPSHOT_POLL_S`."""
    try:
        seconds = float(os.environ.get(SNAPSHOT_POLL_ENV) or SNAPSHOT_POLL_S)
    except ValueError:
        return SNAPSHOT_POLL_S
    return seconds if 0 < seconds < math.inf else SNAPSHOT_POLL_S


def _option(argv: Sequence[str], name: str, default: str) -> str:
    """The value of Streamlit option `name` ('--server.port') on a command line."""
    for i, arg in enumerate(argv):
        if arg == name and i + 1 < len(argv):
            return argv[i + 1]
        if arg.startswith(name + "="):
            return arg.split("=", 1)[1]
    return default


def prewarm(argv: Sequence[str], timeout_s: float = 300.0) -> dict[str, str | None]:
    """Once the server of command line `argv` answers, open one session on it, as a browser
    does (the websocket), and run each page of the planners' dashboard in turn with the
    default filters, the first page first (the public app: its page): the snapshot is open,
    the scripts compiled and the default selection's reads cached before anyone asks (ADR
    0108). It runs a page only while no visitor's script runs (both would share the
    interpreter's lock). Without a login (a dashboard on the loopback) that is every page's
    data; behind a login, only the login page runs. Best effort: a failure leaves the caches cold, no more.
    Returns the URL path of each page run and the title it drew (None: none)."""
    from dashboard.pages import PAGES

    host = _option(argv, "--server.address", "127.0.0.1")
    host = "127.0.0.1" if host in ("", "0.0.0.0") else host  # a listen-all address
    base = f"{host}:{_option(argv, '--server.port', '8501')}"
    app = Path(argv[argv.index("run") + 1]) if "run" in argv[:-1] else None
    paths = [slug for _p, _t, slug, _i in PAGES] if app and app.name == "app.py" else [""]
    paths[0] = ""  # the first page is served at the root
    done: dict[str, str | None] = {}
    deadline = time.monotonic() + timeout_s
    try:
        while not _healthy(f"http://{base}"):
            if time.monotonic() > deadline:
                return done
            time.sleep(0.2)
        with connect(
            f"ws://{base}/_stcore/stream",
            subprotocols=[Subprotocol("streamlit")],
            max_size=None,
            open_timeout=30,
        ) as session:
            for path in paths:
                while _visitor_running() and time.monotonic() < deadline:
                    time.sleep(VISITOR_POLL_S)  # a visitor's run first: they share one GIL
                request = BackMsg()
                request.rerun_script.page_name = path
                request.rerun_script.query_string = ""
                session.send(request.SerializeToString())
                reply, title = ForwardMsg(), None
                while reply.WhichOneof("type") != "script_finished":
                    reply.ParseFromString(
                        session.recv(timeout=max(1.0, deadline - time.monotonic()))
                    )
                    heading = reply.delta.new_element.heading
                    if title is None and heading.tag == "h1":
                        title = heading.body
                done[path] = title
    except Exception:  # best effort: a failed warm-up leaves the caches cold
        logging.getLogger(__name__).debug("dashboard warm-up stopped", exc_info=True)
    return done


def _visitor_running() -> bool:
    """Whether a session's script is running: a visitor's, when the warm-up asks between two
    of its own runs. Streamlit's session manager and a session's state are private: if they
    change, the warm-up stops waiting for visitors, no more."""
    try:
        from streamlit.runtime import Runtime
        from streamlit.runtime.app_session import AppSessionState

        sessions = Runtime.instance()._session_mgr.list_active_sessions()
        return any(info.session._state == AppSessionState.APP_IS_RUNNING for info in sessions)
    except Exception:  # no runtime in this process, or another Streamlit
        return False


def _healthy(url: str) -> bool:
    try:
        with urllib.request.urlopen(f"{url}/_stcore/health", timeout=1) as reply:
            return bool(reply.status == 200)
    except (OSError, ValueError):
        return False


def warm() -> None:
    """What the first script run of a fresh process would otherwise do for its visitor
    (ADR 0108): import the pages' modules, read the text catalogue and the regulation
    profile, and skip Streamlit's once-per-process check of the first drawn element for a
    Python prompt (`inspect.stack()`, 0.3-0.9 s with these modules loaded; this process is
    `streamlit run`). Then everything so far is frozen out of the garbage collector's sight:
    Streamlit collects after every script run (`runner.postScriptGC`), and walking the
    libraries' 200 000 objects took 0.35 s of every page view."""
    from core.settings import Settings
    from core.texts import catalogue, language

    for name in PRELOAD:
        importlib.import_module(name)
    if language() != "en":
        catalogue(language())  # cached by its argument, as `gettext` passes it
    with contextlib.suppress(PontualError):  # a bad profile is the page's to report
        load_profile(Settings.resolve().profile_id)
    delta_generator._use_warning_has_been_displayed = True
    gc.freeze()


if __name__ == "__main__":
    run()
