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
from datetime import datetime
from pathlib import Path
from zoneinfo import ZoneInfo

import polars as pl

from core.errors import InputError
from core.profile import Profile
from core.schema import table
from core.store import Store
from ingest.cards import require_store_key
from ingest.checks import JudgedBatch
from ingest.gpx import read_gpx
from ingest.gtfsrt import read_vehicle_positions_file
from ingest.inspections import compute_inspection_checks
from ingest.kinds import KIND_TABLES
from ingest.mapping import Mapping, detect_mapping, read_mapping, to_documented
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
    read_csv_chunks,
    read_json_line_keys,
    read_json_lines_chunks,
    read_parquet_chunks,
    read_parquet_columns,
)
from ingest.writing import IngestCounts, write_judged


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


def read_raw_chunks(
    path: Path,
    kind: str,
    options: IngestOptions,
    mapping: Mapping | None,
    *,
    vehicle_id: str | None = None,
) -> tuple[Iterator[pl.DataFrame], Mapping | None, str | None]:
    """Chunks of raw records in the documented columns, the mapping used and the default zone.

    The format comes from the suffix: .csv/.txt, .parquet, .jsonl/.ndjson (and .json that is
    not an Olho Vivo snapshot), .pb (GTFS-RT VehiclePositions), .gpx.
    """
    if not path.exists():
        raise InputError("file not found", where=str(path))
    suffix = path.suffix.lower()
    documented = [c.name for c in input_columns(table(KIND_TABLES[kind]))]
    if kind == "avl" and suffix == ".pb":
        return iter([read_vehicle_positions_file(path)]), None, None
    if kind == "avl" and suffix == ".gpx":
        return iter([read_gpx(path, vehicle_id)]), None, None
    if kind == "avl" and suffix == ".json" and _looks_like_document(path):
        return iter([read_olho_vivo(path)]), None, OLHO_VIVO_TZ
    chunks: Iterator[pl.DataFrame]
    if suffix in (".csv", ".txt", ".tsv"):
        chunks = read_csv_chunks(
            path, options.chunk_rows, separator="\t" if suffix == ".tsv" else ","
        )
        first = next(chunks, None)
        columns = first.columns if first is not None else []
        chunks = _prepend(first, chunks)
    elif suffix == ".parquet":
        columns = read_parquet_columns(path)
        chunks = read_parquet_chunks(path, options.chunk_rows)
    elif suffix in (".jsonl", ".ndjson", ".json"):
        columns = read_json_line_keys(path)
        used = mapping or detect_mapping(columns, kind, documented)
        fields = used.source_columns if used else documented
        chunks = read_json_lines_chunks(path, options.chunk_rows, fields)
    else:
        raise InputError(
            f"unknown file format {suffix!r}",
            where=str(path),
            hint="expected .csv, .parquet, .jsonl, .json (Olho Vivo), .pb (GTFS-RT) or .gpx",
        )
    used = mapping or detect_mapping(columns, kind, documented)
    if used is None:
        return chunks, None, None
    return (to_documented(c, used, source=str(path)) for c in chunks), used, used.source_tz


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
    chunks, used, default_tz = read_raw_chunks(path, kind, options, chosen, vehicle_id=vehicle_id)
    tz = options.source_tz or default_tz or profile.general.timezone.value
    fmt = options.time_format or (used.time_format if used else None)
    opts = options.model_copy(update={"source_tz": tz, "time_format": fmt})
    source = str(path.resolve())
    # The file's digest is computed beside the ingest (hashlib releases the GIL); the first
    # chunk's run row waits for it.
    hashing = ThreadPoolExecutor(max_workers=1)
    sha_future = hashing.submit(compute_file_sha256, path)
    hashing.shutdown(wait=False)
    ctx = read_network_context(store) if kind in ("avl", "fares") else None
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

    total = IngestCounts()
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
                store, judge(chunk), source=source, run_kind=kind, source_sha256=sha_future.result()
            )
        total = total + counts
        if on_chunk is not None:
            on_chunk(counts)
    return total


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
