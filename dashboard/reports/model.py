"""What a report is made of: named tables (the numbers), sections (how the PDF reads them),
charts, headline figures and the reproducibility block. Renderers only format these."""

from __future__ import annotations

from dataclasses import dataclass, field

import polars as pl

from core.indicators import indicator

KINDS = ("text", "integer", "number", "percent", "date", "month", "bool", "code")
"""How a column is shown: text, integer (1.234), number (1.234,5), percent (97,3 %),
date (dd/mm/aaaa), month (a Date shown as mar/2026), bool (sim/não), code (an id, as is)."""


DATA_DECIMALS = 6
"""Decimals kept in the written tables: XLSX stores 15-16 significant digits, so a value with
more would not reopen equal; 6 decimals keep every figure exact to far below what is shown."""


@dataclass(frozen=True)
class Col:
    """A column of a report table: its name in the frame, pt-BR label and display kind."""

    name: str
    label: str
    kind: str = "text"
    decimals: int = 1

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"column {self.name}: unknown kind {self.kind!r}")


@dataclass(frozen=True)
class ReportTable:
    """One table: `name` is its sheet and CSV file name (ASCII, at most 31 characters)."""

    name: str
    title: str
    frame: pl.DataFrame
    columns: tuple[Col, ...]
    note: str | None = None

    def __post_init__(self) -> None:
        if len(self.name) > 31 or not self.name.replace("_", "").isalnum():
            raise ValueError(f"table name {self.name!r}: ASCII letters, digits, '_', <= 31")
        missing = [c.name for c in self.columns if c.name not in self.frame.columns]
        if missing:
            raise ValueError(f"table {self.name}: columns {missing} not in the frame")

    @property
    def data(self) -> pl.DataFrame:
        """The frame restricted to the declared columns, in order (what every format writes),
        decimals rounded to `DATA_DECIMALS` so CSV, XLSX and PDF carry the same numbers."""
        data = self.frame.select([c.name for c in self.columns])
        return data.with_columns(pl.col(pl.Float32, pl.Float64).round(DATA_DECIMALS))


@dataclass(frozen=True)
class Chart:
    """A bar or line chart of some columns of a table against one category column."""

    title: str
    table: str
    x: str
    ys: tuple[str, ...]
    kind: str = "bar"  # 'bar' or 'line'
    y_label: str = ""


@dataclass(frozen=True)
class Section:
    """A part of the PDF: a heading, paragraphs, then its tables and charts in order."""

    title: str
    paragraphs: tuple[str, ...] = ()
    tables: tuple[str, ...] = ()
    charts: tuple[Chart, ...] = ()


@dataclass(frozen=True)
class Headline:
    """A key figure shown at the top of the PDF: label, raw value and how to show it."""

    label: str
    value: float | int | str | bool | None
    kind: str = "number"
    decimals: int = 1


@dataclass(frozen=True)
class ReportData:
    """A whole report, ready for `to_pdf`, `to_xlsx` and `to_csv`."""

    kind: str  # 'semester', 'monthly' or 'annual'
    title: str
    subtitle: str
    file_stem: str
    headlines: tuple[Headline, ...]
    sections: tuple[Section, ...]
    tables: dict[str, ReportTable] = field(default_factory=dict)
    input_hash: str = ""
    timezone: str = "America/Sao_Paulo"
    summary: tuple[str, ...] = ()
    """Paragraphs shown on the first page, above the headline figures: the verdict and the
    caveats a reader must see before any number (PROVISÓRIO, indicativo)."""
    cover: tuple[tuple[str, str], ...] = ()
    """(label, value) rows of a cover page (the document, whom it judges, the period, the
    profile in force); none: the report starts with its title on the first page."""

    def table(self, name: str) -> ReportTable:
        return self.tables[name]


def to_indicator_kind(id: str) -> tuple[str, int]:
    """How a report shows an indicator of the catalogue (`core.indicators`): its column kind
    ('percent', 'integer' or 'number') and decimals."""
    found = indicator(id)
    if found is None:
        return "number", 1
    kind = {"percent": "percent", "count": "integer"}.get(found.format, "number")
    return kind, found.decimals


def indicator_col(id: str, label: str) -> Col:
    """A column holding the values of indicator `id`, shown as the catalogue says."""
    kind, decimals = to_indicator_kind(id)
    return Col(id, label, kind, decimals)


def indicator_headline(label: str, id: str, value: float | None) -> Headline:
    """A headline figure holding a value of indicator `id`, shown as the catalogue says."""
    kind, decimals = to_indicator_kind(id)
    return Headline(label, value, kind, decimals)
