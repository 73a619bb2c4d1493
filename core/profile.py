"""Regulation profiles: the law as data.

A profile is a versioned TOML file with an effective date. Every value is a *cited value*::

    late_departure_s = { value = 300, unit = "s", default = true,
                         note = "TCQSM practice; BG art. 58 leaves it to a decree" }
    standees_max_per_m2 = { value = 4.0, unit = "pass/m2", source = "BG art. 59" }

carrying either the article it comes from (`source`) or `default = true` with a `note` saying a
decree must fix it. Loading checks every key (unknown or missing keys fail), the unit of each
value against the unit the key expects, and its range; the error names the file and the key.

Unlike the rest of the code, this module does not postpone its annotations (no
`from __future__ import annotations`): pydantic would evaluate each of its ~200 field
annotations from a string when it builds the models, at every command's start (ADR 0007,
session 33 addendum).
"""

import math
import tomllib
from datetime import date
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Annotated, Any, Generic, Literal, Self, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator
from pydantic_core import PydanticCustomError

from core.errors import ProfileError

T = TypeVar("T")

PROFILE_DIR = "profiles"


class Spec:
    """What a cited value must be: its unit and (optionally) its range, both inclusive."""

    def __init__(self, unit: str, ge: float | None = None, le: float | None = None) -> None:
        self.unit, self.ge, self.le = unit, ge, le


class Cited(BaseModel, Generic[T]):
    """A value with its unit and its legal source, or a default that a decree must fix."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    value: T
    unit: str
    source: str | None = None
    default: bool = False
    note: str | None = None

    @model_validator(mode="after")
    def _has_provenance(self) -> Self:
        if self.default and self.source:
            raise PydanticCustomError(
                "provenance", "give either source = '<article>' or default = true, not both"
            )
        if not self.default and not self.source:
            raise PydanticCustomError(
                "provenance",
                "expected source = '<article>' or default = true with a note (value without provenance)",
            )
        if self.default and not self.note:
            raise PydanticCustomError(
                "provenance", "a default value needs a note saying who must fix it (e.g. a decree)"
            )
        return self

    @property
    def citation(self) -> str:
        """The article, or 'padrão do Pontual, a fixar por decreto (<note>)': a text users read
        (pt-BR, as the notes)."""
        return (
            self.source if self.source else f"padrão do Pontual, a fixar por decreto ({self.note})"
        )


def _check_timezone(name: object) -> None:
    """An IANA time zone the system knows (a typo would fail later, deep inside a job)."""
    from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

    try:
        ZoneInfo(str(name))
    except (ZoneInfoNotFoundError, ValueError):
        raise PydanticCustomError(
            "timezone",
            "unknown time zone '{tz}': expected an IANA name such as America/Sao_Paulo",
            {"tz": str(name)},
        ) from None


def _check_specs(model: type[BaseModel], name: str, value: Any) -> Any:
    """Check a cited value's unit and range against the `Spec` in its annotation."""
    if not isinstance(value, Cited):
        return value
    field = model.model_fields[name]
    spec = next((m for m in field.metadata if isinstance(m, Spec)), None)
    if spec is None:
        return value
    if value.unit != spec.unit:
        raise PydanticCustomError(
            "unit",
            "expected unit '{expected}', got '{got}'",
            {"expected": spec.unit, "got": value.unit},
        )
    if spec.unit == "iana":
        _check_timezone(value.value)
    raw = value.value
    numbers = (
        list(raw.values())
        if isinstance(raw, dict)
        else list(raw)
        if isinstance(raw, list | tuple)
        else [raw]
    )
    for number in numbers:
        if isinstance(number, int | float) and not isinstance(number, bool):
            if not math.isfinite(number):
                # NaN compares false with every bound: a `nan` weight would pass the range
                # check and turn every ICV into NaN
                raise PydanticCustomError("finite", "value {v} is not finite", {"v": str(number)})
            if spec.ge is not None and number < spec.ge:
                raise PydanticCustomError(
                    "range",
                    "value {v} is below the minimum {lo} {unit}",
                    {"v": number, "lo": spec.ge, "unit": spec.unit},
                )
            if spec.le is not None and number > spec.le:
                raise PydanticCustomError(
                    "range",
                    "value {v} is above the maximum {hi} {unit}",
                    {"v": number, "hi": spec.le, "unit": spec.unit},
                )
    return value


class Section(BaseModel):
    """A profile section: unknown keys are refused, cited values are unit- and range-checked."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    @field_validator("*", mode="after")
    @classmethod
    def _specs(cls, value: Any, info: Any) -> Any:
        return _check_specs(cls, info.field_name, value)


Seconds = Cited[int]
Ratio = Cited[float]

BUNCHING_HEADWAY_MAX_RATIO_DEFAULT = 0.25
"""Default, to be fixed by decree: TCRP practice (a bus passing a stop less than a quarter of
the planned headway after the previous one runs bunched); what a profile without
`trips.bunching_headway_max_ratio` uses."""


class General(Section):
    timezone: Annotated[Cited[str], Spec("iana")]
    service_areas: Annotated[Cited[list[str]], Spec("list")]
    service_classes: Annotated[Cited[list[str]], Spec("list")]


class TripRules(Section):
    early_departure_s: Annotated[Seconds, Spec("s", 0, 1800)]
    late_departure_s: Annotated[Seconds, Spec("s", 0, 3600)]
    partial_trip_min_ratio: Annotated[Ratio, Spec("ratio", 0, 1)]
    frequent_headway_max_s: Annotated[Seconds, Spec("s", 60, 3600)]
    # a stop headway below this share of the planned one is bunching (frequent lines);
    # absent = BUNCHING_HEADWAY_MAX_RATIO_DEFAULT (profiles written before it still load)
    bunching_headway_max_ratio: Annotated[Ratio, Spec("ratio", 0, 1)] | None = None
    breakdown_stop_min_s: Annotated[Seconds, Spec("s", 60, 7200)]
    # outcomes an approved incident excuses (BG art. 57 §1: delays only); absent = ["late"]
    justified_outcomes: Annotated[Cited[list[str]], Spec("list")] | None = None

    @property
    def bunching_max_ratio(self) -> float:
        """The bunching threshold (share of the planned headway) in force."""
        if self.bunching_headway_max_ratio is None:
            return BUNCHING_HEADWAY_MAX_RATIO_DEFAULT
        return float(self.bunching_headway_max_ratio.value)

    @property
    def excused_outcomes(self) -> tuple[str, ...]:
        """The outcomes an approved incident removes from the ICV ratios."""
        return tuple(self.justified_outcomes.value) if self.justified_outcomes else ("late",)


class ScoreBand(Section):
    """A linear scoring band: `zero_at` scores 0, `full_at` scores 100 (either order)."""

    zero_at: Annotated[Cited[float], Spec("ratio", 0, 1)] | None = None
    full_at: Annotated[Cited[float], Spec("ratio", 0, 1)] | None = None


class Icv(Section):
    weight_fulfilment: Annotated[Ratio, Spec("ratio", 0, 1)]
    weight_punctuality: Annotated[Ratio, Spec("ratio", 0, 1)]
    weight_breakdowns: Annotated[Ratio, Spec("ratio", 0, 1)]
    fulfilment_band: Annotated[Cited[list[float]], Spec("ratio", 0, 1)]
    punctuality_band: Annotated[Cited[list[float]], Spec("ratio", 0, 1)]
    breakdowns_band_per_10000_km: Annotated[Cited[list[float]], Spec("per_10000_km", 0, 1000)]

    @model_validator(mode="after")
    def _weights(self) -> Self:
        total = (
            self.weight_fulfilment.value
            + self.weight_punctuality.value
            + self.weight_breakdowns.value
        )
        if abs(total - 1.0) > 1e-9:
            raise ValueError(f"ICV weights must add up to 1, they add up to {total:g}")
        for name in ("fulfilment_band", "punctuality_band", "breakdowns_band_per_10000_km"):
            band = getattr(self, name).value
            if len(band) != 2 or band[0] == band[1]:
                raise ValueError(f"{name}: expected [score-0 value, score-100 value], got {band}")
        return self


class Quality(Section):
    iqs_dimensions: Annotated[Cited[list[str]], Spec("list")]
    iqs_score_scale: Annotated[Cited[list[float]], Spec("points")]
    annual_weight_icv: Annotated[Ratio, Spec("ratio", 0, 1)]
    annual_weight_iqs: Annotated[Ratio, Spec("ratio", 0, 1)]
    grade_min_points: Annotated[Cited[dict[str, float]], Spec("points")]
    # how many of `iqs_dimensions` a year's survey must score to enter the annual score, and
    # the score of a year without such a survey: "icv_only" (the ICV alone, with the IQS
    # weight not charged) or "no_grade" (no annual score, no grade)
    iqs_min_dimensions: Annotated[Cited[int], Spec("dimensions", 1, 20)]
    annual_without_iqs: Annotated[Cited[Literal["icv_only", "no_grade"]], Spec("rule")]
    # absent where the law has no cassação by grade (CGS): no watch is computed
    cassacao_consecutive_e_years: Annotated[Cited[int], Spec("years", 1, 50)] | None = None
    cassacao_total_e_years: Annotated[Cited[int], Spec("years", 1, 50)] | None = None

    @model_validator(mode="after")
    def _grades(self) -> Self:
        bands = self.grade_min_points.value
        if sorted(bands) != ["A", "B", "C", "D"]:
            raise ValueError(
                f"grade_min_points: expected keys A, B, C, D (E is below D), got {sorted(bands)}"
            )
        if not bands["A"] > bands["B"] > bands["C"] > bands["D"]:
            raise ValueError("grade_min_points: expected A > B > C > D")
        total = self.annual_weight_icv.value + self.annual_weight_iqs.value
        if abs(total - 1.0) > 1e-9:
            raise ValueError(f"annual weights must add up to 1, they add up to {total:g}")
        if (self.cassacao_consecutive_e_years is None) != (self.cassacao_total_e_years is None):
            raise ValueError("cassacao_consecutive_e_years and cassacao_total_e_years go together")
        if self.iqs_min_dimensions.value > len(self.iqs_dimensions.value):
            raise ValueError("iqs_min_dimensions is more than the IQS dimensions listed")
        return self


class VehicleType(Section):
    n_seats: Annotated[Cited[int], Spec("seats", 1, 200)]
    standing_area_m2: Annotated[Cited[float], Spec("m2", 0, 40)]
    # a per-type vehicle life where the law sets one (CGS art. 10-III, 24-25): a vehicle of
    # this type older than it is past its life, whatever the area's maximum age
    useful_life_years: Annotated[Cited[int], Spec("years", 1, 40)] | None = None


class Crowding(Section):
    standees_max_per_m2: Annotated[Cited[float], Spec("pass/m2", 0, 12)]
    # standees allowed per service class where the law sets its own (BG art. 6-II: selective
    # carries seated passengers only, 0); a class not listed uses standees_max_per_m2
    standees_max_per_m2_by_class: (
        Annotated[Cited[dict[str, float]], Spec("pass/m2", 0, 12)] | None
    ) = None
    over_limit_trip_share_max: Annotated[Ratio, Spec("ratio", 0, 1)]
    # beyond this many standees per m² a load is physically implausible (a counting or
    # placement error, flagged on the data-quality page), not a crowded bus
    standees_physical_max_per_m2: Annotated[Cited[float], Spec("pass/m2", 0, 15)]
    vehicle_types: dict[str, VehicleType]

    def standees_limit_by_class(self) -> dict[str, float]:
        """Standees allowed per m² for each service class with its own limit (BG art. 6-II:
        selective 0); any other class has `standees_max_per_m2`."""
        by_class = self.standees_max_per_m2_by_class
        return dict(by_class.value) if by_class else {}


class Km(Section):
    efficiency_min_ratio: Annotated[Ratio, Spec("ratio", 0, 1)]
    window_months: Annotated[Cited[int], Spec("months", 1, 60)]


class Tariff(Section):
    """The technical tariff worksheet (CGS art. 15-16; BG art. 26 §2, 49): the months of
    demand and km it sums (12: "os últimos doze meses", "média anual"), which km divides the
    passengers (`programmed_plus_dead`: programmed km plus the km to start the operation and
    back to the garage, CGS art. 15 §3; `run`: the km the system ran, BG art. 49-I) and, for
    the former, the dead km as a share of the programmed km while no figure is recorded."""

    demand_months: Annotated[Cited[int], Spec("months", 1, 24)]
    km_basis: Annotated[Cited[Literal["programmed_plus_dead", "run"]], Spec("rule")]
    dead_km_ratio: Annotated[Cited[float], Spec("ratio", 0, 1)] | None = None


class InspectionBand(Section):
    min_age_years: Annotated[Cited[float], Spec("years", 0, 60)]
    max_age_years: Annotated[Cited[float], Spec("years", 0, 60)] | None = None
    interval_months: Annotated[Cited[int], Spec("months", 1, 60)]


class AgeLimits(Section):
    max_age_years: Annotated[Cited[float], Spec("years", 0, 60)]
    mean_age_max_years: Annotated[Cited[float], Spec("years", 0, 60)]
    entry_age_max_years: Annotated[Cited[float], Spec("years", 0, 60)]


class Fleet(Section):
    age: dict[str, AgeLimits]
    inspections: list[InspectionBand]
    reserve_min_ratio: Annotated[Ratio, Spec("ratio", 0, 1)]
    reserve_max_ratio: Annotated[Ratio, Spec("ratio", 0, 1)] | None = None
    reserve_small_fleet_below: Annotated[Cited[int], Spec("vehicles", 1, 1000)]
    reserve_small_fleet_min: Annotated[Cited[int], Spec("vehicles", 0, 100)]
    grave_cut_min_ratio: Annotated[Ratio, Spec("ratio", 0, 1)]
    grave_cut_min_days: Annotated[Cited[int], Spec("days", 1, 365)]


class Fares(Section):
    # absent where the law grants no integration fare (CGS): no tap is an integration
    integration_window_s: Annotated[Seconds, Spec("s", 0, 14400)] | None = None
    integration_fare_ratio: Annotated[Ratio, Spec("ratio", 0, 1)] | None = None
    equivalent_weights: Annotated[Cited[dict[str, float]], Spec("ratio", 0, 1)]


class Infraction(Section):
    """One item of the infractions catalogue (BG Anexo I)."""

    group: str
    item: str
    description: str
    penalty: str
    urm_first: float | None = Field(default=None, ge=0)
    urm_repeat: float | None = Field(default=None, ge=0)
    source: str


class Infractions(Section):
    currency_unit: Annotated[Cited[str], Spec("unit")]
    # calendar months (BG art. 65 §2 "nos 06 meses imediatamente anteriores"), not days
    repeat_window_months: Annotated[Cited[int], Spec("months", 1, 120)]
    repeat_multiplier: Annotated[Cited[float], Spec("factor", 1, 10)]
    # Detections (analytics.indices.speeding / stoppage / fares); absent: the fact is not sought.
    # LXXII: a speeding episode is reported speed above the limit, corroborated by the distance
    # between fixes (at least position_ratio × the limit), lasting at least min_duration_s
    speed_limit_m_s: Annotated[Cited[float], Spec("m/s", 1, 50)] | None = None
    speeding_min_duration_s: Annotated[Seconds, Spec("s", 0, 3600)] | None = None
    speeding_position_ratio: Annotated[Ratio, Spec("ratio", 0, 1)] | None = None
    # LXXXII: every programmed trip of an operator not run for at least this long
    stoppage_min_duration_s: Annotated[Seconds, Spec("s", 600, 86400)] | None = None
    # VI: a door event during a run farther than this from every stop
    off_stop_min_distance_m: Annotated[Cited[float], Spec("m", 5, 1000)] | None = None
    # XVII: a stop of a trip whose door sensor works (door events at this many of its stops)
    # with no door event within zone_m of it and margin_s of its visit window
    skipped_stop_zone_m: Annotated[Cited[float], Spec("m", 5, 500)] | None = None
    skipped_stop_margin_s: Annotated[Seconds, Spec("s", 0, 600)] | None = None
    skipped_stop_min_door_events: Annotated[Cited[int], Spec("count", 1, 100)] | None = None
    # the stop's demand shown beside a skipped stop: taps there on other trips within this
    skipped_stop_demand_window_s: Annotated[Seconds, Spec("s", 0, 7200)] | None = None
    # LXVI: the authorised full fare per kind of service (urban, district, selective), in the
    # local currency; a class pays its share of it (student 50 %, exempt 0, BG art. 50-51)
    authorised_fares: Annotated[Cited[dict[str, float]], Spec("BRL", 0, 1000)] | None = None
    items: list[Infraction] = Field(default_factory=list)


# The rules a verdict criterion can follow: each is evaluated by
# analytics.indices.verdicts.build_verdict_criteria. "recorded_by_city" is a criterion the law
# sets on facts Pontual does not see (fiscal qualification, taxes paid, bankruptcy...): it is
# listed with the status "not computed by Pontual", never dropped.
CriterionRule = Literal[
    "quality_goals",
    "km_efficiency",
    "fleet_renewed",
    "grade_e_years",
    "grave_fleet_cut",
    "paralisacao",
    "suspensions",
    "vehicles_past_useful_life",
    "recorded_by_city",
]


class Criterion(Section):
    """One criterion of a verdict: the rule Pontual evaluates, its pt-BR label, its article
    (or default with a note), and whether it decides the verdict on its own."""

    rule: CriterionRule
    label: str
    source: str | None = None
    default: bool = False
    note: str | None = None
    decides: bool = True

    @model_validator(mode="after")
    def _provenance(self) -> Self:
        if bool(self.source) == self.default:
            raise ValueError(
                f"criterion {self.rule}: give either source = '<article>' or default = true "
                "with a note"
            )
        if self.default and not self.note:
            raise ValueError(f"criterion {self.rule}: a default criterion needs a note")
        return self

    @property
    def citation(self) -> str:
        return self.source if self.source else f"padrão do Pontual ({self.note})"


class Verdict(Section):
    """A verdict (renewal, or cassação/revogação) as a list of criteria.

    renewal: apt when every deciding criterion is met; not apt when one is not met; open
    otherwise. termination: an alert when any ground is met."""

    title: str
    source: str
    criteria: list[Criterion]


class Verdicts(Section):
    renewal: Verdict
    termination: Verdict


class Coverage(Section):
    urban_walk_max_m: Annotated[Cited[float], Spec("m", 0, 10000)]
    rural_walk_max_m: Annotated[Cited[float], Spec("m", 0, 20000)]
    walking_factor: Annotated[Cited[float], Spec("factor", 1, 3)]


class Occupancy(Section):
    """GTFS-RT occupancy mapping: load as a share of seats, and standees over the limit."""

    many_seats_below_seat_ratio: Annotated[Ratio, Spec("ratio", 0, 1)]
    few_seats_below_seat_ratio: Annotated[Ratio, Spec("ratio", 0, 1)]
    crushed_standing_above_limit_ratio: Annotated[Cited[float], Spec("ratio", 0, 2)]


class Evidence(Section):
    """What a trip outcome may rest on, and when the data are too thin to judge (issue 16)."""

    counted_as_run: Annotated[Cited[list[str]], Spec("list")]
    feed_outage_min_s: Annotated[Seconds, Spec("s", 60, 7200)]
    feed_down_min_share: Annotated[Ratio, Spec("ratio", 0, 1)]
    ticketing_min_taps: Annotated[Cited[int], Spec("taps", 1, 100)]
    ticketing_margin_s: Annotated[Seconds, Spec("s", 0, 3600)]
    inspection_margin_s: Annotated[Seconds, Spec("s", 0, 3600)]
    unobserved_departure_max_uncertainty_s: Annotated[Seconds, Spec("s", 0, 3600)]
    provisional_below_evaluated_share: Annotated[Ratio, Spec("ratio", 0, 1)]
    gap_credit_max_s: Annotated[Seconds, Spec("s", 0, 7200)]
    gap_credit_min_speed_m_s: Annotated[Cited[float], Spec("m/s", 0, 50)]
    gap_credit_max_speed_m_s: Annotated[Cited[float], Spec("m/s", 0, 50)]

    @field_validator("counted_as_run", mode="after")
    @classmethod
    def _known_classes(cls, value: Cited[list[str]]) -> Cited[list[str]]:
        known = ("gps", "gps_gap_credited", "ticketing", "inspection")
        wrong = [c for c in value.value if c not in known]
        if wrong:
            raise PydanticCustomError(
                "evidence",
                "unknown evidence classes {wrong}; expected some of {known} ('none' never counts)",
                {"wrong": wrong, "known": ", ".join(known)},
            )
        return value


class Procedure(Section):
    """The infraction procedure (cases): deadlines, the holiday calendar, who applies each
    sanction. Optional: a profile without it cannot open cases."""

    state: Annotated[Cited[str], Spec("uf")]
    municipal_holidays: Annotated[Cited[dict[str, str]], Spec("mm-dd")]
    auto_send_days: Annotated[Cited[int], Spec("days", 1, 365)]
    defence_business_days: Annotated[Cited[int], Spec("business_days", 1, 365)]
    diligence_days: Annotated[Cited[int], Spec("days", 1, 3650)]
    appeal_business_days: Annotated[Cited[int], Spec("business_days", 1, 365)]
    suspension_window_months: Annotated[Cited[int], Spec("months", 1, 240)]
    sanction_authority: Annotated[Cited[dict[str, str]], Spec("authority")]
    # when the operator's reports are due (cases.report_dues): the monthly management report
    # within N business days of the month's end; the semester report in the month given per half
    monthly_report_business_days: Annotated[Cited[int], Spec("business_days", 1, 365)] | None = None
    semester_report_months: Annotated[Cited[dict[str, int]], Spec("month", 1, 12)] | None = None


class Profile(BaseModel):
    """A regulation profile. Values are read as ``profile.trips.late_departure_s.value``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str
    name: str
    municipality: str
    law: str
    version: int = Field(ge=1)
    effective_from: date
    fee_table: str | None = None
    general: General
    trips: TripRules
    icv: Icv
    quality: Quality
    crowding: Crowding
    km: Km
    tariff: Tariff | None = None
    fleet: Fleet
    fares: Fares
    infractions: Infractions
    coverage: Coverage
    occupancy: Occupancy
    evidence: Evidence
    verdicts: Verdicts
    procedure: Procedure | None = None

    @model_validator(mode="after")
    def _verdict_keys(self) -> Self:
        rules = {
            c.rule for v in (self.verdicts.renewal, self.verdicts.termination) for c in v.criteria
        }
        if (
            rules & {"quality_goals", "grade_e_years"}
            and self.quality.cassacao_total_e_years is None
        ):
            raise ValueError(
                "verdicts: quality_goals and grade_e_years count E years; they need "
                "quality.cassacao_consecutive_e_years and quality.cassacao_total_e_years"
            )
        return self

    def cited_values(self) -> list[tuple[str, Cited[Any]]]:
        """Every cited value as (dotted key, value), in file order: the methodology table."""
        out: list[tuple[str, Cited[Any]]] = []

        def walk(prefix: str, obj: Any) -> None:
            if isinstance(obj, Cited):
                out.append((prefix, obj))
            elif isinstance(obj, BaseModel):
                for key in type(obj).model_fields:
                    walk(f"{prefix}.{key}" if prefix else key, getattr(obj, key))
            elif isinstance(obj, dict):
                for key, val in obj.items():
                    walk(f"{prefix}.{key}", val)
            elif isinstance(obj, list):
                for i, val in enumerate(obj):
                    walk(f"{prefix}[{i}]", val)

        walk("", self)
        return out


class FeeItem(Section):
    modality: str
    capacity: str
    yearly_ufitas: float | None = Field(default=None, ge=0)
    per_inspection_ufitas: float | None = Field(default=None, ge=0)
    per_km_ufitas: float | None = Field(default=None, ge=0)
    source: str


class FeeTable(BaseModel):
    """A municipal fee table (e.g. Itaboraí's Lei 221/2017). It applies only where a profile
    names it in `fee_table`; no shipped profile does, since neither BG nor CGS law adopts one."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str
    name: str
    municipality: str
    law: str
    currency_unit: str
    # passengers up to which a vehicle is in the small class ("capacidade até 20")
    small_capacity_max: int = Field(ge=1)
    # factor on the inspection fee when the taxpayer chooses the place or time (item 12)
    chosen_place_inspection_factor: float = Field(ge=1)
    chosen_place_inspection_source: str
    items: list[FeeItem]


def _format_errors(exc: ValidationError) -> str:
    parts = []
    for err in exc.errors():
        loc = ".".join(str(p) for p in err["loc"] if p not in ("function-after[_specs(), Cited]",))
        kind = err["type"]
        if kind == "missing":
            msg = "missing key"
        elif kind == "extra_forbidden":
            msg = "unknown key"
        else:
            msg = err["msg"]
        parts.append(f"key {loc}: {msg}" if loc else msg)
    return "; ".join(parts)


def _read_toml(path: Path) -> dict[str, Any]:
    try:
        with path.open("rb") as fh:
            return tomllib.load(fh)
    except FileNotFoundError as exc:
        raise ProfileError("profile file not found", where=str(path)) from exc
    except tomllib.TOMLDecodeError as exc:
        raise ProfileError(f"not valid TOML: {exc}", where=str(path)) from exc
    except UnicodeDecodeError as exc:
        raise ProfileError("not a text file: a profile is TOML in UTF-8", where=str(path)) from exc


def read_profile(path: str | Path) -> Profile:
    """Load and validate a profile file; errors name the file and the key."""
    path = Path(path)
    try:
        return Profile.model_validate(_read_toml(path))
    except ValidationError as exc:
        raise ProfileError(
            _format_errors(exc),
            where=str(path),
            hint="see `pontual profiles show bento-goncalves-2021` for a complete example",
        ) from exc


def read_fee_table(path: str | Path) -> FeeTable:
    path = Path(path)
    try:
        return FeeTable.model_validate(_read_toml(path))
    except ValidationError as exc:
        raise ProfileError(_format_errors(exc), where=str(path)) from exc


def _shipped(name: str) -> Path:
    return Path(str(resources.files("core").joinpath(PROFILE_DIR, f"{name}.toml")))


def list_profiles() -> list[str]:
    """Ids of the profiles shipped with Pontual."""
    folder = Path(str(resources.files("core").joinpath(PROFILE_DIR)))
    return sorted(p.stem for p in folder.glob("*.toml") if not p.stem.startswith("fees-"))


@lru_cache(maxsize=16)
def load_profile(name_or_path: str) -> Profile:
    """A shipped profile by id (e.g. 'bento-goncalves-2021'), or a profile file by path."""
    candidate = Path(name_or_path)
    if candidate.suffix == ".toml" or candidate.exists():
        return read_profile(candidate)
    path = _shipped(name_or_path)
    if not path.exists():
        raise ProfileError(
            f"unknown profile {name_or_path!r}",
            hint=f"shipped profiles: {', '.join(list_profiles())}; or give a path to a .toml file",
        )
    return read_profile(path)


@lru_cache(maxsize=4)
def load_fee_table(name: str) -> FeeTable:
    """A shipped fee table by id (e.g. 'lei-221-2017')."""
    return read_fee_table(_shipped(f"fees-{name}"))
