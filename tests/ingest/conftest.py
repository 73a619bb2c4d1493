"""Shared pieces of the ingest tests: the fixture files, a fixed card-hashing key."""

from __future__ import annotations

from pathlib import Path

from core.profile import load_profile
from core.store import Store
from ingest.files import ingest_file
from ingest.options import IngestOptions
from ingest.writing import IngestCounts
from tests.conftest import FIXTURES

DATA = FIXTURES / "ingest"
KEY = bytes(range(32))
PROFILE = load_profile("bento-goncalves-2021")


def ingest_fixture(store: Store, name: str | Path, kind: str, **opts: object) -> IngestCounts:
    """Ingest the fixture file `name` (or a path) as `kind` with the options `opts`."""
    return ingest_file(
        store,
        DATA / name,
        kind,
        options=IngestOptions.model_validate(opts),
        profile=PROFILE,
        key=KEY,
    )
