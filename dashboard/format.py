"""Brazilian (pt-BR) formatting of the numbers, dates and durations the dashboard shows.

Numbers, percentages, money and dates go through Babel's pt_BR locale (CLDR data), not
hand-written separators: numbers read 1.234,5; percentages 97,3 %; money R$ 5,14; dates
dd/mm/aaaa; instants are shown in the profile's local time zone. Rounding is half away from
zero (1,25 -> 1,3), as people round by hand, and there is no negative zero.
No streamlit here: these are plain functions, tested on their own.
"""

from __future__ import annotations

from datetime import datetime
from decimal import ROUND_HALF_UP, Decimal
from typing import Any, TypeVar
from zoneinfo import ZoneInfo

import polars as pl
from babel.dates import format_datetime, format_time

from core.errors import ConfigError
from core.periods import parse_period
from core.pt_br import (
    LOCALE,
    MISSING,
    YES_NO,
    Number,
    is_missing,
    to_date,
    to_integer,
    to_number,
    to_percent,
    to_quantity,
)
from core.texts import N_
from core.texts import gettext as _

Column = TypeVar("Column", pl.Expr, pl.Series)


def format_yes_no(column: Column, missing: str | None = MISSING) -> Column:
    """A boolean column (expression or series) as 'sim' / 'não', nulls as `missing` (kept
    null when `missing` is None)."""
    if missing is None:
        return column.replace_strict(YES_NO, return_dtype=pl.String)
    return column.replace_strict(YES_NO, default=missing, return_dtype=pl.String)


def to_signed(value: Number, decimals: int = 1, unit: str = "") -> str:
    """A change with its sign: +1,2 / -0,4 (with an optional unit after a space)."""
    if is_missing(value):
        return MISSING
    assert value is not None
    rounded = float(
        Decimal(repr(float(value))).quantize(Decimal(1).scaleb(-decimals), ROUND_HALF_UP)
    )
    sign = "+" if rounded > 0 else ("-" if rounded < 0 else "")
    text = sign + to_number(abs(rounded), decimals)
    return f"{text} {unit}" if unit else text


def to_points_change(ratio_change: float | None, decimals: int = 1) -> str:
    """A change of a ratio in percentage points: 0.012 -> '+1,2 p.p.'."""
    if is_missing(ratio_change):
        return MISSING
    assert ratio_change is not None
    return to_signed(ratio_change * 100, decimals, "p.p.")


def to_local(value: datetime | None, timezone: str, with_seconds: bool = False) -> str:
    """A UTC instant as local 'dd/mm/aaaa HH:MM' in `timezone` (IANA)."""
    if value is None:
        return MISSING
    local = value.astimezone(ZoneInfo(timezone))
    pattern = "dd/MM/yyyy HH:mm:ss" if with_seconds else "dd/MM/yyyy HH:mm"
    return format_datetime(local, pattern, locale=LOCALE)


def to_clock(value: datetime | None, timezone: str) -> str:
    """A UTC instant as the local clock time HH:MM:SS."""
    if value is None:
        return MISSING
    return format_time(value.astimezone(ZoneInfo(timezone)), "HH:mm:ss", locale=LOCALE)


def to_delay(seconds: Number) -> str:
    """A delay in seconds as '+3 min 05 s' (late) or '-0 min 40 s' (early)."""
    if is_missing(seconds):
        return MISSING
    assert seconds is not None
    total = round(float(seconds))
    sign = "+" if total > 0 else ("-" if total < 0 else "")
    minutes, secs = divmod(abs(total), 60)
    return f"{sign}{minutes} min {secs:02d} s"


MONTHS = (
    N_("Jan"),
    N_("Feb"),
    N_("Mar"),
    N_("Apr"),
    N_("May"),
    N_("Jun"),
    N_("Jul"),
    N_("Aug"),
    N_("Sep"),
    N_("Oct"),
    N_("Nov"),
    N_("Dec"),
)
"""The months' short names (translated where shown)."""


def to_period(label: str) -> str:
    """A period label (`core.periods`) as planners read it: '2026-03' -> 'mar/2026',
    '2026' -> '2026', '2026-S1' -> '1º sem./2026', '2026-03-02' -> '02/03/2026',
    '2026-03-01..2026-03-31' -> '01/03/2026 a 31/03/2026'; any other text as it is."""
    try:
        period = parse_period(label)
    except ConfigError:
        return label
    if period.kind == "month":
        return f"{_(MONTHS[period.start.month - 1])}/{period.start.year}"
    if period.kind == "semester":
        return _("H{half}/{year}", half=1 if period.start.month == 1 else 2, year=period.start.year)
    if period.kind == "day":
        return to_date(period.start)
    if period.kind == "range":
        return _("{start} to {end}", start=to_date(period.start), end=to_date(period.end))
    return period.label


def format_column(series: pl.Series, kind: str, timezone: str = "UTC") -> pl.Series:
    """Format a whole column for display: kind is number, integer, percent, date, local,
    clock, delay or quantity. Each distinct value is formatted once (Babel takes some 0.1 ms a
    number, and a year's table repeats its counts and days)."""
    formatter: Any = {
        "number": to_number,
        "integer": to_integer,
        "quantity": to_quantity,
        "percent": to_percent,
        "date": to_date,
        "delay": to_delay,
        "local": lambda v: to_local(v, timezone),
        "clock": lambda v: to_clock(v, timezone),
    }[kind]
    texts: dict[Any, str] = {}
    shown = []
    for value in series.to_list():
        text = texts.get(value)
        if text is None:
            text = texts[value] = formatter(value)
        shown.append(text)
    return pl.Series(series.name, shown, dtype=pl.String)


def to_indicator_value(value: Number, unit: str) -> str:
    """An `indicators` value in its unit as planners read it: ratios as '87,5 %', seconds as
    minutes ('5,0 min'), money as 'R$ 5,14', everything else by `to_quantity`."""
    if is_missing(value):
        return MISSING
    if unit == "ratio":
        return to_percent(value)
    if unit == "s":
        return f"{to_number(float(value) / 60, 1)} min"
    if unit == "brl":
        return f"R$ {to_number(value, 2)}"
    return to_quantity(value)
