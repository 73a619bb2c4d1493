"""frequencies.txt: headway windows expanded into individual trip starts."""

from __future__ import annotations

import polars as pl


def format_hms(seconds: pl.Expr) -> pl.Expr:
    """Seconds after the service-day reference as 'HH:MM:SS' (hours may pass 24)."""
    return pl.format(
        "{}:{}:{}",
        (seconds // 3600).cast(pl.String).str.zfill(2),
        (seconds % 3600 // 60).cast(pl.String).str.zfill(2),
        (seconds % 60).cast(pl.String).str.zfill(2),
    )


def expand_frequencies(frequencies: pl.DataFrame) -> pl.DataFrame:
    """One row per trip start of each headway window.

    Starts are start_time, start_time + headway, ... strictly before end_time (end_time is when
    the headway changes or service ends). Output columns: `template_trip_id`, `trip_id`
    ('<template>@HH:MM:SS'), `start_s` (seconds after the service-day reference), `headway_s`,
    `is_exact_times` (false for exact_times 0: the start is nominal, vehicles run on headway).
    """
    exact = (
        pl.col("exact_times").fill_null(0) == 1
        if "exact_times" in frequencies.columns
        else pl.lit(False)
    )
    out = (
        frequencies.filter(
            pl.col("start_time").is_not_null()
            & pl.col("end_time").is_not_null()
            & (pl.col("headway_secs") > 0)
        )
        .select(
            pl.col("trip_id").alias("template_trip_id"),
            pl.int_ranges("start_time", "end_time", "headway_secs").alias("start_s"),
            pl.col("headway_secs").cast(pl.Int32).alias("headway_s"),
            exact.alias("is_exact_times"),
        )
        .explode("start_s")
        .drop_nulls("start_s")
        .with_columns(pl.col("start_s").cast(pl.Int32))
    )
    return out.with_columns(
        (pl.col("template_trip_id") + pl.lit("@") + format_hms(pl.col("start_s"))).alias("trip_id")
    ).select("template_trip_id", "trip_id", "start_s", "headway_s", "is_exact_times")
