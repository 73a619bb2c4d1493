"""The names planners read (pt-BR, in the laws' terms): indicators and their units (from the
catalogue, `core.indicators`), payment forms, case states, and the `source` texts of profiles
and jobs.
No streamlit here."""

from __future__ import annotations

import re
from typing import Any

import polars as pl

from cases.states import STATE_LABELS
from core.indicators import DEFAULT, UNIT_LABELS, indicator, to_label
from core.profile import Cited
from core.texts import N_, Labels, gettext

__all__ = [
    "FARE_CLASS_LABELS",
    "INCIDENT_KIND_LABELS",
    "UNIT_LABELS",
    "label_indicators",
    "label_states",
    "to_basis",
    "to_citation",
    "to_source",
    "to_source_text",
]

FARE_CLASS_LABELS = Labels(
    {
        "full": N_("Full fare"),
        "student": N_("Student"),
        "elderly": N_("Elderly"),
        "disabled": N_("Person with a disability"),
        "vale_transporte": N_("Transport voucher"),
        "integration": N_("Transfer"),
        "exempt": N_("Exempt"),
        "other": N_("Other (payment forms)"),
    }
)
"""Payment forms as the monthly report names them (BG art. 62-VII)."""

INCIDENT_KIND_LABELS = Labels(
    {
        "obstruction": N_("road obstruction"),
        "detour": N_("detour"),
        "breakdown": N_("vehicle breakdown"),
        "accident": N_("accident"),
        "weather": N_("weather conditions"),
        "other": N_("other (incident kind)"),
    }
)
"""Incident kinds (`core.tables.observed.INCIDENT_KINDS`) as the pages name them."""


def label_indicators(indicators: pl.Series) -> pl.Series:
    """The pt-BR names of a column of indicator ids (`core.indicators`; the id itself when
    the catalogue does not know it), looked up once per distinct id."""
    names = {i: to_label(i) for i in indicators.unique().drop_nulls().to_list()}
    return indicators.replace_strict(names, default=indicators, return_dtype=pl.String).alias(
        indicators.name
    )


def label_states(states: pl.Series) -> pl.Series:
    """A column of case states as they are shown (`cases.states.STATE_LABELS`; a state it
    does not know as stored)."""
    return states.replace_strict(dict(STATE_LABELS), default=states, return_dtype=pl.String)


def label_texts(texts: pl.Series) -> pl.Series:
    """A column of catalogue ids (English texts marked where they are made, e.g.
    `cases.reporting.PENDING_LABELS`) in the chosen language; nulls stay null."""
    ids = texts.drop_nulls().unique().to_list()
    return texts.replace_strict({t: gettext(t) for t in ids}, default=texts, return_dtype=pl.String)


SOURCE_PHRASES = (
    N_("default, to be fixed by decree"),
    N_("BG has no coverage rule"),
    N_("fee table"),
    N_("practice"),
    N_("whenever the limit is exceeded, more trips or capacity"),
    N_("cost per km ÷ IPKe"),
)
"""English phrases of the profiles' and jobs' `source` texts, translated for planners."""


def to_source_text(sources: pl.Series) -> pl.Series:
    """`source` texts (articles, profile keys) with their English phrases in pt-BR."""
    out = sources.fill_null("")
    for english in SOURCE_PHRASES:
        out = out.str.replace_all(english, gettext(english), literal=True)
    return out


LAW_REFERENCE = re.compile(r"^(BG|CGS|Lei|Anexo)\b")
"""A citation planners can look up starts by naming its law (BG, CGS, Lei n/aaaa) or annex."""

_EXPLANATION = re.compile(r" \(|, as read|: | — ")
"""Where a profile's `source` text stops citing and starts explaining (in English, for
engineers): the first parenthesis, ', as read by Pontual', a colon or a dash."""


def to_source(text: str | None, default: str | None = None) -> str:
    """One `source` text as planners read it: the citation only (its explanation, written for
    engineers, is left out), "padrão do Pontual, a fixar por decreto" for Pontual's defaults,
    and `default` ("perfil") when there is none or no law is named."""
    if default is None:
        default = gettext("profile")
    if not text:
        return default
    if text.startswith(DEFAULT):
        return gettext("default, to be fixed by decree")
    citation = _EXPLANATION.split(text, maxsplit=1)[0].strip().rstrip(",;")
    return citation if LAW_REFERENCE.match(citation) else default


def to_citation(cited: Cited[Any]) -> str:
    """The legal basis of a profile value as planners read it: its article (`to_source`), or
    "padrão do Pontual, a fixar por decreto" for a default."""
    if cited.source and not cited.default:
        return to_source(cited.source)
    return gettext("default, to be fixed by decree")


def to_basis(indicators: pl.Series, sources: pl.Series) -> pl.Series:
    """The legal basis planners read for each indicator: the catalogue's article
    (`core.indicators`), "padrão do Pontual, a fixar por decreto" where the law leaves the rule
    to a decree, never the profile keys the `source` column names for engineers. Ids the
    catalogue does not know fall back to their `source` text in pt-BR."""
    basis: dict[str, str] = {}
    for i in indicators.unique().drop_nulls().to_list():
        found = indicator(i)
        if found is not None:
            basis[i] = to_source(found.article) if found.article != DEFAULT else to_source(DEFAULT)
    fallback = to_source_text(sources)
    known = indicators.replace_strict(basis, default=None, return_dtype=pl.String)
    return known.fill_null(fallback).alias("basis")
