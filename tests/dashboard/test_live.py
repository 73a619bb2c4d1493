"""The Ao vivo page on `pontual serve`'s JSON: the GTFS-RT messages encoded by the same
functions the feed server uses (`gtfs.realtime` + protobuf's JSON), served over HTTP at the
server's paths; delays come from the trip updates, occupancy from the vehicle positions."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import polars as pl
import pytest
from google.protobuf import json_format
from streamlit.testing.v1 import AppTest

from dashboard.queries.live import LIVE_POSITIONS_PATH, LIVE_TRIP_UPDATES_PATH, build_live_vehicles
from gtfs.realtime import build_trip_updates, build_vehicle_positions

APP = str(Path(__file__).resolve().parents[2] / "dashboard" / "app.py")
CLOCK_S = 1772539200  # 2026-03-03 12:00 UTC, 09:00 in Bento Gonçalves


def _feeds() -> dict[str, bytes]:
    positions = pl.DataFrame(
        {
            "vehicle_id": ["V1", "V2", "V3"],
            "trip_id": ["L1-0900", "L2-0905", None],
            "route_id": ["L1", "L2", None],
            "lat": [-29.17, -29.16, -29.15],
            "lon": [-51.52, -51.51, -51.50],
            "timestamp_s": [CLOCK_S - 5, CLOCK_S - 10, CLOCK_S - 60],
            "occupancy_status": ["STANDING_ROOM_ONLY", "MANY_SEATS_AVAILABLE", None],
            "occupancy_percentage": [92, 30, None],
        }
    )
    trips = pl.DataFrame(
        {
            "entity_id": ["L1-0900|1", "L2-0905|1"],
            "trip_id": ["L1-0900", "L2-0905"],
            "route_id": ["L1", "L2"],
            "vehicle_id": ["V1", "V2"],
            "schedule_relationship": ["SCHEDULED", "SCHEDULED"],
            "timestamp_s": [CLOCK_S, CLOCK_S],
            "delay_s": [430, -20],
        }
    )
    stops = pl.DataFrame(
        {
            "entity_id": ["L1-0900|1"],
            "stop_sequence": [2],
            "stop_id": ["S2"],
            "arrival_time_s": [CLOCK_S + 120],
            "arrival_delay_s": [430],
            "departure_time_s": [None],
            "departure_delay_s": [None],
            "schedule_relationship": ["SCHEDULED"],
        }
    )

    def as_json(message: object) -> bytes:
        return json.dumps(json_format.MessageToDict(message)).encode()

    return {
        LIVE_POSITIONS_PATH: as_json(build_vehicle_positions(positions, CLOCK_S)),
        LIVE_TRIP_UPDATES_PATH: as_json(build_trip_updates(trips, stops, CLOCK_S)),
    }


@pytest.fixture(scope="module")
def feed_url() -> Iterator[str]:
    feeds = _feeds()

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            body = feeds.get(self.path)
            self.send_response(200 if body else 404)
            self.send_header("Content-Type", "application/json")
            self.end_headers()
            self.wfile.write(body or b"{}")

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()


def test_live_vehicles_join_positions_and_trip_delays() -> None:
    feeds = {k: json.loads(v) for k, v in _feeds().items()}
    live = build_live_vehicles(feeds[LIVE_POSITIONS_PATH], feeds[LIVE_TRIP_UPDATES_PATH])
    assert live["vehicle_id"].to_list() == ["V1", "V2", "V3"]
    assert live["delay_s"].to_list() == [430.0, -20.0, None]
    assert live["occupancy_status"].to_list() == [
        "STANDING_ROOM_ONLY",
        "MANY_SEATS_AVAILABLE",
        None,
    ]
    assert live["occupancy_percentage"].to_list() == [92.0, 30.0, None]
    assert live["lat"].round(4).to_list() == [-29.17, -29.16, -29.15]


def test_live_page_reads_the_feed_server(
    dashboard_store: Path, feed_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PONTUAL_STORE", str(dashboard_store))
    monkeypatch.setenv("PONTUAL_LIVE_URL", feed_url)
    at = AppTest.from_file(APP, default_timeout=60)
    at.run()
    at.switch_page("pages/live.py").run()
    assert not at.exception, [e.value for e in at.exception]
    assert not at.info, [i.value for i in at.info]  # no fallback notice: the feed answered
    assert "3 veículos" in at.caption[0].value
    table = pl.from_pandas(at.dataframe[0].value)
    v1 = table.row(0, named=True)
    assert (v1["Veículo"], v1["Atraso"], v1["Ocupação"]) == ("V1", "+7 min 10 s", "só em pé")
    assert v1["Posição às"] == "08:59:55"  # local time (UTC-3)
    assert table["Atraso"].to_list()[1:] == ["-0 min 20 s", "—"]
    at.radio(key="live_by").set_value("Ocupação").run()
    assert "lotado" in at.caption[1].value
