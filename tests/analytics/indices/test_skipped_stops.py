"""Skipped stops (BG art. 7-I, Anexo I XVII) against the simulator's injected truth: door
sensors on four vehicles of a simulated weekday, doors kept shut at 40 stops of their trips;
the day matched by the real engine (stop visits from the pings, door events included), then
precision and recall >= 0.9; plus hand-checked cases that must raise nothing."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import polars as pl
import pytest

from analytics.indices.infractions import FACT_COLUMNS, compute_suggested_infractions
from analytics.indices.job import IndexInputs, read_index_inputs, run_indices
from analytics.indices.skipped_stops import compute_skipped_stops, match_skipped_stop_facts
from core.periods import parse_period
from core.profile import load_profile
from core.store import Store
from sample_data.options import SimulationOptions
from sample_data.simulate import simulate
from sample_data.violations import inject_skipped_stops

PROFILE = load_profile("bento-goncalves-2021")
DAY = date(2026, 3, 2)
PERIOD = parse_period("2026-03")
EQUIPPED = ["10001", "10002", "10003", "10004"]


@dataclass(frozen=True)
class Matched:
    visits: pl.DataFrame
    doors: pl.DataFrame
    pings: pl.DataFrame
    stops: pl.DataFrame
    truth: pl.DataFrame
    outcomes: pl.DataFrame


@pytest.fixture(scope="module")
def matched(tmp_path_factory: pytest.TempPathFactory) -> Matched:
    from analytics.matching.day import build_schedule, match_day
    from analytics.matching.options import MatchOptions
    from gtfs.read import read_feed
    from tests.analytics.simulated_day import read_simulated_day

    sim = tmp_path_factory.mktemp("skipped")
    simulate(SimulationOptions(start=DAY, days=1, n_vehicles=10, write_text_avl=False), sim)
    stops = pl.read_csv(sim / "gtfs" / "stops.txt").select("stop_id", "stop_lat", "stop_lon")
    pings, truth = inject_skipped_stops(
        pl.read_parquet(sim / "avl.parquet"),
        pl.read_parquet(sim / "truth" / "stop_visits.parquet"),
        stops,
        vehicle_ids=EQUIPPED,
        n_skipped=40,
        seed=7,
    )
    # the equipped vehicles only: the others report no door event and cannot be judged
    pings = (
        pings.filter(pl.col("vehicle_id").is_in(EQUIPPED))
        .sort("event_at", "vehicle_id")
        .with_row_index("ping_id")
        .with_columns(pl.col("ping_id").cast(pl.Int64))
    )
    _, _, incidents = read_simulated_day(sim, DAY)
    schedule = build_schedule(read_feed(sim / "gtfs"), DAY)
    day = match_day(pings, schedule, incidents, PROFILE, MatchOptions())
    return Matched(
        visits=day.stop_visits,
        doors=pings.filter(pl.col("event_code") == "door_open"),
        pings=pings,
        stops=stops,
        truth=truth,
        outcomes=day.trip_outcomes,
    )


def test_skipped_stops_against_injected_truth(matched: Matched) -> None:
    m = matched
    assert m.truth.height == 40
    found = compute_skipped_stops(
        m.visits, m.doors, m.stops, PROFILE, zone_pings=m.pings.drop("event_code")
    )
    both = found.join(m.truth, on=["trip_id", "stop_sequence"], suffix="_true")
    precision = both.height / max(found.height, 1)
    recall = both.height / m.truth.height
    print("skipped stops: precision", precision, "recall", recall, "found", found.height)
    assert precision >= 0.9 and recall >= 0.9, (precision, recall, found.height)
    assert (both["stop_id"] == both["stop_id_true"]).all()
    # each suggestion lists the fixes through the zone and the trip's door events
    assert found["zone_ping_ids"].null_count() == 0
    assert (found["n_stops_served"] >= 3).all()
    facts = match_skipped_stop_facts(found, m.outcomes.select("trip_id", "route_id"), PROFILE)
    assert facts.columns == list(FACT_COLUMNS)
    assert set(facts["item"]) == {"XVII"}
    assert facts.height == found["trip_id"].n_unique()
    one = found.row(0, named=True)
    fact = facts.filter(pl.col("trip_ids") == one["trip_id"]).row(0, named=True)
    assert one["stop_id"] in fact["evidence"] and one["door_ping_ids"] in fact["ping_ids"]
    got = compute_suggested_infractions(facts, None, PROFILE)
    assert set(got["item"]) == {"XVII"} and set(got["urm"]) == {2.0}


def test_a_vehicle_without_door_events_raises_nothing(matched: Matched) -> None:
    m = matched
    # the same visits, the door events of the vehicle that ran them removed
    silent = m.doors.filter(pl.col("vehicle_id") != EQUIPPED[0])
    found = compute_skipped_stops(m.visits, silent, m.stops, PROFILE)
    assert EQUIPPED[0] not in set(found["vehicle_id"])
    assert found.height > 0  # the other vehicles are still judged
    # no door events at all: nothing
    assert compute_skipped_stops(m.visits, m.doors.clear(), m.stops, PROFILE).is_empty()


def _case(
    is_interpolated: bool, door_at_stop2: bool, *, n_stops: int = 6
) -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame]:
    """One trip north along a meridian, a stop every 400 m, a visit a minute apart; door
    events at every stop except stop 2 (unless `door_at_stop2`)."""
    t0 = datetime(2026, 3, 2, 12, 0, tzinfo=UTC)
    seqs = list(range(1, n_stops + 1))
    visits = pl.DataFrame(
        {
            "service_date": [DAY] * n_stops,
            "vehicle_id": ["V1"] * n_stops,
            "run_index": [0] * n_stops,
            "trip_id": ["T1"] * n_stops,
            "stop_sequence": seqs,
            "stop_id": [f"S{i}" for i in seqs],
            "arrival_at": [t0 + timedelta(minutes=i) for i in seqs],
            "departure_at": [t0 + timedelta(minutes=i, seconds=15) for i in seqs],
            "is_interpolated": [is_interpolated and i == 2 for i in seqs],
        }
    ).with_columns(pl.col("run_index").cast(pl.Int32), pl.col("stop_sequence").cast(pl.Int32))
    stops = pl.DataFrame(
        {
            "stop_id": [f"S{i}" for i in seqs],
            "stop_lat": [-29.17 + 400 * i / 111_195 for i in seqs],
            "stop_lon": [-51.52] * n_stops,
        }
    )
    with_door = [i for i in seqs if i != 2 or door_at_stop2]
    doors = pl.DataFrame(
        {
            "ping_id": with_door,
            "vehicle_id": ["V1"] * len(with_door),
            "operator_id": ["O1"] * len(with_door),
            "event_at": [t0 + timedelta(minutes=i, seconds=5) for i in with_door],
            "lat": [-29.17 + (400 * i + 10) / 111_195 for i in with_door],
            "lon": [-51.52] * len(with_door),
        }
    )
    return visits, doors, stops


def test_hand_checked_cases() -> None:
    visits, doors, stops = _case(is_interpolated=False, door_at_stop2=False)
    found = compute_skipped_stops(visits, doors, stops, PROFILE)
    assert found.select("stop_id", "n_stops_served", "door_ping_ids").rows() == [
        ("S2", 5, "1,3,4,5,6")
    ]
    # an interpolated visit (no fix near the stop) raises nothing
    visits_i, doors_i, stops_i = _case(is_interpolated=True, door_at_stop2=False)
    assert compute_skipped_stops(visits_i, doors_i, stops_i, PROFILE).is_empty()
    # a trip covered by an approved incident (detour) raises nothing
    assert compute_skipped_stops(
        visits,
        doors,
        stops,
        PROFILE,
        excused_trips=pl.DataFrame({"service_date": [DAY], "trip_id": ["T1"]}),
    ).is_empty()
    # the door opened at stop 2 but 120 m past it: not served (a different place)
    far = doors.vstack(
        doors.head(1).with_columns(
            pl.lit(99, pl.Int64).alias("ping_id"),
            pl.col("event_at") + timedelta(minutes=1),
            pl.lit(-29.17 + 920 / 111_195).alias("lat"),
        )
    )
    assert compute_skipped_stops(visits, far, stops, PROFILE)["stop_id"].to_list() == ["S2"]
    # two door events on the whole trip: the sensor is not shown to work, nothing is judged
    assert compute_skipped_stops(visits, doors.head(2), stops, PROFILE).is_empty()
    # the terminals (first and last stop) are never skipped stops
    shut_ends = doors.filter(pl.col("ping_id").is_in([1, 6]))
    got = compute_skipped_stops(
        visits, doors.filter(~pl.col("ping_id").is_in([1, 6])), stops, PROFILE
    )
    assert got["stop_id"].to_list() == ["S2"] and shut_ends.height == 2


def _fixes() -> pl.DataFrame:
    """Two plain fixes of V1 around stop 2 (passing at 8 m/s), one of V2 (no door events)."""
    return pl.DataFrame(
        {
            "vehicle_id": ["V1", "V1", "V2"],
            "operator_id": ["O1", "O1", "O1"],
            "event_at": [datetime(2026, 3, 2, 12, 1, s, tzinfo=UTC) for s in (50, 59, 0)],
            "lat": [-29.17 + 790 / 111_195, -29.17 + 1000 / 111_195, -29.17],
            "lon": [-51.52] * 3,
            "speed_m_s": [8.0, 8.0, 8.0],
        }
    )


def _store_case(store: Store) -> None:
    """The hand-checked trip (`_case`: doors shut at stop 2) and `_fixes` in a store."""
    visits, doors, stops = _case(is_interpolated=False, door_at_stop2=False)
    now = datetime(2026, 3, 3, tzinfo=UTC)
    door_pings = doors.drop("ping_id").with_columns(pl.lit("door_open").alias("event_code"))
    store.append(
        "vehicle_locations",
        pl.concat([door_pings, _fixes()], how="diagonal").with_columns(
            pl.lit("test").alias("source"), pl.lit(now).alias("ingested_at")
        ),
    )
    store.append(
        "gtfs_stops",
        stops.with_columns(pl.lit("F1").alias("feed_id"), pl.col("stop_id").alias("stop_name")),
    )
    store.append(
        "stop_visits",
        visits.with_columns(pl.lit(0.0).alias("stop_dist_m"), pl.lit(0.0).alias("nearest_ping_m")),
        fill={"pontual_version": "test", "profile_id": PROFILE.id},
    )


def test_the_indices_job_reads_the_door_trips_and_the_zone_fixes(store_path: Path) -> None:
    with Store.open(store_path) as store:
        _store_case(store)
        inputs = read_index_inputs(store, PERIOD, PROFILE)
    _check_inputs(inputs)


def test_run_indices_suggests_the_skipped_stop(tmp_path: Path) -> None:
    from tests.analytics.indices.test_indices_trace import build_store

    path = tmp_path / "pontual.duckdb"
    build_store(path)  # the hand-checked month of the indices tests
    with Store.open(path) as store:
        _store_case(store)
        run_indices(store, PROFILE, PERIOD)
        got = store.read("suggested_infractions").filter(pl.col("item") == "XVII")
    assert got.select("operator_id", "vehicle_id", "trip_ids", "urm").rows() == [
        ("O1", "V1", "T1", 2.0)
    ]
    assert "parada S2 (sequência 2)" in got["evidence"][0]


def _check_inputs(inputs: IndexInputs) -> None:
    assert inputs.door_stop_visits.height == 6
    # no taps were placed in this store: the demand was read, and is none
    assert inputs.skipped_stop_taps is not None and inputs.skipped_stop_taps.is_empty()
    # the fixes read are V1's through stop 2's window (12:02:00-12:02:15 ± 60 s): the two
    # plain fixes and the door events at stops 1 and 3 (12:01:05, 12:03:05); not V2's
    got = inputs.skipped_zone_pings
    assert got["vehicle_id"].to_list() == ["V1"] * 4
    assert got["event_at"].dt.strftime("%H:%M:%S").to_list() == [
        "12:01:05",
        "12:01:50",
        "12:01:59",
        "12:03:05",
    ]
    skipped = compute_skipped_stops(
        inputs.door_stop_visits,
        inputs.door_events,
        inputs.stops,
        PROFILE,
        zone_pings=inputs.skipped_zone_pings,
    )
    assert skipped.select("stop_id", "zone_min_speed_m_s").rows() == [("S2", 8.0)]
    # and the job turns it into an XVII suggestion
    facts = match_skipped_stop_facts(
        skipped, pl.DataFrame({"trip_id": ["T1"], "route_id": ["L1"]}), PROFILE
    )
    assert facts.select("item", "route_id", "vehicle_id", "trip_ids").rows() == [
        ("XVII", "L1", "V1", "T1")
    ]


def test_the_stops_demand_is_shown_beside_a_skipped_stop() -> None:
    visits, doors, stops = _case(is_interpolated=False, door_at_stop2=False)
    t = datetime(2026, 3, 2, 12, 2, tzinfo=UTC)
    taps = pl.DataFrame(
        {
            "trip_id": ["T0", "T0", "T9", "T1", "X1"],
            "route_id": ["L1", "L1", "L1", "L1", "L2"],
            "stop_id": ["S2", "S2", "S2", "S2", "S2"],
            # two boardings 20 min before on the line's previous trip, one 2 h later (out of
            # the 30 min window), one on the trip itself, one on another line: 2
            "event_at": [
                t - timedelta(minutes=20),
                t - timedelta(minutes=19),
                t + timedelta(hours=2),
                t,
                t,
            ],
        }
    )
    found = compute_skipped_stops(visits, doors, stops, PROFILE, placed_taps=taps)
    assert found["n_demand_taps"].to_list() == [2]
    facts = match_skipped_stop_facts(found, taps.select("trip_id", "route_id"), PROFILE)
    assert "na mesma hora: 2" in facts["evidence"][0]
    # without placed taps the demand is unknown, not zero
    assert compute_skipped_stops(visits, doors, stops, PROFILE)["n_demand_taps"].to_list() == [None]
