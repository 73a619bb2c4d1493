"""`pontual demo`: its own store, a sample folder it never takes from someone else, and the live
side (a real Mosquitto, `pontual serve`, `pontual replay` per operator) that animates the "Ao
vivo" page and ends cleanly."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import urllib.request
from datetime import date
from datetime import time as clock
from pathlib import Path

import pytest

from core.settings import DEFAULT_STORE
from pontual.live_demo import LiveDemo
from pontual.verbs.demo import DEMO_STORE, SAMPLE_MARK, resolve_demo_paths
from tests.mosquitto import require_mosquitto

ROOT = Path(__file__).resolve().parents[2]


def _pontual(*argv: str, cwd: Path, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "PONTUAL_STORE"}
    env["PYTHONPATH"] = str(ROOT)
    return subprocess.run(
        [sys.executable, "-m", "pontual", "--quiet", *argv],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def test_the_demo_uses_its_own_store_unless_told(tmp_path: Path) -> None:
    assert resolve_demo_paths(DEFAULT_STORE, None, False) == (
        DEMO_STORE,
        DEMO_STORE.parent / "sample",
    )
    given = tmp_path / "prod" / "pontual.duckdb"
    done = _pontual("--store", str(given), "demo", "--days", "1", "--no-serve", cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    assert "--into-store" in done.stderr + done.stdout
    assert not given.exists()
    assert resolve_demo_paths(given, None, True) == (given, given.parent / "sample")


def test_a_sample_folder_the_demo_did_not_make_is_never_overwritten(tmp_path: Path) -> None:
    store = tmp_path / "pontual.duckdb"
    theirs = tmp_path / "sample"
    theirs.mkdir()
    (theirs / "vehicles.csv").write_text("mine\n")
    done = _pontual(
        "--store", str(store), "demo", "--into-store", "--no-serve", "--days", "1", cwd=tmp_path
    )
    assert done.returncode == 2, done.stderr
    assert "não será sobrescrita" in done.stderr + done.stdout
    assert (theirs / "vehicles.csv").read_text() == "mine\n"
    # a folder an earlier demo made may be reused
    (theirs / SAMPLE_MARK).write_text("")
    assert resolve_demo_paths(store, None, True)[1] == theirs


def _vehicles(url: str) -> list[dict[str, object]]:
    with urllib.request.urlopen(url + "/gtfs-rt/vehicle-positions.pb?format=json", timeout=2) as r:
        return list(json.load(r).get("entity", []))


@pytest.mark.simulator
def test_the_live_demo_moves_buses_and_ends_cleanly(tmp_path: Path) -> None:
    require_mosquitto()
    # the demo's own store, in the working folder (no --store)
    done = _pontual("demo", "--days", "1", "--no-serve", cwd=tmp_path)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    store = tmp_path / DEMO_STORE
    sample = store.parent / "sample"
    assert store.exists() and (sample / SAMPLE_MARK).exists()
    live = LiveDemo(
        store=store,
        profile_id="bento-goncalves-2021",
        avl=sample / "avl.parquet",
        day=date(2026, 3, 2),
        start=clock(7, 0),
        timezone="America/Sao_Paulo",
        speed=60.0,
        folder=tmp_path / "live",
    )
    seen: list[list[dict[str, object]]] = []
    with live:
        processes = list(live.processes)
        # broker, serve, one replay per operator (the simulated city has O1 and O2)
        assert len(processes) == 4
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline and len(seen) < 2:
            vehicles = _vehicles(live.feed_url)
            if vehicles and (not seen or vehicles != seen[-1]):
                seen.append(vehicles)
            time.sleep(2)
    assert len(seen) >= 2, (live.folder / "serve.log").read_text()[-2000:]
    # the buses moved between two looks at the feed
    first = {
        e["vehicle"]["vehicle"]["id"]: e["vehicle"]["position"]  # type: ignore[index]
        for e in seen[0]
    }
    last = {
        e["vehicle"]["vehicle"]["id"]: e["vehicle"]["position"]  # type: ignore[index]
        for e in seen[-1]
    }
    assert any(first[v] != last[v] for v in first.keys() & last.keys())
    # every process ended; serve stopped cleanly (SIGTERM: it commits and exits 0)
    assert all(p.poll() is not None for p in processes)
    assert processes[1].returncode == 0, (live.folder / "serve.log").read_text()[-2000:]
