"""The network map (Linhas) and the routes under the live map (Ao vivo): the itinerary of each
line, and what colours it over a period.

Reads `scheduled_trips` (which itinerary each scheduled trip runs) with `gtfs_shapes`, and
`trip_crowding` (runs over the crowding limit per line). The punctuality per line comes from
`dashboard.queries.lines.build_line_ranking`.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date

import polars as pl

from core.store import Store
from dashboard.queries.snapshot import build_selection

SHAPE_POINTS_SCHEMA = {
    "route_id": pl.String,
    "direction_id": pl.Int32,
    "shape_id": pl.String,
    "lat": pl.Float64,
    "lon": pl.Float64,
}
"""Columns of `read_route_shapes`."""

MAX_POINTS_PER_SHAPE = 400
"""A map needs no more points a line than this (a thinned shape keeps its first and last)."""


def read_route_shapes(
    store: Store,
    start: date | None,
    end: date | None,
    route_ids: Sequence[str] | None,
    direction: int | None,
) -> pl.DataFrame:
    """The itineraries of the trips scheduled in [start, end] (both None: on the latest
    scheduled day) on the lines `route_ids` (None: all) and `direction` (0/1; None: both):
    one row per point, `route_id`, `direction_id`, `shape_id`, `lat`, `lon`, in shape order,
    at most `MAX_POINTS_PER_SHAPE` points a shape."""
    if route_ids is not None and not route_ids:
        return pl.DataFrame(schema=SHAPE_POINTS_SCHEMA)
    if start is None or end is None:
        where = ["t.service_date = (SELECT max(service_date) FROM scheduled_trips)"]
        params: list[object] = []
    else:
        where, params = ["t.service_date BETWEEN ? AND ?"], [start, end]
    if route_ids is not None:
        where.append(f"t.route_id IN ({', '.join('?' for _ in route_ids)})")
        params += list(route_ids)
    if direction is not None:
        where.append("t.direction_id = ?")
        params.append(direction)
    return store.query(
        "WITH used AS (SELECT DISTINCT t.feed_id, t.route_id, t.direction_id, t.shape_id "
        f"FROM scheduled_trips t WHERE {' AND '.join(where)} AND t.shape_id IS NOT NULL), "
        "points AS (SELECT u.route_id, u.direction_id, u.shape_id, p.shape_pt_sequence, "
        "p.shape_pt_lat AS lat, p.shape_pt_lon AS lon, row_number() OVER w - 1 AS i, "
        "count(*) OVER (PARTITION BY u.feed_id, u.route_id, u.shape_id) AS n "
        "FROM used u JOIN gtfs_shapes p ON p.feed_id = u.feed_id AND p.shape_id = u.shape_id "
        "WINDOW w AS (PARTITION BY u.feed_id, u.route_id, u.shape_id "
        "ORDER BY p.shape_pt_sequence)) "
        "SELECT route_id, direction_id::INTEGER AS direction_id, shape_id, lat, lon FROM points "
        f"WHERE i % greatest(1, ceil(n / {MAX_POINTS_PER_SHAPE})::BIGINT) = 0 OR i = n - 1 "
        "ORDER BY route_id, shape_id, shape_pt_sequence",
        params,
    ).cast(SHAPE_POINTS_SCHEMA)  # type: ignore[arg-type]


def read_line_crowding(
    store: Store, start: date, end: date, route_ids: Sequence[str] | None
) -> pl.DataFrame:
    """Runs over the crowding limit per line in [start, end] (`trip_crowding`): `route_id`,
    `n_trips` (runs with a known capacity), `n_over_limit`, `over_limit_share` (0-1)."""
    selection = build_selection(start, end, route_ids, None)
    if selection is None:
        return pl.DataFrame()
    where, params = selection
    where.append("is_over_limit IS NOT NULL")
    return store.query(
        "SELECT route_id, count(*)::INTEGER AS n_trips, "
        "sum(is_over_limit::INTEGER)::INTEGER AS n_over_limit, "
        "avg(is_over_limit::INTEGER) AS over_limit_share "
        f"FROM trip_crowding WHERE {' AND '.join(where)} GROUP BY route_id ORDER BY route_id",
        params,
    )


def build_shape_paths(points: pl.DataFrame) -> pl.DataFrame:
    """One row per itinerary of `read_route_shapes`: `route_id`, `direction_id`, `shape_id`,
    `path` (list of [lon, lat], what a deck.gl PathLayer draws)."""
    if points.is_empty():
        return pl.DataFrame(
            schema={
                "route_id": pl.String,
                "direction_id": pl.Int32,
                "shape_id": pl.String,
                "path": pl.List(pl.List(pl.Float64)),
            }
        )
    return (
        points.group_by("route_id", "direction_id", "shape_id", maintain_order=True)
        .agg(pl.concat_list("lon", "lat").alias("path"))
        .sort("route_id", "shape_id")
    )
