"""`pontual indices --period YYYY --months`: each month then the year in one run, the same rows
and the same store as one command per month then one for the year."""

from __future__ import annotations

import shutil
from pathlib import Path

import polars as pl
import pytest
from polars.testing import assert_frame_equal

from core.store import Store
from pontual.cli import main
from tests.dashboard.store_builder import build_store

WRITTEN = ("indicators", "fleet_days", "annual_grades", "suggested_infractions")
VOLATILE = ("computed_at",)


def _tables(path: Path) -> dict[str, pl.DataFrame]:
    with Store.open(path, read_only=True) as store:
        out = {}
        for name in WRITTEN:
            frame = store.read(name)
            frame = frame.drop([c for c in VOLATILE if c in frame.columns])
            out[name] = frame.sort(frame.columns, nulls_last=True)
        return out


def test_months_then_the_year_in_one_run_equal_one_command_each(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # the fixture's matched day is 2 March 2026: March is the only month with trips, the
    # others are left out as their own commands would have stopped
    one = build_store(tmp_path / "one" / "pontual.duckdb")
    each = tmp_path / "each" / "pontual.duckdb"
    each.parent.mkdir()
    shutil.copyfile(one, each)
    base = ["--quiet", "indices", "--format", "csv", "--all", "--scope", "line"]
    capsys.readouterr()
    assert main(["--store", str(each), *base, "--period", "2026-03"]) == 0
    march = capsys.readouterr().out
    assert main(["--store", str(each), *base, "--period", "2026"]) == 0
    year = capsys.readouterr().out
    assert main(["--store", str(one), *base, "--period", "2026", "--months"]) == 0
    together = capsys.readouterr().out

    def read(text: bytes) -> pl.DataFrame:
        return pl.read_csv(text, infer_schema=False)

    assert_frame_equal(
        read(together.encode()), pl.concat([read(march.encode()), read(year.encode())])
    )
    assert set(read(together.encode())["period"]) == {"2026-03", "2026"}
    mine, theirs = _tables(one), _tables(each)
    for name in WRITTEN:
        assert_frame_equal(mine[name], theirs[name], check_exact=True)


def test_months_needs_a_year(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    store = build_store(tmp_path / "pontual.duckdb")
    code = main(["--store", str(store), "indices", "--period", "2026-03", "--months"])
    assert code == 2
    assert "--months" in capsys.readouterr().err
