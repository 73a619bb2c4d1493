"""Every case of google/transitfeed's broken feeds, with the outcome Pontual decides is right.

Errors refuse the load and name file, line and column; warning-only cases load.
"""

from __future__ import annotations

import pytest

from core.errors import InputError
from gtfs.errors import errors_of, warnings_of
from gtfs.read import read_feed
from gtfs.validate import validate_feed
from tests.conftest import shared_data

CASES = "gtfs_invalid_transitfeed"

# case -> (file, line, column, fragment of the message) of the expected first error
REFUSED = {
    "bad_date_format": ("calendar.txt", 2, "start_date", "'2007.01.01' is not a date YYYYMMDD"),
    "bad_utf8": ("routes.txt", 5, None, "invalid UTF-8 byte 0x9c"),
    "contains_null": ("stops.txt", 9, "stop_name", "NUL byte"),
    "duplicate_schedule_id": ("calendar.txt", 4, "service_id", "duplicate service_id 'WE'"),
    "duplicate_stop_sequence": ("stop_times.txt", 4, "stop_sequence", "duplicate trip_id+stop_sequence 'CITY1/10'"),
    "empty_file": ("agency.txt", None, None, "file is empty"),
    "invalid_agency_ids": ("agency.txt", 3, "agency_id", "required when the feed has several agencies"),
    "invalid_route_agency": ("routes.txt", 4, "agency_id", "'DVT' is not defined in agency.txt"),
    "missing_agency": ("agency.txt", None, None, "required file missing"),
    "missing_calendar": ("calendar.txt", None, None, "neither calendar.txt nor calendar_dates.txt"),
    "missing_column": ("agency.txt", 1, "agency_name", "required column missing"),
    "missing_departure_time": ("stop_times.txt", 3, "departure_time", "departure_time missing where arrival_time is given"),
    "missing_endpoint_times": ("stop_times.txt", 16, "arrival_time", "first and last stop of a trip must have times"),
    "missing_routes": ("routes.txt", None, None, "required file missing"),
    "missing_stop_times": ("stop_times.txt", None, None, "required file missing"),
    "missing_stops": ("stops.txt", None, None, "required file missing"),
    "missing_trips": ("trips.txt", None, None, "required file missing"),
    "missing_weekday_column": ("calendar.txt", 1, "thursday", "required column missing"),
    "negative_stop_sequence": ("stop_times.txt", 9, "stop_sequence", "'-2' out of range"),
    "undefined_stop": ("stop_times.txt", 11, "stop_id", "'NADAR' is not defined in stops.txt"),
}  # fmt: skip

# case -> (file, line, fragment) of a warning it must carry; these feeds load
LOADED = {
    "good_feed": ("shapes.txt", None, "no shapes.txt"),
    "good_feed.zip": ("shapes.txt", None, "no shapes.txt"),
    "bad_eol.zip": ("routes.txt", 5, "stray carriage return"),
    "duplicate_stop": ("stops.txt", 4, "stops BULLFROG, FROG are at the same place"),
    "extra_row_cells": ("routes.txt", 4, "7 cells where the header has 6"),
    "missing_row_cells": ("routes.txt", 4, "fewer cells than the header"),
    "unused_stop": ("stops.txt", 6, "stop 'BOGUS' is not used by any trip"),
    "utf16": ("agency.txt", None, "file is UTF-16"),
}


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_refused_case_names_file_line_column(case: str) -> None:
    issues = validate_feed(read_feed(shared_data(CASES, case)))
    errors = errors_of(issues)
    file, line, column, fragment = REFUSED[case]
    first = errors[0]
    assert (first.file, first.line, first.column) == (file, line, column), errors
    assert fragment in first.message


@pytest.mark.parametrize("case", sorted(LOADED))
def test_loaded_case_has_only_warnings(case: str) -> None:
    issues = validate_feed(read_feed(shared_data(CASES, case)))
    assert errors_of(issues) == []
    file, line, fragment = LOADED[case]
    assert any(
        w.file == file and w.line == line and fragment in w.message for w in warnings_of(issues)
    ), warnings_of(issues)


def test_good_feed_has_no_warning_but_missing_shapes() -> None:
    issues = validate_feed(read_feed(shared_data(CASES, "good_feed")))
    assert [i.file for i in issues] == ["shapes.txt"]


def test_utf16_is_decoded_into_the_same_text_as_utf8() -> None:
    utf16 = read_feed(shared_data(CASES, "utf16"))
    assert utf16["agency"]["agency_name"][0] == "Autorité de passage de démonstration"
    assert utf16["stop_times"].height == 28


def test_unknown_format_zip_is_not_a_feed() -> None:
    with pytest.raises(InputError, match="not a GTFS feed: expected a zip archive"):
        read_feed(shared_data(CASES, "unknown_format.zip"))


def test_every_case_in_the_folder_has_a_test() -> None:
    folder = shared_data(CASES)
    cases = {p.name for p in folder.iterdir() if p.name != "README.md"}
    assert cases == set(REFUSED) | set(LOADED) | {"unknown_format.zip"}
