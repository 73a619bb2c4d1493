"""Property tests, one per reader: random bytes and random mutations of good files never crash
a reader (the file is either refused with an InputError or read), and every record read ends
stored, duplicate or quarantined, with a reason from the closed set the rules declare."""

from __future__ import annotations

import io
from datetime import UTC, datetime
from pathlib import Path

import polars as pl
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from core.errors import InputError
from core.schema import table
from core.store import Store
from gtfs.realtime import encode_feed, new_feed
from ingest.options import IngestOptions
from ingest.parsing import _KIND_WORDS, input_columns
from ingest.rules import NetworkContext, compute_avl_checks
from ingest.tabular import REASON_NOT_JSON, REASON_NOT_OBJECT
from tests.conftest import FIXTURES
from tests.ingest.conftest import ingest_fixture

GOOD_CSV = (FIXTURES / "ingest" / "avl_bad_lines.csv").read_bytes()


def _good_files() -> dict[str, bytes]:
    parquet = io.BytesIO()
    pl.read_csv(io.BytesIO(GOOD_CSV), infer_schema=False).write_parquet(parquet)
    feed = new_feed(1772452800)
    for i in range(3):
        entity = feed.entity.add()
        entity.id = str(i)
        vp = entity.vehicle
        vp.vehicle.id, vp.timestamp = f"10{i}", 1772452800 + 30 * i
        vp.position.latitude, vp.position.longitude = -29.17 + i / 1000, -51.52
    return {
        ".csv": GOOD_CSV,
        ".jsonl": (FIXTURES / "ingest" / "avl_lines.jsonl").read_bytes(),
        ".json": (FIXTURES / "bad" / "avl_json_array_pretty_printed.json").read_bytes(),
        ".parquet": parquet.getvalue(),
        ".gpx": (FIXTURES / "ingest" / "inspection_track.gpx").read_bytes(),
        ".pb": encode_feed(feed),
    }


GOOD = _good_files()


def closed_avl_reasons(options: IngestOptions) -> set[str]:
    """Every reason an AVL record from a file can be quarantined with (empty store)."""
    checks, _ = compute_avl_checks(NetworkContext(None, None), options, datetime.now(UTC), False)
    reasons = {c.reason for c in checks if isinstance(c.reason, str)}
    for col in input_columns(table("vehicle_locations")):
        reasons.add(f"missing {col.name}")
        kind = _KIND_WORDS.get(type(col.dtype).__name__)
        if kind is not None:
            reasons.add(f"cannot read {col.name} as {kind}")
    return reasons | {REASON_NOT_JSON, REASON_NOT_OBJECT}


@st.composite
def mutated(draw: st.DrawFn, good: bytes) -> bytes:
    """`good` with a few bytes deleted, inserted or replaced, or cut short."""
    data = bytearray(good)
    for _ in range(draw(st.integers(1, 2))):
        at = draw(st.integers(0, max(0, len(data) - 1)))
        op = draw(st.sampled_from(["delete", "insert", "replace", "replace", "cut"]))
        chunk = draw(st.binary(min_size=1, max_size=4))
        if op == "delete":
            del data[at : at + len(chunk)]
        elif op == "insert":
            data[at:at] = chunk
        elif op == "replace":
            data[at : at + len(chunk)] = chunk
        else:
            del data[at:]
    return bytes(data)


@pytest.mark.parametrize("suffix", list(GOOD))
def test_a_reader_never_crashes_and_accounts_for_every_record(
    suffix: str, store_path: Path, tmp_path: Path
) -> None:
    options = IngestOptions()
    closed = closed_avl_reasons(options)
    path = tmp_path / f"input{suffix}"
    seen = {"refused": 0, "read": 0}
    with Store.open(store_path) as store:

        @settings(
            max_examples=12,
            deadline=None,
            derandomize=True,
            suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
        )
        @given(st.one_of(st.binary(max_size=600), mutated(GOOD[suffix])))
        @example(GOOD[suffix])  # the good file itself is read
        def check(data: bytes) -> None:
            path.write_bytes(data)
            try:
                counts = ingest_fixture(store, path, "avl")
            except InputError:
                seen["refused"] += 1
                return
            seen["read"] += 1
            assert counts.n_read == counts.n_accepted + counts.n_duplicate + counts.n_quarantined
            reasons = store.query("SELECT DISTINCT reason FROM quarantine")["reason"].to_list()
            assert set(reasons) <= closed, set(reasons) - closed

        check()
    assert seen["read"] >= 1 and seen["refused"] + seen["read"] >= 13
