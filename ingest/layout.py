"""A file's layout (its columns) against the documented column set: decided once per file.

A file whose header lacks a required documented column is not 20 000 bad records but one bad
layout. `resolve_layout` reads the header a reader found and either

- accepts it as is (the documented columns are there; an absent optional one may still be
  taken from its common alias, e.g. ``route`` for ``reported_route_id``),
- accepts it through a shipped vendor mapping whose source columns are all present,
- accepts it through the common aliases (`ALIASES`: ``ts``/``timestamp``/``time``/``datetime``
  for ``event_at``, ``latitude``/``longitude``, ``vehicle``, ``bearing``, ``speed``...), saying
  which column it took for which, or
- refuses it once (`InputError`, exit 2), listing the columns found, the ones expected and the
  mapping (a few TOML lines) that would load it.

Columns that feed nothing are named in a note ("columns not loaded"), never dropped unsaid.
Touches no store and reads no rows (except `describe_time_column`, on a first chunk).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import polars as pl

from core.errors import InputError
from ingest.mapping import Mapping, detect_mapping
from ingest.parsing import RAW_RECORD, READ_ERROR, RECORD_KEY, SNAPSHOT_AT

# Source column names taken for a documented column when the documented name is absent
# (compared lower-cased, blanks/dots/hyphens as underscores), most specific first.
ALIASES: dict[str, tuple[str, ...]] = {
    "vehicle_id": (
        "vehicle",
        "vehicleid",
        "vehicle_ref",
        "vehicle_number",
        "bus_id",
        "bus",
        "veiculo",
        "prefixo",
        "vehicle_vehicle_id",
    ),
    "event_at": (
        "ts",
        "timestamp",
        "time",
        "datetime",
        "date_time",
        "event_time",
        "event_timestamp",
        "recorded_at",
        "gps_time",
        "fix_time",
        "data_hora",
    ),
    "lat": ("latitude", "lat_deg", "y_lat"),
    "lon": ("longitude", "lng", "long", "lon_deg", "x_lon"),
    "speed_m_s": ("speed", "speed_mps", "speed_ms", "velocity_m_s"),
    "heading_deg": ("bearing", "heading", "course", "bearing_deg"),
    "reported_trip_id": ("trip_id", "trip"),
    "reported_route_id": ("route_id", "route", "line", "linha"),
    "reported_direction_id": ("direction_id", "direction"),
    "card_id": ("card", "card_number", "card_no", "cartao"),
    "amount": ("fare", "fare_amount", "value", "valor"),
    "route_id": ("route", "line", "linha"),
}

# Documented columns a record cannot do without, per kind, that the file's header must give
# (fares derive an absent transaction_id from card, time and vehicle).
_DERIVED = {"fares": ("transaction_id",)}

_BOOKKEEPING = (RECORD_KEY, RAW_RECORD, READ_ERROR, SNAPSHOT_AT)


@dataclass(frozen=True)
class Layout:
    """How a file's columns feed the documented ones.

    `mapping`: the mapping to apply (None: the documented columns as they are); `notes`: what
    was decided, for the user (a detected mapping, the aliases taken).
    """

    mapping: Mapping | None
    notes: tuple[str, ...] = ()


def _norm(name: str) -> str:
    return name.strip().lower().replace(" ", "_").replace(".", "_").replace("-", "_")


def required_columns(kind: str, documented: Sequence[str], required: Sequence[str]) -> list[str]:
    """The documented columns the header must give for `kind` (the non-nullable ones, less
    the derived)."""
    derived = _DERIVED.get(kind, ())
    return [c for c in documented if c in required and c not in derived]


def resolve_layout(
    columns: Sequence[str],
    kind: str,
    documented: Sequence[str],
    required: Sequence[str],
    *,
    mapping: Mapping | None,
    source: str,
) -> Layout:
    """The layout of a file whose header holds `columns` (see the module docstring).

    `documented`: the documented input columns of `kind`; `required`: those that must be
    given (`required_columns`). An explicit `mapping` must give every required column (by a
    source column or a constant). Raises `InputError` (naming the file) when the layout cannot
    load; never reads a row.
    """
    found = [c for c in columns if c not in _BOOKKEEPING]
    if mapping is not None:
        gives = set(mapping.columns) | set(mapping.constants)
        lacking = [c for c in required if c not in gives]
        if lacking:
            raise InputError(
                f"mapping {mapping.name!r} gives no column for {', '.join(lacking)}",
                where=source,
                hint=f'add {lacking[0]} = "<source column>" under [columns] in the mapping',
            )
        return Layout(mapping, _unused(found, mapping.source_columns, kind))
    if not all(c in found for c in required):
        detected = detect_mapping(found, kind, list(documented))
        if detected is not None:
            said = f"layout of mapping {detected.name!r} ({detected.description})"
            return Layout(detected, (said, *_unused(found, detected.source_columns, kind)))
    taken = _take_aliases(found, documented)
    lacking = [c for c in required if c not in found and c not in taken]
    if lacking:
        raise refuse_layout(found, kind, documented, required, taken, source=source)
    used = [*[c for c in documented if c in found], *taken.values()]
    if not taken:
        return Layout(None, _unused(found, used, kind))
    columns_map: dict[str, str | list[str]] = {c: c for c in documented if c in found}
    columns_map.update(taken)
    alias_mapping = Mapping(
        name="aliases", kind=kind, description="common aliases", columns=columns_map
    )
    said = ", ".join(f"{src} -> {dst}" for dst, src in taken.items())
    notes = (f"columns taken by their common names: {said}", *_unused(found, used, kind))
    return Layout(alias_mapping, notes)


def _unused(found: Sequence[str], used: Sequence[str], kind: str) -> tuple[str, ...]:
    """The note naming the file's columns that feed nothing (none: no note); nameless
    columns (a spreadsheet's row index) are not named."""
    unused = [c for c in found if c not in used and c.strip()]
    if not unused:
        return ()
    shown = ", ".join(n if len(n) <= 40 else n[:40] + "..." for n in unused[:20])
    shown += " ..." if len(unused) > 20 else ""
    return (f"columns not loaded (no place in the {kind} layout): {shown}",)


def _take_aliases(found: Sequence[str], documented: Sequence[str]) -> dict[str, str]:
    """documented column -> the source column taken for it (documented names absent only;
    each source column taken once)."""
    by_norm = {_norm(c): c for c in reversed(found)}
    used = {c for c in found if c in documented}
    taken: dict[str, str] = {}
    for target in documented:
        if target in found:
            continue
        for alias in ALIASES.get(target, ()):
            src = by_norm.get(alias)
            if src is not None and src not in used:
                taken[target] = src
                used.add(src)
                break
    return taken


def refuse_layout(
    found: Sequence[str],
    kind: str,
    documented: Sequence[str],
    required: Sequence[str],
    taken: dict[str, str],
    *,
    source: str,
) -> InputError:
    """The one error of a file whose columns cannot feed the required documented ones: the
    columns found and expected, and the mapping that would load it."""
    lacking = [c for c in required if c not in found and c not in taken]
    lines = [f'kind = "{kind}"', "[columns]"]
    for target in required:
        src = target if target in found else taken.get(target)
        lines.append(f'{target} = "{src if src else "<column of " + target + ">"}"')
    # Names are cut: a file of one long line has a header of one 10 MB "name".
    shown = ", ".join(n if len(n) <= 40 else n[:40] + "..." for n in found[:30])
    shown += " ..." if len(found) > 30 else ""
    return InputError(
        f"the file's columns do not match the {kind} layout: no column for "
        f"{', '.join(lacking)}. Columns found: {shown or '(none)'}; expected: "
        f"{', '.join(required)} (optional: "
        f"{', '.join(c for c in documented if c not in required)})",
        where=source,
        hint="save this mapping as vendor.toml and pass --map vendor.toml:\n    "
        + "\n    ".join(lines),
    )


def describe_time_column(values: pl.Series) -> str | None:
    """How a raw time column is written, from its first non-empty value: "epoch seconds",
    "epoch milliseconds", "ISO 8601 with offset", "ISO 8601 local time" (None: unknown)."""
    text = values.cast(pl.String).drop_nulls().str.strip_chars()
    text = text.filter(text != "")
    if text.len() == 0:
        return None
    first = str(text[0])
    if first.replace(".", "", 1).isdigit():
        digits = len(first.split(".")[0])
        return "epoch milliseconds" if digits >= 12 else "epoch seconds"
    if len(first) >= 10 and first[4] == "-" and first[7] == "-":
        tail = first[10:]
        has_offset = tail.endswith(("Z", "z")) or ("+" in tail) or ("-" in tail)
        return "ISO 8601 with offset" if has_offset else "ISO 8601 local time"
    return None
