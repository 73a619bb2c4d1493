"""The planned service of the simulated network: shapes, stop patterns, blocks and trips.

Each line runs `n` blocks ('tabelas') that cycle between its terminals every `cycle_s`, evenly
spaced at the peak. Even blocks run all day; odd blocks are peak trippers (they go back to the
garage between peaks). Saturdays keep the all-day blocks, Sundays every other one. Planned run
times follow the time of day (slower at the peaks); the layover absorbs the difference so the
cycle stays fixed. The frequency-based line keeps one run time and is published as
frequencies.txt with trips named '<template>@HH:MM:SS'.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, timedelta

import numpy as np
import polars as pl

from sample_data.network import LineSpec

SERVICES = ("WD", "SAT", "SUN")
# Service windows (first departure, last departure), seconds after midnight.
_WINDOWS = {"WD": (5 * 3600 + 1800, 23 * 3600), "SAT": (6 * 3600, 22 * 3600), "SUN": (7 * 3600, 21 * 3600)}
_TRIPPER_WINDOWS = ((6 * 3600, 9 * 3600), (16 * 3600 + 1800, 19 * 3600 + 1800))
_MIN_LAYOVER_S = 300


def planned_speed_m_s(hour: np.ndarray) -> np.ndarray:
    """Planned commercial speed by hour of day, m/s: ~16 km/h at the peaks, ~19 by day, ~23 at night."""
    peak = ((hour >= 6.5) & (hour < 9.0)) | ((hour >= 16.5) & (hour < 19.5))
    night = (hour < 6.0) | (hour >= 21.0)
    return np.where(peak, 4.4, np.where(night, 6.4, 5.3))


@dataclass
class Timetable:
    """The planned service.

    `trips`: one row per (service_id, trip): trip_id, template_trip_id, route_id, service_id,
    direction_id, block_id, shape_id, start_s (origin departure, s after midnight), run_s
    (planned run time, s), planned_distance_m, headway_s (frequency trips), is_exact_times.
    `patterns`: shape_id, stop_sequence, stop_id, dist_m (distance along that shape).
    `shapes`: shape_id -> (n, 2) polyline in metres. `frequencies`: GTFS frequencies rows.
    """

    trips: pl.DataFrame
    patterns: pl.DataFrame
    shapes: dict[str, np.ndarray]
    frequencies: pl.DataFrame
    lines: list[LineSpec]


def build_timetable(lines: list[LineSpec], route_patterns: pl.DataFrame,
                    route_shapes: dict[str, np.ndarray], fleet_scale: float) -> Timetable:
    """Shapes per direction, stop patterns, blocks and planned trips of every line and service.

    `fleet_scale` multiplies the number of blocks of each line (to reach a target fleet).
    """
    shapes: dict[str, np.ndarray] = {}
    pattern_parts: list[pl.DataFrame] = []
    trip_parts: list[dict[str, np.ndarray]] = []
    freq_rows: list[tuple[str, int, int, int, int]] = []
    for line in lines:
        xy = route_shapes[line.route_id]
        pat = route_patterns.filter(pl.col("route_id") == line.route_id)
        length = float(pat["dist_m"].max())  # type: ignore[arg-type]
        directions = (0,) if line.circular else (0, 1)
        for direction in directions:
            shape_id = f"{line.route_id}-{direction}"
            shapes[shape_id] = xy if direction == 0 else xy[::-1].copy()
            p = pat if direction == 0 else pat.reverse().with_columns(
                stop_sequence=pl.int_range(1, pl.len() + 1, dtype=pl.Int64),
                dist_m=length - pl.col("dist_m"),
            )
            pattern_parts.append(p.select(pl.lit(shape_id).alias("shape_id"), "stop_sequence", "stop_id", "dist_m"))
        slowest = length / (4.4 * line.speed_factor)
        half = slowest + _MIN_LAYOVER_S
        cycle_min = half * len(directions)
        n_blocks = max(1, int(round(np.ceil(cycle_min / line.peak_headway_s) * fleet_scale)))
        headway = int(np.ceil(cycle_min / n_blocks / 60.0) * 60)
        cycle = headway * n_blocks
        for service in SERVICES:
            first, last = _WINDOWS[service]
            for b in range(n_blocks):
                if service == "SUN" and b % 4 != 0 and not line.frequency_based:
                    continue
                tripper = b % 2 == 1 and not line.frequency_based
                if tripper and service != "WD":
                    continue
                windows = _TRIPPER_WINDOWS if tripper else ((first, last),)
                starts = []
                for w0, w1 in windows:
                    k0 = int(np.ceil((w0 - first - b * headway) / cycle))
                    k1 = int(np.ceil((w1 - first - b * headway) / cycle))
                    starts.append(first + b * headway + np.arange(max(k0, 0), max(k1, 0)) * cycle)
                cycle_starts = np.concatenate(starts).astype(np.int64)
                if cycle_starts.size == 0:
                    continue
                dirs = np.tile(np.array(directions), cycle_starts.size)
                start_s = (np.repeat(cycle_starts, len(directions))
                           + dirs * (cycle // len(directions))).astype(np.int64)
                if line.frequency_based:
                    run_s = np.full(start_s.size, int(round(slowest / 60.0) * 60))
                else:
                    speed = planned_speed_m_s(start_s / 3600.0) * line.speed_factor
                    run_s = (np.round(length / speed / 60.0) * 60).astype(np.int64)
                block_id = f"{line.route_id}-{service}-{b:02d}"
                if line.frequency_based:
                    template = f"{line.route_id}-{service}"
                    trip_ids = np.array([f"{template}@{_hms(int(s))}" for s in start_s])
                    templates = np.full(start_s.size, template)
                else:
                    trip_ids = np.array([f"{block_id}-{k:03d}" for k in range(start_s.size)])
                    templates = trip_ids
                trip_parts.append({
                    "trip_id": trip_ids,
                    "template_trip_id": templates,
                    "route_id": np.full(start_s.size, line.route_id),
                    "service_id": np.full(start_s.size, service),
                    "direction_id": dirs,
                    "block_id": np.full(start_s.size, block_id),
                    "shape_id": np.array([f"{line.route_id}-{d}" for d in dirs]),
                    "start_s": start_s,
                    "run_s": run_s,
                    "planned_distance_m": np.full(start_s.size, length),
                    "headway_s": np.full(start_s.size, headway if line.frequency_based else 0),
                    "is_exact_times": np.full(start_s.size, True),
                })
            if line.frequency_based:
                freq_rows.append((f"{line.route_id}-{service}", first, last + 1, headway, 1))
    trips = pl.concat([pl.DataFrame(p) for p in trip_parts]).with_columns(
        pl.col("direction_id").cast(pl.Int32),
        pl.col("start_s").cast(pl.Int32),
        pl.col("run_s").cast(pl.Int32),
        pl.when(pl.col("headway_s") > 0).then(pl.col("headway_s")).cast(pl.Int32).alias("headway_s"),
    ).sort("service_id", "route_id", "block_id", "start_s")
    frequencies = pl.DataFrame(
        freq_rows, schema=["trip_id", "start_time_s", "end_time_s", "headway_s", "exact_times"], orient="row"
    )
    patterns = pl.concat(pattern_parts).with_columns(pl.col("stop_sequence").cast(pl.Int32))
    return Timetable(trips, patterns, shapes, frequencies, lines)


def _hms(seconds: int) -> str:
    return f"{seconds // 3600:02d}:{seconds // 60 % 60:02d}:{seconds % 60:02d}"


def holidays(years: range) -> list[date]:
    """Holidays written to calendar_dates.txt: Tiradentes (21 April, national), run as Sunday."""
    return [date(y, 4, 21) for y in years]


def service_ids_on(day: date) -> str:
    """The service that runs on a date: WD, SAT or SUN (holidays run the Sunday service)."""
    if day in holidays(range(day.year, day.year + 1)) or day.weekday() == 6:
        return "SUN"
    return "SAT" if day.weekday() == 5 else "WD"


def service_dates(start: date, days: int) -> list[date]:
    return [start + timedelta(days=i) for i in range(days)]
