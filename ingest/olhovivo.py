"""SPTrans Olho Vivo ``/Posicao`` snapshots (São Paulo) as raw AVL records.

A snapshot is ``{"hr": "HH:MM", "l": [line, ...]}`` (optionally wrapped as
``{"metadata": ..., "payload": {...}}``) where each line has ``c`` (sign, e.g. "2104-10"),
``cl`` (line code), ``sl`` (1 or 2, the direction), ``lt0``/``lt1`` (terminals) and ``vs``, the
vehicles: ``p`` (prefix = fleet number), ``a`` (accessible), ``ta`` (fix time, UTC ISO 8601),
``py``/``px`` (lat/lon).

`hr` is the local time (America/Sao_Paulo) of the snapshot without its date; the date is the
one that puts `hr` closest to the newest fixes. Fixes much older than the snapshot (days old,
the device stopped reporting) are kept as rows with `snapshot_at`, so the validation core
quarantines them with the reason "stale fix".
"""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import polars as pl

from core.errors import InputError
from ingest.parsing import RAW_RECORD, RECORD_KEY, SNAPSHOT_AT

OLHO_VIVO_TZ = "America/Sao_Paulo"

_VEHICLE = pl.Struct(
    {"p": pl.Int64(), "a": pl.Boolean(), "ta": pl.String(), "py": pl.Float64(), "px": pl.Float64()}
)
_LINE = pl.Struct({"c": pl.String(), "cl": pl.Int64(), "sl": pl.Int64(), "vs": pl.List(_VEHICLE)})


def is_olho_vivo(doc: Any) -> bool:
    """Whether a decoded JSON document is an Olho Vivo /Posicao snapshot."""
    if isinstance(doc, dict) and "payload" in doc:
        doc = doc["payload"]
    return isinstance(doc, dict) and "hr" in doc and "l" in doc


def read_olho_vivo(path: Path) -> pl.DataFrame:
    """The vehicles of one snapshot as raw AVL records (documented columns + `snapshot_at`).

    vehicle_id = p; event_at = ta; lat = py; lon = px; reported_route_id = cl (the line code
    Olho Vivo uses in its other endpoints); reported_trip_id = "<c>-<sl - 1>", which matches
    SPTrans GTFS trip ids; reported_direction_id = sl - 1. record_key = "l[i].vs[j]".
    """
    try:
        doc = json.loads(path.read_bytes())
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise InputError(f"not valid JSON: {exc}", where=str(path)) from exc
    if not is_olho_vivo(doc):
        raise InputError(
            "not an Olho Vivo /Posicao snapshot",
            where=str(path),
            hint='expected {"hr": "HH:MM", "l": [...]} (or wrapped in "payload")',
        )
    body = doc.get("payload", doc)
    lines = pl.DataFrame({"line": body["l"]}, schema={"line": _LINE}, strict=False).with_row_index(
        "i"
    )
    flat = (
        lines.unnest("line")
        .with_columns(pl.col("vs").list.eval(pl.int_range(pl.len())).alias("j"))
        .explode(["vs", "j"])
        .filter(pl.col("vs").is_not_null())
        .unnest("vs")
    )
    raw = flat.select(
        pl.format("l[{}].vs[{}]", "i", "j").alias(RECORD_KEY),
        pl.col("p").cast(pl.String).alias("vehicle_id"),
        pl.col("ta").alias("event_at"),
        pl.col("py").alias("lat"),
        pl.col("px").alias("lon"),
        pl.col("cl").cast(pl.String).alias("reported_route_id"),
        pl.format("{}-{}", "c", pl.col("sl") - 1).alias("reported_trip_id"),
        (pl.col("sl") - 1).alias("reported_direction_id"),
    )
    raw = raw.with_columns(
        pl.struct(pl.all().exclude(RECORD_KEY)).struct.json_encode().alias(RAW_RECORD)
    )
    snapshot = compute_snapshot_at(str(body["hr"]), raw["event_at"], path)
    return raw.with_columns(pl.lit(snapshot).alias(SNAPSHOT_AT))


def compute_snapshot_at(hr: str, fix_times: pl.Series, path: Path) -> datetime:
    """The instant of a snapshot: local time `hr` on the date closest to the newest fix."""
    try:
        hour, minute = (int(x) for x in hr.split(":"))
    except ValueError as exc:
        raise InputError(f"snapshot time hr={hr!r} is not HH:MM", where=str(path)) from exc
    fixes = fix_times.str.to_datetime("%Y-%m-%dT%H:%M:%S%.f%#z", strict=False, time_zone="UTC")
    newest = fixes.max()
    if not isinstance(newest, datetime):
        raise InputError("snapshot without any readable fix time (ta)", where=str(path))
    tz = ZoneInfo(OLHO_VIVO_TZ)
    local = newest.astimezone(tz)
    candidates = [
        datetime(d.year, d.month, d.day, hour, minute, tzinfo=tz)
        for d in (local.date() + timedelta(days=k) for k in (-1, 0, 1))
    ]
    return min(candidates, key=lambda c: abs((c - newest).total_seconds()))
