"""frequencies.txt: headway windows expanded into individual trip starts.

A store keeps frequency-based service compactly (ADR 0102): one `scheduled_frequency_trips` row
per template trip per service day; the `scheduled_trips` view expands it over the template's
windows in SQL, and `expand_frequency_days` is the same expansion in Polars (for the frames a
job builds in memory). Both give instance '<template>@HH:MM:SS' its own planned times.
"""

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


def usable_windows(frequencies: pl.DataFrame) -> pl.DataFrame:
    """The windows that start at least one trip: start and end given, start before end,
    headway above zero (the rows `expand_frequencies` expands to something)."""
    return frequencies.filter(
        pl.col("start_time").is_not_null()
        & pl.col("end_time").is_not_null()
        & (pl.col("headway_secs") > 0)
        & (pl.col("start_time") < pl.col("end_time"))
    )


def frequency_templates(frequencies: pl.DataFrame | None) -> pl.Series:
    """The trips.txt trips that frequencies.txt turns into templates (at least one start):
    they run as their instances, never themselves."""
    if frequencies is None or frequencies.height == 0:
        return pl.Series("trip_id", [], pl.String)
    return usable_windows(frequencies)["trip_id"].unique().sort()


def count_instances(days: pl.DataFrame, frequencies: pl.DataFrame | None) -> int:
    """How many instances the template rows `days` (template_trip_id per service day) expand
    to, without expanding them: the starts of each window, ceil((end - start) / headway)."""
    if frequencies is None or days.height == 0:
        return 0
    starts = (
        usable_windows(frequencies)
        .group_by("trip_id")
        .agg(
            (
                (pl.col("end_time") - pl.col("start_time") + pl.col("headway_secs") - 1)
                // pl.col("headway_secs")
            )
            .sum()
            .alias("n")
        )
    )
    n = days.join(starts, left_on="template_trip_id", right_on="trip_id", how="inner")["n"].sum()
    return int(n)


def expand_frequency_days(days: pl.DataFrame, frequencies: pl.DataFrame | None) -> pl.DataFrame:
    """The instances of template trips on their service days, as `scheduled_trips` rows.

    `days`: `scheduled_frequency_trips` rows (a template per service day, with `duration_s` and
    `day_ref_at`); `frequencies`: frequencies.txt as read. Each instance starts at
    `planned_start_s` (a start of a window), ends `duration_s` later, and its instants count
    from the day's reference: what the `scheduled_trips` view computes in the store.
    """
    windows = (
        expand_frequencies(frequencies)
        if frequencies is not None and frequencies.height
        else pl.DataFrame(
            schema={
                "template_trip_id": pl.String,
                "trip_id": pl.String,
                "start_s": pl.Int32,
                "headway_s": pl.Int32,
                "is_exact_times": pl.Boolean,
            }
        )
    )
    start = pl.col("planned_start_s")
    end = pl.col("planned_end_s")
    return (
        days.join(windows, on="template_trip_id", how="inner")
        .rename({"start_s": "planned_start_s"})
        .with_columns((start + pl.col("duration_s")).alias("planned_end_s"))
        .with_columns(
            (pl.col("day_ref_at") + pl.duration(seconds=start)).alias("planned_start_at"),
            (pl.col("day_ref_at") + pl.duration(seconds=end)).alias("planned_end_at"),
        )
        .drop("duration_s", "day_ref_at")
    )
