"""Writing: upserts of the register, whole-chunk transactions and idempotent re-runs."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from polars.testing import assert_frame_equal

from core.schema import table
from core.store import Store, compute_new_keys, compute_repeated
from ingest.writing import _read_stored_content, write_fare_records
from sample_data.options import SimulationOptions
from sample_data.simulate import simulate
from tests.ingest.conftest import KEY, ingest_fixture


def test_vehicle_register_upserts_by_vehicle_id(store_path: Path) -> None:
    with Store.open(store_path) as store:
        first = ingest_fixture(store, "vehicles.csv", "vehicles")
        assert (first.n_accepted, first.n_quarantined) == (2, 2)
        changed = ingest_fixture(store, "vehicles_changed.csv", "vehicles")
        assert (changed.n_accepted, changed.n_duplicate) == (1, 1)
        rows = store.query(
            "SELECT vehicle_id, last_inspection_on::VARCHAR, is_reserve FROM vehicles ORDER BY 1"
        ).rows()
        assert rows == [("101", "2026-03-01", False), ("102", "2025-11-20", True)]


def test_crash_mid_file_keeps_whole_chunks_and_a_rerun_completes_it(
    store_path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pings = pl.DataFrame(
        {
            "vehicle_id": ["101", "102"] * 5,
            "event_at": [f"2026-03-02T13:00:0{i}Z" for i in range(10)],
            "lat": [-29.17] * 10,
            "lon": [-51.52] * 10,
        }
    ).with_columns(pl.when(pl.int_range(pl.len()) == 1).then(95.0).otherwise("lat").alias("lat"))
    path = tmp_path / "pings.parquet"
    pings.write_parquet(path)
    real_append = Store.append
    calls = {"vehicle_locations": 0}

    def failing_append(self: Store, name: str, df: pl.DataFrame, **kw: object):
        if name == "vehicle_locations":
            calls[name] += 1
            if calls[name] == 2:
                raise OSError("disk full")
        return real_append(self, name, df, **kw)  # type: ignore[arg-type]

    with Store.open(store_path) as store:
        monkeypatch.setattr(Store, "append", failing_append)
        with pytest.raises(OSError):
            ingest_fixture(store, str(path), "avl", chunk_rows=4)
        monkeypatch.setattr(Store, "append", real_append)
        # The first chunk (4 records, one out of range) committed whole; the second not at all.
        assert store.count("vehicle_locations") == 3
        assert store.count("quarantine") == 1
        assert store.count("ingest_runs") == 1
        counts = ingest_fixture(store, str(path), "avl", chunk_rows=4)
        assert (counts.n_read, counts.n_accepted, counts.n_duplicate, counts.n_quarantined) == (
            10,
            6,
            3,
            1,
        )
        assert store.count("vehicle_locations") == 9
        assert store.count("quarantine") == 1


@pytest.fixture(scope="module")
def two_weeks(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """Two simulated Mondays a week apart: the validators' ids (TX000000000...) restart."""
    out = tmp_path_factory.mktemp("weeks")
    for name, start in (("w1", date(2026, 3, 2)), ("w2", date(2026, 3, 9))):
        simulate(SimulationOptions(days=1, seed=7, start=start), out / name)
    return out / "w1", out / "w2"


def test_a_second_week_reusing_tap_ids_loses_no_tap(
    two_weeks: tuple[Path, Path], store_path: Path
) -> None:
    w1, w2 = two_weeks
    n1, n2 = (pl.read_csv(w / "fares.csv").height for w in (w1, w2))
    ids1, ids2 = (set(pl.read_csv(w / "fares.csv")["transaction_id"]) for w in (w1, w2))
    assert len(ids1 & ids2) > 10_000  # the ids really are reused
    with Store.open(store_path) as store:
        ingest_fixture(store, w1 / "vehicles.csv", "vehicles")
        first = ingest_fixture(store, w1 / "fares.csv", "fares")
        second = ingest_fixture(store, w2 / "fares.csv", "fares")
        again = ingest_fixture(store, w1 / "fares.csv", "fares")
        n_stored = store.count("fare_transactions")
        n_quarantined = store.query(
            "SELECT count(*) FROM quarantine WHERE target_table = 'fare_transactions'"
        ).item()
        operators = store.query("SELECT DISTINCT operator_id FROM fare_transactions ORDER BY 1")
    # Every tap read is stored, quarantined or a duplicate; none vanishes.
    for counts, n in ((first, n1), (second, n2), (again, n1)):
        assert counts.n_read == n
        assert counts.n_accepted + counts.n_duplicate + counts.n_quarantined == n
    assert (second.n_accepted, second.n_duplicate) == (n2 - second.n_quarantined, 0)
    assert (again.n_accepted, again.n_duplicate) == (0, n1 - again.n_quarantined)
    assert n_stored + n_quarantined == n1 + n2
    assert n_stored == first.n_accepted + second.n_accepted
    # Operators come from the fleet register when the file has none (they scope the key).
    assert operators["operator_id"].to_list() == ["O1", "O2"]


def test_a_tap_key_stored_with_other_content_is_a_conflict_not_a_duplicate(
    store_path: Path,
) -> None:
    taps = pl.DataFrame(
        {
            "transaction_id": ["T1", "T2", "T2", "T3", "T3"],
            "event_at": ["2026-03-02T12:00:00Z"] * 5,
            "vehicle_id": ["101"] * 5,
            "card_id": ["111", "222", "222", "333", "999"],
            "fare_class": ["full"] * 5,
            "amount": ["4.5"] * 5,
            "operator_id": ["OP1"] * 5,
        }
    )
    with Store.open(store_path) as store:
        first = write_fare_records(store, taps.head(1), source="a", key=KEY)
        # T1 again with another card; T2 twice the same (a duplicate); T3 twice, differing.
        changed = taps.with_columns(
            pl.when(pl.col("transaction_id") == "T1")
            .then(pl.lit("112"))
            .otherwise("card_id")
            .alias("card_id")
        )
        second = write_fare_records(store, changed, source="b", key=KEY)
        same_again = write_fare_records(store, taps.head(1), source="c", key=KEY)
        q = store.query("SELECT source, record_key, field, reason FROM quarantine ORDER BY 1, 2")
        stored = store.query("SELECT transaction_id FROM fare_transactions ORDER BY 1")
    assert (first.n_accepted, first.n_duplicate, first.n_quarantined) == (1, 0, 0)
    assert (second.n_accepted, second.n_duplicate, second.n_quarantined) == (2, 1, 2)
    assert (same_again.n_accepted, same_again.n_duplicate) == (0, 1)
    reason = "key already stored with different content (conflict): " + (
        "operator_id, transaction_id, event_at"
    )
    assert q.rows() == [
        ("b", "1", "transaction_id", reason),
        ("b", "5", "transaction_id", reason),
    ]
    assert stored["transaction_id"].to_list() == ["T1", "T2", "T3"]


def test_a_batch_of_new_days_finds_its_own_conflicts_without_reading_stored_taps(
    store_path: Path,
) -> None:
    # Taps are stored on 2 March; a batch of 3 March has nothing stored in its time range,
    # so the stored content is not read (a count says so), and its own repeated key with
    # other content is still a conflict, its repeat with the same content a duplicate.
    def taps(day: str, ids: list[str], cards: list[str]) -> pl.DataFrame:
        n = len(cards)
        return pl.DataFrame(
            {
                "transaction_id": ids,
                "event_at": [f"2026-03-0{day}T12:00:00Z"] * n,
                "vehicle_id": ["101"] * n,
                "card_id": cards,
                "fare_class": ["full"] * n,
                "amount": ["4.5"] * n,
                "operator_id": ["OP1"] * n,
            }
        )

    with Store.open(store_path) as store:
        write_fare_records(store, taps("2", ["T1", "T2"], ["111", "222"]), source="a", key=KEY)
        decl = table("fare_transactions")
        keys = pl.DataFrame(
            {
                "_pos": pl.Series([0], dtype=pl.UInt32),
                "operator_id": ["OP1"],
                "transaction_id": ["T1"],
                "event_at": [datetime(2026, 3, 3, 12, tzinfo=UTC)],
            }
        )
        none = _read_stored_content(store, decl, keys, ["card_hash", "amount"])
        # the same key on the stored day: read, with the stored content
        found = _read_stored_content(
            store,
            decl,
            keys.with_columns(pl.lit(datetime(2026, 3, 2, 12, tzinfo=UTC)).alias("event_at")),
            ["card_hash", "amount"],
        )
        counts = write_fare_records(
            store,
            taps("3", ["T1", "T1", "T2", "T2"], ["111", "112", "222", "222"]),
            source="b",
            key=KEY,
        )
        q = store.query("SELECT source, record_key, field FROM quarantine ORDER BY 1, 2")
    assert none.height == 0 and none.schema == found.schema
    assert found["_pos"].to_list() == [0] and found["amount_stored"].to_list() == [4.5]
    assert (counts.n_accepted, counts.n_duplicate, counts.n_quarantined) == (2, 1, 1)
    assert q.rows() == [("b", "2", "transaction_id")]


def test_repeated_ping_keys_keep_the_first_ping_of_each_key_in_order() -> None:
    # 30 000 pings of 40 vehicles over 500 instants: many keys repeat (with other content),
    # some vehicle ids are null (null equals null); the batch's own key de-duplication keeps
    # the first ping of each key, in the batch's order: what `unique(keep="first")` says
    n = 30_000
    rng = np.random.default_rng(3)
    vehicles = [None if v == 0 else str(v) for v in rng.integers(0, 40, n)]
    start = datetime(2025, 1, 1, 8, tzinfo=UTC)
    pings = pl.DataFrame(
        {
            "vehicle_id": vehicles,
            "event_at": [start + timedelta(seconds=int(s)) for s in rng.integers(0, 500, n)],
            "lat": rng.random(n),
        }
    )
    decl = table("vehicle_locations")
    kept = compute_new_keys(decl, pings, pl.DataFrame())
    expected = pings.unique(subset=["vehicle_id", "event_at"], keep="first", maintain_order=True)
    assert 15_000 < expected.height < n
    assert_frame_equal(kept, expected)
    repeated = compute_repeated(pl.Series([5, 1, 5, 2, 1, 9], dtype=pl.UInt64))
    assert repeated.to_list() == [True, True, True, False, True, False]
    assert not compute_repeated(pl.Series([3, 1, 2], dtype=pl.UInt64)).any()


def test_new_keys_against_stored_keys_keep_the_first_new_ping_of_each_key_in_order() -> None:
    # a batch whose keys repeat among themselves and with stored keys (a re-run's overlap,
    # the last minutes of the batch before), null vehicle ids among both: the rows kept are
    # the first of each key not stored, in the batch's order (null equals null)
    n = 20_000
    rng = np.random.default_rng(11)
    start = datetime(2025, 1, 1, 8, tzinfo=UTC)

    def keys(size: int) -> dict[str, list]:
        return {
            "vehicle_id": [None if v == 0 else str(v) for v in rng.integers(0, 30, size)],
            "event_at": [start + timedelta(seconds=int(s)) for s in rng.integers(0, 900, size)],
        }

    pings = pl.DataFrame({**keys(n), "lat": rng.random(n)})
    stored = pl.DataFrame(
        keys(4_000), schema={"vehicle_id": pl.String, "event_at": pings["event_at"].dtype}
    )
    decl = table("vehicle_locations")
    kept = compute_new_keys(decl, pings, stored)
    expected = pings.unique(subset=["vehicle_id", "event_at"], keep="first", maintain_order=True)
    expected = expected.join(
        stored, on=["vehicle_id", "event_at"], how="anti", nulls_equal=True, maintain_order="left"
    )
    assert 1_000 < expected.height < n - 5_000
    assert_frame_equal(kept, expected)
    # nothing stored in common: the batch itself comes back (no copy through a filter)
    clean = pings.unique(subset=["vehicle_id", "event_at"], keep="first", maintain_order=True)
    far = stored.with_columns(pl.col("event_at") + timedelta(days=1))
    assert compute_new_keys(decl, clean, far) is clean
