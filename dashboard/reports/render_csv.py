"""CSV: one file per report table, named after it (raw values: '.' decimals, ISO dates)."""

from __future__ import annotations

from pathlib import Path

from dashboard.reports.model import ReportData


def to_csv(report: ReportData, folder: str | Path) -> list[Path]:
    """Write every table of `report` as `<folder>/<table>.csv`; returns the paths in order."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for name, table in report.tables.items():
        path = folder / f"{name}.csv"
        table.data.write_csv(path)
        paths.append(path)
    return paths
