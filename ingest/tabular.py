"""Readers of tabular files (CSV, Parquet, JSON lines) as chunks of raw string records.

Every value is read as text (CSV, JSON lines) or as stored (Parquet), so that a bad value is
quarantined by the validation core instead of failing the whole read. Each chunk carries
`record_key`: the line number in a CSV or JSON-lines file (the header is line 1; assumes no
line breaks inside quoted fields), or the row number (from 1) of a Parquet file, kept as an
integer (only the quarantined records need it as text, and a million texts cost a pass).
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from pathlib import Path

import polars as pl

from core.errors import InputError
from ingest.parsing import RAW_RECORD, READ_ERROR, RECORD_KEY

JSON_LINE_SUFFIXES = (".jsonl", ".ndjson", ".json")


def read_csv_chunks(path: Path, chunk_rows: int, *, separator: str = ",") -> Iterator[pl.DataFrame]:
    """The CSV file at `path` in chunks of at most `chunk_rows` rows, all columns as text."""
    try:
        lf = pl.scan_csv(
            path,
            infer_schema=False,
            separator=separator,
            row_index_name=RECORD_KEY,
            row_index_offset=2,
            truncate_ragged_lines=True,
        )
        yield from lf.collect_batches(chunk_size=chunk_rows)
    except (pl.exceptions.ComputeError, pl.exceptions.NoDataError, OSError) as exc:
        raise InputError(
            f"cannot read as CSV: {exc}".splitlines()[0],
            where=str(path),
            hint="expected a comma-separated file with a header line",
        ) from exc


def read_parquet_columns(path: Path) -> list[str]:
    """The column names of the Parquet file at `path` (its footer only)."""
    try:
        return pl.scan_parquet(path).collect_schema().names()
    except (pl.exceptions.PolarsError, OSError) as exc:
        raise _not_parquet(path, exc) from exc


def _not_parquet(path: Path, exc: Exception) -> InputError:
    return InputError(
        f"cannot read as Parquet: {exc}".splitlines()[0],
        where=str(path),
        hint="expected an Apache Parquet file",
    )


def read_parquet_chunks(path: Path, chunk_rows: int) -> Iterator[pl.DataFrame]:
    """The Parquet file at `path` in chunks of at most `chunk_rows` rows, as stored."""
    try:
        lf = pl.scan_parquet(path).with_row_index(RECORD_KEY, offset=1)
        yield from lf.collect_batches(chunk_size=chunk_rows)
    except (pl.exceptions.PolarsError, OSError) as exc:
        raise _not_parquet(path, exc) from exc


def read_json_lines_chunks(
    path: Path, chunk_rows: int, fields: Sequence[str]
) -> Iterator[pl.DataFrame]:
    """A JSON-lines file (one object a line) in chunks: one text column per name in `fields`.

    Every line keeps its text in `raw_record`; a line that is not a JSON object has nulls in
    its fields and its reason in `read_error` (naming the line), so that it is quarantined as
    such; blank lines are skipped.
    """
    lf = (
        pl.scan_lines(path, name=RAW_RECORD, row_index_name=RECORD_KEY, row_index_offset=1)
        .filter(pl.col(RAW_RECORD).str.strip_chars() != "")
        .select(
            pl.col(RECORD_KEY),
            pl.col(RAW_RECORD),
            *[
                pl.col(RAW_RECORD).str.json_path_match(f"$['{name}']").alias(name)
                for name in fields
            ],
        )
    )
    try:
        for batch in lf.collect_batches(chunk_size=chunk_rows):
            yield compute_json_read_errors(batch, fields)
    except (pl.exceptions.ComputeError, OSError) as exc:
        raise InputError(
            f"cannot read as JSON lines: {exc}".splitlines()[0], where=str(path)
        ) from exc


def compute_json_read_errors(batch: pl.DataFrame, fields: Sequence[str]) -> pl.DataFrame:
    """`batch` with `read_error`: why its `raw_record` line is not one JSON object, or null.

    A line whose fields were all absent is the only suspect (a line that yielded a field was
    parsed), so only those few lines are parsed again as a whole.
    """
    suspect = (
        pl.all_horizontal(pl.col(name).is_null() for name in fields) if fields else pl.lit(True)
    )
    doc = pl.col(RAW_RECORD).str.json_path_match("$")
    line = pl.col(RECORD_KEY).cast(pl.String)
    reason = (
        pl.when(doc.is_null())
        .then(pl.lit("not valid JSON (line ") + line + pl.lit("): expected one JSON object a line"))
        .when(~doc.str.starts_with("{"))
        .then(pl.lit("not a JSON object (line ") + line + pl.lit("): expected one object a line"))
    )
    index = batch.select(pl.arg_where(suspect)).to_series()
    if index.len() == 0:
        return batch.with_columns(pl.lit(None, dtype=pl.String).alias(READ_ERROR))
    found = batch[index].select(reason).to_series()
    errors = pl.repeat(None, batch.height, dtype=pl.String, eager=True).scatter(index, found)
    return batch.with_columns(errors.alias(READ_ERROR))


def read_json_line_keys(path: Path, n_lines: int = 100) -> list[str]:
    """The keys of the first JSON objects of a JSON-lines file (to pick a mapping)."""
    keys: dict[str, None] = {}
    with path.open(encoding="utf-8", errors="replace") as fh:
        for _, line in zip(range(n_lines), fh, strict=False):
            try:
                obj = json.loads(line)
            except json.JSONDecodeError:
                continue  # a bad line is quarantined later; it names no columns
            if isinstance(obj, dict):
                keys.update(dict.fromkeys(obj))
    return list(keys)
