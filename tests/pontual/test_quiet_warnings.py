"""`--quiet` hides progress and summaries, never data warnings (issue #22): they go to stderr."""

from __future__ import annotations

from pathlib import Path

import pytest

from pontual.cli import main
from tests.conftest import shared_data


def test_a_feed_with_missing_cells_warns_under_quiet(
    store_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    feed = shared_data("gtfs_invalid_transitfeed", "missing_row_cells")
    assert main(["--quiet", "--store", str(store_path), "gtfs", "load", str(feed)]) == 0
    captured = capsys.readouterr()
    assert captured.out == ""
    err = " ".join(captured.err.split())
    assert "problemas no GTFS" in err and "aviso" in err  # the table of the feed's warnings
