"""Service days: which service_id runs on which date (calendar.txt + calendar_dates.txt)."""

from __future__ import annotations

from datetime import date

import polars as pl

from gtfs.read import Feed
from gtfs.spec import WEEKDAYS


def compute_service_dates(feed: Feed, start: date, end: date) -> pl.DataFrame:
    """One row per (service_id, service_date) with service, for dates in [start, end].

    Columns: `service_id` (String), `service_date` (Date, local service day). calendar.txt
    gives weekday patterns between its start and end dates; calendar_dates.txt adds
    (exception_type 1) or removes (2) single dates, and wins over calendar.txt.
    """
    schema = {"service_id": pl.String(), "service_date": pl.Date()}
    parts: list[pl.DataFrame] = []
    cal = feed.get("calendar")
    if cal is not None and cal.height:
        lo, hi = pl.lit(start, pl.Date), pl.lit(end, pl.Date)
        clipped = cal.with_columns(
            pl.max_horizontal("start_date", lo).alias("_from"),
            pl.min_horizontal("end_date", hi).alias("_to"),
        ).filter(pl.col("_from") <= pl.col("_to"))
        if clipped.height:
            days = (
                clipped.select(
                    "service_id",
                    *WEEKDAYS,
                    pl.date_ranges("_from", "_to").alias("service_date"),
                )
                .explode("service_date")
                .with_columns(pl.col("service_date").dt.weekday().alias("_wd"))  # 1 = Monday
            )
            runs = pl.lit(False)
            for i, day in enumerate(WEEKDAYS, start=1):
                runs = runs | ((pl.col("_wd") == i) & (pl.col(day) == 1))
            parts.append(days.filter(runs).select("service_id", "service_date"))
    base = pl.concat(parts) if parts else pl.DataFrame(schema=schema)
    cd = feed.get("calendar_dates")
    if cd is not None and cd.height:
        cd = cd.filter(pl.col("date").is_between(start, end)).rename({"date": "service_date"})
        removed = cd.filter(pl.col("exception_type") == 2).select("service_id", "service_date")
        added = cd.filter(pl.col("exception_type") == 1).select("service_id", "service_date")
        base = pl.concat([base.join(removed, on=["service_id", "service_date"], how="anti"), added])
    return base.unique().sort("service_date", "service_id").cast(schema)  # type: ignore[arg-type]


def compute_validity(feed: Feed) -> tuple[date, date] | None:
    """First and last date any service runs (calendar ranges and added dates), or None."""
    lows: list[date] = []
    highs: list[date] = []
    cal = feed.get("calendar")
    if cal is not None and cal.height:
        lows.append(cal["start_date"].min())  # type: ignore[arg-type]
        highs.append(cal["end_date"].max())  # type: ignore[arg-type]
    cd = feed.get("calendar_dates")
    if cd is not None and cd.height:
        added = cd.filter(pl.col("exception_type") == 1)["date"]
        if added.len():
            lows.append(added.min())  # type: ignore[arg-type]
            highs.append(added.max())  # type: ignore[arg-type]
    lows = [d for d in lows if d is not None]
    highs = [d for d in highs if d is not None]
    if not lows or not highs:
        return None
    return min(lows), max(highs)
