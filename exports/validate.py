"""Validate a TIDES export against the TIDES table schemas (Frictionless, offline)."""

from __future__ import annotations

import json
from pathlib import Path

from core.errors import InputError


def validate_tides_package(folder: str | Path, schema_dir: str | Path) -> dict[str, list[str]]:
    """Validate each `NAME.csv` of `folder` against `schema_dir/NAME.schema.json`.

    Returns, per table, the error messages (an empty list: valid). Needs the `frictionless`
    package (the `tides` extra); no network access (local schemas).
    """
    try:
        from frictionless import Resource, Schema
    except ImportError as exc:  # pragma: no cover - the extra is installed by `make test`
        raise InputError(
            "validating a TIDES export needs the 'frictionless' package",
            hint="pip install 'pontual[tides]'",
        ) from exc
    root, schemas = Path(folder), Path(schema_dir)
    errors: dict[str, list[str]] = {}
    for csv in sorted(root.glob("*.csv")):
        schema_path = schemas / f"{csv.stem}.schema.json"
        if not schema_path.exists():
            errors[csv.stem] = [f"no TIDES schema named {schema_path.name}"]
            continue
        resource = Resource(
            path=csv.name,
            basepath=str(root),
            schema=Schema.from_descriptor(json.loads(schema_path.read_text(encoding="utf-8"))),
        )
        report = resource.validate()
        errors[csv.stem] = [f"{e.type}: {e.message}" for task in report.tasks for e in task.errors][
            :20
        ]
    return errors
