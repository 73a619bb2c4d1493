"""Figures the operator enters (small CSVs given on the command line), validated.

- maintenance costs (semester report, BG Anexo I XLII): ``operator_id,month,item,cost_brl`` —
  one row per operator, month (YYYY-MM) and cost item (free text: 'peças', 'pneus', ...),
  cost in reais (>= 0);
- staff (monthly report, BG art. 62-VII): ``route_id,month,n_drivers,n_inspectors`` — drivers
  and inspectors involved in each line's operation in the month (whole numbers >= 0).

Every failure is an `InputError` naming the file, the line (as an editor numbers it, header =
line 1) and the field.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from pathlib import Path

import polars as pl

from core.errors import InputError, where

# field kinds: what a value must parse as, and the words of the error when it does not
_EXPECTED = {
    "id": "a non-empty id",
    "text": "a non-empty text",
    "month": "a month YYYY-MM",
    "count": "a whole number >= 0",
    "money": "an amount in reais >= 0 (decimal point, e.g. 1234.50)",
}

MAINTENANCE_FIELDS = (
    ("operator_id", "id"),
    ("month", "month"),
    ("item", "text"),
    ("cost_brl", "money"),
)
MAINTENANCE_KEY = ("operator_id", "month", "item")
STAFF_FIELDS = (
    ("route_id", "id"),
    ("month", "month"),
    ("n_drivers", "count"),
    ("n_inspectors", "count"),
)
STAFF_KEY = ("route_id", "month")


def _parsed(field: str, kind: str) -> pl.Expr:
    col = pl.col(field).str.strip_chars()
    if kind == "month":
        return col.str.to_date("%Y-%m", strict=False)
    if kind == "count":
        return col.cast(pl.Int64, strict=False)
    if kind == "money":
        return col.cast(pl.Float64, strict=False)
    return pl.when(col.str.len_chars() > 0).then(col)


def _is_bad(field: str, kind: str) -> pl.Expr:
    value = pl.col(f"_{field}")
    if kind == "money":
        return value.is_null() | value.is_nan() | (value < 0)
    if kind == "count":
        return value.is_null() | (value < 0)
    return value.is_null()


def read_entered_csv(
    path: str | Path, what: str, fields: Sequence[tuple[str, str]], key: Sequence[str]
) -> pl.DataFrame:
    """Read and check an entered CSV: the declared fields (month as the first day, a Date),
    one row per `key`. `what` names the file's content in the errors."""
    path = Path(path)
    header = ",".join(f for f, _ in fields)
    if not path.is_file():
        raise InputError(f"{what} file not found", where=str(path), hint=f"header: {header}")
    try:
        raw = pl.read_csv(path, infer_schema=False)
    except (OSError, pl.exceptions.ComputeError, pl.exceptions.NoDataError) as exc:
        raise InputError(
            f"cannot read the {what} CSV: {exc}", where=str(path), hint=f"header: {header}"
        ) from exc
    raw = raw.rename({c: c.strip() for c in raw.columns})
    missing = [f for f, _ in fields if f not in raw.columns]
    if missing:
        raise InputError(
            f"the {what} CSV lacks the column(s) {', '.join(missing)}; expected {header}",
            where=where(path, 1, missing[0]),
            hint=f"first line of the file: {header}",
        )
    frame = raw.with_row_index("_line", offset=2).with_columns(
        [_parsed(f, k).alias(f"_{f}") for f, k in fields]
    )
    for field, kind in fields:
        bad = frame.filter(_is_bad(field, kind))
        if bad.height:
            first = bad.row(0, named=True)
            raise InputError(
                f"invalid {field} {first[field]!r} in the {what} CSV: expected {_EXPECTED[kind]}",
                where=where(path, int(first["_line"]), field),
                hint=f"{bad.height} line(s) with this problem; header: {header}",
            )
    out = frame.select("_line", *[pl.col(f"_{f}").alias(f) for f, _ in fields])
    dup = out.filter(pl.struct(list(key)).is_duplicated()).sort("_line")
    if dup.height:
        first = dup.row(1, named=True)
        raise InputError(
            f"repeated {', '.join(key)} in the {what} CSV: "
            + ", ".join(f"{k}={first[k]}" for k in key)
            + " appears more than once",
            where=where(path, int(first["_line"]), key[-1]),
            hint="give one line per " + ", ".join(key),
        )
    return out.drop("_line").sort(list(key))


def read_maintenance_costs(path: str | Path) -> pl.DataFrame:
    """operator_id, month (Date, first day), item, cost_brl (reais) from the operator's CSV."""
    return read_entered_csv(path, "maintenance-cost", MAINTENANCE_FIELDS, MAINTENANCE_KEY)


def read_staff(path: str | Path) -> pl.DataFrame:
    """route_id, month (Date, first day), n_drivers, n_inspectors from the operator's CSV."""
    return read_entered_csv(path, "staff", STAFF_FIELDS, STAFF_KEY)


def compute_file_sha256(path: str | Path) -> str:
    """SHA-256 of a file's bytes (hex)."""
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()
