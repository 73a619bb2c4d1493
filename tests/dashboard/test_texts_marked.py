"""No user-facing text of the dashboard or the reports escapes the catalogue (docs/adr/0106).

A text written straight into a Streamlit call, a chart's title, a table's header or a report's
heading shows in one language whatever `PONTUAL_LANG` says, and tests reading pt-BR pages do
not notice when it is pt-BR already. This walks the syntax tree of the pages and the report
builders and fails on a string literal (or an f-string with words of its own) in a place a
user reads that is not the argument of `_()` / `gettext` / `ngettext` / `N_`:

- the text arguments of Streamlit's display calls (`st.title("...")`, `col.metric("...")`,
  `st.sidebar.caption(f"...")`), and their `label=`, `title=`, `help=`, `placeholder=`;
- a `title=` of any call (Altair's axes, legends and charts, `st.Page`);
- the column names of a table a page shows (`.alias("...")`, `pl.Series("...", ...)`,
  `pl.lit("...")` inside `st.dataframe(...)` / `st.table(...)`);
- the report model's texts (`Col` header, `ReportTable` title and note, `Chart` title and axis,
  `Section` title and paragraphs, `Headline` label, `ReportData` / `finish_report` title,
  subtitle, summary and cover), and the overview's `Kpi` headline and page label.

A "word" is two letters or more; symbols, numbers, Markdown marks, Material icon names and the
few names that read the same in every language (`ALLOWED`) are not texts to translate.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SCANNED = (
    "dashboard/app.py",
    "dashboard/public_app.py",
    "dashboard/auth_ui.py",
    "dashboard/charts.py",
    "dashboard/maps.py",
    "dashboard/pages",
    "dashboard/reports",
)
MARKERS = {"_", "gettext", "ngettext", "N_"}

STREAMLIT_TEXT_CALLS = {
    # (text positions, as the calls take them)
    "title": (0,),
    "header": (0,),
    "subheader": (0,),
    "caption": (0,),
    "markdown": (0,),
    "write": (0,),
    "text": (0,),
    "info": (0,),
    "warning": (0,),
    "error": (0,),
    "success": (0,),
    "toast": (0,),
    "metric": (0,),
    "button": (0,),
    "download_button": (0,),
    "form_submit_button": (0,),
    "link_button": (0,),
    "page_link": (),
    "selectbox": (0,),
    "multiselect": (0,),
    "radio": (0,),
    "checkbox": (0,),
    "toggle": (0,),
    "slider": (0,),
    "select_slider": (0,),
    "text_input": (0,),
    "text_area": (0,),
    "number_input": (0,),
    "date_input": (0,),
    "time_input": (0,),
    "expander": (0,),
    "spinner": (0,),
    "tabs": (),
    "set_page_config": (),
}
TEXT_KEYWORDS = {"label", "title", "help", "placeholder", "page_title", "caption"}
TABLE_CALLS = {"dataframe", "table", "data_editor"}
REPORT_TEXTS = {
    # report model class: (text positions, text keywords)
    "Col": ((1,), {"label"}),
    "ReportTable": ((1,), {"title", "note"}),
    "Chart": ((0,), {"title", "y_label"}),
    "Section": ((0,), {"title", "paragraphs"}),
    "Headline": ((0,), {"label"}),
    "ReportData": ((1, 2), {"title", "subtitle", "summary", "cover"}),
    "finish_report": ((), {"title", "subtitle", "summary", "cover"}),
    # the overview's headline numbers: their headline and the label of the page explaining them
    "Kpi": ((1, 3), {"headline", "page_label"}),
}

WORD = re.compile(r"[^\W\d_]{2,}")
ALLOWED = {
    # names, abbreviations and codes that read the same in pt-BR and English
    "ICV",
    "IQS",
    "IPK",
    "IPKe",
    "GTFS",
    "GPS",
    "CSV",
    "XLSX",
    "PDF",
    "km",
    "pass./km",
    "UFITAS",
    "URM",
    "SHA-256",
    "kB",
    "Latitude",
    "Pontual",
    "Longitude",
}
"""Literals a page may show as written (whole literal, after stripping Markdown marks)."""


def _name(func: ast.expr) -> str:
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):
        return func.attr
    return ""


def _words(node: ast.expr) -> str | None:
    """The text of a literal (or of an f-string's own parts) when it has words to translate;
    None otherwise (not a literal, a marked call, symbols only, an allowed name)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        text = node.value
    elif isinstance(node, ast.JoinedStr):
        text = "".join(
            v.value for v in node.values if isinstance(v, ast.Constant) and isinstance(v.value, str)
        )
    elif isinstance(node, ast.Tuple | ast.List):
        found = [w for w in (_words(e) for e in node.elts) if w]
        return "; ".join(found) or None
    else:
        return None
    text = re.sub(r":material/[a-z_]+:", "", text)  # icons
    text = re.sub(r":[a-z]+\[", "[", text)  # coloured Markdown (:green[■])
    if text.strip(" *_`#:[]().,;·—-\n").strip() in ALLOWED:
        return None
    return text if WORD.search(text) else None


def _texts_of(call: ast.Call, positions: tuple[int, ...], keywords: set[str]) -> Iterator[str]:
    for i in positions:
        if i < len(call.args) and (found := _words(call.args[i])):
            yield found
    for kw in call.keywords:
        if kw.arg in keywords and (found := _words(kw.value)):
            yield found


def _table_headers(call: ast.Call) -> Iterator[str]:
    """Column names written as literals inside the frame a page shows."""
    for node in ast.walk(call):
        if not isinstance(node, ast.Call) or _name(node.func) in MARKERS:
            continue
        if _name(node.func) == "alias" and node.args and (found := _words(node.args[0])):
            yield found
        if _name(node.func) in ("Series", "lit") and node.args and (found := _words(node.args[0])):
            yield found


def _python_files() -> Iterator[Path]:
    for entry in SCANNED:
        path = ROOT / entry
        yield from sorted(path.rglob("*.py")) if path.is_dir() else [path]


def find_unmarked_texts() -> list[str]:
    """Every user-facing literal outside the catalogue, as 'file:line: text'."""
    found: list[str] = []
    for path in _python_files():
        where = str(path.relative_to(ROOT))
        for node in ast.walk(ast.parse(path.read_text(), filename=where)):
            if not isinstance(node, ast.Call):
                continue
            name = _name(node.func)
            texts: list[str] = []
            on_streamlit = isinstance(node.func, ast.Attribute)
            if on_streamlit and name in STREAMLIT_TEXT_CALLS:
                texts += _texts_of(node, STREAMLIT_TEXT_CALLS[name], TEXT_KEYWORDS)
            elif name in REPORT_TEXTS:
                texts += _texts_of(node, *REPORT_TEXTS[name])
            else:
                texts += _texts_of(node, (), {"title"})
            if on_streamlit and name in TABLE_CALLS:
                texts += _table_headers(node)
            found += [f"{where}:{node.lineno}: {text!r}" for text in texts]
    return found


def test_every_text_a_page_or_report_shows_is_marked() -> None:
    assert find_unmarked_texts() == []


def test_the_scan_finds_what_it_is_for(tmp_path: Path) -> None:
    """The scan itself: each kind of place, marked and not."""
    source = """
st.title("Linhas")
st.title(_("Lines"))
cols[0].metric(f"Pontualidade {x}", 1)
st.sidebar.caption(f"{a} · {b}")
st.caption(":green[■] " + _("on time"))
alt.X("value:Q", title="Share")
st.dataframe(frame.select(pl.col("a").alias("Linha"), pl.col("b").alias(_("Trips"))))
Col("n", "Viagens", "integer")
Col("n", _("Trips"), "integer")
st.page_link(page, label="Abrir", icon=":material/home:")
"""
    tree = ast.parse(source)
    calls = [n for n in ast.walk(tree) if isinstance(n, ast.Call)]
    flagged = set()
    for node in calls:
        name = _name(node.func)
        if isinstance(node.func, ast.Attribute) and name in STREAMLIT_TEXT_CALLS:
            flagged |= set(_texts_of(node, STREAMLIT_TEXT_CALLS[name], TEXT_KEYWORDS))
        elif name in REPORT_TEXTS:
            flagged |= set(_texts_of(node, *REPORT_TEXTS[name]))
        else:
            flagged |= set(_texts_of(node, (), {"title"}))
        if isinstance(node.func, ast.Attribute) and name in TABLE_CALLS:
            flagged |= set(_table_headers(node))
    assert flagged == {"Linhas", "Pontualidade ", "Share", "Linha", "Viagens", "Abrir"}
