"""The answer to a nested unknown address (dashboard.nested_paths); the browser test of what it
shows is tests/dashboard/test_browser_links.py."""

from __future__ import annotations

from streamlit.web.server.starlette import starlette_static_routes

from dashboard import nested_paths
from dashboard.nested_paths import to_based_index

INDEX = '<!DOCTYPE html>\n<html lang="en">\n  <head>\n    <script src="./static/js/i.js"></script>'


def test_the_index_is_rooted_at_the_servers_base_path() -> None:
    root = to_based_index(INDEX, "")
    assert root.startswith('<!DOCTYPE html>\n<html lang="en">\n  <head>\n    <base href="/" />')
    assert "window.__streamlit = {BACKEND_BASE_URL: document.baseURI}" in root
    assert root.endswith('<script src="./static/js/i.js"></script>')  # the rest as it was
    assert '<base href="/painel/sul/" />' in to_based_index(INDEX, "/painel/sul/")


def test_install_wraps_streamlits_static_handler_once() -> None:
    nested_paths.install()
    wrapped = starlette_static_routes.create_streamlit_static_handler
    nested_paths.install()
    assert starlette_static_routes.create_streamlit_static_handler is wrapped
    assert getattr(wrapped, "_pontual_nested_paths", False)


def test_the_index_imports_the_chart_chunks_when_idle() -> None:
    # Streamlit's own chart chunks: a release that renames them fails here, not silently slower
    import os

    import streamlit

    from dashboard.nested_paths import WARM_CHUNKS, find_warm_chunks, to_warming_index

    static = os.path.join(os.path.dirname(streamlit.__file__), "static")
    chunks = find_warm_chunks(static)
    assert sorted({c.split(".")[0] + "." for c in chunks}) == sorted(WARM_CHUNKS)
    page = INDEX + "\n  </head>\n  <body></body>\n</html>"
    warmed = to_warming_index(page, chunks)
    assert warmed.startswith(page.split("</body>")[0])
    assert warmed.endswith("</script></body>\n</html>")
    assert all(f'"./static/js/{c}"' in warmed for c in chunks)
    assert "requestIdleCallback" in warmed and ".catch(() => {})" in warmed
    assert to_warming_index(page, []) == page
