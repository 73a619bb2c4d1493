"""Readers of tabular files (CSV, Parquet, JSON lines) as chunks of raw string records.

Every value is read as text (CSV, JSON lines) or as stored (Parquet), so that a bad value is
quarantined by the validation core instead of failing the whole read. Each chunk carries
`record_key`: the line number in a CSV or JSON-lines file (the header is line 1; assumes no
line breaks inside quoted fields), or the row number (from 1) of a Parquet file, kept as an
integer (only the quarantined records need it as text, and a million texts cost a pass).
"""

from __future__ import annotations

import codecs
import csv
import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import polars as pl

from core.errors import InputError
from ingest.parsing import RAW_RECORD, READ_ERROR, RECORD_KEY

JSON_LINE_SUFFIXES = (".jsonl", ".ndjson", ".json")

REASON_NOT_JSON = "not valid JSON: expected one JSON object a line"
REASON_NOT_OBJECT = "not a JSON object: expected one object a line"


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


# A header line longer than this is not a header (a file of one long line, say).
MAX_HEADER_CHARS = 1 << 20


def read_csv_header(path: Path, separator: str = ",") -> list[str]:
    """The column names of the CSV file at `path` (its header line), as written. A name
    written twice is an InputError: which of the two columns is meant cannot be known."""
    with path.open(encoding="utf-8-sig", errors="replace", newline="") as fh:
        first = fh.readline(MAX_HEADER_CHARS + 1)
    if len(first) > MAX_HEADER_CHARS:
        raise InputError(
            f"the first line is longer than {MAX_HEADER_CHARS >> 20} MiB: not a header line",
            where=f"{path}, line 1",
            hint="expected a comma-separated file whose first line names the columns",
        )
    try:
        names = next(csv.reader([first], delimiter=separator), [])
    except csv.Error as exc:
        raise InputError(
            f"cannot read the header line as CSV: {exc}", where=f"{path}, line 1"
        ) from exc
    names = [n.strip() for n in names]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise InputError(
            f"the header names the column(s) {', '.join(twice)} more than once",
            where=f"{path}, line 1",
            hint="rename or remove the repeated column, so that each name says one thing",
        )
    return names


# Text files are checked block by block (a full pass: 48 MiB of ASCII CSV in 0.09 s, ~4x that
# where there are other characters): bytes that are not UTF-8 are refused before anything is stored,
# never found half-way through a file.
_CHECK_BLOCK = 8 << 20


def check_text_file(path: Path) -> None:
    """Refuse (InputError) a text input that is not UTF-8 text: a UTF-16/32 byte-order mark,
    NUL bytes (binary data), or bytes that are not UTF-8 (naming the line and the byte)."""
    decoder = codecs.getincrementaldecoder("utf-8")()
    offset = 0
    with path.open("rb") as fh:
        head = fh.read(4)
        for bom, name in _WIDE_BOMS:
            if head.startswith(bom):
                raise InputError(
                    f"the file is {name} text, not UTF-8",
                    where=str(path),
                    hint=f"convert it: iconv -f {name} -t UTF-8 FILE > FILE.utf8",
                )
        fh.seek(0)
        while block := fh.read(_CHECK_BLOCK):
            nul = block.find(b"\x00")
            if nul >= 0:
                raise InputError(
                    f"binary data, not text (a NUL byte at byte {offset + nul + 1})",
                    where=f"{path}, line {_line_at(path, offset + nul)}",
                    hint="is this the right file? expected a UTF-8 text file",
                )
            pending = decoder.getstate()[0]
            try:
                # ASCII blocks (most of a CSV) need no decoding unless a character is pending.
                if pending or not block.isascii():
                    decoder.decode(block)
            except UnicodeDecodeError as exc:
                at = offset - len(pending) + exc.start
                raise InputError(
                    f"not UTF-8 text: byte 0x{exc.object[exc.start]:02x} at byte {at + 1} "
                    "cannot be read",
                    where=f"{path}, line {_line_at(path, at)}",
                    hint="save the file as UTF-8, or convert it: "
                    "iconv -f latin1 -t UTF-8 FILE > FILE.utf8 (if it is Latin-1/Windows-1252)",
                ) from exc
            offset += len(block)
        try:
            decoder.decode(b"", final=True)
        except UnicodeDecodeError as exc:
            raise InputError(
                "not UTF-8 text: the file ends in the middle of a character (truncated?)",
                where=str(path),
            ) from exc


def _line_at(path: Path, offset: int) -> int:
    """The line (from 1) of byte `offset` of the file (read again: errors only)."""
    n_lines = 0
    with path.open("rb") as fh:
        while offset > 0 and (block := fh.read(min(_CHECK_BLOCK, offset))):
            n_lines += block.count(b"\n")
            offset -= len(block)
    return n_lines + 1


_WIDE_BOMS = (
    (b"\xff\xfe\x00\x00", "UTF-32LE"),
    (b"\x00\x00\xfe\xff", "UTF-32BE"),
    (b"\xff\xfe", "UTF-16LE"),
    (b"\xfe\xff", "UTF-16BE"),
)


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
    # The reason text is fixed (the line is the record's `record_key`), so reasons group.
    reason = (
        pl.when(doc.is_null())
        .then(pl.lit(REASON_NOT_JSON))
        .when(~doc.str.starts_with("{"))
        .then(pl.lit(REASON_NOT_OBJECT))
    )
    index = batch.select(pl.arg_where(suspect)).to_series()
    if index.len() == 0:
        return batch.with_columns(pl.lit(None, dtype=pl.String).alias(READ_ERROR))
    found = batch[index].select(reason).to_series()
    errors = pl.repeat(None, batch.height, dtype=pl.String, eager=True).scatter(index, found)
    return batch.with_columns(errors.alias(READ_ERROR))


def read_json_line_keys(path: Path, n_lines: int = 100) -> list[str]:
    """The keys of the first JSON objects of a JSON-lines file (to pick a mapping).

    A file none of whose first `n_lines` non-blank lines is a JSON object is not JSON lines:
    an InputError, once for the file (not one quarantined record per line)."""
    keys: dict[str, None] = {}
    n_seen = n_objects = 0
    with path.open(encoding="utf-8", errors="replace") as fh:
        for line in fh:
            if not line.strip():
                continue
            n_seen += 1
            try:
                obj = json.loads(line)
            except json.JSONDecodeError:
                obj = None  # a bad line is quarantined later; it names no columns
            if isinstance(obj, dict):
                n_objects += 1
                keys.update(dict.fromkeys(obj))
            if n_seen >= n_lines:
                break
    if n_seen and not n_objects:
        raise InputError(
            f"not JSON lines: none of the first {n_seen} lines is a JSON object",
            where=str(path),
            hint="expected one JSON object a line, a JSON array of objects, or one object",
        )
    return list(keys)


# -- JSON documents ------------------------------------------------------------------------
JSON_LINES = "lines"
JSON_ARRAY = "array"
JSON_OBJECT = "object"
JSON_EMPTY = "empty"

# A JSON document (array or object) is parsed whole: past this size it must be JSON lines.
MAX_JSON_DOCUMENT_BYTES = 512 * 1024 * 1024


def detect_json_layout(path: Path) -> str:
    """How a .json/.jsonl file holds its records: `JSON_LINES` (one object a line),
    `JSON_ARRAY` (one array), `JSON_OBJECT` (one object spread over lines, e.g. pretty
    printed) or `JSON_EMPTY` (only blanks). Reads the first line only."""
    with path.open("rb") as fh:
        head = fh.read(1 << 16)
        if not head.lstrip(b"\xef\xbb\xbf \t\r\n"):
            return JSON_EMPTY
        fh.seek(0)
        first = b""
        while not first.strip():
            line = fh.readline(16 << 20)
            if not line:
                break
            first = line
    first = first.lstrip(b"\xef\xbb\xbf \t\r\n")
    if first.startswith(b"["):
        return JSON_ARRAY
    if first.startswith(b"{"):
        try:
            return JSON_LINES if isinstance(json.loads(first), dict) else JSON_OBJECT
        except (json.JSONDecodeError, UnicodeDecodeError):
            return JSON_OBJECT
    return JSON_LINES


@dataclass(frozen=True)
class JsonDocument:
    """The records of a JSON document: `records` (`record_key` = the record's number from 1,
    `raw_record` = the record as compact JSON), their `keys` (first 100 records) and
    `where_found` (how they were found: "array", "object", "key 'data'")."""

    records: pl.DataFrame
    keys: list[str]
    where_found: str


def read_json_document(path: Path) -> JsonDocument:
    """The records of a JSON document: an array of objects, an object holding one array of
    objects (e.g. ``{"vehicles": [...]}``), or one flat object (one record). Anything else is
    one InputError for the file. Documents are parsed whole (past `MAX_JSON_DOCUMENT_BYTES`,
    refused: write JSON lines); each record becomes one compact JSON text, a Python step per
    record that JSON lines, the format of large files, do not take."""
    if path.stat().st_size > MAX_JSON_DOCUMENT_BYTES:
        raise InputError(
            f"JSON document larger than {MAX_JSON_DOCUMENT_BYTES >> 20} MiB",
            where=str(path),
            hint="write large files as JSON lines (.jsonl, one object a line)",
        )
    try:
        doc = json.loads(path.read_bytes())
    except (json.JSONDecodeError, UnicodeDecodeError, RecursionError) as exc:
        raise InputError(
            f"not valid JSON: {exc}".splitlines()[0],
            where=str(path),
            hint="expected one JSON object a line, a JSON array of objects, or one object",
        ) from exc
    where_found = "array"
    if isinstance(doc, dict):
        arrays = [k for k, v in doc.items() if isinstance(v, list) and v and isinstance(v[0], dict)]
        if len(arrays) == 1:
            where_found, doc = f"key {arrays[0]!r}", doc[arrays[0]]
        elif not arrays and not any(isinstance(v, dict | list) for v in doc.values()):
            where_found, doc = "object", [doc]
        else:
            raise InputError(
                f"JSON object with no single array of records (keys: {', '.join(list(doc)[:20])})",
                where=str(path),
                hint="expected one JSON object a line, a JSON array of objects, or one object "
                "holding one array of objects",
            )
    if not isinstance(doc, list):
        raise InputError(
            f"JSON document is a {type(doc).__name__}, not records",
            where=str(path),
            hint="expected one JSON object a line, a JSON array of objects, or one object",
        )
    bad = next((i for i, r in enumerate(doc) if not isinstance(r, dict)), None)
    if bad is not None:
        raise InputError(
            f"JSON array element {bad + 1} is not an object",
            where=str(path),
            hint="expected an array of objects, one per record",
        )
    keys: dict[str, None] = {}
    for record in doc[:100]:
        keys.update(dict.fromkeys(record))
    texts = pl.Series(RAW_RECORD, [json.dumps(r, ensure_ascii=False) for r in doc], pl.String)
    records = pl.DataFrame(
        {RECORD_KEY: pl.int_range(1, len(doc) + 1, eager=True), RAW_RECORD: texts}
    )
    return JsonDocument(records, list(keys), where_found)


def read_json_document_chunks(
    doc: JsonDocument, chunk_rows: int, fields: Sequence[str]
) -> Iterator[pl.DataFrame]:
    """The records of `doc` in chunks: one text column per name in `fields` (null when
    absent), as `read_json_lines_chunks` gives them."""
    for start in range(0, doc.records.height, chunk_rows):
        batch = doc.records.slice(start, chunk_rows).with_columns(
            pl.col(RAW_RECORD).str.json_path_match(f"$['{name}']").alias(name) for name in fields
        )
        yield batch.with_columns(pl.lit(None, dtype=pl.String).alias(READ_ERROR))
