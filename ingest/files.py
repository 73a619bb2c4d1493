"""Ingest of files: pick the reader by format, map vendor columns, validate and write in chunks.

Large files are read in chunks of `IngestOptions.chunk_rows` records; each chunk is one
transaction keyed by the target table's key, so a crash mid-file leaves the store consistent
and re-running the same command completes it without duplicates.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING
from zoneinfo import ZoneInfo

import polars as pl

from core.errors import InputError
from core.schema import table
from core.store import Store
from ingest.cards import require_store_key
from ingest.checks import JudgedBatch
from ingest.inspections import compute_inspection_checks
from ingest.kinds import KIND_TABLES
from ingest.layout import Layout, describe_time_column, required_columns, resolve_layout
from ingest.mapping import Mapping, read_mapping, to_documented
from ingest.olhovivo import OLHO_VIVO_TZ, is_olho_vivo, read_olho_vivo
from ingest.options import IngestOptions
from ingest.parsing import input_columns
from ingest.registers import (
    compute_count_checks,
    compute_incident_checks,
    compute_survey_checks,
    compute_vehicle_checks,
    write_register_batch,
)
from ingest.rules import (
    compute_avl_judged,
    compute_fare_judged,
    compute_judged,
    read_network_context,
)
from ingest.tabular import (
    JSON_ARRAY,
    JSON_EMPTY,
    JSON_LINE_SUFFIXES,
    JSON_OBJECT,
    check_text_file,
    detect_json_layout,
    read_csv_chunks,
    read_csv_header,
    read_json_document,
    read_json_document_chunks,
    read_json_line_keys,
    read_json_lines_chunks,
    read_parquet_chunks,
    read_parquet_columns,
)
from ingest.writing import IngestCounts, write_judged

if TYPE_CHECKING:  # the profile's models are built only by the commands that read it
    from core.profile import Profile


def compute_file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _looks_like_document(path: Path) -> bool:
    """A .json file that is one JSON document (Olho Vivo), not JSON lines."""
    with path.open("rb") as fh:
        head = fh.read(4096).lstrip()
    if not head.startswith(b"{"):
        return False
    try:
        return is_olho_vivo(json.loads(path.read_bytes()))
    except json.JSONDecodeError:
        return False


@dataclass(frozen=True)
class RawFile:
    """A file opened for ingest: its `chunks` of raw records in the documented columns, the
    `mapping` applied (None: documented columns), the zone of its local times by default
    (`default_tz`), `notes` on how it was read (layout, aliases, what a reader skipped), and
    `why_empty`: why it holds no record, when a reader can tell (else None)."""

    chunks: Iterator[pl.DataFrame]
    mapping: Mapping | None = None
    default_tz: str | None = None
    notes: tuple[str, ...] = ()
    why_empty: str | None = None


def read_raw_chunks(
    path: Path,
    kind: str,
    options: IngestOptions,
    mapping: Mapping | None,
    *,
    vehicle_id: str | None = None,
) -> tuple[Iterator[pl.DataFrame], Mapping | None, str | None]:
    """Chunks of raw records in the documented columns, the mapping used and the default zone
    (`read_raw_file`, less its notes)."""
    raw = read_raw_file(path, kind, options, mapping, vehicle_id=vehicle_id)
    return raw.chunks, raw.mapping, raw.default_tz


def read_raw_file(
    path: Path,
    kind: str,
    options: IngestOptions,
    mapping: Mapping | None,
    *,
    vehicle_id: str | None = None,
) -> RawFile:
    """Open `path` for ingest as `kind` (see `RawFile`).

    The format comes from the suffix: .csv/.txt/.tsv, .parquet, .jsonl/.ndjson/.json (JSON
    lines, a JSON array of objects, one object, or an Olho Vivo snapshot; detected per file),
    .pb (GTFS-RT VehiclePositions), .gpx. A header that cannot feed the documented columns is
    one InputError for the file (`ingest.layout`).
    """
    if not path.exists():
        raise InputError("file not found", where=str(path))
    if path.is_dir():
        raise InputError("a folder, not a file", where=str(path))
    suffix = path.suffix.lower()
    decl = table(KIND_TABLES[kind])
    cols = input_columns(decl)
    documented = [c.name for c in cols]
    required = required_columns(kind, documented, [c.name for c in cols if not c.nullable])
    if suffix in (".csv", ".txt", ".tsv", ".gpx", *JSON_LINE_SUFFIXES):
        check_text_file(path)
    # The GTFS-RT (protobuf) and GPX readers are imported only for their files: every
    # `pontual ingest` process would pay their import (~0.05 CPU s) for nothing.
    if kind == "avl" and suffix == ".pb":
        from ingest.gtfsrt import read_vehicle_positions_file

        records, none_why = read_vehicle_positions_file(path)
        return RawFile(iter([records]), why_empty=none_why)
    if kind == "avl" and suffix == ".gpx":
        from ingest.gpx import read_gpx

        track = read_gpx(path, vehicle_id)
        return RawFile(iter([track.records]), notes=track.notes, why_empty=track.why_empty)
    if kind == "avl" and suffix == ".json" and _looks_like_document(path):
        return RawFile(iter([read_olho_vivo(path)]), default_tz=OLHO_VIVO_TZ)
    chunks: Iterator[pl.DataFrame]
    notes: list[str] = []
    why_empty: str | None = None
    source = str(path)
    used: Layout | None = None
    if suffix in (".csv", ".txt", ".tsv"):
        separator = "\t" if suffix == ".tsv" else ","
        header = read_csv_header(path, separator)  # refuses a name written twice
        chunks = read_csv_chunks(path, options.chunk_rows, separator=separator)
        first = next(chunks, None)
        columns = first.columns if first is not None else header
        if first is None or first.height == 0:
            why_empty = "the file has a header line and no records"
        chunks = _prepend(first, chunks)
    elif suffix == ".parquet":
        columns = read_parquet_columns(path)
        chunks = read_parquet_chunks(path, options.chunk_rows)
    elif suffix in JSON_LINE_SUFFIXES:
        layout = detect_json_layout(path)
        if layout == JSON_EMPTY:
            return RawFile(iter([]), why_empty="the file is empty (only blanks)")
        doc = None
        if layout in (JSON_ARRAY, JSON_OBJECT):
            try:
                doc = read_json_document(path)
            except InputError as exc:
                if layout == JSON_ARRAY or not exc.what.startswith("not valid JSON"):
                    raise
                # A JSON-lines file whose first line is broken: read it as lines (that line
                # goes to quarantine; a file with no object line is refused).
        if doc is not None:
            columns = doc.keys
            notes.append(f"JSON document: {doc.records.height} records ({doc.where_found})")
            if doc.records.height == 0:
                why_empty = f"the JSON document holds no records ({doc.where_found})"
        else:
            columns = read_json_line_keys(path)
        used = resolve_layout(columns, kind, documented, required, mapping=mapping, source=source)
        fields = used.mapping.source_columns if used.mapping else documented
        if doc is not None:
            chunks = read_json_document_chunks(doc, options.chunk_rows, fields)
        else:
            chunks = read_json_lines_chunks(path, options.chunk_rows, fields)
    else:
        raise InputError(
            f"unknown file format {suffix!r}",
            where=str(path),
            hint="expected .csv, .parquet, .jsonl, .json (Olho Vivo), .pb (GTFS-RT) or .gpx",
        )
    if used is None:
        used = resolve_layout(columns, kind, documented, required, mapping=mapping, source=source)
    notes += used.notes
    if used.mapping is None:
        return RawFile(chunks, None, None, tuple(notes), why_empty)
    chunks = (to_documented(c, used.mapping, source=source) for c in chunks)
    if used.mapping.name == "aliases" and "event_at" in used.mapping.columns:
        first_mapped = next(chunks, None)
        if first_mapped is not None and "event_at" in first_mapped.columns:
            how = describe_time_column(first_mapped["event_at"])
            if how is not None:
                notes.append(f"times read as {how}")
        chunks = _prepend(first_mapped, chunks)
    return RawFile(chunks, used.mapping, used.mapping.source_tz, tuple(notes), why_empty)


def _prepend(first: pl.DataFrame | None, rest: Iterator[pl.DataFrame]) -> Iterator[pl.DataFrame]:
    if first is not None:
        yield first
        yield from rest


def ingest_file(
    store: Store,
    path: Path,
    kind: str,
    *,
    options: IngestOptions,
    profile: Profile,
    mapping: str | None = None,
    key: bytes | None = None,
    vehicle_id: str | None = None,
    on_chunk: Callable[[IngestCounts], None] | None = None,
) -> IngestCounts:
    """Ingest one file of `kind` (avl, fares, vehicles, incidents, surveys, counts,
    inspections).

    Times without an offset are local in, by priority: `options.source_tz`, the mapping's
    zone, the format's (Olho Vivo: São Paulo), the profile's. `key` is the card-hashing key
    (fares only). Returns the counts summed over the chunks.
    """
    path = Path(path)
    chosen = read_mapping(mapping) if mapping else None
    if chosen is not None and chosen.kind != kind:
        raise InputError(
            f"mapping {chosen.name!r} is for {chosen.kind}, not {kind}", where=str(path)
        )
    raw = read_raw_file(path, kind, options, chosen, vehicle_id=vehicle_id)
    chunks, used = raw.chunks, raw.mapping
    tz = options.source_tz or raw.default_tz or profile.general.timezone.value
    fmt = options.time_format or (used.time_format if used else None)
    opts = options.model_copy(update={"source_tz": tz, "time_format": fmt})
    source = str(path.resolve())
    # The file's digest is computed beside the ingest (hashlib releases the GIL); the first
    # chunk's run row waits for it.
    hashing = ThreadPoolExecutor(max_workers=1)
    sha_future = hashing.submit(compute_file_sha256, path)
    hashing.shutdown(wait=False)
    ctx = read_network_context(store, extent=kind == "avl") if kind in ("avl", "fares") else None
    if kind == "fares":
        if key is None:
            raise ValueError("fares need the card-hashing key")  # programming error
        require_store_key(store, key)

    def judge(chunk: pl.DataFrame) -> JudgedBatch:
        if kind == "avl":
            assert ctx is not None
            return compute_avl_judged(chunk, ctx, source=source, options=opts)
        if kind == "fares":
            assert ctx is not None and key is not None
            return compute_fare_judged(chunk, ctx, source=source, key=key, options=opts)
        return compute_judged(
            chunk,
            target=KIND_TABLES[kind],
            source=source,
            options=opts,
            checks=_table_checks(kind, profile, opts),
        )

    total = IngestCounts(notes=raw.notes)
    run_started = datetime.now(UTC)
    try:
        for chunk in chunks:
            if kind == "vehicles":  # the register keeps its history (ingest.registers)
                counts = write_register_batch(
                    store,
                    judge(chunk),
                    source=source,
                    source_sha256=sha_future.result(),
                    today=datetime.now(ZoneInfo(tz)).date(),
                )
            else:
                counts = write_judged(
                    store,
                    judge(chunk),
                    source=source,
                    run_kind=kind,
                    source_sha256=sha_future.result(),
                )
            total = total + counts
            if on_chunk is not None:
                on_chunk(counts)
    except InputError as exc:
        # A file found unreadable half-way (a broken line past the first chunk) leaves
        # nothing of it: the chunks this run wrote are taken back.
        if total.n_read and kind != "vehicles":
            delete_file_run(store, KIND_TABLES[kind], source, run_started)
            raise InputError(
                f"{exc.what}; the {total.n_read} records read before it were taken back",
                where=exc.where,
                hint=exc.hint,
            ) from exc
        raise
    if total.n_read == 0:
        why = raw.why_empty or "the reader found no record in it"
        total = total + IngestCounts(notes=(f"no records read: {why}",))
    return total


def delete_file_run(store: Store, target: str, source: str, since: datetime) -> None:
    """Take back what one ingest run of `source` wrote from `since` on: its rows of `target`,
    its quarantine rows and its `ingest_runs` rows, in one transaction. Exact: rows stored by
    earlier runs are older, and a run inserts no row whose key was already stored. (Not for
    the fleet register, whose upserts replace rows.)"""
    with store.transaction():
        for name, time_column in (
            (target, "ingested_at"),
            ("quarantine", "quarantined_at"),
            ("ingest_runs", "started_at"),
        ):
            store.con.execute(
                f'DELETE FROM "{name}" WHERE source = ? AND "{time_column}" >= ?', [source, since]
            ).fetchall()


def _table_checks(kind: str, profile: Profile, options: IngestOptions) -> list:
    if kind == "vehicles":
        return compute_vehicle_checks(profile)
    if kind == "incidents":
        return compute_incident_checks(options)
    if kind == "surveys":
        return compute_survey_checks(profile, options)
    if kind == "inspections":
        return compute_inspection_checks(options)
    return compute_count_checks(options)
