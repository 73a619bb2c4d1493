"""The corpus of bad inputs (tests/fixtures/bad/, one file per failure, named after it): a file
that cannot be read as what it claims is refused once, with its documented message and exit 2,
and nothing of it is stored; a file with bad records stores the good ones and quarantines the
others with a readable reason. See tests/fixtures/bad/README.md."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.store import Store
from ingest.kinds import KIND_TABLES
from pontual.cli import main
from tests.conftest import FIXTURES

BAD = FIXTURES / "bad"

REFUSED = {
    "avl_binary_data_not_a_gtfsrt_feed.pb": "not a GTFS-Realtime FeedMessage",
    "avl_binary_data_with_csv_extension.csv": "binary data, not text (a NUL byte at byte",
    "avl_binary_data_with_gpx_extension.gpx": "binary data, not text",
    "avl_duplicated_header_lat.csv": "the header names the column(s) lat more than once",
    "avl_empty_file.csv": "cannot read as CSV: empty CSV",
    "avl_gpx_nameless_track_needs_vehicle.gpx": "GPX track 1 has no name",
    "avl_json_array_element_not_object.json": "JSON array element 2 is not an object",
    "avl_json_lines_none_is_an_object.jsonl": "none of the first 3 lines is a JSON object",
    "avl_json_object_without_records.json": "JSON object with no single array of records",
    "avl_json_truncated_array.json": "not valid JSON: Unterminated string",
    "avl_latin1_not_utf8.csv": "not UTF-8 text: byte 0xe9 at byte 90 cannot be read",
    "avl_layout_unknown_columns.csv": "no column for vehicle_id, event_at, lat, lon",
    "avl_trip_updates_feed_has_no_positions.pb": "TripUpdates feed (3 trip updates",
    "avl_truncated_gpx_xml.gpx": "not a readable GPX file",
    "avl_truncated_parquet.parquet": "cannot read as Parquet",
    "avl_unclosed_quote.csv": "cannot read as CSV",
    "avl_utf16_with_bom.csv": "the file is UTF-16LE text, not UTF-8",
    "counts_layout_unknown_columns.csv": "no column for event_at, n_boardings, n_alightings",
    "fares_binary_data_with_jsonl_extension.jsonl": "binary data, not text",
    "fares_latin1_not_utf8.csv": "not UTF-8 text: byte 0xe9",
    "fares_layout_without_time_column.csv": "no column for event_at",
    "incidents_binary_data_with_csv_extension.csv": "binary data, not text",
    "inspections_truncated_parquet.parquet": "cannot read as Parquet",
    "surveys_latin1_not_utf8.csv": "not UTF-8 text: byte 0xe7",
    "vehicles_duplicated_header_plate.csv": "the header names the column(s) plate more than once",
    "vehicles_utf16_with_bom.csv": "the file is UTF-16LE text, not UTF-8",
}
"""Each refused file of the corpus and (a part of) its documented message."""


def _stored_rows(store_path: Path) -> dict[str, int]:
    with Store.open(store_path, read_only=True) as store:
        tables = [*KIND_TABLES.values(), "quarantine", "ingest_runs"]
        return {t: store.query(f'SELECT count(*) AS n FROM "{t}"')["n"][0] for t in tables}


def test_every_refused_file_gives_its_message_exit_2_and_stores_nothing(
    store_path: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("PONTUAL_LANG", "en")  # the messages as documented (their ids)
    # Generated, not committed: one line of 10 MB (no line break), as CSV and JSON lines.
    long_csv = tmp_path / "avl_single_line_of_10_mb.csv"
    long_csv.write_bytes(b"x" * (10 << 20))
    long_json = tmp_path / "avl_single_json_line_of_10_mb.jsonl"
    long_json.write_bytes(b'{"vehicle_id": "' + b"9" * (10 << 20) + b'"}\n')
    cases = {BAD / name: message for name, message in REFUSED.items()}
    cases[long_csv] = "the first line is longer than 1 MiB: not a header line"
    cases[long_json] = "no column for event_at, lat, lon"
    assert sorted(p.name for p in BAD.iterdir() if p.name in REFUSED) == sorted(REFUSED)
    main(["--store", str(store_path), "init"])
    capsys.readouterr()
    for path, message in cases.items():
        kind = path.name.split("_")[0]
        assert main(["--store", str(store_path), "ingest", kind, str(path)]) == 2, path.name
        err = " ".join(capsys.readouterr().err.split())
        assert message in err, (path.name, err)
        assert "internal error" not in err and "Traceback" not in err
        assert len(err) < 2_000, path.name  # the 10 MB line is not printed back
    assert set(_stored_rows(store_path).values()) == {0}


def test_bad_records_are_quarantined_with_a_readable_reason(
    store_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store = ["--store", str(store_path)]
    assert main([*store, "ingest", "avl", str(BAD / "avl_nan_inf_coordinates.csv")]) == 0
    assert main([*store, "ingest", "avl", str(BAD / "avl_truncated_last_json_line.jsonl")]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "4 lidos, 1 aceitos, 0 duplicados, 3 em quarentena" in out
    assert "2 lidos, 1 aceitos, 0 duplicados, 1 em quarentena" in out
    with Store.open(store_path, read_only=True) as db:
        rows = db.query(
            "SELECT regexp_extract(source, '[^/]+$') AS file, record_key, reason FROM quarantine "
            "ORDER BY file, record_key"
        ).rows()
    assert rows == [
        ("avl_nan_inf_coordinates.csv", "2", "cannot read lat as a number"),
        ("avl_nan_inf_coordinates.csv", "3", "cannot read lon as a number"),
        ("avl_nan_inf_coordinates.csv", "4", "cannot read lat as a number"),
        (
            "avl_truncated_last_json_line.jsonl",
            "2",
            "not valid JSON: expected one JSON object a line",
        ),
    ]
    assert main([*store, "quarantine"]) == 0  # readable through the CLI too
    assert "quarentena: 4 registros" in capsys.readouterr().out


def test_refusals_read_in_pt_br_by_default(
    store_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cases = {
        "avl_latin1_not_utf8.csv": "não é texto UTF-8: o byte 0xe9 na posição 90 não pode ser lido",
        "avl_trip_updates_feed_has_no_positions.pb": "um feed GTFS-Realtime TripUpdates "
        "(3 atualizações de viagem, nenhuma posição de veículo)",
        "avl_layout_unknown_columns.csv": "nenhuma coluna para vehicle_id, event_at, lat, lon",
        "avl_duplicated_header_lat.csv": "o cabeçalho nomeia a(s) coluna(s) lat mais de uma vez",
    }
    said = []
    for name, message in cases.items():
        kind = name.split("_")[0]
        assert main(["--store", str(store_path), "ingest", kind, str(BAD / name)]) == 2
        said.append(" ".join(capsys.readouterr().err.split()))
        assert message in said[-1], (name, said[-1])
    assert "salve este mapeamento como vendor.toml e passe --map vendor.toml" in said[2]


def test_a_file_broken_past_its_first_chunk_leaves_nothing_of_this_run(
    store_path: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("PONTUAL_LANG", "en")
    path = tmp_path / "avl_unclosed_quote_after_two_chunks.csv"
    rows = [f"10{i},2026-03-02T12:00:0{i}Z,-29.17,-51.52" for i in range(5)]
    path.write_text("vehicle_id,event_at,lat,lon\n" + "\n".join(rows[:2]) + "\n")
    store = ["--store", str(store_path)]
    assert main([*store, "ingest", "avl", str(path)]) == 0  # an earlier, good run: 2 rows
    broken = "\n".join([*rows[:4], "bad," + "x" * 3, '"' + rows[4]]) + "\n"
    path.write_text("vehicle_id,event_at,lat,lon\n" + broken)
    assert main([*store, "ingest", "avl", str(path), "--chunk-rows", "1"]) == 2
    err = " ".join(capsys.readouterr().err.split())
    assert "cannot read as CSV" in err
    # Polars' batched reader parses ahead in its own thread: on a loaded machine the broken line
    # may surface before the first chunk is handed over (nothing written, nothing to take back);
    # otherwise the chunks written are taken back. Either way the store holds nothing of it.
    assert "records read before it were taken back" in err or "records read" not in err
    counts = _stored_rows(store_path)
    assert (counts["vehicle_locations"], counts["quarantine"], counts["ingest_runs"]) == (2, 0, 1)
