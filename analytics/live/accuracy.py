"""Self-scored accuracy of the live feed: what it published, against what happened.

`PredictionLog` keeps, for every (trip, stop, horizon bucket), the first arrival the TripUpdates
feed published in that bucket (`live_predictions`: a day is at most trips x stops x 10 rows,
whatever the update rate). The next day, once `pontual match` has written the day's
`stop_visits`, `run_accuracy_day` scores the log against the observed (not interpolated)
arrivals, beside the timetable alone: MAE and percentiles by horizon, line, hour of day and
current vs next trips (`live_prediction_accuracy`). Each logged prediction counts once, so a
trip updated every second weighs no more than one updated every minute.
"""

from __future__ import annotations

import threading
from datetime import date, datetime

import polars as pl

from analytics.live.feeds import select_published_predictions
from core import __version__
from core.schema import table
from core.store import Store

HORIZON_BUCKETS_MIN = (0, 2, 5, 10, 15, 20, 30, 45, 60, 90)


def _at(seconds: pl.Expr) -> pl.Expr:
    return pl.from_epoch((seconds * 1e6).round().cast(pl.Int64), "us").dt.replace_time_zone("UTC")


def horizon_bucket(horizon_s: pl.Expr) -> pl.Expr:
    """The lower bound (minutes, Int16) of the `HORIZON_BUCKETS_MIN` bucket of a horizon."""
    minutes = horizon_s / 60.0
    bucket = pl.lit(0, pl.Int16)
    for lower in HORIZON_BUCKETS_MIN[1:]:
        bucket = pl.when(minutes >= lower).then(pl.lit(lower, pl.Int16)).otherwise(bucket)
    return bucket


def read_uncertainty(store: Store, before: date, min_predictions: int = 30) -> pl.DataFrame:
    """What the feed knows of its own error: per horizon bucket of the latest scored day
    before `before`, the median absolute error (horizon_min, uncertainty_s, seconds).

    Only buckets scored on at least `min_predictions` predictions: elsewhere (a fresh city,
    a thin bucket) the uncertainty stays unknown, as GTFS-RT reads an absent field.
    """
    return store.query(
        "SELECT CAST(key AS SMALLINT) AS horizon_min, p50_s AS uncertainty_s "
        "FROM live_prediction_accuracy WHERE dimension = 'horizon' AND n_predictions >= ? "
        "AND service_date = (SELECT max(service_date) FROM live_prediction_accuracy "
        "WHERE service_date < ?) ORDER BY 1",
        [min_predictions, before],
    )


def build_prediction_log_rows(
    predictions: pl.DataFrame, clock_s: float, service_date: date
) -> pl.DataFrame:
    """`live_predictions` rows of one published view.

    `predictions`: the engine's `PREDICTION_COLUMNS` (the vehicle kept per trip is the one the
    feed publishes); `clock_s`: the view's clock (epoch s). Arrivals predicted before the
    clock are not predictions any more and are left out; one row per (trip, stop, bucket).
    """
    published = select_published_predictions(predictions)
    bucket = horizon_bucket(pl.col("predicted_s") - clock_s)
    return (
        published.filter(pl.col("predicted_s") >= clock_s)
        .select(
            pl.lit(service_date).alias("service_date"),
            "trip_id",
            pl.col("stop_sequence").cast(pl.Int32),
            bucket.alias("horizon_min"),
            pl.col("block_order").cast(pl.Int16),
            "vehicle_id",
            _at(pl.lit(clock_s)).alias("made_at"),
            _at(pl.col("predicted_s")).alias("predicted_arrival_at"),
            _at(pl.col("planned_arrival_s")).alias("planned_arrival_at"),
        )
        .unique(["trip_id", "stop_sequence", "horizon_min"], keep="first", maintain_order=True)
    )


class PredictionLog:
    """The log of one service day: `record` each published view (any thread), `take` the rows
    not yet written (the store's writer thread appends them to `live_predictions`)."""

    def __init__(self, service_date: date) -> None:
        self.service_date = service_date
        self._key = ["trip_id", "stop_sequence", "horizon_min"]
        self._seen = pl.DataFrame(
            schema={"trip_id": pl.String, "stop_sequence": pl.Int32, "horizon_min": pl.Int16}
        )
        self._pending: list[pl.DataFrame] = []
        self._lock = threading.Lock()

    def record(self, predictions: pl.DataFrame, clock_s: float) -> int:
        """Keep the view's predictions whose (trip, stop, bucket) is new; returns how many."""
        rows = build_prediction_log_rows(predictions, clock_s, self.service_date)
        with self._lock:
            new = rows.join(self._seen, on=self._key, how="anti")
            if new.height:
                self._seen = pl.concat([self._seen, new.select(self._key)])
                self._pending.append(new)
        return new.height

    def take(self) -> pl.DataFrame:
        """The rows recorded since the last `take` (`live_predictions` columns)."""
        with self._lock:
            parts, self._pending = self._pending, []
        return pl.concat(parts) if parts else table("live_predictions").empty()


def compute_prediction_accuracy(
    log: pl.DataFrame, visits: pl.DataFrame, trips: pl.DataFrame, timezone: str
) -> pl.DataFrame:
    """Errors of the logged predictions, grouped (`live_prediction_accuracy` columns without
    the version columns).

    `log`: `live_predictions` rows of one day; `visits`: its `stop_visits` (only observed
    arrivals count: interpolated ones are the matcher's guess, not a truth); `trips`:
    trip_id, route_id (scheduled_trips). A stop visited twice by one trip (two runs) keeps
    its first observed arrival. Groups: horizon (bucket minutes), line (route_id), hour (local
    hour of the true arrival, 0-23), trip ('current': block_order 0, 'next': later trips).
    """
    truth = (
        visits.filter(~pl.col("is_interpolated") & pl.col("arrival_at").is_not_null())
        .group_by("service_date", "trip_id", "stop_sequence")
        .agg(pl.col("arrival_at").min().alias("_true_at"))
    )
    err = (
        log.join(truth, on=["service_date", "trip_id", "stop_sequence"])
        .join(trips.select("trip_id", "route_id").unique("trip_id"), on="trip_id", how="left")
        .with_columns(
            (pl.col("predicted_arrival_at") - pl.col("_true_at"))
            .dt.total_microseconds()
            .truediv(1e6)
            .alias("_e"),
            (pl.col("planned_arrival_at") - pl.col("_true_at"))
            .dt.total_microseconds()
            .truediv(1e6)
            .abs()
            .alias("_t"),
            pl.col("horizon_min").cast(pl.String).alias("horizon"),
            pl.col("route_id").fill_null("?").alias("line"),
            pl.col("_true_at")
            .dt.convert_time_zone(timezone)
            .dt.hour()
            .cast(pl.String)
            .alias("hour"),
            pl.when(pl.col("block_order") == 0)
            .then(pl.lit("current"))
            .otherwise(pl.lit("next"))
            .alias("trip"),
        )
        .with_columns(pl.col("_e").abs().alias("_a"))
    )
    stats = [
        pl.len().cast(pl.Int32).alias("n_predictions"),
        pl.col("_a").mean().alias("mae_s"),
        pl.col("_a").quantile(0.5, "linear").alias("p50_s"),
        pl.col("_a").quantile(0.9, "linear").alias("p90_s"),
        pl.col("_e").mean().alias("bias_s"),
        pl.col("_t").mean().alias("timetable_mae_s"),
        pl.col("_t").quantile(0.5, "linear").alias("timetable_p50_s"),
        pl.col("_t").quantile(0.9, "linear").alias("timetable_p90_s"),
    ]
    parts = [
        err.group_by("service_date", pl.col(dim).alias("key"))
        .agg(*stats)
        .with_columns(pl.lit(dim).alias("dimension"))
        for dim in ("horizon", "line", "hour", "trip")
    ]
    out = pl.concat(parts, how="vertical_relaxed") if err.height else pl.DataFrame()
    decl = table("live_prediction_accuracy")
    if out.height == 0:
        return decl.empty().drop("pontual_version", "profile_id")
    return out.select(
        [c for c in decl.column_names if c not in ("pontual_version", "profile_id")]
    ).sort("dimension", "key")


def run_accuracy_day(store: Store, service_date: date, profile_id: str) -> int:
    """Score the day's `live_predictions` against its `stop_visits` and replace the day's
    `live_prediction_accuracy` rows; returns the rows written (0: nothing logged or matched)."""
    log = store.read("live_predictions", "service_date = ?", [service_date])
    visits = store.read("stop_visits", "service_date = ?", [service_date])
    if log.height == 0 or visits.height == 0:
        return 0
    trips = store.read("scheduled_trips", "service_date = ?", [service_date])
    feed = store.query("SELECT timezone FROM feed_versions ORDER BY loaded_at DESC LIMIT 1")
    scored = compute_prediction_accuracy(log, visits, trips, str(feed["timezone"][0]))
    fill: dict[str, object] = {"pontual_version": __version__, "profile_id": profile_id}
    return store.replace(
        "live_prediction_accuracy",
        table("live_prediction_accuracy").conform(scored, fill=fill),
        "service_date = ?",
        [service_date],
    )


def find_days_to_score(store: Store, before: date) -> list[date]:
    """Days before `before` with logged predictions and matched stop visits but no accuracy
    rows yet (what `pontual serve` scores when it starts: the previous days, once matched)."""
    days = store.query(
        "SELECT DISTINCT p.service_date FROM live_predictions p "
        "WHERE p.service_date < ? "
        "AND EXISTS (SELECT 1 FROM stop_visits v WHERE v.service_date = p.service_date) "
        "AND NOT EXISTS (SELECT 1 FROM live_prediction_accuracy a "
        "WHERE a.service_date = p.service_date) ORDER BY 1",
        [before],
    )
    return [
        d if isinstance(d, date) else datetime.fromisoformat(str(d)).date()
        for d in days["service_date"]
    ]
