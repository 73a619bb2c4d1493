"""Viagem: one trip, from the timetable to the pings behind its verdict.

Reads `trip_outcomes` (the day's trips of a line, one trip's verdict), `vehicle_locations`
(the run's pings), `scheduled_trips` with `gtfs_shapes`, `gtfs_stop_times`, `gtfs_stops` and
`stop_visits` (itinerary, planned and observed stop times), `incidents` and `breakdowns`.
"""

from __future__ import annotations

from datetime import date

import polars as pl

from core.store import Store
from core.texts import N_, Labels
from core.texts import gettext as _
from dashboard.queries.snapshot import select_rows

EVIDENCE_LABELS = Labels(
    {
        "gps": N_("GPS (observed)"),
        "gps_gap_credited": N_("GPS with a credited gap"),
        "ticketing": N_("electronic ticketing (no usable GPS)"),
        "inspection": N_("on-site inspection"),
        "none": N_("none (evidence)"),
    }
)
"""`trip_outcomes.evidence_class` as the trip page names it: what the outcome rests on
(BG art. 57 §2: ticketing data and in-loco inspections; art. 77: records as evidence)."""


def to_evidence_text(row: dict) -> str:
    """One line on what a trip outcome rests on: its evidence class, the share of its planned
    minutes with a GPS fix and with the operator's feed up, and a credited GPS silence when
    there is one (`gps_gap_s`, `gps_gap_m`, where the store has them)."""
    from dashboard.format import to_integer, to_percent

    cls = row.get("evidence_class")
    parts = [_("Evidence: {evidence}", evidence=EVIDENCE_LABELS.get(cls, cls) if cls else "—")]
    if row.get("gps_minutes_share") is not None:
        parts.append(
            _("GPS on {share} of the scheduled minutes", share=to_percent(row["gps_minutes_share"]))
        )
    if row.get("feed_up_share") is not None:
        parts.append(_("operator's feed up {share}", share=to_percent(row["feed_up_share"])))
    if row.get("gps_gap_s"):
        parts.append(
            _(
                "credited GPS gap: {minutes} min, {metres} m",
                minutes=to_integer(row["gps_gap_s"] / 60),
                metres=to_integer(row.get("gps_gap_m") or 0),
            )
        )
    return " · ".join(parts)


def read_trip_ids(store: Store, service_date: date, route_id: str) -> pl.DataFrame:
    """The trips of a line on a day: `trip_id`, `planned_start_at`, `outcome`."""
    return select_rows(
        store,
        "trip_outcomes",
        {"service_date": service_date, "route_id": route_id},
        order_by=("planned_start_at",),
        columns=("trip_id", "planned_start_at", "outcome", "direction_id"),
    )


def read_trip_outcome(store: Store, service_date: date, trip_id: str) -> pl.DataFrame:
    """The `trip_outcomes` row of one trip (0 or 1 row)."""
    return select_rows(store, "trip_outcomes", {"service_date": service_date, "trip_id": trip_id})


def read_trip_pings(
    store: Store, vehicle_id: str | None, first_ping_id: int | None, last_ping_id: int | None
) -> pl.DataFrame:
    """The pings of the run behind a trip outcome (its evidence ids first..last ping of its
    vehicle): `ping_id`, `event_at`, `lat`, `lon`, `speed_m_s`, `event_code`."""
    if vehicle_id is None or first_ping_id is None or last_ping_id is None:
        return pl.DataFrame()
    return store.query(
        "SELECT ping_id, event_at, lat, lon, speed_m_s, event_code FROM vehicle_locations "
        "WHERE vehicle_id = ? AND ping_id BETWEEN ? AND ? ORDER BY event_at",
        [vehicle_id, first_ping_id, last_ping_id],
    )


def read_trip_shape(store: Store, service_date: date, trip_id: str) -> pl.DataFrame:
    """The itinerary of a scheduled trip: `lat`, `lon`, `dist_m`, in order."""
    return store.query(
        "SELECT p.shape_pt_lat AS lat, p.shape_pt_lon AS lon, p.shape_dist_m AS dist_m "
        "FROM scheduled_trips s JOIN gtfs_shapes p "
        "ON p.feed_id = s.feed_id AND p.shape_id = s.shape_id "
        "WHERE s.service_date = ? AND s.trip_id = ? ORDER BY p.shape_pt_sequence",
        [service_date, trip_id],
    )


def read_trip_stops(store: Store, service_date: date, trip_id: str) -> pl.DataFrame:
    """The itinerary's stops with the timetable and, where run, the observed times:
    `stop_sequence`, `stop_id`, `stop_name`, `lat`, `lon`, `dist_m`, `planned_at` (UTC),
    `arrival_at` (UTC, null when not reached), `delay_s` (arrival minus planned, seconds),
    `is_interpolated`."""
    # The visits of the counted run of the trip (trip_outcomes names it) when several runs
    # served it.
    return store.query(
        "SELECT t.stop_sequence, t.stop_id, st.stop_name, st.stop_lat AS lat, st.stop_lon AS lon,"
        " t.shape_dist_m AS dist_m, s.planned_start_at + to_seconds("
        "coalesce(t.arrival_time_s, t.departure_time_s) - s.planned_start_s) AS planned_at, "
        "v.arrival_at, v.arrival_delay_s AS delay_s, v.is_interpolated "
        "FROM scheduled_trips s JOIN gtfs_stop_times t "
        "ON t.feed_id = s.feed_id AND t.trip_id = s.template_trip_id "
        "LEFT JOIN gtfs_stops st ON st.feed_id = t.feed_id AND st.stop_id = t.stop_id "
        "LEFT JOIN (SELECT v.* FROM stop_visits v JOIN trip_outcomes o "
        "USING (service_date, trip_id, vehicle_id, run_index) "
        "WHERE v.service_date = ? AND v.trip_id = ?) v ON v.stop_sequence = t.stop_sequence "
        "WHERE s.service_date = ? AND s.trip_id = ? ORDER BY t.stop_sequence",
        [service_date, trip_id, service_date, trip_id],
    )


def read_incident(store: Store, incident_id: str | None) -> pl.DataFrame:
    """The incident that justifies a trip (0 or 1 row)."""
    if not incident_id:
        return pl.DataFrame()
    return select_rows(store, "incidents", {"incident_id": incident_id})


def read_trip_breakdowns(store: Store, service_date: date, trip_id: str) -> pl.DataFrame:
    """`breakdowns` rows that interrupted one trip."""
    return select_rows(store, "breakdowns", {"service_date": service_date, "trip_id": trip_id})
