"""A file's layout is judged once: loaded (documented columns, a vendor mapping, common
aliases, any JSON layout) or refused with one message; never one quarantined row per line."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.errors import InputError
from core.store import Store
from gtfs.realtime import encode_feed, new_feed
from tests.conftest import FIXTURES
from tests.ingest.conftest import ingest_fixture

BAD = FIXTURES / "bad"


def _stored(store: Store) -> list[tuple]:
    return store.query(
        "SELECT vehicle_id, epoch(event_at)::BIGINT, lat, lon FROM vehicle_locations "
        "ORDER BY vehicle_id, event_at"
    ).rows()


def test_common_aliases_load_and_say_which_column_fed_which(store_path: Path) -> None:
    with Store.open(store_path) as store:
        counts = ingest_fixture(store, BAD / "avl_aliases_ts_epoch_seconds.csv", "avl")
        rows = _stored(store)
        speeds = store.query("SELECT speed_m_s, heading_deg FROM vehicle_locations ORDER BY 1")
    assert (counts.n_read, counts.n_accepted, counts.n_quarantined) == (3, 3, 0)
    assert rows[0] == ("101", 1772452800, -29.17, -51.52)
    assert sorted(speeds.rows()) == [(0.0, 0.0), (8.0, 90.0), (8.5, 92.0)]
    said = " ".join(counts.notes)
    assert "ts -> event_at, speed_mps -> speed_m_s, bearing -> heading_deg" in said
    assert "times read as epoch seconds" in said


def test_an_unknown_layout_is_refused_once_with_the_mapping_that_would_load_it(
    store_path: Path,
) -> None:
    with Store.open(store_path) as store, pytest.raises(InputError) as caught:
        ingest_fixture(store, BAD / "avl_layout_unknown_columns.csv", "avl")
    with Store.open(store_path) as store:
        n_quarantined = store.query("SELECT count(*) AS n FROM quarantine")["n"][0]
    err = caught.value
    assert "no column for vehicle_id, event_at, lat, lon" in err.what
    assert "Columns found: bus_no, when, y, x" in err.what
    assert err.hint is not None and 'kind = "avl"' in err.hint and "[columns]" in err.hint
    assert n_quarantined == 0


@pytest.mark.parametrize(
    ("name", "where_found"),
    [
        ("avl_json_array_pretty_printed.json", "(array)"),
        ("avl_json_object_holding_records.json", "(key 'vehicles')"),
    ],
)
def test_json_documents_are_read_whole(store_path: Path, name: str, where_found: str) -> None:
    with Store.open(store_path) as store:
        counts = ingest_fixture(store, BAD / name, "avl")
        rows = _stored(store)
    assert (counts.n_read, counts.n_accepted, counts.n_quarantined) == (2, 2, 0)
    assert rows == [("101", 1772452800, -29.17, -51.52), ("102", 1772452830, -29.18, -51.53)]
    assert f"JSON document: 2 records {where_found}" in counts.notes


def test_a_json_object_without_records_is_refused_once(store_path: Path) -> None:
    with Store.open(store_path) as store, pytest.raises(InputError, match="no single array"):
        ingest_fixture(store, BAD / "avl_json_object_without_records.json", "avl")


def test_a_file_read_as_zero_records_says_why(store_path: Path) -> None:
    with Store.open(store_path) as store:
        counts = ingest_fixture(store, BAD / "avl_header_only_no_records.csv", "avl")
    assert counts.n_read == 0
    assert "no records read: the file has a header line and no records" in counts.notes


def test_trip_updates_given_as_avl_are_refused_with_what_they_are(
    store_path: Path, tmp_path: Path
) -> None:
    feed = new_feed(1772452800)
    for i in range(3):
        entity = feed.entity.add()
        entity.id = f"T{i}"
        entity.trip_update.trip.trip_id = f"T{i}"
    pb = tmp_path / "TripUpdates.pb"
    pb.write_bytes(encode_feed(feed))
    with Store.open(store_path) as store, pytest.raises(InputError) as caught:
        ingest_fixture(store, pb, "avl")
    assert "GTFS-Realtime TripUpdates feed (3 trip updates, no vehicle positions)" in str(
        caught.value
    )


def test_gpx_routes_and_waypoints_are_counted_and_bad_clocks_refused(store_path: Path) -> None:
    with Store.open(store_path) as store:
        counts = ingest_fixture(store, BAD / "avl_gpx_routes_waypoints_and_bad_clock.gpx", "avl")
        reasons = store.query("SELECT record_key, reason FROM quarantine ORDER BY 1").rows()
    assert (counts.n_read, counts.n_accepted, counts.n_quarantined) == (3, 1, 2)
    assert "GPX: 1 route(s) (3 points) not loaded" in " ".join(counts.notes)
    assert "GPX: 2 waypoint(s) not loaded" in " ".join(counts.notes)
    assert reasons[0] == ("trk[0].seg[0].pt[0]", "event_at before 2000: a clock that was never set")
    assert reasons[1][0] == "trk[0].seg[0].pt[2]" and "in the future" in reasons[1][1]


def test_a_nameless_gpx_track_without_vehicle_gets_a_hint(store_path: Path) -> None:
    with Store.open(store_path) as store, pytest.raises(InputError) as caught:
        ingest_fixture(store, BAD / "avl_gpx_nameless_track_needs_vehicle.gpx", "avl")
    assert caught.value.hint is not None and "--vehicle" in caught.value.hint


def test_optional_columns_by_alias_and_unused_columns_named(
    store_path: Path, tmp_path: Path
) -> None:
    csv = tmp_path / "avl_documented_plus_route_and_odometer.csv"
    csv.write_text(
        "vehicle_id,event_at,lat,lon,route,odometer\n101,2026-03-02T12:00:00Z,-29.17,-51.52,R1,9\n"
    )
    with Store.open(store_path) as store:
        counts = ingest_fixture(store, csv, "avl")
        route = store.query("SELECT reported_route_id FROM vehicle_locations")["reported_route_id"]
    assert counts.n_accepted == 1 and route.to_list() == ["R1"]
    assert "columns taken by their common names: route -> reported_route_id" in counts.notes
    assert "columns not loaded (no place in the avl layout): odometer" in counts.notes
