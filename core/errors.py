"""One error hierarchy for every user-facing failure.

The CLI prints a `PontualError` as ``erro: <what>``, ``onde: <where>`` and ``dica: <hint>``
(pt-BR, from `pontual.messages`; English ids with PONTUAL_LANG=en), without a traceback, and
exits with code 2. Anything else is an internal error (exit 1). The texts here stay English:
they are the catalogue's message ids, translated at the command line's edge.
"""

from __future__ import annotations

from pathlib import Path


class PontualError(Exception):
    """A failure the user can act on: bad input, bad configuration, a refused operation.

    `what` says what went wrong and what was expected; `where` names the file, line and field
    (or key) when there is one; `hint` suggests the next step.
    """

    def __init__(self, what: str, *, where: str | None = None, hint: str | None = None) -> None:
        super().__init__(what)
        self.what = what
        self.where = where
        self.hint = hint

    def __str__(self) -> str:
        return f"{self.what} ({self.where})" if self.where else self.what


class ConfigError(PontualError):
    """Settings or command-line options that cannot be used."""


class ProfileError(ConfigError):
    """A regulation profile that is missing, malformed or out of range."""


class StoreError(PontualError):
    """The DuckDB store cannot be opened, migrated or written."""


class SchemaVersionError(StoreError):
    """The store was written by a newer Pontual than this one."""


class InputError(PontualError):
    """An input file or message that cannot be read as the format it claims to be."""


def where(path: str | Path | None = None, line: int | None = None, field: str | None = None) -> str:
    """Format a location as ``file, line N, field F`` (parts that are None are left out)."""
    parts: list[str] = []
    if path is not None:
        parts.append(str(path))
    if line is not None:
        parts.append(f"line {line}")
    if field is not None:
        parts.append(f"field {field}")
    return ", ".join(parts)
