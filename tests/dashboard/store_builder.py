"""A small store with hand-known values for the dashboard tests (one day, two lines).

Tables declared in `core.tables` are written through `Store.append` (so the frames conform to
the declarations); tables another engineer has not declared yet are created from the frame,
with the columns of their documented contract, so the pages can be exercised meanwhile.
"""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import polars as pl

import core.tables  # noqa: F401  (registers every declaration)
from core.schema import TABLES
from core.store import Store

DAY = date(2026, 3, 2)
T0 = datetime(2026, 3, 2, 10, 0, tzinfo=UTC)  # 07:00 in Bento Gonçalves (UTC-3)
NOW = datetime(2026, 3, 3, 1, 0, tzinfo=UTC)

# Headline values of the `indicators` table the Visão geral page must show (system scope).
INDICATORS = {
    ("2026-03", "icv_score"): (None, None, 82.5),
    ("2026-03", "icv_fulfilment"): (1449.0, 1489.0, 0.9731),
    ("2026-03", "icv_punctuality"): (1275.0, 1449.0, 0.88),
    ("2026-03", "breakdowns_per_10000_km"): (3.0, 24000.0, 1.25),
    ("2026-03", "trips_suppressed"): (None, None, 40.0),
    ("2026-03", "km_efficiency"): (22896.0, 24000.0, 0.954),
    ("2026-03", "ipk"): (44880.0, 24000.0, 1.87),
    ("2026-02", "icv_fulfilment"): (1400.0, 1456.8, 0.961),
    ("2026-02", "icv_score"): (None, None, 80.0),
    ("2026-02", "trips_suppressed"): (None, None, 45.0),
    ("2026", "annual_score"): (None, None, 84.0),
}


def _default(dtype: pl.DataType) -> object:
    if dtype.is_numeric():
        return 0
    if dtype == pl.Boolean:
        return False
    if dtype == pl.Date:
        return DAY
    if isinstance(dtype, pl.Datetime):
        return NOW
    return ""


def write(store: Store, name: str, frame: pl.DataFrame) -> None:
    """Append through the declaration when there is one, else create the table from `frame`."""
    decl = TABLES.get(name)
    if decl is not None:
        fill = {
            c.name: _default(c.dtype)
            for c in decl.columns
            if not c.nullable and c.name not in frame.columns and c.name != decl.identity
        }
        fill.update({"pontual_version": "test", "profile_id": "bento-goncalves-2021"})
        store.append(name, frame, fill={k: v for k, v in fill.items() if k in decl.column_names})
        return
    store.con.register("_frame", frame.to_arrow())
    try:
        store.con.execute(f'CREATE TABLE "{name}" AS SELECT * FROM _frame').fetchall()
    finally:
        store.con.unregister("_frame")


def at(seconds: int) -> datetime:
    return T0 + timedelta(seconds=seconds)


def build_store(path: Path) -> Path:
    """Write the fixture store at `path`, publish its snapshot, return `path`."""
    src = {"source": "test", "ingested_at": NOW}
    with Store.open(path) as store:
        write(
            store,
            "feed_versions",
            pl.DataFrame(
                {
                    "feed_id": ["f1"],
                    "source": ["test"],
                    "source_sha256": ["x"],
                    "loaded_at": [NOW],
                    "timezone": ["America/Sao_Paulo"],
                    "crs_epsg": [31982],
                    "valid_from": [date(2026, 1, 1)],
                    "valid_to": [date(2026, 12, 31)],
                    "pontual_version": ["test"],
                }
            ),
        )
        write(
            store,
            "gtfs_routes",
            pl.DataFrame(
                {
                    "feed_id": ["f1", "f1"],
                    "route_id": ["L1", "L2"],
                    "agency_id": ["OP1", "OP2"],
                    "route_short_name": ["101", "202"],
                    "route_long_name": ["Centro – Bairro", "Circular"],
                    "route_type": [3, 3],
                }
            ),
        )
        stops = pl.DataFrame(
            {
                "feed_id": "f1",
                "stop_id": ["S1", "S2", "S3"],
                "stop_name": ["Terminal Centro", "Praça", "Terminal Bairro"],
                "stop_lat": [-29.170, -29.160, -29.150],
                "stop_lon": [-51.520, -51.510, -51.500],
            }
        )
        write(store, "gtfs_stops", stops)
        write(
            store,
            "gtfs_shapes",
            pl.DataFrame(
                {
                    "feed_id": "f1",
                    "shape_id": "SH1",
                    "shape_pt_sequence": [1, 2, 3],
                    "shape_pt_lat": [-29.170, -29.160, -29.150],
                    "shape_pt_lon": [-51.520, -51.510, -51.500],
                    "shape_x_m": [0.0, 1400.0, 2800.0],
                    "shape_y_m": [0.0, 1400.0, 2800.0],
                    "shape_dist_m": [0.0, 2000.0, 4000.0],
                    "is_from_stops": False,
                }
            ),
        )
        write(
            store,
            "gtfs_stop_times",
            pl.DataFrame(
                {
                    "feed_id": "f1",
                    "trip_id": ["T1"] * 3 + ["T2"] * 3,
                    "stop_sequence": [1, 2, 3] * 2,
                    "stop_id": ["S1", "S2", "S3"] * 2,
                    "arrival_time_s": [25200, 25800, 26400, 28800, 29400, 30000],
                    "departure_time_s": [25200, 25800, 26400, 28800, 29400, 30000],
                    "shape_dist_m": [0.0, 2000.0, 4000.0] * 2,
                }
            ),
        )
        # Three trips of line L1 (07:00, 08:00, 09:00) and one of L2 (08:00).
        starts = [25200, 28800, 32400, 28800]
        write(
            store,
            "scheduled_timetable_trips",  # read through the scheduled_trips view
            pl.DataFrame(
                {
                    "feed_id": "f1",
                    "service_date": DAY,
                    "trip_id": ["L1-0700", "L1-0800", "L1-0900", "L2-0800"],
                    "template_trip_id": ["T1", "T2", "T2", "T2"],
                    "route_id": ["L1", "L1", "L1", "L2"],
                    "direction_id": [0, 0, 0, 0],
                    "block_id": "B1",
                    "shape_id": "SH1",
                    "service_id": "WD",
                    "planned_start_s": [25200, 28800, 28800, 28800],
                    "planned_end_s": [26400, 30000, 30000, 30000],
                    "planned_start_at": [at(s - 25200) for s in starts],
                    "planned_end_at": [at(s - 25200 + 1200) for s in starts],
                    "planned_distance_m": 4000.0,
                    "first_stop_id": "S1",
                    "last_stop_id": "S3",
                    "n_stops": 3,
                    "is_exact_times": True,
                }
            ),
        )
        # Pings of vehicle V1 running L1-0700 two minutes late (ping ids 1..5).
        write(
            store,
            "vehicle_locations",
            pl.DataFrame(
                {
                    "vehicle_id": "V1",
                    "event_at": [at(120 + 300 * i) for i in range(5)],
                    "lat": [-29.170, -29.165, -29.160, -29.155, -29.150],
                    "lon": [-51.520, -51.515, -51.510, -51.505, -51.500],
                    "speed_m_s": 6.0,
                    **src,
                }
            ),
        )
        write(
            store,
            "vehicles",
            pl.DataFrame(
                {
                    "vehicle_id": ["V1", "V2", "V3", "V4"],
                    "plate": ["IAA1A11", "IAA1A12", "IAA1A13", "IAA1A14"],
                    "operator_id": ["OP1", "OP1", "OP2", "OP2"],
                    "lot_id": ["LOTE1", "LOTE1", "LOTE2", "LOTE2"],
                    "service_area": ["urban", "urban", "district", "urban"],
                    "service_class": "conventional",
                    "vehicle_type": ["convencional", "micro", "convencional", "padron"],
                    "manufacture_year": [2020, 2012, 2015, 2024],
                    "n_seats": [38, 21, 38, None],
                    "standing_area_m2": [6.0, 2.5, 6.0, None],
                    "last_inspection_on": [
                        date(2025, 1, 10),
                        date(2025, 12, 1),
                        None,
                        date(2025, 6, 1),
                    ],
                    "is_reserve": [False, True, False, False],
                    **src,
                }
            ),
        )
        write(
            store,
            "incidents",
            pl.DataFrame(
                {
                    "incident_id": ["INC1"],
                    "starts_at": [at(3000)],
                    "ends_at": [at(9000)],
                    "route_id": ["L1"],
                    "kind": ["obstruction"],
                    "is_justified": [True],
                    "note": ["Bloqueio da via"],
                    **src,
                }
            ),
        )
        write(
            store,
            "trip_outcomes",
            pl.DataFrame(
                {
                    "service_date": DAY,
                    "trip_id": ["L1-0700", "L1-0800", "L1-0900", "L2-0800"],
                    "route_id": ["L1", "L1", "L1", "L2"],
                    "direction_id": 0,
                    "block_id": "B1",
                    "planned_start_at": [at(0), at(3600), at(7200), at(3600)],
                    "planned_distance_m": 4000.0,
                    "outcome": ["on_time", "suppressed", "late", "on_time"],
                    "departure_delay_s": [120, None, 420, -30],
                    "actual_start_at": [at(120), None, at(7620), at(3570)],
                    "actual_end_at": [at(1320), None, at(8820), at(4770)],
                    "vehicle_id": ["V1", None, "V2", "V3"],
                    "run_index": [0, None, 0, 0],
                    "distance_run_m": [4000.0, None, 4000.0, 4000.0],
                    "coverage_ratio": [1.0, None, 1.0, 1.0],
                    "first_ping_id": [1, None, None, None],
                    "last_ping_id": [5, None, None, None],
                    "n_pings": [5, None, None, None],
                    "is_justified": [False, True, False, False],
                    "incident_id": [None, "INC1", None, None],
                    "reason": [
                        "partiu 2 min após o horário, dentro da tolerância",
                        "não realizada; bloqueio da via aprovado",
                        "partiu 7 min após o horário",
                        "partiu no horário",
                    ],
                }
            ),
        )
        write(
            store,
            "stop_visits",
            pl.DataFrame(
                {
                    "service_date": DAY,
                    "vehicle_id": "V1",
                    "run_index": 0,
                    "trip_id": "L1-0700",
                    "stop_sequence": [1, 2, 3],
                    "stop_id": ["S1", "S2", "S3"],
                    "stop_dist_m": [0.0, 2000.0, 4000.0],
                    "planned_arrival_at": [at(0), at(600), at(1200)],
                    "arrival_at": [at(120), at(780), at(1320)],
                    "arrival_delay_s": [120, 180, 120],
                    "is_interpolated": [False, False, False],
                }
            ),
        )
        write(
            store,
            "headway_observations",
            pl.DataFrame(
                {
                    "service_date": DAY,
                    "route_id": "L1",
                    "direction_id": 0,
                    "hour_at": [at(0), at(3600)],
                    "n_planned": [6, 6],
                    "n_observed": [6, 5],
                    "planned_headway_mean_s": [600.0, 600.0],
                    "observed_headway_mean_s": [600.0, 720.0],
                    "scheduled_wait_s": [300.0, 300.0],
                    "actual_wait_s": [330.0, 420.0],
                    "excess_wait_s": [30.0, 120.0],
                }
            ),
        )
        write(
            store,
            "indicators",
            pl.DataFrame(
                [
                    {
                        "scope": "system",
                        "scope_id": "all",
                        "period": period,
                        "indicator": indicator,
                        "numerator": num,
                        "denominator": den,
                        "value": value,
                        "unit": "ratio" if value is not None and value < 1 else "",
                    }
                    for (period, indicator), (num, den, value) in INDICATORS.items()
                ]
                + [
                    {
                        "scope": "line",
                        "scope_id": "L1",
                        "period": "2026-03",
                        "indicator": "icv_fulfilment",
                        "numerator": 2.0,
                        "denominator": 2.0,
                        "value": 1.0,
                        "unit": "ratio",
                    }
                ]
            ),
        )
        # Crowding (BG limit 4 standees per m²; 38 seats + 6 m² -> 62 at the limit): run
        # L1-0700 peaks at 60 on board (3,7 per m², under), L1-0900 at 70 (5,3 per m², over).
        write(
            store,
            "trip_loads",
            pl.DataFrame(
                {
                    "service_date": DAY,
                    "vehicle_id": "V1",
                    "run_index": 0,
                    "trip_id": "L1-0700",
                    "route_id": "L1",
                    "direction_id": 0,
                    "stop_sequence": [1, 2, 3],
                    "stop_id": ["S1", "S2", "S3"],
                    "n_taps": [50, 20, 0],
                    "n_boardings": [50.0, 20.0, 0.0],
                    "n_alightings": [0.0, 10.0, 60.0],
                    "load_after": [50.0, 60.0, 0.0],
                    "n_seats": 38,
                    "standing_area_m2": 6.0,
                    "standees_per_m2": [2.0, 22 / 6, 0.0],
                    "is_over_limit": [False, False, False],
                    "los": ["D", "E", "A"],
                    "count_source": "taps",
                }
            ),
        )
        write(
            store,
            "trip_crowding",
            pl.DataFrame(
                {
                    "service_date": DAY,
                    "vehicle_id": ["V1", "V2"],
                    "run_index": [0, 1],
                    "trip_id": ["L1-0700", "L1-0900"],
                    "route_id": "L1",
                    "direction_id": 0,
                    "departure_at": [at(120), at(7620)],
                    "hour_at": [at(0), at(7200)],
                    "n_taps": [70, 80],
                    "n_boardings": [70.0, 80.0],
                    "max_load": [60.0, 70.0],
                    "max_load_stop_sequence": [2, 2],
                    "max_load_stop_id": ["S2", "S2"],
                    "max_standees_per_m2": [22 / 6, 32 / 6],
                    "is_over_limit": [False, True],
                    "los": ["E", "F"],
                    "n_seats": 38,
                    "standing_area_m2": 6.0,
                    "capacity_source": "register",
                    "count_source": "taps",
                }
            ),
        )
        write(
            store,
            "crowding_summary",
            pl.DataFrame(
                {
                    "service_date": DAY,
                    "route_id": "L1",
                    "direction_id": 0,
                    "hour_at": [at(0), at(7200)],
                    "n_trips": [1, 1],
                    "n_over_limit": [0, 1],
                    "over_limit_share": [0.0, 1.0],
                    "max_load": [60.0, 70.0],
                    "max_standees_per_m2": [22 / 6, 32 / 6],
                    "worst_from_stop_id": "S2",
                    "worst_to_stop_id": "S3",
                    "worst_mean_load": [60.0, 70.0],
                    "worst_mean_standees_per_m2": [22 / 6, 32 / 6],
                    "peak_segment_load": [60.0, 70.0],
                    "capacity_at_limit": 62.0,
                    "is_action_required": [False, True],
                    "n_trips_needed": [1, 2],
                    "extra_trips_needed": [0, 1],
                }
            ),
        )
        write(
            store,
            "annual_grades",
            pl.DataFrame(
                {
                    "scope": "operator",
                    "scope_id": ["OP1", "OP2"],
                    "year": [2025, 2025],
                    "icv_score": [85.0, 55.0],
                    "iqs_score": [80.0, 50.0],
                    "annual_score": [83.5, 53.5],
                    "grade": ["B", "E"],
                    "is_renewal_eligible": [True, False],
                    "n_e_consecutive": [0, 3],
                    "n_e_total": [0, 3],
                    "is_cassacao_watch": [False, True],
                }
            ),
        )
        write(
            store,
            "suggested_infractions",
            pl.DataFrame(
                {
                    "infraction_key": ["VII|OP1|2026-03-02|L1-0900"],
                    "occurred_on": [DAY],
                    "occurred_at": [at(7620)],
                    "operator_id": ["OP1"],
                    "route_id": ["L1"],
                    "group": ["B"],
                    "item": ["VII"],
                    "description": ["Atraso sem motivo justificado"],
                    "fact": ["viagem L1-0900 partiu 7 min após o horário"],
                    "evidence": ["veículo V2, partida 09:07"],
                    "trip_ids": ["L1-0900"],
                    "urm": [10.0],
                    "currency_unit": ["URM"],
                    "is_repeat": [False],
                    "status": ["sugestão"],
                    "source": ["BG Anexo I"],
                }
            ),
        )
        # Fleet totals of OP1: 2 of 2 vehicles required on day 1, 1 of 2 on days 2-5 (a 50 %
        # cut for 4 days in a row: grave, BG art. 72 p.u. I).
        days = [DAY + timedelta(days=i) for i in range(5)]
        write(
            store,
            "fleet_days",
            pl.DataFrame(
                {
                    "service_date": days,
                    "operator_id": "OP1",
                    "route_id": "*",
                    "n_vehicles_required": 2,
                    "n_vehicles_operated": [2, 1, 1, 1, 1],
                    "cut_ratio": [0.0, 0.5, 0.5, 0.5, 0.5],
                    "is_cut_over_limit": [False, True, True, True, True],
                    "n_cut_days_consecutive": [0, 1, 2, 3, 4],
                    "is_grave_cut": [False, False, False, False, True],
                    "n_vehicles_registered": 2,
                    "n_reserve": 0,
                    "n_reserve_min": 1,
                    "reserve_ratio": 0.0,
                    "is_reserve_ok": False,
                }
            ),
        )
        store.publish_snapshot()
    return path
