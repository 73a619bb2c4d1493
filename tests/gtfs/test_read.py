"""Reading: encodings, line endings, quotes, extra columns, typing with located errors."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from gtfs.errors import GtfsError, errors_of, warnings_of
from gtfs.read import decode_text, read_feed, read_feed_bytes
from tests.conftest import FIXTURES

GTFS = FIXTURES / "gtfs"


def _tiny_files() -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in (GTFS / "tiny_feed").glob("*.txt")}


def test_tiny_feed_is_typed() -> None:
    feed = read_feed(GTFS / "tiny_feed")
    assert feed.issues == ()
    st = feed["stop_times"]
    assert st.schema["arrival_time"] == pl.Int32()
    t2 = st.filter(pl.col("trip_id") == "T2").sort("stop_sequence")
    assert t2["arrival_time"].to_list() == [
        23 * 3600 + 50 * 60,
        24 * 3600 + 5 * 60,
        24 * 3600 + 20 * 60,
    ]
    assert feed["calendar"]["start_date"][0].isoformat() == "2024-01-01"
    assert st["_line"].to_list()[:3] == [2, 3, 4]


def test_bom_crlf_quotes_and_extra_columns_read_like_plain_utf8() -> None:
    plain = read_feed(GTFS / "tiny_feed")
    odd = read_feed(GTFS / "bom_crlf_quoted_extra_columns")
    assert odd.issues == ()
    stops = odd["stops"]
    assert stops["stop_name"].to_list() == [
        'Rodoviária, plataforma "1"',
        "Via Del Vino",
        "São Roque",
    ]
    assert stops["x_custom"][0] == "abc"  # an extra column is kept as text and otherwise ignored
    assert odd["stop_times"].drop("_line").equals(plain["stop_times"].drop("_line"))


def test_latin1_feed_is_decoded_with_a_warning_and_no_mojibake() -> None:
    feed = read_feed(GTFS / "latin1_feed")
    assert errors_of(feed.issues) == []
    files = {w.file for w in warnings_of(feed.issues) if "Latin-1" in w.message}
    assert files == {"agency.txt", "stops.txt", "routes.txt"}  # the files with accents
    assert feed["stops"]["stop_name"].to_list()[2] == "São Roque"
    assert feed["agency"]["agency_name"][0] == "Transporte Coletivo de Bento Gonçalves"


def test_bytes_neither_utf8_nor_latin1_are_refused_with_their_line() -> None:
    raw, issues = decode_text("stops.txt", b"stop_id,stop_name\nA,ok\nB,bad \x81 byte\n")
    assert raw is None
    assert (issues[0].severity, issues[0].line) == ("error", 3)
    assert "invalid UTF-8 byte 0x81" in issues[0].message


def test_bad_time_names_line_and_column() -> None:
    feed = read_feed(GTFS / "bad_time")
    bad = errors_of(feed.issues)
    assert [(i.file, i.line, i.column) for i in bad] == [("stop_times.txt", 4, "arrival_time")]
    assert "'8h10' is not a time H:MM:SS" in bad[0].message


def test_midnight_wrap_is_read_past_24h_with_a_warning() -> None:
    files = _tiny_files()
    files["stop_times.txt"] = files["stop_times.txt"].replace(
        b"T2,24:05:00,24:05:00", b"T2,00:05:00,00:05:00"
    )
    files["stop_times.txt"] = files["stop_times.txt"].replace(
        b"T2,24:20:00,24:20:00", b"T2,00:20:00,00:20:00"
    )
    feed = read_feed_bytes(files)
    (w,) = feed.issues
    assert (w.severity, w.line) == ("warning", 6) and "midnight" in w.message
    t2 = feed["stop_times"].filter(pl.col("trip_id") == "T2").sort("stop_sequence")
    assert t2["departure_time"].to_list() == [85800, 86700, 87600]  # 23:50, 24:05, 24:20


def test_gtfs_error_message_names_the_first_errors() -> None:
    feed = read_feed(GTFS / "bad_time")
    err = GtfsError(list(feed.issues), source="feed.zip")
    assert "stop_times.txt, line 4, column arrival_time: '8h10' is not a time" in err.what
    assert err.where == "feed.zip: stop_times.txt, line 4, column arrival_time"


def test_zip_with_a_folder_inside_is_read(tmp_path: Path) -> None:
    import zipfile

    target = tmp_path / "feed.zip"
    with zipfile.ZipFile(target, "w") as zf:
        for p in (GTFS / "tiny_feed").glob("*.txt"):
            zf.write(p, f"tiny/{p.name}")
    feed = read_feed(target)
    assert feed["trips"].height == 5
    assert feed.sha256 == read_feed(GTFS / "tiny_feed").sha256


@pytest.mark.parametrize("name", ["stops.txt", "trips.txt"])
def test_required_file_with_header_only_is_an_error(name: str) -> None:
    files = _tiny_files()
    files[name] = files[name].split(b"\n", 1)[0] + b"\n"
    feed = read_feed_bytes(files)
    assert any(i.file == name and "no rows" in i.message for i in errors_of(feed.issues))
