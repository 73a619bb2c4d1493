"""Validation thresholds and reading options of the ingest boundary (units in the names).

These are operational settings, not law: the regulation profile says what a late trip is, these
say which raw records are too broken to enter the store. Change them per run from the CLI or by
building an `IngestOptions(...)` in code; every value is range-checked.
"""

from __future__ import annotations

from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from core.errors import ConfigError


class IngestOptions(BaseModel):
    """Thresholds of the record validation and how files are read."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    bbox_margin_m: float = Field(
        default=5_000.0,
        ge=0,
        le=500_000,
        description="a ping may lie this far outside the box of the stops",
    )
    future_skew_s: float = Field(
        default=300.0,
        ge=0,
        le=86_400,
        description="a record may be this far ahead of the ingest clock",
    )
    max_speed_m_s: float = Field(
        default=40.0, gt=0, le=150, description="highest believable reported bus speed (144 km/h)"
    )
    stale_fix_max_age_s: float = Field(
        default=300.0,
        gt=0,
        le=86_400,
        description="a fix older than this at its snapshot time is stale",
    )
    max_amount: float = Field(
        default=1_000.0, gt=0, description="highest believable fare amount, local currency"
    )
    min_event_year: int = Field(
        default=2000,
        ge=1990,
        le=2100,
        description="a record dated before 1 January of this year is a clock never set "
        "(epoch 0 = 1970, 1900, 0001), not a reading",
    )
    accept_unknown_vehicles: bool = Field(
        default=False, description="store pings of vehicles absent from a non-empty fleet register"
    )
    source_tz: str | None = Field(
        default=None,
        description="IANA zone of times written without an offset (default: the profile's)",
    )
    time_format: str | None = Field(
        default=None,
        description="strptime format of the source's times (default: ISO 8601 or epoch)",
    )
    chunk_rows: int = Field(
        default=1_000_000,
        ge=1,
        le=20_000_000,
        description="records per transaction for large files",
    )

    @field_validator("source_tz")
    @classmethod
    def _known_zone(cls, value: str | None) -> str | None:
        if value is not None:
            try:
                ZoneInfo(value)
            except (ZoneInfoNotFoundError, ValueError) as exc:
                raise ValueError(f"unknown IANA time zone {value!r}") from exc
        return value


def build_options(**values: object) -> IngestOptions:
    """`IngestOptions` from keyword values (None values keep the default), as a ConfigError."""
    given = {k: v for k, v in values.items() if v is not None}
    try:
        return IngestOptions.model_validate(given)
    except ValidationError as exc:
        first = exc.errors()[0]
        field = ".".join(str(p) for p in first["loc"])
        raise ConfigError(
            f"ingest option {field}: {first['msg']}",
            where=f"option {field}",
            hint="see `pontual ingest --help` for the accepted ranges",
        ) from exc
