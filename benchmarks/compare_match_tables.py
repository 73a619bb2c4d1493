"""Compare the tables `pontual match` writes between two stores (issue 21: outputs identical
before and after a change, on the simulated days and the year).

Run `pontual match` over the same days on two copies of one store, one per side (base and
new), then compare them: for each derived table of matching (`DERIVED_TABLES`: trips_performed,
stop_visits, trip_outcomes, breakdowns, headway_observations, avl_coverage, feed_outages), the
rows of the given days, sorted by the table's key and then by every other column, must be
equal cell by cell, floats included (exactly: no tolerance), nulls equal to nulls.

    .venv/bin/python -m benchmarks.compare_match_tables STORE_A STORE_B [--from D --to D]

Exit 0 when every table is identical, 1 otherwise (each table's verdict is printed).
"""

from __future__ import annotations

import argparse
import sys
from datetime import date
from pathlib import Path

import duckdb
import polars as pl

from analytics.matching.day import DERIVED_TABLES
from core.schema import table


def read_rows(store: Path, name: str, first: date | None, last: date | None) -> pl.DataFrame:
    """The rows of table `name` of `store` (opened read-only) in the day range, every column,
    sorted by the table's key and then by every other column (a total order of the rows)."""
    con = duckdb.connect(str(store), read_only=True)
    try:
        where = ""
        params: list[object] = []
        if first is not None:
            where = " WHERE service_date BETWEEN ? AND ?"
            params = [first, last or first]
        frame = con.sql(f'SELECT * FROM "{name}"{where}', params=params or None).pl()
    finally:
        con.close()
    key = [c for c in table(name).primary_key if c in frame.columns]
    rest = [c for c in frame.columns if c not in key]
    return frame.sort([*key, *rest], nulls_last=True)


def compare_table(a: pl.DataFrame, b: pl.DataFrame) -> str | None:
    """None when the two sorted frames are equal cell by cell; else what differs."""
    if a.columns != b.columns:
        return f"columns differ: {a.columns} / {b.columns}"
    if a.height != b.height:
        return f"rows {a.height} / {b.height}"
    differ = [c for c in a.columns if not a[c].equals(b[c], check_dtypes=True)]
    if differ:
        counts = {c: int((a[c].ne_missing(b[c])).sum()) for c in differ}
        return f"rows {a.height}; cells differ in {counts}"
    return None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("store_a", type=Path)
    parser.add_argument("store_b", type=Path)
    parser.add_argument("--from", dest="first", type=date.fromisoformat)
    parser.add_argument("--to", dest="last", type=date.fromisoformat)
    args = parser.parse_args(argv)
    same = True
    for name in DERIVED_TABLES:
        a = read_rows(args.store_a, name, args.first, args.last)
        b = read_rows(args.store_b, name, args.first, args.last)
        problem = compare_table(a, b)
        same = same and problem is None
        print(
            f"{name:22s} {'identical' if problem is None else 'DIFFERENT'}: {a.height} rows"
            + ("" if problem is None else f" ({problem})")
        )
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
