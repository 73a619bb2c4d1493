"""Nested unknown addresses (`/a/b`, `/linhas/x`) reach the app, so that it answers them with
its pt-BR "página não encontrada" page as it does a one-segment one (issue 20).

Streamlit answers any address that is no file with its `index.html` (a single-page app), whose
scripts and styles are relative (`./static/js/...`). Under `/a/b` they resolve to
`/a/static/js/...`, which is no file either: the browser gets the HTML again where it expected
a script, and the page stays blank, never reaching the app. `install()` makes that answer,
for an address of two segments or more, the same `index.html` with a `<base href>` at the
server's root (its `server.baseUrlPath`) and that root as the address of the app's server, so
that the scripts load and the page connects to its server there; the browser keeps the
address, and the app reads the page name `a/b` from it (`dashboard.not_found`). Every other
answer is Streamlit's own.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

from starlette.responses import FileResponse, HTMLResponse, Response
from starlette.staticfiles import StaticFiles
from streamlit.web.server.starlette import starlette_static_routes

_INSTALLED = "_pontual_nested_paths"


def to_based_index(index_html: str, base_url: str) -> str:
    """Streamlit's `index.html` rooted at the server's root (`base_url`: its
    `server.baseUrlPath`, '' for none): a `<base href>` there for the scripts and styles, and
    the same root as the app's server address (`window.__streamlit.BACKEND_BASE_URL`, which
    Streamlit's page reads; it would look for its server at `/a/b` and `/a` only)."""
    base = "/" + "".join(f"{part}/" for part in base_url.strip("/").split("/") if part)
    head = (
        f'<head>\n    <base href="{base}" />\n'
        "    <script>window.__streamlit = {BACKEND_BASE_URL: document.baseURI}</script>"
    )
    return index_html.replace("<head>", head, 1)


# The front end's chart code comes in chunks loaded on a chart's first use; after a page opened
# by its address, the first click to a page with a map or a chart waited for them (~0.4 s of a
# 0.5 s budget on Linhas). The index imports them once the browser is idle (ADR 0108).
WARM_CHUNKS = ("DeckGlJsonChart.", "ArrowVegaLiteChart.", "loadVegaEmbed.", "embed.")


def to_warming_index(index_html: str, chunks: list[str]) -> str:
    """Streamlit's `index.html` with a script that imports the front end's chart `chunks`
    (their paths under the page's base) when the browser is first idle; a failed import
    changes nothing (the chart loads it again on first use)."""
    if not chunks:
        return index_html
    names = ", ".join(f'"./static/js/{c}"' for c in chunks)
    script = (
        '<script type="module">const warm = () => { for (const c of ['
        + names
        + "]) import(new URL(c, document.baseURI).href).catch(() => {}); };"
        " (window.requestIdleCallback || ((f) => setTimeout(f, 1000)))(warm, { timeout: 3000 });"
        "</script>"
    )
    return index_html.replace("</body>", script + "</body>", 1)


def find_warm_chunks(directory: str | Path) -> list[str]:
    """The file names of the chart chunks (`WARM_CHUNKS`) in Streamlit's static folder."""
    folder = Path(directory) / "static" / "js"
    return sorted(
        f.name
        for f in folder.glob("*.js")
        if any(f.name.startswith(prefix) for prefix in WARM_CHUNKS)
    )


def _with_nested_paths(create: Any) -> Any:
    @functools.wraps(create)
    def create_handler(directory: str, base_url: str | None) -> StaticFiles:
        handler: StaticFiles = create(directory, base_url)
        index = Path(directory) / "index.html"
        warming = functools.cache(
            lambda: to_warming_index(index.read_text(encoding="utf-8"), find_warm_chunks(directory))
        )
        answer = functools.cache(lambda: to_based_index(warming(), base_url or ""))
        own = handler.get_response

        async def get_response(path: str, scope: Any) -> Response:
            response = await own(path, scope)
            if isinstance(response, FileResponse) and Path(response.path) == index:
                nested = "/" in path.replace("\\", "/").strip("/")
                html = answer() if nested else warming()
                return HTMLResponse(html, headers={"Cache-Control": "no-cache"})
            return response

        handler.get_response = get_response  # type: ignore[method-assign]
        return handler

    setattr(create_handler, _INSTALLED, True)
    return create_handler


def install() -> None:
    """Make Streamlit's server answer a nested unknown address with its app (call once,
    before the server starts; a second call changes nothing)."""
    create = starlette_static_routes.create_streamlit_static_handler
    if not getattr(create, _INSTALLED, False):
        starlette_static_routes.create_streamlit_static_handler = _with_nested_paths(create)
