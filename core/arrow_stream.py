"""Small Polars frames handed to DuckDB without PyArrow, through the Arrow PyCapsule interface.

DuckDB scans a Polars frame (registered, or named in a query) by asking PyArrow to convert it,
and `DuckDBPyRelation.pl()` goes through PyArrow too: a command that does either imports
PyArrow, and with it NumPy, about 0.13 s of CPU at its start (a register's ingest is ~0.7 s in
all). Both libraries also speak the Arrow C stream interface (`__arrow_c_stream__`), which
needs neither: DuckDB scans any object that has the method, and `pl.DataFrame(relation)`
reads a relation's stream, with the same columns and values as `.pl()`.

A stream is scanned batch after batch, on one thread. So it is for frames of one scan's worth
(`STREAM_MAX_ROWS`); a bigger frame keeps the PyArrow route, whose batches DuckDB scans in
parallel (`core.store.Store.append`). ADR 0007, session 33 addendum.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import polars as pl

STREAM_MAX_ROWS = 122_880
"""The most rows a frame handed to DuckDB as one Arrow C stream has: one DuckDB row group
(`core.store.INSERT_BATCH_ROWS`), the size of one batch of the PyArrow route, which is then
one thread's scan as well."""


class ArrowStream:
    """A Polars frame DuckDB scans as an Arrow C stream (`con.register(name, ArrowStream(df))`).

    DuckDB sees an object with `__arrow_c_stream__` only, not a Polars frame it would hand to
    PyArrow. Each scan asks for a new stream of the same frame, so the registered name can be
    read more than once (a join of it with itself included)."""

    def __init__(self, frame: pl.DataFrame) -> None:
        self.frame = frame

    def __arrow_c_stream__(self, requested_schema: object | None = None) -> object:
        return self.frame.__arrow_c_stream__(requested_schema)
