"""`simulate(options, out_dir)`: a whole simulated operation with its ground truth.

Pure function of the options: the same options write byte-identical files. See README.md in
this package (also written into the output folder) for every file and column.
"""

from __future__ import annotations

import json
import shutil
from dataclasses import replace
from datetime import date
from importlib import resources
from pathlib import Path

import numpy as np
import polars as pl
import pyarrow.parquet as pq

from core.errors import ConfigError
from core.instants import to_utc_instant
from core.profile import load_profile
from core.tables.observed import INCIDENTS
from sample_data.avl import (
    build_dark_windows,
    build_mid_route_silences,
    build_true_pings,
    drop_dark,
    drop_silences,
    find_trip_silences,
    to_reported_pings,
)
from sample_data.demand import build_fares, build_journeys, compute_loads
from sample_data.fleet import GROUP, build_fleet
from sample_data.from_feed import build_feed_network, write_feed_files
from sample_data.gtfs_out import TIMEZONE, build_gtfs, write_gtfs
from sample_data.network import build_city_lines, build_grid_lines, build_stops, to_wgs84
from sample_data.operation import assign_operation, build_trip_days, midnight_epoch
from sample_data.options import SimulationOptions, SimulationSummary
from sample_data.records import build_cost_per_km, build_iqs_surveys, build_population, months_of
from sample_data.timetable import Timetable, build_timetable, count_blocks, service_dates
from sample_data.trajectory import (
    add_halt_offsets,
    build_legs,
    build_paths,
    build_plan,
    compute_times,
)

SILENCE_TRUTH_MIN_S = 300.0
"""truth/avl_silences.parquet records every silence of the units at least this long (5 min,
issue 16) between the departure and the arrival of a trip run to its end"""

AVL_COLUMNS = (
    "vehicle_id",
    "event_at",
    "lat",
    "lon",
    "speed_m_s",
    "heading_deg",
    "event_code",
    "operator_id",
)
OUTCOMES = ("on_time", "late", "early", "partial", "suppressed", "broken_down")


def _utc(col: str) -> pl.Expr:
    return to_utc_instant(col)


def build_network(opts: SimulationOptions) -> tuple[Timetable, pl.DataFrame]:
    """The timetable and stops of the built-in city (or the grid city when large)."""
    grid = opts.n_vehicles > opts.grid_city_above_vehicles
    lines = build_grid_lines(opts.n_vehicles, opts.seed) if grid else build_city_lines()
    stops, patterns, shapes = build_stops(lines)
    lengths = dict(patterns.group_by("route_id").agg(pl.col("dist_m").max()).iter_rows())
    n_base = sum(count_blocks(ln, lengths[ln.route_id], 1.0)[0] for ln in lines)
    scale = opts.n_vehicles / max(n_base, 1)
    return build_timetable(lines, patterns, shapes, 1.0 if abs(scale - 1.0) < 0.1 else scale), stops


def simulate(options: SimulationOptions, out_dir: Path) -> SimulationSummary:
    """Simulate `options.days` days from `options.start` (or the `options.dates`) and write every
    file into `out_dir` (see README.md)."""
    opts = options
    if opts.dates is not None:
        if not opts.dates or list(opts.dates) != sorted(set(opts.dates)):
            raise ConfigError(
                "the simulated dates must be a non-empty list of distinct dates in order",
                where="SimulationOptions.dates",
                hint="e.g. sampled_year_dates(2026, 1)",
            )
        # the first simulated day anchors everything `start` anchors (fleet ages, the feed)
        opts = replace(opts, start=opts.dates[0])
    elif opts.days < 1:
        raise ConfigError(f"--days must be at least 1, got {opts.days}", hint="e.g. --days 7")
    profile = load_profile(opts.profile_id)
    early_s = profile.trips.early_departure_s.value
    late_s = profile.trips.late_departure_s.value
    partial_ratio = profile.trips.partial_trip_min_ratio.value
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "truth").mkdir(exist_ok=True)
    dates = service_dates(opts.start, opts.days, opts.dates)

    if (out_dir / "gtfs").exists():
        shutil.rmtree(out_dir / "gtfs")
    tz = TIMEZONE
    day_services = None
    if opts.gtfs_path is not None:
        span = (dates[-1] - dates[0]).days + 1
        tt, stops, day_services, tz, feed_files = build_feed_network(
            opts.gtfs_path, dates[0], span, opts.n_vehicles, opts.min_layover_s
        )
        if opts.dates is not None:
            day_services = day_services.filter(pl.col("service_date").is_in(dates))
        write_feed_files(feed_files, out_dir / "gtfs", out_dir / "gtfs.zip")
    else:
        tt, stops = build_network(opts)
        years = range(dates[0].year, dates[-1].year + 1)
        write_gtfs(build_gtfs(tt, stops, years), out_dir / "gtfs", out_dir / "gtfs.zip")

    trips = build_trip_days(tt, dates, tz, day_services)
    if trips.height == 0:
        raise ConfigError(
            f"no scheduled trips between {dates[0]} and {dates[-1]}",
            hint="choose --start and --days inside the feed's calendar",
        )
    # the register covers the busiest day's blocks of each vehicle group, plus a reserve
    required = (
        trips.group_by(*GROUP, "service_date")
        .agg(n_blocks=pl.col("block_id").n_unique())
        .group_by(list(GROUP))
        .agg(pl.col("n_blocks").max())
    )
    fleet = build_fleet(required, profile, opts.start, opts.seed)
    fleet.write_csv(out_dir / "vehicles.csv")

    op = assign_operation(trips, fleet, opts, dates)
    trips = op.trips
    first_last = tt.patterns.group_by("shape_id").agg(
        first_stop=pl.col("stop_id").sort_by("stop_sequence").first(),
        last_stop=pl.col("stop_id").sort_by("stop_sequence").last(),
    )
    trips = trips.join(first_last, on="shape_id")
    plan, trip_plan = build_plan(trips, tt)
    trips = trips.join(trip_plan, on="tkey")
    weights = {ln.route_id: ln.demand_weight for ln in tt.lines}
    rides = build_journeys(trips, plan, stops, weights, opts)
    loads = compute_loads(plan.filter(pl.col("visited")), rides)
    pidx = build_paths(tt, stops, opts, trips)
    seq, visits = compute_times(trips, plan, loads, pidx, opts, early_s, late_s)
    visits = add_halt_offsets(visits, opts)
    legs, pieces = build_legs(seq, visits, pidx, opts)

    # --- truth ---------------------------------------------------------------------------
    vinfo = fleet.select("vehicle_id", "n_seats", "standing_area_m2")
    max_load = loads.group_by("tkey").agg(max_load=pl.col("load_after").max())
    skipped = (
        plan.filter(pl.col("is_detour"))
        .group_by("tkey")
        .agg(
            skipped_m=(
                pl.col("dist_m").filter(pl.col("stop_sequence") == pl.col("detour_b")).first()
                - pl.col("dist_m").filter(pl.col("stop_sequence") == pl.col("detour_a")).first()
            )
        )
    )
    t = (
        trips.join(
            seq.select("tkey", "actual_start", "arrival", "break_time", "break_dist", "true_dev_s"),
            on="tkey",
            how="left",
        )
        .join(max_load, on="tkey", how="left")
        .join(skipped, on="tkey", how="left")
        .join(vinfo, on="vehicle_id", how="left")
    )
    detour_justified = pl.col("is_detour") & pl.col("detour_justified")
    t = t.with_columns(
        true_distance_m=pl.when(pl.col("vehicle_id").is_null())
        .then(0.0)
        .when(pl.col("break_time").is_not_null())
        .then(pl.col("break_dist"))
        .otherwise(pl.col("planned_distance_m") - pl.col("skipped_m").fill_null(0.0)),
        is_breakdown=pl.col("break_time").is_not_null(),
        incident_id=pl.when(detour_justified)
        .then(pl.format("DET-{}", pl.col("tkey")))
        .otherwise(pl.col("incident_id")),
    ).with_columns(
        true_outcome=pl.when(pl.col("vehicle_id").is_null())
        .then(pl.lit("suppressed"))
        .when(pl.col("is_breakdown"))
        .then(pl.lit("broken_down"))
        .when(pl.col("true_distance_m") < partial_ratio * pl.col("planned_distance_m"))
        .then(pl.lit("partial"))
        .when(pl.col("true_dev_s") < -early_s)
        .then(pl.lit("early"))
        .when(pl.col("true_dev_s") > late_s)
        .then(pl.lit("late"))
        .otherwise(pl.lit("on_time")),
        is_justified=pl.col("incident_id").is_not_null(),
        max_load=pl.col("max_load").fill_null(0).cast(pl.Int32),
        max_standees_per_m2=(
            (pl.col("max_load").fill_null(0) - pl.col("n_seats")).clip(lower_bound=0)
            / pl.col("standing_area_m2")
        ).round(3),
    )
    truth_trips = t.sort("service_date", "trip_id").select(
        "service_date",
        "trip_id",
        "route_id",
        "direction_id",
        "block_id",
        "vehicle_id",
        "true_outcome",
        planned_start_at=_utc("planned_start"),
        actual_start_at=_utc("actual_start"),
        actual_end_at=pl.when(pl.col("is_breakdown")).then(None).otherwise(_utc("arrival")),
        departure_delay_s=pl.col("true_dev_s").round(0).cast(pl.Int32),
        planned_distance_m=pl.col("planned_distance_m").round(1),
        true_distance_m=pl.col("true_distance_m").round(1),
        is_breakdown="is_breakdown",
        is_justified="is_justified",
        incident_id="incident_id",
        is_detour="is_detour",
        max_load="max_load",
        max_standees_per_m2="max_standees_per_m2",
        injected="injected",
    )
    files: list[str] = []

    def put(df: pl.DataFrame, rel: str) -> None:
        path = out_dir / rel
        if rel.endswith(".parquet"):
            df.write_parquet(path, compression=opts.compression, statistics=False)
        else:
            df.write_csv(path)
        files.append(rel)

    put(truth_trips, "truth/trips.parquet")
    keyinfo = trips.select("tkey", "service_date", "trip_id", "vehicle_id")
    put(
        visits.join(keyinfo, on="tkey")
        .sort("service_date", "trip_id", "stop_sequence")
        .select(
            "service_date",
            "trip_id",
            "stop_sequence",
            "stop_id",
            "vehicle_id",
            arrived_at=_utc("arrived"),
            departed_at=_utc("departed"),
            # metres the bus stood past (+) or short of (-) the stop's point in its dwell
            halt_offset_m=pl.col("halt_m").round(1),
        ),
        "truth/stop_visits.parquet",
    )
    put(
        loads.join(visits.select("tkey", "stop_sequence", "stop_id"), on=["tkey", "stop_sequence"])
        .join(keyinfo, on="tkey")
        .sort("service_date", "trip_id", "stop_sequence")
        .select(
            "service_date",
            "trip_id",
            "stop_sequence",
            "stop_id",
            "n_boardings",
            "n_alightings",
            "load_after",
        ),
        "truth/loads.parquet",
    )
    brk = t.filter(pl.col("is_breakdown"))
    bx = pidx.paths.locate(
        brk["shape_id"].replace_strict(pidx.shape_path, return_dtype=pl.Int64).to_numpy(),
        brk["break_dist"].to_numpy(),
    )
    blat, blon = to_wgs84(bx[0], bx[1])
    repl = (
        trips.filter(pl.col("vehicle_id").is_not_null())
        .group_by("block_key")
        .agg(vs=pl.col("vehicle_id").unique(maintain_order=True))
    )
    breakdowns = (
        brk.join(repl, on="block_key", how="left")
        .with_columns(
            lat=pl.Series(np.round(blat, 6)),
            lon=pl.Series(np.round(blon, 6)),
            replacement_vehicle_id=pl.col("vs").list.get(1, null_on_oob=True),
        )
        .sort("break_time")
        .with_row_index("n")
        .select(
            breakdown_id=pl.format("BRK-{}", pl.col("n").cast(pl.String).str.zfill(4)),
            service_date="service_date",
            vehicle_id="vehicle_id",
            trip_id="trip_id",
            route_id="route_id",
            occurred_at=_utc("break_time"),
            lat="lat",
            lon="lon",
            dist_m=pl.col("break_dist").round(1),
            stand_s="break_stand_s",
            has_event_code="has_event_code",
            replacement_vehicle_id="replacement_vehicle_id",
        )
    )
    put(breakdowns, "truth/breakdowns.parquet")
    put(op.fleet_days, "truth/fleet_days.parquet")

    # --- incidents, surveys, population, costs -----------------------------------------------
    detours = t.filter(detour_justified).select(
        "incident_id",
        starts_at=_utc("planned_start"),
        ends_at=_utc("planned_end") + pl.duration(minutes=30),
        route_id="route_id",
        trip_id="trip_id",
        vehicle_id="vehicle_id",
        kind=pl.lit("detour"),
        is_justified=pl.lit(True),
        note=pl.lit("desvio de itinerário autorizado pelo órgão gestor"),
    )
    obs = (
        op.incidents.with_columns(
            _utc("starts_at").alias("starts_at"), _utc("ends_at").alias("ends_at")
        )
        if op.incidents.height
        else op.incidents
    )
    inc_cols = [c for c in INCIDENTS.column_names if c not in ("source", "ingested_at")]
    incidents = (
        pl.concat(
            [
                f.select(pl.col(c).cast(INCIDENTS.column(c).dtype) for c in inc_cols)
                for f in (obs, detours)
                if f.height
            ]
        )
        if (obs.height or detours.height)
        else INCIDENTS.empty().select(inc_cols)
    )
    put(incidents.sort("starts_at", "incident_id"), "incidents.csv")
    operators = sorted(fleet["operator_id"].unique().to_list())
    months = months_of(dates)
    put(
        build_iqs_surveys(operators, list(profile.quality.iqs_dimensions.value), months, opts.seed),
        "iqs_surveys.csv",
    )
    put(build_population(stops, opts.seed), "population.csv")
    put(build_cost_per_km(operators, months, opts.seed), "cost_per_km.csv")
    files += ["vehicles.csv", "gtfs.zip"]

    # --- fares ----------------------------------------------------------------------------------
    fares = build_fares(
        rides,
        visits,
        trips,
        opts.fare_full_brl,
        # a profile without an integration fare (CGS): no window, full fare
        profile.fares.integration_window_s.value if profile.fares.integration_window_s else -1,
        profile.fares.integration_fare_ratio.value if profile.fares.integration_fare_ratio else 1.0,
        opts.seed,
        selective_routes=[ln.route_id for ln in tt.lines if ln.service_class == "selective"],
    )
    put(
        fares.join(keyinfo.select("tkey", "service_date", "trip_id"), on="tkey")
        .sort("transaction_id")
        .select(
            "transaction_id",
            "service_date",
            "trip_id",
            pl.col("board_seq").alias("stop_sequence"),
            pl.col("alight_seq").alias("alighting_stop_sequence"),
            "leg",
        ),
        "truth/taps.parquet",
    )
    text_until = dates[min(len(dates), opts.text_days) - 1] if opts.text_days else dates[-1]
    fares_out = fares.with_columns(event_at=_utc("event_s"))
    put(
        fares_out.select(
            "transaction_id",
            pl.col("event_at").dt.strftime("%Y-%m-%dT%H:%M:%SZ"),
            "vehicle_id",
            "route_id",
            "card_id",
            "fare_class",
            "amount",
        ),
        "fares.csv",
    )
    text_end_s = _day_end_epoch(text_until, tz)
    fm = fares_out.filter(pl.col("event_s") < text_end_s)
    _write_mqtt(
        fm.select(
            topic=pl.format("pontual/fares/{}/{}", "operator_id", "vehicle_id"),
            payload=pl.struct(
                "transaction_id",
                pl.col("event_at").dt.strftime("%Y-%m-%dT%H:%M:%SZ"),
                "vehicle_id",
                "route_id",
                "card_id",
                "fare_class",
                "amount",
            ),
        ),
        out_dir / "fares_mqtt.jsonl",
    )
    files.append("fares_mqtt.jsonl")

    # --- AVL, in chunks of vehicles --------------------------------------------------------------
    n_pings = _write_avl(pieces, legs, pidx, fleet, breakdowns, seq, opts, out_dir, text_end_s)
    files += [
        "avl.parquet",
        "avl.csv",
        "avl_mqtt.jsonl",
        "truth/avl_units.parquet",
        "truth/avl_silences.parquet",
    ]

    readme = resources.files("sample_data").joinpath("README.md").read_text(encoding="utf-8")
    (out_dir / "README.md").write_text(_readme_header(opts, dates) + readme, encoding="utf-8")
    files.append("README.md")
    counts = truth_trips.group_by("true_outcome").len()
    return SimulationSummary(
        out_dir=out_dir,
        n_days=len(dates),
        n_routes=len(tt.lines),
        n_vehicles_register=fleet.height,
        n_scheduled_trips=truth_trips.height,
        n_pings=n_pings,
        n_fare_taps=fares.height,
        outcome_counts={
            o: int(counts.filter(pl.col("true_outcome") == o)["len"].sum()) for o in OUTCOMES
        },
        files=tuple(sorted(files)),
    )


def _day_end_epoch(day: date, tz: str) -> float:
    """End of a service day's text copies: 04:00 the next morning (service runs past midnight)."""
    return float(midnight_epoch(day, tz) + 86400 + 4 * 3600)


def _write_mqtt(df: pl.DataFrame, path: Path) -> None:
    """One JSON message per line, in the frame's order (= delivery order)."""
    df.write_ndjson(path)


def _write_avl(
    pieces: pl.DataFrame,
    legs: pl.DataFrame,
    pidx: object,
    fleet: pl.DataFrame,
    breakdowns: pl.DataFrame,
    seq: pl.DataFrame,
    opts: SimulationOptions,
    out_dir: Path,
    text_end_s: float,
) -> int:
    """Pings of every vehicle, chunk by chunk, into avl.parquet, avl.csv and avl_mqtt.jsonl."""
    rng = np.random.default_rng([opts.seed, 9001])
    vehicles = fleet["vehicle_id"].to_numpy()
    skewed = rng.random(len(vehicles)) < opts.clock_skew_vehicle_rate
    skew = pl.DataFrame(
        {
            "vehicle_id": vehicles,
            "clock_skew_s": np.where(
                skewed,
                np.round(
                    rng.uniform(*opts.clock_skew_s, len(vehicles))
                    * rng.choice([-1, 1], len(vehicles))
                ),
                0.0,
            ),
        }
    )
    skew.filter(pl.col("clock_skew_s") != 0).write_parquet(
        out_dir / "truth" / "avl_units.parquet", compression=opts.compression, statistics=False
    )
    skew = skew.filter(pl.col("clock_skew_s") != 0)
    dark = build_dark_windows(pieces, opts)
    if dark.height:
        dark.with_columns(_utc("start_s").alias("start_at"), _utc("end_s").alias("end_at")).drop(
            "start_s", "end_s"
        ).write_parquet(
            out_dir / "truth" / "avl_dark.parquet", compression=opts.compression, statistics=False
        )
    codes = breakdowns.filter(pl.col("has_event_code")).select(
        "vehicle_id", code_at=pl.col("occurred_at").dt.epoch("us").cast(pl.Float64) / 1e6 + 60.0
    )
    trip_of = seq.select("piece", "actual_start", "arrival", "trip_id")
    # a broken-down trip is not run to its end: no arrival
    run_to_end = seq.select(
        "piece",
        "service_date",
        "trip_id",
        "actual_start",
        pl.when(pl.col("break_time").is_null()).then(pl.col("arrival")).alias("arrival"),
    )
    silences = build_mid_route_silences(run_to_end, opts)
    silent_trips: list[pl.DataFrame] = []
    vehicle_order = pieces.select("vehicle_id").unique().sort("vehicle_id").with_row_index("vno")
    pcs = pieces.join(vehicle_order, on="vehicle_id").with_columns(
        chunk=pl.col("vno") // opts.vehicle_chunk
    )
    writer: pq.ParquetWriter | None = None
    csv_path, mqtt_path = out_dir / "avl.csv", out_dir / "avl_mqtt.jsonl"
    csv_path.unlink(missing_ok=True)
    mqtt_path.unlink(missing_ok=True)
    n_total = 0
    paths = pidx.paths  # type: ignore[attr-defined]
    with open(csv_path, "ab") as csv_f, open(mqtt_path, "ab") as mqtt_f:
        for chunk_no in range(int(pcs["chunk"].to_numpy().max()) + 1 if pcs.height else 0):
            pc = pcs.filter(pl.col("chunk") == chunk_no)
            true = build_true_pings(pc, legs, paths, opts.ping_interval_s, opts.seed + chunk_no)
            rep = drop_dark(to_reported_pings(true, pc, skew, opts, chunk_no), dark)
            rep = drop_silences(rep, silences)
            silent_trips.append(find_trip_silences(rep, run_to_end, SILENCE_TRUTH_MIN_S))
            if codes.height:
                tagged = (
                    rep.select("vehicle_id", "t_true")
                    .with_row_index("i")
                    .sort("t_true")
                    .join_asof(
                        codes.sort("code_at"),
                        left_on="t_true",
                        right_on="code_at",
                        by="vehicle_id",
                        strategy="backward",
                        check_sortedness=False,
                    )
                    .filter(pl.col("code_at").is_not_null())
                    .sort("t_true")
                    .group_by("vehicle_id", "code_at")
                    .agg(pl.col("i").first())["i"]
                )
                rep = (
                    rep.with_row_index("i")
                    .with_columns(
                        event_code=pl.when(pl.col("i").is_in(tagged.implode()))
                        .then(pl.lit("breakdown"))
                        .otherwise(pl.col("event_code"))
                    )
                    .drop("i")
                )
            if opts.with_trip_id:
                rep = (
                    rep.sort("t_true")
                    .join_asof(
                        trip_of.sort("actual_start"),
                        left_on="t_true",
                        right_on="actual_start",
                        by="piece",
                        strategy="backward",
                        check_sortedness=False,
                    )
                    .with_columns(
                        reported_trip_id=pl.when(pl.col("t_true") <= pl.col("arrival")).then(
                            pl.col("trip_id")
                        )
                    )
                )
                rep = rep.sort("delivered_s", "vehicle_id", "t_true")
            cols = [*AVL_COLUMNS, *(["reported_trip_id"] if opts.with_trip_id else [])]
            out = rep.select(cols)
            table = out.to_arrow()
            if writer is None:
                writer = pq.ParquetWriter(
                    out_dir / "avl.parquet",
                    table.schema,
                    compression=opts.compression,
                    write_statistics=False,
                )
            writer.write_table(table)
            n_total += out.height
            text = rep.filter(pl.col("t_true") < text_end_s) if opts.text_days else rep
            if opts.write_text_avl:
                text.select(
                    *[
                        pl.col(c).dt.strftime("%Y-%m-%dT%H:%M:%SZ")
                        if c == "event_at"
                        else pl.col(c)
                        for c in cols
                    ]
                ).write_csv(csv_f, include_header=chunk_no == 0)
                text.select(
                    topic=pl.format("pontual/avl/{}/{}", "operator_id", "vehicle_id"),
                    payload=pl.struct(
                        *[
                            pl.col("event_at").dt.strftime("%Y-%m-%dT%H:%M:%SZ")
                            if c == "event_at"
                            else pl.col(c)
                            for c in cols
                            if c != "operator_id"
                        ]
                    ),
                ).write_ndjson(mqtt_f)
    if writer is not None:
        writer.close()
    pl.concat(
        silent_trips
        or [
            pl.DataFrame(
                schema={
                    "service_date": pl.Date,
                    "trip_id": pl.String,
                    "start_s": pl.Float64,
                    "end_s": pl.Float64,
                }
            )
        ],
        how="diagonal_relaxed",
    ).select(
        "service_date",
        "trip_id",
        _utc("start_s").alias("last_fix_at"),
        _utc("end_s").alias("next_fix_at"),
        (pl.col("end_s") - pl.col("start_s")).round(0).cast(pl.Int32).alias("silence_s"),
    ).sort("service_date", "trip_id", "last_fix_at").write_parquet(
        out_dir / "truth" / "avl_silences.parquet", compression=opts.compression, statistics=False
    )
    return n_total


def _readme_header(opts: SimulationOptions, dates: list[date]) -> str:
    shown: dict[str, object] = {
        k: (str(v) if not isinstance(v, int | float | bool | str | type(None)) else v)
        for k, v in opts.__dict__.items()
        if not (k == "dates" and v is None)  # consecutive days: the header stays as it was
    }
    if opts.dates is not None:
        shown["dates"] = [d.isoformat() for d in opts.dates]
        shown.pop("days")
    sampled = (
        f"A sampled operation: {len(dates)} service days, not every day between these dates "
        f"({', '.join(d.isoformat() for d in dates)}). Monthly and yearly figures computed from "
        f"it are those of the simulated days only: a sampled year stands for the year the way a "
        f"survey sample does. Day-indexed options (text_days, fleet_cut_start_day, "
        f"fleet_cut_days) count simulated days.\n\n"
        if opts.dates is not None
        else ""
    )
    return (
        f"# Simulated operation {dates[0].isoformat()} .. {dates[-1].isoformat()}\n\n"
        f"{sampled}"
        f"Generated by `pontual simulate` with these options (same options -> same bytes):\n\n"
        f"```json\n{json.dumps(shown, indent=1, sort_keys=True)}\n```\n\n"
    )


def default_options(**changes: object) -> SimulationOptions:
    """The defaults with some fields changed (for tests and the CLI)."""
    return replace(SimulationOptions(), **changes)  # type: ignore[arg-type]
