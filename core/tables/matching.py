"""Derived tables of the matching jobs (declared with `Table(derived=True)`).

`MIGRATION` creates them; it is None until the first table lands.
"""

from core.migrations import Migration

MIGRATION: Migration | None = None
