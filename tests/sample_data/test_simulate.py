"""The simulator: determinism, and its truth agreeing with the files it writes."""

from __future__ import annotations

import hashlib
import json
import zipfile
from dataclasses import replace
from datetime import date
from pathlib import Path

import numpy as np
import polars as pl
import pytest

from core.profile import load_profile
from sample_data.network import from_wgs84
from sample_data.options import SimulationOptions
from sample_data.simulate import simulate
from sample_data.timetable import sampled_year_dates

PROFILE = load_profile("bento-goncalves-2021")
# Monday and Tuesday: the fleet cut starts on the second day.
OPTS = SimulationOptions(days=2, seed=7, text_days=None)


def _hashes(folder: Path) -> dict[str, str]:
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("sim")
    simulate(OPTS, out)
    return out


@pytest.fixture(scope="module")
def truth(run: Path) -> pl.DataFrame:
    return pl.read_parquet(run / "truth" / "trips.parquet")


@pytest.fixture(scope="module")
def avl(run: Path) -> pl.DataFrame:
    skewed = pl.read_parquet(run / "truth" / "avl_units.parquet")["vehicle_id"]
    pings = pl.read_parquet(run / "avl.parquet").filter(
        ~pl.col("vehicle_id").is_in(skewed.implode())
    )
    x, y = from_wgs84(pings["lat"].to_numpy(), pings["lon"].to_numpy())
    return pings.with_columns(x=pl.Series(x), y=pl.Series(y)).unique(["vehicle_id", "event_at"])


def _stop_xy(run: Path) -> pl.DataFrame:
    stops = pl.read_csv(run / "gtfs" / "stops.txt", schema_overrides={"stop_id": pl.String})
    x, y = from_wgs84(stops["stop_lat"].to_numpy(), stops["stop_lon"].to_numpy())
    return stops.select("stop_id", sx=pl.Series(x), sy=pl.Series(y))


def test_same_options_give_byte_identical_files(tmp_path: Path) -> None:
    opts = replace(OPTS, days=1)
    simulate(opts, tmp_path / "a")
    simulate(opts, tmp_path / "b")
    a, b = _hashes(tmp_path / "a"), _hashes(tmp_path / "b")
    assert a == b
    assert {
        "avl.parquet",
        "avl.csv",
        "avl_mqtt.jsonl",
        "fares.csv",
        "gtfs.zip",
        "truth/trips.parquet",
        "truth/stop_visits.parquet",
        "truth/loads.parquet",
    } <= set(a)
    simulate(replace(opts, seed=8), tmp_path / "c")
    c = _hashes(tmp_path / "c")
    assert c["avl.parquet"] != a["avl.parquet"]
    assert c["truth/trips.parquet"] != a["truth/trips.parquet"]


def test_gtfs_is_a_small_brazilian_city_with_frequencies_and_a_holiday(
    run: Path, truth: pl.DataFrame
) -> None:
    with zipfile.ZipFile(run / "gtfs.zip") as zf:
        assert {
            "agency.txt",
            "routes.txt",
            "stops.txt",
            "trips.txt",
            "stop_times.txt",
            "calendar.txt",
            "calendar_dates.txt",
            "shapes.txt",
            "frequencies.txt",
        } <= set(zf.namelist())
    agency = pl.read_csv(run / "gtfs" / "agency.txt")
    assert set(agency["agency_timezone"]) == {"America/Sao_Paulo"}
    stops = pl.read_csv(run / "gtfs" / "stops.txt")
    assert -29.4 < stops["stop_lat"].mean() < -29.0 and -51.8 < stops["stop_lon"].mean() < -51.3  # type: ignore[operator]
    freq = pl.read_csv(run / "gtfs" / "frequencies.txt")
    assert freq["trip_id"].str.split("-").list.first().unique().to_list() == ["C20"]
    cal_dates = pl.read_csv(run / "gtfs" / "calendar_dates.txt")
    assert 20260421 in cal_dates["date"].to_list()
    trips = pl.read_csv(run / "gtfs" / "trips.txt")
    assert trips.filter(pl.col("route_id") == "T10")["block_id"].null_count() == 0
    # every truth trip is a GTFS trip or a frequency expansion of a template
    ids = set(trips["trip_id"])
    names = truth["trip_id"].str.split("@").list.first()
    assert names.is_in(list(ids)).all()
    assert (
        truth.filter(pl.col("route_id") == "C20")["trip_id"]
        .str.contains(r"^C20-WD@\d\d:\d\d:\d\d$")
        .all()
    )
    # circular line: first and last stop are the same terminal
    st = pl.read_csv(run / "gtfs" / "stop_times.txt", schema_overrides={"stop_id": pl.String})
    c20 = st.filter(pl.col("trip_id") == "C20-WD").sort("stop_sequence")["stop_id"]
    assert c20[0] == c20[-1]
    # the corridor lines share stops
    pat = st.join(trips.select("trip_id", "route_id"), on="trip_id")
    s31 = set(pat.filter(pl.col("route_id") == "S31")["stop_id"])
    s32 = set(pat.filter(pl.col("route_id") == "S32")["stop_id"])
    assert len(s31 & s32) >= 8


def test_trunk_line_headway_is_at_most_ten_minutes_at_the_peak(truth: pl.DataFrame) -> None:
    t10 = truth.filter(
        (pl.col("route_id") == "T10")
        & (pl.col("direction_id") == 0)
        & (pl.col("service_date") == date(2026, 3, 2))
    ).sort("planned_start_at")
    peak = t10.filter(
        pl.col("planned_start_at").dt.convert_time_zone("America/Sao_Paulo").dt.hour() == 7
    )
    assert peak["planned_start_at"].diff().dt.total_seconds().drop_nulls().max() <= 600  # type: ignore[operator]


def test_outcomes_follow_the_profile_windows(truth: pl.DataFrame) -> None:
    early = PROFILE.trips.early_departure_s.value
    late = PROFILE.trips.late_departure_s.value
    ran = truth.filter(pl.col("true_outcome").is_in(["on_time", "late", "early"]))
    assert (ran.filter(pl.col("true_outcome") == "early")["departure_delay_s"] < -early).all()
    assert (ran.filter(pl.col("true_outcome") == "late")["departure_delay_s"] > late).all()
    on_time = ran.filter(pl.col("true_outcome") == "on_time")["departure_delay_s"]
    assert on_time.min() >= -early and on_time.max() <= late  # type: ignore[operator]
    sup = truth.filter(pl.col("true_outcome") == "suppressed")
    assert (
        sup["vehicle_id"].null_count() == sup.height
        and sup["actual_start_at"].null_count() == sup.height
    )
    broken = truth.filter(pl.col("true_outcome") == "broken_down")
    assert broken.height > 0 and broken["actual_end_at"].null_count() == broken.height
    partial = truth.filter(pl.col("true_outcome") == "partial")
    ratio = PROFILE.trips.partial_trip_min_ratio.value
    assert (partial["true_distance_m"] < ratio * partial["planned_distance_m"]).all()
    counts = dict(truth.group_by("injected").len().iter_rows())
    for kind in ("suppressed", "early", "late", "breakdown", "detour", "fleet_cut"):
        assert counts.get(kind, 0) > 0, kind
    # the injected early/late departures really are early/late (unless something worse happened)
    inj_early = truth.filter(pl.col("injected") == "early")
    assert (inj_early["true_outcome"] == "early").mean() > 0.9  # type: ignore[operator]


def test_fleet_cut_removes_over_ten_percent_of_an_operator_fleet(run: Path) -> None:
    fd = (
        pl.read_parquet(run / "truth" / "fleet_days.parquet")
        .group_by("date", "operator_id")
        .agg(pl.col("n_vehicles_required").sum(), pl.col("n_vehicles_operated").sum())
    )
    o1 = fd.filter(pl.col("operator_id") == "O1").sort("date")
    required = o1["n_vehicles_required"].to_list()
    assert required[0] == required[1]
    cut_day = o1.row(1, named=True)
    truth = pl.read_parquet(run / "truth" / "trips.parquet")
    cut_blocks = truth.filter(
        (pl.col("injected") == "fleet_cut") & (pl.col("service_date") == date(2026, 3, 3))
    )
    assert cut_blocks["block_id"].n_unique() / cut_day["n_vehicles_required"] > 0.10


def test_suppressed_round_leaves_the_vehicle_standing_at_the_terminal(
    run: Path, truth: pl.DataFrame, avl: pl.DataFrame
) -> None:
    """No pings run the suppressed trip's shape at its time: when the whole round (out and back)
    is skipped, its vehicle waits at the origin terminal."""
    t = truth.sort("service_date", "block_id", "planned_start_at").with_columns(
        prev_vehicle=pl.col("vehicle_id").shift(1).over("service_date", "block_id"),
        resume_vehicle=pl.col("vehicle_id").shift(-2).over("service_date", "block_id"),
        resume_at=pl.col("planned_start_at").shift(-2).over("service_date", "block_id"),
        return_injected=pl.col("injected").shift(-1).over("service_date", "block_id"),
    )
    # a round skipped between two trips of the same vehicle (not at the end of a tripper's peak,
    # where the bus rightly goes back to the garage)
    sup = t.filter(
        (pl.col("injected") == "suppressed")
        & (pl.col("direction_id") == 0)
        & (pl.col("return_injected") == "suppressed")
        & (pl.col("prev_vehicle") == pl.col("resume_vehicle"))
        & ((pl.col("resume_at") - pl.col("planned_start_at")).dt.total_seconds() < 7000)
    )
    assert sup.height > 0
    st = (
        pl.read_csv(run / "gtfs" / "stop_times.txt", schema_overrides={"stop_id": pl.String})
        .filter(pl.col("stop_sequence") == 1)
        .select("trip_id", "stop_id")
        .join(_stop_xy(run), on="stop_id")
    )
    checked = 0
    for row in sup.iter_rows(named=True):
        origin = st.filter(pl.col("trip_id") == row["trip_id"])
        if origin.height == 0:
            continue
        window = avl.filter(
            (pl.col("vehicle_id") == row["prev_vehicle"])
            & (pl.col("event_at") > row["planned_start_at"] + pl.duration(minutes=3))
            & (pl.col("event_at") < row["planned_start_at"] + pl.duration(minutes=15))
        )
        if window.height < 5:
            continue
        d = np.hypot(
            window["x"].to_numpy() - origin["sx"][0], window["y"].to_numpy() - origin["sy"][0]
        )
        assert np.median(d) < 60.0, row["trip_id"]
        checked += 1
    assert checked > 0


def test_pings_stand_at_the_stop_during_a_true_visit(run: Path, avl: pl.DataFrame) -> None:
    visits = (
        pl.read_parquet(run / "truth" / "stop_visits.parquet")
        .filter((pl.col("departed_at") - pl.col("arrived_at")).dt.total_seconds() >= 45)
        .join(_stop_xy(run), on="stop_id")
    )
    joined = avl.join_where(
        visits.select("vehicle_id", "arrived_at", "departed_at", "sx", "sy").rename(
            {"vehicle_id": "v"}
        ),
        pl.col("vehicle_id") == pl.col("v"),
        pl.col("event_at") >= pl.col("arrived_at"),
        pl.col("event_at") <= pl.col("departed_at"),
    )
    assert joined.height > 100
    d = np.hypot((joined["x"] - joined["sx"]).to_numpy(), (joined["y"] - joined["sy"]).to_numpy())
    # GPS noise σ = 8 m per axis: the radial error's median is σ·sqrt(2 ln 2) ≈ 9.4 m
    assert 7.0 < np.median(d) < 12.0
    assert np.mean(d < 50.0) > 0.98


def test_breakdowns_stand_still_and_some_carry_an_event_code(run: Path) -> None:
    brk = pl.read_parquet(run / "truth" / "breakdowns.parquet")
    assert brk.height > 0
    pings = pl.read_parquet(run / "avl.parquet")
    x, y = from_wgs84(pings["lat"].to_numpy(), pings["lon"].to_numpy())
    pings = pings.with_columns(x=pl.Series(x), y=pl.Series(y))
    skewed = pl.read_parquet(run / "truth" / "avl_units.parquet")["vehicle_id"].to_list()
    for row in brk.filter(~pl.col("vehicle_id").is_in(skewed)).iter_rows(named=True):
        bx, by = from_wgs84(np.array([row["lat"]]), np.array([row["lon"]]))
        after = pings.filter(
            (pl.col("vehicle_id") == row["vehicle_id"])
            & (pl.col("event_at") > row["occurred_at"] + pl.duration(minutes=2))
            & (pl.col("event_at") < row["occurred_at"] + pl.duration(seconds=row["stand_s"]))
        )
        d = np.hypot(after["x"].to_numpy() - bx[0], after["y"].to_numpy() - by[0])
        assert np.median(d) < 30.0
    coded = pings.filter(pl.col("event_code") == "breakdown")["vehicle_id"].unique().to_list()
    assert set(coded) <= set(brk["vehicle_id"])
    assert set(coded) == set(brk.filter(pl.col("has_event_code"))["vehicle_id"])


def test_loads_add_up_and_some_peak_trips_are_crowded(run: Path, truth: pl.DataFrame) -> None:
    loads = pl.read_parquet(run / "truth" / "loads.parquet")
    per_trip = loads.group_by("service_date", "trip_id").agg(
        pl.col("n_boardings").sum(), pl.col("n_alightings").sum(), pl.col("load_after").last()
    )
    assert (per_trip["n_boardings"] == per_trip["n_alightings"]).all()
    assert (per_trip["load_after"] == 0).all()
    assert (loads["load_after"] >= 0).all()
    limit = PROFILE.crowding.standees_max_per_m2.value
    crowded = truth.filter(pl.col("max_standees_per_m2") > limit)
    assert crowded.height > 0
    hours = crowded["planned_start_at"].dt.convert_time_zone("America/Sao_Paulo").dt.hour()
    assert hours.is_in([6, 7, 8, 16, 17, 18]).all()


def test_fares_match_boardings_and_cards_ride_several_times_a_day(run: Path) -> None:
    fares = pl.read_csv(
        run / "fares.csv", schema_overrides={"card_id": pl.String, "vehicle_id": pl.String}
    )
    assert fares.columns == [
        "transaction_id",
        "event_at",
        "vehicle_id",
        "route_id",
        "card_id",
        "fare_class",
        "amount",
    ]
    assert fares["event_at"].str.ends_with("Z").all()
    loads = pl.read_parquet(run / "truth" / "loads.parquet")
    assert fares.height == loads["n_boardings"].sum()
    per_card = (
        fares.with_columns(day=pl.col("event_at").str.slice(0, 10)).group_by("card_id", "day").len()
    )
    assert (per_card["len"] >= 2).mean() > 0.5  # type: ignore[operator]
    assert set(fares["fare_class"]) == {
        "full",
        "student",
        "elderly",
        "disabled",
        "vale_transporte",
        "integration",
    }
    ratio = PROFILE.fares.integration_fare_ratio
    assert ratio is not None
    full = ratio.value
    integ = fares.filter(pl.col("fare_class") == "integration")
    assert integ["amount"].unique().to_list() == [round(OPTS.fare_full_brl * full, 2)]
    assert fares.filter(pl.col("fare_class").is_in(["elderly", "disabled"]))["amount"].max() == 0.0


def test_mqtt_lines_are_in_delivery_order_with_duplicates(run: Path) -> None:
    lines = (run / "avl_mqtt.jsonl").read_text().splitlines()
    msgs = [json.loads(line) for line in lines[:20000]]
    assert msgs[0]["topic"].startswith("pontual/avl/O")
    assert set(msgs[0]["payload"]) == {
        "vehicle_id",
        "event_at",
        "lat",
        "lon",
        "speed_m_s",
        "heading_deg",
        "event_code",
    }
    keys = [(m["payload"]["vehicle_id"], m["payload"]["event_at"]) for m in msgs]
    assert len(set(keys)) < len(keys)  # duplicates
    per_vehicle: dict[str, list[str]] = {}
    for v, t in keys:
        per_vehicle.setdefault(v, []).append(t)
    assert any(ts != sorted(ts) for ts in per_vehicle.values())  # out of order
    fares = (run / "fares_mqtt.jsonl").read_text().splitlines()
    assert json.loads(fares[0])["topic"].startswith("pontual/fares/")


def test_fleet_register_breaks_some_age_and_inspection_rules(run: Path) -> None:
    fleet = pl.read_csv(run / "vehicles.csv", schema_overrides={"vehicle_id": pl.String})
    assert (
        40 <= fleet.height <= 50
        and fleet["operator_id"].n_unique() == 2
        and fleet["lot_id"].n_unique() == 2
    )
    assert set(fleet["service_area"]) == {"urban", "district"}
    limit = fleet["service_area"].replace_strict(
        {a: v.max_age_years.value for a, v in PROFILE.fleet.age.items()}, return_dtype=pl.Float64
    )
    too_old = (2026 - fleet["manufacture_year"]) > limit
    assert 0 < too_old.sum() < fleet.height / 3
    assert fleet["is_reserve"].sum() > 0


def test_stressed_variant_thins_and_scatters_the_pings(tmp_path: Path) -> None:
    base = replace(OPTS, days=1, write_text_avl=False)
    a = simulate(base, tmp_path / "base")
    b = simulate(
        replace(base, ping_interval_s=60, loss_rate=0.2, jump_rate=0.02), tmp_path / "stressed"
    )
    ratio = b.n_pings / a.n_pings
    # half the pings (60 s), then 80 % kept (loss) of the ~98 % outside outages
    assert 0.35 < ratio < 0.45
    assert b.outcome_counts == a.outcome_counts  # the operation itself is unchanged


def test_simulates_one_day_on_a_real_feed_with_few_vehicles(tmp_path: Path) -> None:
    from tests.conftest import shared_data

    feed = shared_data("gtfs_brazil_gtfs2gps", "poa.zip")
    opts = replace(OPTS, gtfs_path=feed, start=date(2019, 3, 11), days=1, n_vehicles=12)
    summary = simulate(opts, tmp_path)
    truth = pl.read_parquet(tmp_path / "truth" / "trips.parquet")
    gtfs_trips = pl.read_csv(tmp_path / "gtfs" / "trips.txt", infer_schema=False)
    # the written feed keeps exactly the simulated lines' trips, with the simulator's blocks
    assert set(truth["trip_id"]) == set(gtfs_trips["trip_id"])
    assert gtfs_trips["block_id"].null_count() == 0
    assert truth["vehicle_id"].drop_nulls().n_unique() <= 12 < truth.height
    assert summary.n_pings > 1000
    # the pings follow the feed's stops: a served stop has a ping within 60 m while dwelling
    visits = pl.read_parquet(tmp_path / "truth" / "stop_visits.parquet")
    assert visits.height > 10 * truth.filter(pl.col("vehicle_id").is_not_null()).height


def test_cli_simulate_writes_the_folder(tmp_path: Path) -> None:
    from pontual.cli import main

    assert main(["--quiet", "simulate", "--days", "1", "--seed", "3", "--out", str(tmp_path)]) == 0
    assert (tmp_path / "README.md").read_text().startswith("# Simulated operation 2026-03-02")
    assert pl.read_parquet(tmp_path / "truth" / "trips.parquet")["service_date"].n_unique() == 1


def test_sampled_year_dates_are_working_days_spread_over_each_month() -> None:
    one = sampled_year_dates(2025, 1)
    assert [d.month for d in one] == list(range(1, 13))
    assert one[0] == date(2025, 1, 16) and one[3] == date(2025, 4, 15)  # 21 April is a holiday
    two = sampled_year_dates(2025, 2)
    assert len(two) == 24 and two[:2] == (date(2025, 1, 8), date(2025, 1, 24))
    assert all(d.weekday() < 5 and d != date(2025, 4, 21) for d in one + two)


def test_cli_sampled_year_one_day_a_month(tmp_path: Path) -> None:
    """A sampled year: the 12 days only, with pings where the truth puts the buses on every
    one of them (a sort key once assumed a run shorter than 4.6 days and scrambled later days),
    and the day-indexed fleet cut on simulated days 2 to 5."""
    from pontual.cli import main

    argv = ["--quiet", "simulate", "--year", "2025", "--days-per-month", "1", "--vehicles", "10"]
    assert main([*argv, "--seed", "3", "--out", str(tmp_path)]) == 0
    dates = sampled_year_dates(2025, 1)
    readme = (tmp_path / "README.md").read_text()
    assert readme.startswith("# Simulated operation 2025-01-16 .. 2025-12-16")
    assert "A sampled operation: 12 service days" in readme
    truth = pl.read_parquet(tmp_path / "truth" / "trips.parquet")
    assert tuple(truth["service_date"].unique().sort()) == dates
    cut = truth.filter(pl.col("injected") == "fleet_cut")["service_date"].unique().sort()
    assert tuple(cut) == dates[1:5]
    pings = pl.read_parquet(tmp_path / "avl.parquet")
    assert set(pings["event_at"].dt.convert_time_zone("America/Sao_Paulo").dt.date()) <= set(dates)
    skewed = pl.read_parquet(tmp_path / "truth" / "avl_units.parquet")["vehicle_id"]
    pings = pings.filter(~pl.col("vehicle_id").is_in(skewed.implode()))
    x, y = from_wgs84(pings["lat"].to_numpy(), pings["lon"].to_numpy())
    pings = pings.with_columns(x=pl.Series(x), y=pl.Series(y))
    visits = (
        pl.read_parquet(tmp_path / "truth" / "stop_visits.parquet")
        .filter((pl.col("departed_at") - pl.col("arrived_at")).dt.total_seconds() >= 45)
        .join(_stop_xy(tmp_path), on="stop_id")
    )
    joined = pings.join_where(
        visits.select("vehicle_id", "arrived_at", "departed_at", "sx", "sy").rename(
            {"vehicle_id": "v"}
        ),
        pl.col("vehicle_id") == pl.col("v"),
        pl.col("event_at") >= pl.col("arrived_at"),
        pl.col("event_at") <= pl.col("departed_at"),
    )
    assert joined.height > 200
    assert joined["arrived_at"].dt.date().n_unique() == 12
    d = np.hypot((joined["x"] - joined["sx"]).to_numpy(), (joined["y"] - joined["sy"]).to_numpy())
    assert 7.0 < np.median(d) < 12.0


def test_mid_route_silences_and_halts_off_the_stop_are_in_the_pings_and_truth(
    tmp_path: Path,
) -> None:
    out = tmp_path / "sim"
    simulate(
        SimulationOptions(
            days=1,
            n_vehicles=12,
            write_text_avl=False,
            mid_route_silence_rate=0.2,
            halt_offset_rate=1.0,
            # no other loss: what is silent is the injected silences and the outages
            loss_rate=0.0,
            jump_rate=0.0,
        ),
        out,
    )
    silences = pl.read_parquet(out / "truth" / "avl_silences.parquet")
    pings = pl.read_parquet(out / "avl.parquet")
    skewed = pl.read_parquet(out / "truth" / "avl_units.parquet")["vehicle_id"].cast(pl.String)
    truth = pl.read_parquet(out / "truth" / "trips.parquet")
    assert silences.height >= 10
    assert silences["silence_s"].min() >= 300  # type: ignore[operator]
    # each silence lies inside its trip's run, and its vehicle sent no fix within it
    spans = silences.join(
        truth.select("trip_id", "vehicle_id", "actual_start_at", "actual_end_at"), on="trip_id"
    ).filter(~pl.col("vehicle_id").is_in(skewed.implode()))
    assert (spans["last_fix_at"] >= spans["actual_start_at"]).all()
    assert (spans["next_fix_at"] <= spans["actual_end_at"]).all()
    inside = pings.with_columns(pl.col("vehicle_id").cast(pl.String)).join_where(
        spans.select("vehicle_id", "last_fix_at", "next_fix_at").rename({"vehicle_id": "v"}),
        pl.col("vehicle_id") == pl.col("v"),
        pl.col("event_at") > pl.col("last_fix_at"),
        pl.col("event_at") < pl.col("next_fix_at"),
    )
    assert inside.height == 0
    # every dwell at an intermediate stop halts 5-30 m short of or past the stop's point
    visits = pl.read_parquet(out / "truth" / "stop_visits.parquet")
    halted = visits.filter(pl.col("halt_offset_m") != 0)["halt_offset_m"].abs()
    assert halted.len() > 100
    assert halted.min() >= 5.0 and halted.max() <= 30.0  # type: ignore[operator]
    assert (visits["halt_offset_m"] < 0).sum() > 0.3 * halted.len()
