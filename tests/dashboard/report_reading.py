"""Reading a built report back, as the report tests check it: its PDF's text, a headline
figure, whether a label and its value stand on one line of the PDF."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import polars as pl
import pytest

from dashboard.reports.model import ReportData


def pdf_text(path: Path) -> str:
    """The PDF's text laid out as on the page (poppler's pdftotext); skips without it."""
    if shutil.which("pdftotext") is None:
        pytest.skip("pdftotext (Debian poppler-utils, `make sysdeps`) is not installed")
    out = subprocess.run(
        ["pdftotext", "-layout", str(path), "-"], check=True, capture_output=True, text=True
    )
    return out.stdout


def pdf_word_boxes(path: Path) -> str:
    """Every word of the PDF with its page and box (poppler's `pdftotext -bbox`, as HTML);
    skips without it."""
    if shutil.which("pdftotext") is None:
        pytest.skip("pdftotext (Debian poppler-utils, `make sysdeps`) is not installed")
    out = subprocess.run(
        ["pdftotext", "-bbox", str(path), "-"], check=True, capture_output=True, text=True
    )
    return out.stdout


def headline(report: ReportData, label: str) -> object:
    """The value of the headline `label` (its text when it has no number)."""
    rows = report.table("resumo").frame.filter(pl.col("label") == label)
    assert rows.height == 1, label
    value, text = rows.row(0)[1:]
    return value if value is not None else text


def line_in(text: str, label: str, value: str) -> bool:
    """Whether the PDF text shows `value` on the same line as `label`, after it."""
    return any(label in ln and value in ln.split(label, 1)[1] for ln in text.splitlines())
