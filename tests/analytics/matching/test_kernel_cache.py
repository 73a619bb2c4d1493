"""The compiled kernels cache into the user cache folder, and the cold cache is announced.

Each check runs a fresh interpreter: numba fixes a kernel's cache folder when it decorates it,
so the folder has to be chosen before the kernel modules are imported.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from core.kernel_cache import (
    CACHE_ENV,
    COLD_MESSAGE,
    NUMBA_CACHE_ENV,
    resolve_cache_dir,
)

ROOT = Path(__file__).resolve().parents[3]

# Compiles one small kernel of the spatial grid (a second or two) and reports the cache state
# of that kernel before and after, and the folder.
PROBE = """
import numpy as np
from analytics.matching import shape_grid
from core import kernel_cache
kernel = [shape_grid._slot]
print("before", kernel_cache.is_cache_cold(kernel))
shape_grid._slot(np.int64(12345), 97)
print("after", kernel_cache.is_cache_cold(kernel))
print("dir", kernel_cache.CACHE_DIR)
"""


def clean_env(**extra: str) -> dict[str, str]:
    """This environment without the cache variables (this very process set NUMBA_CACHE_DIR
    when it imported the kernels), plus `extra`."""
    env = {k: v for k, v in os.environ.items() if k not in (CACHE_ENV, NUMBA_CACHE_ENV)}
    env["PYTHONPATH"] = str(ROOT)
    return {**env, **extra}


def run_probe(code: str, env: dict[str, str]) -> dict[str, str]:
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True, cwd=ROOT
    )
    return dict(line.split(" ", 1) for line in result.stdout.splitlines())


def test_cache_folder_order(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv(NUMBA_CACHE_ENV, raising=False)
    monkeypatch.delenv(CACHE_ENV, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert resolve_cache_dir() == tmp_path / "xdg" / "pontual" / "numba"
    monkeypatch.setenv(CACHE_ENV, str(tmp_path / "root"))
    assert resolve_cache_dir() == tmp_path / "root" / "numba"
    monkeypatch.setenv(NUMBA_CACHE_ENV, str(tmp_path / "numba-own"))
    assert resolve_cache_dir() == tmp_path / "numba-own"


@pytest.mark.slow  # compiles in a fresh process with an empty cache
def test_kernels_cache_into_the_pontual_cache_dir_and_load_from_it(tmp_path: Path) -> None:
    env = clean_env(**{CACHE_ENV: str(tmp_path)})
    first = run_probe(PROBE, env)
    assert first == {"before": "True", "after": "False", "dir": str(tmp_path / "numba")}
    # the machine code is in the user's folder (nothing needs the source folder to be writable)
    assert list((tmp_path / "numba").glob("*/shape_grid._slot-*.nbi"))
    # a second process finds it: warm from the start
    assert run_probe(PROBE, env)["before"] == "False"


@pytest.mark.slow  # compiles in a fresh process with an empty cache
def test_numba_cache_dir_is_respected(tmp_path: Path) -> None:
    env = clean_env(**{NUMBA_CACHE_ENV: str(tmp_path / "own"), CACHE_ENV: str(tmp_path / "x")})
    assert run_probe(PROBE, env)["dir"] == str(tmp_path / "own")
    assert list((tmp_path / "own").glob("*/shape_grid._slot-*.nbi"))
    assert not (tmp_path / "x").exists()


@pytest.mark.slow  # compiles in a fresh process with an empty cache
def test_cold_cache_is_announced_once_by_match(tmp_path: Path) -> None:
    env = clean_env(**{CACHE_ENV: str(tmp_path / "cache")})
    env.pop("PONTUAL_LANG", None)  # the default language
    store = str(tmp_path / "s.duckdb")
    cli = [sys.executable, "-m", "pontual", "--store", store]
    subprocess.run([*cli, "init"], env=env, check=True, capture_output=True, cwd=ROOT)
    # an empty store: nothing to match, so nothing compiles; the notice comes first anyway
    result = subprocess.run(
        [*cli, "match", "--from", "2026-03-02"], env=env, capture_output=True, text=True, cwd=ROOT
    )
    # in the chosen language (pt-BR by default): its English id is COLD_MESSAGE
    assert COLD_MESSAGE == "compiling the analytics kernels, once: ~30 s"
    said = "compilando as rotinas de análise, uma vez: ~30 s"
    assert result.stderr.splitlines()[0] == said
    assert result.stderr.count(said) == 1
    # --quiet: no notice
    quiet = subprocess.run(
        [*cli, "--quiet", "match", "--from", "2026-03-02"],
        env=env,
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert said not in quiet.stderr


@pytest.mark.slow  # compiles in a fresh process with an empty cache
def test_warm_cache_is_not_announced(tmp_path: Path) -> None:
    env = clean_env(**{CACHE_ENV: str(tmp_path)})
    code = PROBE + "print('announced', kernel_cache.announce_if_cold())\n"
    # only `_slot` is compiled, the other kernels are not: cold
    assert run_probe(code, env)["announced"] == "True"
    code = code.replace("kernel_cache.announce_if_cold()", "kernel_cache.is_cache_cold(kernel)")
    assert run_probe(code, env)["announced"] == "False"


# Imports every analytics module with kernels and says whether any would compile.
EVERY_KERNEL = """
from analytics.crowding import alightings, loads
from analytics.indices import tap_kernels
from analytics.matching import day
from core import kernel_cache
print("cold", kernel_cache.is_cache_cold())
"""


@pytest.mark.slow  # compiles every kernel in a fresh process with an empty cache
def test_warm_compiles_every_analytics_kernel(tmp_path: Path) -> None:
    env = clean_env(**{CACHE_ENV: str(tmp_path / "cache")})
    assert run_probe(EVERY_KERNEL, env)["cold"] == "True"
    cli = [sys.executable, "-m", "pontual", "--quiet", "warm"]
    done = subprocess.run(cli, env=env, capture_output=True, text=True, cwd=ROOT, check=True)
    # the warm-up city's results are not printed (the indices' tables were)
    assert "│" not in done.stdout
    # matching's, crowding's and the indices' tap kernels all load from the cache now
    assert run_probe(EVERY_KERNEL, env)["cold"] == "False"
    folders = sorted(p.name.split("_")[0] for p in (tmp_path / "cache" / "numba").iterdir())
    assert folders == ["crowding", "indices", "matching"]
