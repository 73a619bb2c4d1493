"""Brazilian (pt-BR) numbers and dates, through Babel's pt_BR locale (CLDR data).

The one formatter of every user-facing number: the dashboard (`dashboard.format` builds on
it), the reports, the CLI tables and the texts of verdicts and grades. Numbers read 1.234,5;
percentages 97,3 %; dates dd/mm/aaaa. Rounding is half away from zero (1,25 -> 1,3), as people
round by hand, and there is no negative zero. Missing values (None, NaN) read '—'.
"""

from __future__ import annotations

import math
from datetime import date, datetime
from decimal import ROUND_HALF_UP, Decimal, localcontext
from functools import cache
from typing import Any
from zoneinfo import ZoneInfo

from babel import Locale
from babel.dates import format_date, format_time
from babel.numbers import NumberPattern, format_decimal, parse_pattern

from core.texts import N_, Labels

Number = Any
"""What the number formatters accept (Polars aggregates may return any of these)."""

LOCALE = "pt_BR"
"""The Babel locale of every number and date Pontual shows."""

MISSING = "—"
"""What a missing value shows as."""


@cache
def _locale() -> Locale:
    """The parsed locale, read on first use: given a name, Babel parses it again on every
    call (half the time of formatting a number)."""
    return Locale.parse(LOCALE)


@cache
def _pattern(decimals: int) -> NumberPattern:
    """The parsed pattern of a number with `decimals` decimal places (1.234,5)."""
    return parse_pattern("#,##0" + ("." + "0" * decimals if decimals > 0 else ""))


def is_missing(value: Number) -> bool:
    """None or NaN."""
    return value is None or (isinstance(value, float) and math.isnan(value))


def to_number(value: Number, decimals: int = 1) -> str:
    """1234.5 -> '1.234,5'; None or NaN -> '—'."""
    if is_missing(value):
        return MISSING
    with localcontext(rounding=ROUND_HALF_UP):
        number = Decimal(repr(float(value))).quantize(Decimal(1).scaleb(-decimals))
        if number == 0:
            number = abs(number)  # no '-0,0'
        return format_decimal(number, format=_pattern(decimals), locale=_locale())


def to_plain(value: Number) -> str:
    """A value as written in a rule or a formula: its own digits, no grouping, no trailing
    zeros (0.9 -> '0,9', 300.0 -> '300', 1234.5 -> '1234,5'); None or NaN -> '—'."""
    if is_missing(value):
        return MISSING
    return format_decimal(value, format="0.##########", locale=LOCALE)


def to_integer(value: Number) -> str:
    """12345 -> '12.345'."""
    return to_number(value, 0)


def to_percent(ratio: Number, decimals: int = 1) -> str:
    """A ratio (0.973) as '97,3 %'."""
    if is_missing(ratio):
        return MISSING
    return f"{to_number(float(ratio) * 100, decimals)} %"


def to_quantity(value: Number, decimals: int = 2) -> str:
    """A count or measure: whole numbers without decimals (1.598), others with `decimals`
    (11.317,15)."""
    if is_missing(value):
        return MISSING
    return to_number(value, 0 if float(value).is_integer() else decimals)


def to_date(value: date | datetime | None) -> str:
    """A date as dd/mm/aaaa."""
    if value is None:
        return MISSING
    return format_date(value, "dd/MM/yyyy", locale=_locale())


YES_NO = Labels({True: N_("yes"), False: N_("no")})
"""How a yes/no fact reads."""


def to_yes_no(value: bool | None, missing: str = MISSING) -> str:
    """True -> 'sim', False -> 'não' (pt-BR; `core.texts`), None -> `missing`."""
    return missing if value is None else YES_NO[bool(value)]


def to_time_of_day(value: datetime, timezone: str) -> str:
    """A UTC instant as the clock time HH:MM in `timezone` (IANA), e.g. '14:05'."""
    return format_time(value.astimezone(ZoneInfo(timezone)), "HH:mm", locale=_locale())
