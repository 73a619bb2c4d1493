"""The import direction of DESIGN.md, enforced with import-linter's contracts (pyproject.toml):
pontual -> dashboard -> analytics -> ingest -> gtfs -> core; nothing imports pontual; only the
dashboard imports streamlit."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_import_contracts_hold() -> None:
    exe = shutil.which("lint-imports", path=str(Path(sys.executable).parent)) or "lint-imports"
    result = subprocess.run([exe], cwd=ROOT, capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Contracts: " in result.stdout and " broken" in result.stdout
    assert "0 broken" in result.stdout


def test_architecture_doc_names_every_table_and_verb() -> None:
    """docs/ARCHITECTURE.md's "which command writes which table" stays true: every declared
    table and every verb of the CLI is named there."""
    import argparse

    import core.tables  # noqa: F401  (registers the declarations)
    from core.schema import TABLES
    from pontual.cli import build_parser

    text = (ROOT / "docs" / "ARCHITECTURE.md").read_text()
    missing = [
        name
        for name in TABLES
        if f"`{name}`" not in text and not (name.startswith("gtfs_") and "`gtfs_*`" in text)
    ]
    assert missing == []
    (verbs,) = [a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction)]
    hidden = {"warm"}  # a build step, not a task of the user
    assert [v for v in verbs.choices if v not in hidden and f"pontual {v}" not in text] == []
