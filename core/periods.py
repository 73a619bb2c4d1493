"""Periods of the indices: a month ('2026-03'), a year ('2026') or a date range.

A period is a closed interval of service days. Its label is what the `indicators` table stores,
so the same period always gets the same label.
"""

from __future__ import annotations

import calendar
import re
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from zoneinfo import ZoneInfo

from core.errors import ConfigError

_MONTH = re.compile(r"^(\d{4})-(\d{2})$")
_YEAR = re.compile(r"^(\d{4})$")
_RANGE = re.compile(r"^(\d{4}-\d{2}-\d{2})\.\.(\d{4}-\d{2}-\d{2})$")


@dataclass(frozen=True)
class Period:
    """A closed interval of service days and its label."""

    label: str
    start: date
    end: date
    kind: str  # 'month', 'year' or 'range'

    @property
    def n_days(self) -> int:
        return (self.end - self.start).days + 1


def month_period(year: int, month: int) -> Period:
    last = calendar.monthrange(year, month)[1]
    return Period(f"{year:04d}-{month:02d}", date(year, month, 1), date(year, month, last), "month")


def year_period(year: int) -> Period:
    return Period(f"{year:04d}", date(year, 1, 1), date(year, 12, 31), "year")


def range_period(start: date, end: date) -> Period:
    if end < start:
        raise ConfigError(
            f"period ends ({end}) before it starts ({start})",
            where="--from/--to",
            hint="give --from YYYY-MM-DD --to YYYY-MM-DD with --to on or after --from",
        )
    return Period(f"{start.isoformat()}..{end.isoformat()}", start, end, "range")


def parse_period(text: str) -> Period:
    """'2026-03' (month), '2026' (year) or '2026-03-01..2026-03-15' (range)."""
    text = text.strip()
    try:
        if m := _MONTH.match(text):
            year, month = int(m[1]), int(m[2])
            if not 1 <= month <= 12:
                raise ValueError(f"month {month}")
            return month_period(year, month)
        if m := _YEAR.match(text):
            return year_period(int(m[1]))
        if m := _RANGE.match(text):
            return range_period(date.fromisoformat(m[1]), date.fromisoformat(m[2]))
    except ValueError as exc:
        raise ConfigError(
            f"invalid period {text!r}: {exc}",
            where="--period",
            hint="expected YYYY-MM (month), YYYY (year) or YYYY-MM-DD..YYYY-MM-DD",
        ) from exc
    raise ConfigError(
        f"invalid period {text!r}: expected YYYY-MM (month), YYYY (year) or "
        "YYYY-MM-DD..YYYY-MM-DD (range)",
        where="--period",
        hint="e.g. --period 2026-03, --period 2026, or --from 2026-03-01 --to 2026-03-15",
    )


def months_in(period: Period) -> list[Period]:
    """The calendar months the period touches, as month periods."""
    out = []
    year, month = period.start.year, period.start.month
    while (year, month) <= (period.end.year, period.end.month):
        out.append(month_period(year, month))
        year, month = (year + 1, 1) if month == 12 else (year, month + 1)
    return out


def months_back(end: date, n_months: int) -> Period:
    """The `n_months` calendar months ending with the month of `end` (rolling window)."""
    year, month = end.year, end.month - (n_months - 1)
    while month < 1:
        year, month = year - 1, month + 12
    last = month_period(end.year, end.month).end
    return Period(
        f"{year:04d}-{month:02d}..{end.year:04d}-{end.month:02d}",
        date(year, month, 1),
        last,
        "range",
    )


def local_bounds(period: Period, tz: str) -> tuple[datetime, datetime]:
    """UTC instants of the period's first local midnight and the one after its last day."""
    zone = ZoneInfo(tz)
    start = datetime.combine(period.start, time(0), zone).astimezone(UTC)
    end = datetime.combine(period.end + timedelta(days=1), time(0), zone).astimezone(UTC)
    return start, end
