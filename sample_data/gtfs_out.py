"""Write the simulated network as a GTFS folder and a byte-stable zip."""

from __future__ import annotations

import zipfile
from datetime import date
from pathlib import Path

import numpy as np
import polars as pl

from sample_data.network import to_wgs84
from sample_data.timetable import SERVICES, Timetable, holidays

TIMEZONE = "America/Sao_Paulo"
_FILES = (
    "agency",
    "routes",
    "stops",
    "trips",
    "stop_times",
    "calendar",
    "calendar_dates",
    "shapes",
    "frequencies",
)


def _gtfs_time(col: str) -> pl.Expr:
    s = pl.col(col)
    return pl.format(
        "{}:{}:{}",
        (s // 3600).cast(pl.String).str.zfill(2),
        (s // 60 % 60).cast(pl.String).str.zfill(2),
        (s % 60).cast(pl.String).str.zfill(2),
    )


def build_gtfs(tt: Timetable, stops: pl.DataFrame, years: range) -> dict[str, pl.DataFrame]:
    """The GTFS files as frames (text columns as GTFS writes them)."""
    operators = sorted({ln.operator_id for ln in tt.lines})
    agency = pl.DataFrame(
        {
            "agency_id": operators,
            "agency_name": [f"Viação Simulada {o}" for o in operators],
            "agency_url": ["https://example.org/pontual"] * len(operators),
            "agency_timezone": [TIMEZONE] * len(operators),
            "agency_lang": ["pt"] * len(operators),
        }
    )
    routes = pl.DataFrame(
        {
            "route_id": [ln.route_id for ln in tt.lines],
            "agency_id": [ln.operator_id for ln in tt.lines],
            "route_short_name": [ln.short_name for ln in tt.lines],
            "route_long_name": [ln.long_name for ln in tt.lines],
            "route_type": [3] * len(tt.lines),
            "route_color": [ln.color for ln in tt.lines],
            "route_text_color": ["FFFFFF"] * len(tt.lines),
        }
    )
    lat, lon = to_wgs84(stops["x_m"].to_numpy(), stops["y_m"].to_numpy())
    gstops = stops.select(
        "stop_id",
        stop_code=pl.col("stop_id").str.slice(1),
        stop_name=pl.format("Parada {}", pl.col("stop_id").str.slice(1)),
        stop_lat=pl.Series(np.round(lat, 6)),
        stop_lon=pl.Series(np.round(lon, 6)),
        location_type=pl.lit(0),
        wheelchair_boarding=pl.lit(1),
    )
    freq_templates = set(tt.frequencies["trip_id"].to_list()) if tt.frequencies.height else set()
    gtrips = tt.trips.filter(~pl.col("template_trip_id").is_in(list(freq_templates)))
    templates = (
        tt.trips.filter(pl.col("template_trip_id").is_in(list(freq_templates)))
        .sort("start_s")
        .unique("template_trip_id", keep="first", maintain_order=True)
        .with_columns(trip_id=pl.col("template_trip_id"), block_id=pl.lit(None, pl.String))
    )
    all_trips = pl.concat([gtrips, templates]).sort("route_id", "service_id", "start_s", "trip_id")
    heads = tt.patterns.group_by("shape_id").agg(
        last=pl.col("stop_id").sort_by("stop_sequence").last()
    )
    trips = all_trips.join(heads, on="shape_id").select(
        "route_id",
        "service_id",
        "trip_id",
        trip_headsign=pl.format("Parada {}", pl.col("last").str.slice(1)),
        direction_id="direction_id",
        block_id="block_id",
        shape_id="shape_id",
    )
    st = (
        all_trips.select("trip_id", "shape_id", "start_s", "run_s", "planned_distance_m")
        .join(tt.patterns, on="shape_id")
        .with_columns(
            t=(
                pl.col("start_s")
                + (pl.col("run_s") * pl.col("dist_m") / pl.col("planned_distance_m")).round(0)
            ).cast(pl.Int64),
            last=pl.col("stop_sequence") == pl.col("stop_sequence").max().over("trip_id"),
        )
        .sort("trip_id", "stop_sequence")
    )
    stop_times = st.select(
        "trip_id",
        arrival_time=_gtfs_time("t"),
        departure_time=_gtfs_time("t"),
        stop_id="stop_id",
        stop_sequence="stop_sequence",
        timepoint=((pl.col("stop_sequence") == 1) | pl.col("last")).cast(pl.Int32),
        shape_dist_traveled=pl.col("dist_m").round(1),
    )
    shape_parts = []
    for sid in sorted(tt.shapes):
        xy = tt.shapes[sid]
        slat, slon = to_wgs84(xy[:, 0], xy[:, 1])
        dist = np.concatenate([[0.0], np.cumsum(np.hypot(*np.diff(xy, axis=0).T))])
        shape_parts.append(
            pl.DataFrame(
                {
                    "shape_id": sid,
                    "shape_pt_lat": np.round(slat, 6),
                    "shape_pt_lon": np.round(slon, 6),
                    "shape_pt_sequence": np.arange(1, len(xy) + 1),
                    "shape_dist_traveled": np.round(dist, 1),
                }
            )
        )
    days = {"WD": (1, 1, 1, 1, 1, 0, 0), "SAT": (0, 0, 0, 0, 0, 1, 0), "SUN": (0, 0, 0, 0, 0, 0, 1)}
    names = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
    calendar = pl.DataFrame(
        [
            {
                "service_id": s,
                **dict(zip(names, days[s], strict=True)),
                "start_date": f"{years.start}0101",
                "end_date": f"{years.stop - 1}1231",
            }
            for s in SERVICES
        ]
    )
    cal_dates = []
    for h in holidays(years):
        wd = "SUN" if h.weekday() == 6 else "SAT" if h.weekday() == 5 else "WD"
        if wd != "SUN":
            cal_dates += [(wd, _ymd(h), 2), ("SUN", _ymd(h), 1)]
    calendar_dates = pl.DataFrame(
        cal_dates, schema=["service_id", "date", "exception_type"], orient="row"
    )
    frequencies = tt.frequencies.select(
        "trip_id",
        start_time=_gtfs_time("start_time_s"),
        end_time=_gtfs_time("end_time_s"),
        headway_secs="headway_s",
        exact_times="exact_times",
    )
    return {
        "agency": agency,
        "routes": routes,
        "stops": gstops,
        "trips": trips,
        "stop_times": stop_times,
        "calendar": calendar,
        "calendar_dates": calendar_dates,
        "shapes": pl.concat(shape_parts),
        "frequencies": frequencies,
    }


def _ymd(d: date) -> str:
    return d.strftime("%Y%m%d")


def write_gtfs(files: dict[str, pl.DataFrame], folder: Path, zip_path: Path) -> None:
    """Write `folder/*.txt` and a zip of them with fixed timestamps (byte-identical reruns)."""
    folder.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(zip_path, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=1) as zf:
        for name in _FILES:
            path = folder / f"{name}.txt"
            files[name].write_csv(path)
            info = zipfile.ZipInfo(f"{name}.txt", date_time=(2026, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            zf.writestr(info, path.read_bytes(), compresslevel=1)
