"""Cross-file checks on small crafted feeds, each named after the failure it must produce."""

from __future__ import annotations

import pytest

from gtfs.errors import errors_of
from gtfs.read import read_feed
from gtfs.validate import validate_feed
from tests.conftest import FIXTURES

GTFS = FIXTURES / "gtfs"

CASES = {
    "undefined_route": ("trips.txt", 2, "route_id", "'R9' is not defined in routes.txt"),
    "undefined_service": ("trips.txt", 4, "service_id", "'SUN' is not defined in calendar.txt or calendar_dates.txt"),
    "undefined_shape": ("trips.txt", 2, "shape_id", "'S9' is not defined in shapes.txt"),
    "undefined_trip": ("stop_times.txt", 17, "trip_id", "'T4' is not defined in trips.txt"),
    "times_going_backwards": ("stop_times.txt", 3, "arrival_time", "time earlier than at the previous stop"),
    "trip_with_one_stop": ("stop_times.txt", 8, "trip_id", "trip 'T3' has fewer than two stop times"),
    "empty_stop_times": ("stop_times.txt", None, None, "file has a header but no rows"),
    "overlapping_frequencies": ("frequencies.txt", 4, "start_time", "frequency window of trip 'F0' starts before its previous window ends"),
}  # fmt: skip


@pytest.mark.parametrize("case", sorted(CASES))
def test_crafted_failure(case: str) -> None:
    errors = errors_of(validate_feed(read_feed(GTFS / case)))
    file, line, column, fragment = CASES[case]
    assert (errors[0].file, errors[0].line, errors[0].column) == (file, line, column), errors
    assert fragment in errors[0].message


def test_tiny_feed_only_warns_of_its_trips_without_shape() -> None:
    (only,) = validate_feed(read_feed(GTFS / "tiny_feed"))
    assert (only.severity, only.file, only.line, only.column) == (
        "warning",
        "trips.txt",
        3,
        "shape_id",
    )
    assert only.message.startswith("2 trip(s) without shape_id")


def test_zone_check_per_name_agrees_with_the_full_zone_list() -> None:
    # The validator tests each agency_timezone alone instead of listing every zone (ADR 0107):
    # every listed zone passes, and every other file of the zone folders (posix/ and right/
    # copies, posixrules, non-zone files) and malformed names fail, as with the full list.
    import os
    import zoneinfo

    from gtfs.validate import _is_zone

    listed = zoneinfo.available_timezones()
    assert "America/Sao_Paulo" in listed
    assert all(_is_zone(name) for name in listed)
    others: set[str] = set()
    for root in zoneinfo.TZPATH:
        for folder, _, files in os.walk(root):
            others |= {os.path.relpath(os.path.join(folder, f), root) for f in files}
    others -= listed
    others |= {"", "America/Nowhere", "../zoneinfo/UTC", "America//Sao_Paulo", "/UTC", "./UTC"}
    assert not [name for name in others if _is_zone(name)]
