"""The planned service of the simulated network: shapes, stop patterns, blocks and trips.

Each line runs `n` blocks ('tabelas') that cycle between its terminals every `cycle_s`, evenly
spaced at the peak. Even blocks run all day; odd blocks are peak trippers (they go back to the
garage between peaks). Saturdays keep the all-day blocks, Sundays every other one. Planned run
times follow the time of day (slower at the peaks); the layover absorbs the difference so the
cycle stays fixed. The frequency-based line keeps one run time and is published as
frequencies.txt with trips named '<template>@HH:MM:SS'.
"""

from __future__ import annotations

import calendar
from dataclasses import dataclass
from datetime import date, timedelta

import numpy as np
import polars as pl

from sample_data.network import LineSpec

SERVICES = ("WD", "SAT", "SUN")
# Service windows (first departure, last departure), seconds after midnight.
_WINDOWS = {
    "WD": (5 * 3600 + 1800, 23 * 3600),
    "SAT": (6 * 3600, 22 * 3600),
    "SUN": (7 * 3600, 21 * 3600),
}
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


def count_blocks(line: LineSpec, length_m: float, fleet_scale: float) -> tuple[int, int, float]:
    """(blocks, peak headway s, slowest run time s) of a line: enough blocks for its peak headway."""
    slowest = length_m / (4.4 * line.speed_factor)
    n_dirs = 1 if line.circular else 2
    cycle_min = (slowest + _MIN_LAYOVER_S) * n_dirs
    n_blocks = max(1, int(np.round(np.ceil(cycle_min / line.peak_headway_s) * fleet_scale)))
    headway = int(np.ceil(cycle_min / n_blocks / 60.0) * 60)
    return n_blocks, headway, slowest


def build_timetable(
    lines: list[LineSpec],
    route_patterns: pl.DataFrame,
    route_shapes: dict[str, np.ndarray],
    fleet_scale: float,
) -> Timetable:
    """Shapes per direction, stop patterns, blocks and planned trips of every line and service.

    `fleet_scale` multiplies the number of blocks of each line (to reach a target fleet).
    """
    circular = {ln.route_id: ln.circular for ln in lines}
    lengths = dict(route_patterns.group_by("route_id").agg(pl.col("dist_m").max()).iter_rows())
    shapes: dict[str, np.ndarray] = {}
    for line in lines:
        xy = route_shapes[line.route_id]
        shapes[f"{line.route_id}-0"] = xy
        if not line.circular:
            shapes[f"{line.route_id}-1"] = xy[::-1].copy()
    p0 = route_patterns.with_columns(shape_id=pl.format("{}-0", "route_id"))
    p1 = route_patterns.filter(
        ~pl.col("route_id").replace_strict(circular, return_dtype=pl.Boolean)
    ).with_columns(
        shape_id=pl.format("{}-1", "route_id"),
        stop_sequence=pl.col("stop_sequence").max().over("route_id") + 1 - pl.col("stop_sequence"),
        dist_m=pl.col("dist_m").max().over("route_id") - pl.col("dist_m"),
    )
    patterns = (
        pl.concat([p0, p1])
        .select("shape_id", pl.col("stop_sequence").cast(pl.Int32), "stop_id", "dist_m")
        .sort("shape_id", "stop_sequence")
    )

    cols: dict[str, list[np.ndarray]] = {
        k: [] for k in ("line", "service", "block", "dir", "start", "pos")
    }
    freq_rows: list[tuple[str, int, int, int, int]] = []
    for li, line in enumerate(lines):
        n_blocks, headway, _ = count_blocks(line, lengths[line.route_id], fleet_scale)
        directions = np.array([0] if line.circular else [0, 1])
        cycle = headway * n_blocks
        for si, service in enumerate(SERVICES):
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
                n = cycle_starts.size * len(directions)
                if n == 0:
                    continue
                dirs = np.tile(directions, cycle_starts.size)
                cols["start"].append(
                    np.repeat(cycle_starts, len(directions)) + dirs * (cycle // len(directions))
                )
                cols["dir"].append(dirs)
                cols["line"].append(np.full(n, li))
                cols["service"].append(np.full(n, si))
                cols["block"].append(np.full(n, b))
                cols["pos"].append(np.arange(n))
            if line.frequency_based:
                freq_rows.append((f"{line.route_id}-{service}", first, last + 1, headway, 1))
    info = pl.DataFrame(
        {
            "line": np.arange(len(lines)),
            "route_id": [ln.route_id for ln in lines],
            "speed_factor": [ln.speed_factor for ln in lines],
            "frequency_based": [ln.frequency_based for ln in lines],
            "planned_distance_m": [lengths[ln.route_id] for ln in lines],
            "headway": [count_blocks(ln, lengths[ln.route_id], fleet_scale)[1] for ln in lines],
        }
    )
    raw = pl.DataFrame({k: np.concatenate(v) for k, v in cols.items()}).join(info, on="line")
    speed = planned_speed_m_s(raw["start"].to_numpy() / 3600.0) * raw["speed_factor"].to_numpy()
    slowest = raw["planned_distance_m"].to_numpy() / (4.4 * raw["speed_factor"].to_numpy())
    run_s = np.where(
        raw["frequency_based"].to_numpy(),
        np.round(slowest / 60.0) * 60,
        np.round(raw["planned_distance_m"].to_numpy() / speed / 60.0) * 60,
    )
    service_col = pl.Series(SERVICES).gather(raw["service"])
    block_id = pl.format(
        "{}-{}-{}", "route_id", "service_id", pl.col("block").cast(pl.String).str.zfill(2)
    )
    template = pl.format("{}-{}", "route_id", "service_id")
    trips = (
        raw.with_columns(service_id=service_col, run_s=pl.Series(run_s))
        .with_columns(
            block_id=block_id,
            trip_id=pl.when(pl.col("frequency_based"))
            .then(pl.format("{}@{}", template, _hms_expr("start")))
            .otherwise(pl.format("{}-{}", block_id, pl.col("pos").cast(pl.String).str.zfill(3))),
        )
        .select(
            "trip_id",
            template_trip_id=pl.when(pl.col("frequency_based"))
            .then(template)
            .otherwise(pl.col("trip_id")),
            route_id="route_id",
            service_id="service_id",
            direction_id=pl.col("dir").cast(pl.Int32),
            block_id="block_id",
            shape_id=pl.format("{}-{}", "route_id", "dir"),
            start_s=pl.col("start").cast(pl.Int32),
            run_s=pl.col("run_s").cast(pl.Int32),
            planned_distance_m="planned_distance_m",
            headway_s=pl.when(pl.col("frequency_based")).then(pl.col("headway")).cast(pl.Int32),
            is_exact_times=pl.lit(True),
        )
        .sort("service_id", "route_id", "block_id", "start_s")
    )
    frequencies = pl.DataFrame(
        freq_rows,
        orient="row",
        schema={
            "trip_id": pl.String,
            "start_time_s": pl.Int64,
            "end_time_s": pl.Int64,
            "headway_s": pl.Int64,
            "exact_times": pl.Int64,
        },
    )
    return Timetable(trips, patterns, shapes, frequencies, lines)


def _hms_expr(col: str) -> pl.Expr:
    s = pl.col(col)
    return pl.format(
        "{}:{}:{}",
        (s // 3600).cast(pl.String).str.zfill(2),
        (s // 60 % 60).cast(pl.String).str.zfill(2),
        (s % 60).cast(pl.String).str.zfill(2),
    )


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


def service_dates(start: date, days: int, dates: tuple[date, ...] | None = None) -> list[date]:
    """The simulated service days: `dates` when given, else `days` days from `start`."""
    if dates is not None:
        return list(dates)
    return [start + timedelta(days=i) for i in range(days)]


def sampled_year_dates(year: int, days_per_month: int) -> tuple[date, ...]:
    """A sampled year: `days_per_month` working days (Monday-Friday, not a holiday) of each
    month, spread evenly over the month's working days (one a month: the middle one)."""
    picked: list[date] = []
    for month in range(1, 13):
        n_days = calendar.monthrange(year, month)[1]
        days = (date(year, month, d) for d in range(1, n_days + 1))
        working = [d for d in days if service_ids_on(d) == "WD"]
        n = min(days_per_month, len(working))
        picked += [working[(2 * k + 1) * len(working) // (2 * n)] for k in range(n)]
    return tuple(picked)
