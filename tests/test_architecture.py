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
