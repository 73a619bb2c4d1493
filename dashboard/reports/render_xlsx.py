"""XLSX: one sheet per report table (header = the pt-BR labels, then raw values with a
Brazilian display format). Byte-identical for the same report: fixed document dates."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Any

import xlsxwriter

from core.texts import gettext as _
from dashboard.reports.model import Col, ReportData

FIXED_CREATED = datetime(2000, 1, 1)
"""Document date written into every workbook, so regenerating gives the same bytes."""


def _num_format(col: Col) -> str | None:
    if col.kind == "integer":
        return "#,##0"
    if col.kind == "number":
        return "#,##0" + ("." + "0" * col.decimals if col.decimals else "")
    if col.kind == "percent":
        return "0.0%"
    if col.kind == "date":
        return "dd/mm/yyyy"
    if col.kind == "month":
        return "mm/yyyy"
    return None


def to_xlsx(report: ReportData, path: str | Path) -> Path:
    """Write `report` as an XLSX workbook at `path` (one sheet per table)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    workbook = xlsxwriter.Workbook(str(path), {"remove_timezone": True})
    workbook.set_properties(
        {
            "title": report.title,
            "subject": report.subtitle,
            "author": "Pontual",
            "comments": _("input hash {hash}", hash=report.input_hash),
            "created": FIXED_CREATED,
        }
    )
    header = workbook.add_format({"bold": True, "text_wrap": True, "valign": "top"})
    formats: dict[str, Any] = {}
    for name, table in report.tables.items():
        sheet = workbook.add_worksheet(name)
        data = table.data
        for j, col in enumerate(table.columns):
            sheet.write(0, j, col.label, header)
            fmt_text = _num_format(col)
            fmt = None
            if fmt_text is not None:
                fmt = formats.setdefault(fmt_text, workbook.add_format({"num_format": fmt_text}))
            values = data[col.name].to_list()
            sheet.write_column(1, j, values, fmt)
            width = max([len(col.label)] + [len(str(v)) for v in values[:200]])
            sheet.set_column(j, j, min(60, max(8, width + 2)))
        sheet.freeze_panes(1, 0)
    workbook.close()
    return path
