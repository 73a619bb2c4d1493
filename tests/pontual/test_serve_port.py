"""`pontual serve` on a busy HTTP port exits 2 at once, before it reads the store or joins the
broker (it used to exit 3 after consuming messages)."""

from __future__ import annotations

import socket
import time
from pathlib import Path

import pytest

from pontual.cli import main


def test_a_busy_http_port_is_refused_before_connecting(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        store = tmp_path / "absent" / "pontual.duckdb"
        started = time.monotonic()
        # no broker listens on port 9 and the store does not exist: neither is reached
        code = main(["--store", str(store), "serve", "--port", "9", "--http-port", str(port)])
        elapsed = time.monotonic() - started
    assert code == 2
    out = capsys.readouterr()
    assert f"a porta HTTP {port} em 127.0.0.1 não está livre" in out.out + out.err
    assert not store.exists()
    assert elapsed < 5
