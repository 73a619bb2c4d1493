"""A store prepared for the live engine from a simulated operation (shared by the live tests).

Day 1 of the simulation is the history: its pings are ingested and matched, so `stop_visits`
holds a day of observed travel times. Day 2 is the live day, replayed from `avl_mqtt.jsonl` /
`fares_mqtt.jsonl`. The fleet register and the incidents are ingested too.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from datetime import date
from pathlib import Path

import polars as pl

from analytics.matching.day import run_match_day
from analytics.matching.options import MatchOptions
from core.profile import load_profile
from core.store import Store
from ingest.files import ingest_file
from ingest.gtfs_feed import load_gtfs
from ingest.options import build_options
from sample_data.options import SimulationOptions
from sample_data.simulate import simulate

PROFILE_ID = "bento-goncalves-2021"
HISTORY_DAY = date(2026, 3, 2)
LIVE_DAY = date(2026, 3, 3)


@dataclass(frozen=True)
class SimulatedStore:
    """Where the simulation and the prepared store lie."""

    sim_dir: Path
    store_path: Path

    def messages(self, start: str, end: str) -> list[tuple[str, bytes]]:
        """AVL and fare MQTT messages of the live day whose event time is in [start, end)
        (UTC ISO strings), in delivery order within each stream, merged by event time."""
        both = read_message_streams(self.sim_dir).filter(
            (pl.col("_t") >= pl.lit(start)) & (pl.col("_t") < pl.lit(end))
        )
        return [
            (topic, payload.encode())
            for topic, payload in zip(both["topic"], both["payload"], strict=True)
        ]


@functools.cache
def read_message_streams(sim_dir: Path) -> pl.DataFrame:
    """Both MQTT streams of a simulation: topic, payload (JSON text), _t (event time text)."""
    parts = []
    for name in ("avl_mqtt.jsonl", "fares_mqtt.jsonl"):
        frame = pl.read_ndjson(sim_dir / name, infer_schema_length=None)
        parts.append(
            frame.select(
                "topic",
                pl.col("payload").struct.json_encode(),
                pl.col("payload").struct.field("event_at").alias("_t"),
            )
        )
    return pl.concat(parts).sort("_t", maintain_order=True)


def build_simulated_store(folder: Path) -> SimulatedStore:
    """Simulate two weekdays and prepare the store (reference data and day-1 history)."""
    sim = folder / "sim"
    simulate(SimulationOptions(days=2, text_days=None, seed=3), sim)
    store_path = folder / "store" / "pontual.duckdb"
    store_path.parent.mkdir(parents=True, exist_ok=True)
    profile = load_profile(PROFILE_ID)
    options = build_options()
    with Store.open(store_path) as store:
        load_gtfs(store, sim / "gtfs", materialise_days=(HISTORY_DAY, LIVE_DAY))
        ingest_file(store, sim / "vehicles.csv", "vehicles", options=options, profile=profile)
        ingest_file(store, sim / "incidents.csv", "incidents", options=options, profile=profile)
        history = sim / "history_avl.parquet"
        pl.read_parquet(sim / "avl.parquet").filter(
            pl.col("event_at").dt.date() == HISTORY_DAY
        ).write_parquet(history)
        ingest_file(store, history, "avl", options=options, profile=profile)
        run_match_day(store, HISTORY_DAY, profile, MatchOptions())
        store.publish_snapshot()
    return SimulatedStore(sim, store_path)
