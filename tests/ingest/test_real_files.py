"""Every real AVL / fare file of ../shared/data loads with the expected counts, and again adds 0."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.profile import load_profile
from core.store import Store
from ingest.files import ingest_file
from ingest.options import IngestOptions
from ingest.writing import IngestCounts
from tests.conftest import shared_data

PROFILE = load_profile("bento-goncalves-2021")
KEY = b"k" * 32


def _load(
    store: Store, path: Path, kind: str, mapping: str | None = None, **opts: object
) -> IngestCounts:
    options = IngestOptions.model_validate(opts)
    return ingest_file(
        store, path, kind, options=options, profile=PROFILE, mapping=mapping, key=KEY
    )


@pytest.mark.parametrize(
    ("folder", "name", "kind", "mapping", "opts", "expected"),
    [
        # 20,777 GTFS-RT pings of 31 WMATA buses: the flattened layout is detected.
        ("avl_wmata_transittraj", "wmata_gtfsrt_021626.csv", "avl", None, {}, (20777, 20777, 0)),
        (
            "avl_tides_metrotransit_mn",
            "vehicle_locations_tides.csv",
            "avl",
            None,
            {"source_tz": "America/Chicago"},
            (1000, 1000, 0),
        ),
        ("gtfsrt_mbta_2024", "VehiclePositions.pb", "avl", None, {}, (650, 650, 0)),
        (
            "fare_sube_buenos_aires_urbantrips",
            "gps_amba_test.csv",
            "avl",
            "sube_gps",
            {},
            (24, 24, 0),
        ),
        (
            "fare_sube_buenos_aires_urbantrips",
            "transacciones_amba_test.csv",
            "fares",
            "sube",
            {},
            (29, 29, 0),
        ),
        # One row has "11/09/2019:07:05:00" for a time: quarantined.
        (
            "fare_sube_buenos_aires_urbantrips",
            "transacciones_amba_test_geocode.csv",
            "fares",
            "sube_geocoded",
            {},
            (27, 26, 1),
        ),
        # Olho Vivo: fixes more than 300 s older than the snapshot are stale.
        (
            "sp_olhovivo_positions_2026",
            "buses_positions_0909.json",
            "avl",
            None,
            {},
            (10501, 10499, 2),
        ),
        (
            "sp_olhovivo_positions_2026",
            "buses_positions_0911.json",
            "avl",
            None,
            {},
            (10489, 10482, 7),
        ),
        (
            "sp_olhovivo_positions_2026",
            "posicoes_onibus-2220.json",
            "avl",
            None,
            {},
            (6882, 6874, 8),
        ),
        (
            "sp_olhovivo_positions_2026",
            "posicoes_onibus-2224.json",
            "avl",
            None,
            {},
            (6800, 6794, 6),
        ),
        (
            "sp_olhovivo_positions_2026",
            "posicoes_onibus-202602150936.json",
            "avl",
            None,
            {},
            (5251, 5249, 2),
        ),
    ],
)
def test_real_file_loads(store_path, folder, name, kind, mapping, opts, expected) -> None:
    path = shared_data(folder, name)
    with Store.open(store_path) as store:
        counts = _load(store, path, kind, mapping, **opts)
        assert (counts.n_read, counts.n_accepted, counts.n_quarantined) == expected
        again = _load(store, path, kind, mapping, **opts)
        assert (again.n_accepted, again.n_duplicate) == (0, expected[1])
        assert store.count("quarantine") == expected[2]


def test_values_of_real_pings(store_path: Path) -> None:
    with Store.open(store_path) as store:
        _load(
            store,
            shared_data("avl_tides_metrotransit_mn", "vehicle_locations_tides.csv"),
            "avl",
            source_tz="America/Chicago",
        )
        # The raw export of the same ping says 2022-09-20T07:59:37.527Z (local 02:59:37 CDT).
        first = store.query(
            "SELECT event_at::VARCHAR, lat, lon FROM vehicle_locations WHERE vehicle_id = '2515' "
            "ORDER BY event_at LIMIT 1"
        ).row(0)
        assert first == ("2022-09-20 07:59:37+00", 44.98696, -93.20902)
        _load(store, shared_data("avl_wmata_transittraj", "wmata_gtfsrt_021626.csv"), "avl")
        row = store.query(
            "SELECT event_at::VARCHAR, reported_trip_id, reported_direction_id, reported_occupancy "
            "FROM vehicle_locations WHERE vehicle_id = '4582' AND event_at = to_timestamp(1771257515)"
        ).row(0)
        assert row == ("2026-02-16 15:58:35+00", "30095100", 1, "NO_DATA_AVAILABLE")
        _load(store, shared_data("sp_olhovivo_positions_2026", "buses_positions_0909.json"), "avl")
        sp = store.query(
            "SELECT reported_route_id, reported_trip_id FROM vehicle_locations "
            "WHERE vehicle_id = '32154'"
        ).row(0)
        assert sp == ("389", "273J-10-0")
        stale = store.query("SELECT raw_record FROM quarantine WHERE record_key = 'l[152].vs[2]'")
        assert '"event_at":"2025-12-16T10:40:12Z"' in stale.item()
