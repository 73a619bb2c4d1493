"""A batch of pings in lat/lon without a CRS to project them to is refused with a PontualError
(it was an `assert`, which `python -O` strips)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import cast

import polars as pl
import pytest

from analytics.matching.batches import match_vehicles
from analytics.matching.network import Network
from analytics.matching.options import MatchOptions
from core.errors import InputError


def test_pings_in_degrees_without_crs_are_refused() -> None:
    pings = pl.DataFrame(
        {
            "ping_id": [1],
            "vehicle_id": ["V1"],
            "event_at": [datetime(2026, 3, 2, 12, tzinfo=UTC)],
            "lat": [-29.17],
            "lon": [-51.52],
        }
    )
    # the check comes before the network is used: no network needed to show it
    with pytest.raises(InputError, match="no CRS") as caught:
        match_vehicles(pings, cast(Network, None), MatchOptions(), crs_epsg=None)
    assert caught.value.where == "pings, columns x_m/y_m"
