"""Periods of the indices, the dashboard and the reports: the one period type of Pontual.

A period is a closed interval of service days and its label. The label is what the
`indicators` table stores (so the same period always gets the same label) and what the
dashboard's period filter and the report commands take:

- month '2026-03', year '2026', semester '2026-S1' (January-June) or '2026-S2';
- day '2026-03-02';
- range '2026-03-01..2026-03-15' (days) or '2025-04..2026-03' (whole months, `months_back`).

`parse_period` reads every label back into the `Period` that wrote it; `local_bounds` gives
the UTC instants of its local midnights in the profile's (or feed's) time zone.
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
_SEMESTER = re.compile(r"^(\d{4})-S([12])$")
_DAY = re.compile(r"^(\d{4}-\d{2}-\d{2})$")
_RANGE = re.compile(r"^(\d{4}-\d{2}-\d{2})\.\.(\d{4}-\d{2}-\d{2})$")
_MONTH_RANGE = re.compile(r"^(\d{4})-(\d{2})\.\.(\d{4})-(\d{2})$")
_HALF = re.compile(r"^(\d{4})-S?([12])$")

KINDS = ("month", "year", "semester", "day", "range")
"""What a period can be."""


@dataclass(frozen=True)
class Period:
    """A closed interval of service days and its label."""

    label: str
    start: date
    end: date
    kind: str  # one of KINDS

    @property
    def n_days(self) -> int:
        return (self.end - self.start).days + 1

    def days(self) -> list[date]:
        """[start, end]: the parameters of a `service_date BETWEEN ? AND ?` query."""
        return [self.start, self.end]

    def previous(self) -> Period:
        """The period just before, of the same kind and length: '2026-03' -> '2026-02',
        '2026' -> '2025', '2026-S1' -> '2025-S2', a range -> the range of as many days
        ending the day before it starts."""
        if self.kind == "month":
            last = self.start - timedelta(days=1)
            return month_period(last.year, last.month)
        if self.kind == "year":
            return year_period(self.start.year - 1)
        if self.kind == "semester":
            half = 1 if self.start.month == 1 else 2
            return semester_period(self.start.year - (half == 1), 2 if half == 1 else 1)
        if self.kind == "day":
            return day_period(self.start - timedelta(days=1))
        end = self.start - timedelta(days=1)
        return range_period(end - (self.end - self.start), end)


def month_period(year: int, month: int) -> Period:
    last = calendar.monthrange(year, month)[1]
    return Period(f"{year:04d}-{month:02d}", date(year, month, 1), date(year, month, last), "month")


def year_period(year: int) -> Period:
    return Period(f"{year:04d}", date(year, 1, 1), date(year, 12, 31), "year")


def semester_period(year: int, half: int) -> Period:
    """Half 1 = January-June, half 2 = July-December."""
    if half not in (1, 2):
        raise ValueError(f"semester {half}")
    start, end = (
        (date(year, 1, 1), date(year, 6, 30))
        if half == 1
        else (date(year, 7, 1), date(year, 12, 31))
    )
    return Period(f"{year:04d}-S{half}", start, end, "semester")


def day_period(day: date) -> Period:
    return Period(day.isoformat(), day, day, "day")


def range_period(start: date, end: date) -> Period:
    if end < start:
        raise ConfigError(
            f"period ends ({end}) before it starts ({start})",
            where="--from/--to",
            hint="give --from YYYY-MM-DD --to YYYY-MM-DD with --to on or after --from",
        )
    return Period(f"{start.isoformat()}..{end.isoformat()}", start, end, "range")


EXPECTED = (
    "YYYY-MM (month), YYYY (year), YYYY-S1/YYYY-S2 (semester), YYYY-MM-DD (day) or "
    "YYYY-MM-DD..YYYY-MM-DD (range)"
)


def parse_period(text: str, where: str = "--period") -> Period:
    """The `Period` of a label (see the module's docstring); a `ConfigError` naming `where`
    otherwise."""
    text = text.strip()
    try:
        if m := _MONTH.match(text):
            year, month = int(m[1]), int(m[2])
            if not 1 <= month <= 12:
                raise ValueError(f"month {month}")
            return month_period(year, month)
        if m := _YEAR.match(text):
            return year_period(int(m[1]))
        if m := _SEMESTER.match(text):
            return semester_period(int(m[1]), int(m[2]))
        if m := _DAY.match(text):
            return day_period(date.fromisoformat(m[1]))
        if m := _RANGE.match(text):
            return range_period(date.fromisoformat(m[1]), date.fromisoformat(m[2]))
        if m := _MONTH_RANGE.match(text):
            first = month_period(int(m[1]), int(m[2]))
            last = month_period(int(m[3]), int(m[4]))
            whole = range_period(first.start, last.end)
            return Period(text, whole.start, whole.end, "range")
    except ValueError as exc:
        raise ConfigError(
            f"invalid period {text!r}: {exc}", where=where, hint=f"expected {EXPECTED}"
        ) from exc
    raise ConfigError(
        f"invalid period {text!r}: expected {EXPECTED}",
        where=where,
        hint="e.g. --period 2026-03, --period 2026, or --from 2026-03-01 --to 2026-03-15",
    )


def parse_semester(text: str, where: str = "--half") -> Period:
    """A semester as the report command takes it: '2026-1' or '2026-S1' (January-June),
    '2026-2' or '2026-S2' (July-December)."""
    m = _HALF.match(text.strip())
    if not m:
        raise ConfigError(
            f"invalid semester {text!r}: expected YYYY-1 (January-June) or YYYY-2 (July-December)",
            where=where,
            hint="e.g. --half 2026-1",
        )
    return semester_period(int(m[1]), int(m[2]))


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
