"""The passenger's stop page end to end: a simulated morning published through a real
Mosquitto into `pontual serve`; the JSON API and the HTML page `/paradas/<stop_id>` give the
same next arrival, and a headless Chromium at a phone's viewport shows it in pt-BR, counting
down, without English words (the dashboard's deny-list) and without a horizontal scroll; a
screenshot is saved under test-output/passenger/. The dashboard's Ao vivo page on that server
shows the busiest stop's arrivals and links to its passenger page."""

from __future__ import annotations

import html
import json
import re
import time
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path

import httpx
import pytest

from core.pt_br import to_time_of_day
from dashboard.browser import Browser
from dashboard.server import start_server, wait_until_ready
from tests.analytics.live.simulated import SimulatedStore, build_simulated_store
from tests.dashboard.conftest import dashboard_store  # noqa: F401 (a fixture used below)
from tests.dashboard.test_browser import _require_chromium, check_pt_br
from tests.mosquitto import Broker, Publisher, free_port, require_mosquitto
from tests.pontual.test_serve import (
    SLICES,
    _busiest_next_stop,
    _wait_health,
    _wait_version,
    start_serve,
)

ROOT = Path(__file__).resolve().parents[2]
SCREENSHOTS = ROOT / "test-output" / "passenger"
PHONE = {"width": 390, "height": 844}  # a common phone's CSS viewport
ZONE = "America/Sao_Paulo"  # the simulated city's profile zone


@pytest.fixture(scope="module")
def simulated(tmp_path_factory: pytest.TempPathFactory) -> SimulatedStore:
    return build_simulated_store(tmp_path_factory.mktemp("stop-page"))


@pytest.fixture(scope="module")
def served(
    simulated: SimulatedStore, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[str, str]]:
    """`pontual serve` fed with the morning's first 40 minutes; (its URL, the busiest stop)."""
    require_mosquitto()
    _require_chromium()
    with Broker(tmp_path_factory.mktemp("broker"), operators=("O1", "O2")) as broker:
        http_port = free_port()
        proc = start_serve(simulated.store_path, broker, http_port, max_runtime_s=300)
        base = f"http://127.0.0.1:{http_port}"
        publishers = {
            op: Publisher(broker.port, op, broker.passwords[op], f"sim-{op}") for op in ("O1", "O2")
        }
        try:
            _wait_health(base, proc)
            with httpx.Client(base_url=base, timeout=10.0) as client:
                version = 0
                for start, end in SLICES[:4]:
                    messages = simulated.messages(start, end)
                    for op, pub in publishers.items():
                        mine = [m for m in messages if m[0].split("/")[2] == op]
                        assert all(code == 0 for code in pub.send(mine))
                    version = _wait_version(client, version)["version"]
                # the last refresh done: the view no longer moves
                time.sleep(2)
                stop_id = _busiest_next_stop(client.get("/gtfs-rt/trip-updates.pb").content)
            yield base, stop_id
        finally:
            for pub in publishers.values():
                pub.close()
            proc.terminate()
            out = proc.communicate(timeout=60)[0].decode()
        assert proc.returncode == 0, out
        assert "/paradas" in out  # the startup line names the passengers' page


def _page_text(page: str) -> str:
    body = re.sub(r"<script>.*?</script>|<style>.*?</style>|<[^>]+>", " ", page, flags=re.S)
    return re.sub(r"\s+", " ", html.unescape(body))


def test_the_stop_page_shows_the_apis_next_arrival_and_counts_down(
    served: tuple[str, str],
) -> None:
    base, stop_id = served
    with httpx.Client(base_url=base, timeout=10.0) as client:
        api = client.get(f"/api/stops/{stop_id}/arrivals", params={"limit": 12}).json()
        page = client.get(f"/paradas/{stop_id}")
        assert client.get("/paradas/NOPE").status_code == 404
        search = client.get("/paradas", params={"q": api["stop_name"]}).text
    assert page.status_code == 200
    assert f'href="/paradas/{stop_id}"' in search
    first = api["arrivals"][0]
    assert first["status"] == "previsto" and first["route_short_name"], first
    text = _page_text(page.text)
    # the same next arrival: its line, its headsign, its local time, its minutes to go
    predicted = to_time_of_day(datetime.fromisoformat(first["predicted_arrival"]), ZONE)
    eta = "chegando" if first["seconds"] < 60 else f"em {first['seconds'] // 60} min"
    line = f"{first['route_short_name']} {first['headsign'] or first['route_id']} previsto"
    assert line in text, (line, text[:800])
    assert f"previsto {predicted}" in text and eta in text, (predicted, eta, text[:800])
    assert re.findall(r'data-s="(-?\d+)"', page.text)[0] == str(first["seconds"])

    with Browser(**PHONE) as browser:
        browser.send(
            "Emulation.setDeviceMetricsOverride", deviceScaleFactor=2, mobile=True, **PHONE
        )
        browser.send("Page.navigate", url=f"{base}/paradas/{stop_id}")
        deadline = time.monotonic() + 20
        while browser.evaluate("document.readyState") != "complete":
            assert time.monotonic() < deadline, "the stop page did not load"
            time.sleep(0.1)
        time.sleep(1.5)  # one tick of the countdown
        lefts = [json.loads(browser.evaluate(LEFT_JS))]
        time.sleep(3)
        lefts.append(json.loads(browser.evaluate(LEFT_JS)))
        browser.screenshot(SCREENSHOTS / "stop.png")
        shown = check_pt_br(browser, "paradas")
        assert api["stop_name"] in shown
        assert browser.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
        browser.send("Page.navigate", url=f"{base}/paradas/NOPE")
        time.sleep(1)
        assert "Parada não encontrada" in check_pt_br(browser, "404")
    # each arrival's seconds to go went down by the seconds between the two looks (the feed's
    # clock stood still: the script keeps counting from the page's reading)
    first_left, later_left = lefts[0][0], lefts[1][0]
    assert 2 <= first_left - later_left <= 5, lefts
    assert first_left <= first["seconds"]
    assert (SCREENSHOTS / "stop.png").stat().st_size > 10_000


LEFT_JS = (
    "JSON.stringify([...document.querySelectorAll('#arrivals li[data-left]')]"
    ".map(li => Number(li.getAttribute('data-left'))))"
)


def test_the_live_page_shows_a_stops_arrivals_and_links_to_its_page(
    served: tuple[str, str],
    dashboard_store: Path,  # noqa: F811
    tmp_path: Path,
) -> None:
    base, _stop_id = served
    with httpx.Client(base_url=base, timeout=10.0) as client:
        stops = client.get("/api/stops").json()["stops"]
    busiest = max(stops, key=lambda s: s["n_arrivals"])  # the first of the most served
    port = free_port()
    process = start_server(
        dashboard_store,
        port,
        "127.0.0.1",
        log=tmp_path / "streamlit.log",
        env={"PONTUAL_LIVE_URL": base},
    )
    try:
        url = f"http://127.0.0.1:{port}"
        wait_until_ready(url, 60, process)
        with Browser(height=2400) as browser:
            state = browser.open(f"{url}/ao-vivo", timeout_s=60)
            assert not state["exceptions"] and not state["errors"], state
            deadline = time.monotonic() + 30
            tables = "document.querySelectorAll('[data-testid=stDataFrame]').length"
            while browser.evaluate(tables) < 2:  # the vehicles, then the stop's arrivals
                assert time.monotonic() < deadline, "no arrivals table on the Ao vivo page"
                time.sleep(0.2)
            browser.screenshot(SCREENSHOTS / "ao-vivo.png")
            text = check_pt_br(browser, "ao-vivo")
            assert "Próximas chegadas a uma parada" in text, text[-1500:]
            cells = browser.evaluate(
                "[...document.querySelectorAll('[data-testid=stDataFrame]')][1]"
                ".querySelectorAll('table td').length"
            )
            assert cells >= 7, cells  # at least one arrival's row
            link = browser.evaluate(
                "[...document.querySelectorAll('a')].map(a => a.href)"
                ".find(h => h.includes('/paradas/'))"
            )
            assert link == f"{base}/paradas/{busiest['stop_id']}"
    finally:
        process.terminate()
        process.wait(timeout=10)
