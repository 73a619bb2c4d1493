"""`make` installs from `requirements.lock` (the versions the suite was last run with): every
dependency of pyproject.toml, the dev and bench extras included, is pinned there exactly."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parents[2]


def test_every_dependency_is_pinned_in_the_lock() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    wanted = [*project["dependencies"]]
    for extra in ("dev", "bench"):
        wanted += project["optional-dependencies"].get(extra, [])
    lines = [
        line.strip()
        for line in (ROOT / "requirements.lock").read_text().splitlines()
        if line.strip() and not line.startswith("#")
    ]
    assert all(re.fullmatch(r"[A-Za-z0-9_.\-\[\],]+==[^=\s]+", line) for line in lines), [
        line for line in lines if "==" not in line
    ]
    pinned = {canonicalize_name(line.split("==")[0]): line.split("==")[1] for line in lines}
    missing = []
    for text in wanted:
        req = Requirement(text)
        version = pinned.get(canonicalize_name(req.name))
        if version is None or not req.specifier.contains(version, prereleases=True):
            missing.append(text)
    # a dependency added to pyproject.toml without `make lock` (or a lock that breaks a bound)
    assert not missing, f"run `make lock`: {missing}"


def test_make_installs_from_the_lock() -> None:
    makefile = (ROOT / "Makefile").read_text()
    assert "-c $(LOCK) -e '.[dev,bench,spark]'" in makefile
    assert "\nlock: venv\n" in makefile
