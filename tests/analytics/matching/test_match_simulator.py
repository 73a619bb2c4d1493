"""Accuracy against the simulator's truth: one simulated weekday with 30 s pings and sigma 8 m,
and the same day under stress (60 s pings, 20 % of pings lost, 2 % jumps).

Measured at this commit (seed 1, 923 scheduled trips):
- 30 s pings: outcome agreement 99.8 % (2 disagreements), origin-departure error median 4 s,
  p95 15 s; the 4 injected breakdowns found, none false.
- stress: agreement 99.6 % (4 disagreements), error median 5 s, p95 17 s. Departures after a
  silence are back-extrapolated at the run's mean speed; trips inside GPS outages are run when
  the vehicle's fare taps show it (evidence class `ticketing`, 5 trips), dated by block
  continuity (`estimate_departures_by_block`); runs of the two
  directions of a line that share the fixes around a terminal none of which fell inside its
  geofence are consecutive, not concurrent (runs.py `_drop_dominated`: 5 trips were lost there
  before). Left: a trip at the start of a block inside an outage, two coverages just under
  80 %, a run started mid-route dated by the schedule's pace.
The remaining disagreements are listed by `compare_outcomes` (30 s: a departure 4 s past the
300 s window, a run cut by an outage at 72 %).
- dark day (options `dark_vehicle_day_rate` 0.1, `feed_outages_per_day` 1: three units silent
  all day, one operator's feed down ~3 h; 137 trips truly run in the dark): without taps none
  suppressed, 130 not evaluated, 7 judged on GPS runs; with taps 110 run by ticketing, 20 not
  evaluated, 7 on GPS, none suppressed.
Evidence (issue 16): a trip counts as run only on GPS, ticketing or an inspection; none of the
simulator's truly suppressed trips is counted run.
Issue 16, items 3-4 (the 30 s day with `mid_route_silence_rate` 0.1 and `halt_offset_rate`
0.5; agreement unchanged at 99.8 %): 77 trips run end to end through a mid-route silence of
5.5-15.5 min, 77 called run; stop arrival error median 2.6 s,
p90 11.8 s, departure 2.4 s / 8.6 s; halts short of the point 2.7 s / 7 s on arrival (7.5 s /
23 s with the point's crossing), past it 2.7 s / 7.7 s on departure (was 4 s / 25 s). Stress:
agreement 99.57 % as before (106 trips `gps_gap_credited`: three or four lost 60 s fixes in a
row span a fifth of a short trip).
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import polars as pl
import pytest

from analytics.matching.day import DayResult, match_day
from analytics.matching.disagreements import compare_outcomes, compute_agreement
from analytics.matching.options import MatchOptions
from core.profile import load_profile
from sample_data.simulate import default_options, simulate
from tests.analytics.simulated_day import read_simulated_day, read_simulated_evidence

Simulated = tuple[DayResult, pl.DataFrame]


def _simulate_and_match(out: Path, **changes: object) -> Simulated:
    simulate(default_options(days=1, write_text_avl=False, **changes), out)
    truth = pl.read_parquet(out / "truth" / "trips.parquet")
    schedule, pings, incidents = read_simulated_day(out, truth["service_date"][0])
    result = match_day(
        pings,
        schedule,
        incidents,
        load_profile("bento-goncalves-2021"),
        MatchOptions(),
        evidence=read_simulated_evidence(out),
    )
    return result, truth


@pytest.fixture(scope="module")
def simulated(tmp_path_factory: pytest.TempPathFactory) -> Simulated:
    # with mid-route silences on 10 % of the trips run end to end (issue 16, item 3) and half
    # the dwells at intermediate stops halted 5-30 m short of or past the stop's point (item
    # 4): they leave the outcome figures below as they were
    out = tmp_path_factory.mktemp("sim")
    result, truth = _simulate_and_match(out, mid_route_silence_rate=0.1, halt_offset_rate=0.5)
    STOP_TRUTH[id(result)] = pl.read_parquet(out / "truth" / "stop_visits.parquet")
    SILENCES[id(result)] = pl.read_parquet(out / "truth" / "avl_silences.parquet")
    return result, truth


SILENCES: dict[int, pl.DataFrame] = {}
STOP_TRUTH: dict[int, pl.DataFrame] = {}
"""truth/stop_visits.parquet of a fixture's simulation, by its result's id"""
"""truth/avl_silences.parquet of a fixture's simulation, by its result's id"""


@pytest.fixture(scope="module")
def stressed(tmp_path_factory: pytest.TempPathFactory) -> Simulated:
    return _simulate_and_match(
        tmp_path_factory.mktemp("stress"), ping_interval_s=60, loss_rate=0.2, jump_rate=0.02
    )


def test_issue_targets_on_30_s_pings(simulated: Simulated) -> None:
    result, truth = simulated
    figures = compute_agreement(result.trip_outcomes, truth)
    assert figures["n_trips"] == truth.height == 923
    assert figures["agreement"] >= 0.995  # measured 0.9978
    assert figures["start_error_median_s"] <= 10  # measured 4 s
    assert figures["start_error_p95_s"] <= 30  # measured 15 s


def test_disagreements_report_names_each_trip_and_why(simulated: Simulated) -> None:
    result, truth = simulated
    figures = compute_agreement(result.trip_outcomes, truth)
    report = compare_outcomes(result.trip_outcomes, truth)
    assert report.height == round((1 - figures["agreement"]) * truth.height)
    assert report["why"].null_count() == 0
    # a departure measured 4 s past the 300 s window: right vehicle, right time, wrong side
    edge = report.filter(pl.col("trip_id") == "U42-WD-00-008").row(0, named=True)
    assert (edge["true_outcome"], edge["outcome"]) == ("on_time", "late")
    assert edge["true_vehicle_id"] == edge["vehicle_id"] == "20011"
    assert abs(edge["start_error_s"]) <= 10


def test_every_injected_breakdown_found_none_false(simulated: Simulated) -> None:
    result, truth = simulated
    declared = set(truth.filter(pl.col("true_outcome") == "broken_down")["trip_id"])
    found = result.breakdowns
    assert declared == set(found["trip_id"].drop_nulls())  # 4 injected, 4 found
    false = found.filter(~pl.col("trip_id").is_in(list(declared)) | pl.col("trip_id").is_null())
    assert false.height <= 0.01 * found.height  # measured 0
    assert set(found["source"]) == {"event_code", "inferred"}


def test_stress_floor(stressed: Simulated) -> None:
    result, truth = stressed
    figures = compute_agreement(result.trip_outcomes, truth)
    assert figures["agreement"] >= 0.99  # measured 0.9957: a regression floor
    assert figures["start_error_median_s"] <= 10  # measured 5 s
    assert figures["start_error_p95_s"] <= 30  # measured 17 s


def test_stress_issue_target(stressed: Simulated) -> None:
    figures = compute_agreement(stressed[0].trip_outcomes, stressed[1])
    assert figures["agreement"] >= 0.98  # measured 0.9957 (4 of 923)


def test_stress_outage_trips_are_run_by_ticketing_and_say_so(stressed: Simulated) -> None:
    result, truth = stressed
    by_taps = result.trip_outcomes.filter(pl.col("evidence_class") == "ticketing")
    got = by_taps.join(truth.select("trip_id", "true_outcome"), on="trip_id")
    # five trips run inside GPS outages (two of them 11 and 16 min late), none truly suppressed
    assert got.height == 5
    assert (got["outcome"] == got["true_outcome"]).all()
    assert by_taps["reason"].str.contains("validações no veículo").all()
    assert (by_taps["gps_minutes_share"] == 0).all()


@pytest.mark.parametrize("case", ["simulated", "stressed"])
def test_uncorroborated_trips_never_count_as_run(case: str, request: pytest.FixtureRequest) -> None:
    result, truth = request.getfixturevalue(case)
    out = result.trip_outcomes
    run = out.filter(pl.col("outcome").is_in(["on_time", "late", "early"]))
    assert set(run["evidence_class"]) <= {"gps", "gps_gap_credited", "ticketing"}
    assert (
        out.filter(pl.col("evidence_class") == "none")["outcome"]
        .is_in(["suppressed", "not_evaluated"])
        .all()
    )
    # every unit reported and no operator feed went down over a trip: nothing not_evaluated
    assert out.filter(pl.col("outcome") == "not_evaluated").height == 0
    # no trip truly suppressed is counted as run
    fake = run.join(truth.filter(pl.col("true_outcome") == "suppressed"), on="trip_id")
    assert fake.height == 0
    cov = result.avl_coverage
    assert cov.filter(~pl.col("is_reporting"))["is_reserve"].sum() >= 1
    assert cov.filter(pl.col("is_reporting"))["n_trips_run"].sum() == run.height


@pytest.fixture(scope="module")
def dark_day(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, pl.DataFrame]:
    """One day with dark vehicles (10 % of vehicle-days: three units silent all day) and a
    feed outage (every unit of one operator silent for about 3 h), as truth records them."""
    out = tmp_path_factory.mktemp("dark")
    simulate(
        default_options(
            days=1, write_text_avl=False, dark_vehicle_day_rate=0.1, feed_outages_per_day=1
        ),
        out,
    )
    return out, pl.read_parquet(out / "truth" / "avl_dark.parquet")


def _match_dark(out: Path, with_taps: bool) -> tuple[DayResult, pl.DataFrame]:
    truth = pl.read_parquet(out / "truth" / "trips.parquet")
    schedule, pings, incidents = read_simulated_day(out, truth["service_date"][0])
    evidence = read_simulated_evidence(out)
    if not with_taps:
        evidence = replace(evidence, taps=evidence.taps.clear())
    result = match_day(
        pings,
        schedule,
        incidents,
        load_profile("bento-goncalves-2021"),
        MatchOptions(),
        evidence=evidence,
    )
    return result, truth


def _dark_trips(
    out: Path, result: DayResult, truth: pl.DataFrame, dark: pl.DataFrame
) -> pl.DataFrame:
    """Outcomes of the trips truly run (not suppressed) by a dark vehicle, or whose planned
    window lies at least half inside a feed outage of their operator."""
    got = result.trip_outcomes.join(
        truth.select(
            "trip_id",
            "true_outcome",
            pl.col("vehicle_id").cast(pl.String).alias("true_vehicle_id"),
        ),
        on="trip_id",
    ).join(read_simulated_evidence(out).routes, on="route_id")
    dark_vehicles = dark.filter(pl.col("kind") == "vehicle_dark")["vehicle_id"]
    by_vehicle = got.filter(pl.col("true_vehicle_id").is_in(dark_vehicles.implode()))
    feed = dark.filter(pl.col("kind") == "feed_outage").row(0, named=True)
    return pl.concat(
        [
            by_vehicle,
            got.filter(
                (pl.col("agency_id") == feed["operator_id"])
                & pl.col("planned_start_at").is_between(feed["start_at"], feed["end_at"])
                & (pl.col("feed_up_share") <= 0.5)
            ),
        ]
    ).unique("trip_id")


@pytest.mark.parametrize("with_taps", [False, True])
def test_dark_vehicles_and_feed_outages_are_never_suppressed(
    dark_day: tuple[Path, pl.DataFrame], with_taps: bool
) -> None:
    out, dark = dark_day
    assert sorted(dark["kind"]) == ["feed_outage", "vehicle_dark", "vehicle_dark", "vehicle_dark"]
    result, truth = _match_dark(out, with_taps)
    trips = _dark_trips(out, result, truth, dark).filter(pl.col("true_outcome") != "suppressed")
    counts = dict(trips.group_by("outcome").len().iter_rows())
    run = trips.filter(pl.col("outcome").is_in(["on_time", "late", "early"]))
    if not with_taps:
        # nothing but GPS: none suppressed; each unobserved (130 of 137) or judged on a GPS
        # run (a trip half outside the outage, or matched to another unit's run)
        assert counts.get("suppressed", 0) == 0
        assert counts.get("not_evaluated", 0) >= 0.9 * trips.height
        judged = trips.filter(pl.col("outcome") != "not_evaluated")
        # those run into the outage are credited towards their terminal across the silence,
        # and say so (5 of the 7)
        assert judged["evidence_class"].is_in(["gps", "gps_gap_credited"]).all()
    else:
        # the taps show most of them run (ticketing); the rest unobserved, none suppressed
        assert counts.get("suppressed", 0) == 0
        assert set(run["evidence_class"]) <= {"gps", "gps_gap_credited", "ticketing"}
        assert run.filter(pl.col("evidence_class") == "ticketing").height >= 0.5 * trips.height
    # the outage itself is reported: one of about 3 h, its trips not evaluated beside it
    outage = result.feed_outages.filter(pl.col("duration_s") > 3600)
    assert outage.height == 1
    assert (
        outage["operator_id"][0] == dark.filter(pl.col("kind") == "feed_outage")["operator_id"][0]
    )


def test_frequency_trips_have_their_own_planned_times(simulated: Simulated) -> None:
    # the C20 line runs from frequencies.txt (every 20 min): each instance is planned at its
    # own time everywhere, not at the template's 05:30 (issue 16, item 7)
    result = simulated[0]
    out = result.trip_outcomes.filter(pl.col("route_id") == "C20")
    assert out.height == 53 and out["planned_start_at"].n_unique() == 53
    starts = out.sort("planned_start_at")["planned_start_at"]
    assert set(starts.diff().drop_nulls().dt.total_seconds()) == {1200}
    # the instance's time is the one in its id ('C20-WD@06:10:00' leaves at 06:10 local)
    local = (
        out["planned_start_at"].dt.convert_time_zone("America/Sao_Paulo").dt.strftime("%H:%M:%S")
    )
    assert (out["trip_id"].str.split("@").list.get(1) == local).all()
    # stop visits: the first stop's planned departure is the instance's start, and the
    # observed departures lie within minutes of it (not hours off the template)
    visits = result.stop_visits.filter(pl.col("trip_id").str.starts_with("C20-"))
    first = visits.filter(pl.col("stop_sequence") == visits["stop_sequence"].min()).join(
        out.select("trip_id", "planned_start_at"), on="trip_id"
    )
    assert first.height >= 45
    assert (first["planned_departure_at"] == first["planned_start_at"]).all()
    assert first["departure_delay_s"].abs().median() <= 60  # type: ignore[operator]
    run = out.filter(pl.col("outcome").is_in(["on_time", "late", "early"]))
    assert run["departure_delay_s"].abs().max() <= 1800  # type: ignore[operator]


def test_trips_run_end_to_end_through_a_mid_route_silence_are_run(simulated: Simulated) -> None:
    result, truth = simulated
    silences = SILENCES[id(result)]
    # truth: every silence of 5 min or more inside a trip run to its end (77: 5.5 to 15.5 min)
    assert silences.height >= 50
    assert silences["silence_s"].is_between(300, 1800).all()
    run = truth.filter(pl.col("true_outcome").is_in(["on_time", "late", "early"]))
    got = (
        silences.join(run.select("service_date", "trip_id"), on=["service_date", "trip_id"])
        .unique("trip_id")
        .join(result.trip_outcomes, on="trip_id")
    )
    called_run = got["outcome"].is_in(["on_time", "late", "early"]).mean()
    assert isinstance(called_run, float) and called_run >= 0.99  # measured 77 of 77
    # each is credited its silence: at least the silence's seconds, less a ping interval
    assert (got["gps_gap_s"] >= got["silence_s"] - 30).all()
    gap = got.filter(pl.col("evidence_class") == "gps_gap_credited")
    assert gap.height >= 1
    assert gap["reason"].str.contains("silêncio do GPS de").all()


def test_stop_arrivals_and_departures_keep_the_dwell(simulated: Simulated) -> None:
    result, _ = simulated
    truth = STOP_TRUTH[id(result)]
    got = result.stop_visits.join(truth, on=["trip_id", "stop_sequence"], suffix="_true").filter(
        pl.col("vehicle_id") == pl.col("vehicle_id_true")
    )
    err = got.select(
        ((pl.col("arrival_at") - pl.col("arrived_at")).dt.total_milliseconds() / 1000).alias(
            "arrival"
        ),
        ((pl.col("departure_at") - pl.col("departed_at")).dt.total_milliseconds() / 1000).alias(
            "departure"
        ),
        pl.col("halt_offset_m"),
    )
    assert err.height > 14_000
    # issue 16 targets (30 s pings): median <= 5 s, p90 <= 20 s for both
    # measured: arrival median 2.6 s, p90 11.8 s; departure median 2.4 s, p90 8.6 s
    for name in ("arrival", "departure"):
        e = err[name].drop_nulls().abs()
        assert e.median() <= 5  # type: ignore[operator]
        assert e.quantile(0.9) <= 20  # type: ignore[operator]
    # the halts short of the point keep their dwell on arrival (2.7 s median, 7 s p90; the
    # crossing of the point gave 7.5 s and 23 s), those past it on departure (2.7 s, 8 s)
    short = err.filter(pl.col("halt_offset_m") < 0)["arrival"].drop_nulls().abs()
    past = err.filter(pl.col("halt_offset_m") > 0)["departure"].drop_nulls().abs()
    assert short.len() > 1000 and past.len() > 1000
    assert short.median() <= 5 and short.quantile(0.9) <= 15  # type: ignore[operator]
    assert past.median() <= 5 and past.quantile(0.9) <= 15  # type: ignore[operator]
