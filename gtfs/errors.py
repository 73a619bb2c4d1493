"""GTFS validation findings and the error that refuses a feed.

A `GtfsIssue` locates one finding (file, line, column) and says what was expected. Errors make
the load fail; warnings are listed and the load continues.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

import polars as pl

from core.errors import InputError

Severity = Literal["error", "warning"]
ERROR: Severity = "error"
WARNING: Severity = "warning"

# How many issues the error message names before "and N more".
_N_NAMED = 3


@dataclass(frozen=True)
class GtfsIssue:
    """One finding: `line` is the 1-based line of the file (1 = header), None for a whole file."""

    severity: Severity
    file: str
    line: int | None
    column: str | None
    message: str

    @property
    def is_error(self) -> bool:
        return self.severity == ERROR

    def location(self) -> str:
        parts = [self.file]
        if self.line is not None:
            parts.append(f"line {self.line}")
        if self.column is not None:
            parts.append(f"column {self.column}")
        return ", ".join(parts)

    def __str__(self) -> str:
        return f"{self.location()}: {self.message}"


def errors_of(issues: Iterable[GtfsIssue]) -> list[GtfsIssue]:
    return [i for i in issues if i.is_error]


def warnings_of(issues: Iterable[GtfsIssue]) -> list[GtfsIssue]:
    return [i for i in issues if not i.is_error]


def to_issues_frame(issues: Sequence[GtfsIssue]) -> pl.DataFrame:
    """Issues as a frame: severity, file, line (1-based, null for a whole file), column, message."""
    return pl.DataFrame(
        {
            "severity": [i.severity for i in issues],
            "file": [i.file for i in issues],
            "line": [i.line for i in issues],
            "column": [i.column for i in issues],
            "message": [i.message for i in issues],
        },
        schema={
            "severity": pl.String(),
            "file": pl.String(),
            "line": pl.Int64(),
            "column": pl.String(),
            "message": pl.String(),
        },
    )


class GtfsError(InputError):
    """A feed refused by validation; `issues` holds every error (warnings are not included)."""

    def __init__(self, issues: Sequence[GtfsIssue], *, source: str | None = None) -> None:
        errors = errors_of(issues) or list(issues)
        self.issues = errors
        first = errors[0] if errors else None
        named = "; ".join(str(i) for i in errors[:_N_NAMED])
        more = f"; and {len(errors) - _N_NAMED} more" if len(errors) > _N_NAMED else ""
        what = f"GTFS feed refused, {len(errors)} error(s): {named}{more}"
        where_ = None
        if first is not None:
            where_ = (f"{source}: " if source else "") + first.location()
        super().__init__(
            what,
            where=where_,
            hint="run `pontual gtfs validate PATH` for the full list; fix the feed and load it again",
        )
