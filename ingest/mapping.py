"""Vendor column mappings: small TOML files that rename a vendor layout to the documented one.

A mapping (shipped in ``ingest/mappings/<name>.toml`` or any path) says, for each documented
column, which source column feeds it::

    kind = "avl"                      # avl, fares, vehicles, incidents, surveys, counts
    description = "TIDES vehicle_locations"
    time_format = "%Y-%m-%d %H:%M:%S" # optional strptime format of the (joined) time columns
    source_tz = "America/Chicago"     # optional zone of local times (the CLI option wins)

    [columns]                         # documented column = source column, or a list of source
    vehicle_id = "vehicle_id"         # columns joined with a space (a date and a time column);
    event_at = ["date", "timestamp"]  # an item "=text" is the literal text

    [constants]                       # documented column = fixed value
    fare_class = "full"

    [values.reported_occupancy]       # source value -> documented value ("*": anything else)
    "7" = "NOT_ACCEPTING_PASSENGERS"

Mappings whose source columns are all present in a file are also picked automatically when the
file lacks the documented columns (so the WMATA and TIDES files load without ``--map``).
"""

from __future__ import annotations

import tomllib
from importlib import resources
from pathlib import Path

import polars as pl
from pydantic import BaseModel, ConfigDict, ValidationError

from core.errors import ConfigError, InputError
from ingest.parsing import RAW_RECORD, READ_ERROR, RECORD_KEY, SNAPSHOT_AT

KINDS = ("avl", "fares", "vehicles", "incidents", "surveys", "counts")


class Mapping(BaseModel):
    """A vendor layout: documented column -> source column(s), constants and value maps."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = ""
    kind: str
    description: str = ""
    time_format: str | None = None
    source_tz: str | None = None
    columns: dict[str, str | list[str]]
    constants: dict[str, str | int | float | bool] = {}
    values: dict[str, dict[str, str]] = {}

    @property
    def source_columns(self) -> list[str]:
        """Every source column the mapping reads."""
        out: list[str] = []
        for src in self.columns.values():
            out += [src] if isinstance(src, str) else [c for c in src if not c.startswith("=")]
        return out


def mapping_dir() -> Path:
    return Path(str(resources.files("ingest") / "mappings"))


def shipped_mappings(kind: str | None = None) -> list[Mapping]:
    """The mappings shipped with Pontual (optionally of one kind), by name."""
    out = [read_mapping(p) for p in sorted(mapping_dir().glob("*.toml"))]
    return [m for m in out if kind is None or m.kind == kind]


def read_mapping(name_or_path: str | Path) -> Mapping:
    """Load a mapping by shipped name (``sube``) or path (``my/vendor.toml``)."""
    path = Path(name_or_path)
    if not path.suffix:
        path = mapping_dir() / f"{name_or_path}.toml"
    if not path.exists():
        names = ", ".join(p.stem for p in sorted(mapping_dir().glob("*.toml")))
        raise ConfigError(
            f"mapping {name_or_path!s} not found",
            where=str(path),
            hint=f"shipped mappings: {names}; or give the path of a .toml mapping",
        )
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
        mapping = Mapping.model_validate({"name": path.stem, **data})
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"mapping is not valid TOML: {exc}", where=str(path)) from exc
    except ValidationError as exc:
        first = exc.errors()[0]
        key = ".".join(str(p) for p in first["loc"])
        raise ConfigError(
            f"mapping key {key}: {first['msg']}",
            where=f"{path}, key {key}",
            hint="see ingest/README.md for the mapping format",
        ) from exc
    if mapping.kind not in KINDS:
        raise ConfigError(
            f"mapping kind {mapping.kind!r} unknown, expected one of {', '.join(KINDS)}",
            where=f"{path}, key kind",
        )
    return mapping


def to_documented(raw: pl.DataFrame, mapping: Mapping, *, source: str) -> pl.DataFrame:
    """`raw` (vendor columns, as strings) renamed and recoded to the documented columns.

    Keeps `record_key`, `raw_record`, `read_error` and `snapshot_at` when present. A source column the file
    lacks is an InputError naming it.
    """
    missing = [c for c in mapping.source_columns if c not in raw.columns]
    if missing:
        raise InputError(
            f"the file lacks the column(s) {missing} that mapping {mapping.name!r} reads",
            where=source,
            hint=f"its columns are {raw.columns[:20]}; pick another --map or fix the mapping",
        )
    exprs: list[pl.Expr] = []
    for target, src in mapping.columns.items():
        if isinstance(src, str):
            expr = pl.col(src)
        else:
            parts = [pl.lit(c[1:]) if c.startswith("=") else pl.col(c).cast(pl.String) for c in src]
            expr = pl.concat_str(parts, separator=" ")
        recode = mapping.values.get(target)
        if recode:
            fallback = recode.get("*")
            pairs = {k: v for k, v in recode.items() if k != "*"}
            text = expr.cast(pl.String).str.strip_chars()
            expr = text.replace_strict(
                pairs,
                default=pl.lit(fallback) if fallback is not None else text,
                return_dtype=pl.String,
            )
        exprs.append(expr.alias(target))
    exprs += [pl.lit(v).alias(k) for k, v in mapping.constants.items() if k not in mapping.columns]
    keep = [
        pl.col(c) for c in (RECORD_KEY, RAW_RECORD, READ_ERROR, SNAPSHOT_AT) if c in raw.columns
    ]
    return raw.select(*keep, *exprs)


def detect_mapping(columns: list[str], kind: str, documented: list[str]) -> Mapping | None:
    """None when `columns` already hold the documented set; else the one shipped mapping of
    `kind` whose source columns are all present (the first by name when several fit)."""
    required = [
        c for c in documented if c in ("vehicle_id", "event_at", "lat", "lon", "transaction_id")
    ]
    if all(c in columns for c in required):
        return None
    for mapping in shipped_mappings(kind):
        if all(c in columns for c in mapping.source_columns):
            return mapping
    return None
