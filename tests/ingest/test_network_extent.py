"""The AVL position check's box is the stops' robust extent: a stop with latitude and longitude
swapped (issue 22) no longer stretches it across a continent."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from core.store import Store
from ingest.rules import read_network_context
from ingest.writing import write_avl_records

REASON = "position outside the network's area (bounding box of the stops plus 5000 m)"


def test_a_swapped_stop_does_not_open_the_position_check(store_path: Path) -> None:
    with Store.open(store_path) as store:
        stops = pl.DataFrame(
            {
                "feed_id": ["f"] * 4,
                "stop_id": ["a", "b", "c", "swapped"],
                "stop_lat": [-29.18, -29.15, -29.16, -51.52],
                "stop_lon": [-51.53, -51.50, -51.52, -29.16],
            }
        )
        store.append("gtfs_stops", stops)
        # min/max would give (-51.52, -51.53, -29.15, -29.16): 22 degrees of latitude
        box = read_network_context(store).bbox
        assert box == pytest.approx((-29.18, -51.53, -29.15, -51.50))
        raw = pl.DataFrame(
            {
                "vehicle_id": ["1", "1", "1"],
                "event_at": [
                    "2026-03-02T13:00:00Z",
                    "2026-03-02T13:01:00Z",
                    "2026-03-02T13:02:00Z",
                ],
                # in town; 1 degree (111 km) south, inside the min/max box; Porto Alegre
                "lat": [-29.17, -30.17, -30.03],
                "lon": [-51.52, -51.52, -51.23],
                "record_key": ["m1", "m2", "m3"],
            }
        )
        counts = write_avl_records(store, raw, source="mqtt/test")
        assert (counts.n_accepted, counts.n_quarantined) == (1, 2)
        rejected = store.query("SELECT record_key, reason FROM quarantine ORDER BY record_key")
        assert rejected.rows() == [("m2", REASON), ("m3", REASON)]
