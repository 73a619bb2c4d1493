"""A range of service days crowded a day at a time (`compute_crowding_by_day`) gives the rows
`compute_crowding` gives over the whole range at once (ADR 0103): placements, loads and runs
identical, the hourly summary to the last bits of its float means (two runs of the one-go
computation already differ there: group sums add in no fixed order)."""

from __future__ import annotations

from datetime import date, datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import numpy as np
import polars as pl
import pytest
from polars.testing import assert_frame_equal

from analytics.crowding.alightings import compute_alightings
from analytics.crowding.boardings import compute_boardings
from analytics.crowding.job import (
    CrowdingInputs,
    CrowdingPeriod,
    compute_crowding,
    compute_crowding_by_day,
    crowding_tap_window,
    run_crowding,
)
from analytics.crowding.loads import VisitTally, build_load_visits, count_visit_taps
from core.errors import StoreError
from core.profile import load_profile
from core.store import Store
from sample_data.options import SimulationOptions
from sample_data.simulate import simulate
from tests.analytics.crowding.test_crowding_simulated import read_simulated

BG = load_profile("bento-goncalves-2021")
TZ = BG.general.timezone.value
FRAMES = ("tap_placements", "trip_loads", "trip_crowding", "crowding_summary")


def one_go_and_by_day(
    inputs: CrowdingInputs, start: date, end: date
) -> tuple[dict[str, pl.DataFrame], dict[str, pl.DataFrame]]:
    """The four frames of days `start`..`end` computed at once (on what `read_crowding_inputs`
    would read of `inputs`) and a day at a time."""
    days = pl.col("service_date").is_between(start - timedelta(days=1), end)
    visits, trips = inputs.stop_visits.filter(days), inputs.trips.filter(days)
    lo, hi = crowding_tap_window(visits, start, end, TZ)

    def taps_in(a: datetime, b: datetime) -> pl.DataFrame:
        at = pl.col("event_at").dt.convert_time_zone(TZ)
        return inputs.taps.filter(at.is_between(a, b, closed="left"))

    taps = taps_in(lo, hi)
    one = compute_crowding(CrowdingInputs(taps, visits, trips, inputs.vehicles, inputs.stops), BG)
    in_range = pl.col("service_date").is_between(start, end)
    at_once = {name: getattr(one, name).filter(in_range) for name in FRAMES}
    written: dict[str, list[pl.DataFrame]] = {name: [] for name in FRAMES}
    handed: list[tuple[str, date]] = []

    def write(name: str, day: date, frame: pl.DataFrame) -> None:
        assert frame["service_date"].unique().to_list() in ([day], [])
        handed.append((name, day))
        written[name].append(frame)

    period = CrowdingPeriod(start, end, visits, trips, inputs.vehicles, inputs.stops, lo, hi)
    compute_crowding_by_day(period, taps_in, write, BG)
    # each table's rows of each day handed over once, the days in order
    assert len(set(handed)) == len(handed)
    for name in ("trip_loads", "trip_crowding", "crowding_summary"):
        n_days = (end - start).days + 1
        assert [d for n, d in handed if n == name] == [
            start + timedelta(days=i) for i in range(n_days)
        ]
    by_day = {name: pl.concat(frames) for name, frames in written.items()}
    return at_once, by_day


def assert_same(at_once: dict[str, pl.DataFrame], by_day: dict[str, pl.DataFrame]) -> None:
    x, y = at_once["tap_placements"], by_day["tap_placements"]
    assert_frame_equal(x.sort("transaction_id"), y.sort("transaction_id"), check_exact=True)
    assert_frame_equal(at_once["trip_loads"], by_day["trip_loads"], check_exact=True)
    assert_frame_equal(at_once["trip_crowding"], by_day["trip_crowding"], check_exact=True)
    s, t = at_once["crowding_summary"], by_day["crowding_summary"]
    floats = [c for c, dtype in s.schema.items() if dtype.is_float()]
    assert_frame_equal(s.drop(floats), t.drop(floats), check_exact=True)
    assert_frame_equal(s, t, check_exact=False, rel_tol=1e-12, abs_tol=1e-9)


@pytest.fixture(scope="module")
def simulated_days(tmp_path_factory: pytest.TempPathFactory) -> CrowdingInputs:
    out = tmp_path_factory.mktemp("sim")
    simulate(
        SimulationOptions(
            days=4, n_vehicles=12, riders_per_vehicle_day=600.0, write_text_avl=False
        ),
        out,
    )
    inputs, _, _ = read_simulated(out)
    return inputs


def test_simulated_days_crowded_a_day_at_a_time_are_crowded_as_at_once(
    simulated_days: CrowdingInputs,
) -> None:
    days = simulated_days.stop_visits["service_date"].unique().sort()
    start, end = days[1], days[-1]
    at_once, by_day = one_go_and_by_day(simulated_days, start, end)
    assert at_once["tap_placements"].height > 10_000
    assert at_once["tap_placements"]["service_date"].n_unique() == (end - start).days + 1
    # the pooled tiers matter: some unlinked boarders go by the period's shares
    assert (
        at_once["trip_loads"]["n_alightings"] > at_once["trip_loads"]["n_alightings_linked"]
    ).any()
    assert_same(at_once, by_day)


# -- a night run: a card's taps of two service days interleaved in time -------------------
D = date(2026, 3, 2)


def _local(day: date, hhmm: str) -> datetime:
    h, m = (int(x) for x in hhmm.split(":"))
    return datetime(day.year, day.month, day.day, tzinfo=ZoneInfo(TZ)) + timedelta(
        hours=h, minutes=m
    )


def night_inputs() -> CrowdingInputs:
    """V1's night run N1 of service day D (23:50 to 00:40 local, stops A B C E) and V2's
    first run M1 of day D + 1 (00:00 to 00:45, stops P Q R S, 100 m from A B C E); card c
    rides V1 at A, V2 at P, V1 again at B, V2 again at Q."""
    nxt = D + timedelta(days=1)
    rows = [
        (D, "V1", "N1", 1, "A", "23:50"),
        (D, "V1", "N1", 2, "B", "24:05"),
        (D, "V1", "N1", 3, "C", "24:20"),
        (D, "V1", "N1", 4, "E", "24:40"),
        (nxt, "V2", "M1", 1, "P", "00:00"),
        (nxt, "V2", "M1", 2, "Q", "00:12"),
        (nxt, "V2", "M1", 3, "R", "00:28"),
        (nxt, "V2", "M1", 4, "S", "00:45"),
    ]
    at = [_local(day, hhmm).astimezone(ZoneInfo("UTC")) for day, *_, hhmm in rows]
    visits = pl.DataFrame(
        {
            "service_date": [r[0] for r in rows],
            "vehicle_id": [r[1] for r in rows],
            "run_index": pl.Series([0] * len(rows), dtype=pl.Int32),
            "trip_id": [r[2] for r in rows],
            "stop_sequence": pl.Series([r[3] for r in rows], dtype=pl.Int32),
            "stop_id": [r[4] for r in rows],
            "arrival_at": at,
            "departure_at": at,
        }
    )
    x = {"A": 0.0, "B": 1000.0, "C": 2000.0, "E": 3000.0}
    stops = pl.DataFrame(
        {
            "stop_id": [*x, "P", "Q", "R", "S"],
            "stop_x_m": [*x.values(), *x.values()],
            "stop_y_m": [0.0] * 4 + [100.0] * 4,
        }
    )
    taps = [
        ("t1", D, "23:55", "V1", "c"),
        ("t2", D, "24:10", "V2", "c"),
        ("t3", D, "24:15", "V1", "c"),
        ("t4", D, "24:25", "V2", "c"),
        ("t5", D, "23:52", "V1", "d"),  # another card, once on each
        ("t6", D, "24:26", "V2", "d"),
    ]
    tap_frame = pl.DataFrame(
        {
            "transaction_id": [t[0] for t in taps],
            "event_at": [_local(t[1], t[2]).astimezone(ZoneInfo("UTC")) for t in taps],
            "vehicle_id": [t[3] for t in taps],
            "card_hash": [t[4] for t in taps],
        }
    ).sort("event_at")
    trips = pl.DataFrame(
        {
            "service_date": [D, nxt],
            "trip_id": ["N1", "M1"],
            "route_id": ["N", "M"],
            "direction_id": pl.Series([0, 0], dtype=pl.Int32),
        }
    )
    vehicles = pl.DataFrame(
        {
            "vehicle_id": ["V1", "V2"],
            "vehicle_type": ["convencional", "convencional"],
            "n_seats": [40, 40],
            "standing_area_m2": [6.0, 6.0],
        }
    )
    return CrowdingInputs(tap_frame, visits, trips, vehicles, stops)


def test_a_cards_taps_of_two_service_days_part_its_legs_as_at_once() -> None:
    at_once, by_day = one_go_and_by_day(night_inputs(), D, D + timedelta(days=1))
    got = {
        r["transaction_id"]: (r["service_date"], r["alighting_stop_id"], r["alighting_method"])
        for r in by_day["tap_placements"].iter_rows(named=True)
    }
    # t1 and t3 ride N1 but are two legs (t2 on M1 of the next day between them): t1 alights
    # at B, where the card boards again, rather than being one leg seen once that day
    assert got["t1"] == (D, "B", "chained")
    assert got["t2"] == (D + timedelta(days=1), "Q", "chained")
    assert got["t3"][2] == got["t4"][2] == "unlinked"  # home is 2 km away: beyond the walk
    assert_same(at_once, by_day)


def test_visit_counts_tallied_a_day_at_a_time_are_the_counts_at_once(
    simulated_days: CrowdingInputs,
) -> None:
    inputs = simulated_days
    boardings = compute_boardings(inputs.taps, inputs.stop_visits, timezone=TZ)
    placements = compute_alightings(boardings, inputs.stop_visits, inputs.stops)
    load_visits = build_load_visits(inputs.stop_visits, inputs.trips)
    at_once = count_visit_taps(placements, load_visits)
    tally = VisitTally(load_visits)
    for day in placements["service_date"].unique().sort():
        tally.add_taps(placements.filter(pl.col("service_date") == day))
    by_day = tally.counts()
    for name in ("n_taps", "n_boardings_linked", "n_alightings_linked", "od_pair", "od_count"):
        assert np.array_equal(getattr(at_once, name), getattr(by_day, name)), name
    # every placed tap boarded at a visit, and the linked ones alighted at one
    placed = placements.filter(pl.col("placement") == "placed")
    assert int(by_day.n_taps.sum()) == placed.height > 10_000
    linked = placed["alighting_stop_sequence"].is_not_null().sum()
    assert int(by_day.n_alightings_linked.sum()) == linked
    assert int(by_day.n_boardings_linked.sum()) == linked
    assert int(by_day.od_count.sum()) <= linked


def test_a_failed_insert_stops_the_command_and_leaves_the_days_as_they_were(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    nxt = D + timedelta(days=1)
    inputs = night_inputs()
    with Store.open(tmp_path / "p.duckdb") as store:
        matched = {"stop_dist_m": 0.0, "is_interpolated": False, "pontual_version": "test"}
        store.append("stop_visits", inputs.stop_visits, fill={**matched, "profile_id": BG.id})
        ingested = datetime(2026, 3, 4, tzinfo=ZoneInfo("UTC"))
        fill = {"fare_class": "full", "source": "test", "ingested_at": ingested}
        store.append("fare_transactions", inputs.taps, fill=fill)
        first = run_crowding(store, BG, D, nxt)
        assert first.written["tap_placements"] == 6
        before = {name: store.read(name) for name in FRAMES}
        append = Store.append

        def failing(self: Store, name: str, df: pl.DataFrame, **kw: object) -> object:
            if name == "trip_loads":
                raise StoreError("disk full", where="test")
            return append(self, name, df, **kw)  # type: ignore[arg-type]

        monkeypatch.setattr(Store, "append", failing)
        with pytest.raises(StoreError, match="disk full"):
            run_crowding(store, BG, D, nxt)
        monkeypatch.undo()
        for name in FRAMES:  # rolled back: the first run's rows, and the store usable
            assert_frame_equal(store.read(name), before[name])
        assert run_crowding(store, BG, D, nxt).written == first.written


def crowd_in_row_groups(
    path: Path, group: int, inputs: CrowdingInputs, start: date, end: date
) -> tuple[list[tuple[str, int, int]], dict[str, int], dict[str, pl.DataFrame]]:
    """`run_crowding` on a store of `inputs` with DuckDB row groups taken as `group` rows: the
    (table, rows, chunks) of each batch handed to `Store.append`, the rows written per table
    and the stored tables."""
    batches: list[tuple[str, int, int]] = []
    append = Store.append

    def recorded(self: Store, name: str, df: pl.DataFrame, **kw: object) -> object:
        batches.append((name, df.height, df.n_chunks()))
        return append(self, name, df, **kw)  # type: ignore[arg-type]

    with Store.open(path) as store, pytest.MonkeyPatch.context() as patch:
        matched = {"stop_dist_m": 0.0, "is_interpolated": False, "pontual_version": "test"}
        store.append("stop_visits", inputs.stop_visits, fill={**matched, "profile_id": BG.id})
        ingested = datetime(2026, 3, 4, tzinfo=ZoneInfo("UTC"))
        fill = {"fare_class": "full", "source": "test", "ingested_at": ingested}
        store.append("fare_transactions", inputs.taps, fill=fill)
        patch.setattr("analytics.crowding.job._ROW_GROUP_ROWS", group)
        patch.setattr("analytics.crowding.job._WRITE_ROWS", 2 * group)
        patch.setattr(Store, "append", recorded)
        written = run_crowding(store, BG, start, end).written
        patch.undo()
        return batches, written, {name: store.read(name) for name in FRAMES}


def test_the_store_gets_whole_row_groups_of_one_chunk_and_the_same_rows(
    tmp_path: Path, simulated_days: CrowdingInputs
) -> None:
    # row groups of 1 000 rows here: every batch but a table's last is whole ones, of one
    # chunk (a part-filled row group is merged again at the commit), and the stored rows are
    # those of batches of the default size
    start: date = simulated_days.stop_visits["service_date"].min()  # type: ignore[assignment]
    end = start + timedelta(days=2)
    stored = {}
    for group in (1_000, 122_880):
        batches, written, stored[group] = crowd_in_row_groups(
            tmp_path / f"{group}.duckdb", group, simulated_days, start, end
        )
        for name in FRAMES:
            # (the replace's delete appends an empty frame)
            sizes = [(n, c) for t, n, c in batches if t == name and n]
            assert sum(n for n, _ in sizes) == written[name]
            assert all(c == 1 for _, c in sizes), (name, sizes)
            assert all(n % group == 0 for n, _ in sizes[:-1]), (name, sizes)
        if group == 1_000:
            assert len([t for t, _, _ in batches if t == "trip_loads"]) > 2
    small, default = stored[1_000], stored[122_880]
    for name in ("tap_placements", "trip_loads", "trip_crowding"):
        key = small[name].columns
        assert_frame_equal(small[name].sort(key), default[name].sort(key), check_exact=True)
    assert small["crowding_summary"].height == default["crowding_summary"].height
