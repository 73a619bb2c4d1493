"""The global `--lake PATH`: reading verbs read the lake as they read the store file, writing
verbs refuse it (exit 2, a pt-BR message naming --lake)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from core.lake import export_lake
from core.store import Store
from pontual.cli import main

TZ = "America/Sao_Paulo"


@pytest.fixture(scope="module")
def lake(demo_store: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("lake-option")
    with Store.open(demo_store, read_only=True) as store:
        export_lake(store, root, TZ)
    return root


def _indices_json(argv: list[str], capsys: pytest.CaptureFixture[str]) -> list[dict[str, object]]:
    assert main([*argv, "indices", "--period", "2026-03", "--no-write", "--format", "json"]) == 0
    rows: list[dict[str, object]] = json.loads(capsys.readouterr().out)
    key = ("scope", "scope_id", "period", "indicator")
    return sorted(rows, key=lambda r: tuple(str(r.get(k)) for k in key))


def test_indices_read_through_the_lake_equal_the_file(
    demo_store: Path, lake: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    on_file = _indices_json(["--store", str(demo_store)], capsys)
    on_lake = _indices_json(["--store", str(demo_store), "--lake", str(lake)], capsys)
    assert len(on_file) > 10
    assert [(r["indicator"], r["scope_id"]) for r in on_lake] == [
        (r["indicator"], r["scope_id"]) for r in on_file
    ]
    for a, b in zip(on_file, on_lake, strict=True):
        for col in ("numerator", "denominator", "value"):
            x, y = a.get(col), b.get(col)
            if isinstance(x, float) and isinstance(y, float):
                # DuckDB and Polars add floats in parallel: equal up to the order of the sums
                assert abs(x - y) <= 1e-9 * max(1.0, abs(x)), (a["indicator"], col)
            else:
                assert x == y, (a["indicator"], col)


def test_a_writing_verb_refuses_the_lake(
    demo_store: Path, lake: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["--store", str(demo_store), "--lake", str(lake), "indices", "--period", "2026-03"])
    assert code == 2
    assert "--lake" in capsys.readouterr().err


def test_a_missing_lake_is_a_user_error(
    demo_store: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(
        ["--lake", str(tmp_path / "absent"), "indices", "--period", "2026-03", "--no-write"]
    )
    assert code == 2
    assert "lago de dados não encontrado" in capsys.readouterr().err
