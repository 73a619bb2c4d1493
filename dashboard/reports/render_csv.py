"""CSV: one file per report table, named after it, in two dialects.

- `to_csv` (the default, `--format csv`): for Brazilian spreadsheets. ';' separates fields,
  ',' is the decimal mark, dates read dd/mm/aaaa, the file is UTF-8 with a byte-order mark (so
  Excel in pt-BR opens accents and numbers right) and the headers are the tables' pt-BR labels.
  Numbers stay numbers (rounded as the table data, not formatted as text), so sums still work.
- `to_csv_raw` (`--format csv-raw`): for machines. ',' separates, '.' is the decimal mark,
  ISO dates, the column names of the frames, no byte-order mark.
"""

from __future__ import annotations

import io
from collections.abc import Callable
from pathlib import Path

import polars as pl

from dashboard.format import format_yes_no
from dashboard.reports.model import ReportData, ReportTable

BRAZILIAN_DATE = "%d/%m/%Y"


def _labelled(table: ReportTable) -> pl.DataFrame:
    """The table's data with its pt-BR labels as headers."""
    return table.data.rename({c.name: c.label for c in table.columns})


def to_brazilian_csv(frame: pl.DataFrame) -> bytes:
    """`frame` as CSV bytes for a pt-BR spreadsheet (see the module docstring): ';', ','
    decimals, dd/mm/aaaa dates, booleans as sim/não, UTF-8 with a byte-order mark; the headers
    are the frame's column names. The one writer of the reports' CSV files and the dashboard's
    table downloads (`dashboard.table_download`)."""
    out = io.BytesIO()
    frame.with_columns(format_yes_no(pl.col(pl.Boolean), None)).write_csv(
        out, separator=";", decimal_comma=True, include_bom=True, date_format=BRAZILIAN_DATE
    )
    return out.getvalue()


def _write_brazilian(frame: pl.DataFrame, path: Path) -> None:
    path.write_bytes(to_brazilian_csv(frame))


def _write_tables(
    report: ReportData, folder: str | Path, write: Callable[[ReportTable, Path], None]
) -> list[Path]:
    """`<folder>/<table>.csv` for every table of `report`, each written by `write`; the paths
    in order."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    paths = [folder / f"{name}.csv" for name in report.tables]
    for table, path in zip(report.tables.values(), paths, strict=True):
        write(table, path)
    return paths


def to_csv(report: ReportData, folder: str | Path) -> list[Path]:
    """Write every table of `report` as `<folder>/<table>.csv` for a pt-BR spreadsheet (see the
    module docstring); returns the paths in order."""
    return _write_tables(
        report,
        folder,
        lambda table, path: _write_brazilian(_labelled(table), path),
    )


def to_csv_raw(report: ReportData, folder: str | Path) -> list[Path]:
    """Write every table of `report` as `<folder>/<table>.csv` for machines: raw values, '.'
    decimals, ISO dates, the frames' column names; returns the paths in order."""
    return _write_tables(report, folder, lambda table, path: table.data.write_csv(path))
