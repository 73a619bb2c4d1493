"""SUBE (Buenos Aires) taps through the same code path as any city's, via their mapping, with
their GPS: there is no GTFS for Buenos Aires, so no run holds them ('vehicle_without_trips');
the taps of vehicles with GPS are located on the trace instead, and the rest say why not."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import numpy as np
import polars as pl

from analytics.crowding.job import run_crowding
from core.profile import load_profile
from core.store import Store
from ingest.files import ingest_file
from ingest.options import IngestOptions
from tests.conftest import shared_data

PROFILE = load_profile("bento-goncalves-2021")
DAY = date(2019, 9, 11)


def test_sube_taps_are_located_on_their_bus_gps_trace(tmp_path: Path) -> None:
    folder = shared_data("fare_sube_buenos_aires_urbantrips")
    with Store.open(tmp_path / "p.duckdb") as store:
        for name, kind, mapping in (
            ("transacciones_amba_test_geocode.csv", "fares", "sube_geocoded"),
            ("gps_amba_test.csv", "avl", "sube_gps"),
        ):
            ingest_file(
                store,
                folder / name,
                kind,
                options=IngestOptions(),
                profile=PROFILE,
                mapping=mapping,
                key=b"k" * 32,
            )
        result = run_crowding(store, PROFILE, DAY, DAY)
        taps = store.read("tap_placements")
    assert result.written["tap_placements"] == taps.height == 26
    assert dict(result.tap_counts.select("placement", "n").iter_rows()) == {
        "no_vehicle": 14,
        "vehicle_without_trips": 12,
    }
    # 26 taps accepted (one malformed time is quarantined at ingest): 12 on buses, 14 on
    # trains and the subway (no vehicle)
    assert dict(taps.group_by("placement").len().iter_rows()) == {
        "no_vehicle": 14,
        "vehicle_without_trips": 12,
    }
    trace = result.trace_placements
    assert trace is not None
    # GPS covers line 48's buses 1012 and 4024 only: their taps lie on the trace
    assert dict(trace.group_by("trace").len().iter_rows()) == {
        "on_trace": 2,
        "vehicle_without_gps": 10,
    }
    on = trace.filter(pl.col("trace") == "on_trace").sort("event_at")
    assert on["vehicle_id"].to_list() == ["1012", "4024"]
    # 10:05 local -> the 10:04 fix; 12:05 -> 12:04 (Buenos Aires, UTC-3)
    assert on["gap_s"].to_list() == [60.0, 60.0]
    # the validator's own geocode (-34.588, -58.452 and -34.594, -58.402) is a block away
    taps_xy = np.array([[-34.588, -58.452], [-34.594, -58.402]])
    dy = (on["lat"].to_numpy() - taps_xy[:, 0]) * 111_320.0
    dx = (on["lon"].to_numpy() - taps_xy[:, 1]) * 111_320.0 * np.cos(np.radians(34.59))
    assert (np.hypot(dx, dy) < 400.0).all()
