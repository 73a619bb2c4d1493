"""A headless Chromium driven over the DevTools protocol (CDP), for the browser test and the
page-load benchmark. A tiny client over `websockets` (a Streamlit dependency): no Playwright,
no browser download; Debian's `chromium` is started with no sandbox, no GPU and no background
networking.
"""

from __future__ import annotations

import base64
import contextlib
import itertools
import json
import os
import signal
import subprocess
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

from websockets.sync.client import ClientConnection, connect

from core.errors import PontualError

CHROMIUM = "/usr/bin/chromium"

# What the page looks like once Streamlit has finished a run: the app is mounted, the page
# title (h1) is drawn, and the "running" status icon is gone.
PAGE_STATE_JS = """
(() => {
  const app = document.querySelector('[data-testid="stApp"]');
  const main = document.querySelector('[data-testid="stMain"]') || app;
  const h1 = main ? main.querySelector('h1') : null;
  // While a script runs, the status widget shows its running icon (labelled only through
  // aria-label, so innerText is empty) and the toolbar a Stop button.
  const running = !!document.querySelector('[data-testid="stStatusWidgetRunningIcon"]');
  const skeleton = document.querySelector('[data-testid="stSkeleton"]');
  return JSON.stringify({
    ready: !!(app && h1) && !running && !skeleton,
    title: h1 ? h1.innerText.trim() : null,
    exceptions: [...document.querySelectorAll('[data-testid="stException"]')]
      .map(e => e.innerText.slice(0, 500)),
    errors: [...document.querySelectorAll('[data-testid="stAlertContentError"]')]
      .map(e => e.innerText.slice(0, 500)),
    dialogs: [...document.querySelectorAll('[role="dialog"]')]
      .map(e => e.innerText.slice(0, 500)),
  });
})()
"""


class Browser:
    """One headless Chromium with one tab, driven over CDP. Use as a context manager."""

    def __init__(self, width: int = 1400, height: int = 1000) -> None:
        # Chromium's helper processes may still write to the profile while it is removed.
        self._profile = tempfile.TemporaryDirectory(
            prefix="pontual-chromium-", ignore_cleanup_errors=True
        )
        self.process = subprocess.Popen(
            [
                CHROMIUM,
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--disable-default-apps",
                "--disable-extensions",
                "--no-first-run",
                "--no-default-browser-check",
                "--remote-debugging-address=127.0.0.1",
                "--remote-debugging-port=0",
                f"--window-size={width},{height}",
                f"--user-data-dir={self._profile.name}",
                "about:blank",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,  # its own process group: close() ends every helper too
        )
        self._ids = itertools.count(1)
        # The connection is a context manager (websockets >= 17 warns otherwise); it is left
        # in close().
        self._exits = contextlib.ExitStack()
        self.ws: ClientConnection = self._exits.enter_context(
            connect(self._page_socket(), max_size=64 * 1024 * 1024, open_timeout=10)
        )
        self.send("Page.enable")
        self.send("Runtime.enable")

    def _page_socket(self, timeout_s: float = 20.0) -> str:
        """The WebSocket URL of the first tab (Chromium writes its port to DevToolsActivePort)."""
        port_file = Path(self._profile.name) / "DevToolsActivePort"
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise PontualError(f"chromium exited with status {self.process.returncode}")
            if port_file.exists() and port_file.read_text().strip():
                port = port_file.read_text().split()[0]
                try:
                    with urllib.request.urlopen(
                        f"http://127.0.0.1:{port}/json/list", timeout=2
                    ) as r:
                        targets = json.loads(r.read())
                except OSError:
                    targets = []
                pages = [t for t in targets if t.get("type") == "page"]
                if pages:
                    return str(pages[0]["webSocketDebuggerUrl"])
            time.sleep(0.1)
        raise PontualError(f"chromium did not open its DevTools port within {timeout_s:g} s")

    def send(self, method: str, timeout_s: float = 30.0, **params: Any) -> dict[str, Any]:
        """Send one CDP command and return its result (events received meanwhile are dropped)."""
        ident = next(self._ids)
        self.ws.send(json.dumps({"id": ident, "method": method, "params": params}))
        deadline = time.monotonic() + timeout_s
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise PontualError(f"CDP {method} got no answer within {timeout_s:g} s")
            message = json.loads(self.ws.recv(timeout=left))
            if message.get("id") == ident:
                if "error" in message:
                    raise PontualError(f"CDP {method}: {message['error']}")
                return dict(message.get("result", {}))

    def evaluate(self, expression: str) -> Any:
        result = self.send("Runtime.evaluate", expression=expression, returnByValue=True)
        return result.get("result", {}).get("value")

    def open(self, url: str, timeout_s: float = 30.0, settle_s: float = 0.3) -> dict[str, Any]:
        """Navigate to `url` and wait until Streamlit has drawn the page and stopped running
        (stable for `settle_s`). Returns the page state: ready, title, exceptions, errors, and
        `ready_after_s` (seconds from the call until the page was drawn for good)."""
        self.send("Page.navigate", url=url)
        return self.wait_ready(timeout_s, settle_s)

    def click_page(
        self, url_path: str, title: str, timeout_s: float = 30.0, settle_s: float = 0.3
    ) -> dict[str, Any]:
        """Go to another page through the sidebar menu, as a planner does (no page reload:
        the same session reruns with the other page script), and wait until it is drawn."""
        href = json.dumps("/" + url_path)
        clicked = self.evaluate(
            "(() => { const a = [...document.querySelectorAll("
            "'[data-testid=\"stSidebarNavLink\"]')].find(a => new URL(a.href).pathname"
            f".replace(/\\/$/, '') === {href}.replace(/\\/$/, '') || "
            f"(({href} === '/') && new URL(a.href).pathname === '/'));"
            " if (a) { a.click(); return true; } return false; })()"
        )
        if not clicked:
            raise PontualError(f"no sidebar link to /{url_path}")
        return self.wait_ready(timeout_s, settle_s, title=title)

    def wait_ready(
        self, timeout_s: float = 30.0, settle_s: float = 0.3, title: str | None = None
    ) -> dict[str, Any]:
        started = time.monotonic()
        deadline = started + timeout_s
        ready_since: float | None = None
        state: dict[str, Any] = {}
        while time.monotonic() < deadline:
            state = json.loads(self.evaluate(PAGE_STATE_JS) or "{}")
            now = time.monotonic()
            if state.get("ready") and (title is None or state.get("title") == title):
                ready_since = ready_since or now
                if now - ready_since >= settle_s:
                    # When it became ready (and then stayed so for settle_s), from the call.
                    state["ready_after_s"] = ready_since - started
                    return state
            else:
                ready_since = None
            time.sleep(0.05)
        raise PontualError(f"page not rendered within {timeout_s:g} s: {state}")

    def screenshot(self, path: Path) -> Path:
        """Save a PNG of the whole page."""
        data = self.send("Page.captureScreenshot", format="png", captureBeyondViewport=True)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(base64.b64decode(data["data"]))
        return path

    def close(self) -> None:
        try:
            self._exits.close()
        finally:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait(timeout=10)
            self._profile.cleanup()

    def __enter__(self) -> Browser:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
