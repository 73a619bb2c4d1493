"""The real-time feed over HTTP (Starlette): GTFS-Realtime 2.0 and a JSON stop display.

Routes: `/gtfs-rt/vehicle-positions.pb`, `/gtfs-rt/trip-updates.pb`, `/gtfs-rt/alerts.pb`
(FULL_DATASET protobuf; `?format=json` gives the same message as JSON), `/api/stops/{stop_id}/
arrivals` (the next arrivals at a stop, for a stop display), `/api/stops?q=` (the stops, or
those a search finds, each with its number of predicted arrivals to come),
`/paradas/{stop_id}` and `/paradas?q=` (the passenger's HTML stop page and stop search:
`pontual.stop_page`), `/health`. Each feed is encoded
once per engine update and cached; responses carry ETag and Last-Modified (a matching
If-None-Match gets 304) and CORS headers, so apps poll cheaply.
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import UTC, date, datetime
from email.utils import format_datetime
from typing import Any, Protocol
from urllib.parse import quote

import polars as pl
from google.protobuf import json_format
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.cors import CORSMiddleware
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import Route

from analytics.live.engine import LiveView
from analytics.live.feeds import (
    build_alerts_feed,
    build_trip_update_frames,
    build_vehicle_position_frame,
)
from gtfs.realtime import build_trip_updates, build_vehicle_positions, encode_feed
from pontual.stop_page import (
    PassengerNames,
    build_passenger_names,
    build_stop_search,
    to_stop_page,
    to_stop_search_page,
    to_unknown_stop_page,
)

PROTOBUF = "application/x-protobuf"
STOP_PAGE_ROWS = 12
"""The arrivals a passenger's stop page lists (a phone's screen and a bit)."""


class FeedReference(Protocol):
    """What the server reads from the day's reference (`LiveReference` has it)."""

    service_date: date
    stops: pl.DataFrame
    """stop_id, stop_name (the stops a display may ask for)"""
    stop_times: pl.DataFrame
    """trip_id, stop_sequence, stop_id, planned_arrival_s (epoch s)"""


class FeedSource(Protocol):
    """The live state served (`LiveEngine` is one): its latest view and the reference."""

    @property
    def view(self) -> LiveView: ...

    @property
    def reference(self) -> FeedReference: ...


def to_feed_bodies(feed: Any) -> tuple[bytes, bytes]:
    """The bodies served for one FeedMessage: (protobuf bytes, JSON text of the same message).

    The protobuf goes through `gtfs.realtime.encode_feed` (the codec the ingest reads with);
    the JSON is protobuf's canonical JSON mapping (camelCase field names, enums as names).
    """
    return encode_feed(feed), json.dumps(json_format.MessageToDict(feed)).encode()


@dataclass
class _Encoded:
    """One feed encoded for one view: the message, its protobuf body and, once asked for,
    its JSON body."""

    key: int
    feed: Any
    pb: bytes
    etag: str
    modified: str
    js: bytes | None = None


class FeedCache:
    """Encoded feeds per engine view version (state: the last encodings)."""

    def __init__(self, engine: FeedSource) -> None:
        self.engine = engine
        # one lock per feed: encoding the trip updates must not hold up the positions
        self._locks = {name: threading.Lock() for name in BUILDERS}
        self._cache: dict[str, _Encoded] = {}

    def warm(self, names: tuple[str, ...] = ()) -> None:
        """Encode feeds of the current view (all by default; called by the updating threads,
        so that requests find them ready)."""
        for name in names or tuple(BUILDERS):
            self.get(name, "pb")

    def get(self, name: str, fmt: str) -> tuple[bytes, str, str]:
        """(body, etag, last_modified) of feed `name` in format 'pb' or 'json'."""
        view = self.engine.view
        # positions change with every batch; trip updates and alerts with each refresh only
        key = view.version if name == "vehicle-positions" else view.state_version
        hit = self._cache.get(name)
        if hit is None or hit.key != key:
            with self._locks[name]:
                hit = self._cache.get(name)
                if hit is None or hit.key != key:
                    feed = BUILDERS[name](view)
                    pb = encode_feed(feed)
                    hit = _Encoded(
                        key,
                        feed,
                        pb,
                        hashlib.blake2b(pb, digest_size=12).hexdigest(),
                        format_datetime(
                            datetime.fromtimestamp(view.updated_at_s, UTC), usegmt=True
                        ),
                    )
                    self._cache[name] = hit
        if fmt == "json":
            if hit.js is None:  # JSON only when someone asks (protobuf -> dict is slow)
                hit.js = to_feed_bodies(hit.feed)[1]
            return hit.js, f'"{hit.etag}-j"', hit.modified
        return hit.pb, f'"{hit.etag}"', hit.modified


def _vehicle_positions(view: LiveView) -> Any:
    frame = build_vehicle_position_frame(view.vehicles, view.descriptors)
    return build_vehicle_positions(frame, int(view.clock_s))


def _trip_updates(view: LiveView) -> Any:
    trips, stops = build_trip_update_frames(
        view.predictions, view.positions, view.canceled, view.descriptors, view.clock_s
    )
    return build_trip_updates(trips, stops, int(view.clock_s))


def _alerts(view: LiveView) -> Any:
    return build_alerts_feed(view.incidents, view.clock_s, view.descriptors)


BUILDERS: dict[str, Callable[[LiveView], Any]] = {
    "vehicle-positions": _vehicle_positions,
    "trip-updates": _trip_updates,
    "alerts": _alerts,
}


def build_stop_arrivals(
    view: LiveView,
    stop_times: pl.DataFrame,
    stop_id: str,
    limit: int,
    trip_names: pl.DataFrame | None = None,
) -> list[dict[str, Any]]:
    """The next arrivals at a stop, soonest first (a stop display's rows).

    Each row: trip_id (GTFS), route_id, route_short_name (the line's public number; the
    route_id where `trip_names`, `PassengerNames.trips`, does not name it), headsign (null when
    unknown), vehicle_id, planned_arrival / predicted_arrival (ISO 8601 UTC), delay_s (+ late),
    seconds and minutes (until the predicted arrival, or the planned one of a cancelled trip,
    from the feed's clock; minutes rounded down), occupancy_status, status ('previsto' or
    'cancelado').
    """
    pred = (
        view.predictions.filter(pl.col("stop_id") == stop_id)
        .filter(pl.col("predicted_s") >= view.clock_s - 60)
        .sort("block_order")
        .unique(["trip_id", "stop_sequence"], keep="first")
        .join(view.vehicles.select("vehicle_id", "occupancy_status"), on="vehicle_id", how="left")
        .with_columns(pl.lit("previsto").alias("status"))
    )
    canceled = (
        view.canceled.join(stop_times, on="trip_id")
        .filter(pl.col("stop_id") == stop_id)
        .select(
            "trip_id",
            "stop_sequence",
            pl.lit(None, pl.String).alias("vehicle_id"),
            "planned_arrival_s",
            pl.lit(None, pl.Float64).alias("predicted_s"),
            pl.lit(None, pl.String).alias("occupancy_status"),
            pl.lit("cancelado").alias("status"),
        )
    )
    cols = [
        "trip_id",
        "vehicle_id",
        "planned_arrival_s",
        "predicted_s",
        "occupancy_status",
        "status",
    ]
    rows = pred.select(cols)
    if canceled.height:
        rows = pl.concat([rows, canceled.select(cols)], how="vertical_relaxed")

    def iso(col: str) -> pl.Expr:
        return (
            pl.from_epoch(pl.col(col).round().cast(pl.Int64), "s")
            .dt.replace_time_zone("UTC")
            .dt.to_string("%Y-%m-%dT%H:%M:%SZ")
        )

    if trip_names is None:
        trip_names = pl.DataFrame(
            schema={"trip_id": pl.String, "route_short_name": pl.String, "trip_headsign": pl.String}
        )
    out = (
        rows.join(view.descriptors.select("trip_id", "feed_trip_id", "route_id"), on="trip_id")
        .with_columns(pl.coalesce("predicted_s", "planned_arrival_s").alias("_at"))
        .filter(pl.col("_at") >= view.clock_s - 60)
        .sort("_at")
        .head(limit)
        .join(
            trip_names.rename({"trip_id": "feed_trip_id"}),
            on="feed_trip_id",
            how="left",
            maintain_order="left",
        )
        .select(
            pl.col("feed_trip_id").alias("trip_id"),
            "route_id",
            pl.col("route_short_name").fill_null(pl.col("route_id")),
            pl.col("trip_headsign").alias("headsign"),
            "vehicle_id",
            iso("planned_arrival_s").alias("planned_arrival"),
            iso("predicted_s").alias("predicted_arrival"),
            (pl.col("predicted_s") - pl.col("planned_arrival_s"))
            .round()
            .cast(pl.Int32)
            .alias("delay_s"),
            (pl.col("_at") - view.clock_s).round().cast(pl.Int32).alias("seconds"),
            ((pl.col("_at") - view.clock_s) / 60).floor().cast(pl.Int32).alias("minutes"),
            "occupancy_status",
            "status",
        )
    )
    return out.to_dicts()


def build_app(
    engine: FeedSource,
    *,
    cache: FeedCache | None = None,
    cors_origins: tuple[str, ...] = ("*",),
    names: PassengerNames | None = None,
    timezone: str = "UTC",
) -> Starlette:
    """The Starlette application serving `engine`'s live view (feeds encoded through `cache`).

    `names`: the stops' codes and the lines' numbers and headsigns a passenger reads (by
    default the reference's stop names, lines as route_id); `timezone`: the profile's zone,
    of the clock times on the passenger page."""
    cache = cache or FeedCache(engine)
    names = names or build_passenger_names(engine.reference.stops)
    known_stops = set(engine.reference.stops["stop_id"].to_list())
    started = time.time()

    def feed_endpoint(name: str) -> Callable[[Request], Awaitable[Response]]:
        async def endpoint(request: Request) -> Response:
            fmt = "json" if request.query_params.get("format") == "json" else "pb"
            body, etag, modified = cache.get(name, fmt)
            headers = {"ETag": etag, "Last-Modified": modified, "Cache-Control": "no-cache"}
            if request.headers.get("if-none-match") == etag:
                return Response(status_code=304, headers=headers)
            media = "application/json" if fmt == "json" else PROTOBUF
            return Response(body, media_type=media, headers=headers)

        return endpoint

    def stop_arrivals(stop_id: str, limit: int) -> dict[str, Any]:
        view = engine.view
        stop = names.stops.filter(pl.col("stop_id") == stop_id)
        if stop.is_empty():
            stop = engine.reference.stops.filter(pl.col("stop_id") == stop_id)
        row = stop.row(0, named=True)
        return {
            "stop_id": stop_id,
            "stop_name": row["stop_name"],
            "stop_code": row.get("stop_code"),
            "generated_at": datetime.fromtimestamp(view.clock_s, UTC).isoformat(),
            "arrivals": build_stop_arrivals(
                view, engine.reference.stop_times, stop_id, limit, names.trips
            ),
        }

    def arrivals(request: Request) -> Response:
        stop_id = request.path_params["stop_id"]
        if stop_id not in known_stops:
            return JSONResponse(
                {"erro": f"parada desconhecida: {stop_id}", "dica": "use um stop_id do GTFS"},
                status_code=404,
            )
        try:
            limit = max(1, min(int(request.query_params.get("limit", "10")), 100))
        except ValueError:
            limit = 10
        return JSONResponse(stop_arrivals(stop_id, limit), headers={"Cache-Control": "no-cache"})

    def stops(request: Request) -> Response:
        query = request.query_params.get("q", "")
        found = names.stops if not query.strip() else build_stop_search(names.stops, query)
        view = engine.view
        coming = (
            view.predictions.filter(pl.col("predicted_s") >= view.clock_s)
            .unique(["trip_id", "stop_sequence"])
            .group_by("stop_id")
            .agg(pl.len().cast(pl.Int64).alias("n_arrivals"))
        )
        body = (
            found.filter(pl.col("stop_id").is_in(known_stops))
            .select("stop_id", "stop_code", "stop_name")
            .join(coming, on="stop_id", how="left", maintain_order="left")
            .with_columns(pl.col("n_arrivals").fill_null(0))
        )
        return JSONResponse({"stops": body.to_dicts()}, headers={"Cache-Control": "no-cache"})

    def stop_page(request: Request) -> Response:
        stop_id = request.path_params["stop_id"]
        if stop_id not in known_stops:
            return HTMLResponse(to_unknown_stop_page(stop_id), status_code=404)
        api = f"/api/stops/{quote(stop_id, safe='')}/arrivals?limit={STOP_PAGE_ROWS}"
        page = to_stop_page(stop_arrivals(stop_id, STOP_PAGE_ROWS), timezone, api)
        return HTMLResponse(page, headers={"Cache-Control": "no-cache"})

    def stop_search_page(request: Request) -> Response:
        query = request.query_params.get("q", "")[:100]
        found = build_stop_search(names.stops, query).filter(pl.col("stop_id").is_in(known_stops))
        return HTMLResponse(to_stop_search_page(query, found))

    def health(_request: Request) -> Response:
        view = engine.view
        lag = time.time() - view.updated_at_s if view.version else None
        body = {
            "status": "ok",
            "service_date": engine.reference.service_date.isoformat(),
            "version": view.version,
            "feed_clock": datetime.fromtimestamp(view.clock_s, UTC).isoformat()
            if view.version
            else None,
            "seconds_since_update": lag,
            # the trip state (trip updates, alerts, predictions) is refreshed after the
            # positions: the newest fix it has taken in, and how far behind the positions it is
            "trip_state_clock": datetime.fromtimestamp(view.state_clock_s, UTC).isoformat()
            if view.state_version
            else None,
            "trip_state_behind_s": round(view.clock_s - view.state_clock_s, 3)
            if view.state_version
            else None,
            "n_vehicles": view.vehicles.height,
            "n_trips_predicted": view.predictions["trip_id"].n_unique() if view.version else 0,
            "n_canceled": view.canceled.height,
            "uptime_s": round(time.time() - started, 1),
            "timings_ms": view.timings_ms,
        }
        return JSONResponse(body)

    routes = [
        Route(f"/gtfs-rt/{name}.pb", feed_endpoint(name), methods=["GET"]) for name in BUILDERS
    ]
    routes += [
        Route("/api/stops/{stop_id}/arrivals", arrivals, methods=["GET"]),
        Route("/api/stops", stops, methods=["GET"]),
        Route("/paradas", stop_search_page, methods=["GET"]),
        Route("/paradas/{stop_id}", stop_page, methods=["GET"]),
        Route("/health", health, methods=["GET"]),
    ]
    middleware = [
        Middleware(
            CORSMiddleware,
            allow_origins=list(cors_origins),
            allow_methods=["GET"],
            expose_headers=["ETag", "Last-Modified"],
        )
    ]
    return Starlette(routes=routes, middleware=middleware)
