"""The simulated network: lines as polylines in metres, their stops, garages and paths.

Geometry is built in SIRGAS 2000 / UTM 22S (EPSG:31982) around a real-looking Brazilian city
(the centre of Bento Gonçalves, RS) and converted to WGS 84 only when written. Two networks:
the built-in fictional city (`build_city_lines`, ~10 lines with every case the matching engine
must handle) and a synthetic grid city of any size (`build_grid_lines`, for the benchmark).
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import pairwise

import numpy as np
import polars as pl
from pyproj import Transformer

CRS_EPSG = 31982
CENTRE_LAT, CENTRE_LON = -29.1700, -51.5200
_TO_WGS84 = Transformer.from_crs(CRS_EPSG, 4326, always_xy=True)
_FROM_WGS84 = Transformer.from_crs(4326, CRS_EPSG, always_xy=True)
CENTRE_X, CENTRE_Y = _FROM_WGS84.transform(CENTRE_LON, CENTRE_LAT)
# Stops closer than this to an existing stop are the same stop (shared corridors, terminals).
STOP_SNAP_M = 30.0


@dataclass(frozen=True)
class LineSpec:
    """One line ('linha'): its itinerary (direction 0) and how it is operated.

    `waypoints_m` are (dx, dy) offsets from the city centre in metres. A circular line starts
    and ends at the same terminal and runs in one direction only. Headways are planned values
    in seconds; `operator_id`/`lot_id` say who runs it; `area`/`service_class` match the fleet
    register (BG art. 5-6); `speed_factor` scales the planned speed (district roads, express).
    """

    route_id: str
    short_name: str
    long_name: str
    waypoints_m: tuple[tuple[float, float], ...]
    peak_headway_s: int
    operator_id: str
    lot_id: str
    area: str = "urban"
    service_class: str = "conventional"
    vehicle_type: str = "convencional"
    stop_spacing_m: float = 400.0
    circular: bool = False
    frequency_based: bool = False
    speed_factor: float = 1.0
    demand_weight: float = 1.0
    color: str = "1F6FB2"


def build_city_lines() -> list[LineSpec]:
    """The built-in fictional city: ~10 lines around Bento Gonçalves.

    T10 is the frequent trunk (peak headway 8 min); C20 is circular with a single terminal and
    is published as frequencies.txt; S31 and S32 share the Av. Planalto corridor and its stops;
    D50 is the long district line to the rural area; X60 is the selective line.
    """
    corridor = ((0.0, 0.0), (300.0, 900.0), (500.0, 2200.0), (650.0, 3300.0))
    return [
        LineSpec(
            "T10",
            "10",
            "Troncal Centro - Planalto",
            (
                (-4200.0, -600.0),
                (-2500.0, -300.0),
                (-900.0, -150.0),
                (0.0, 0.0),
                (1400.0, 250.0),
                (3100.0, 700.0),
                (4800.0, 600.0),
            ),
            480,
            "O1",
            "L1",
            demand_weight=6.0,
            color="C0392B",
        ),
        LineSpec(
            "C20",
            "20",
            "Circular Centro",
            (
                (0.0, 0.0),
                (1200.0, -400.0),
                (1900.0, -1700.0),
                (900.0, -2800.0),
                (-700.0, -2300.0),
                (-1300.0, -1000.0),
                (0.0, 0.0),
            ),
            1200,
            "O1",
            "L1",
            circular=True,
            frequency_based=True,
            demand_weight=1.5,
            color="27AE60",
        ),
        LineSpec(
            "S31",
            "31",
            "Centro - São Roque (via Av. Planalto)",
            (*corridor, (1700.0, 4300.0), (2900.0, 5200.0)),
            900,
            "O1",
            "L1",
            demand_weight=2.0,
            color="8E44AD",
        ),
        LineSpec(
            "S32",
            "32",
            "Centro - Borgo (via Av. Planalto)",
            (*corridor, (-300.0, 4400.0), (-1500.0, 5300.0)),
            900,
            "O1",
            "L1",
            demand_weight=2.0,
            color="9B59B6",
        ),
        LineSpec(
            "U40",
            "40",
            "Centro - Licorsul",
            ((0.0, 0.0), (-600.0, 800.0), (-1900.0, 1500.0), (-3200.0, 1900.0)),
            1200,
            "O1",
            "L1",
            demand_weight=1.2,
        ),
        LineSpec(
            "U41",
            "41",
            "Centro - Zatt",
            ((0.0, 0.0), (700.0, -900.0), (2300.0, -1500.0), (3600.0, -2600.0)),
            1200,
            "O2",
            "L2",
            demand_weight=1.2,
        ),
        LineSpec(
            "U42",
            "42",
            "Centro - Eucaliptos",
            ((0.0, 0.0), (-800.0, -700.0), (-2100.0, -1900.0), (-2600.0, -3400.0)),
            1500,
            "O2",
            "L2",
            demand_weight=1.0,
        ),
        LineSpec(
            "U43",
            "43",
            "Centro - Vila Nova",
            ((0.0, 0.0), (1000.0, 600.0), (2200.0, 1800.0), (2700.0, 3000.0)),
            1500,
            "O2",
            "L2",
            demand_weight=1.0,
        ),
        LineSpec(
            "D50",
            "50",
            "Centro - Faria Lemos (distrito)",
            (
                (0.0, 0.0),
                (-900.0, -150.0),
                (-2500.0, -300.0),
                (-5200.0, -2600.0),
                (-8200.0, -4100.0),
                (-11800.0, -6900.0),
                (-14500.0, -8200.0),
            ),
            3600,
            "O2",
            "L2",
            area="district",
            stop_spacing_m=900.0,
            speed_factor=1.5,
            demand_weight=0.8,
            color="D35400",
        ),
        LineSpec(
            "X60",
            "60",
            "Seletivo Centro - Distrito Industrial",
            ((0.0, 0.0), (1400.0, 250.0), (3100.0, 700.0), (5400.0, 2400.0)),
            1800,
            "O2",
            "L2",
            service_class="selective",
            vehicle_type="micro",
            stop_spacing_m=1100.0,
            speed_factor=1.2,
            demand_weight=0.5,
            color="F1C40F",
        ),
    ]


def build_grid_lines(n_vehicles: int, seed: int) -> list[LineSpec]:
    """A synthetic grid city with enough lines for `n_vehicles` at the peak (benchmark scale).

    Lines are L-shaped or straight paths of 8-18 km on a 1 km street grid around the centre,
    peak headways of 6-20 min; two operators per lot, 8 lots.
    """
    rng = np.random.default_rng([seed, 7001])
    # a line of ~13 km at ~18 km/h with a 10 min headway needs ~10 vehicles at the peak
    n_lines = max(1, int(np.ceil(n_vehicles / 10.0)))
    half = 20_000.0 * np.sqrt(n_lines / 1400.0) + 6_000.0
    lines = []
    for i in range(n_lines):
        x0, y0 = np.round(rng.uniform(-half, half, 2) / 1000.0) * 1000.0
        length = rng.uniform(8_000.0, 18_000.0)
        angle = rng.integers(0, 4) * np.pi / 2
        bend = rng.uniform(0.3, 0.7) * length
        dx1, dy1 = np.cos(angle) * bend, np.sin(angle) * bend
        turn = angle + (np.pi / 2 if rng.random() < 0.5 else -np.pi / 2)
        dx2, dy2 = np.cos(turn) * (length - bend), np.sin(turn) * (length - bend)
        waypoints = ((x0, y0), (x0 + dx1, y0 + dy1), (x0 + dx1 + dx2, y0 + dy1 + dy2))
        lot = i % 8
        lines.append(
            LineSpec(
                f"G{i:04d}",
                f"{i:04d}",
                f"Linha {i:04d}",
                tuple((float(a), float(b)) for a, b in waypoints),
                int(rng.choice([360, 480, 600, 720, 900, 1200])),
                f"O{lot * 2 + int(i % 2) + 1}",
                f"L{lot + 1}",
            )
        )
    return lines


def densify(waypoints_m: np.ndarray, step_m: float = 50.0) -> np.ndarray:
    """Points every ~`step_m` along a polyline (vertices kept), as an (n, 2) array in metres."""
    out = [waypoints_m[:1]]
    for a, b in pairwise(waypoints_m):
        n = max(1, int(np.ceil(np.hypot(*(b - a)) / step_m)))
        f = np.arange(1, n + 1)[:, None] / n
        out.append(a + (b - a) * f)
    return np.concatenate(out)


def cumulative_m(xy: np.ndarray) -> np.ndarray:
    """Distance along a polyline at each vertex, metres (starts at 0)."""
    return np.concatenate([[0.0], np.cumsum(np.hypot(*np.diff(xy, axis=0).T))])


def to_wgs84(x_m: np.ndarray, y_m: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(lat, lon) in degrees of projected points (EPSG:31982)."""
    lon, lat = _TO_WGS84.transform(x_m, y_m)
    return np.asarray(lat), np.asarray(lon)


def from_wgs84(lat: np.ndarray, lon: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Projected (x, y) in metres (EPSG:31982) of WGS 84 points."""
    x, y = _FROM_WGS84.transform(lon, lat)
    return np.asarray(x), np.asarray(y)


@dataclass
class Paths:
    """Every polyline a vehicle can drive (shapes, detours, deadheads) on one distance axis.

    Path `p` occupies [offset[p], offset[p] + length[p]] of the global axis, with a gap between
    paths, so one `np.interp` places any (path, distance) pair: x = interp(offset[p] + d, ...).
    """

    axis_m: np.ndarray
    x_m: np.ndarray
    y_m: np.ndarray
    heading_deg: np.ndarray
    offset_m: np.ndarray
    length_m: np.ndarray

    @classmethod
    def build(cls, polylines: list[np.ndarray]) -> Paths:
        axes, xs, ys, heads, offsets, lengths = [], [], [], [], [], []
        base = 0.0
        for xy in polylines:
            cum = cumulative_m(xy)
            seg = np.diff(xy, axis=0)
            head = (np.degrees(np.arctan2(seg[:, 0], seg[:, 1])) + 360.0) % 360.0
            axes.append(cum + base)
            xs.append(xy[:, 0])
            ys.append(xy[:, 1])
            heads.append(np.concatenate([head, head[-1:]]))
            offsets.append(base)
            lengths.append(cum[-1])
            base += cum[-1] + 1000.0
        return cls(
            np.concatenate(axes),
            np.concatenate(xs),
            np.concatenate(ys),
            np.concatenate(heads),
            np.array(offsets),
            np.array(lengths),
        )

    def locate(
        self, path: np.ndarray, dist_m: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(x, y, heading) of points at `dist_m` along `path` (vectorised)."""
        g = self.offset_m[path] + np.clip(dist_m, 0.0, self.length_m[path])
        x = np.interp(g, self.axis_m, self.x_m)
        y = np.interp(g, self.axis_m, self.y_m)
        i = np.clip(np.searchsorted(self.axis_m, g, side="right") - 1, 0, len(self.axis_m) - 1)
        return x, y, self.heading_deg[i]


def detour_polyline(xy: np.ndarray, start_m: float, end_m: float, offset_m: float) -> np.ndarray:
    """The itinerary with [start_m, end_m] replaced by a parallel street `offset_m` to its left."""
    cum = cumulative_m(xy)
    inside = (cum > start_m) & (cum < end_m)
    a = np.array([np.interp(start_m, cum, xy[:, 0]), np.interp(start_m, cum, xy[:, 1])])
    b = np.array([np.interp(end_m, cum, xy[:, 0]), np.interp(end_m, cum, xy[:, 1])])
    direction = (b - a) / max(np.hypot(*(b - a)), 1.0)
    left = np.array([-direction[1], direction[0]]) * offset_m
    middle = np.concatenate([a[None], xy[inside], b[None]]) + left
    return np.concatenate([xy[cum <= start_m], a[None], middle, b[None], xy[cum >= end_m]])


def build_stops(lines: list[LineSpec]) -> tuple[pl.DataFrame, pl.DataFrame, dict[str, np.ndarray]]:
    """Stops of every line, shared where lines meet, and each line's stop pattern.

    Returns (stops: stop_id, x_m, y_m, area; patterns: route_id, stop_sequence (1-based),
    stop_id, dist_m = distance along direction 0's shape; shapes: route_id -> (n, 2) polyline).
    Stops are placed every `stop_spacing_m` from the origin and snapped to an existing stop
    within STOP_SNAP_M, so corridors and terminals share stop ids.
    """
    keys: dict[tuple[int, int], str] = {}
    stop_rows: list[tuple[str, float, float, str]] = []
    pattern_rows: list[tuple[str, int, str, float]] = []
    shapes: dict[str, np.ndarray] = {}
    for line in lines:
        xy = densify(np.array(line.waypoints_m) + np.array([CENTRE_X, CENTRE_Y]))
        shapes[line.route_id] = xy
        cum = cumulative_m(xy)
        # fixed spacing from the origin, so lines sharing a corridor share its stops
        dist = np.arange(0.0, cum[-1] - line.stop_spacing_m / 2, line.stop_spacing_m)
        dist = np.append(dist, cum[-1])
        sx, sy = np.interp(dist, cum, xy[:, 0]), np.interp(dist, cum, xy[:, 1])
        for seq, (d, x, y) in enumerate(zip(dist, sx, sy, strict=True), start=1):
            key = (int(np.round(x / STOP_SNAP_M)), int(np.round(y / STOP_SNAP_M)))
            stop_id = keys.get(key)
            if stop_id is None:
                stop_id = f"S{len(stop_rows) + 1:05d}"
                keys[key] = stop_id
                area = "rural" if line.area == "district" and d > 4000.0 else "urban"
                stop_rows.append((stop_id, float(x), float(y), area))
            pattern_rows.append((line.route_id, seq, stop_id, float(d)))
    stops = pl.DataFrame(stop_rows, schema=["stop_id", "x_m", "y_m", "area"], orient="row")
    patterns = pl.DataFrame(
        pattern_rows, schema=["route_id", "stop_sequence", "stop_id", "dist_m"], orient="row"
    )
    return stops, patterns, shapes
