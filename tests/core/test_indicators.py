"""The catalogue of indicators covers every id the indices job writes, with its unit."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from core.indicators import CATALOGUE, DEFAULT, FAMILIES, FORMATS, indicator, to_label

INDICES = Path(__file__).resolve().parents[2] / "analytics" / "indices"


def _written_specs() -> list[tuple[str, str | None, str]]:
    """(id pattern, unit, where) of every `IndicatorSpec(...)` under analytics/indices: a
    literal id as a regex of itself, an f-string id with `.+` for each placeholder."""
    out = []
    for path in sorted(INDICES.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if not (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Name)
                and node.func.id == "IndicatorSpec"
                and node.args
            ):
                continue
            first = node.args[0]
            if isinstance(first, ast.Constant):
                pattern = re.escape(str(first.value))
            elif isinstance(first, ast.JoinedStr):
                pattern = "".join(
                    re.escape(str(v.value)) if isinstance(v, ast.Constant) else ".+"
                    for v in first.values
                )
            else:
                raise AssertionError(f"{path.name}:{node.lineno}: an id that is not a text")
            unit = str(node.args[3].value) if isinstance(node.args[3], ast.Constant) else None
            out.append((pattern, unit, f"{path.name}:{node.lineno}"))
    return out


SPECS = _written_specs()


def test_the_indices_job_declares_the_ids_the_catalogue_is_checked_against() -> None:
    # 50 literal ids and 7 f-string families (fleet ages and their limit by area, inspection bands).
    assert len(SPECS) >= 50
    assert sum(".+" in p for p, _, _ in SPECS) == 7


@pytest.mark.parametrize(("pattern", "unit", "where"), SPECS, ids=[w for _, _, w in SPECS])
def test_every_id_the_indices_job_writes_has_an_entry_with_its_unit(
    pattern: str, unit: str | None, where: str
) -> None:
    ids = [i.id for i in CATALOGUE] + [f.id + "1" for f in FAMILIES]
    found = [i for i in ids if re.fullmatch(pattern, i)]
    assert found, f"{where}: no catalogue entry for {pattern}"
    for id in found:
        entry = indicator(id)
        assert entry is not None
        assert unit is None or entry.unit == unit, (where, id, entry.unit, unit)


def test_each_entry_is_declared_once_with_a_known_format_and_an_article() -> None:
    ids = [i.id for i in CATALOGUE]
    assert len(ids) == len(set(ids))
    for entry in CATALOGUE + FAMILIES:
        assert entry.format in FORMATS
        assert entry.article.startswith(("BG ", "CGS ", "Lei ", DEFAULT)), entry
        assert entry.label and entry.label[0].isupper()


def test_labels_directions_and_band_families_read_as_planners_read_them() -> None:
    assert to_label("trips_suppressed") == "Viagens suprimidas"
    assert to_label("not_an_indicator") == "not_an_indicator"
    punctuality = indicator("icv_punctuality")
    assert punctuality is not None and punctuality.is_higher_better
    breakdowns = indicator("breakdowns_per_10000_km")
    assert breakdowns is not None and not breakdowns.is_higher_better
    assert breakdowns.decimals == 2
    band = indicator("inspections_overdue_band_2")
    assert band is not None
    assert (band.label, band.article, band.unit) == (
        "Vistorias vencidas — faixa 2",
        "BG art. 23-II",
        "ratio",
    )
    assert indicator("inspections_overdue_band_") is None
    ewt = indicator("ewt_s")
    assert ewt is not None and ewt.article == DEFAULT and ewt.format == "minutes"
