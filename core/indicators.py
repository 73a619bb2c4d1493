"""The catalogue of indicators: every id the `indicators` table can hold, declared once.

For each id: its `unit` (as `indicators.unit` stores it), the `article` of the law that asks
for it (or "default, to be fixed by decree" where the law leaves the rule to a decree), its
`label` (an English text marked for the catalogue, `core.texts`; shown in pt-BR by default),
which way is `better` ('higher', 'lower', or 'neither' for plain counts of what was planned) and how it reads (`format`: 'percent' for a 0-1 ratio, 'count', 'km',
'points', 'number' with `decimals`, 'minutes' for seconds, 'money' for reais).

Read by the indices CLI table (`pontual indices`), the dashboard and the reports. Where the
indices job computes an indicator (analytics/indices), its `source` text names the profile
keys behind the value; the catalogue names the article. A test checks that every id a demo
run writes has an entry here, with the same unit.

Ids numbered by the profile's inspection bands (`inspections_due_band_1`, ...) are declared
once as a family (`FAMILIES`); `indicator(id)` finds both.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from core.texts import N_, Labels, gettext

DEFAULT = "default, to be fixed by decree"
"""The article text of a rule the law leaves to a decree (BG art. 58): Pontual's default."""

FORMATS = ("percent", "count", "km", "points", "number", "minutes", "money")
BETTER = ("higher", "lower", "neither")


@dataclass(frozen=True)
class Indicator:
    """One indicator id and how it reads."""

    id: str
    unit: str
    article: str
    text: str
    """The label's English text, marked for the catalogue (`core.texts`): a template that may
    name the inspection `band` ("{band}") or the fleet's `area` ("{area}")."""
    better: str
    format: str
    decimals: int = 1
    band: str = ""
    area: str = ""
    """The marked text of the area ("urban (area)") an indicator of each area is for."""

    def __post_init__(self) -> None:
        if self.better not in BETTER or self.format not in FORMATS:
            raise ValueError(f"indicator {self.id}: better {self.better!r}, format {self.format!r}")

    @property
    def label(self) -> str:
        """The label in the chosen language (pt-BR by default)."""
        area = gettext(self.area) if self.area else ""
        return gettext(self.text, band=self.band, area=area)

    @property
    def is_higher_better(self) -> bool:
        return self.better != "lower"


def _i(
    id: str, unit: str, article: str, text: str, better: str, fmt: str, decimals: int = 1
) -> Indicator:
    return Indicator(id, unit, article, text, better, fmt, decimals)


_AREAS = (("urban", N_("urban (area)"), "I"), ("district", N_("district (area)"), "II"))

CATALOGUE: tuple[Indicator, ...] = (
    # -- ICV (BG art. 57-I) ----------------------------------------------------------------
    _i("icv_score", "points", "BG art. 57-I, 58", N_("ICV — score (0–100)"), "higher", "points"),
    _i(
        "icv_fulfilment",
        "ratio",
        "BG art. 57-I-a",
        N_("ICV — trip fulfilment"),
        "higher",
        "percent",
    ),
    _i("icv_punctuality", "ratio", "BG art. 57-I-b", N_("ICV — punctuality"), "higher", "percent"),
    _i(
        "icv_score_fulfilment",
        "points",
        "BG art. 57-I-a, 58",
        N_("ICV — fulfilment points"),
        "higher",
        "points",
    ),
    _i(
        "icv_score_punctuality",
        "points",
        "BG art. 57-I-b, 58",
        N_("ICV — punctuality points"),
        "higher",
        "points",
    ),
    _i(
        "icv_score_breakdowns",
        "points",
        "BG art. 57-I-c, 58",
        N_("ICV — breakdown points"),
        "higher",
        "points",
    ),
    _i("breakdowns", "breakdowns", "BG art. 57-I-c", N_("Breakdowns"), "lower", "count"),
    _i(
        "breakdowns_per_10000_km",
        "per_10000_km",
        "BG art. 57-I-c",
        N_("Breakdowns per 10,000 km"),
        "lower",
        "number",
        2,
    ),
    _i("mkbf_km", "km", "BG art. 57-I-c", N_("Mean km between breakdowns"), "higher", "km"),
    _i("trips_programmed", "trips", "BG art. 57-I", N_("Scheduled trips"), "neither", "count"),
    _i("trips_run", "trips", "BG art. 57-I", N_("Trips run"), "higher", "count"),
    _i("trips_suppressed", "trips", "BG art. 57-I-a", N_("Suppressed trips"), "lower", "count"),
    _i("trips_partial", "trips", "BG art. 57-I-a", N_("Partial trips"), "lower", "count"),
    _i("trips_late", "trips", "BG art. 57-I-b", N_("Late trips"), "lower", "count"),
    _i("trips_early", "trips", "BG art. 57-I-b", N_("Early trips"), "lower", "count"),
    _i(
        "trips_broken_down",
        "trips",
        "BG art. 57-I-c",
        N_("Trips interrupted by a breakdown"),
        "lower",
        "count",
    ),
    _i(
        "trips_justified",
        "trips",
        "BG art. 57 §1",
        N_("Justified trips (approved incident)"),
        "neither",
        "count",
    ),
    _i("share_late", "ratio", "BG art. 57-I-b", N_("Share of late trips"), "lower", "percent"),
    _i(
        "share_early",
        "ratio",
        "BG art. 57-I-b",
        N_("Share of early trips"),
        "lower",
        "percent",
    ),
    # -- km (CGS art. 2, 20-II) -------------------------------------------------------------
    _i("km_programmed", "km", "CGS art. 2, 20-II", N_("Scheduled km"), "neither", "km"),
    _i("km_run", "km", "CGS art. 2, 20-II", N_("Km run"), "higher", "km"),
    _i(
        "km_efficiency",
        "ratio",
        "CGS art. 2, 20-II",
        N_("Km run ÷ scheduled"),
        "higher",
        "percent",
    ),
    _i(
        "km_efficiency_window",
        "ratio",
        "CGS art. 2, 20-II",
        N_("Km run ÷ scheduled (12 months)"),
        "higher",
        "percent",
    ),
    _i(
        "km_months_below",
        "months",
        "CGS art. 2, 20-II",
        N_("Months below the km minimum"),
        "lower",
        "count",
    ),
    # -- ridership (BG art. 7, 26, 49; CGS art. 7, 15, 16) --------------------------------
    _i("passengers", "passengers", "BG art. 26, 49", N_("Passengers (taps)"), "higher", "count"),
    _i(
        "equivalent_passengers",
        "passengers",
        "CGS art. 7 §2",
        N_("Equivalent passengers"),
        "higher",
        "number",
    ),
    _i("ipk", "passengers/km", "CGS art. 15", N_("IPK (passengers per km)"), "higher", "number", 2),
    _i(
        "ipk_equivalent",
        "passengers/km",
        "CGS art. 15, 16",
        N_("IPKe (equivalents per km)"),
        "higher",
        "number",
        2,
    ),
    _i(
        "fare_integrations",
        "ratio",
        "BG art. 7-V",
        N_("Share of fare transfers"),
        "neither",
        "percent",
    ),
    _i(
        "integration_effect_equivalent",
        "ratio",
        "BG art. 7-V",
        N_("Effect of transfers on the equivalents"),
        "neither",
        "percent",
    ),
    _i(
        "technical_tariff_brl",
        "brl",
        "CGS art. 15",
        N_("Technical fare (cost per km ÷ IPKe)"),
        "lower",
        "money",
        2,
    ),
    # -- waiting at frequent lines (no article: TfL practice) -------------------------------
    _i("awt_s", "s", DEFAULT, N_("Actual mean wait (AWT)"), "lower", "minutes"),
    _i("swt_s", "s", DEFAULT, N_("Scheduled mean wait (SWT)"), "neither", "minutes"),
    _i("ewt_s", "s", DEFAULT, N_("Excess wait (EWT)"), "lower", "minutes"),
    _i(
        "headway_regularity",
        "ratio",
        DEFAULT,
        N_("Headway regularity (SWT ÷ AWT)"),
        "higher",
        "percent",
    ),
    # -- coverage (BG has no coverage rule) --------------------------------------------------
    _i("coverage_total", "ratio", "CGS art. 4", N_("Stop coverage — total"), "higher", "percent"),
    _i("coverage_urban", "ratio", DEFAULT, N_("Stop coverage — urban"), "higher", "percent"),
    _i("coverage_rural", "ratio", DEFAULT, N_("Stop coverage — rural"), "higher", "percent"),
    _i(
        "regions_served_urban",
        "ratio",
        "CGS art. 4",
        N_("Urban regions served (mean walk ≤ 400 m)"),
        "higher",
        "percent",
    ),
    _i(
        "regions_served_rural",
        "ratio",
        "CGS art. 4",
        N_("Rural regions served (mean walk ≤ 1,500 m)"),
        "higher",
        "percent",
    ),
    _i(
        "mean_walk_m_urban",
        "m",
        "CGS art. 4",
        N_("Mean urban walk to the stop (m)"),
        "lower",
        "number",
        0,
    ),
    _i(
        "mean_walk_m_rural",
        "m",
        "CGS art. 4",
        N_("Mean rural walk to the stop (m)"),
        "lower",
        "number",
        0,
    ),
    # -- data coverage (unobserved is not failed; BG art. 25, 57 §2) ---------------------------
    _i(
        "trips_not_evaluated",
        "trips",
        "BG art. 25",
        N_("Trips not evaluated — no data"),
        "lower",
        "count",
    ),
    _i(
        "evaluated_share",
        "ratio",
        DEFAULT,
        N_("Share of scheduled trips evaluated"),
        "higher",
        "percent",
    ),
    _i(
        "gps_coverage_share",
        "ratio",
        "BG art. 25",
        N_("Scheduled trips with GPS"),
        "higher",
        "percent",
    ),
    _i(
        "trips_by_ticketing",
        "trips",
        "BG art. 57 §2",
        N_("Trips proven by ticketing only"),
        "neither",
        "count",
    ),
    _i(
        "trips_by_inspection",
        "trips",
        "BG art. 57 §2",
        N_("Trips proven by inspection only"),
        "neither",
        "count",
    ),
    # -- fleet (BG art. 18-23, 72; CGS art. 23) ---------------------------------------------
    *[
        replace(ind, area=word)
        for area, word, roman in _AREAS
        for ind in (
            _i(
                f"fleet_age_max_years_{area}",
                "years",
                f"BG art. 18-{roman}-a",
                N_("Maximum fleet age (years) — {area}"),
                "lower",
                "number",
            ),
            _i(
                f"fleet_age_mean_years_{area}",
                "years",
                f"BG art. 18-{roman}-b",
                N_("Mean fleet age (years) — {area}"),
                "lower",
                "number",
            ),
            _i(
                f"fleet_mean_age_over_limit_{area}",
                "flag",
                f"BG art. 18-{roman}-b",
                N_("Mean age over the limit (1 = yes) — {area}"),
                "lower",
                "number",
                0,
            ),
            _i(
                f"vehicles_over_max_age_{area}",
                "ratio",
                f"BG art. 18-{roman}-a",
                N_("Vehicles over the maximum age — {area}"),
                "lower",
                "percent",
            ),
            _i(
                f"vehicles_entry_over_age_{area}",
                "ratio",
                f"BG art. 19-{roman}",
                N_("Vehicles that entered over the entry age — {area}"),
                "lower",
                "percent",
            ),
        )
    ],
    _i(
        "fees_yearly",
        "ufitas",
        "Lei 221/2017",
        N_("Annual inspection fees (UFITAS)"),
        "neither",
        "number",
    ),
    _i(
        "days_reserve_below_min",
        "days",
        "BG Anexo I XXXV; CGS art. 23",
        N_("Days with the reserve fleet below the minimum"),
        "lower",
        "count",
    ),
    _i(
        "days_reserve_above_max",
        "days",
        "CGS art. 23",
        N_("Days with the reserve fleet above the maximum"),
        "lower",
        "count",
    ),
    _i(
        "days_fleet_cut_over_limit",
        "days",
        "BG art. 72 p.ú. I",
        N_("Days with a fleet reduction over the limit"),
        "lower",
        "count",
    ),
    _i(
        "days_grave_fleet_cut",
        "days",
        "BG art. 72 p.ú. I",
        N_("Days of grave fleet reduction (art. 72 p.ú. I)"),
        "lower",
        "count",
    ),
    _i(
        "fleet_operated_ratio",
        "ratio",
        "BG art. 72 p.ú. I",
        N_("Fleet operated ÷ fleet required"),
        "higher",
        "percent",
    ),
    # -- quality and the annual grade (BG art. 56-58) ---------------------------------------
    _i("iqs", "points", "BG art. 57-II", N_("IQS — score (0–100)"), "higher", "points"),
    _i("annual_score", "points", "BG art. 56-58", N_("Annual score"), "higher", "points"),
    # -- computed by the dashboard from `trip_crowding`, not stored in `indicators` ---------
    _i(
        "crowded_trip_share",
        "ratio",
        "BG art. 59",
        N_("Trips over the crowding limit"),
        "lower",
        "percent",
    ),
)
"""Every indicator, in the order the dashboard and the CLI list them."""

FAMILIES: tuple[Indicator, ...] = (
    _i(
        "inspections_overdue_band_",
        "ratio",
        "BG art. 23",
        N_("Overdue inspections — band {band}"),
        "lower",
        "percent",
    ),
    _i(
        "inspections_due_band_",
        "ratio",
        "BG art. 23",
        N_("Inspections coming due — band {band}"),
        "neither",
        "percent",
    ),
)
"""Ids numbered by the profile's inspection bands (BG art. 23 I, II, III): the id, the label
and the article end with the band's number."""

INDICATORS: dict[str, Indicator] = {i.id: i for i in CATALOGUE}
"""Indicator id -> its declaration."""

UNIT_LABELS = Labels(
    {
        "ratio": "%",
        "points": N_("points (unit)"),
        "km": "km",
        "trips": N_("trips (unit)"),
        "brl": "R$",
        "s": "s",
        "per_10000_km": N_("per 10,000 km"),
        "passengers": N_("passengers (unit)"),
        "passengers/km": "pass./km",
        "vehicles": N_("vehicles (unit)"),
        "years": N_("years (unit)"),
        "months": N_("months (unit)"),
        "days": N_("days (unit)"),
        "breakdowns": N_("breakdowns (unit)"),
        "ufitas": "UFITAS",
        "flag": N_("yes/no (unit)"),
        "m": "m",
    }
)
"""Unit id of `indicators.unit` -> how people read it (pt-BR by default); a symbol such as
"km" or "R$" is not a catalogue text and reads the same in every language."""

_ROMAN = {"1": "I", "2": "II", "3": "III", "4": "IV", "5": "V"}


def indicator(id: str) -> Indicator | None:
    """The declaration of an id (a band of a family included); None when unknown."""
    if id in INDICATORS:
        return INDICATORS[id]
    for family in FAMILIES:
        band = id.removeprefix(family.id)
        if band != id and band.isdigit():
            return replace(
                family,
                id=id,
                band=band,
                article=f"{family.article}-{_ROMAN.get(band, band)}",
            )
    return None


def to_label(id: str) -> str:
    """The pt-BR label of an id (the id itself when unknown)."""
    found = indicator(id)
    return found.label if found else id
