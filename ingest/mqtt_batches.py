"""What one MQTT batch writes and reports: the writer protocol, the committed-batch counts and
hook, and the writer `pontual listen` uses.

`make_batch_writer` returns a `BatchWriter` that reads the network context from the store
(refreshed every `context_refresh_s`), judges the batch's AVL and fare frames with the ingest
core's rules (quarantining what breaks them) and writes them inside the caller's transaction;
it returns (accepted, duplicate, quarantined) counts.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

import polars as pl

from core.store import Store
from ingest.cards import require_store_key
from ingest.mqtt_payloads import MessageFrames
from ingest.options import IngestOptions
from ingest.rules import (
    compute_avl_judged,
    compute_fare_judged,
    compute_judged_isolating,
    read_network_context,
)
from ingest.writing import IngestCounts, write_judged


@dataclass(frozen=True)
class BatchCounts:
    """What one committed batch did, in messages."""

    n_messages: int
    n_accepted: int
    n_duplicate: int
    n_quarantined: int
    commit_s: float


class BatchWriter(Protocol):
    """Writes the record frames of one batch inside the caller's transaction.

    Returns (accepted, duplicate, quarantined) counts over both frames.
    """

    def __call__(
        self, store: Store, frames: MessageFrames
    ) -> tuple[int, int, int]: ...  # pragma: no cover


BatchHook = Callable[[pl.DataFrame, pl.DataFrame], None]


# Payload field -> documented AVL raw column of `ingest.writing.write_avl_records`.
AVL_RENAMES = {
    "trip_id": "reported_trip_id",
    "route_id": "reported_route_id",
    "direction_id": "reported_direction_id",
    "occupancy": "reported_occupancy",
}


def make_batch_writer(
    *,
    key: bytes,
    source: str = "mqtt",
    options: IngestOptions | None = None,
    context_refresh_s: float = 300.0,
) -> BatchWriter:
    """The writer `pontual listen` uses: the ingest core's AVL and fare validation, per batch.

    The network context (stop bounding box, fleet register) is read once and refreshed every
    `context_refresh_s`, not per batch. `source` names the stream in `ingest_runs`; every row
    keeps its own topic in the `source` column of the frame.
    """
    state: dict[str, Any] = {"context": None, "read_at": 0.0}

    def write(store: Store, frames: MessageFrames) -> tuple[int, int, int]:
        now = time.monotonic()
        if state["context"] is None or now - state["read_at"] >= context_refresh_s:
            state["context"] = read_network_context(store)
            state["read_at"] = now
        ctx = state["context"]
        total = IngestCounts()
        if frames.avl.height:
            avl = compute_judged_isolating(
                lambda raw: compute_avl_judged(raw, ctx, source=source, options=options),
                frames.avl.rename(AVL_RENAMES),
                target="vehicle_locations",
                source=source,
            )
            total += write_judged(store, avl, source=source, run_kind="avl")
        if frames.fares.height:
            if not state.get("key_checked"):
                require_store_key(store, key)
                state["key_checked"] = True
            fares = compute_judged_isolating(
                lambda raw: compute_fare_judged(raw, ctx, source=source, key=key, options=options),
                frames.fares,
                target="fare_transactions",
                source=source,
            )
            total += write_judged(store, fares, source=source, run_kind="fares")
        return total.n_accepted, total.n_duplicate, total.n_quarantined

    return write
