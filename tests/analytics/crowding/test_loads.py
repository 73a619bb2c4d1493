"""Load profiles on the line R scenario and on small hand-made runs (hand-checked values)."""

from __future__ import annotations

import polars as pl
import pytest

from analytics.crowding import alightings
from analytics.crowding import loads as load_profiles
from analytics.crowding.alightings import compute_alightings
from analytics.crowding.boardings import compute_boardings
from analytics.crowding.loads import compute_apc_counts, compute_loads, compute_trip_crowding
from core.profile import load_profile
from tests.analytics.crowding.test_alightings import WALK_1KM
from tests.analytics.crowding.test_boardings import TZ, line_r

BG = load_profile("bento-goncalves-2021")


def scenario_loads(apc: pl.DataFrame | None = None) -> pl.DataFrame:
    visits = line_r("stop_visits", "stop_visits")
    b = compute_boardings(line_r("taps", "fare_transactions"), visits, timezone=TZ)
    placed = compute_alightings(b, visits, line_r("stops"), WALK_1KM)
    counts = None if apc is None else compute_apc_counts(apc, visits)
    return compute_loads(
        placed,
        visits,
        line_r("trips"),
        line_r("vehicles_small_and_fallback"),
        BG,
        apc_counts=counts,
    )


@pytest.fixture(scope="module")
def loads() -> pl.DataFrame:
    return scenario_loads()


def run(loads: pl.DataFrame, vehicle: str, run_index: int) -> pl.DataFrame:
    return loads.filter((pl.col("vehicle_id") == vehicle) & (pl.col("run_index") == run_index))


def test_unlinked_boarders_alight_like_the_linked_ones_from_their_stop(loads: pl.DataFrame) -> None:
    r = run(loads, "V1", 0)
    # A: 4 taps (3 chained: 2 to C, 1 to B; 1 without card); B: 1 single-leg tap.
    # The A unlinked splits like the line's linked riders from A: 1/3 to B, 2/3 to C; the B
    # unlinked like those from B (t07 on V2, B -> C): B = 1 + 1/3, C = 2 + 2/3 + 1.
    assert r["n_taps"].to_list() == [4, 1, 0, 0]
    assert r["n_alightings_linked"].to_list() == [0, 1, 2, 0]
    assert r["n_alightings"].to_list() == pytest.approx([0, 4 / 3, 11 / 3, 0])
    assert r["load_after"].to_list() == pytest.approx([4, 11 / 3, 0, 0])
    assert r["next_stop_id"].to_list() == ["B", "C", "D", None]


def test_lookups_by_bisection_give_the_loads_of_the_lookup_tables(
    loads: pl.DataFrame, monkeypatch: pytest.MonkeyPatch
) -> None:
    # a big city's keys can outgrow the tables of runs and visits: the bisections that
    # replace them must find the same rows
    monkeypatch.setattr(load_profiles, "_DENSE_VISITS_MAX", 0)
    monkeypatch.setattr(alightings, "_DENSE_RUNS_MAX", 0)
    assert scenario_loads().equals(loads)


def test_standees_limit_and_los_use_the_register(loads: pl.DataFrame) -> None:
    r = run(loads, "V1", 0)  # 2 seats, 0.4 m² standing: 4 on board = 2 standees = 5 per m²
    assert r["standees_per_m2"].to_list() == pytest.approx([5.0, (11 / 3 - 2) / 0.4, 0, 0])
    assert r["is_over_limit"].to_list() == [True, True, False, False]
    assert r["los"].to_list() == ["E", "E", "A", "A"]  # 0.20 and 0.24 m² per standee
    back = run(loads, "V1", 1)
    # the unlinked tap at D follows the line's linked rider from D (t09, D -> B)
    assert back["n_alightings"].to_list() == pytest.approx([0, 0, 2, 1])
    assert back["load_after"].to_list() == pytest.approx([2, 3, 1, 0])
    assert back["los"].to_list() == ["C", "D", "A", "A"]


def test_profile_fallback_per_type_when_the_register_is_silent(loads: pl.DataFrame) -> None:
    r = run(loads, "V2", 0)  # padron without seats or area in the register: 40 seats, 8 m²
    assert r["n_seats"].unique().to_list() == [40]
    assert r["standing_area_m2"].unique().to_list() == [8.0]
    assert r["capacity_source"].unique().to_list() == ["type_fallback"]
    assert r["load_after"].to_list() == pytest.approx([0, 2, 0, 0])


def test_boardings_equal_alightings_on_every_run(loads: pl.DataFrame) -> None:
    sums = loads.group_by("vehicle_id", "run_index").agg(
        pl.col("n_boardings").sum(), pl.col("n_alightings").sum()
    )
    assert sums["n_boardings"].to_list() == pytest.approx(sums["n_alightings"].to_list())


def test_trip_summary_peak_and_where(loads: pl.DataFrame) -> None:
    trips = compute_trip_crowding(loads).sort("vehicle_id", "run_index")
    got = trips.select(
        "vehicle_id",
        "run_index",
        "n_taps",
        "n_taps_linked",
        "max_load",
        "max_load_stop_id",
        "is_over_limit",
        "los",
    ).rows()
    assert got == [
        ("V1", 0, 5, 3, 4.0, "A", True, "E"),
        ("V1", 1, 3, 2, 3.0, "C", False, "D"),
        ("V2", 0, 2, 1, 2.0, "B", False, "A"),
    ]
    assert trips["max_standees_per_m2"].to_list() == pytest.approx([5.0, 2.5, 0.0])
    assert trips["hour_at"].dt.strftime("%H:%M").to_list() == ["10:00"] * 3


def hand_run(taps: list[int], linked: dict[int, int], seqs: int = 4) -> pl.DataFrame:
    """Placements of one run of `seqs` stops: `taps[i]` taps at stop i+1, of which
    `linked[s] = t` means one chained tap from stop s to stop t."""
    rows: list[tuple[str, int, int | None]] = []
    for i, n in enumerate(taps):
        for k in range(n):
            rows.append((f"{i}-{k}", i + 1, None))
    for s, t in linked.items():
        idx = next(j for j, r in enumerate(rows) if r[1] == s and r[2] is None)
        rows[idx] = (rows[idx][0], s, t)
    return pl.DataFrame(
        {
            "transaction_id": [r[0] for r in rows],
            "service_date": ["2026-03-02"] * len(rows),
            "vehicle_id": ["V"] * len(rows),
            "run_index": [0] * len(rows),
            "placement": ["placed"] * len(rows),
            "trip_id": ["T"] * len(rows),
            "stop_sequence": [r[1] for r in rows],
            "stop_id": [f"S{r[1]}" for r in rows],
            "alighting_stop_sequence": [r[2] for r in rows],
            "alighting_stop_id": [None if r[2] is None else f"S{r[2]}" for r in rows],
        },
        schema_overrides={"alighting_stop_sequence": pl.Int32, "alighting_stop_id": pl.String},
    ).with_columns(pl.col("service_date").str.to_date())


def hand_visits(n: int, run_index: int = 0, trip_id: str = "T") -> pl.DataFrame:
    return pl.DataFrame(
        {
            "service_date": ["2026-03-02"] * n,
            "vehicle_id": ["V"] * n,
            "run_index": [run_index] * n,
            "trip_id": [trip_id] * n,
            "stop_sequence": list(range(1, n + 1)),
            "stop_id": [f"S{i}" for i in range(1, n + 1)],
            "arrival_at": [f"2026-03-02T10:{10 * run_index + i:02d}:00Z" for i in range(n)],
            "departure_at": [f"2026-03-02T10:{10 * run_index + i:02d}:30Z" for i in range(n)],
        }
    ).with_columns(
        pl.col("service_date").str.to_date(),
        pl.col("arrival_at", "departure_at").str.to_datetime(time_zone="UTC"),
    )


TRIPS = pl.DataFrame(
    {"service_date": ["2026-03-02"] * 2, "trip_id": ["T", "U"], "route_id": ["R", "R"]}
).with_columns(pl.col("service_date").str.to_date(), pl.lit(0).alias("direction_id"))
VEHICLES = pl.DataFrame(
    {
        "vehicle_id": ["V"],
        "vehicle_type": ["convencional"],
        "n_seats": [None],
        "standing_area_m2": [None],
    }
)


def test_without_linked_alightings_the_unlinked_spread_evenly() -> None:
    loads = compute_loads(hand_run([3, 0, 0, 0], {}), hand_visits(4), TRIPS, VEHICLES, BG)
    assert loads["n_alightings"].to_list() == pytest.approx([0, 1, 1, 1])
    assert loads["load_after"].to_list() == pytest.approx([3, 2, 1, 0])


def test_without_riders_from_the_stop_the_runs_linked_alightings_decide() -> None:
    # S1: 2 unlinked, nobody linked from S1 on the line; S2: one rider chained to S4
    loads = compute_loads(hand_run([2, 1, 0, 0], {2: 4}), hand_visits(4), TRIPS, VEHICLES, BG)
    assert loads["n_alightings"].to_list() == pytest.approx([0, 0, 0, 3])


def test_line_od_fills_in_when_the_run_has_no_linked_alighting_after_a_stop() -> None:
    # run 0: 2 unlinked at S1; run 1 (same line and direction): one chained S1 -> S3
    placed = pl.concat(
        [
            hand_run([2, 0, 0, 0], {}),
            hand_run([1, 0, 0, 0], {1: 3}).with_columns(
                pl.lit(1, pl.Int64).alias("run_index"),
                pl.col("transaction_id") + "u",
                pl.lit("U").alias("trip_id"),
            ),
        ]
    )
    visits = pl.concat([hand_visits(4), hand_visits(4, run_index=1, trip_id="U")])
    loads = compute_loads(placed, visits, TRIPS, VEHICLES, BG).filter(pl.col("run_index") == 0)
    assert loads["n_alightings"].to_list() == pytest.approx([0, 0, 2, 0])


def test_apc_counts_override_the_inference() -> None:
    apc = pl.DataFrame(
        {
            "vehicle_id": ["V1", "V1", "V1"],
            "event_at": ["2026-03-02T10:00:00Z", "2026-03-02T10:06:00Z", "2026-03-02T10:15:30Z"],
            "n_boardings": [7, 2, 0],
            "n_alightings": [0, 3, 6],
        }
    ).with_columns(pl.col("event_at").str.to_datetime(time_zone="UTC"))
    loads = scenario_loads(apc)
    r = run(loads, "V1", 0)
    assert r["count_source"].unique().to_list() == ["apc"]
    assert r["n_boardings"].to_list() == [7, 2, 0, 0]
    assert r["n_alightings"].to_list() == [0, 3, 0, 6]  # the last stop's reading too
    assert r["load_after"].to_list() == [7, 6, 6, 0]
    assert r["n_taps"].to_list() == [4, 1, 0, 0]  # taps are still reported
    assert run(loads, "V2", 0)["count_source"].unique().to_list() == ["taps"]
