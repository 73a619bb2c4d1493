"""pt-BR formatting: numbers 1.234,5, percentages 97,3 %, dates dd/mm/aaaa, periods."""

from __future__ import annotations

from datetime import UTC, date, datetime

import polars as pl

from dashboard.format import (
    format_column,
    to_date,
    to_delay,
    to_integer,
    to_local,
    to_number,
    to_percent,
    to_period,
    to_points_change,
    to_signed,
)


def test_numbers_use_brazilian_separators_and_round_half_up() -> None:
    assert to_number(1234.5) == "1.234,5"
    assert to_number(1234567.891, 2) == "1.234.567,89"
    assert to_number(1.25) == "1,3"  # half away from zero, not half-even
    assert to_number(-0.04) == "0,0"  # no negative zero
    assert to_integer(12345) == "12.345"
    assert to_number(None) == to_number(float("nan")) == "—"


def test_percentages_changes_and_delays() -> None:
    assert to_percent(0.973) == "97,3 %"
    assert to_points_change(0.012) == "+1,2 p.p."
    assert to_signed(-5, 0) == "-5"
    assert to_signed(0.0) == "0,0"
    assert to_delay(185) == "+3 min 05 s"
    assert to_delay(-40) == "-0 min 40 s"


def test_dates_are_dd_mm_aaaa_in_local_time() -> None:
    assert to_date(date(2026, 3, 5)) == "05/03/2026"
    # 02:30 UTC on 6 March is still 5 March, 23:30, in Bento Gonçalves (UTC-3).
    instant = datetime(2026, 3, 6, 2, 30, tzinfo=UTC)
    assert to_local(instant, "America/Sao_Paulo") == "05/03/2026 23:30"
    column = pl.Series("d", [date(2026, 1, 2), None])
    assert format_column(column, "date").to_list() == ["02/01/2026", "—"]


def test_periods_read_and_step_back() -> None:
    assert to_period("2026-03") == "mar/2026"
    assert to_period("2026-03-01..2026-03-15") == "01/03/2026 a 15/03/2026"
    assert to_period("2026-S1") == "1º sem./2026"
    assert to_period("2026-03-02") == "02/03/2026"
    assert to_period("2025-04..2026-03") == "01/04/2025 a 31/03/2026"
    assert to_period("2026") == "2026"
    assert to_period("not a period") == "not a period"


def test_a_column_repeating_values_reads_as_each_value_alone() -> None:
    """format_column formats each distinct value once (speed); the text of every cell is the
    one its value gets alone, repeated values, zero signs, NaN and nulls included."""
    values = [1105.0, 0.0, -0.0, 1105.0, None, float("nan"), 1.25, 1.25, -3.5, 0.0]
    column = pl.Series("n", values)
    assert format_column(column, "number").to_list() == [to_number(v) for v in values]
    assert format_column(column, "number").to_list()[:6] == [
        "1.105,0",
        "0,0",
        "0,0",
        "1.105,0",
        "—",
        "—",
    ]
    counts = pl.Series("c", [3, 3, 12345, None, 3], dtype=pl.Int64)
    assert format_column(counts, "integer").to_list() == ["3", "3", "12.345", "—", "3"]
