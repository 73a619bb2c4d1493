"""Linhas: what each line did over the period and on one day.

Reads `trip_outcomes` (counts per outcome, the day's trips, departure delays; also every
column for the reports), `scheduled_trips` with `gtfs_stop_times` and `stop_visits` (the
time-distance diagram), `headway_observations` (waits at frequent lines) with `stop_visits`
(bunching at the stops of frequent lines, `analytics.matching.headways.compute_bunching`).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date
from typing import Any

import polars as pl

from analytics.matching.headways import compute_bunching
from core.store import Store
from core.tables.matching import RUN_OUTCOMES
from core.texts import N_, Labels
from core.texts import gettext as _
from dashboard.queries.snapshot import build_selection, select_rows

OUTCOME_LABELS = Labels(
    {
        "on_time": N_("on time"),
        "late": N_("late (trip)"),
        "early": N_("early (trip)"),
        "partial": N_("partial (trip)"),
        "suppressed": N_("suppressed (trip)"),
        "broken_down": N_("breakdown (trip)"),
        "not_evaluated": N_("not evaluated — no data"),
    }
)
"""Trip outcomes in the laws' words (BG art. 57-I)."""


def read_outcome_counts(
    store: Store, start: date, end: date, route_ids: Sequence[str] | None, direction: int | None
) -> pl.DataFrame:
    """Trip outcomes per line over [start, end]: `route_id`, `n_programmed`, one `n_<outcome>`
    column per outcome, `n_justified` (trips covered by an approved incident)."""
    selection = build_selection(start, end, route_ids, direction)
    if selection is None:
        return pl.DataFrame()
    where, params = selection
    counts = ", ".join(f"count(*) FILTER (WHERE outcome = '{o}') AS n_{o}" for o in OUTCOME_LABELS)
    return store.query(
        f"SELECT route_id, count(*) AS n_programmed, {counts}, "
        "count(*) FILTER (WHERE is_justified) AS n_justified "
        f"FROM trip_outcomes WHERE {' AND '.join(where)} GROUP BY route_id ORDER BY route_id",
        params,
    )


def build_line_ranking(counts: pl.DataFrame) -> pl.DataFrame:
    """Lines of the period, worst first, from `read_outcome_counts`: `route_id`,
    `n_programmed`, `n_evaluated` (programmed minus not evaluated: unobserved is not failed),
    `n_run` (on time, late or early: the ICV's numerator), `n_suppressed`, `n_partial`,
    `fulfilment` (n_run / n_evaluated, 0-1, null when nothing was evaluated), `punctuality`
    (n_on_time / n_run) and `evaluated_share` (n_evaluated / n_programmed). Sorted by
    fulfilment (lowest first, lines without evaluated trips last), then by line."""
    if counts.is_empty():
        return pl.DataFrame()
    run = pl.sum_horizontal(f"n_{o}" for o in RUN_OUTCOMES)
    evaluated = pl.col("n_programmed") - pl.col("n_not_evaluated")
    return counts.select(
        "route_id",
        "n_programmed",
        evaluated.alias("n_evaluated"),
        run.alias("n_run"),
        "n_suppressed",
        "n_partial",
        (run / pl.when(evaluated > 0).then(evaluated)).alias("fulfilment"),
        (pl.col("n_on_time") / pl.when(run > 0).then(run)).alias("punctuality"),
        (evaluated / pl.when(pl.col("n_programmed") > 0).then(pl.col("n_programmed"))).alias(
            "evaluated_share"
        ),
    ).sort(["fulfilment", "route_id"], nulls_last=True)


def to_trip_link(service_date: date, trip_id: str) -> str:
    """The trip page's address for one trip (what the tables link to)."""
    return f"viagem?data={service_date.isoformat()}&viagem={trip_id}"


def read_service_dates(store: Store, start: date, end: date) -> list[date]:
    """Service days with trip outcomes inside [start, end], newest first."""
    rows = store.query(
        "SELECT DISTINCT service_date FROM trip_outcomes WHERE service_date BETWEEN ? AND ? "
        "ORDER BY service_date DESC",
        [start, end],
    )
    return list(rows["service_date"].to_list())


def read_day_outcomes(
    store: Store, service_date: date, route_id: str, direction: int | None
) -> pl.DataFrame:
    """The `trip_outcomes` rows of one line on one day, in planned order."""
    return select_rows(
        store,
        "trip_outcomes",
        {"service_date": service_date, "route_id": route_id, "direction_id": direction},
        order_by=("planned_start_at",),
    )


def read_marey(
    store: Store, service_date: date, route_id: str, direction: int | None
) -> pl.DataFrame:
    """Time–distance points of a line's day: `trip_id`, `kind` ('programada' or 'realizada'),
    `at` (UTC instant), `dist_km` (distance along the itinerary, km), `vehicle_id` (null for
    the timetable), `direction_id` and `outcome` (the trip's outcome; null when the trip has
    none yet).

    Scheduled points come from the timetable (service-day reference = planned start instant
    minus planned start seconds, plus each stop time); actual points from `stop_visits`.
    """
    frames = []
    params: list[Any] = [service_date, service_date, route_id]
    dir_sql = ""
    if direction is not None:
        dir_sql = " AND s.direction_id = ?"
        params.append(direction)
    frames.append(
        store.query(
            "SELECT s.trip_id, 'programada' AS kind, "
            "s.planned_start_at + to_seconds(coalesce(t.arrival_time_s, t.departure_time_s)"
            " - s.planned_start_s) AS at, t.shape_dist_m / 1000.0 AS dist_km, "
            "NULL::VARCHAR AS vehicle_id, s.direction_id, o.outcome "
            "FROM scheduled_trips s JOIN gtfs_stop_times t "
            "ON t.feed_id = s.feed_id AND t.trip_id = s.template_trip_id "
            "LEFT JOIN (SELECT trip_id, any_value(outcome) AS outcome FROM trip_outcomes "
            "WHERE service_date = ? GROUP BY trip_id) o ON o.trip_id = s.trip_id "
            "WHERE s.service_date = ? AND s.route_id = ?" + dir_sql + " "
            "AND t.shape_dist_m IS NOT NULL",
            params,
        )
    )
    frames.append(
        store.query(
            "SELECT v.trip_id, 'realizada' AS kind, coalesce(v.arrival_at, v.departure_at)"
            " AS at, v.stop_dist_m / 1000.0 AS dist_km, v.vehicle_id, s.direction_id, "
            "s.outcome FROM stop_visits v JOIN trip_outcomes s "
            "ON s.service_date = v.service_date AND s.trip_id = v.trip_id "
            "AND s.vehicle_id = v.vehicle_id AND s.run_index = v.run_index "
            "WHERE v.service_date = ? AND s.route_id = ?" + dir_sql + " "
            "AND coalesce(v.arrival_at, v.departure_at) IS NOT NULL",
            params[1:],
        )
    )
    frames = [f for f in frames if f.height]
    if not frames:
        return pl.DataFrame()
    return pl.concat(frames, how="vertical_relaxed").sort("kind", "trip_id", "at")


def read_line_breakdowns(store: Store, service_date: date, route_id: str) -> pl.DataFrame:
    """Breakdowns on a line's trips that day: `trip_id`, `vehicle_id`, `started_at` (UTC)."""
    return store.query(
        "SELECT b.trip_id, b.vehicle_id, b.started_at FROM breakdowns b "
        "JOIN (SELECT DISTINCT trip_id FROM trip_outcomes WHERE service_date = ? "
        "AND route_id = ?) t USING (trip_id) WHERE b.service_date = ? ORDER BY b.started_at",
        [service_date, route_id, service_date],
    )


def build_marey_markers(points: pl.DataFrame, breakdowns: pl.DataFrame) -> pl.DataFrame:
    """Where each breakdown sits on the Marey diagram: `trip_id`, `at`, `dist_km` (the run's
    position at the last stop visit before it), `direction_id`, `label` ('quebra')."""
    run = points.filter(pl.col("kind") == "realizada")
    if breakdowns.is_empty() or run.is_empty():
        return pl.DataFrame()
    placed = breakdowns.sort("started_at").join_asof(
        run.select("trip_id", "at", "dist_km", "direction_id").sort("at"),
        left_on="started_at",
        right_on="at",
        by="trip_id",
        strategy="backward",
        check_sortedness=False,  # sorted by time above; polars cannot check it per trip
    )
    return placed.drop_nulls("dist_km").select(
        "trip_id",
        pl.col("started_at").alias("at"),
        "dist_km",
        "direction_id",
        pl.lit("quebra").alias("label"),
    )


def build_run_times(points: pl.DataFrame, timezone: str) -> pl.DataFrame:
    """Run time by local hour of the planned start, planned against run (complete trips only:
    on time, late or early): `hour` (0-23), `kind`, `run_time_min` (median, minutes),
    `n_trips`."""
    if points.is_empty():
        return pl.DataFrame()
    per_trip = (
        points.filter(
            (pl.col("kind") == "programada") | pl.col("outcome").is_in(["on_time", "late", "early"])
        )
        .group_by("kind", "trip_id")
        .agg(((pl.col("at").max() - pl.col("at").min()).dt.total_seconds() / 60).alias("minutes"))
    )
    starts = (
        points.filter(pl.col("kind") == "programada")
        .group_by("trip_id")
        .agg(pl.col("at").min().dt.convert_time_zone(timezone).dt.hour().alias("hour"))
    )
    return (
        per_trip.join(starts, on="trip_id")
        .group_by("hour", "kind")
        .agg(pl.col("minutes").median().alias("run_time_min"), pl.len().alias("n_trips"))
        .sort("hour", "kind")
    )


def read_headways(store: Store, start: date, end: date, route_id: str) -> pl.DataFrame:
    """`headway_observations` of one line over [start, end] (frequent lines only)."""
    return select_rows(
        store,
        "headway_observations",
        {"route_id": route_id},
        between=("service_date", start, end),
        order_by=("service_date", "direction_id", "hour_at"),
    )


def read_bunching(
    store: Store, start: date, end: date, route_id: str, max_ratio: float
) -> pl.DataFrame:
    """Bunching at the stops of one line over [start, end], in its frequent hours: the rows of
    `compute_bunching` (one per judged stop visit: `headway_s` since the previous vehicle at
    that stop, `scheduled_headway_s`, `is_bunched` when below `max_ratio` of it). Empty when
    the line has no headway observations in the period."""
    planned = read_headways(store, start, end, route_id)
    if planned.is_empty():
        return pl.DataFrame()
    visits = store.query(
        "SELECT v.service_date, s.route_id, s.direction_id, v.stop_id, v.trip_id, v.vehicle_id, "
        "s.planned_start_at, coalesce(v.departure_at, v.arrival_at) AS at, v.stop_dist_m "
        "FROM stop_visits v JOIN trip_outcomes s ON s.service_date = v.service_date "
        "AND s.trip_id = v.trip_id AND s.vehicle_id = v.vehicle_id AND s.run_index = v.run_index "
        "WHERE v.service_date IN (SELECT DISTINCT service_date FROM headway_observations "
        "WHERE route_id = ? AND service_date BETWEEN ? AND ?) AND s.route_id = ? "
        "AND coalesce(v.departure_at, v.arrival_at) IS NOT NULL",
        [route_id, start, end, route_id],
    )
    return compute_bunching(visits, planned, max_ratio)


def build_bunching_markers(bunching: pl.DataFrame, service_date: date) -> pl.DataFrame:
    """Where each bunched pair of `service_date` starts on the Marey diagram (the follower's
    first bunched stop): `trip_id`, `at`, `dist_km`, `direction_id`, `label` ('comboio com
    <leader vehicle>'), the columns of `build_marey_markers`."""
    if bunching.is_empty():
        return pl.DataFrame()
    day = bunching.filter(pl.col("is_bunched") & (pl.col("service_date") == service_date))
    if day.is_empty():
        return pl.DataFrame()
    return (
        day.sort("at")
        .group_by("trip_id", "leader_trip_id", maintain_order=True)
        .first()
        .select(
            "trip_id",
            "at",
            (pl.col("stop_dist_m") / 1000.0).alias("dist_km"),
            "direction_id",
            pl.format(_("bunched behind vehicle {}"), pl.col("leader_vehicle_id")).alias("label"),
        )
    )


def read_delays(
    store: Store, start: date, end: date, route_id: str, direction: int | None
) -> pl.DataFrame:
    """Origin departure delays of a line's run trips over [start, end]: `delay_min` (+ late)."""
    frame = select_rows(
        store,
        "trip_outcomes",
        {"route_id": route_id, "direction_id": direction},
        between=("service_date", start, end),
        columns=("departure_delay_s",),
    )
    if frame.is_empty():
        return pl.DataFrame()
    return frame.drop_nulls().select((pl.col("departure_delay_s") / 60.0).alias("delay_min"))


def read_outcomes(store: Store, start: date, end: date) -> pl.DataFrame:
    """Every `trip_outcomes` column (declared dtypes) of the service days [start, end], by
    day and trip: what the reports count (the ICV flags need them all)."""
    return store.read("trip_outcomes", "service_date BETWEEN ? AND ?", [start, end]).sort(
        "service_date", "trip_id"
    )
