"""The catalogue of indicators: every id the `indicators` table can hold, declared once.

For each id: its `unit` (as `indicators.unit` stores it), the `article` of the law that asks
for it (or "default, to be fixed by decree" where the law leaves the rule to a decree), its
pt-BR `label`, which way is `better` ('higher', 'lower', or 'neither' for plain counts of
what was planned) and how it reads (`format`: 'percent' for a 0-1 ratio, 'count', 'km',
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
    label: str
    better: str
    format: str
    decimals: int = 1

    def __post_init__(self) -> None:
        if self.better not in BETTER or self.format not in FORMATS:
            raise ValueError(f"indicator {self.id}: better {self.better!r}, format {self.format!r}")

    @property
    def is_higher_better(self) -> bool:
        return self.better != "lower"


def _i(
    id: str, unit: str, article: str, label: str, better: str, fmt: str, decimals: int = 1
) -> Indicator:
    return Indicator(id, unit, article, label, better, fmt, decimals)


_AREAS = (("urban", "urbano", "I"), ("district", "distrital", "II"))

CATALOGUE: tuple[Indicator, ...] = (
    # -- ICV (BG art. 57-I) ----------------------------------------------------------------
    _i("icv_score", "points", "BG art. 57-I, 58", "ICV — nota (0–100)", "higher", "points"),
    _i(
        "icv_fulfilment",
        "ratio",
        "BG art. 57-I-a",
        "ICV — cumprimento de viagens",
        "higher",
        "percent",
    ),
    _i("icv_punctuality", "ratio", "BG art. 57-I-b", "ICV — pontualidade", "higher", "percent"),
    _i(
        "icv_score_fulfilment",
        "points",
        "BG art. 57-I-a, 58",
        "ICV — pontos de cumprimento",
        "higher",
        "points",
    ),
    _i(
        "icv_score_punctuality",
        "points",
        "BG art. 57-I-b, 58",
        "ICV — pontos de pontualidade",
        "higher",
        "points",
    ),
    _i(
        "icv_score_breakdowns",
        "points",
        "BG art. 57-I-c, 58",
        "ICV — pontos de quebras",
        "higher",
        "points",
    ),
    _i("breakdowns", "breakdowns", "BG art. 57-I-c", "Quebras", "lower", "count"),
    _i(
        "breakdowns_per_10000_km",
        "per_10000_km",
        "BG art. 57-I-c",
        "Quebras por 10.000 km",
        "lower",
        "number",
        2,
    ),
    _i("mkbf_km", "km", "BG art. 57-I-c", "Km médios entre quebras", "higher", "km"),
    _i("trips_programmed", "trips", "BG art. 57-I", "Viagens programadas", "neither", "count"),
    _i("trips_run", "trips", "BG art. 57-I", "Viagens realizadas", "higher", "count"),
    _i("trips_suppressed", "trips", "BG art. 57-I-a", "Viagens suprimidas", "lower", "count"),
    _i("trips_partial", "trips", "BG art. 57-I-a", "Viagens parciais", "lower", "count"),
    _i("trips_late", "trips", "BG art. 57-I-b", "Viagens atrasadas", "lower", "count"),
    _i("trips_early", "trips", "BG art. 57-I-b", "Viagens adiantadas", "lower", "count"),
    _i(
        "trips_broken_down",
        "trips",
        "BG art. 57-I-c",
        "Viagens interrompidas por quebra",
        "lower",
        "count",
    ),
    _i(
        "trips_justified",
        "trips",
        "BG art. 57 §1",
        "Viagens justificadas (ocorrência aprovada)",
        "neither",
        "count",
    ),
    _i("share_late", "ratio", "BG art. 57-I-b", "Parcela de viagens atrasadas", "lower", "percent"),
    _i(
        "share_early",
        "ratio",
        "BG art. 57-I-b",
        "Parcela de viagens adiantadas",
        "lower",
        "percent",
    ),
    # -- km (CGS art. 2, 20-II) -------------------------------------------------------------
    _i("km_programmed", "km", "CGS art. 2, 20-II", "Km programados", "neither", "km"),
    _i("km_run", "km", "CGS art. 2, 20-II", "Km rodados", "higher", "km"),
    _i(
        "km_efficiency",
        "ratio",
        "CGS art. 2, 20-II",
        "Km rodados ÷ programados",
        "higher",
        "percent",
    ),
    _i(
        "km_efficiency_window",
        "ratio",
        "CGS art. 2, 20-II",
        "Km rodados ÷ programados (12 meses)",
        "higher",
        "percent",
    ),
    _i(
        "km_months_below",
        "months",
        "CGS art. 2, 20-II",
        "Meses abaixo do mínimo de km",
        "lower",
        "count",
    ),
    # -- ridership (BG art. 7, 26, 49; CGS art. 7, 15, 16) --------------------------------
    _i("passengers", "passengers", "BG art. 26, 49", "Passageiros (validações)", "higher", "count"),
    _i(
        "equivalent_passengers",
        "passengers",
        "CGS art. 7 §2",
        "Passageiros equivalentes",
        "higher",
        "number",
    ),
    _i("ipk", "passengers/km", "CGS art. 15", "IPK (passageiros por km)", "higher", "number", 2),
    _i(
        "ipk_equivalent",
        "passengers/km",
        "CGS art. 15, 16",
        "IPKe (equivalentes por km)",
        "higher",
        "number",
        2,
    ),
    _i(
        "fare_integrations",
        "ratio",
        "BG art. 7-V",
        "Parcela de integrações tarifárias",
        "neither",
        "percent",
    ),
    _i(
        "integration_effect_equivalent",
        "ratio",
        "BG art. 7-V",
        "Efeito das integrações nos equivalentes",
        "neither",
        "percent",
    ),
    _i(
        "technical_tariff_brl",
        "brl",
        "CGS art. 15",
        "Tarifa técnica (custo por km ÷ IPKe)",
        "lower",
        "money",
        2,
    ),
    # -- waiting at frequent lines (no article: TfL practice) -------------------------------
    _i("awt_s", "s", DEFAULT, "Espera média real (AWT)", "lower", "minutes"),
    _i("swt_s", "s", DEFAULT, "Espera média programada (SWT)", "neither", "minutes"),
    _i("ewt_s", "s", DEFAULT, "Espera excedente (EWT)", "lower", "minutes"),
    _i(
        "headway_regularity",
        "ratio",
        DEFAULT,
        "Regularidade do intervalo (SWT ÷ AWT)",
        "higher",
        "percent",
    ),
    # -- coverage (BG has no coverage rule) --------------------------------------------------
    _i(
        "coverage_total", "ratio", "CGS art. 4", "Cobertura de paradas — total", "higher", "percent"
    ),
    _i("coverage_urban", "ratio", DEFAULT, "Cobertura de paradas — urbana", "higher", "percent"),
    _i("coverage_rural", "ratio", DEFAULT, "Cobertura de paradas — rural", "higher", "percent"),
    _i(
        "regions_served_urban",
        "ratio",
        "CGS art. 4",
        "Regiões urbanas atendidas (deslocamento médio ≤ 400 m)",
        "higher",
        "percent",
    ),
    _i(
        "regions_served_rural",
        "ratio",
        "CGS art. 4",
        "Regiões rurais atendidas (deslocamento médio ≤ 1.500 m)",
        "higher",
        "percent",
    ),
    _i(
        "mean_walk_m_urban",
        "m",
        "CGS art. 4",
        "Deslocamento médio urbano até o ponto (m)",
        "lower",
        "number",
        0,
    ),
    _i(
        "mean_walk_m_rural",
        "m",
        "CGS art. 4",
        "Deslocamento médio rural até o ponto (m)",
        "lower",
        "number",
        0,
    ),
    # -- data coverage (unobserved is not failed; BG art. 25, 57 §2) ---------------------------
    _i(
        "trips_not_evaluated",
        "trips",
        "BG art. 25",
        "Viagens não avaliadas — sem dados",
        "lower",
        "count",
    ),
    _i(
        "evaluated_share",
        "ratio",
        DEFAULT,
        "Parcela das viagens programadas avaliadas",
        "higher",
        "percent",
    ),
    _i(
        "gps_coverage_share",
        "ratio",
        "BG art. 25",
        "Viagens programadas com GPS",
        "higher",
        "percent",
    ),
    _i(
        "trips_by_ticketing",
        "trips",
        "BG art. 57 §2",
        "Viagens comprovadas só pela bilhetagem",
        "neither",
        "count",
    ),
    _i(
        "trips_by_inspection",
        "trips",
        "BG art. 57 §2",
        "Viagens comprovadas só pela fiscalização",
        "neither",
        "count",
    ),
    # -- fleet (BG art. 18-23, 72; CGS art. 23) ---------------------------------------------
    *[
        ind
        for area, word, roman in _AREAS
        for ind in (
            _i(
                f"fleet_age_max_years_{area}",
                "years",
                f"BG art. 18-{roman}-a",
                f"Idade máxima da frota (anos) — {word}",
                "lower",
                "number",
            ),
            _i(
                f"fleet_age_mean_years_{area}",
                "years",
                f"BG art. 18-{roman}-b",
                f"Idade média da frota (anos) — {word}",
                "lower",
                "number",
            ),
            _i(
                f"fleet_mean_age_over_limit_{area}",
                "flag",
                f"BG art. 18-{roman}-b",
                f"Idade média acima do limite (1 = sim) — {word}",
                "lower",
                "number",
                0,
            ),
            _i(
                f"vehicles_over_max_age_{area}",
                "ratio",
                f"BG art. 18-{roman}-a",
                f"Veículos acima da idade máxima — {word}",
                "lower",
                "percent",
            ),
            _i(
                f"vehicles_entry_over_age_{area}",
                "ratio",
                f"BG art. 19-{roman}",
                f"Veículos que entraram acima da idade de ingresso — {word}",
                "lower",
                "percent",
            ),
        )
    ],
    _i(
        "fees_yearly",
        "ufitas",
        "Lei 221/2017",
        "Taxas anuais de fiscalização (UFITAS)",
        "neither",
        "number",
    ),
    _i(
        "days_reserve_below_min",
        "days",
        "BG Anexo I XXXV; CGS art. 23",
        "Dias com frota reserva abaixo do mínimo",
        "lower",
        "count",
    ),
    _i(
        "days_reserve_above_max",
        "days",
        "CGS art. 23",
        "Dias com frota reserva acima do máximo",
        "lower",
        "count",
    ),
    _i(
        "days_fleet_cut_over_limit",
        "days",
        "BG art. 72 p.ú. I",
        "Dias com redução de frota acima do limite",
        "lower",
        "count",
    ),
    _i(
        "days_grave_fleet_cut",
        "days",
        "BG art. 72 p.ú. I",
        "Dias de redução grave de frota (art. 72 p.ú. I)",
        "lower",
        "count",
    ),
    _i(
        "fleet_operated_ratio",
        "ratio",
        "BG art. 72 p.ú. I",
        "Frota operada ÷ frota exigida",
        "higher",
        "percent",
    ),
    # -- quality and the annual grade (BG art. 56-58) ---------------------------------------
    _i("iqs", "points", "BG art. 57-II", "IQS — nota (0–100)", "higher", "points"),
    _i("annual_score", "points", "BG art. 56-58", "Nota anual", "higher", "points"),
    # -- computed by the dashboard from `trip_crowding`, not stored in `indicators` ---------
    _i(
        "crowded_trip_share",
        "ratio",
        "BG art. 59",
        "Viagens acima do limite de lotação",
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
        "Vistorias vencidas — faixa ",
        "lower",
        "percent",
    ),
    _i(
        "inspections_due_band_",
        "ratio",
        "BG art. 23",
        "Vistorias a vencer — faixa ",
        "neither",
        "percent",
    ),
)
"""Ids numbered by the profile's inspection bands (BG art. 23 I, II, III): the id, the label
and the article end with the band's number."""

INDICATORS: dict[str, Indicator] = {i.id: i for i in CATALOGUE}
"""Indicator id -> its declaration."""

UNIT_LABELS: dict[str, str] = {
    "ratio": "%",
    "points": "pontos",
    "km": "km",
    "trips": "viagens",
    "brl": "R$",
    "s": "s",
    "per_10000_km": "por 10.000 km",
    "passengers": "passageiros",
    "passengers/km": "pass./km",
    "vehicles": "veículos",
    "years": "anos",
    "months": "meses",
    "days": "dias",
    "breakdowns": "quebras",
    "ufitas": "UFITAS",
    "flag": "sim/não",
    "m": "m",
}
"""Unit id of `indicators.unit` -> how people read it (pt-BR)."""

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
                label=family.label + band,
                article=f"{family.article}-{_ROMAN.get(band, band)}",
            )
    return None


def to_label(id: str) -> str:
    """The pt-BR label of an id (the id itself when unknown)."""
    found = indicator(id)
    return found.label if found else id
