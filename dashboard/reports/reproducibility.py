"""The methodology table (the profile in force, each value with its article) and the
reproducibility block: a hash of every input a report was built from, so anyone can check that
a regenerated report used the same data (same store rows, same entered files, same profile).

The hash of a table is the SHA-256 of its rows written as CSV after sorting by every column;
columns that record *when* or *from which path* a row was written (`VOLATILE`) are left out, so
re-ingesting the same files elsewhere, or recomputing the same indices, gives the same hash.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import polars as pl

from core import __version__
from core.profile import Profile
from core.pt_br import to_plain, to_yes_no
from core.texts import N_, Labels, gettext
from dashboard.reports.inputs import compute_file_sha256

VOLATILE = ("computed_at", "ingested_at", "loaded_at", "source")
DEFAULT_MARK = N_("default, to be set by decree")
"""How the methodology table marks a value the law leaves to a decree (translated where shown)."""
PROFILE_UNIT_LABELS = Labels(
    {
        "ratio": N_("fraction (unit)"),
        "years": N_("years (unit)"),
        "months": N_("months (unit)"),
        "month": N_("month (unit)"),
        "days": N_("days (unit)"),
        "business_days": N_("business days (unit)"),
        "list": N_("list (unit)"),
        "seats": N_("seats (unit)"),
        "pass/m2": "pass./m²",
        "m2": "m²",
        "vehicles": N_("vehicles (unit)"),
        "rule": N_("rule (unit)"),
        "points": N_("points (unit)"),
        "factor": N_("factor (unit)"),
        "unit": N_("unit (unit)"),
        "taps": N_("taps (unit)"),
        "per_10000_km": N_("per 10,000 km"),
        "iana": N_("IANA time zone"),
        "dimensions": N_("dimensions (unit)"),
        "count": N_("count (unit)"),
        "authority": N_("authority (unit)"),
        "mm-dd": N_("mm-dd (day of the year)"),
        "BRL": "R$",
    }
)
"""The profile's unit ids as the methodology table shows them (from the catalogue; a symbol
such as "m²" or "R$" reads the same in every language); s, m, m/s, uf and UFITAS are not
listed and show as they are."""


def compute_frame_sha256(df: pl.DataFrame) -> str:
    """SHA-256 (hex) of a frame's content, independent of row order and volatile columns."""
    kept = df.drop([c for c in VOLATILE if c in df.columns])
    if kept.width == 0:
        return hashlib.sha256(b"").hexdigest()
    # nested or binary columns do not write as CSV; their JSON text is as good a fingerprint
    text = kept.with_columns(
        [
            pl.col(name).map_elements(json.dumps, return_dtype=pl.String)
            for name, dtype in kept.schema.items()
            if dtype.is_nested()
        ]
    )
    ordered = text.sort(text.columns, nulls_last=True)
    return hashlib.sha256(ordered.write_csv().encode("utf-8")).hexdigest()


def compute_profile_sha256(profile: Profile) -> str:
    """SHA-256 of the profile's values (canonical JSON), so an edited profile changes it."""
    canonical = json.dumps(profile.model_dump(mode="json"), sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def build_raw_input_rows(day_digests: pl.DataFrame) -> list[dict[str, Any]]:
    """One inputs row per raw table (`raw:vehicle_locations`, `raw:fare_transactions`) from the
    period's current day digests (`cases.evidence.compute_period_day_digests`): n_rows is the
    period's raw rows, sha256 the SHA-256 of the 'day|n_rows|sha256' lines in day order, so any
    raw ping or tap changed, added or removed changes it. The label counts the days and those
    that no longer match their recorded reference digest (BG art. 77: the evidence unchanged)."""
    rows: list[dict[str, Any]] = []
    for name in sorted(day_digests["table_name"].unique().to_list()):
        days = day_digests.filter(pl.col("table_name") == name).sort("service_date")
        text = "\n".join(
            f"{d}|{n}|{h}"
            for d, n, h in days.select("service_date", "n_rows", "sha256").iter_rows()
        )
        n_changed = int((days["is_as_recorded"] == False).sum())  # noqa: E712 (null: not recorded)
        # pt-BR whatever the language: this label enters the input hash (`compute_input_hash`)
        note = f"{days.height} dia(s)" + (
            f", {n_changed} diferente(s) do digest registrado" if n_changed else ""
        )
        rows.append(
            {
                "input": f"raw:{name} ({note})",
                "n_rows": int(days["n_rows"].sum()),
                "sha256": hashlib.sha256(text.encode("utf-8")).hexdigest(),
            }
        )
    return rows


def build_inputs_table(
    frames: Mapping[str, pl.DataFrame],
    files: Mapping[str, str | Path | None],
    profile: Profile,
    raw_day_digests: pl.DataFrame | None = None,
    hashes: Mapping[str, str] | None = None,
) -> pl.DataFrame:
    """One row per input: input (store table, raw table, entered file or profile), n_rows,
    sha256.

    Store inputs come first (sorted by name), then the raw tables of the period (from
    `raw_day_digests`, when given: the raw pings and taps, not only the tables derived from
    them), then the entered files, then the profile. `hashes`: the SHA-256 of frames the
    caller has already hashed (`compute_frame_sha256` of those same frames), by name."""
    known = hashes or {}
    rows: list[dict[str, Any]] = [
        {
            "input": f"store:{name}",
            "n_rows": df.height,
            "sha256": known[name] if name in known else compute_frame_sha256(df),
        }
        for name, df in sorted(frames.items())
    ]
    if raw_day_digests is not None:
        rows.extend(build_raw_input_rows(raw_day_digests))
    for label, path in sorted(files.items()):
        if path is not None:
            n_lines = max(0, len(Path(path).read_bytes().splitlines()) - 1)
            rows.append(
                {
                    "input": f"file:{label} ({Path(path).name})",
                    "n_rows": n_lines,
                    "sha256": compute_file_sha256(path),
                }
            )
    rows.append(
        {
            "input": f"profile:{profile.id} v{profile.version}",
            "n_rows": len(profile.cited_values()),
            "sha256": compute_profile_sha256(profile),
        }
    )
    return pl.DataFrame(rows, schema={"input": pl.String, "n_rows": pl.Int64, "sha256": pl.String})


def compute_input_hash(inputs: pl.DataFrame) -> str:
    """The report's input hash: SHA-256 of the inputs table's 'input n_rows sha256' lines."""
    lines = [f"{r[0]}\t{r[1]}\t{r[2]}" for r in inputs.select("input", "n_rows", "sha256").rows()]
    return hashlib.sha256("\n".join(lines).encode("utf-8")).hexdigest()


def build_reproducibility(
    input_hash: str, profile: Profile, schema_version: int, command: str
) -> pl.DataFrame:
    """item, value: the input hash, Pontual and schema versions, profile and the command."""
    items = [
        (gettext("Input hash (SHA-256)"), input_hash),
        (gettext("Pontual version"), __version__),
        (gettext("Store schema version"), str(schema_version)),
        (
            gettext("Regulation profile"),
            gettext("{id} (version {version})", id=profile.id, version=profile.version),
        ),
        (gettext("Profile in force from"), profile.effective_from.strftime("%d/%m/%Y")),
        (gettext("Law"), profile.law),
        (gettext("Command to make it again"), command),
    ]
    return pl.DataFrame(items, schema={"item": pl.String, "value": pl.String}, orient="row")


def _format_value(value: Any) -> str:
    if isinstance(value, bool):
        return to_yes_no(value)
    if isinstance(value, float):
        return to_plain(value)
    if isinstance(value, list | tuple):
        return "[" + "; ".join(_format_value(v) for v in value) + "]"
    if isinstance(value, dict):
        return "; ".join(f"{k}: {_format_value(v)}" for k, v in value.items())
    return str(value)


def build_methodology(profile: Profile) -> pl.DataFrame:
    """Every cited value of the profile: key, value (as text), unit, citation (the article,
    or the 'padrão, a ser fixado por decreto' mark with its note) and is_default."""
    rows = [
        {
            "key": key,
            "value": _format_value(cited.value),
            "unit": PROFILE_UNIT_LABELS.get(cited.unit, cited.unit),
            "citation": cited.source
            if cited.source
            else f"{gettext(DEFAULT_MARK)} ({cited.note})"
            if cited.note
            else gettext(DEFAULT_MARK),
            "is_default": cited.default,
        }
        for key, cited in profile.cited_values()
    ]
    return pl.DataFrame(
        rows,
        schema={
            "key": pl.String,
            "value": pl.String,
            "unit": pl.String,
            "citation": pl.String,
            "is_default": pl.Boolean,
        },
    )
