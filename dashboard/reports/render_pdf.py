"""PDF (pt-BR, A4 landscape) with ReportLab: title, headline figures, then each section's
paragraphs, tables and bar/line charts; the input hash and page number in every footer.
Numbers as 1.234,5, dates as dd/mm/aaaa (`dashboard.format`). `invariant=1` fixes the
document's dates and id, so the same report gives byte-identical PDFs."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any
from xml.sax.saxutils import escape

from reportlab.graphics.charts.barcharts import VerticalBarChart
from reportlab.graphics.charts.legends import Legend
from reportlab.graphics.charts.linecharts import HorizontalLineChart
from reportlab.graphics.shapes import Drawing, String
from reportlab.lib import colors
from reportlab.lib.pagesizes import A4, landscape
from reportlab.lib.styles import ParagraphStyle, getSampleStyleSheet
from reportlab.lib.units import cm
from reportlab.pdfbase.pdfmetrics import stringWidth
from reportlab.platypus import (
    Flowable,
    KeepTogether,
    LongTable,
    PageBreak,
    Paragraph,
    SimpleDocTemplate,
    Spacer,
    Table,
    TableStyle,
)

from core.pt_br import to_yes_no
from core.texts import gettext as _
from dashboard.format import MISSING, to_date, to_integer, to_number, to_percent, to_period
from dashboard.reports.model import Chart, Col, Headline, ReportData, ReportTable

MAX_PDF_ROWS = 400
"""Rows of one table printed in the PDF; the XLSX and CSV always carry every row."""

PALETTE = (colors.HexColor("#1f5f8b"), colors.HexColor("#e07b39"), colors.HexColor("#4e9a06"))

_styles = getSampleStyleSheet()
TITLE = ParagraphStyle("t", parent=_styles["Title"], fontSize=18, leading=22)
SUBTITLE = ParagraphStyle("s", parent=_styles["Normal"], fontSize=10, leading=13)
HEADING = ParagraphStyle("h", parent=_styles["Heading2"], fontSize=13, spaceBefore=10)
TABLE_TITLE = ParagraphStyle("tt", parent=_styles["Heading4"], fontSize=9.5, spaceBefore=6)
BODY = ParagraphStyle("b", parent=_styles["Normal"], fontSize=9, leading=11.5)
NOTE = ParagraphStyle("n", parent=_styles["Normal"], fontSize=7.5, leading=9, textColor=colors.grey)
CELL = ParagraphStyle("c", parent=_styles["Normal"], fontSize=7, leading=8.4)
# A header wraps between words only: its column is made wide enough for its longest word.
HEADER_CELL = ParagraphStyle("hc", parent=CELL, fontName="Helvetica-Bold", splitLongWords=0)
_CELL_SIDE_PADDING = 6.0  # ReportLab's default left (and right) cell padding, points
_CELL_PADDING = 2 * _CELL_SIDE_PADDING
COVER_TITLE = ParagraphStyle("ct", parent=TITLE, fontSize=24, leading=30, spaceAfter=12)
COVER_LABEL = ParagraphStyle("cl", parent=_styles["Normal"], fontSize=10, leading=13)
CELL_CODE = ParagraphStyle("cc", parent=CELL, fontName="Courier", fontSize=6.5)


class CellParagraph(Paragraph):
    """A table cell's paragraph that breaks its lines once per width. ReportLab wraps a cell
    each time it measures a table (again for every remainder when a long table splits across
    pages) and once more to draw it; the lines depend only on the width, so the later wraps
    reuse the first one's."""

    _wrapped: tuple[float, float, float] | None = None

    def wrap(self, availWidth: float, availHeight: float) -> tuple[float, float]:
        if self._wrapped is not None and self._wrapped[0] == availWidth:
            return self._wrapped[1], self._wrapped[2]
        width, height = super().wrap(availWidth, availHeight)
        self._wrapped = (availWidth, width, height)
        return width, height


def format_value(value: Any, kind: str, decimals: int = 1) -> str:
    """A raw value as the PDF shows it (pt-BR)."""
    if value is None:
        return MISSING
    if kind == "integer":
        return to_integer(value)
    if kind == "number":
        return to_number(value, decimals)
    if kind == "percent":
        return to_percent(value, decimals)
    if kind == "date":
        return to_date(value)
    if kind == "month":
        return to_period(value.strftime("%Y-%m"))
    if kind == "bool":
        return to_yes_no(bool(value))
    return str(value)


def _headline_text(h: Headline) -> str:
    if isinstance(h.value, bool):
        return to_yes_no(h.value)
    if isinstance(h.value, str):
        return h.value
    return format_value(h.value, h.kind, h.decimals)


def build_headlines(headlines: tuple[Headline, ...]) -> Table:
    """The headline figures as a two-column grid of label and value."""
    cells = [
        [Paragraph(escape(h.label), CELL), Paragraph(f"<b>{escape(_headline_text(h))}</b>", CELL)]
        for h in headlines
    ]
    half = (len(cells) + 1) // 2
    left, right = cells[:half], cells[half:] + [["", ""]] * (half - len(cells[half:]))
    rows = [a + b for a, b in zip(left, right, strict=True)]
    grid = Table(rows, colWidths=[7.5 * cm, 4.5 * cm, 7.5 * cm, 4.5 * cm], hAlign="LEFT")
    grid.setStyle(
        TableStyle(
            [
                ("GRID", (0, 0), (-1, -1), 0.25, colors.lightgrey),
                ("BACKGROUND", (0, 0), (-1, -1), colors.HexColor("#f4f7fa")),
                ("VALIGN", (0, 0), (-1, -1), "MIDDLE"),
            ]
        )
    )
    return grid


def build_table(table: ReportTable, width: float, max_rows: int = MAX_PDF_ROWS) -> list[Flowable]:
    """A report table as its title, the grid (header repeated on each page) and notes."""
    data = table.data
    shown = data.head(max_rows)
    header = [Paragraph(escape(c.label), HEADER_CELL) for c in table.columns]
    weights = [1.0 if c.kind in ATOMIC_KINDS else 2.4 for c in table.columns]
    texts_by_column = [
        [format_value(v, c.kind, c.decimals) for v in shown[c.name].to_list()]
        for c in table.columns
    ]
    widest = [
        max(
            (stringWidth(t, *_font(c)) for t in texts),
            default=0.0,
        )
        for c, texts in zip(table.columns, texts_by_column, strict=True)
    ]
    widths = compute_column_widths(
        [c.label for c in table.columns],
        weights,
        width,
        widest=widest,
        unbroken=[c.kind in ATOMIC_KINDS for c in table.columns],
    )
    columns: list[list[str | Paragraph]] = []
    n_cut = 0
    style = [
        ("FONTSIZE", (0, 0), (-1, -1), 7),
        ("GRID", (0, 0), (-1, -1), 0.25, colors.lightgrey),
        ("BACKGROUND", (0, 0), (-1, 0), colors.HexColor("#dde6ee")),
        ("VALIGN", (0, 0), (-1, -1), "TOP"),
    ]
    for j, (col, col_width, texts) in enumerate(
        zip(table.columns, widths, texts_by_column, strict=True)
    ):
        if col.kind in ("integer", "number", "percent"):
            columns.append(list(texts))
            style.append(("ALIGN", (j, 1), (j, -1), "RIGHT"))
            continue
        cell = CELL_CODE if col.kind == "code" else CELL
        limit = cell_char_limit(col_width, cell)
        cut = [t if len(t) <= limit else shorten_cell(t, limit) for t in texts]
        n_cut += sum(a is not b for a, b in zip(cut, texts, strict=True))
        # the width a cell's paragraph is given, computed as ReportLab's table does
        room = col_width - _CELL_SIDE_PADDING - _CELL_SIDE_PADDING
        columns.append(to_cells(cut, cell, room))
        # a cell drawn as a plain string (one line) in the paragraph style's font and leading
        style += [
            ("FONTNAME", (j, 1), (j, -1), cell.fontName),
            ("FONTSIZE", (j, 1), (j, -1), cell.fontSize),
            ("LEADING", (j, 1), (j, -1), cell.leading),
        ]
    body = [list(row) for row in zip(*columns, strict=True)]
    grid = LongTable(
        [header, *body],
        colWidths=widths,
        repeatRows=1,
        hAlign="LEFT",
    )
    grid.setStyle(TableStyle(style))
    out: list[Flowable] = [Paragraph(escape(table.title), TABLE_TITLE)]
    if data.height == 0:
        out.append(Paragraph(_("No data in the period."), NOTE))
        return out
    out.append(grid)
    notes = []
    if data.height > shown.height:
        notes.append(
            _(
                "First {shown} of {total} rows; every row is in the XLSX workbook and the "
                "CSV files.",
                shown=to_integer(shown.height),
                total=to_integer(data.height),
            )
        )
    if n_cut:
        notes.append(
            _(
                "{n} cell(s) too long for a page end in \u2026; the XLSX workbook and the CSV "
                "files carry them whole.",
                n=to_integer(n_cut),
            )
        )
    if table.note:
        notes.append(table.note)
    out += [Paragraph(escape(n), NOTE) for n in notes]
    return out


_FIT_MARGIN = 0.01
"""Points a one-line cell's text keeps free of its room: a text that only just fits stays a
paragraph (ReportLab sums its words' widths, this the whole text's)."""


def to_cells(texts: list[str], cell: ParagraphStyle, room: float) -> list[str | Paragraph]:
    """A text column's cells: a text that one line holds (narrower than `room`, the column's
    width less the padding, and single-spaced: what a paragraph would lay out as that same one
    line) as the plain string, drawn at the paragraph's first baseline; in a monospaced font, a
    text without spaces (a list of ids) as the lines a paragraph breaks it into
    (`split_monospaced`); any other as a paragraph that wraps. A plain string skips the
    paragraph's markup parse and line breaking, which were most of the PDF's time."""
    cells: list[str | Paragraph] = []
    for text in texts:
        if text and " ".join(text.split()) == text:
            if stringWidth(text, cell.fontName, cell.fontSize) <= room - _FIT_MARGIN:
                cells.append(text)
                continue
            lines = split_monospaced(text, cell, room)
            if lines is not None:
                cells.append("\n".join(lines))
                continue
        cells.append(CellParagraph(escape(text), cell))
    return cells


MONOSPACED = frozenset({"Courier"})
"""Fonts whose glyphs are all one width (the code cells' Courier)."""


def split_monospaced(text: str, cell: ParagraphStyle, room: float) -> list[str] | None:
    """The lines ReportLab's paragraph breaks a word wider than `room` into, for a text without
    spaces in a monospaced font (None for any other text): its `_splitWord` fills each line
    with characters while their widths, added one by one, stay within `room`, so every line but
    the last holds the same count, found here with the same additions."""
    if cell.fontName not in MONOSPACED or any(c.isspace() for c in text):
        return None
    glyph = stringWidth("M", cell.fontName, cell.fontSize)
    if glyph > room or any(
        stringWidth(c, cell.fontName, cell.fontSize) != glyph for c in set(text)
    ):
        return None
    per_line, width = 0, 0.0
    while width + glyph <= room:
        width += glyph
        per_line += 1
    return [text[i : i + per_line] for i in range(0, len(text), per_line)]


MAX_CELL_LINES = 30
"""Lines of text one table cell may take in the PDF: a row taller than the page cannot be laid
out (ReportLab splits tables between rows, never inside one), and a cell listing thousands of
ping ids would be; such a cell is cut (`shorten_cell`) and the XLSX/CSV carry it whole."""


def cell_char_limit(col_width: float, style: ParagraphStyle) -> int:
    """Characters a cell of this column shows in at most MAX_CELL_LINES lines (a conservative
    count: the widest glyph of the digits and capitals decides the characters per line)."""
    glyph = stringWidth("M", style.fontName, style.fontSize)
    per_line = max(1, int((col_width - _CELL_PADDING) / glyph))
    return per_line * MAX_CELL_LINES


def shorten_cell(text: str, limit: int) -> str:
    """`text` cut to `limit` characters at a separator where there is one, ending in an
    ellipsis (\u2026)."""
    head = text[: max(1, limit - 1)]
    for sep in (",", ";", " "):
        at = head.rfind(sep)
        if at > limit // 2:
            head = head[: at + 1]
            break
    return head.rstrip() + "\u2026"


def compute_column_widths(
    labels: list[str],
    weights: list[float],
    width: float,
    *,
    widest: list[float] | None = None,
    unbroken: list[bool] | None = None,
) -> list[float]:
    """Column widths sharing `width` by `weights`. Each column is at least as wide as the
    longest word of its header (so no header breaks mid-word) and, where `unbroken` says so (a
    date, a number), as its widest cell (`widest`: the widest cell's text, points), so such a
    value never wraps. A column whose widest cell takes less than its share gets only what that
    cell needs, and what it leaves goes to the others by their weights (a column of one-letter
    groups does not keep a long text's share)."""
    n = len(labels)
    widest = widest or [0.0] * n
    unbroken = unbroken or [False] * n
    floors = [
        max(
            max(
                (stringWidth(w, HEADER_CELL.fontName, HEADER_CELL.fontSize) for w in label.split()),
                default=0.0,
            ),
            widest[i] + _FIT_SLACK if unbroken[i] else 0.0,
        )
        + _CELL_PADDING
        for i, label in enumerate(labels)
    ]
    # what a column can use at most: its widest cell on one line (never under its floor)
    caps = [
        max(floors[i], widest[i] + _FIT_SLACK + _CELL_PADDING) if any(widest) else width
        for i in range(n)
    ]
    widths = [0.0] * n
    open_ = set(range(n))
    room = width
    while open_:
        total = sum(weights[i] for i in open_)
        share = {i: room * weights[i] / total for i in open_}
        # a column whose share is under its floor gets the floor first, then one whose share
        # is over what its widest cell needs gets that; the rest share what is left
        fixed = {i: floors[i] for i in open_ if share[i] < floors[i]} or {
            i: caps[i] for i in open_ if share[i] > caps[i]
        }
        if not fixed:
            for i in open_:
                widths[i] = share[i]
            break
        for i, w in fixed.items():
            widths[i] = w
            room -= w
        open_ -= set(fixed)
    else:
        # every column has its floor or its widest cell: what is left goes by weight (a
        # negative remainder: too many columns for the page, the floors win, it overflows)
        spare = max(0.0, width - sum(widths))
        widths = [w + spare * weights[i] / sum(weights) for i, w in enumerate(widths)]
    return widths


_FIT_SLACK = 1.0
"""Points a column sized to its widest cell adds to it, so that the cell still fits one line
once `to_cells` keeps its `_FIT_MARGIN` and ReportLab adds the glyphs' widths one by one."""


ATOMIC_KINDS = frozenset({"integer", "number", "percent", "date", "month", "bool"})
"""Column kinds whose values are read whole: they take a narrow share and never wrap."""


def _font(column: Col) -> tuple[str, float]:
    """The font name and size a column's body cells are drawn in."""
    cell = CELL_CODE if column.kind == "code" else CELL
    return cell.fontName, cell.fontSize


def build_cover(report: ReportData) -> list[Flowable]:
    """The cover page: the document's title, what and whom it judges, and how to check it."""
    rows = [*report.cover, (_("Input hash"), report.input_hash)]
    grid = Table(
        [
            [Paragraph(f"<b>{escape(k)}</b>", COVER_LABEL), Paragraph(escape(v), COVER_LABEL)]
            for k, v in rows
        ],
        colWidths=[6 * cm, 16 * cm],
        hAlign="LEFT",
    )
    grid.setStyle(
        TableStyle(
            [
                ("LINEBELOW", (0, 0), (-1, -1), 0.25, colors.lightgrey),
                ("VALIGN", (0, 0), (-1, -1), "TOP"),
            ]
        )
    )
    return [
        Spacer(1, 3 * cm),
        Paragraph(escape(report.title), COVER_TITLE),
        Paragraph(escape(report.subtitle), SUBTITLE),
        Spacer(1, 1.2 * cm),
        grid,
        Spacer(1, 1.2 * cm),
        Paragraph(
            _(
                "This document's indices, verdicts and infractions are computed from the "
                "scheduled trips, the GPS positions and the ticketing; each number refers "
                "to the trips and positions that support it. Infractions are suggestions "
                "for an inspector to review, never automatic fines."
            ),
            BODY,
        ),
        PageBreak(),
    ]


def build_chart(chart: Chart, table: ReportTable, width: float) -> Flowable:
    """A bar or line chart of `chart.ys` against the category column `chart.x`."""
    data = table.data
    height = 6.5 * cm
    drawing = Drawing(width, height + 1.0 * cm)
    drawing.add(String(0, height + 0.55 * cm, chart.title, fontName="Helvetica-Bold", fontSize=9))
    if data.height == 0:
        drawing.add(String(0, height / 2, _("No data in the period."), fontSize=8))
        return drawing
    x_col = next(c for c in table.columns if c.name == chart.x)
    labels = [format_value(v, x_col.kind) for v in data[chart.x].to_list()]
    series = [[float(v) if v is not None else 0.0 for v in data[y].to_list()] for y in chart.ys]
    plot: Any = VerticalBarChart() if chart.kind == "bar" else HorizontalLineChart()
    plot.x, plot.y = 1.6 * cm, 0.9 * cm
    plot.width, plot.height = width - 6.5 * cm, height - 1.2 * cm
    plot.data = series
    plot.categoryAxis.categoryNames = labels
    plot.categoryAxis.labels.fontSize = 6.5
    plot.categoryAxis.labels.angle = 30 if len(labels) > 8 else 0
    plot.categoryAxis.labels.boxAnchor = "ne" if len(labels) > 8 else "n"
    plot.valueAxis.labels.fontSize = 6.5
    plot.valueAxis.valueMin = min(0.0, *[min(s) for s in series])
    decimals = 0 if max(max(s) for s in series) >= 100 else 2
    fmt: Callable[[float], str] = lambda v: to_number(v, decimals)  # noqa: E731
    if {c.kind for c in table.columns if c.name in chart.ys} == {"percent"}:
        # ratios (0-1) read as the tables show them: 80 %, not 0,80
        fmt = lambda v: to_percent(v, 0)  # noqa: E731
    plot.valueAxis.labelTextFormat = fmt
    for i in range(len(series)):
        color = PALETTE[i % len(PALETTE)]
        if chart.kind == "bar":
            plot.bars[i].fillColor = color
            plot.bars[i].strokeColor = None
        else:
            plot.lines[i].strokeColor = color
            plot.lines[i].strokeWidth = 1.5
    drawing.add(plot)
    labels_by_name = {c.name: c.label for c in table.columns}
    legend = Legend()
    legend.x, legend.y = width - 4.6 * cm, height - 0.4 * cm
    legend.fontSize = 7
    legend.colorNamePairs = [
        (PALETTE[i % len(PALETTE)], labels_by_name.get(y, y)) for i, y in enumerate(chart.ys)
    ]
    drawing.add(legend)
    if chart.y_label:
        drawing.add(String(0, 0.2 * cm, chart.y_label, fontSize=6.5, fillColor=colors.grey))
    return drawing


def to_pdf(report: ReportData, path: str | Path, max_rows: int = MAX_PDF_ROWS) -> Path:
    """Write `report` as a PDF at `path`."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    page = landscape(A4)
    doc = SimpleDocTemplate(
        str(path),
        pagesize=page,
        leftMargin=1.5 * cm,
        rightMargin=1.5 * cm,
        topMargin=1.3 * cm,
        bottomMargin=1.4 * cm,
        title=report.title,
        subject=report.subtitle,
        author="Pontual",
        creator="Pontual",
        invariant=1,
    )
    width = page[0] - 3.0 * cm
    story: list[Flowable] = [
        *(build_cover(report) if report.cover else []),
        Paragraph(escape(report.title), TITLE),
        Paragraph(escape(report.subtitle), SUBTITLE),
        *[Paragraph(f"<b>{escape(p)}</b>", BODY) for p in report.summary],
        Spacer(1, 0.4 * cm),
        build_headlines(report.headlines),
    ]
    for section in report.sections:
        story.append(Paragraph(escape(section.title), HEADING))
        story += [Paragraph(escape(p), BODY) for p in section.paragraphs]
        for name in section.tables:
            story += build_table(report.tables[name], width, max_rows)
        for chart in section.charts:
            story.append(
                KeepTogether(
                    [Spacer(1, 0.3 * cm), build_chart(chart, report.tables[chart.table], width)]
                )
            )

    def footer(canvas: Any, document: Any) -> None:
        canvas.saveState()
        canvas.setFont("Helvetica", 7)
        canvas.setFillColor(colors.grey)
        canvas.drawString(
            1.5 * cm,
            0.7 * cm,
            _("{title} — input hash {hash}", title=report.title, hash=report.input_hash),
        )
        canvas.drawRightString(page[0] - 1.5 * cm, 0.7 * cm, _("page {n}", n=document.page))
        canvas.restoreState()

    doc.build(story, onFirstPage=footer, onLaterPages=footer)
    return path
