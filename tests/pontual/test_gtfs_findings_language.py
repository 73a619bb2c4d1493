"""GTFS findings in the CLI's language: every message the validator writes on the bad-feed corpus
(ours and the canonical validator's real invalid feeds) has a pt-BR template, and the pt-BR
text carries no English; with PONTUAL_LANG=en they stay as written."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from core.errors import InputError
from gtfs.errors import GtfsIssue, errors_of
from gtfs.geography import GeographyLimits, check_stops_on_shapes
from gtfs.read import read_feed
from gtfs.schedule import build_geometry
from gtfs.validate import validate_feed
from pontual.messages import LANG_ENV, translate, translate_issue
from tests.conftest import shared_data

FIXTURES = Path(__file__).parents[1] / "fixtures"
OWN_FEEDS = sorted(
    p
    for folder in (FIXTURES / "gtfs", FIXTURES / "bad" / "gtfs")
    for p in folder.iterdir()
    if p.is_dir()
)
# Words that betray an English finding in pt-BR output (file and column names are GTFS's own).
ENGLISH = re.compile(
    r"\b(the|is|are|not|of|from|with|expected|missing|stop|trip|shape|file|line|row|cells?|"
    r"header|before|after|more|than|and|or|near|far|used|defined|duplicate)\b"
)
# GTFS's own names, quoted values and numbers are not English prose.
NAMES = re.compile(r"'[^']*'|\b[a-z]+(?:_[a-z]+)+\b|\b[a-z_]+\.txt\b|0x[0-9a-f]+|[A-Z]{2,}\S*")


def _findings(path: Path) -> list[GtfsIssue]:
    try:
        feed = read_feed(path)
    except InputError:
        return []
    limits = GeographyLimits()
    issues = validate_feed(feed, limits)
    if not errors_of(issues):
        issues += check_stops_on_shapes(build_geometry(feed).stop_times, feed, limits)
    return issues


def _assert_pt_br(issues: list[GtfsIssue]) -> None:
    assert issues, "the corpus must produce findings"
    for issue in issues:
        shown = translate(issue.message)
        assert shown != issue.message, f"no pt-BR template for: {issue.message}"
        prose = NAMES.sub(" ", shown)
        assert not ENGLISH.search(prose), f"English left in: {shown} (from {issue.message})"


def test_every_finding_of_our_corpus_is_in_pt_br(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(LANG_ENV, raising=False)
    _assert_pt_br([i for path in OWN_FEEDS for i in _findings(path)])


def test_every_finding_of_the_canonical_validators_invalid_feeds_is_in_pt_br(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv(LANG_ENV, raising=False)
    root = shared_data("gtfs_invalid_transitfeed")
    feeds = sorted(p for p in root.iterdir() if p.is_dir() or p.suffix == ".zip")
    _assert_pt_br([i for path in feeds for i in _findings(path)])


def test_a_distance_in_a_finding_is_written_with_pt_br_digits(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv(LANG_ENV, raising=False)
    text = (
        "stop 'S9' is 12.4 km from the nearest other stop of the feed (more than 5.0 km), "
        "too far to reach in its trips' times: misplaced?"
    )
    assert translate(text) == (
        "a parada 'S9' está a 12,4 km da parada mais próxima do feed (mais de 5,0 km), longe "
        "demais para ser alcançada nos horários das suas viagens: mal posicionada?"
    )


def test_a_refused_feeds_error_names_its_findings_in_pt_br(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv(LANG_ENV, raising=False)
    text = (
        "GTFS feed refused, 2 error(s): trips.txt, line 3, column route_id: 'R9' is not "
        "defined in routes.txt; stop_times.txt, line 7, column departure_time: "
        "departure_time before arrival_time"
    )
    assert translate(text) == (
        "feed GTFS recusado, 2 erro(s): trips.txt, linha 3, coluna route_id: 'R9' não está "
        "definido em routes.txt; stop_times.txt, linha 7, coluna departure_time: "
        "departure_time anterior a arrival_time"
    )
    assert translate_issue("stops.txt, line 2: required value missing") == (
        "stops.txt, linha 2: valor obrigatório ausente"
    )


def test_english_stays_english_by_setting(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(LANG_ENV, "en")
    issues = _findings(FIXTURES / "gtfs" / "undefined_route")
    assert issues
    assert all(translate(i.message) == i.message for i in issues)
