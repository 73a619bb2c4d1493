"""Rules of the smaller inputs: fleet register, incidents, IQS surveys, passenger counts.

Each `compute_*_checks` returns the rules (after parsing) of one table; vocabularies and ranges
come from the regulation profile.
"""

from __future__ import annotations

from datetime import UTC, datetime

import polars as pl

from core.profile import Profile
from core.tables.observed import INCIDENT_KINDS
from ingest.checks import Check
from ingest.options import IngestOptions
from ingest.rules import future_check, past_check


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
