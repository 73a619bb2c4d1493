"""GTFS-Realtime VehiclePositions polled from a URL (`pontual ingest avl --url`), served by a
real HTTP server on a free port: a changing feed adds its new fixes only, a repeated one adds
nothing, and the poller stops after `--polls`."""

from __future__ import annotations

import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from google.transit import gtfs_realtime_pb2

from core.store import Store
from pontual.cli import main
from tests.conftest import shared_data


class FeedServer:
    """Serves `bodies` in turn at /vp.pb (the last one again once they run out); records
    when each request came. A body of None answers 404."""

    def __init__(self, bodies: list[bytes | None]) -> None:
        self.bodies = bodies
        self.requested_at: list[float] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                body = server.bodies[min(len(server.requested_at), len(server.bodies) - 1)]
                server.requested_at.append(time.monotonic())
                if body is None or self.path != "/vp.pb":
                    self.send_error(404)
                    return
                self.send_response(200)
                self.send_header("Content-Type", "application/x-protobuf")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: object) -> None:  # quiet test output
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)  # port 0: a free port
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/vp.pb"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def __enter__(self) -> FeedServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join(timeout=5)


def _moved_on(feed_bytes: bytes, n_vehicles: int, seconds: int) -> bytes:
    """The feed `seconds` later for its first `n_vehicles` vehicles (new fixes), the same
    fixes for the others: what a real feed looks like a poll later."""
    feed = gtfs_realtime_pb2.FeedMessage()
    feed.ParseFromString(feed_bytes)
    feed.header.timestamp += seconds
    moved = [e for e in feed.entity if e.HasField("vehicle")][:n_vehicles]
    for entity in moved:
        entity.vehicle.timestamp += seconds
        entity.vehicle.position.latitude += 0.0005
    return feed.SerializeToString()


def _poll(store_path: Path, url: str, polls: int, interval_s: float) -> int:
    return main(
        [
            "--store",
            str(store_path),
            "ingest",
            "avl",
            "--url",
            url,
            "--interval-s",
            str(interval_s),
            "--polls",
            str(polls),
        ]
    )


def test_polled_feed_adds_new_fixes_only_and_stops(store_path: Path, capsys) -> None:
    real = shared_data("gtfsrt_mbta_2024", "VehiclePositions.pb").read_bytes()
    later = _moved_on(real, n_vehicles=100, seconds=30)
    # Poll 1: the real feed (650 buses); poll 2: 100 of them moved on; poll 3: poll 2 again.
    with FeedServer([real, later, later]) as server:
        assert _poll(store_path, server.url, polls=3, interval_s=0.3) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "650 lidos, 650 aceitos, 0 duplicados, 0 em quarentena" in out
    assert "650 lidos, 100 aceitos, 550 duplicados, 0 em quarentena" in out
    assert "650 lidos, 0 aceitos, 650 duplicados, 0 em quarentena" in out
    assert len(server.requested_at) == 3  # stopped after --polls
    gaps = [b - a for a, b in zip(server.requested_at, server.requested_at[1:], strict=False)]
    # paced by --interval-s (0.3 s from each try's start): the server sees a request after
    # the connection's latency, which on a loaded machine varies by tens of ms between tries;
    # without pacing the gaps would be a few ms
    assert all(gap >= 0.15 for gap in gaps), gaps
    with Store.open(store_path, read_only=True) as store:
        assert store.count("vehicle_locations") == 750
        runs = store.query(
            "SELECT source, n_read, n_accepted, n_duplicate FROM ingest_runs ORDER BY started_at"
        ).rows()
        assert runs == [(server.url, 650, a, d) for a, d in ((650, 0), (100, 550), (0, 650))]
        moved = store.query(
            "SELECT count(*) AS n, min(event_at) AS first FROM vehicle_locations "
            "WHERE vehicle_id = 'y2069'"
        ).row(0)
    # y2069 is the feed's first vehicle: fixed at 1732128712 (18:51:52 UTC), then 30 s later.
    assert moved[0] == 2
    assert str(moved[1]) == "2024-11-20 18:51:52+00:00"


def test_a_feed_that_cannot_be_fetched_is_a_clear_error(store_path: Path, capsys) -> None:
    with FeedServer([None]) as server:
        assert _poll(store_path, server.url, polls=2, interval_s=0.1) == 2
    err = " ".join(capsys.readouterr().err.split())
    # Each failure is reported and retried; a bounded run that fetched nothing exits 2.
    assert err.count("não foi possível buscar o feed (") == 2 and "404" in err
    assert (
        "não foi possível buscar o feed: todas as 2 tentativas falharam" in err
        and server.url in err
    )
    assert "Traceback" not in err


def test_a_failing_feed_url_is_retried_with_backoff_and_reported(store_path: Path, capsys) -> None:
    from gtfs.realtime import encode_feed, new_feed

    good = encode_feed(new_feed(1772452800))
    # Two failures (404, then not a feed), then the feed: the poller goes on.
    with FeedServer([None, b"not a feed", good]) as server:
        assert _poll(store_path, server.url, polls=3, interval_s=0.2) == 0
    err = " ".join(capsys.readouterr().err.split())
    assert err.count("não foi possível buscar o feed") == 2
    assert "nova tentativa em 1 s" in err and "nova tentativa em 2 s" in err
    gaps = [b - a for a, b in zip(server.requested_at, server.requested_at[1:], strict=False)]
    # doubling backoff (1 s, then 2 s), each wait counted from the failed try's start: a loaded
    # machine shortens the measured gap by the time the try took (0.82 s seen at load 2 with
    # the suite's two workers)
    assert len(gaps) == 2 and 0.6 < gaps[0] < 1.8 and 1.5 < gaps[1] < 2.9, gaps
    assert gaps[1] > gaps[0] + 0.4
