"""Several people write cases at once: two writers (threads, each with its own connections, as
two dashboard sessions or two CLI processes would have) on both databases."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from datetime import date
from pathlib import Path
from typing import Any

from cases.db import CaseDB
from cases.errors import CaseError
from cases.register import get_case, open_case
from cases.roles import Account
from cases.workflow import Workflow
from tests.cases.test_workflow import PROFILE, auto, suggestion

N_PER_WRITER = 8


def _run_together(*jobs: Any) -> list[BaseException | None]:
    barrier = threading.Barrier(len(jobs))
    errors: list[BaseException | None] = [None] * len(jobs)

    def wrap(i: int, job: Any) -> None:
        barrier.wait()
        try:
            job()
        except BaseException as exc:
            errors[i] = exc

    threads = [threading.Thread(target=wrap, args=(i, j)) for i, j in enumerate(jobs)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    return errors


def test_two_writers_on_different_cases_both_succeed(
    case_db_url: str, case_db: CaseDB, people: dict[str, Account]
) -> None:
    fiscal = people["fiscal"]
    ids = [
        open_case(case_db, suggestion(f"k{i}", vehicle_id=f"V{i}"), fiscal)
        for i in range(2 * N_PER_WRITER)
    ]
    halves = [ids[:N_PER_WRITER], ids[N_PER_WRITER:]]

    def writer(my_ids: list[int]) -> None:
        db = CaseDB.open(case_db_url)  # its own engine and connections
        wf = Workflow(db, PROFILE)
        try:
            for cid in my_ids:
                wf.lavrar(cid, fiscal, auto(number=f"AI-{cid}"), on=date(2026, 3, 5))
                wf.notificar(cid, fiscal, on=date(2026, 3, 10))
        finally:
            db.close()

    errors = _run_together(lambda: writer(halves[0]), lambda: writer(halves[1]))
    assert errors == [None, None]
    states = [get_case(case_db, fiscal, cid)["state"] for cid in ids]
    assert states == ["notificada"] * (2 * N_PER_WRITER)
    assert all(len(get_case(case_db, fiscal, cid)["events"]) == 2 for cid in ids)


def test_two_writers_on_the_same_case_one_wins(
    case_db_url: str, case_db: CaseDB, people: dict[str, Account]
) -> None:
    fiscal = people["fiscal"]
    cid = open_case(case_db, suggestion(), fiscal)

    def writer(number: str) -> None:
        db = CaseDB.open(case_db_url)
        try:
            Workflow(db, PROFILE).lavrar(cid, fiscal, auto(number=number), on=date(2026, 3, 5))
        finally:
            db.close()

    errors = _run_together(lambda: writer("AI-A"), lambda: writer("AI-B"))
    assert sorted(e is None for e in errors) == [False, True]
    loser = next(e for e in errors if e is not None)
    assert isinstance(loser, CaseError)
    case = get_case(case_db, fiscal, cid)
    assert case["state"] == "lavrada"
    assert len(case["events"]) == 1
    assert case["auto_number"] in ("AI-A", "AI-B")


WRITER = """
import sys, time
from datetime import date
from pathlib import Path
from cases.accounts import get_account
from cases.db import CaseDB
from cases.workflow import Workflow
from core.profile import load_profile
url, go, ids = sys.argv[1], Path(sys.argv[2]), [int(i) for i in sys.argv[3].split(",")]
db = CaseDB.open(url)
wf = Workflow(db, load_profile("bento-goncalves-2021"))
fiscal = get_account(db, "fabio")
while not go.exists():
    time.sleep(0.01)
for cid in ids:
    wf.descartar(cid, fiscal, on=date(2026, 3, 5), reason="processo " + sys.argv[3])
print("ok")
"""


def test_two_writer_processes(
    tmp_path: Path, case_db_url: str, case_db: CaseDB, people: dict[str, Account]
) -> None:
    """Two OS processes (as two `pontual cases` commands) write at the same time."""
    ids = [open_case(case_db, suggestion(f"p{i}"), people["fiscal"]) for i in range(12)]
    go = tmp_path / "go"
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", WRITER, case_db_url, str(go), ",".join(map(str, half))],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for half in (ids[::2], ids[1::2])
    ]
    time.sleep(0.5)
    go.touch()
    results = [p.communicate(timeout=180) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], [r[1][-2000:] for r in results]
    assert all(get_case(case_db, people["fiscal"], c)["state"] == "descartada" for c in ids)
