"""Rules of the smaller inputs: fleet register, incidents, IQS surveys, passenger counts; and
how a register file becomes history.

Each `compute_*_checks` returns the rules (after parsing) of one table; vocabularies and ranges
come from the regulation profile. A register file is written as versions
(`write_register_batch`): a vehicle whose facts changed has its version in force closed and a
new one opened from the row's `valid_from` (default: the day of the ingest), so a past period
is still judged on the register then in force (`core.register`).
"""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, date, datetime
from typing import TYPE_CHECKING

import polars as pl

from core.schema import UTC_INSTANT, table
from core.store import Store
from core.tables.observed import INCIDENT_KINDS
from ingest.checks import Check, JudgedBatch
from ingest.options import IngestOptions
from ingest.parsing import RECORD_KEY
from ingest.rules import future_check, past_check, to_quarantine
from ingest.writing import IngestCounts, write_batch

if TYPE_CHECKING:  # the profile's models are built only by the commands that read it
    from core.profile import Profile


def _one_of(column: str, allowed: list[str] | tuple[str, ...], what: str) -> Check:
    return Check(
        column,
        pl.col(column).is_not_null() & ~pl.col(column).is_in(list(allowed)),
        f"{column} unknown, expected one of {', '.join(allowed)} ({what})",
    )


def compute_vehicle_checks(profile: Profile) -> list[Check]:
    """Register rows: service area, class and vehicle type known to the profile; sane numbers."""
    year = datetime.now(UTC).year
    return [
        _one_of(
            "service_area", profile.general.service_areas.value, "profile general.service_areas"
        ),
        _one_of(
            "service_class",
            profile.general.service_classes.value,
            "profile general.service_classes",
        ),
        _one_of(
            "vehicle_type", sorted(profile.crowding.vehicle_types), "profile crowding.vehicle_types"
        ),
        Check(
            "manufacture_year",
            (pl.col("manufacture_year") < 1950) | (pl.col("manufacture_year") > year + 1),
            f"manufacture_year outside 1950..{year + 1}",
        ),
        Check("n_seats", pl.col("n_seats") < 0, "n_seats negative"),
        Check("standing_area_m2", pl.col("standing_area_m2") < 0, "standing_area_m2 negative"),
    ]


def compute_incident_checks(options: IngestOptions) -> list[Check]:
    return [
        _one_of("kind", INCIDENT_KINDS, "incident kinds"),
        Check("ends_at", pl.col("ends_at") < pl.col("starts_at"), "ends_at before starts_at"),
        future_check("starts_at", datetime.now(UTC), options),
        past_check("starts_at", options),
    ]


def compute_survey_checks(profile: Profile, options: IngestOptions) -> list[Check]:
    low, high = profile.quality.iqs_score_scale.value
    year = pl.col("period").str.slice(0, 4).cast(pl.Int32, strict=False)
    return [
        Check(
            "period",
            ~pl.col("period").str.contains(r"^\d{4}(-S[12]|-(0[1-9]|1[0-2]))?$"),
            "period not YYYY, YYYY-S1/S2 or YYYY-MM (month 01..12)",
        ),
        Check(
            "period",
            (year < options.min_event_year) | (year > datetime.now(UTC).year + 1),
            f"period year outside {options.min_event_year}..next year",
        ),
        _one_of(
            "dimension", profile.quality.iqs_dimensions.value, "profile quality.iqs_dimensions"
        ),
        Check(
            "score",
            (pl.col("score") < low) | (pl.col("score") > high),
            f"score outside {low:g}..{high:g} (profile quality.iqs_score_scale)",
        ),
        Check("n_respondents", pl.col("n_respondents") < 0, "n_respondents negative"),
    ]


def compute_count_checks(options: IngestOptions) -> list[Check]:
    return [
        future_check("event_at", datetime.now(UTC), options),
        past_check("event_at", options),
        Check("n_boardings", pl.col("n_boardings") < 0, "n_boardings negative"),
        Check("n_alightings", pl.col("n_alightings") < 0, "n_alightings negative"),
    ]


# --- the fleet register's history ----------------------------------------------------------

# Columns that are not a vehicle's facts: where and when a version came in, its validity and
# its inspection (a history of its own, `vehicle_inspections`). A change in any other column
# is a new version.
_NOT_FACTS = ("source", "ingested_at", "valid_from", "valid_to", "last_inspection_on")
REASON_BACKDATED = (
    "valid_from before the version in force since {since}: the register's history is only "
    "extended forward (correct the newer version instead)"
)


def compute_register_versions(
    stored: pl.DataFrame, incoming: pl.DataFrame, today: date
) -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame, pl.DataFrame]:
    """How a register file changes the stored history (pure).

    `stored`: the open versions (valid_to null) of `vehicles`; `incoming`: the file's accepted
    rows (one per vehicle, the last wins). A vehicle seen for the first time opens a version
    from its `valid_from` (null: since registered). A vehicle whose facts changed closes its
    open version on the new row's `valid_from` (default `today`) and opens one from that day;
    on the open version's own first day the new row replaces it. Returns (opened, closing,
    rejected, unchanged):
    opened: rows to insert (the table's columns); closing: vehicle_id, valid_to for the open
    versions to close, plus `is_replaced` (delete it instead: same first day); rejected: rows
    whose `valid_from` is before the open version's (with `_field`, `_reason`); unchanged: rows
    with the same facts (their inspection may be new).
    """
    facts = [c for c in stored.columns if c not in _NOT_FACTS]
    rows = incoming.unique("vehicle_id", keep="last", maintain_order=True)
    open_ = stored.select(*facts, pl.col("valid_from").alias("_open_from"))
    joined = rows.join(
        open_.select("vehicle_id", "_open_from"), on="vehicle_id", how="left"
    ).with_columns(pl.col("vehicle_id").is_in(open_["vehicle_id"].implode()).alias("_known"))
    same = rows.select(facts).join(open_.select(facts), on=facts, how="semi", nulls_equal=True)
    joined = joined.with_columns(
        pl.col("vehicle_id").is_in(same["vehicle_id"].implode()).alias("_same")
    )
    unchanged = joined.filter(pl.col("_known") & pl.col("_same"))
    new = joined.filter(~pl.col("_known"))
    changed = joined.filter(pl.col("_known") & ~pl.col("_same")).with_columns(
        pl.coalesce("valid_from", pl.lit(today)).alias("valid_from")
    )
    backdated = pl.col("_open_from").is_not_null() & (pl.col("valid_from") < pl.col("_open_from"))
    rejected = changed.filter(backdated).with_columns(
        pl.lit("valid_from").alias("_field"),
        pl.format(REASON_BACKDATED.replace("{since}", "{}"), pl.col("_open_from")).alias("_reason"),
    )
    changed = changed.filter(~backdated)
    closing = changed.select(
        "vehicle_id",
        pl.col("valid_from").alias("valid_to"),
        (pl.col("_open_from") == pl.col("valid_from")).fill_null(False).alias("is_replaced"),
    )
    helpers = ["_open_from", "_known", "_same"]
    opened = pl.concat([new.drop(helpers), changed.drop(helpers)], how="vertical_relaxed")
    return (
        opened.with_columns(pl.lit(None, dtype=pl.Date).alias("valid_to")),
        closing,
        (rejected.drop(helpers)),
        unchanged.drop(helpers),
    )


def write_register_batch(
    store: Store, batch: JudgedBatch, *, source: str, source_sha256: str | None, today: date
) -> IngestCounts:
    """Write a judged register chunk as history, in one transaction: close the open versions
    whose facts changed, insert the new versions, record each row's last inspection in
    `vehicle_inspections` (and on its open version), then the quarantine and run rows
    (`write_batch`). n_accepted counts new versions and newly recorded inspections;
    n_duplicate the rows that changed nothing."""
    # the file's columns completed to the table's (optional ones absent from it are null)
    accepted = table("vehicles").conform(
        batch.accepted, fill={"source": source, "ingested_at": batch.started_at}
    )
    if RECORD_KEY in batch.accepted.columns:
        accepted = accepted.with_columns(batch.accepted[RECORD_KEY])
    with store.transaction():
        stored = store.read("vehicles", "valid_to IS NULL")
        opened, closing, rejected, unchanged = compute_register_versions(stored, accepted, today)
        if closing.height:
            store.con.register("_register_closing", closing.to_arrow())
            try:
                store.con.execute(
                    "DELETE FROM vehicles t USING _register_closing k WHERE t.vehicle_id = "
                    "k.vehicle_id AND t.valid_to IS NULL AND k.is_replaced"
                ).fetchall()
                store.con.execute(
                    "UPDATE vehicles t SET valid_to = k.valid_to FROM _register_closing k "
                    "WHERE t.vehicle_id = k.vehicle_id AND t.valid_to IS NULL"
                ).fetchall()
            finally:
                store.con.unregister("_register_closing")

        def inspections_of(rows: pl.DataFrame) -> pl.DataFrame:
            return rows.filter(pl.col("last_inspection_on").is_not_null()).select(
                "vehicle_id",
                pl.col("last_inspection_on").alias("inspected_on"),
                pl.lit(source).alias("source"),
                pl.lit(batch.started_at).cast(UTC_INSTANT).alias("ingested_at"),
            )

        store.append("vehicle_inspections", inspections_of(opened))
        # a row that changed nothing but its inspection is accepted (its inspection is new)
        n_new_inspection_only = store.append(
            "vehicle_inspections", inspections_of(unchanged)
        ).n_inserted
        # the open version shows the latest inspection known (the history has them all)
        if unchanged.height:
            store.con.execute(
                "UPDATE vehicles t SET last_inspection_on = i.last FROM (SELECT vehicle_id, "
                "max(inspected_on) AS last FROM vehicle_inspections GROUP BY vehicle_id) i "
                "WHERE t.vehicle_id = i.vehicle_id AND t.valid_to IS NULL"
            ).fetchall()
        quarantined = batch.quarantined
        if rejected.height:
            quarantined = pl.concat(
                [
                    quarantined,
                    to_quarantine(
                        rejected,
                        [c for c in table("vehicles").column_names if c != "valid_to"],
                        source=source,
                        target="vehicles",
                        at=batch.started_at,
                    ),
                ],
                how="vertical_relaxed",
            )
        counts = write_batch(
            store,
            opened,
            quarantined,
            target="vehicles",
            source=source,
            run_kind="vehicles",
            started_at=batch.started_at,
            n_read=batch.n_read,
            source_sha256=source_sha256,
            notes=batch.notes,
        )
    return replace(
        counts,
        n_accepted=counts.n_accepted + n_new_inspection_only,
        n_duplicate=unchanged.height - n_new_inspection_only,
    )
