"""The reports the Avaliação anual page offers for download, built by `dashboard.reports`.

Which reports a year offers (`compute_report_offers`: the annual dossier of every operator and
lot graded that year, the two semester reports, the monthly report of every month with
trips), and the bytes of one of them as PDF or XLSX (`to_report_bytes`). No streamlit here: the
page builds on click and caches the bytes keyed on the snapshot's modification time.
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import polars as pl

from cases.db import CaseDB
from core.instants import to_utc_instant
from core.profile import Profile
from core.store import Store
from core.texts import gettext as _
from dashboard.queries.annual import read_annual_scopes
from dashboard.queries.filters import read_outcome_months

if TYPE_CHECKING:  # the builders and renderers (ReportLab) load on the first download
    from dashboard.reports.model import ReportData

FORMATS = {
    "pdf": "application/pdf",
    "xlsx": "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
}
"""Download formats and their MIME types."""


@dataclass(frozen=True)
class ReportOffer:
    """One downloadable report: `kind` ('annual', 'semester', 'monthly'), `period` (the year
    '2026', the half '2026-1' or the month '2026-03'), and for the annual dossier the `scope`
    ('operator' or 'lot') and `scope_id`."""

    kind: str
    period: str
    scope: str = ""
    scope_id: str = ""

    @property
    def label(self) -> str:
        """What the page calls it (pt-BR by default)."""
        if self.kind == "annual":
            who = _("operator (scope)") if self.scope == "operator" else _("lot (scope)")
            return _(
                "Annual renewal dossier {year} — {kind} {id}",
                year=self.period,
                kind=who,
                id=self.scope_id,
            )
        if self.kind == "semester":
            year, half = self.period.split("-")
            return _("Semester report H{half}/{year} (Anexo I, XLII)", half=half, year=year)
        year, month = self.period.split("-")
        return _("Monthly operations report {month}/{year} (art. 62-VII)", month=month, year=year)

    @property
    def file_stem(self) -> str:
        """The file name without extension, as `pontual report` names it."""
        if self.kind == "annual":
            return f"dossie-anual-{self.period}-{self.scope_id}"
        if self.kind == "semester":
            return f"relatorio-semestral-{self.period}"
        return f"relatorio-mensal-{self.period}"


def compute_report_offers(store: Store, year: int) -> list[ReportOffer]:
    """The reports of `year` the store can fill: the annual dossier per operator and lot with an
    `annual_grades` row, the semesters and months with trip outcomes."""
    offers = [
        ReportOffer("annual", str(year), scope, scope_id)
        for scope in ("operator", "lot")
        for scope_id in read_annual_scopes(store, year, scope)
    ]
    months = read_outcome_months(store, year)
    halves = sorted({f"{year}-{1 if int(m[5:]) <= 6 else 2}" for m in months})
    offers += [ReportOffer("semester", h) for h in halves]
    offers += [ReportOffer("monthly", m) for m in months]
    return offers


def build_offered_report(
    store: Store, offer: ReportOffer, profile: Profile, cases: CaseDB | None = None
) -> ReportData:
    """Build one offered report with the builders of `dashboard.reports` (no entered CSVs:
    maintenance costs and staff stay blank, as in `pontual report` without them); `cases`: the
    case database, for the cases by state and their deadlines."""
    from dashboard.reports.annual import build_annual_dossier
    from dashboard.reports.monthly import build_monthly_report
    from dashboard.reports.semester import build_semester_report

    if offer.kind == "annual":
        return build_annual_dossier(
            store,
            int(offer.period),
            profile,
            scope=offer.scope,
            scope_id=offer.scope_id,
            cases=cases,
        )
    if offer.kind == "semester":
        return build_semester_report(store, offer.period, profile, cases=cases)
    return build_monthly_report(store, offer.period, profile, cases=cases)


def to_report_bytes(report: ReportData, fmt: str) -> bytes:
    """The report rendered as `fmt` ('pdf' or 'xlsx'), as bytes."""
    from dashboard.reports.render_pdf import to_pdf
    from dashboard.reports.render_xlsx import to_xlsx

    render = {"pdf": to_pdf, "xlsx": to_xlsx}[fmt]
    with tempfile.TemporaryDirectory(prefix="pontual-report-") as tmp:
        return render(report, Path(tmp) / f"{report.file_stem}.{fmt}").read_bytes()


def read_written_reports(folder: Path) -> pl.DataFrame:
    """Reports `pontual report` already wrote in `folder`: `name`, `path`, `size_kb`,
    `modified_at` (UTC), newest first; empty when the folder does not exist."""
    files = sorted(
        [p for p in folder.glob("*") if p.suffix in (".pdf", ".xlsx")] if folder.is_dir() else []
    )
    return (
        pl.DataFrame(
            {
                "name": [p.name for p in files],
                "path": [str(p) for p in files],
                "size_kb": [p.stat().st_size / 1024 for p in files],
                "modified_at": [p.stat().st_mtime for p in files],
            },
            schema={
                "name": pl.String,
                "path": pl.String,
                "size_kb": pl.Float64,
                "modified_at": pl.Float64,
            },
        )
        .with_columns(to_utc_instant("modified_at").alias("modified_at"))
        .sort("modified_at", descending=True)
    )
