"""Shared fixtures: the real data folder, temporary stores, the CLI runner."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SHARED_DATA = ROOT.parent / "shared" / "data"
FIXTURES = Path(__file__).resolve().parent / "fixtures"


def shared_data(*parts: str) -> Path:
    """A path under ../shared/data; skips the test when it is absent (fails under CI=true)."""
    path = SHARED_DATA.joinpath(*parts)
    if not path.exists():
        reason = f"real data not available: {path} (clone with ../shared/data beside the project)"
        if os.environ.get("CI") == "true":
            pytest.fail(reason + " — under CI=true an absent data folder is a failure")
        pytest.skip(reason)
    return path


@pytest.fixture(autouse=True)
def _main_module_kept() -> Iterator[None]:
    """Each test ends with the `__main__` it started with. Streamlit's script runner (AppTest)
    makes the script it runs `__main__` and leaves it there; a later test's spawn worker
    (matching's pool) then re-ran that script as its own main module, died before reading its
    start-up data, and left the pool's parent blocked writing it: a CI run hung 80 min so."""
    main = sys.modules["__main__"]
    yield
    sys.modules["__main__"] = main


@pytest.fixture
def store_path(tmp_path: Path) -> Path:
    return tmp_path / "store" / "pontual.duckdb"


# --- Test lanes -------------------------------------------------------------------------------
# Marks given here by what a test uses, so that no test file has to remember them (pyproject
# registers them; `make test-fast` deselects them all):
# - simulator: the test module uses the city simulator (it imports `sample_data` or the live
#   tests' simulated store), or the test needs the pipeline store (`pontual demo`);
# - broker: the test module starts a real Mosquitto (tests/mosquitto.py);
# - browser: the test module drives a real Chromium (dashboard.browser);
# - shared_data: the test, or one of its fixtures, calls `shared_data(...)` (../shared/data);
# - slow: the test module renders dashboard pages with Streamlit's AppTest (seconds a page);
#   otherwise a hand-written mark for long tests that are none of the above.
SIMULATOR_MODULES = ("sample_data", "tests.analytics.live.simulated")
SIMULATOR_FIXTURES = {"pipeline_store"}
BROKER_MODULES = ("tests.mosquitto",)
BROWSER_MODULES = ("dashboard.browser",)
APP_TEST_MODULES = ("streamlit.testing",)
LANE_MARKS = ("simulator", "browser", "broker", "shared_data", "slow")


def _imported_from(module: object) -> set[str]:
    """The modules the test module's global names come from (itself excluded)."""
    own = getattr(module, "__name__", "")
    origins = set()
    for value in vars(module).values():
        origin = getattr(value, "__module__", None) or getattr(value, "__name__", None)
        if isinstance(origin, str) and origin != own:
            origins.add(origin)
    return origins


def _uses(origins: set[str], prefixes: tuple[str, ...]) -> bool:
    return any(o == p or o.startswith(p + ".") for o in origins for p in prefixes)


def _calls_shared_data(item: pytest.Function) -> bool:
    import inspect

    funcs = [item.function]
    for defs in item._fixtureinfo.name2fixturedefs.values():
        funcs += [d.func for d in defs]
    for func in funcs:
        if not getattr(func, "__module__", "").startswith("tests"):
            continue
        try:
            if "shared_data(" in inspect.getsource(func):
                return True
        except (OSError, TypeError):
            continue
    return False


_ORIGINS: dict[str, set[str]] = {}


def pytest_itemcollected(item: pytest.Item) -> None:
    if not isinstance(item, pytest.Function):
        return
    module = item.module
    if module.__name__ not in _ORIGINS:
        _ORIGINS[module.__name__] = _imported_from(module)
    origins = _ORIGINS[module.__name__]
    if _uses(origins, SIMULATOR_MODULES) or SIMULATOR_FIXTURES & set(item.fixturenames):
        item.add_marker(pytest.mark.simulator)
    if _uses(origins, BROKER_MODULES):
        item.add_marker(pytest.mark.broker)
    if _uses(origins, BROWSER_MODULES):
        item.add_marker(pytest.mark.browser)
    if _uses(origins, APP_TEST_MODULES):
        item.add_marker(pytest.mark.slow)
    if _calls_shared_data(item):
        item.add_marker(pytest.mark.shared_data)
