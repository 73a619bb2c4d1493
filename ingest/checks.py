"""Checks: a rule is an expression that flags bad rows with a reason; a batch is judged by them.

`compute_rejections` reads a typed frame and a list of `Check`s and returns the frame with the
first failing rule of each row (`_field`, `_reason`; null where every rule passed). A
`JudgedBatch` is what validation returns and the writers take: the accepted rows, the
quarantine rows, and counts. Touches no store; knows no table (the rules are in `rules`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import polars as pl


@dataclass(frozen=True)
class Check:
    """A rule: rows where `bad` is true are rejected with `reason`, blaming `field`."""

    field: str | None
    bad: pl.Expr
    reason: str | pl.Expr  # an expression: a reason per row


def compute_rejections(typed: pl.DataFrame, checks: Sequence[Check]) -> pl.DataFrame:
    """`typed` with `_field` and `_reason`: the first failing rule of each row (null: passed)."""
    if not checks:
        return typed.with_columns(
            pl.lit(None, dtype=pl.String).alias("_field"),
            pl.lit(None, dtype=pl.String).alias("_reason"),
        )

    def field_of(check: Check) -> pl.Expr:
        return pl.lit(check.field, dtype=pl.String)

    def reason_of(check: Check) -> pl.Expr:
        return check.reason if isinstance(check.reason, pl.Expr) else pl.lit(check.reason)

    field_expr: Any = pl.when(checks[0].bad).then(field_of(checks[0]))
    reason_expr: Any = pl.when(checks[0].bad).then(reason_of(checks[0]))
    for check in checks[1:]:
        field_expr = field_expr.when(check.bad).then(field_of(check))
        reason_expr = reason_expr.when(check.bad).then(reason_of(check))
    return typed.with_columns(field_expr.alias("_field"), reason_expr.alias("_reason"))


@dataclass(frozen=True)
class JudgedBatch:
    """A validated batch, ready to write: the accepted rows (typed, in the target's columns
    plus helpers that the append drops), the quarantine rows, how many records were read, when
    its validation started (ingest and quarantine time) and notes on skipped rules."""

    target: str
    accepted: pl.DataFrame
    quarantined: pl.DataFrame
    n_read: int
    started_at: datetime
    notes: tuple[str, ...] = ()
