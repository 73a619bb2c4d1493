"""The street basemap in a real headless Chromium (ADR 0105), never downloading a tile: the
tile URL of the settings points at a tiny local tile server (one generated magenta PNG for
every tile), and the map must ask it for the tiles around the content and draw them under the
lines; with the URL pointing at nothing (offline), the page still draws its layers, with no
error. Screenshots in test-output/dashboard/maps/."""

from __future__ import annotations

import io
import math
import re
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from core.settings import MAP_TILES_ENV
from dashboard.browser import Browser
from dashboard.server import free_port, start_server, wait_until_ready
from tests.dashboard.test_browser import ROOT, _require_chromium

pytestmark = pytest.mark.browser

SCREENSHOTS = ROOT / "test-output" / "dashboard" / "maps"
TIMEOUT_S = 60.0
MAGENTA = (255, 0, 255)
TILE = re.compile(r"/(\d+)/(\d+)/(\d+)\.png")
# The fixture's itinerary (SH1, lines L1 and L2) runs from (-29.17, -51.52) to (-29.15, -51.50).
MIDDLE = (-29.16, -51.51)


class TileServer:
    """Answers every /z/x/y.png with the same magenta tile, and remembers what was asked."""

    def __init__(self) -> None:
        buffer = io.BytesIO()
        Image.new("RGB", (256, 256), MAGENTA).save(buffer, "PNG")
        png = buffer.getvalue()
        self.asked: list[str] = []
        asked = self.asked

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                asked.append(self.path)
                self.send_response(200)
                self.send_header("Content-Type", "image/png")
                self.send_header("Access-Control-Allow-Origin", "*")
                self.end_headers()
                self.wfile.write(png)

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/{{z}}/{{x}}/{{y}}.png"


def _serve(store: Path, log: Path, tiles_url: str) -> Iterator[str]:
    _require_chromium()
    port = free_port()
    env = {MAP_TILES_ENV: tiles_url, "PONTUAL_LIVE_URL": f"http://127.0.0.1:{free_port()}"}
    process = start_server(store, port, "127.0.0.1", log=log, env=env)
    try:
        url = f"http://127.0.0.1:{port}"
        wait_until_ready(url, 60, process)
        yield url
    finally:
        process.terminate()
        process.wait(timeout=10)


@pytest.fixture(scope="module")
def tiles() -> Iterator[TileServer]:
    server = TileServer()
    yield server
    server.server.shutdown()


@pytest.fixture(scope="module")
def with_tiles(
    dashboard_store: Path, tiles: TileServer, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[str]:
    log = tmp_path_factory.mktemp("maps") / "streamlit.log"
    yield from _serve(dashboard_store, log, tiles.url)


@pytest.fixture(scope="module")
def offline(dashboard_store: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    # A port nobody listens on: every tile request fails at once, as with no network.
    log = tmp_path_factory.mktemp("maps-offline") / "streamlit.log"
    yield from _serve(dashboard_store, log, f"http://127.0.0.1:{free_port()}/{{z}}/{{x}}/{{y}}.png")


def _tile_of(lat: float, lon: float, z: int) -> tuple[int, int]:
    """The slippy-map tile (x, y) holding a point at zoom z."""
    n = 2**z
    y = (1 - math.asinh(math.tan(math.radians(lat))) / math.pi) / 2 * n
    return int((lon + 180) / 360 * n), int(y)


def _map_pixels(browser: Browser, path: Path) -> Image.Image:
    """A screenshot of the page's first map (its deck.gl canvas' box)."""
    box = browser.evaluate(
        "(() => { const r = document.querySelector('[data-testid=\"stDeckGlJsonChart\"]')"
        ".getBoundingClientRect(); return [r.left, r.top + window.scrollY, r.width, r.height]; })()"
    )
    image = Image.open(browser.screenshot(path)).convert("RGB")
    left, top, width, height = (int(v) for v in box)
    return image.crop((left, top, left + width, top + height))


def _rgb(image: Image.Image) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    pixels = np.asarray(image, dtype=np.int32)
    return pixels[..., 0], pixels[..., 1], pixels[..., 2]


def _magenta(image: Image.Image) -> int:
    r, g, b = _rgb(image)
    return int(((r == 255) & (g == 0) & (b == 255)).sum())


def _green(image: Image.Image) -> int:
    """Pixels of the network map's 'on time' green (L2: 100 %), blended or not."""
    r, g, b = _rgb(image)
    return int(((g > r + 50) & (g > b + 50)).sum())


def _coloured(image: Image.Image) -> int:
    """Pixels that are not white, grey or black: something was drawn there."""
    pixels = np.asarray(image, dtype=np.int32)
    return int((pixels.max(axis=2) - pixels.min(axis=2) > 40).sum())


def _wait_for(condition: object, timeout_s: float = 30.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition() and time.monotonic() < deadline:  # type: ignore[operator]
        time.sleep(0.2)


def test_the_basemap_loads_the_settings_tiles_around_the_content(
    with_tiles: str, tiles: TileServer
) -> None:
    with Browser(height=1600) as browser:
        state = browser.open(f"{with_tiles}/linhas", timeout_s=TIMEOUT_S)
        assert state["title"] == "Linhas", state
        assert not state["exceptions"] and not state["errors"], state
        _wait_for(lambda: len(tiles.asked) >= 4)
        asked = [TILE.fullmatch(p) for p in tiles.asked]
        assert asked and all(asked), tiles.asked
        zooms = {int(m.group(1)) for m in asked if m}
        # the view is fitted to the 0,02° itinerary: street-level tiles, and the one under
        # its middle among them
        assert min(zooms) >= 13, zooms
        z = max(zooms)
        wanted = _tile_of(*MIDDLE, z)
        assert any((int(m.group(2)), int(m.group(3))) == wanted for m in asked if m), (
            wanted,
            tiles.asked,
        )
        time.sleep(1.0)  # the tiles decoded and drawn
        shot = _map_pixels(browser, SCREENSHOTS / "linhas-com-mapa.png")
        assert _magenta(shot) > shot.width * shot.height // 4  # the streets
        assert _green(shot) > 100  # the line, over the tiles
        text = browser.evaluate("document.body.innerText")
        assert "© colaboradores do OpenStreetMap" in text


@pytest.mark.parametrize(
    ("path", "title"), [("linhas", "Linhas"), ("ao-vivo", "Ao vivo"), ("viagem", "Viagem")]
)
def test_maps_draw_their_layers_without_tiles(offline: str, path: str, title: str) -> None:
    with Browser(height=2400) as browser:
        state = browser.open(f"{offline}/{path}", timeout_s=TIMEOUT_S)
        assert state["title"] == title, state
        assert not state["exceptions"], state
        assert not state["errors"], state
        assert not state["dialogs"], state
        time.sleep(1.0)
        shot = _map_pixels(browser, SCREENSHOTS / f"{path}-sem-mapa.png")
        assert _magenta(shot) == 0
        drawn = _coloured(shot)  # the content, on a blank background
        assert drawn > 100, (path, drawn)
