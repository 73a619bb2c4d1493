"""`pontual demo`: its own store, a sample folder it never takes from someone else, and the live
side (a real Mosquitto, `pontual serve`, `pontual replay` per operator) that animates the "Ao
vivo" page and ends cleanly."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path

import pytest

from core.settings import DEFAULT_STORE
from pontual.live_demo import free_port
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


def _positions(entities: list[dict[str, object]]) -> dict[str, object]:
    return {
        e["vehicle"]["vehicle"]["id"]: e["vehicle"]["position"]  # type: ignore[index]
        for e in entities
    }


def _processes_mentioning(text: str) -> list[int]:
    """Pids whose command line or environment names `text` (Linux /proc)."""
    found = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit() or int(proc.name) == os.getpid():
            continue
        try:
            seen = (proc / "cmdline").read_bytes() + (proc / "environ").read_bytes()
        except OSError:
            continue
        if text.encode() in seen:
            found.append(int(proc.name))
    return found


@pytest.mark.simulator
def test_the_live_demo_moves_buses_and_ends_cleanly(tmp_path: Path) -> None:
    require_mosquitto()
    env = {k: v for k, v in os.environ.items() if k != "PONTUAL_STORE"}
    env.update(PYTHONPATH=str(ROOT), PYTHONUNBUFFERED="1", COLUMNS="250")
    # `make demo` is `pontual demo`: the demo's own store in the working folder, then the live
    # side and the dashboard (one simulated day, replayed from 07:00 at 60x)
    demo = subprocess.Popen(
        [
            *(sys.executable, "-m", "pontual", "demo", "--days", "1"),
            *("--port", str(free_port()), "--live-speed", "60", "--live-from", "07:00"),
        ],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    lines: list[str] = []
    reader = threading.Thread(target=lambda: lines.extend(iter(demo.stdout.readline, "")))  # type: ignore[union-attr]
    reader.start()
    seen: list[list[dict[str, object]]] = []
    try:
        deadline = time.monotonic() + 400
        feed = None
        while time.monotonic() < deadline and demo.poll() is None and len(seen) < 2:
            if feed is None:
                said = [m for line in lines for m in re.findall(r"http://127\.0\.0\.1:\d+", line)]
                ready = any("painel em" in line for line in lines)
                feed = said[0] if said and ready else None
            else:
                vehicles = _vehicles(feed)
                if vehicles and (not seen or _positions(vehicles) != _positions(seen[-1])):
                    seen.append(vehicles)
            time.sleep(2)
        assert demo.poll() is None, "".join(lines)[-3000:]
        assert (tmp_path / DEMO_STORE).exists()
        assert (tmp_path / DEMO_STORE.parent / "sample" / SAMPLE_MARK).exists()
        assert len(seen) >= 2, "".join(lines)[-3000:]
        # the buses moved between two looks at the feed
        first, last = _positions(seen[0]), _positions(seen[-1])
        assert any(first[v] != last[v] for v in first.keys() & last.keys())
        assert _processes_mentioning(str(tmp_path))  # broker, serve, replays, Streamlit
        # the passengers' stop page is on the same server, and the demo says where
        assert feed is not None, "".join(lines)[-3000:]
        assert any(f"{feed}/paradas" in line for line in lines), "".join(lines)[-3000:]
        with urllib.request.urlopen(feed + "/api/stops", timeout=5) as r:
            stops = json.load(r)["stops"]
        busiest = max(stops, key=lambda s: s["n_arrivals"])
        assert busiest["n_arrivals"] > 0
        with urllib.request.urlopen(f"{feed}/paradas/{busiest['stop_id']}", timeout=5) as r:
            page = r.read().decode()
        assert "próximos ônibus" in page.lower() and re.search(r"em \d+ min|chegando", page)
    finally:
        demo.send_signal(signal.SIGTERM)
        code = demo.wait(timeout=60)
        reader.join(timeout=10)
    # SIGTERM ends the demo and everything it started: no broker, feed server, replay or
    # Streamlit is left behind
    assert code == 0, "".join(lines)[-3000:]
    deadline = time.monotonic() + 10
    while _processes_mentioning(str(tmp_path)) and time.monotonic() < deadline:
        time.sleep(0.5)
    assert _processes_mentioning(str(tmp_path)) == []


@pytest.mark.simulator
def test_the_replay_starts_before_a_late_first_departure(tmp_path: Path) -> None:
    """The demo's last simulated day is a Sunday whose service starts after 06:30: the replay
    then starts five minutes before its first departure (buses leaving, not parked), and on a
    weekday at 06:30, the morning peak. The first departure is read from the store."""
    from datetime import date
    from datetime import time as clock

    from core.store import Store
    from pontual.cli import main
    from pontual.verbs.demo import DEFAULT_LIVE_FROM, build_stages, choose_live_start

    sunday, monday = date(2026, 3, 8), date(2026, 3, 9)
    store = tmp_path / "pontual.duckdb"
    stages = build_stages(tmp_path / "sample", sunday, 2, seed=1)[:3]  # simulate, init, gtfs
    for _label, argv in stages:
        assert main(["--quiet", "--store", str(store), *argv]) == 0, argv
    with Store.open(store, read_only=True) as s:
        firsts = dict(
            s.query(
                "SELECT service_date, min(planned_start_s) AS first_s FROM scheduled_trips "
                "GROUP BY service_date"
            ).iter_rows()
        )
    late, early = firsts[sunday], firsts[monday]
    assert late - 300 > 6.5 * 3600 > early  # the simulated timetable, as the demo runs it
    start = choose_live_start(store, sunday, DEFAULT_LIVE_FROM)
    assert start == clock((late - 300) // 3600, (late - 300) % 3600 // 60)
    assert choose_live_start(store, monday, DEFAULT_LIVE_FROM) == DEFAULT_LIVE_FROM
