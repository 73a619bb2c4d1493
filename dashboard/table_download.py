"""A dashboard table with its own "Baixar CSV" button (issue 20).

Streamlit's built-in table toolbar export is off (`--client.disableDataExport`,
`dashboard.server`): it wrote ','-separated English numbers that a pt-BR spreadsheet misreads,
and bypassed the download audit. `show_table` draws the table and, under it, a button giving
the table as shown (its pt-BR headers, its column-config labels and order) as a CSV for Brazilian
spreadsheets, written by the reports' own writer (`dashboard.reports.render_csv`). The bytes are
built only when the button is clicked; `on_download` (the planners' app: the audit log, see
`dashboard.state.show_table`) is called then with the file name. The public app passes none: it
shows aggregates only and has no account to audit.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import partial
from typing import Any

import polars as pl
import streamlit as st

from core.texts import gettext as _
from dashboard.reports.render_csv import to_brazilian_csv

CSV_MIME = "text/csv"


def to_shown_frame(
    frame: pl.DataFrame,
    column_config: Mapping[str, Any] | None = None,
    column_order: list[str] | None = None,
) -> pl.DataFrame:
    """`frame` as `st.dataframe` shows it with `column_config` and `column_order`: hidden
    columns (configured None) and columns left out of the order dropped, columns renamed to
    their configured label."""
    config = dict(column_config or {})
    names = [c for c in (column_order or frame.columns) if c in frame.columns]
    names = [c for c in names if not (c in config and config[c] is None)]
    labels = {
        c: str(v["label"])
        for c, v in config.items()
        if c in names and isinstance(v, Mapping) and v.get("label")
    }
    return frame.select(names).rename(labels)


def _csv_bytes(
    frame: pl.DataFrame, file_name: str, on_download: Callable[[str], None] | None
) -> bytes:
    data = to_brazilian_csv(frame)
    if on_download is not None:
        on_download(file_name)
    return data


def show_table(
    frame: pl.DataFrame,
    *,
    name: str,
    on_download: Callable[[str], None] | None = None,
    column_config: Mapping[str, Any] | None = None,
    column_order: list[str] | None = None,
    **kwargs: Any,
) -> None:
    """`st.dataframe(frame, **kwargs)` and under it a "Baixar CSV" button downloading the shown
    table as `<name>.csv` (`name`: a file stem unique on the page, e.g. 'qualidade-cobertura');
    `on_download(file_name)` runs on each click, when the bytes are built."""
    st.dataframe(frame, column_config=column_config, column_order=column_order, **kwargs)
    file_name = f"{name}.csv"
    st.download_button(
        _("Download CSV"),
        data=partial(
            _csv_bytes, to_shown_frame(frame, column_config, column_order), file_name, on_download
        ),
        file_name=file_name,
        mime=CSV_MIME,
        key=f"table_csv_{name}",
        icon=":material/download:",
        type="tertiary",
        on_click="ignore",
    )
