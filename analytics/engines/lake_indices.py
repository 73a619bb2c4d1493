"""The indices of a period over a lake: `pontual indices --engine spark --lake PATH`.

Nothing of `analytics.indices.job.run_indices` is a per-day step whose rows depend only on the
day's own data, so the Spark engine has no group to hand it (docs/adr/0080):

- `fleet_days` numbers the consecutive days of fleet cuts per line (`compute_cut_runs`) and
  takes the lines' operators from the whole period (`compute_line_scopes`);
- `indicators` and `annual_grades` are period and year aggregates;
- `suggested_infractions` count repeats over the period and the months before it.

The roll-up therefore runs where it is cheap: DuckDB over the lake's partitions on the driver
(`core.lake.open_lake`, reading only the period's partitions and columns), through the local
engine's own `run_indices`; its four tables are then filed in the lake: `fleet_days` by day
partition, the others as whole-table files with the period's (or the year's, or the
infraction days') rows replaced, as `write_index_results` replaces them in the file.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import polars as pl

from analytics.indices.job import IndexResults, run_indices
from core import __version__
from core.lake import open_lake, write_day_partitions, write_table_file
from core.periods import Period
from core.profile import Profile
from core.schema import table


def _stamped(name: str, frame: pl.DataFrame, profile: Profile, now: datetime) -> pl.DataFrame:
    fill: dict[str, object] = {
        "pontual_version": __version__,
        "profile_id": profile.id,
        "computed_at": now,
    }
    return table(name).conform(frame, fill=fill)


def write_index_results_to_lake(
    lake: str | Path, results: IndexResults, profile: Profile, period: Period
) -> dict[str, int]:
    """File the period's index tables in the lake (what `write_index_results` does in the
    file); rows written per table."""
    now = datetime.now(UTC)
    written: dict[str, int] = {}
    with open_lake(lake) as store:
        kept = {
            "indicators": store.read("indicators", "period <> ?", [period.label]),
            "suggested_infractions": store.read(
                "suggested_infractions",
                "occurred_on NOT BETWEEN ? AND ?",
                period.days(),
            ),
            "annual_grades": store.read("annual_grades", "year <> ?", [period.start.year]),
        }
    new = {
        "indicators": results.indicators,
        "suggested_infractions": results.suggested_infractions,
    }
    if period.kind == "year":
        new["annual_grades"] = results.annual_grades
    for name, rows in new.items():
        stamped = _stamped(name, rows, profile, now)
        frame = pl.concat([kept[name], stamped], how="vertical_relaxed")
        if name == "annual_grades":  # history rows are kept as entered, once
            frame = frame.unique(list(table(name).primary_key), keep="first", maintain_order=True)
        write_table_file(lake, name, frame)
        written[name] = stamped.height
    fleet = _stamped("fleet_days", results.fleet_days, profile, now)
    written["fleet_days"] = fleet.height
    day = period.start
    while day <= period.end:
        write_day_partitions(lake, "fleet_days", day, fleet.filter(pl.col("service_date") == day))
        day += timedelta(days=1)
    return written


def run_indices_on_lake(
    lake: str | Path,
    profile: Profile,
    period: Period,
    *,
    cost_per_km: float | None = None,
    costs: pl.DataFrame | None = None,
    population: pl.DataFrame | None = None,
    grade_history: pl.DataFrame | None = None,
    write: bool = True,
) -> IndexResults:
    """`run_indices` over the lake (DuckDB views over its partitions), the results filed in
    the lake unless `write` is false."""
    with open_lake(lake) as store:
        results = run_indices(
            store,
            profile,
            period,
            cost_per_km=cost_per_km,
            costs=costs,
            population=population,
            grade_history=grade_history,
            write=False,
        )
    if write:
        write_index_results_to_lake(lake, results, profile, period)
    return results
