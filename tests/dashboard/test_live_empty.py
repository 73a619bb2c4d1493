"""An "Ao vivo" page whose feed answers without any vehicle says why, and where the feed is."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

APP = str(Path(__file__).resolve().parents[2] / "dashboard" / "app.py")


@pytest.fixture
def empty_feed() -> Iterator[str]:
    """A feed server that answers every feed with a header and no entity (nobody publishes)."""

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            body = json.dumps(
                {"header": {"gtfsRealtimeVersion": "2.0", "timestamp": "1772539200"}}
            ).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()


def test_an_empty_live_page_says_why(
    dashboard_store: Path, empty_feed: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PONTUAL_STORE", str(dashboard_store))
    monkeypatch.setenv("PONTUAL_LIVE_URL", empty_feed)
    at = AppTest.from_file(APP, default_timeout=60)
    at.run()
    at.switch_page("pages/live.py").run()
    assert not at.exception, [e.value for e in at.exception]
    notice = at.info[0].value
    assert "Nenhum veículo recebido nos últimos 10 min" in notice
    assert f"o feed está em {empty_feed}" in notice
