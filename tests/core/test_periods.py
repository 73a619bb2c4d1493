"""The one period type: every label reads back into the period that wrote it."""

from __future__ import annotations

from datetime import UTC, date, datetime

import pytest

from core.errors import ConfigError
from core.periods import (
    day_period,
    local_bounds,
    months_back,
    parse_period,
    parse_semester,
    range_period,
    semester_period,
)


@pytest.mark.parametrize(
    ("label", "kind", "start", "end"),
    [
        ("2024-02", "month", date(2024, 2, 1), date(2024, 2, 29)),
        ("2026", "year", date(2026, 1, 1), date(2026, 12, 31)),
        ("2026-S1", "semester", date(2026, 1, 1), date(2026, 6, 30)),
        ("2026-S2", "semester", date(2026, 7, 1), date(2026, 12, 31)),
        ("2026-03-02", "day", date(2026, 3, 2), date(2026, 3, 2)),
        ("2026-03-01..2026-03-15", "range", date(2026, 3, 1), date(2026, 3, 15)),
        ("2025-04..2026-03", "range", date(2025, 4, 1), date(2026, 3, 31)),
    ],
)
def test_every_label_reads_back_into_its_period(
    label: str, kind: str, start: date, end: date
) -> None:
    period = parse_period(label)
    assert (period.label, period.kind, period.start, period.end) == (label, kind, start, end)


def test_days_are_the_between_parameters() -> None:
    assert parse_period("2026-02").days() == [date(2026, 2, 1), date(2026, 2, 28)]


def test_the_rolling_window_label_reads_back() -> None:
    window = months_back(date(2026, 3, 15), 12)
    assert parse_period(window.label) == window


@pytest.mark.parametrize(
    ("label", "previous"),
    [
        ("2026-01", "2025-12"),
        ("2026-03", "2026-02"),
        ("2026", "2025"),
        ("2026-S1", "2025-S2"),
        ("2026-S2", "2026-S1"),
        ("2026-03-01", "2026-02-28"),
        ("2026-03-08..2026-03-14", "2026-03-01..2026-03-07"),
    ],
)
def test_previous_is_the_same_kind_just_before(label: str, previous: str) -> None:
    assert parse_period(label).previous().label == previous


def test_semesters_as_the_report_command_takes_them() -> None:
    assert parse_semester("2026-1") == parse_semester("2026-S1") == semester_period(2026, 1)
    assert parse_semester("2026-2").end == date(2026, 12, 31)
    with pytest.raises(ConfigError, match="invalid semester '2026-3'") as caught:
        parse_semester("2026-3")
    assert caught.value.where == "--half"


@pytest.mark.parametrize("bad", ["2026-13", "26-03", "2026-03-32", "2026-S3", "march"])
def test_a_bad_label_is_a_config_error_naming_the_option(bad: str) -> None:
    with pytest.raises(ConfigError, match="invalid period") as caught:
        parse_period(bad, where="--month")
    assert caught.value.where == "--month"


def test_a_range_ending_before_it_starts_is_refused() -> None:
    with pytest.raises(ConfigError, match="before it starts"):
        range_period(date(2026, 3, 2), date(2026, 3, 1))


def test_local_bounds_are_the_local_midnights_in_utc() -> None:
    # Bento Gonçalves is UTC-3 all year (no daylight saving since 2019).
    lo, hi = local_bounds(day_period(date(2026, 3, 2)), "America/Sao_Paulo")
    assert (lo, hi) == (
        datetime(2026, 3, 2, 3, 0, tzinfo=UTC),
        datetime(2026, 3, 3, 3, 0, tzinfo=UTC),
    )
    lo, hi = local_bounds(parse_period("2026-S1"), "UTC")
    assert (lo, hi) == (datetime(2026, 1, 1, tzinfo=UTC), datetime(2026, 7, 1, tzinfo=UTC))
