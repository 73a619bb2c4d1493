"""Small frames reach DuckDB, and its results come back, without PyArrow (core.arrow_stream)."""

from __future__ import annotations

import subprocess
import sys
from datetime import UTC, date, datetime
from decimal import Decimal
from pathlib import Path

import duckdb
import polars as pl

from core.arrow_stream import ArrowStream

ROOT = Path(__file__).resolve().parents[2]


def mixed_frame() -> pl.DataFrame:
    """Columns of the store's kinds: texts with nulls, UTC instants, dates, decimals, lists,
    structs, booleans, floats with NaN."""
    return pl.DataFrame(
        {
            "id": ["a", None, "c"],
            "at": [datetime(2025, 1, 1, 9, 30, tzinfo=UTC), None, datetime(2025, 1, 2, tzinfo=UTC)],
            "day": [date(2025, 1, 1), date(2025, 1, 2), None],
            "amount": [Decimal("4.50"), None, Decimal("0.01")],
            "stops": [["s1", "s2"], [], None],
            "pos": [{"lat": -29.1, "lon": -51.5}, None, {"lat": 0.0, "lon": 0.0}],
            "ok": [True, None, False],
            "speed_m_s": [1.5, float("nan"), None],
        },
        schema_overrides={"amount": pl.Decimal(10, 2)},
    )


def test_a_registered_stream_reads_as_the_frame_on_every_scan() -> None:
    frame = mixed_frame()
    con = duckdb.connect()
    con.register("v", ArrowStream(frame))
    con.register("w", frame.to_arrow())  # the PyArrow route
    expected = con.sql("SELECT * FROM w").pl()
    assert expected["at"].to_list() == frame["at"].to_list()  # (DuckDB names UTC Etc/UTC)
    # read twice, and joined with itself: each scan asks for a stream of its own
    for _ in range(2):
        got = pl.DataFrame(con.sql("SELECT * FROM v"))
        assert got.schema == expected.schema
        assert got.equals(expected)
    joined = con.sql("SELECT count(*) FROM v a JOIN v b USING (id)").fetchall()
    assert joined == [(2,)]  # the null id joins nothing


def test_a_relation_read_by_its_stream_equals_pl() -> None:
    con = duckdb.connect()
    con.register("v", ArrowStream(mixed_frame()))
    con.execute("CREATE TABLE t AS SELECT * FROM v")
    for sql in ("SELECT * FROM t", "SELECT * FROM t WHERE false", "SELECT * FROM t ORDER BY id"):
        by_stream = pl.DataFrame(con.sql(sql))
        by_arrow = con.sql(sql).pl()
        assert by_stream.schema == by_arrow.schema
        assert by_stream.equals(by_arrow)


def test_neither_pyarrow_nor_numpy_is_imported() -> None:
    probe = (
        "import sys, duckdb, polars as pl\n"
        "from core.arrow_stream import ArrowStream\n"
        "con = duckdb.connect()\n"
        "con.register('v', ArrowStream(pl.DataFrame({'a': [1, 2, 3]})))\n"
        "out = pl.DataFrame(con.sql('SELECT sum(a) AS s FROM v'))\n"
        "print(out['s'][0], sorted(m for m in ('pyarrow', 'numpy') if m in sys.modules))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, cwd=ROOT
    )
    assert result.stdout.split() == ["6", "[]"]
