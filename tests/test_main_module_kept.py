"""The suite's own guard (tests/conftest.py): a test that leaves another `__main__` behind, as
Streamlit's AppTest does, does not pass it to the next test, whose spawn workers would re-run it."""

from __future__ import annotations

import sys
import types

FAKE = types.ModuleType("__main__")
FAKE.__file__ = "/nonexistent/streamlit_script.py"


def test_a_test_leaves_another_main_behind() -> None:
    sys.modules["__main__"] = FAKE


def test_the_next_test_starts_with_its_own_main() -> None:
    assert sys.modules["__main__"] is not FAKE
    assert getattr(sys.modules["__main__"], "__file__", None) != FAKE.__file__
