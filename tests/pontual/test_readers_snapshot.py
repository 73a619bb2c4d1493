"""Read-only verbs keep working while a writer (`pontual listen`/`serve`) holds the store: they
read the published snapshot and say so (they used to fail with a lock error)."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

from core.store import Store
from pontual.cli import main

ROOT = Path(__file__).resolve().parents[2]
HOLD = (
    "import sys, time; from core.store import Store; "
    "s = Store.open(sys.argv[1]); print('held', flush=True); time.sleep(60)"
)


def test_readers_use_the_snapshot_while_a_writer_holds_the_store(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store = tmp_path / "pontual.duckdb"
    assert main(["--store", str(store), "init"]) == 0  # writes and publishes a snapshot
    with Store.open(store) as s:
        s.con.execute(
            "INSERT INTO quarantine (source, record_key, target_table, field, reason, "
            "raw_record, quarantined_at) VALUES ('a.csv', '1', 'avl', 'lat', 'out_of_range', "
            "'x', now())"
        )
        s.publish_snapshot()
    capsys.readouterr()
    writer = subprocess.Popen(
        [sys.executable, "-c", HOLD, str(store)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        text=True,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
    )
    try:
        assert writer.stdout is not None and writer.stdout.readline().strip() == "held"
        started = time.monotonic()
        assert main(["--store", str(store), "quarantine"]) == 0
        out = capsys.readouterr()
        assert "está aberto para escrita por outro processo" in out.err
        assert "quarentena: 1 registros" in out.out
        assert time.monotonic() - started < 30
        # a writer is still refused, with the lock explained (exit 2)
        assert main(["--store", str(store), "init"]) == 2
        assert "o banco está aberto para escrita por outro processo" in capsys.readouterr().err
    finally:
        writer.kill()
        writer.wait()
