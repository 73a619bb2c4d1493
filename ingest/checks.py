"""Checks: a rule is an expression that flags bad rows with a reason; a batch is judged by them.

`compute_failing` reads a typed frame and a list of `Check`s and says which rows fail any;
`compute_rejections` returns the frame with the first failing rule of each row (`_field`,
`_reason`; null where every rule passed). A
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
    """A rule: rows where `bad` is true are rejected with `reason`, blaming `field`.

    Both are row-wise expressions (a row's verdict depends on that row alone: the reasons are
    computed on the failing rows only, `compute_failing`), and `reason` is never null where
    `bad` is true."""

    field: str | None
    bad: pl.Expr
    reason: str | pl.Expr  # an expression: a reason per row


def compute_failing(typed: pl.DataFrame, checks: Sequence[Check]) -> pl.Series:
    """Whether each row of `typed` fails any of `checks`: one pass of boolean ORs, cheaper
    than naming the first failing rule of every row (`compute_rejections`), which a batch
    then needs for its failing rows only (a null verdict passes, as in a `when`)."""
    if not checks:
        return pl.Series("_failing", [False] * typed.height, dtype=pl.Boolean)
    verdict = pl.any_horizontal(check.bad for check in checks).fill_null(False)
    # with_columns: a rule that is a literal (a missing column) is broadcast to every row
    return typed.with_columns(verdict.alias("_failing"))["_failing"]


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
