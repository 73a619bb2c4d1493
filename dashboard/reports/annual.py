"""Annual renewal dossier per operator or lot: what a renewal board needs on paper.

ICV and its three parts by month (BG art. 57-I), IQS by survey dimension (art. 57-II), the
annual score and grade (art. 56-58), the grade history with the cassação watch (art. 72-VII),
km efficiency (CGS art. 2, 20-II), fleet compliance (BG art. 18-23, 72 p.ú. I; CGS 23), the
suggested infractions (Anexo I), crowding compliance (art. 59), the methodology (every value of
the profile in force with its article), data completeness and the reproducibility block.

Every figure is read from the tables the indices and crowding jobs wrote (`indicators`,
`annual_grades`, `suggested_infractions`, `trip_crowding`, `crowding_summary`); the dossier
computes no index of its own, so its numbers are the store's.
"""

from __future__ import annotations

from datetime import date

import polars as pl

from analytics.indices.scopes import compute_line_scopes
from cases.db import CaseDB
from cases.reporting import count_cases_by_state, read_period_cases
from core import __version__
from core.errors import ConfigError
from core.indicators import UNIT_LABELS, to_label
from core.periods import year_period
from core.profile import Profile
from core.pt_br import to_yes_no
from core.store import Store
from dashboard.format import to_percent, to_quantity
from dashboard.queries.annual import (
    read_km_term_series,
    read_scope_grades,
    read_tariff_worksheet,
)
from dashboard.queries.crowding import read_crowding_summary, read_trip_crowding
from dashboard.queries.filters import read_routes
from dashboard.queries.fleet import read_register
from dashboard.queries.infractions import read_suggested_infractions
from dashboard.queries.overview import read_indicators
from dashboard.queries.reports import read_monthly_judged, read_monthly_scheduled, read_year_surveys
from dashboard.queries.snapshot import ALL
from dashboard.reports.annual_methodology import build_methodology_paragraphs
from dashboard.reports.annual_tables import (
    compute_completeness,
    compute_crowding_by_line,
    compute_iqs_dimensions,
    compute_month_table,
)
from dashboard.reports.annual_verdict import build_verdict_tables
from dashboard.reports.assemble import finish_report
from dashboard.reports.cases_part import local_today
from dashboard.reports.model import (
    Chart,
    Col,
    Headline,
    ReportData,
    ReportTable,
    Section,
    indicator_col,
    indicator_headline,
)
from dashboard.reports.reproducibility import build_methodology

ICV_PARTS = (
    ("icv_fulfilment", "Cumprimento de viagens"),
    ("icv_punctuality", "Pontualidade"),
    ("breakdowns_per_10000_km", "Quebras por 10.000 km"),
    ("icv_score_fulfilment", "Pontos cumprimento"),
    ("icv_score_punctuality", "Pontos pontualidade"),
    ("icv_score_breakdowns", "Pontos quebras"),
    ("icv_score", "Nota do ICV"),
)
"""The ICV's indicators by month (BG art. 57-I) and their column headings."""
KM_PARTS = (
    ("km_programmed", "Km programados"),
    ("km_run", "Km rodados"),
    ("km_efficiency", "Km rodados ÷ programados"),
)
"""The km indicators by month (CGS art. 2, 20-II) and their column headings."""
HEADLINE_PARTS = ("icv_fulfilment", "icv_punctuality", "breakdowns_per_10000_km")
"""The ICV parts among the dossier's headline figures."""
FLEET_PREFIXES = ("vehicles_", "fleet_", "inspections_", "days_", "fees")


def _scope_lines(scopes: pl.DataFrame, scope: str, scope_id: str) -> pl.DataFrame:
    key = "operator_id" if scope == "operator" else "lot_id"
    return scopes.filter(pl.col(key) == scope_id)


SIGNATURE_BLOCK = (
    "Elaborado por: ______________________________________  Matrícula: ____________  "
    "Data: ____/____/________",
    "Conferido por (órgão gestor): ________________________  Matrícula: ____________  "
    "Data: ____/____/________",
    "Apreciado pelo conselho (ata nº ________): ___________________________________________",
)
"""Lines for who prepared, checked and took note of the dossier: it is a document a renewal
board signs, not a printout."""


def build_grade_timeline(grades: pl.DataFrame) -> str | None:
    """The grade letters across the years of the scope's history ("2024 C · 2025 D · 2026 E"),
    with the cassação watch of the last year (BG art. 72-VII); None without a graded year."""
    graded = grades.filter(pl.col("grade").is_not_null()).sort("year")
    if graded.height == 0:
        return None
    letters = " · ".join(f"{y} {g}" for y, g in graded.select("year", "grade").iter_rows())
    watch = graded["is_cassacao_watch"][-1] if "is_cassacao_watch" in graded.columns else None
    return f"Conceitos por ano: {letters}; alerta de cassação (art. 72-VII): {to_yes_no(watch)}."


def build_cases_paragraph(by_state: pl.DataFrame | None) -> str:
    """The year's infraction cases by state, in words (or why they are not here)."""
    if by_state is None:
        return "Casos de infração: a base de casos não foi informada na emissão; os casos não constam deste dossiê."
    held = by_state.filter(pl.col("n_cases") > 0)
    if held.height == 0:
        return "Casos de infração com fato no ano: nenhum."
    parts = ", ".join(
        f"{state} {to_quantity(n)}" + (f" ({to_quantity(late)} com prazo vencido)" if late else "")
        for state, n, late in held.select("state", "n_cases", "n_overdue").iter_rows()
    )
    return (
        f"Casos de infração com fato no ano: {to_quantity(int(held['n_cases'].sum()))} — "
        f"{parts}. Reincidências e sanções contam só casos julgados procedentes (BG art. 65)."
    )


def build_summary_paragraphs(
    profile: Profile,
    grade: dict,
    completeness: pl.DataFrame,
    grades: pl.DataFrame | None = None,
    cases_by_state: pl.DataFrame | None = None,
) -> tuple[str, ...]:
    """The dossier's opening paragraphs: the grade and whether it can bear a decision (the
    PROVISÓRIO stamp when too few programmed trips could be judged; "indicativo" while the
    grade's bands and weights are Pontual's defaults awaiting the decree), and how much of the
    year the data covers. The verdict criteria and the point breakdown follow as tables."""
    quality, icv = profile.quality, profile.icv
    paragraphs = []
    letter = grade.get("grade")
    score = grade.get("annual_score")
    if letter:
        paragraphs.append(
            f"Conceito {letter} — nota anual {to_quantity(score) if score is not None else '—'} "
            "pontos. Os critérios de cada veredito, com o artigo e a situação de cada um, e a "
            "composição da nota estão nas tabelas abaixo."
        )
    share = grade.get("evaluated_share")
    if grade.get("is_provisional"):
        limit = profile.evidence.provisional_below_evaluated_share.value
        paragraphs.append(
            f"PROVISÓRIO: apenas {to_percent(share)} das viagens programadas do ano puderam ser "
            f"avaliadas (GPS, bilhetagem ou fiscalização), abaixo de {to_percent(limit)}. "
            "Viagens sem dados não contam como suprimidas nem como realizadas; a nota não basta "
            "para decidir a renovação."
        )
    defaults = [
        name
        for name, value in (
            ("notas mínimas dos conceitos", quality.grade_min_points),
            ("pesos da nota anual", quality.annual_weight_icv),
            ("pesos do ICV", icv.weight_fulfilment),
            ("faixas do ICV", icv.fulfilment_band),
        )
        if value.default
    ]
    if defaults:
        paragraphs.append(
            "Indicativo: " + ", ".join(defaults) + " são padrões do Pontual, a fixar por "
            "decreto (BG art. 58); o conceito mostra onde a operadora estaria com eles."
        )
    n_sched = int(completeness["n_scheduled"].sum()) if completeness.height else 0
    n_gps = int(completeness["n_with_gps"].sum()) if completeness.height else 0
    paragraphs.append(
        f"Cobertura dos dados: GPS em {to_percent(n_gps / n_sched if n_sched else None)} das "
        f"{to_quantity(n_sched)} viagens programadas do ano"
        + (f"; {to_percent(share)} avaliadas." if share is not None else ".")
    )
    timeline = build_grade_timeline(grades) if grades is not None else None
    if timeline:
        paragraphs.append(timeline)
    paragraphs.append(build_cases_paragraph(cases_by_state))
    return tuple(paragraphs)


def build_annual_dossier(
    store: Store,
    year: int,
    profile: Profile,
    *,
    scope: str = "operator",
    scope_id: str,
    command: str | None = None,
    raw_digests: pl.DataFrame | None = None,
    cases: CaseDB | None = None,
    today: date | None = None,
) -> ReportData:
    """The annual renewal dossier of one operator (scope 'operator') or lot ('lot').
    `raw_digests`: the year's raw day digests when the caller already has them (one dossier per
    operator of the same year hashes the year's raw pings and taps once). `cases`: the case
    database, for the year's infraction cases by state on the summary page (their state at
    `today`, default today in the profile's zone; not part of the input hash)."""
    if scope not in ("operator", "lot"):
        raise ConfigError(f"unknown scope {scope!r}: expected operator or lot", where="--scope")
    whole = year_period(year)
    start, end = whole.start, whole.end
    months = [f"{year:04d}-{m:02d}" for m in range(1, 13)]
    indicators = read_indicators(store, scope, scope_id, [*months, whole.label])
    grades = read_scope_grades(store, scope, scope_id, year)
    if indicators.height == 0 and grades.filter(pl.col("year") == year).height == 0:
        raise ConfigError(
            f"no indices of {scope} {scope_id} in {year} in the store",
            where=f"store {store.path}, tables indicators and annual_grades",
            hint=f"run `pontual indices --period {year}` (and each month) first",
        )
    routes, vehicles = read_routes(store), read_register(store)
    runs = store.query(
        "SELECT route_id, vehicle_id FROM trip_outcomes WHERE service_date BETWEEN ? AND ? "
        "ORDER BY route_id, vehicle_id",
        [start, end],
    )
    scopes = compute_line_scopes(routes, runs, vehicles)
    lines = _scope_lines(scopes, scope, scope_id)
    operators = sorted(
        [scope_id] if scope == "operator" else lines["operator_id"].unique().to_list()
    )
    surveys = read_year_surveys(store, year)
    infractions = read_suggested_infractions(store, start, end, ALL).filter(
        pl.col("operator_id").is_in(operators)
    )
    # the annex's rows: a fact without trips or pings behind it shows "—", not an empty cell
    infraction_rows = infractions.with_columns(
        pl.col(c).replace("", None) for c in ("trip_ids", "ping_ids")
    )
    cases_by_state = None
    if cases is not None:
        year_cases = read_period_cases(cases, profile, start, end, today or local_today(profile))
        cases_by_state = count_cases_by_state(
            year_cases.filter(pl.col("operator_id").is_in(operators))
        )
    if scope == "lot":
        infractions = infractions.filter(
            pl.col("route_id").is_null() | pl.col("route_id").is_in(lines["route_id"].implode())
        )
    infractions = infractions.sort("occurred_on", "infraction_key")
    crowd_trips = read_trip_crowding(store, start, end).select(
        "route_id", "is_over_limit", "max_standees_per_m2"
    )
    crowd_hours = read_crowding_summary(store, start, end).select(
        "route_id", "is_action_required", "extra_trips_needed"
    )
    scheduled = read_monthly_scheduled(store, whole)
    observed = read_monthly_judged(store, whole)

    # -- tables ------------------------------------------------------------------------------
    icv_monthly = compute_month_table(indicators, year, tuple(i for i, _ in ICV_PARTS))
    km_monthly = compute_month_table(indicators, year, tuple(i for i, _ in KM_PARTS)).with_columns(
        (pl.col("km_efficiency") >= profile.km.efficiency_min_ratio.value).alias("is_km_ok")
    )
    # CGS art. 15-16 / BG art. 49: the tariff worksheet of the year's 12 months; CGS art. 2
    # p.ú. a: the km efficiency over the term so far, month by month
    tariff_sheet = read_tariff_worksheet(store, profile, scope, scope_id, end.replace(day=1))
    km_term = read_km_term_series(store, scope, scope_id, end)
    year_values = dict(
        indicators.filter(pl.col("period") == f"{year:04d}").select("indicator", "value").rows()
    )
    current = grades.filter(pl.col("year") == year)
    grade = current.row(0, named=True) if current.height else {}
    iqs_dims = compute_iqs_dimensions(surveys, operators, year, profile)
    criteria, outcomes, breakdown = build_verdict_tables(
        store, profile, scope, scope_id, year, grades, year_values, grade
    )
    fleet = (
        indicators.filter(
            (pl.col("period") == f"{year:04d}")
            & pl.any_horizontal([pl.col("indicator").str.starts_with(p) for p in FLEET_PREFIXES])
        )
        .with_columns(
            pl.col("indicator").map_elements(to_label, return_dtype=pl.String).alias("label"),
            # the value is shown as a plain number: a ratio reads "razão", not "%"
            pl.col("unit").replace({**UNIT_LABELS, "ratio": "razão"}),
        )
        .sort("indicator")
    )
    infra_summary = (
        infractions.group_by("group", "item", "description")
        .agg(
            pl.len().cast(pl.Int64).alias("n"),
            pl.col("is_repeat").sum().cast(pl.Int64).alias("n_repeat"),
            pl.col("urm").fill_null(0).sum().alias("urm_total"),
        )
        .sort("group", "item")
    )
    crowding = compute_crowding_by_line(crowd_trips, crowd_hours, lines)
    completeness = compute_completeness(scheduled, observed, lines)
    methodology = build_methodology(profile)

    n_sched = int(completeness["n_scheduled"].sum())
    n_runs = int(crowding["n_runs"].sum())
    headlines = [
        Headline("Conceito", grade.get("grade"), "text"),
        Headline("Nota anual (pontos)", grade.get("annual_score")),
        Headline("ICV (pontos)", grade.get("icv_score", year_values.get("icv_score"))),
        Headline("IQS (pontos)", grade.get("iqs_score")),
        *[
            indicator_headline(label, id, year_values.get(id))
            for id, label in ICV_PARTS
            if id in HEADLINE_PARTS
        ],
        Headline(
            "Km rodados ÷ programados",
            grade.get("km_efficiency", year_values.get("km_efficiency")),
            "percent",
        ),
        Headline("Metas de qualidade cumpridas", grade.get("is_quality_goal_met")),
        Headline("Apto à renovação", grade.get("is_renewal_eligible")),
        Headline("Alerta de cassação", grade.get("is_cassacao_watch")),
        Headline(profile.verdicts.renewal.title, outcomes.get("renewal"), "text"),
        Headline(profile.verdicts.termination.title, outcomes.get("termination", "—"), "text"),
        Headline("Anos com conceito E (consecutivos)", grade.get("n_e_consecutive"), "integer"),
        Headline("Anos com conceito E (total)", grade.get("n_e_total"), "integer"),
        Headline("Infrações sugeridas", infractions.height, "integer"),
        Headline("Multas sugeridas (URM)", float(infractions["urm"].fill_null(0).sum()), "number"),
        Headline(
            "Viagens acima do limite de lotação",
            int(crowding["n_over_limit"].sum()) / n_runs if n_runs else None,
            "percent",
        ),
        Headline(
            "Viagens programadas com GPS",
            int(completeness["n_with_gps"].sum()) / n_sched if n_sched else None,
            "percent",
        ),
    ]
    pct = "percent"
    tables = [
        ReportTable(
            "icv_mensal",
            "ICV e suas três partes por mês",
            icv_monthly,
            (
                Col("month", "Mês", "month"),
                *[indicator_col(id, label) for id, label in ICV_PARTS],
            ),
        ),
        ReportTable(
            "iqs_dimensoes",
            "IQS por dimensão da pesquisa",
            iqs_dims,
            (
                Col("dimension", "Dimensão", "code"),
                Col("score_100", "Nota (0-100)", "number"),
                Col("n_surveys", "Pesquisas", "integer"),
                Col("n_respondents", "Respondentes", "integer"),
            ),
        ),
        ReportTable(
            "criterios_vereditos",
            "Critérios de renovação e de cassação/revogação, com o artigo de cada um",
            criteria,
            (
                Col("verdict_title", "Veredito"),
                Col("criterion", "Critério"),
                Col("article", "Artigo"),
                Col("status_label", "Situação"),
                Col("value", "Apurado"),
                Col("threshold", "Limite"),
                Col("is_law", "Fixado em lei", "bool"),
                Col("decides", "Decide sozinho", "bool"),
                Col("note", "Observação"),
            ),
            note="'Fixado em lei' falso: critério ou limite padrão do Pontual até o decreto "
            "(BG art. 58) — o resultado é indicativo.",
        ),
        ReportTable(
            "composicao_nota",
            "Composição da nota anual (pontos de cada parte)",
            breakdown,
            (
                Col("part", "Parte"),
                Col("measure", "Medido", "number", 3),
                Col("points", "Pontos", "number"),
                Col("weight", "Peso", "number", 2),
                Col("contribution", "Contribuição", "number"),
                Col("rule", "Regra"),
                Col("is_law", "Fixado em lei", "bool"),
            ),
        ),
        ReportTable(
            "historico_conceitos",
            "Histórico de conceitos e alerta de cassação",
            grades,
            (
                Col("year", "Ano", "code"),
                Col("icv_score", "ICV", "number"),
                Col("iqs_score", "IQS", "number"),
                Col("annual_score", "Nota anual", "number"),
                Col("grade", "Conceito", "code"),
                Col("km_efficiency", "Km rodados ÷ programados", pct),
                Col("is_quality_goal_met", "Metas cumpridas", "bool"),
                Col("is_renewal_eligible", "Apto à renovação", "bool"),
                Col("n_e_consecutive", "Anos E consecutivos", "integer"),
                Col("n_e_total", "Anos E no total", "integer"),
                Col("is_cassacao_watch", "Alerta de cassação", "bool"),
                Col("is_history", "Informado (histórico)", "bool"),
            ),
        ),
        ReportTable(
            "eficiencia_km",
            "Eficiência de quilometragem por mês (CGS art. 2, 20-II)",
            km_monthly,
            (
                Col("month", "Mês", "month"),
                *[indicator_col(id, label) for id, label in KM_PARTS],
                Col("is_km_ok", "Atinge o mínimo", "bool"),
            ),
        ),
        ReportTable(
            "eficiencia_km_prazo",
            "Eficiência de quilometragem ao longo do prazo da concessão, mês a mês (CGS art. "
            "2, parágrafo único, a)",
            km_term,
            (
                Col("month", "Mês", "month"),
                Col("has_data", "Com dados", "bool"),
                Col("km_run", "Km rodada", "number"),
                Col("km_programmed", "Km programada", "number"),
                Col("efficiency", "Rodada ÷ programada", pct),
                Col("term_efficiency", "Acumulado no prazo", pct),
            ),
            note="Mês sem dados fica fora das somas do prazo (não conta como 0 %).",
        ),
        ReportTable(
            "planilha_tarifaria",
            "Planilha da tarifa técnica (CGS art. 15-16; BG art. 26 §2, 49)",
            tariff_sheet,
            (
                Col("line", "Linha", "integer"),
                Col("item", "Item"),
                Col("value", "Valor", "number", 4),
                Col("unit", "Unidade"),
                Col("detail", "Meses"),
                Col("article", "Base legal"),
            ),
            note="Indicativa: a km rodada medida por GPS substitui a 'rodagem' da bilhetagem.",
        ),
        ReportTable(
            "frota",
            "Conformidade da frota",
            fleet,
            (
                Col("label", "Indicador"),
                Col("numerator", "Numerador", "number"),
                Col("denominator", "Denominador", "number"),
                Col("value", "Valor", "number", 2),
                Col("unit", "Unidade", "code"),
                Col("source", "Fonte"),
            ),
        ),
        ReportTable(
            "infracoes_resumo",
            "Infrações sugeridas por item do Anexo I",
            infra_summary,
            (
                Col("group", "Grupo", "code"),
                Col("item", "Item", "code"),
                Col("description", "Descrição"),
                Col("n", "Ocorrências", "integer"),
                Col("n_repeat", "Reincidências", "integer"),
                Col("urm_total", "URM", "number"),
            ),
            note="Sugestões para um fiscal revisar, nunca multas automáticas (BG art. 77).",
        ),
        ReportTable(
            "infracoes",
            "Infrações sugeridas, com a evidência",
            infraction_rows,
            (
                Col("occurred_on", "Data", "date"),
                Col("group", "Grupo", "code"),
                Col("item", "Item", "code"),
                Col("route_id", "Linha", "code"),
                Col("vehicle_id", "Veículo", "code"),
                Col("fact", "Fato"),
                Col("evidence", "Evidência"),
                Col("trip_ids", "Viagens", "code"),
                Col("ping_ids", "Pings (primeiro-último)", "code"),
                Col("is_repeat", "Reincidência", "bool"),
                Col("urm", "URM", "number"),
            ),
        ),
        ReportTable(
            "lotacao",
            "Lotação por linha (BG art. 59)",
            crowding,
            (
                Col("route_id", "Linha", "code"),
                Col("n_runs", "Viagens com perfil de carga", "integer"),
                Col("n_over_limit", "Acima do limite", "integer"),
                Col("over_limit_share", "Parcela acima do limite", pct),
                Col("max_standees_per_m2", "Máx. em pé por m²", "number", 2),
                Col("n_hours_action", "Horas que pedem reforço", "integer"),
                Col("extra_trips_needed", "Viagens extras sugeridas", "integer"),
            ),
        ),
        ReportTable(
            "completude",
            "Completude dos dados por mês",
            completeness,
            (
                Col("month", "Mês", "month"),
                Col("n_scheduled", "Viagens programadas", "integer"),
                Col("n_with_outcome", "Viagens avaliadas", "integer"),
                Col("n_with_gps", "Viagens com GPS", "integer"),
                Col("share_judged", "Avaliadas ÷ programadas", pct),
                Col("share_gps", "Com GPS ÷ programadas", pct),
            ),
        ),
        ReportTable(
            "metodologia",
            "Perfil regulatório em vigor: cada valor e sua fonte",
            methodology,
            (
                Col("key", "Parâmetro", "code"),
                Col("value", "Valor"),
                Col("unit", "Unidade", "code"),
                Col("citation", "Fonte"),
                Col("is_default", "Padrão a fixar por decreto", "bool"),
            ),
        ),
    ]
    if cases_by_state is not None:
        tables.append(
            ReportTable(
                "casos_por_estado",
                "Casos de infração com fato no ano, por estado",
                cases_by_state,
                (
                    Col("state", "Estado"),
                    Col("n_cases", "Casos", "integer"),
                    Col("n_overdue", "Com prazo vencido", "integer"),
                ),
                note="Situação na data de emissão; não faz parte do hash das entradas.",
            )
        )
    limit = profile.crowding.standees_max_per_m2
    sections = [
        Section(
            "Vereditos: critérios, artigos e composição da nota",
            (),
            (
                "criterios_vereditos",
                "composicao_nota",
                *(("casos_por_estado",) if cases_by_state is not None else ()),
            ),
        ),
        Section(
            "Índice de Cumprimento de Viagens (ICV)",
            (
                "Cumprimento = viagens realizadas ÷ programadas não justificadas (BG art. "
                "57-I-a); pontualidade = viagens no horário ÷ realizadas (57-I-b); quebras por "
                "10.000 km rodados (57-I-c). Viagens com justificativa aprovada saem do numerador "
                "e do denominador (art. 57 §1).",
            ),
            ("icv_mensal",),
            (
                Chart(
                    "Nota do ICV por mês", "icv_mensal", "month", ("icv_score",), "line", "pontos"
                ),
                Chart(
                    "Cumprimento e pontualidade por mês",
                    "icv_mensal",
                    "month",
                    ("icv_fulfilment", "icv_punctuality"),
                    "bar",
                    "fração (0-1)",
                ),
            ),
        ),
        Section(
            "Índice de Qualidade do Serviço (IQS) e nota anual",
            ("IQS = média das dimensões da pesquisa com usuários, em 0-100 (BG art. 57-II).",),
            ("iqs_dimensoes", "historico_conceitos"),
            (
                Chart(
                    "Nota anual por ano",
                    "historico_conceitos",
                    "year",
                    ("annual_score",),
                    "bar",
                    "pontos",
                ),
            ),
        ),
        Section(
            "Eficiência de quilometragem",
            (
                f"Mínimo de {to_quantity(profile.km.efficiency_min_ratio.value * 100)} % dos km "
                f"programados ({profile.km.efficiency_min_ratio.citation}).",
            ),
            ("eficiencia_km", "eficiencia_km_prazo"),
        ),
        Section(
            "Tarifa técnica",
            (
                "Planilha da tarifa técnica como a lei a calcula (CGS art. 15-16: IPK dos "
                "passageiros equivalentes dos últimos 12 meses sobre km programados mais km "
                "ociosos; BG art. 49: médias anuais da bilhetagem). Meses sem dados ficam fora "
                "das somas e são listados.",
            ),
            ("planilha_tarifaria",),
        ),
        Section("Frota", ("Idade, vistorias, reserva e redução de frota no ano.",), ("frota",)),
        Section(
            "Infrações sugeridas",
            (
                "Resumo por item do Anexo I. Cada ocorrência, com a evidência e as viagens e "
                "posições de GPS que a sustentam, está no Anexo — Infrações sugeridas: "
                "evidências.",
            ),
            ("infracoes_resumo",),
        ),
        Section(
            "Lotação",
            (f"Limite de {to_quantity(limit.value)} passageiros em pé por m² ({limit.citation}).",),
            ("lotacao",),
        ),
        Section(
            "Completude dos dados",
            (
                "Viagens avaliadas: viagens programadas para as quais o casamento com o GPS foi "
                "executado; com GPS: avaliadas com ao menos uma corrida do veículo registrada "
                "pelo GPS. Meses sem viagens avaliadas não entram nos índices.",
            ),
            ("completude",),
        ),
        Section("Metodologia", build_methodology_paragraphs(profile), ("metodologia",)),
        Section("Assinaturas", SIGNATURE_BLOCK),
        Section(
            "Anexo — Infrações sugeridas: evidências",
            (
                "Cada ocorrência com o fato, a evidência, as viagens programadas (trip_id) e o "
                "primeiro e o último ping de GPS das corridas que a sustentam; a íntegra está "
                "na planilha XLSX e nos arquivos CSV.",
            ),
            ("infracoes",),
        ),
    ]
    kind_word = "operadora" if scope == "operator" else "lote"
    return finish_report(
        kind="annual",
        title=f"Dossiê anual de renovação — {kind_word} {scope_id}",
        subtitle=f"Ano de {year} — BG Lei 6.784/2021, art. 32, 38, 56-58, 72; "
        "CGS Lei 40/2003, art. 2, 20-II",
        file_stem=f"dossie-anual-{year}-{scope_id}",
        headlines=headlines,
        sections=sections,
        tables=tables,
        inputs={
            "indicators": indicators,
            "annual_grades": grades,
            "iqs_surveys": surveys,
            "suggested_infractions": infractions,
            "trip_crowding": crowd_trips,
            "crowding_summary": crowd_hours,
            "scheduled_trips": scheduled,
            "trip_outcomes": observed,
            "gtfs_routes": routes,
            "vehicles": vehicles,
        },
        files={},
        raw_days=(start, end),
        raw_digests=raw_digests,
        summary=build_summary_paragraphs(profile, grade, completeness, grades, cases_by_state),
        cover=(
            ("Documento", "Dossiê anual de avaliação para a renovação da concessão"),
            ("Operadora" if scope == "operator" else "Lote de concessão", scope_id),
            ("Ano avaliado", str(year)),
            ("Perfil regulatório", f"{profile.name} ({profile.id})"),
            ("Gerado por", f"Pontual {__version__}"),
        ),
        profile=profile,
        store=store,
        command=command
        or f"pontual --profile {profile.id} report annual --year {year} --{scope} {scope_id}",
    )
