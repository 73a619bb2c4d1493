"""Evidence that survives: raw day digests re-checked (a changed stored value names its day),
the evidence package of a case, retention and legal holds."""

from __future__ import annotations

import hashlib
import json
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import polars as pl
import pytest

from cases.db import CaseDB
from cases.evidence import (
    build_evidence_package,
    deletable_days,
    evidence_matches,
    held_days,
    period_raw_digest,
    record_day_digests,
    registered_plate,
    retention_cutoff,
    verify_day_digests,
)
from cases.register import open_case
from cases.roles import Account
from cases.workflow import Workflow
from core.store import Store
from tests.cases.test_workflow import PROFILE, auto

T0 = datetime(2026, 3, 2, 11, 0, tzinfo=UTC)  # 08:00 in Bento Gonçalves (UTC-3)


def fill_store(path: Path) -> None:
    """Two service days of pings of V12 (the second day crosses UTC midnight, still local
    2 Mar until 03:00 UTC), taps during them, a register and one suggestion."""
    pings = pl.DataFrame(
        {
            "vehicle_id": ["V12"] * 6,
            "event_at": [T0 + timedelta(minutes=m) for m in (0, 1, 2, 3)]
            + [datetime(2026, 3, 3, 2, 30, tzinfo=UTC), datetime(2026, 3, 3, 11, 0, tzinfo=UTC)],
            "lat": [-29.17, -29.171, -29.172, -29.173, -29.18, -29.19],
            "lon": [-51.52] * 6,
            "speed_m_s": [5.0, 6.0, 0.0, 4.0, 3.0, 2.0],
            "operator_id": ["O1"] * 6,
        }
    )
    taps = pl.DataFrame(
        {
            "transaction_id": ["t1", "t2", "t3"],
            "event_at": [
                T0 + timedelta(minutes=1),
                T0 + timedelta(minutes=2),
                T0 + timedelta(hours=5),
            ],
            "vehicle_id": ["V12"] * 3,
            "route_id": ["R1"] * 3,
            "card_hash": ["a" * 64, "b" * 64, "c" * 64],
            "fare_class": ["full"] * 3,
            "amount": [4.5, 4.5, 4.5],
            "operator_id": ["O1"] * 3,
        }
    )
    with Store.open(path) as store:
        store.append("vehicle_locations", pings, fill={"source": "test.csv", "ingested_at": T0})
        store.append("fare_transactions", taps, fill={"source": "test.csv", "ingested_at": T0})
        store.append(
            "vehicles",
            pl.DataFrame(
                {
                    "vehicle_id": ["V12"],
                    "plate": ["IAB1C23"],
                    "operator_id": ["O1"],
                    "service_area": ["urban"],
                    "service_class": ["conventional"],
                    "vehicle_type": ["convencional"],
                    "manufacture_year": [2020],
                }
            ),
            fill={"source": "frota.csv", "ingested_at": T0},
        )
        ids = store.query("SELECT min(ping_id), max(ping_id) FROM vehicle_locations").row(0)
        store.append(
            "suggested_infractions",
            pl.DataFrame(
                {
                    "infraction_key": ["B-IV|O1|2026-03-02|V12"],
                    "group": ["B"],
                    "item": ["IV"],
                    "description": ["texto"],
                    "operator_id": ["O1"],
                    "route_id": ["R1"],
                    "vehicle_id": ["V12"],
                    "occurred_on": [date(2026, 3, 2)],
                    "occurred_at": [T0],
                    "fact": ["viagem suprimida"],
                    "evidence": ["pings"],
                    "trip_ids": [None],
                    "ping_ids": [f"{ids[0]}-{ids[0] + 3}"],
                    "is_repeat": [False],
                    "urm": [1.0],
                    "currency_unit": ["URM"],
                    "status": ["sugestão"],
                    "source": ["BG Anexo I, grupo B, inciso IV"],
                    "computed_at": [T0],
                }
            ),
            fill={"pontual_version": "0.1.0", "profile_id": PROFILE.id},
        )


@pytest.fixture
def filled(store_path: Path) -> Path:
    fill_store(store_path)
    return store_path


def test_verify_names_the_day_whose_raw_ping_changed(filled: Path) -> None:
    with Store.open(filled) as store:
        got = record_day_digests(store, PROFILE)
        # local days: 4 pings + the 02:30 UTC one on 2 Mar, 1 ping on 3 Mar; taps on 2 Mar
        assert got.select("service_date", "table_name", "n_rows").rows() == [
            (date(2026, 3, 2), "fare_transactions", 3),
            (date(2026, 3, 2), "vehicle_locations", 5),
            (date(2026, 3, 3), "vehicle_locations", 1),
        ]
        assert record_day_digests(store, PROFILE).height == 0  # recorded once
        assert verify_day_digests(store)["is_ok"].all()
        # edit one stored value: the latitude of one ping of 3 Mar
        store.con.execute(
            "UPDATE vehicle_locations SET lat = lat + 0.00001 WHERE event_at = ?",
            [datetime(2026, 3, 3, 11, 0, tzinfo=UTC)],
        )
        before = period_raw_digest(store, date(2026, 3, 1), date(2026, 3, 31))
        report = verify_day_digests(store)
        # the digest of the period moves once the day is re-digested (a new recording)
        store.con.execute("DELETE FROM raw_day_digests WHERE service_date = '2026-03-03'")
        record_day_digests(store, PROFILE)
        assert period_raw_digest(store, date(2026, 3, 1), date(2026, 3, 31)) != before
        assert period_raw_digest(store, date(2026, 3, 1), date(2026, 3, 2)) == period_raw_digest(
            store, date(2026, 3, 2), date(2026, 3, 2)
        )
    bad = report.filter(~pl.col("is_ok"))
    assert bad.select("service_date", "table_name", "n_rows", "n_rows_now").rows() == [
        (date(2026, 3, 3), "vehicle_locations", 1, 1)
    ]


def test_digest_is_independent_of_columns_added_later(filled: Path) -> None:
    with Store.open(filled) as store:
        record_day_digests(store, PROFILE)
        store.con.execute("ALTER TABLE fare_transactions ADD COLUMN later_col VARCHAR")
        store.con.execute("UPDATE fare_transactions SET later_col = 'x'")
        assert verify_day_digests(store)["is_ok"].all()


def test_evidence_package_holds_the_pings_and_taps_behind_the_fact(
    filled: Path, case_db: CaseDB, people: dict[str, Account]
) -> None:
    with Store.open(filled) as store:
        record_day_digests(store, PROFILE)
        text, digest = build_evidence_package(store, "B-IV|O1|2026-03-02|V12", PROFILE)
        plate = registered_plate(store, "V12")
    assert digest == hashlib.sha256(text.encode()).hexdigest()
    package = json.loads(text)
    assert [p["lat"] for p in package["pings"]] == [-29.17, -29.171, -29.172, -29.173]
    assert [t["transaction_id"] for t in package["taps"]] == ["t1", "t2"]  # t3 is hours later
    assert package["profile"] == {"id": "bento-goncalves-2021", "version": PROFILE.version}
    assert {d["table_name"] for d in package["raw_day_digests"]} == {
        "fare_transactions",
        "vehicle_locations",
    }
    assert plate == "IAB1C23"
    # stored with the case at lavratura
    wf = Workflow(case_db, PROFILE)
    sug = {
        "infraction_key": "B-IV|O1|2026-03-02|V12",
        "group": "B",
        "item": "IV",
        "description": "texto",
        "operator_id": "O1",
        "vehicle_id": "V12",
        "occurred_on": date(2026, 3, 2),
        "fact": "viagem suprimida",
        "source": "BG",
    }
    cid = open_case(case_db, sug, people["fiscal"])
    wf.lavrar(
        cid,
        people["fiscal"],
        auto(vehicle_plate=plate),
        on=date(2026, 3, 5),
        evidence=(text, digest),
    )
    from cases.register import read_evidence

    stored, stored_digest = read_evidence(case_db, people["planejamento"], cid)
    assert stored_digest == digest
    assert evidence_matches(stored, stored_digest)
    assert not evidence_matches(stored.replace("-29.171", "-29.170"), stored_digest)


def test_retention_and_legal_hold(case_db: CaseDB, people: dict[str, Account]) -> None:
    assert retention_cutoff(date(2026, 3, 2), 9) == date(2017, 3, 2)
    assert retention_cutoff(date(2028, 2, 29), 9) == date(2019, 2, 28)
    days = [date(2016, 5, 1), date(2016, 5, 2), date(2020, 1, 1)]
    wf = Workflow(case_db, PROFILE)
    sug = {
        "infraction_key": "k",
        "group": "B",
        "item": "IV",
        "description": "t",
        "operator_id": "O1",
        "occurred_on": date(2016, 5, 2),
        "fact": "f",
        "source": "BG",
    }
    cid = open_case(case_db, sug, people["fiscal"])
    assert deletable_days(days, date(2026, 3, 2), 9, held_days(case_db)) == days[:2]
    wf.hold(cid, people["planejamento"], on=True, reason="processo judicial")
    assert held_days(case_db) == {date(2016, 5, 2)}
    assert deletable_days(days, date(2026, 3, 2), 9, held_days(case_db)) == [date(2016, 5, 1)]


def _row(name: str, **values: object) -> pl.DataFrame:
    """One row of a store table: the given values, a neutral value in every other required column."""
    from core.schema import table

    neutral = {
        pl.String: "x",
        pl.Int32: 0,
        pl.Int64: 0,
        pl.Float64: 0.0,
        pl.Boolean: False,
        pl.Date: date(2026, 3, 2),
    }
    row: dict[str, object] = {}
    for col in table(name).columns:
        if col.name in values:
            row[col.name] = values[col.name]
        elif not col.nullable and col.name != table(name).identity:
            row[col.name] = T0 if isinstance(col.dtype, pl.Datetime) else neutral[type(col.dtype)]
    return pl.DataFrame([row], schema={k: table(name).column(k).dtype for k in row})


def test_evidence_package_of_a_trip_fact(filled: Path) -> None:
    """A suppressed trip has no run: its outcome row is in the package; a run trip brings its
    run and its stop visits."""
    day = date(2026, 3, 2)
    with Store.open(filled) as store:
        store.append(
            "trip_outcomes",
            _row("trip_outcomes", service_date=day, trip_id="T1", outcome="suppressed"),
        )
        store.append(
            "trip_outcomes", _row("trip_outcomes", service_date=day, trip_id="T2", outcome="late")
        )
        store.append(
            "trips_performed",
            _row("trips_performed", service_date=day, vehicle_id="V12", run_index=1, trip_id="T2"),
        )
        for seq in (1, 2):
            store.append(
                "stop_visits",
                _row(
                    "stop_visits",
                    service_date=day,
                    vehicle_id="V12",
                    run_index=1,
                    trip_id="T2",
                    stop_sequence=seq,
                    stop_id=f"S{seq}",
                ),
            )
        store.con.execute("UPDATE suggested_infractions SET trip_ids = 'T1,T2', ping_ids = NULL")
        text, _ = build_evidence_package(store, "B-IV|O1|2026-03-02|V12", PROFILE)
    package = json.loads(text)
    assert [(o["trip_id"], o["outcome"]) for o in package["trip_outcomes"]] == [
        ("T1", "suppressed"),
        ("T2", "late"),
    ]
    assert [t["trip_id"] for t in package["trips"]] == ["T2"]
    assert [v["stop_id"] for v in package["stop_visits"]] == ["S1", "S2"]
    assert package["pings"] == [] and package["taps"] == []


def test_period_day_digests_are_the_day_digests_of_the_data_now(filled: Path) -> None:
    from cases.evidence import compute_day_digest, compute_period_day_digests

    tz = PROFILE.general.timezone.value
    with Store.open(filled) as store:
        record_day_digests(store, PROFILE)
        store.con.execute(
            "UPDATE vehicle_locations SET lat = lat + 0.00001 WHERE event_at = ?",
            [datetime(2026, 3, 3, 11, 0, tzinfo=UTC)],
        )
        now = compute_period_day_digests(store, date(2026, 3, 1), date(2026, 3, 31), tz)
        one_by_one = [
            compute_day_digest(store, t, d, tz)[:2]
            for t, d in now.select("table_name", "service_date").iter_rows()
        ]
    assert now.select("table_name", "service_date", "n_rows").rows() == [
        ("fare_transactions", date(2026, 3, 2), 3),
        ("vehicle_locations", date(2026, 3, 2), 5),
        ("vehicle_locations", date(2026, 3, 3), 1),
    ]
    assert list(zip(now["n_rows"], now["sha256"], strict=True)) == one_by_one
    # the edited day no longer matches the digest recorded before the edit
    assert now["is_as_recorded"].to_list() == [True, True, False]
    assert now["is_recorded"].all()


def test_evidence_package_of_a_fare_fact_holds_its_taps(filled: Path) -> None:
    # t2 was charged 6.00 where the authorised full fare is 5.20 (LXVI); t1 and t3 paid 4.50
    with Store.open(filled) as store:
        store.con.execute("UPDATE fare_transactions SET amount = 6.0 WHERE transaction_id = 't2'")
        store.append(
            "suggested_infractions",
            pl.DataFrame(
                {
                    "infraction_key": ["LXVI|O1|2026-03-02|R1"],
                    "group": ["E"],
                    "item": ["LXVI"],
                    "description": ["Cobrar tarifa superior a autorizada."],
                    "operator_id": ["O1"],
                    "route_id": ["R1"],
                    "occurred_on": [date(2026, 3, 2)],
                    "fact": ["linha R1: 1 cobrança(s) acima da tarifa autorizada"],
                    "evidence": ["t2"],
                    "is_repeat": [False],
                    "urm": [2.0],
                    "currency_unit": ["URM"],
                    "status": ["sugestão"],
                    "source": ["BG Anexo I, grupo E, inciso LXVI"],
                    "computed_at": [T0],
                }
            ),
            fill={"pontual_version": "0.1.0", "profile_id": PROFILE.id},
        )
        text, digest = build_evidence_package(store, "LXVI|O1|2026-03-02|R1", PROFILE)
    package = json.loads(text)
    assert [(t["transaction_id"], t["amount"]) for t in package["taps"]] == [("t2", 6.0)]
    assert package["pings"] == [] and evidence_matches(text, digest)


def test_day_digest_is_duckdb_text_v1_as_first_defined(filled: Path) -> None:
    # The digest is streamed to hashlib since session 28; it must stay the very SHA-256 the
    # first definition computed inside DuckDB (digests recorded since then are compared to it).
    # New digests are arrow-binary-v1 since session 31: duckdb-text-v1 stays, for the days
    # recorded by it.
    from cases.digests import TEXT_METHOD
    from cases.evidence import compute_day_digest
    from core.periods import local_bounds, range_period
    from core.schema import table

    assert TEXT_METHOD == "duckdb-text-v1"
    tz = PROFILE.general.timezone.value
    with Store.open(filled) as store:
        for name, day in [
            ("vehicle_locations", date(2026, 3, 2)),
            ("vehicle_locations", date(2026, 3, 3)),
            ("fare_transactions", date(2026, 3, 2)),
            ("fare_transactions", date(2026, 3, 9)),  # no rows: the digest of ''
        ]:
            cols = table(name).column_names
            cells = ", ".join(f'coalesce(CAST("{c}" AS VARCHAR), chr(0))' for c in cols)
            order = ", ".join(f'"{c}"' for c in cols)
            first = (
                "SELECT count(*), sha256(coalesce(string_agg(concat_ws(chr(31), "
                f"{cells}), chr(10) ORDER BY {order}), '')) FROM \"{name}\" "
                "WHERE event_at >= ? AND event_at < ?"
            )
            n, digest = store.query(first, list(local_bounds(range_period(day, day), tz))).row(0)
            got = compute_day_digest(store, name, day, tz, method=TEXT_METHOD)
            assert got[:2] == (n, digest)
