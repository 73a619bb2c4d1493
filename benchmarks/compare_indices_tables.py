"""Compare the tables `pontual indices` writes, between two runs (issue 21: outputs identical
before and after a change, on the simulated days and the year).

`dump` copies `indicators`, `fleet_days`, `annual_grades` and `suggested_infractions` of a
store to Parquet files in a folder (run it after each `pontual indices` run of each side, on
the same store); `compare` checks two such folders: the same rows, every non-float column
exactly (both sides sorted on every column), every float cell exactly; the cells that differ
are listed by column and indicator with their largest relative difference (two runs of one
version already differ in the last bits of some parallel sums: compare two runs of the base
to see which). `computed_at` (the run's instant) is left out.

    .venv/bin/python -m benchmarks.compare_indices_tables dump STORE FOLDER
    .venv/bin/python -m benchmarks.compare_indices_tables compare FOLDER_A FOLDER_B
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import duckdb
import numpy as np
import polars as pl

TABLES = ("indicators", "fleet_days", "annual_grades", "suggested_infractions")
"""What `pontual indices` writes."""
IGNORED = ("computed_at",)
"""Columns that differ between any two runs by design."""


def dump(store: Path, folder: Path) -> dict[str, int]:
    """Each of TABLES of `store` (opened read-only) as FOLDER/<table>.parquet; rows each."""
    folder.mkdir(parents=True, exist_ok=True)
    con = duckdb.connect(str(store), read_only=True)
    try:
        rows = {}
        for name in TABLES:
            frame = con.sql(f'SELECT * FROM "{name}"').pl()
            frame.write_parquet(folder / f"{name}.parquet")
            rows[name] = frame.height
        return rows
    finally:
        con.close()


def compare_table(a: pl.DataFrame, b: pl.DataFrame) -> tuple[bool, list[str]]:
    """Whether two dumps of one table hold the same rows and non-float values, and lines
    describing them (float cells that differ: count, largest relative difference, the
    indicators they belong to)."""
    cols = [c for c in a.columns if c not in IGNORED]
    if cols != [c for c in b.columns if c not in IGNORED]:
        return False, [f"columns differ: {a.columns} / {b.columns}"]
    if a.height != b.height:
        return False, [f"rows {a.height} / {b.height}"]
    floats = [c for c in cols if a.schema[c] in (pl.Float32, pl.Float64)]
    keys = [c for c in cols if c not in floats]
    a = a.select(cols).sort(cols, nulls_last=True)
    b = b.select(cols).sort(cols, nulls_last=True)
    if not a.select(keys).equals(b.select(keys)):
        return False, [f"rows {a.height}: non-float columns differ"]
    lines = []
    n_diff = 0
    for c in floats:
        x, y = a[c].to_numpy().astype(np.float64), b[c].to_numpy().astype(np.float64)
        same = (x == y) | (np.isnan(x) & np.isnan(y))
        if same.all():
            continue
        bad = ~same
        n_diff += int(bad.sum())
        with np.errstate(all="ignore"):
            rel = np.abs(x[bad] - y[bad]) / np.maximum(np.abs(x[bad]), np.abs(y[bad]))
        where = (
            sorted(a.filter(pl.Series(bad))["indicator"].unique().to_list())
            if "indicator" in keys
            else []
        )
        largest = float(np.nanmax(rel)) if not np.all(np.isnan(rel)) else float("nan")
        lines.append(f"  {c}: {int(bad.sum())} cells, largest relative {largest:.2e} {where}")
    head = f"rows {a.height}, non-float columns equal, float cells {a.height * len(floats)}"
    return True, [f"{head}, differing {n_diff}", *lines]


def compare(folder_a: Path, folder_b: Path) -> bool:
    """Print the comparison of every table; whether every one has the same rows and
    non-float values."""
    same = True
    for name in TABLES:
        ok, lines = compare_table(
            pl.read_parquet(folder_a / f"{name}.parquet"),
            pl.read_parquet(folder_b / f"{name}.parquet"),
        )
        same &= ok
        print(f"{name}: " + "\n".join(lines))
    print("same rows and non-float values" if same else "DIFFERENT")
    return same


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    d = sub.add_parser("dump", help="the indices' tables of a store to Parquet")
    d.add_argument("store", type=Path)
    d.add_argument("folder", type=Path)
    c = sub.add_parser("compare", help="two dumps")
    c.add_argument("folder_a", type=Path)
    c.add_argument("folder_b", type=Path)
    args = parser.parse_args(argv)
    if args.command == "dump":
        for name, n in dump(args.store, args.folder).items():
            print(f"{name}: {n} rows")
        return 0
    return 0 if compare(args.folder_a, args.folder_b) else 1


if __name__ == "__main__":
    sys.exit(main())
