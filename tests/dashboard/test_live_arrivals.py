"""The Ao vivo page's stop arrivals on the real feed server (`pontual.feed_server.build_app`,
served by uvicorn over HTTP) with the hand-built live view of tests/pontual/test_serve_app:
the picker starts on the stop with the most predicted arrivals, the table shows what the
stop API says (line number, headsign, "em N min", local times, the cancelled trip), and the
link opens that stop's passenger page."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import polars as pl
import pytest
import uvicorn
from streamlit.testing.v1 import AppTest

from dashboard.queries.live import build_stop_arrivals, read_live_stops, read_stop_arrivals
from dashboard.server import free_port
from tests.pontual.test_serve_app import Source, _reference, _view
from tests.pontual.test_stop_page import passenger_app

APP = str(Path(__file__).resolve().parents[2] / "dashboard" / "app.py")


@pytest.fixture(scope="module")
def feed_url() -> Iterator[str]:
    app = passenger_app(Source(_view(), _reference()))
    port = free_port()
    server = uvicorn.Server(
        uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", lifespan="off")
    )
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 20
    while not server.started:
        assert time.monotonic() < deadline, "uvicorn did not start"
        time.sleep(0.05)
    try:
        yield url
    finally:
        server.should_exit = True
        thread.join(timeout=10)


def test_the_stop_api_as_frames(feed_url: str) -> None:
    stops = read_live_stops(feed_url, 5.0)
    assert stops is not None
    # by name: Centro, Planalto, Rua A; S2 and S3 each have V1's prediction to come
    assert stops.select("stop_id", "n_arrivals").rows() == [("S1", 0), ("S3", 1), ("S2", 1)]
    body = read_stop_arrivals(feed_url, "S2", 5.0)
    assert body is not None
    arrivals = build_stop_arrivals(body)
    assert arrivals.select("route_short_name", "headsign", "seconds", "status").rows() == [
        ("10", "Praça da Bandeira", 120, "previsto"),
        ("10", "Praça da Bandeira", 500, "cancelado"),
    ]
    assert arrivals["delay_s"].to_list() == [60.0, None]
    assert read_stop_arrivals(feed_url, "NOPE", 5.0) is None
    assert read_live_stops("http://127.0.0.1:9", 0.5) is None  # nobody there


def test_live_page_counts_down_a_stops_arrivals(
    dashboard_store: Path, feed_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PONTUAL_STORE", str(dashboard_store))
    monkeypatch.setenv("PONTUAL_LIVE_URL", feed_url)
    at = AppTest.from_file(APP, default_timeout=60)
    at.run()
    at.switch_page("pages/live.py").run()
    assert not at.exception, [e.value for e in at.exception]
    picker = at.selectbox(key="live_stop")
    # the first stop (by name) with the most predicted arrivals to come
    assert (picker.value, picker.format_func(picker.value)) == ("S3", "Planalto (300)")
    picker.set_value("S2").run()
    assert not at.exception, [e.value for e in at.exception]
    table = pl.from_pandas(at.dataframe[1].value)
    assert table.rows() == [
        ("10", "Praça da Bandeira", "em 2 min", "11:02:00", "11:01:00", "+1 min 00 s", "V1"),
        ("10", "Praça da Bandeira", "cancelada", "—", "11:08:20", "—", "—"),
    ]
    assert table.columns[:3] == ["Linha", "Destino", "Chega"]
    link = next(e for e in at.main if e.type == "link_button")
    assert link.proto.url == f"{feed_url}/paradas/S2"
    page = httpx.get(link.proto.url)
    assert page.status_code == 200 and "Rua A" in page.text
    assert any("atualizadas a cada 5 s" in c.value for c in at.caption), [
        c.value for c in at.caption
    ]
