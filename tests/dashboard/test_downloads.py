"""The reports the Avaliação anual page offers, on a store built by the real pipeline: what is
offered, and that the bytes downloaded are the bytes `pontual report` writes."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from core.profile import load_profile
from core.store import open_snapshot
from dashboard.downloads import (
    ReportOffer,
    build_offered_report,
    compute_report_offers,
    read_written_reports,
    to_report_bytes,
)

ROOT = Path(__file__).resolve().parents[2]


def test_the_year_offers_every_graded_scope_and_month(pipeline_store: Path) -> None:
    with open_snapshot(pipeline_store) as store:
        offers = compute_report_offers(store, 2026)
        assert compute_report_offers(store, 2025) == []  # nothing graded nor run that year
        grades = store.query(
            "SELECT scope, scope_id FROM annual_grades WHERE year = 2026 "
            "AND scope IN ('operator', 'lot') ORDER BY scope DESC, scope_id"
        )
    annual = [(o.scope, o.scope_id) for o in offers if o.kind == "annual"]
    assert annual == list(grades.iter_rows())
    assert [o.period for o in offers if o.kind == "semester"] == ["2026-1"]
    assert [o.period for o in offers if o.kind == "monthly"] == ["2026-03"]


def test_downloaded_dossier_is_the_file_pontual_report_writes(
    pipeline_store: Path, tmp_path: Path
) -> None:
    out = tmp_path / "reports"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pontual",
            "--quiet",
            "--store",
            str(pipeline_store),
            "report",
            "annual",
            "--year",
            "2026",
            "--operator",
            "O1",
            "--out",
            str(out),
            "--format",
            "pdf",
            "--format",
            "xlsx",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    offer = ReportOffer("annual", "2026", "operator", "O1")
    from cases.db import CaseDB
    from core.settings import Settings

    # the dashboard reads the cases from the same case database as `pontual report`
    cases_url = Settings.resolve(str(pipeline_store)).cases_db_url
    with open_snapshot(pipeline_store) as store, CaseDB.open(cases_url) as db:
        report = build_offered_report(store, offer, load_profile("bento-goncalves-2021"), db)
    for fmt in ("pdf", "xlsx"):
        written = out / f"{offer.file_stem}.{fmt}"
        assert to_report_bytes(report, fmt) == written.read_bytes(), fmt
    assert to_report_bytes(report, "pdf").startswith(b"%PDF")
    listed = read_written_reports(out)
    assert set(listed["name"].to_list()) == {f"{offer.file_stem}.pdf", f"{offer.file_stem}.xlsx"}
    assert read_written_reports(tmp_path / "absent").is_empty()
