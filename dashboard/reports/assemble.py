"""Put a report together: the summary table of its headline figures and the reproducibility
block (input hashes, versions, the command that regenerates it) every report ends with."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import date
from pathlib import Path

import polars as pl

from core.profile import Profile
from core.pt_br import to_yes_no
from core.store import Store
from core.texts import gettext as _
from dashboard.reports.model import Col, Headline, ReportData, ReportTable, Section
from dashboard.reports.reproducibility import (
    build_inputs_table,
    build_reproducibility,
    compute_input_hash,
)


def build_summary_table(headlines: Sequence[Headline]) -> ReportTable:
    """'resumo': one row per headline figure — label, value (a number, or null for a text
    such as a grade) and text (the value as text, for the grades and yes/no figures)."""
    rows = [
        {
            "label": h.label,
            "value": float(h.value)
            if isinstance(h.value, int | float) and not isinstance(h.value, bool)
            else None,
            "text": None
            if isinstance(h.value, int | float) and not isinstance(h.value, bool)
            else (to_yes_no(h.value) if isinstance(h.value, bool) else h.value),
        }
        for h in headlines
    ]
    frame = pl.DataFrame(rows, schema={"label": pl.String, "value": pl.Float64, "text": pl.String})
    return ReportTable(
        "resumo",
        _("Summary"),
        frame,
        (
            Col("label", _("Indicator")),
            Col("value", _("Value"), "number", 4),
            Col("text", _("Text")),
        ),
    )


def finish_report(
    *,
    kind: str,
    title: str,
    subtitle: str,
    file_stem: str,
    headlines: Sequence[Headline],
    sections: Sequence[Section],
    tables: Sequence[ReportTable],
    inputs: Mapping[str, pl.DataFrame],
    files: Mapping[str, str | Path | None],
    profile: Profile,
    store: Store,
    command: str,
    input_hashes: Mapping[str, str] | None = None,
    raw_days: tuple[date, date] | None = None,
    raw_digests: pl.DataFrame | None = None,
    summary: Sequence[str] = (),
    cover: Sequence[tuple[str, str]] = (),
) -> ReportData:
    """The ReportData with the 'resumo', 'entradas' and 'reproducibilidade' tables added and
    the reproducibility section last. `raw_days` (first, last service day): the raw pings and
    taps of those days enter the input hash too (their current day digests). `raw_digests`:
    those digests already computed for the same days (`compute_period_day_digests`), so a run
    that builds several reports of one period hashes its raw data once. `input_hashes`: the
    SHA-256 of inputs already hashed (`compute_frame_sha256` of those same frames), by name."""
    digests = raw_digests
    if digests is None and raw_days is not None:
        from cases.evidence import compute_period_day_digests

        digests = compute_period_day_digests(store, *raw_days, profile.general.timezone.value)
    entries = build_inputs_table(inputs, files, profile, digests, input_hashes)
    input_hash = compute_input_hash(entries)
    repro = build_reproducibility(input_hash, profile, store.schema_version, command)
    all_tables = [
        build_summary_table(headlines),
        *tables,
        ReportTable(
            "reproducibilidade",
            _("Reproducibility"),
            repro,
            (Col("item", _("Item")), Col("value", _("Value"), "code")),
        ),
        ReportTable(
            "entradas",
            _("Inputs and their hashes"),
            entries,
            (
                Col("input", _("Input"), "code"),
                Col("n_rows", _("Rows"), "integer"),
                Col("sha256", "SHA-256", "code"),
            ),
        ),
    ]
    closing = Section(
        _("Reproducibility"),
        (
            _(
                "This report's numbers are a function of the inputs listed below. The "
                "input hash is the SHA-256 of the rows of each table read from the store "
                "(sorted, without the columns of write date and source file), of the "
                "period's raw data (GPS pings and ticketing transactions, by each day's "
                "digest), of the files the operator supplied and of the regulation "
                "profile's values. Running the command shown on the same store, with the "
                "same files and the same version of Pontual, reproduces the same numbers "
                "and the same hash."
            ),
        ),
        ("reproducibilidade", "entradas"),
    )
    return ReportData(
        kind=kind,
        title=title,
        subtitle=subtitle,
        file_stem=file_stem,
        headlines=tuple(headlines),
        sections=(*sections, closing),
        tables={t.name: t for t in all_tables},
        input_hash=input_hash,
        timezone=profile.general.timezone.value,
        summary=tuple(summary),
        cover=tuple(cover),
    )
