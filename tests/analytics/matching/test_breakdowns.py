"""Breakdowns on a hand-built trace: a long stand away from stops and an AVL event code."""

from __future__ import annotations

import polars as pl

from analytics.matching.batches import PING_OPTIONAL
from analytics.matching.breakdowns import find_breakdowns, find_stands
from analytics.matching.clean import clean_pings
from analytics.matching.frames import BREAKDOWN_STANDS
from analytics.matching.network import build_network
from analytics.matching.options import MatchOptions
from core.tables.observed import INCIDENTS
from tests.analytics import synthetic as sy

H = 3600
OPTIONS = MatchOptions()


def test_a_stand_away_from_stops_and_an_event_code() -> None:
    trips, stop_times = sy.schedule([("A1", "S1", "B1", 8 * H)])
    network = build_network(sy.shapes(), trips, stop_times, sy.stops(), OPTIONS)
    # V1 departs at 8:00 and stops for good at x = 2 250 m (250 m from the stops at 2 000 and
    # 2 500 m); pings every 30 s from 7:55 (id 1) to 8:49:30 (id 110). The ping at 8:06:00
    # (id 23) is at 2 240 m, 10 m short: the stand starts there. Ping 50 reports "avaria"
    pings = sy.drive("V1", [("S1", 8 * H, 2250.0, 0)], sigma_m=0.0)
    pings = pings.with_columns(
        pl.lit(None, t).alias(c) for c, t in PING_OPTIONAL.items() if c != "event_code"
    ).with_columns(
        pl.when(pl.col("ping_id") == 50).then(pl.lit("avaria")).alias("event_code"),
    )
    stands = find_stands(clean_pings(pings, OPTIONS), network, OPTIONS, 600.0)
    assert stands.schema == BREAKDOWN_STANDS.polars_schema
    ref = sy.REF.timestamp() + 8 * H
    by_source = {r["source"]: r for r in stands.iter_rows(named=True)}
    assert sorted(by_source) == ["event_code", "inferred"]
    stand = by_source["inferred"]
    assert (stand["first_ping_id"], stand["last_ping_id"]) == (23, 110)
    assert (stand["started_s"] - ref, stand["ended_s"] - ref) == (360.0, 2970.0)
    assert "(88 pings), viagem não concluída" in stand["evidence"]
    event = by_source["event_code"]
    assert (event["first_ping_id"], event["started_s"] - ref) == (50, 1170.0)
    assert event["evidence"] == "código de evento AVL 'avaria' no ping 50"
    # inside a run that never arrived, one breakdown per run: the event code wins
    runs = pl.DataFrame(
        {
            "vehicle_id": ["V1"],
            "run_index": pl.Series([0], dtype=pl.Int32),
            "trip_id": ["A1"],
            "first_s": [ref],
            "last_s": [ref + 2970.0],
            "is_arrived": [False],
        }
    )
    found = find_breakdowns(stands, runs, INCIDENTS.empty(), OPTIONS)
    assert found.select("source", "run_index", "trip_id", "first_ping_id").rows() == [
        ("event_code", 0, "A1", 50)
    ]
