"""The prediction log and its scoring, on a hand-checked small day."""

from __future__ import annotations

from datetime import UTC, date, datetime
from pathlib import Path

import polars as pl
import pytest

from analytics.live.accuracy import (
    PredictionLog,
    build_prediction_log_rows,
    compute_prediction_accuracy,
    find_days_to_score,
    read_uncertainty,
    run_accuracy_day,
)
from analytics.live.feeds import build_trip_update_frames
from core.schema import table
from core.store import Store
from gtfs.realtime import build_trip_updates

DAY = date(2026, 3, 3)
TZ = "America/Sao_Paulo"  # UTC-3: 12:00Z is 09:00 local


def _t(hms: str) -> datetime:
    return datetime.fromisoformat(f"2026-03-03T{hms}+00:00").astimezone(UTC)


def _s(hms: str) -> float:
    return _t(hms).timestamp()


def _log() -> pl.DataFrame:
    # (trip, seq, bucket, block_order, predicted, planned): errors vs the truth below
    rows = [
        ("T1", 1, 5, 0, "12:01:00", "11:58:00"),  # +60, timetable -120
        ("T1", 2, 5, 0, "12:09:00", "12:08:00"),  # -60, timetable -120
        ("T1", 2, 10, 0, "12:13:00", "12:08:00"),  # +180, timetable -120
        ("T1", 3, 5, 0, "12:21:00", "12:20:00"),  # stop only interpolated: not scored
        ("T2", 1, 10, 1, "13:05:00", "13:00:00"),  # +300, timetable 0
        ("T9", 1, 5, 0, "14:00:00", "14:00:00"),  # trip never matched: not scored
    ]
    return table("live_predictions").conform(
        pl.DataFrame(
            [
                {
                    "service_date": DAY,
                    "trip_id": trip,
                    "stop_sequence": seq,
                    "horizon_min": bucket,
                    "block_order": order,
                    "vehicle_id": "V1",
                    "made_at": _t("11:50:00"),
                    "predicted_arrival_at": _t(pred),
                    "planned_arrival_at": _t(plan),
                }
                for trip, seq, bucket, order, pred, plan in rows
            ]
        )
    )


def _visits() -> pl.DataFrame:
    rows = [
        ("T1", 1, "12:00:00", False),
        ("T1", 2, "12:10:00", False),
        ("T1", 3, "12:20:00", True),
        ("T2", 1, "13:00:00", False),
    ]
    return table("stop_visits").conform(
        pl.DataFrame(
            [
                {
                    "service_date": DAY,
                    "vehicle_id": "V1",
                    "run_index": 0 if trip == "T1" else 1,
                    "trip_id": trip,
                    "stop_sequence": seq,
                    "stop_id": f"S{seq}",
                    "stop_dist_m": 100.0 * seq,
                    "arrival_at": _t(at),
                    "is_interpolated": interp,
                }
                for trip, seq, at, interp in rows
            ]
        ),
        fill={"pontual_version": "test", "profile_id": "test"},
    )


TRIPS = pl.DataFrame({"trip_id": ["T1", "T2", "T9"], "route_id": ["R1", "R2", "R1"]})


def test_accuracy_by_horizon_line_hour_and_trip_matches_the_hand_count() -> None:
    got = compute_prediction_accuracy(_log(), _visits(), TRIPS, TZ)
    by = {(r["dimension"], r["key"]): r for r in got.iter_rows(named=True)}
    assert set(by) == {
        ("horizon", "5"), ("horizon", "10"), ("line", "R1"), ("line", "R2"),
        ("hour", "9"), ("hour", "10"), ("trip", "current"), ("trip", "next"),
    }  # fmt: skip
    five, ten = by[("horizon", "5")], by[("horizon", "10")]
    assert (five["n_predictions"], five["mae_s"], five["p50_s"], five["bias_s"]) == (2, 60, 60, 0)
    assert (five["timetable_mae_s"], five["timetable_p90_s"]) == (120, 120)
    assert (ten["n_predictions"], ten["mae_s"], ten["bias_s"]) == (2, 240, 240)
    assert ten["p90_s"] == pytest.approx(288.0)  # 180 + 0.9 * (300 - 180)
    assert ten["timetable_mae_s"] == 60 and ten["timetable_p50_s"] == 60
    for key in (("line", "R1"), ("hour", "9"), ("trip", "current")):
        assert (by[key]["n_predictions"], by[key]["mae_s"], by[key]["timetable_mae_s"]) == (
            3, 100, 120,
        )  # fmt: skip
    for key in (("line", "R2"), ("hour", "10"), ("trip", "next")):
        assert (by[key]["n_predictions"], by[key]["mae_s"], by[key]["timetable_mae_s"]) == (
            1, 300, 0,
        )  # fmt: skip


def test_the_log_keeps_the_first_prediction_per_trip_stop_and_bucket() -> None:
    clock = _s("12:00:00")
    preds = pl.DataFrame(
        {
            "vehicle_id": ["V1", "V1", "V1", "V1", "V2"],
            "trip_id": ["T1", "T1", "T1", "T1", "T1"],
            "stop_sequence": [1, 2, 3, 4, 4],
            "stop_id": ["S1", "S2", "S3", "S4", "S4"],
            "block_order": [0, 0, 0, 0, 1],
            "planned_arrival_s": [clock] * 5,
            "timetable_s": [clock] * 5,
            "constant_delay_s": [clock] * 5,
            # 1 min ago (not a prediction any more), 4.9 min, 5 min, 95 min ahead; V2 the same
            # trip's last stop as its next trip (the feed publishes V1's)
            "predicted_s": [clock - 60, clock + 294, clock + 300, clock + 5700, clock + 9000],
        },
        schema_overrides={"stop_sequence": pl.Int32, "block_order": pl.Int32},
    )
    rows = build_prediction_log_rows(preds, clock, DAY)
    assert rows.select("stop_sequence", "horizon_min", "vehicle_id").rows() == [
        (2, 2, "V1"),
        (3, 5, "V1"),
        (4, 90, "V1"),
    ]
    log = PredictionLog(DAY)
    assert log.record(preds, clock) == 3
    # the same arrivals a minute later: stops 2 and 4 stay in their buckets (2, 90), stop 3
    # is 4 min ahead now (bucket 2: new)
    assert log.record(preds, clock + 60) == 1
    taken = log.take()
    assert taken.height == 4 and log.take().height == 0


def test_the_day_is_scored_from_the_store(tmp_path: Path) -> None:
    with Store.open(tmp_path / "pontual.duckdb") as store:
        store.append(
            "feed_versions",
            pl.DataFrame(
                {
                    "feed_id": ["f1"],
                    "source": ["x"],
                    "source_sha256": ["x"],
                    "loaded_at": [_t("00:00:00")],
                    "timezone": [TZ],
                    "crs_epsg": [31982],
                    "valid_from": [DAY],
                    "valid_to": [DAY],
                    "pontual_version": ["test"],
                }
            ),
        )
        store.append("live_predictions", _log())
        assert find_days_to_score(store, date(2026, 3, 4)) == []  # not matched yet
        store.append("stop_visits", _visits())
        assert find_days_to_score(store, date(2026, 3, 4)) == [DAY]
        assert find_days_to_score(store, DAY) == []  # the day itself is still running
        # scheduled_trips absent for the day: the line is unknown ('?'), the rest holds
        assert run_accuracy_day(store, DAY, "bento-goncalves-2021") == 7
        got = store.read("live_prediction_accuracy")
        assert got.filter(pl.col("dimension") == "line")["key"].to_list() == ["?"]
        assert got.filter(pl.col("key") == "current")["mae_s"].to_list() == [100.0]
        assert find_days_to_score(store, date(2026, 3, 4)) == []
        # the next day's feed knows its error per horizon: the scored day's median
        assert read_uncertainty(store, date(2026, 3, 4), min_predictions=2).rows() == [
            (5, 60.0),
            (10, 240.0),
        ]
        assert read_uncertainty(store, date(2026, 3, 4)).height == 0  # too few: unknown
        assert read_uncertainty(store, DAY, min_predictions=2).height == 0  # not before DAY


def test_the_trip_updates_feed_carries_the_known_uncertainty() -> None:
    clock = _s("12:00:00")
    preds = pl.DataFrame(
        {
            "vehicle_id": ["V1", "V1"],
            "trip_id": ["T1", "T1"],
            "stop_sequence": [1, 2],
            "stop_id": ["S1", "S2"],
            "block_order": [0, 0],
            "planned_arrival_s": [clock + 200, clock + 700],
            "timetable_s": [clock + 200, clock + 700],
            "constant_delay_s": [clock + 260, clock + 760],
            "predicted_s": [clock + 260, clock + 760],
            "uncertainty_s": [None, 240.0],
        },
        schema_overrides={"stop_sequence": pl.Int32, "block_order": pl.Int32},
    )
    descriptors = pl.DataFrame(
        {
            "trip_id": ["T1"],
            "feed_trip_id": ["T1"],
            "route_id": ["R1"],
            "direction_id": [0],
            "start_date": ["20260303"],
            "start_time": ["09:00:00"],
        }
    )
    positions = pl.DataFrame({"vehicle_id": ["V1"], "trip_id": ["T1"], "delay_s": [60.0]})
    trips, stops = build_trip_update_frames(
        preds, positions, pl.DataFrame(schema={"trip_id": pl.String}), descriptors, clock
    )
    feed = build_trip_updates(trips, stops, int(clock))
    updates = feed.entity[0].trip_update.stop_time_update
    assert [u.arrival.delay for u in updates] == [60, 60]
    # unknown where no scored day told it (absent field), the bucket's median elsewhere
    assert not updates[0].arrival.HasField("uncertainty")
    assert updates[1].arrival.uncertainty == 240
