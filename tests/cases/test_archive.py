"""Raw days archived to the lake (`cases.archive`): moved only when the lake copy gives the
recorded digest, verified there afterwards (a changed value or a missing partition names the
day), never archived twice, pruned only past the retention and without a legal hold, and still
covered by the reports' input hash."""

from __future__ import annotations

import shutil
from datetime import date
from pathlib import Path

import polars as pl
import pytest

from cases.archive import (
    ARCHIVED,
    DIFFERS,
    LEGAL_HOLD,
    RETENTION,
    archive_days,
    find_absent_held_days,
    plan_prune,
    prune_days,
    read_held_cases,
    read_lake_raw_days,
)
from cases.db import CaseDB
from cases.evidence import (
    BACK_IN_STORE,
    CHANGED,
    MISSING_IN_LAKE,
    UNREADABLE,
    compute_day_digest,
    compute_lake_day_digest,
    compute_period_day_digests,
    record_day_digests,
    verify_day_digests,
)
from cases.register import open_case
from cases.roles import Account
from cases.workflow import Workflow
from core.lake import raw_day_files
from core.store import Store
from dashboard.reports.reproducibility import build_inputs_table, compute_input_hash
from tests.cases.test_evidence import fill_store
from tests.cases.test_workflow import PROFILE

TZ = PROFILE.general.timezone.value
MAR2, MAR3, MAR4 = date(2026, 3, 2), date(2026, 3, 3), date(2026, 3, 4)


@pytest.fixture
def filled(store_path: Path) -> Path:
    """Pings on 2 Mar (5) and 3 Mar (1), taps on 2 Mar (3), digested at ingestion."""
    fill_store(store_path)
    with Store.open(store_path) as store:
        record_day_digests(store, PROFILE)
    return store_path


def _counts(store: Store) -> tuple[int, int]:
    return store.count("vehicle_locations"), store.count("fare_transactions")


def test_an_archived_day_leaves_the_store_and_verifies_against_the_lake(
    filled: Path, tmp_path: Path
) -> None:
    lake = tmp_path / "lake"
    with Store.open(filled) as store:
        recorded = store.query(
            "SELECT table_name, n_rows, sha256 FROM raw_day_digests WHERE service_date = ? "
            "ORDER BY table_name",
            [MAR2],
        )
        # the digest does not depend on where the rows are: the store's and the lake's agree
        got = archive_days(store, lake, PROFILE, MAR3)
        assert got.rows() == [
            (MAR2, "fare_transactions", 3, ARCHIVED),
            (MAR2, "vehicle_locations", 5, ARCHIVED),
        ]
        for name, n_rows, sha256 in recorded.iter_rows():
            assert compute_lake_day_digest(lake, name, MAR2, TZ) == (n_rows, sha256)
        assert _counts(store) == (1, 0)  # only 3 Mar's ping is left in the store
        archived = store.query(
            "SELECT table_name, n_rows, sha256, lake_path, pruned_at FROM archived_days "
            "ORDER BY table_name"
        )
        assert archived.drop("pruned_at").rows() == [
            (name, n, h, str(lake.resolve())) for name, n, h in recorded.iter_rows()
        ]
        assert archived["pruned_at"].is_null().all()
        report = verify_day_digests(store)
    assert report.select("service_date", "table_name", "location", "is_ok").rows() == [
        (MAR2, "fare_transactions", "lake", True),
        (MAR2, "vehicle_locations", "lake", True),
        (MAR3, "vehicle_locations", "store", True),
    ]
    assert report["n_rows_now"].to_list() == [3, 5, 1]
    # the partitions are where `pontual lake export` files them: day, then operator
    assert [
        p.relative_to(lake).as_posix() for p in raw_day_files(lake, "vehicle_locations", MAR2)
    ] == ["vehicle_locations/service_date=2026-03-02/operator_id=O1/part-0.parquet"]


def test_an_archive_rerun_is_a_no_op(filled: Path, tmp_path: Path) -> None:
    lake = tmp_path / "lake"
    with Store.open(filled) as store:
        archive_days(store, lake, PROFILE, MAR3)
        files = {p: (p.stat().st_mtime_ns, p.read_bytes()) for p in lake.rglob("*.parquet")}
        again = archive_days(store, lake, PROFILE, MAR3)
        assert again.height == 0
        assert {p: (p.stat().st_mtime_ns, p.read_bytes()) for p in lake.rglob("*.parquet")} == files
        assert store.count("archived_days") == 2 and _counts(store) == (1, 0)
        # a later date archives the next day only
        assert archive_days(store, lake, PROFILE, MAR4).rows() == [
            (MAR3, "vehicle_locations", 1, ARCHIVED)
        ]
        assert _counts(store) == (0, 0) and verify_day_digests(store)["is_ok"].all()


def test_an_edited_value_in_an_archived_parquet_names_the_day(filled: Path, tmp_path: Path) -> None:
    lake = tmp_path / "lake"
    with Store.open(filled) as store:
        archive_days(store, lake, PROFILE, MAR4)
        (ping_file,) = raw_day_files(lake, "vehicle_locations", MAR3)
        rows = pl.read_parquet(ping_file)
        # one latitude moved by a millionth of a degree (10 cm), the file rewritten whole
        rows.with_columns(pl.col("lat") + 0.000001).write_parquet(ping_file, compression="zstd")
        report = verify_day_digests(store)
    bad = report.filter(~pl.col("is_ok"))
    assert bad.select("service_date", "table_name", "n_rows", "n_rows_now", "problem").rows() == [
        (MAR3, "vehicle_locations", 1, 1, CHANGED)
    ]


def test_a_flipped_byte_of_an_archived_file_names_the_day(filled: Path, tmp_path: Path) -> None:
    lake = tmp_path / "lake"
    with Store.open(filled) as store:
        archive_days(store, lake, PROFILE, MAR3)
        (tap_file,) = raw_day_files(lake, "fare_transactions", MAR2)
        data = bytearray(tap_file.read_bytes())
        data[len(data) // 3] ^= 0x01  # inside the compressed column chunks
        tap_file.write_bytes(bytes(data))
        report = verify_day_digests(store)
    bad = report.filter(~pl.col("is_ok"))
    assert bad.select("service_date", "table_name").rows() == [(MAR2, "fare_transactions")]
    assert bad["problem"].to_list()[0] in (CHANGED, UNREADABLE)


def test_a_missing_partition_or_rows_back_in_the_store_name_the_day(
    filled: Path, tmp_path: Path
) -> None:
    lake = tmp_path / "lake"
    with Store.open(filled) as store:
        archive_days(store, lake, PROFILE, MAR4)
        shutil.rmtree(lake / "fare_transactions" / "service_date=2026-03-02")
        # a late ping of 3 Mar ingested after the day was archived
        store.con.execute(
            "INSERT INTO vehicle_locations SELECT * REPLACE (9999 AS ping_id) FROM "
            "read_parquet(?, hive_partitioning = false)",
            [str(raw_day_files(lake, "vehicle_locations", MAR3)[0])],
        )
        report = verify_day_digests(store)
        # a full lake export leaves the archived day's partition as archived (1 ping, not 2)
        from core.lake import export_lake

        export_lake(store, lake, TZ)
        assert compute_lake_day_digest(lake, "vehicle_locations", MAR3, TZ) == tuple(
            store.query(
                "SELECT n_rows, sha256 FROM raw_day_digests WHERE service_date = ? "
                "AND table_name = 'vehicle_locations'",
                [MAR3],
            ).row(0)
        )
    assert report.filter(~pl.col("is_ok")).select(
        "service_date", "table_name", "problem"
    ).rows() == [
        (MAR2, "fare_transactions", MISSING_IN_LAKE),
        (MAR3, "vehicle_locations", BACK_IN_STORE),
    ]


def test_a_day_changed_since_its_digest_is_not_archived(filled: Path, tmp_path: Path) -> None:
    with Store.open(filled) as store:
        store.con.execute("UPDATE fare_transactions SET amount = 5.0 WHERE transaction_id = 't1'")
        got = archive_days(store, tmp_path / "lake", PROFILE, MAR3)
        # the day stays in the store whole: neither its taps nor its pings left
        assert got["outcome"].to_list() == [DIFFERS, DIFFERS]
        assert _counts(store) == (6, 3) and store.count("archived_days") == 0


def test_a_lake_alone_verifies_against_its_exported_digests(filled: Path, tmp_path: Path) -> None:
    from core.lake import export_lake, open_lake

    lake = tmp_path / "lake"
    with Store.open(filled) as store:
        archive_days(store, lake, PROFILE, MAR3)
        export_lake(store, lake, TZ)  # 3 Mar's ping, the digests and archived_days beside
    with open_lake(lake) as alone:
        report = verify_day_digests(alone, lake, lake_only=True)
        assert alone.count("raw_day_digests") == 3 and alone.count("archived_days") == 2
    assert report.select("service_date", "table_name", "location", "is_ok").rows() == [
        (MAR2, "fare_transactions", "lake", True),
        (MAR2, "vehicle_locations", "lake", True),
        (MAR3, "vehicle_locations", "lake", True),
    ]


def test_the_input_hash_of_a_report_is_the_same_after_archival(
    filled: Path, tmp_path: Path
) -> None:
    def input_hash(store: Store) -> str:
        digests = compute_period_day_digests(store, date(2026, 3, 1), date(2026, 3, 31), TZ)
        return compute_input_hash(build_inputs_table({}, {}, PROFILE, digests))

    with Store.open(filled) as store:
        before = input_hash(store)
        archive_days(store, tmp_path / "lake", PROFILE, MAR4)
        assert _counts(store) == (0, 0)
        assert input_hash(store) == before
        # and it still moves when a raw ping changes: a late ping of an archived day
        store.con.execute(
            "INSERT INTO vehicle_locations SELECT * REPLACE (9999 AS ping_id) FROM "
            "read_parquet(?, hive_partitioning = false)",
            [str(raw_day_files(tmp_path / "lake", "vehicle_locations", MAR3)[0])],
        )
        assert input_hash(store) != before


def _hold(case_db: CaseDB, people: dict[str, Account], day: date) -> int:
    sug = {
        "infraction_key": f"k-{day}",
        "group": "B",
        "item": "IV",
        "description": "t",
        "operator_id": "O1",
        "occurred_on": day,
        "fact": "f",
        "source": "BG",
    }
    cid = open_case(case_db, sug, people["fiscal"])
    Workflow(case_db, PROFILE).hold(cid, people["planejamento"], on=True, reason="processo")
    return cid


def test_prune_refuses_held_days_and_days_within_the_retention(
    case_db: CaseDB, people: dict[str, Account]
) -> None:
    days = [date(2016, 5, 1), date(2016, 5, 2), date(2020, 1, 1), date(2025, 1, 1)]
    cid = _hold(case_db, people, date(2016, 5, 2))
    plan = plan_prune(days, date(2024, 1, 1), date(2026, 3, 2), 9, read_held_cases(case_db))
    # 1 Jan 2025 is after --before: not even listed
    assert plan.rows() == [
        (date(2016, 5, 1), True, None, [], None),
        (date(2016, 5, 2), False, LEGAL_HOLD, [cid], None),
        (date(2020, 1, 1), False, RETENTION, [], date(2029, 1, 1)),
    ]


def test_prune_deletes_only_deletable_days_and_verify_keeps_their_digest(
    filled: Path, tmp_path: Path, case_db: CaseDB, people: dict[str, Account]
) -> None:
    lake = tmp_path / "lake"
    cid = _hold(case_db, people, MAR2)
    held = read_held_cases(case_db)
    with Store.open(filled) as store:
        archive_days(store, lake, PROFILE, MAR4)
        assert read_lake_raw_days(lake) == [MAR2, MAR3]
        # ten years later, both days are past a 9-year retention; 2 Mar is held by a case
        plan = plan_prune(read_lake_raw_days(lake), MAR4, date(2036, 3, 5), 9, held)
        assert plan.select("service_date", "is_deletable", "reason", "case_ids").rows() == [
            (MAR2, False, LEGAL_HOLD, [cid]),
            (MAR3, True, None, []),
        ]
        assert prune_days(store, lake, plan) == [MAR3]
        assert read_lake_raw_days(lake) == [MAR2]
        report = verify_day_digests(store)
        assert report["is_ok"].all()
        assert report.filter(pl.col("service_date") == MAR3)["location"].to_list() == ["pruned"]
        # the pruned day's digest still stands in the reports' hash
        kept = compute_period_day_digests(store, MAR3, MAR3, TZ)
        assert kept.select("n_rows", "is_as_recorded").rows() == [(1, True)]
        assert find_absent_held_days(store, held, [lake], TZ) == {}
        # the held day's partitions lost by accident: the hold names the missing evidence
        shutil.rmtree(lake / "vehicle_locations" / "service_date=2026-03-02")
        shutil.rmtree(lake / "fare_transactions" / "service_date=2026-03-02")
        assert find_absent_held_days(store, held, [lake], TZ) == {MAR2: [cid]}


def test_digests_of_the_lake_and_the_store_are_one_function(filled: Path, tmp_path: Path) -> None:
    """Same rows, same canonical text, same SHA-256: a plain export of a day (the store keeps
    it) digests in the lake as in the store, timestamps and floats included."""
    from core.lake import export_lake

    lake = tmp_path / "lake"
    with Store.open(filled) as store:
        export_lake(store, lake, TZ, names=["vehicle_locations", "fare_transactions"])
        for name, day in (("vehicle_locations", MAR2), ("vehicle_locations", MAR3)):
            n, digest, _ = compute_day_digest(store, name, day, TZ)
            assert compute_lake_day_digest(lake, name, day, TZ) == (n, digest)
    assert compute_lake_day_digest(lake, "fare_transactions", MAR3, TZ) is None


def test_no_evidence_package_is_built_on_an_archived_day(filled: Path, tmp_path: Path) -> None:
    """The package holds the fact's raw pings and taps; once its day left the store it would
    be built without them, so lavratura on an archived day is refused."""
    from cases.errors import CaseError
    from cases.evidence import build_evidence_package

    with Store.open(filled) as store:
        text, _ = build_evidence_package(store, "B-IV|O1|2026-03-02|V12", PROFILE)
        assert '"pings":[{' in text
        archive_days(store, tmp_path / "lake", PROFILE, MAR3)
        with pytest.raises(CaseError, match="2026-03-02 were archived to the lake"):
            build_evidence_package(store, "B-IV|O1|2026-03-02|V12", PROFILE)
