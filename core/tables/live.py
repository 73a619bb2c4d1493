"""Tables of the live feed: what `pontual serve` published (`live_predictions`) and how well it
did once the day was matched (`live_prediction_accuracy`, written by
`analytics.live.accuracy.run_accuracy_day`)."""

import polars as pl

from core.migrations import Migration
from core.schema import UTC_INSTANT, Table, cols, register

SERVICE_DATE = ("service_date", pl.Date(), "service day (local) of the live engine", False)

LIVE_PREDICTIONS = Table(
    "live_predictions",
    "Arrival predictions the live feed published, compactly: per trip, stop and horizon bucket "
    "the first one published in that bucket (later updates in the same bucket are not kept).",
    cols(
        SERVICE_DATE,
        ("trip_id", pl.String(), "scheduled trip of the day", False),
        ("stop_sequence", pl.Int32(), "order of the stop in the trip", False),
        (
            "horizon_min",
            pl.Int16(),
            "bucket of (predicted arrival - publication time), lower bound in minutes "
            "(0, 2, 5, 10, 15, 20, 30, 45, 60, 90)",
            False,
        ),
        ("block_order", pl.Int16(), "0: the vehicle's current trip; 1, 2: its next trips", False),
        ("vehicle_id", pl.String(), "vehicle the prediction follows", False),
        ("made_at", UTC_INSTANT, "when it was published (engine clock, UTC)", False),
        ("predicted_arrival_at", UTC_INSTANT, "published arrival (UTC)", False),
        ("planned_arrival_at", UTC_INSTANT, "timetable arrival (UTC)", False),
    ),
    primary_key=("service_date", "trip_id", "stop_sequence", "horizon_min"),
)

LIVE_PREDICTION_ACCURACY = Table(
    "live_prediction_accuracy",
    "Error of the published arrivals against the matched stop visits (not interpolated), "
    "beside the timetable's, per service day and group: dimension 'horizon' (key = bucket "
    "minutes), 'line' (route_id), 'hour' (local hour of the true arrival) or 'trip' "
    "('current' / 'next').",
    cols(
        SERVICE_DATE,
        ("dimension", pl.String(), "horizon, line, hour or trip", False),
        ("key", pl.String(), "the group within the dimension", False),
        ("n_predictions", pl.Int32(), "logged predictions scored", False),
        ("mae_s", pl.Float64(), "mean absolute error of the published arrival, seconds", False),
        ("p50_s", pl.Float64(), "median absolute error, seconds", False),
        ("p90_s", pl.Float64(), "90th percentile of the absolute error, seconds", False),
        (
            "bias_s",
            pl.Float64(),
            "mean signed error (+: predicted later than true), seconds",
            False,
        ),
        ("timetable_mae_s", pl.Float64(), "the timetable's mean absolute error, seconds", False),
        ("timetable_p50_s", pl.Float64(), "the timetable's median absolute error, seconds", False),
        ("timetable_p90_s", pl.Float64(), "the timetable's 90th percentile, seconds", False),
    ),
    primary_key=("service_date", "dimension", "key"),
    derived=True,
)

register(LIVE_PREDICTIONS, LIVE_PREDICTION_ACCURACY)

# the version is the next free one on this branch: helpers landing in parallel may have taken
# it; renumber at merge (migrations are 1..N without gaps)
MIGRATION: Migration | None = Migration(
    9,
    "live: live_predictions, live_prediction_accuracy",
    tables=("live_predictions", "live_prediction_accuracy"),
)
