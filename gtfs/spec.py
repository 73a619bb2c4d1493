"""The part of the GTFS Schedule reference that Pontual reads: files, columns, types, keys.

Each column has a kind that decides how its text is typed: `str` stays text, `int` -> Int32,
`float` -> Float64, `time` ("H:MM:SS", may pass 24:00) -> Int32 seconds after the service-day
reference, `date` ("YYYYMMDD") -> Date. Columns not listed here are read and ignored.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Kind = Literal["str", "int", "float", "time", "date"]


@dataclass(frozen=True)
class FieldSpec:
    name: str
    kind: Kind = "str"
    required: bool = False
    # inclusive bounds for numeric kinds (None: unbounded)
    min_value: float | None = None
    max_value: float | None = None


@dataclass(frozen=True)
class FileSpec:
    name: str
    fields: tuple[FieldSpec, ...]
    primary_key: tuple[str, ...] = ()
    required: bool = False

    @property
    def table(self) -> str:
        return self.name.removesuffix(".txt")

    def field(self, name: str) -> FieldSpec | None:
        return next((f for f in self.fields if f.name == name), None)


def _f(name: str, kind: Kind = "str", required: bool = False, lo: float | None = None,
       hi: float | None = None) -> FieldSpec:  # fmt: skip
    return FieldSpec(name, kind, required, lo, hi)


_DAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")

FILES: tuple[FileSpec, ...] = (
    FileSpec(
        "agency.txt",
        (
            _f("agency_id"),
            _f("agency_name", required=True),
            _f("agency_url", required=True),
            _f("agency_timezone", required=True),
            _f("agency_lang"),
            _f("agency_phone"),
        ),
        ("agency_id",),
        required=True,
    ),
    FileSpec(
        "stops.txt",
        (
            _f("stop_id", required=True),
            _f("stop_code"),
            _f("stop_name"),
            # coordinate ranges are checked in validate: a bad unused stop is only a warning
            _f("stop_lat", "float"),
            _f("stop_lon", "float"),
            _f("location_type", "int", lo=0, hi=4),
            _f("parent_station"),
        ),
        ("stop_id",),
        required=True,
    ),
    FileSpec(
        "routes.txt",
        (
            _f("route_id", required=True),
            _f("agency_id"),
            _f("route_short_name"),
            _f("route_long_name"),
            _f("route_type", "int", required=True, lo=0, hi=1702),
            _f("route_color"),
            _f("route_text_color"),
        ),
        ("route_id",),
        required=True,
    ),
    FileSpec(
        "trips.txt",
        (
            _f("route_id", required=True),
            _f("service_id", required=True),
            _f("trip_id", required=True),
            _f("trip_headsign"),
            _f("direction_id", "int", lo=0, hi=1),
            _f("block_id"),
            _f("shape_id"),
        ),
        ("trip_id",),
        required=True,
    ),
    FileSpec(
        "stop_times.txt",
        (
            _f("trip_id", required=True),
            _f("arrival_time", "time"),
            _f("departure_time", "time"),
            _f("stop_id", required=True),
            _f("stop_sequence", "int", required=True, lo=0),
            _f("timepoint", "int", lo=0, hi=1),
            _f("shape_dist_traveled", "float", lo=0),
        ),
        ("trip_id", "stop_sequence"),
        required=True,
    ),
    FileSpec(
        "calendar.txt",
        (
            _f("service_id", required=True),
            *(_f(d, "int", required=True, lo=0, hi=1) for d in _DAYS),
            _f("start_date", "date", required=True),
            _f("end_date", "date", required=True),
        ),
        ("service_id",),
    ),
    FileSpec(
        "calendar_dates.txt",
        (
            _f("service_id", required=True),
            _f("date", "date", required=True),
            _f("exception_type", "int", required=True, lo=1, hi=2),
        ),
        ("service_id", "date"),
    ),
    FileSpec(
        "shapes.txt",
        (
            _f("shape_id", required=True),
            _f("shape_pt_lat", "float", required=True, lo=-90, hi=90),
            _f("shape_pt_lon", "float", required=True, lo=-180, hi=180),
            _f("shape_pt_sequence", "int", required=True, lo=0),
            _f("shape_dist_traveled", "float", lo=0),
        ),
        ("shape_id", "shape_pt_sequence"),
    ),
    FileSpec(
        "frequencies.txt",
        (
            _f("trip_id", required=True),
            _f("start_time", "time", required=True),
            _f("end_time", "time", required=True),
            _f("headway_secs", "int", required=True, lo=1),
            _f("exact_times", "int", lo=0, hi=1),
        ),
        ("trip_id", "start_time"),
    ),
)

FILE_SPECS: dict[str, FileSpec] = {f.table: f for f in FILES}
WEEKDAYS = _DAYS
