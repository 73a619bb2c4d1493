"""The feed server's endpoints on a hand-built live view (Starlette TestClient, no broker), and
the MBTA feeds through the server's own encoder path."""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from datetime import UTC, date, datetime

import polars as pl
import pytest
from google.protobuf import json_format
from google.transit import gtfs_realtime_pb2 as rt
from starlette.testclient import TestClient

from analytics.live.engine import VEHICLE_SCHEMA, LiveView
from gtfs.realtime import (
    build_trip_updates,
    build_vehicle_positions,
    decode_feed,
    read_trip_updates,
    read_vehicle_positions,
)
from pontual.feed_server import build_app, to_feed_bodies
from tests.conftest import shared_data

CLOCK_S = datetime(2026, 3, 3, 14, 0, tzinfo=UTC).timestamp()
UTC_US = pl.Datetime("us", "UTC")


@dataclass
class Reference:
    service_date: date
    stops: pl.DataFrame
    stop_times: pl.DataFrame


@dataclass
class Source:
    view: LiveView
    reference: Reference


def _view(version: int = 1) -> LiveView:
    """Bus V1 on trip T10-1 (60 s late at S2, 100 s at S3); trip T10-2 canceled; a detour on
    line T10 from 13:00 to 15:00 UTC."""
    vehicles = pl.DataFrame(
        [
            {
                "vehicle_id": "V1", "trip_id": "T10-1", "t_s": CLOCK_S, "lat": -29.17,
                "lon": -51.52, "heading_deg": 90.0, "speed_m_s": 6.0, "dist_m": 800.0,
                "delay_s": 60.0, "next_stop_sequence": 2, "next_stop_id": "S2", "load": 30.0,
                "occupancy_status": "FEW_SEATS_AVAILABLE", "occupancy_percentage": 60,
            }
        ],
        schema=VEHICLE_SCHEMA,
    )  # fmt: skip
    predictions = pl.DataFrame(
        {
            "vehicle_id": ["V1", "V1"],
            "trip_id": ["T10-1", "T10-1"],
            "stop_sequence": [2, 3],
            "stop_id": ["S2", "S3"],
            "block_order": [0, 0],
            "planned_arrival_s": [CLOCK_S + 60, CLOCK_S + 300],
            "timetable_s": [CLOCK_S + 60, CLOCK_S + 300],
            "constant_delay_s": [CLOCK_S + 120, CLOCK_S + 360],
            "predicted_s": [CLOCK_S + 120, CLOCK_S + 400],
        },
        schema_overrides={"block_order": pl.Int32, "stop_sequence": pl.Int32},
    )
    descriptors = pl.DataFrame(
        {
            "trip_id": ["T10-1", "T10-2"],
            "feed_trip_id": ["T10-1", "T10-2"],
            "route_id": ["T10", "T10"],
            "direction_id": [0, 0],
            "start_date": ["20260303", "20260303"],
            "start_time": ["10:50:00", "11:05:00"],
        },
        schema_overrides={"direction_id": pl.Int32},
    )
    incidents = pl.DataFrame(
        {
            "incident_id": ["I1"],
            "starts_at": [datetime(2026, 3, 3, 13, tzinfo=UTC)],
            "ends_at": [datetime(2026, 3, 3, 15, tzinfo=UTC)],
            "route_id": ["T10"],
            "trip_id": [None],
            "kind": ["detour"],
            "note": ["Obras na Rua Marechal Deodoro"],
        },
        schema_overrides={"starts_at": UTC_US, "ends_at": UTC_US, "trip_id": pl.String},
    )
    return LiveView(
        version=version,
        clock_s=CLOCK_S,
        updated_at_s=CLOCK_S + 1,
        vehicles=vehicles,
        positions=pl.DataFrame({"vehicle_id": ["V1"], "trip_id": ["T10-1"], "delay_s": [60.0]}),
        predictions=predictions,
        canceled=pl.DataFrame({"trip_id": ["T10-2"]}),
        descriptors=descriptors,
        incidents=incidents,
    )


def _reference() -> Reference:
    return Reference(
        service_date=date(2026, 3, 3),
        stops=pl.DataFrame(
            {"stop_id": ["S1", "S2", "S3"], "stop_name": ["Centro", "Rua A", "Planalto"]}
        ),
        stop_times=pl.DataFrame(
            {
                "trip_id": ["T10-2"] * 3,
                "stop_sequence": [1, 2, 3],
                "stop_id": ["S1", "S2", "S3"],
                "planned_arrival_s": [CLOCK_S + 200, CLOCK_S + 500, CLOCK_S + 800],
            },
            schema_overrides={"stop_sequence": pl.Int32},
        ),
    )


@pytest.fixture
def source() -> Source:
    return Source(_view(), _reference())


@pytest.fixture
def client(source: Source) -> TestClient:
    return TestClient(build_app(source, cors_origins=("https://app.example",)))


def test_vehicle_positions_protobuf_etag_and_304(client: TestClient, source: Source) -> None:
    r = client.get("/gtfs-rt/vehicle-positions.pb")
    assert r.status_code == 200
    assert r.headers["content-type"] == "application/x-protobuf"
    assert r.headers["cache-control"] == "no-cache"
    assert r.headers["last-modified"] == "Tue, 03 Mar 2026 14:00:01 GMT"
    feed = rt.FeedMessage.FromString(r.content)
    assert feed.header.timestamp == int(CLOCK_S)
    (entity,) = feed.entity
    v = entity.vehicle
    assert (v.vehicle.id, v.trip.trip_id, v.trip.start_time, v.stop_id) == (
        "V1",
        "T10-1",
        "10:50:00",
        "S2",
    )
    assert v.occupancy_status == rt.VehiclePosition.FEW_SEATS_AVAILABLE
    assert v.occupancy_percentage == 60
    etag = r.headers["etag"]
    again = client.get("/gtfs-rt/vehicle-positions.pb", headers={"If-None-Match": etag})
    assert again.status_code == 304 and again.content == b""
    assert again.headers["etag"] == etag
    # a new view is a new body: the old ETag no longer matches
    source.view = replace(_view(version=2), clock_s=CLOCK_S + 10)
    fresh = client.get("/gtfs-rt/vehicle-positions.pb", headers={"If-None-Match": etag})
    assert fresh.status_code == 200 and fresh.headers["etag"] != etag


def test_json_variant_is_the_same_message(client: TestClient) -> None:
    pb = client.get("/gtfs-rt/trip-updates.pb")
    js = client.get("/gtfs-rt/trip-updates.pb", params={"format": "json"})
    assert js.headers["content-type"] == "application/json"
    assert js.headers["etag"] != pb.headers["etag"]
    body = js.json()
    assert body["header"]["gtfsRealtimeVersion"] == "2.0"
    assert json_format.ParseDict(body, rt.FeedMessage()) == rt.FeedMessage.FromString(pb.content)


def test_trip_updates_carry_predictions_and_cancellations(client: TestClient) -> None:
    feed = rt.FeedMessage.FromString(client.get("/gtfs-rt/trip-updates.pb").content)
    by_trip = {e.trip_update.trip.trip_id: e.trip_update for e in feed.entity}
    running, canceled = by_trip["T10-1"], by_trip["T10-2"]
    assert running.trip.schedule_relationship == rt.TripDescriptor.SCHEDULED
    assert running.vehicle.id == "V1" and running.delay == 60
    arrivals = [(u.stop_id, u.arrival.time, u.arrival.delay) for u in running.stop_time_update]
    assert arrivals == [("S2", int(CLOCK_S) + 120, 60), ("S3", int(CLOCK_S) + 400, 100)]
    assert canceled.trip.schedule_relationship == rt.TripDescriptor.CANCELED
    assert not canceled.stop_time_update


def test_alerts_in_portuguese(client: TestClient) -> None:
    feed = rt.FeedMessage.FromString(client.get("/gtfs-rt/alerts.pb").content)
    (entity,) = feed.entity
    alert = entity.alert
    assert alert.effect == rt.Alert.DETOUR
    assert alert.informed_entity[0].route_id == "T10"
    header = alert.header_text.translation[0]
    assert (header.text, header.language) == ("Desvio de itinerário na linha T10", "pt-BR")


def test_cors_allows_the_configured_origin_only(client: TestClient) -> None:
    ok = client.get("/gtfs-rt/alerts.pb", headers={"Origin": "https://app.example"})
    assert ok.headers["access-control-allow-origin"] == "https://app.example"
    assert "etag" in ok.headers["access-control-expose-headers"].lower()
    other = client.get("/gtfs-rt/alerts.pb", headers={"Origin": "https://evil.example"})
    assert "access-control-allow-origin" not in other.headers
    pre = client.options(
        "/gtfs-rt/alerts.pb",
        headers={"Origin": "https://app.example", "Access-Control-Request-Method": "GET"},
    )
    assert pre.status_code == 200 and "GET" in pre.headers["access-control-allow-methods"]


def test_stop_arrivals_predicted_then_canceled(client: TestClient) -> None:
    body = client.get("/api/stops/S2/arrivals").json()
    assert (body["stop_id"], body["stop_name"]) == ("S2", "Rua A")
    assert body["generated_at"] == "2026-03-03T14:00:00+00:00"
    first, second = body["arrivals"]
    assert first == {
        "trip_id": "T10-1",
        "route_id": "T10",
        "route_short_name": "T10",  # no names given: the route_id
        "headsign": None,
        "vehicle_id": "V1",
        "planned_arrival": "2026-03-03T14:01:00Z",
        "predicted_arrival": "2026-03-03T14:02:00Z",
        "delay_s": 60,
        "seconds": 120,
        "minutes": 2,
        "occupancy_status": "FEW_SEATS_AVAILABLE",
        "status": "previsto",
    }
    assert (second["trip_id"], second["status"], second["minutes"]) == ("T10-2", "cancelado", 8)
    assert second["predicted_arrival"] is None and second["vehicle_id"] is None
    assert len(client.get("/api/stops/S2/arrivals", params={"limit": "1"}).json()["arrivals"]) == 1
    assert len(client.get("/api/stops/S2/arrivals", params={"limit": "x"}).json()["arrivals"]) == 2


def test_unknown_stop_is_404_in_portuguese(client: TestClient) -> None:
    r = client.get("/api/stops/NOPE/arrivals")
    assert r.status_code == 404
    assert r.json() == {"erro": "parada desconhecida: NOPE", "dica": "use um stop_id do GTFS"}


def test_health(client: TestClient) -> None:
    body = client.get("/health").json()
    assert body["status"] == "ok"
    assert (body["service_date"], body["version"]) == ("2026-03-03", 1)
    assert body["feed_clock"] == "2026-03-03T14:00:00+00:00"
    assert (body["n_vehicles"], body["n_trips_predicted"], body["n_canceled"]) == (1, 1, 1)


def test_mbta_feeds_through_the_server_encoder() -> None:
    """The MBTA feeds, read into frames and rebuilt, leave the server's encoder (protobuf and
    JSON bodies) equal to what came in."""
    vp_in = decode_feed(shared_data("gtfsrt_mbta_2024", "VehiclePositions.pb").read_bytes())
    positions = read_vehicle_positions(vp_in)
    pb, js = to_feed_bodies(build_vehicle_positions(positions, vp_in.header.timestamp))
    assert read_vehicle_positions(decode_feed(pb)).equals(positions)
    as_json = json_format.ParseDict(json.loads(js), rt.FeedMessage())
    assert read_vehicle_positions(as_json).equals(positions)
    assert positions.height == 650

    tu_in = decode_feed(shared_data("gtfsrt_mbta_2024", "TripUpdates.pb").read_bytes())
    trips, stops = read_trip_updates(tu_in)
    pb, js = to_feed_bodies(build_trip_updates(trips, stops, tu_in.header.timestamp))
    trips2, stops2 = read_trip_updates(decode_feed(pb))
    assert trips2.equals(trips) and stops2.equals(stops)
    assert (trips.height, stops.height) == (1207, 28735)
