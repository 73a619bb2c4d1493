"""The live state as GTFS-Realtime frames and messages (encoded by `gtfs.realtime`).

Trip descriptors carry the GTFS trip id (the template of a frequency-based trip, whose start
is then told by `start_time`), the route, the direction and the service date, so every id in
the feed exists in the loaded GTFS.
"""

from __future__ import annotations

from datetime import date
from typing import Any

import polars as pl
from google.transit import gtfs_realtime_pb2 as rt

from gtfs.realtime import new_feed

# incident kind -> (GTFS-RT cause, effect); kinds not listed give no alert
ALERT_KINDS: dict[str, tuple[str, str]] = {
    "detour": ("CONSTRUCTION", "DETOUR"),
    "obstruction": ("ACCIDENT", "SIGNIFICANT_DELAYS"),
    "accident": ("ACCIDENT", "SIGNIFICANT_DELAYS"),
    "weather": ("WEATHER", "SIGNIFICANT_DELAYS"),
}
ALERT_TEXT_PT = {
    "detour": "Desvio de itinerário",
    "obstruction": "Via obstruída: atrasos",
    "accident": "Acidente: atrasos",
    "weather": "Condições do tempo: atrasos",
}


def trip_descriptor_columns(trips: pl.DataFrame, service_date: date) -> pl.DataFrame:
    """Per scheduled trip: the GTFS-RT trip descriptor fields.

    Output: trip_id (the day's trip), feed_trip_id (GTFS trip id), route_id, direction_id,
    start_date (YYYYMMDD of the trip's own service day: the day before for a trip running
    past midnight; `service_date` where the frame has no service_date column), start_time
    (HH:MM:SS after the service-day reference, may pass 24).
    """
    s = pl.col("planned_start_s")
    hms = pl.format(
        "{}:{}:{}",
        (s // 3600).cast(pl.String).str.zfill(2),
        (s % 3600 // 60).cast(pl.String).str.zfill(2),
        (s % 60).cast(pl.String).str.zfill(2),
    )
    return trips.select(
        "trip_id",
        pl.col("template_trip_id").alias("feed_trip_id"),
        "route_id",
        "direction_id",
        (
            pl.col("service_date").dt.strftime("%Y%m%d")
            if "service_date" in trips.columns
            else pl.lit(service_date.strftime("%Y%m%d"))
        ).alias("start_date"),
        hms.alias("start_time"),
    )


def build_vehicle_position_frame(vehicles: pl.DataFrame, descriptors: pl.DataFrame) -> pl.DataFrame:
    """Rows of `gtfs.realtime.VEHICLE_POSITION_COLUMNS` from the engine's vehicle state.

    `vehicles`: vehicle_id, trip_id (null: not on a trip), lat, lon, heading_deg, speed_m_s,
    t_s, next_stop_sequence, next_stop_id, occupancy_status, occupancy_percentage.
    """
    return vehicles.join(descriptors, on="trip_id", how="left").select(
        pl.col("vehicle_id").alias("entity_id"),
        "vehicle_id",
        pl.col("feed_trip_id").alias("trip_id"),
        pl.when(pl.col("feed_trip_id").is_not_null()).then("route_id").alias("route_id"),
        "direction_id",
        "start_date",
        "start_time",
        pl.when(pl.col("feed_trip_id").is_not_null())
        .then(pl.lit("SCHEDULED"))
        .alias("schedule_relationship"),
        "lat",
        "lon",
        pl.col("heading_deg").alias("bearing_deg"),
        "speed_m_s",
        pl.col("next_stop_sequence").cast(pl.Int64).alias("current_stop_sequence"),
        pl.col("next_stop_id").alias("stop_id"),
        pl.when(pl.col("next_stop_id").is_not_null())
        .then(pl.lit("IN_TRANSIT_TO"))
        .alias("current_status"),
        pl.col("t_s").round().cast(pl.Int64).alias("timestamp_s"),
        "occupancy_status",
        "occupancy_percentage",
    )


def select_published_predictions(predictions: pl.DataFrame) -> pl.DataFrame:
    """Keep each trip's predictions from one vehicle: the one running it, else the nearest in
    its block (lowest block_order, then vehicle id). What the TripUpdates feed publishes."""
    return (
        predictions.sort("block_order", "vehicle_id")
        .with_columns(pl.col("vehicle_id").first().over("trip_id").alias("_owner"))
        .filter(pl.col("vehicle_id") == pl.col("_owner"))
        .drop("_owner")
    )


def build_trip_update_frames(
    predictions: pl.DataFrame,
    positions: pl.DataFrame,
    canceled: pl.DataFrame,
    descriptors: pl.DataFrame,
    clock_s: float,
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """The trips and stop-time-updates frames of `gtfs.realtime.build_trip_updates`.

    `predictions`: `compute_stop_predictions` (one trip kept once: the vehicle running it, or
    the nearest in its block); `positions`: vehicle_id, trip_id, delay_s; `canceled`: trip_id.
    Stop arrivals are the `predicted_s` rounded to the second, delays against the timetable;
    `arrival_uncertainty_s` is the predictions' `uncertainty_s` where they carry it (null:
    unknown).
    """
    pred = select_published_predictions(predictions)
    trips = (
        pred.group_by("trip_id", "vehicle_id")
        .agg(pl.col("block_order").min())
        .join(
            positions.select("vehicle_id", "trip_id", "delay_s"),
            on=["vehicle_id", "trip_id"],
            how="left",
        )
        .join(descriptors, on="trip_id")
        .sort("trip_id")
        .select(
            pl.concat_str("feed_trip_id", "start_date", "start_time", separator="|").alias(
                "entity_id"
            ),
            pl.col("feed_trip_id").alias("trip_id"),
            "route_id",
            "direction_id",
            "start_date",
            "start_time",
            pl.lit("SCHEDULED").alias("schedule_relationship"),
            "vehicle_id",
            pl.lit(None, pl.String).alias("vehicle_label"),
            pl.lit(int(clock_s), pl.Int64).alias("timestamp_s"),
            pl.col("delay_s").round().cast(pl.Int32).alias("delay_s"),
            pl.col("trip_id").alias("_trip"),
        )
    )
    stops = (
        pred.join(trips.select("_trip", "entity_id"), left_on="trip_id", right_on="_trip")
        .select(
            "entity_id",
            pl.col("stop_sequence").cast(pl.Int64),
            "stop_id",
            pl.col("predicted_s").round().cast(pl.Int64).alias("arrival_time_s"),
            (pl.col("predicted_s") - pl.col("planned_arrival_s"))
            .round()
            .cast(pl.Int32)
            .alias("arrival_delay_s"),
            pl.lit(None, pl.Int64).alias("departure_time_s"),
            pl.lit(None, pl.Int32).alias("departure_delay_s"),
            pl.lit("SCHEDULED").alias("schedule_relationship"),
            (
                pl.col("uncertainty_s").round().cast(pl.Int32)
                if "uncertainty_s" in pred.columns
                else pl.lit(None, pl.Int32)
            ).alias("arrival_uncertainty_s"),
        )
        .sort("entity_id", "stop_sequence")
    )
    cancel = (
        canceled.select("trip_id")
        .join(descriptors, on="trip_id")
        .select(
            pl.concat_str("feed_trip_id", "start_date", "start_time", separator="|").alias(
                "entity_id"
            ),
            pl.col("feed_trip_id").alias("trip_id"),
            "route_id",
            "direction_id",
            "start_date",
            "start_time",
            pl.lit("CANCELED").alias("schedule_relationship"),
            pl.lit(None, pl.String).alias("vehicle_id"),
            pl.lit(None, pl.String).alias("vehicle_label"),
            pl.lit(int(clock_s), pl.Int64).alias("timestamp_s"),
            pl.lit(None, pl.Int32).alias("delay_s"),
        )
    )
    return pl.concat([trips.drop("_trip"), cancel], how="vertical_relaxed"), stops


def build_alerts_feed(incidents: pl.DataFrame, clock_s: float, descriptors: pl.DataFrame) -> Any:
    """A FULL_DATASET Alerts FeedMessage from the incidents active at `clock_s`.

    Detours and obstructions (and accidents, weather) become alerts on their route and, when
    given, their trip; header and description in pt-BR. Incidents are few: one entity each.
    """
    feed = new_feed(int(clock_s))
    at = pl.from_epoch(pl.lit(int(clock_s * 1e6)), "us").dt.replace_time_zone("UTC")
    active = incidents.filter(
        (pl.col("starts_at") <= at)
        & (pl.col("ends_at") >= at)
        & pl.col("kind").is_in(list(ALERT_KINDS))
    ).join(
        descriptors.select("trip_id", "feed_trip_id", "start_date", "start_time"),
        on="trip_id",
        how="left",
    )
    for row in active.sort("incident_id").iter_rows(named=True):
        entity = feed.entity.add()
        entity.id = row["incident_id"]
        alert = entity.alert
        period = alert.active_period.add()
        period.start = int(row["starts_at"].timestamp())
        period.end = int(row["ends_at"].timestamp())
        cause, effect = ALERT_KINDS[row["kind"]]
        alert.cause = rt.Alert.Cause.Value(cause)
        alert.effect = rt.Alert.Effect.Value(effect)
        informed = alert.informed_entity.add()
        if row["route_id"] is not None:
            informed.route_id = row["route_id"]
        if row["feed_trip_id"] is not None:
            informed.trip.trip_id = row["feed_trip_id"]
            informed.trip.start_date = row["start_date"]
            informed.trip.start_time = row["start_time"]
        header = ALERT_TEXT_PT[row["kind"]]
        if row["route_id"] is not None:
            header += f" na linha {row['route_id']}"
        text = alert.header_text.translation.add()
        text.text, text.language = header, "pt-BR"
        if row["note"]:
            note = alert.description_text.translation.add()
            note.text, note.language = str(row["note"]), "pt-BR"
    return feed
