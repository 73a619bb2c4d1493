"""The names planners read (pt-BR, in the laws' terms) for the ids the indices job stores in
`indicators` and for their units. No streamlit here."""

from __future__ import annotations

import polars as pl

INDICATOR_LABELS: dict[str, str] = {
    "icv_score": "ICV — nota (0–100)",
    "icv_fulfilment": "ICV — cumprimento de viagens",
    "icv_punctuality": "ICV — pontualidade",
    "icv_score_fulfilment": "ICV — pontos de cumprimento",
    "icv_score_punctuality": "ICV — pontos de pontualidade",
    "icv_score_breakdowns": "ICV — pontos de quebras",
    "breakdowns": "Quebras",
    "breakdowns_per_10000_km": "Quebras por 10.000 km",
    "mkbf_km": "Km médios entre quebras",
    "trips_programmed": "Viagens programadas",
    "trips_run": "Viagens realizadas",
    "trips_suppressed": "Viagens suprimidas",
    "trips_not_evaluated": "Viagens não avaliadas — sem dados",
    "evaluated_share": "Parcela das viagens programadas avaliadas",
    "gps_coverage_share": "Viagens programadas com GPS",
    "trips_by_ticketing": "Viagens comprovadas só pela bilhetagem",
    "trips_by_inspection": "Viagens comprovadas só pela fiscalização",
    "suppressed_trips": "Viagens suprimidas",
    "trips_partial": "Viagens parciais",
    "trips_late": "Viagens atrasadas",
    "trips_early": "Viagens adiantadas",
    "trips_broken_down": "Viagens interrompidas por quebra",
    "trips_justified": "Viagens justificadas (ocorrência aprovada)",
    "share_late": "Parcela de viagens atrasadas",
    "share_early": "Parcela de viagens adiantadas",
    "km_programmed": "Km programados",
    "km_run": "Km rodados",
    "km_efficiency": "Km rodados ÷ programados",
    "km_efficiency_window": "Km rodados ÷ programados (12 meses)",
    "km_months_below": "Meses abaixo do mínimo de km",
    "passengers": "Passageiros (validações)",
    "equivalent_passengers": "Passageiros equivalentes",
    "ipk": "IPK (passageiros por km)",
    "ipk_equivalent": "IPKe (equivalentes por km)",
    "fare_integrations": "Parcela de integrações tarifárias",
    "integration_effect_equivalent": "Efeito das integrações nos equivalentes",
    "technical_tariff_brl": "Tarifa técnica (custo por km ÷ IPKe)",
    "awt_s": "Espera média real (AWT)",
    "swt_s": "Espera média programada (SWT)",
    "ewt_s": "Espera excedente (EWT)",
    "headway_regularity": "Regularidade do intervalo (SWT ÷ AWT)",
    "coverage_total": "Cobertura de paradas — total",
    "coverage_urban": "Cobertura de paradas — urbana",
    "coverage_rural": "Cobertura de paradas — rural",
    "fees_yearly": "Taxas anuais de fiscalização",
    "fleet_age_max_years_urban": "Idade máxima da frota — urbana",
    "fleet_age_max_years_district": "Idade máxima da frota — distrital",
    "fleet_age_mean_years_urban": "Idade média da frota — urbana",
    "fleet_age_mean_years_district": "Idade média da frota — distrital",
    "vehicles_over_max_age_urban": "Veículos acima da idade máxima — urbanos",
    "vehicles_over_max_age_district": "Veículos acima da idade máxima — distritais",
    "vehicles_entry_over_age_urban": "Veículos que entraram acima da idade — urbanos",
    "vehicles_entry_over_age_district": "Veículos que entraram acima da idade — distritais",
    "annual_score": "Nota anual",
    "iqs_score": "IQS — nota (0–100)",
}
"""Indicator id -> its name on the dashboard."""

BAND_PREFIXES = {
    "inspections_due_band_": "Vistorias a vencer — faixa de idade ",
    "inspections_overdue_band_": "Vistorias vencidas — faixa de idade ",
}
"""Families of ids numbered by the profile's inspection bands (BG art. 23 I, II, III)."""

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
    "breakdowns": "quebras",
    "ufitas": "UFITAS",
}
"""Unit id of `indicators.unit` -> how the dashboard writes it."""


def to_indicator_label(indicator: str) -> str:
    """The pt-BR name of an indicator id (the id itself when unknown)."""
    if indicator in INDICATOR_LABELS:
        return INDICATOR_LABELS[indicator]
    for prefix, text in BAND_PREFIXES.items():
        if indicator.startswith(prefix):
            band = indicator.removeprefix(prefix)
            roman = {"1": "I", "2": "II", "3": "III", "4": "IV"}.get(band, band)
            return f"{text}{roman} (art. 23)"
    return indicator


def label_indicators(indicators: pl.Series) -> pl.Series:
    """`to_indicator_label` over a column (replace on the known ids, vectorised)."""
    known = indicators.replace_strict(INDICATOR_LABELS, default=None, return_dtype=pl.String)
    unknown = indicators.filter(known.is_null()).unique()
    bands = {i: to_indicator_label(i) for i in unknown.to_list()}
    return known.fill_null(
        indicators.replace_strict(bands, default=indicators, return_dtype=pl.String)
    ).alias(indicators.name)


SOURCE_PHRASES = (
    ("default, to be fixed by decree", "padrão do Pontual, a fixar por decreto"),
    ("BG has no coverage rule", "BG não fixa cobertura"),
    ("fee table", "tabela de taxas"),
    ("practice", "prática"),
    (
        "whenever the limit is exceeded, more trips or capacity",
        "excedido o limite, mais viagens ou capacidade",
    ),
    ("cost per km ÷ IPKe", "custo por km ÷ IPKe"),
)
"""English phrases of the profiles' and jobs' `source` texts, as planners read them."""


def to_source_text(sources: pl.Series) -> pl.Series:
    """`source` texts (articles, profile keys) with their English phrases in pt-BR."""
    out = sources.fill_null("")
    for english, portuguese in SOURCE_PHRASES:
        out = out.str.replace_all(english, portuguese, literal=True)
    return out


def to_source(text: str | None, default: str = "perfil") -> str:
    """One `source` text as planners read it (`default` when there is none)."""
    if not text:
        return default
    for english, portuguese in SOURCE_PHRASES:
        text = text.replace(english, portuguese)
    return text
