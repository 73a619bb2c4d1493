"""`pontual ingest inspections`: in-loco inspection records into `inspections`, with the rows
that break a rule in quarantine (issue 16: evidence for trips without GPS)."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from core.profile import load_profile
from core.store import Store
from ingest.files import ingest_file
from ingest.options import IngestOptions
from tests.conftest import FIXTURES

PROFILE = load_profile("bento-goncalves-2021")


def test_inspection_records_and_their_quarantine(store_path: Path) -> None:
    with Store.open(store_path) as store:
        counts = ingest_file(
            store,
            FIXTURES / "ingest" / "inspections.csv",
            "inspections",
            options=IngestOptions.model_validate({"source_tz": "America/Sao_Paulo"}),
            profile=PROFILE,
        )
        assert (counts.n_read, counts.n_accepted, counts.n_quarantined) == (5, 2, 3)
        rows = store.read("inspections").sort("inspection_id")
        assert rows["inspection_id"].to_list() == ["F1", "F2"]
        f1 = rows.row(0, named=True)
        # 08:40 in Bento Gonçalves is 11:40 UTC; "sim" is a yes
        assert f1["observed_at"] == datetime(2026, 3, 2, 11, 40, tzinfo=UTC)
        assert (f1["stop_id"], f1["vehicle_id"], f1["is_vehicle_seen"]) == ("P1", "101", True)
        assert rows.row(1, named=True)["is_vehicle_seen"] is False
        q = store.query("SELECT record_key, field, reason FROM quarantine ORDER BY record_key")
        assert q.rows() == [
            ("4", "stop_id", "no place: give stop_id, or lat and lon"),
            ("5", "vehicle_id", "nothing seen: give vehicle_id or route_id"),
            ("6", "lat", "lat outside -90..90"),
        ]
