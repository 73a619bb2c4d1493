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

from dataclasses import dataclass
from datetime import date

import polars as pl

from analytics.indices.scopes import compute_line_scopes
from cases.db import CaseDB
from cases.reporting import count_cases_by_state, read_period_cases
from cases.states import to_state_label
from core import __version__
from core.errors import ConfigError
from core.indicators import UNIT_LABELS, to_label
from core.periods import year_period
from core.profile import Profile
from core.pt_br import to_yes_no
from core.store import Store
from core.texts import N_
from core.texts import gettext as _
from dashboard.format import to_percent, to_quantity
from dashboard.labels import label_states
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
from dashboard.reports.reproducibility import build_methodology, compute_frame_sha256

ICV_PARTS = (
    ("icv_fulfilment", N_("Trip fulfilment")),
    ("icv_punctuality", N_("Punctuality")),
    ("breakdowns_per_10000_km", N_("Breakdowns per 10,000 km")),
    ("icv_score_fulfilment", N_("Fulfilment points")),
    ("icv_score_punctuality", N_("Punctuality points")),
    ("icv_score_breakdowns", N_("Breakdown points")),
    ("icv_score", N_("ICV score")),
)
"""The ICV's indicators by month (BG art. 57-I) and their column headings."""
KM_PARTS = (
    ("km_programmed", N_("Scheduled km")),
    ("km_run", N_("Km run")),
    ("km_efficiency", N_("Km run ÷ scheduled")),
)
"""The km indicators by month (CGS art. 2, 20-II) and their column headings."""
HEADLINE_PARTS = ("icv_fulfilment", "icv_punctuality", "breakdowns_per_10000_km")
"""The ICV parts among the dossier's headline figures."""
FLEET_PREFIXES = ("vehicles_", "fleet_", "inspections_", "days_", "fees")


def _scope_lines(scopes: pl.DataFrame, scope: str, scope_id: str) -> pl.DataFrame:
    key = "operator_id" if scope == "operator" else "lot_id"
    return scopes.filter(pl.col(key) == scope_id)


@dataclass(frozen=True)
class YearInputs:
    """What every annual dossier of one year reads alike, whatever its operator or lot: the
    lines and their operators, the surveys, every operator's suggested infractions, the
    crowding of every trip and hour, the scheduled and judged trips by month. `hashes`: the
    input hash's SHA-256 of each of these frames (`compute_frame_sha256`) by input name, so
    that one dossier per operator reads and hashes the year's million crowding rows once."""

    year: int
    routes: pl.DataFrame
    vehicles: pl.DataFrame
    scopes: pl.DataFrame
    surveys: pl.DataFrame
    infractions: pl.DataFrame
    crowd_trips: pl.DataFrame
    crowd_hours: pl.DataFrame
    scheduled: pl.DataFrame
    observed: pl.DataFrame
    hashes: dict[str, str]


def read_year_inputs(store: Store, year: int) -> YearInputs:
    """The year's `YearInputs` from the store, its shared frames hashed."""
    whole = year_period(year)
    start, end = whole.start, whole.end
    routes, vehicles = read_routes(store), read_register(store)
    runs = store.query(
        "SELECT route_id, vehicle_id FROM trip_outcomes WHERE service_date BETWEEN ? AND ? "
        "ORDER BY route_id, vehicle_id",
        [start, end],
    )
    surveys = read_year_surveys(store, year)
    crowd_trips = read_trip_crowding(store, start, end).select(
        "route_id", "is_over_limit", "max_standees_per_m2"
    )
    crowd_hours = read_crowding_summary(store, start, end).select(
        "route_id", "is_action_required", "extra_trips_needed"
    )
    scheduled = read_monthly_scheduled(store, whole)
    observed = read_monthly_judged(store, whole)
    inputs = {
        "iqs_surveys": surveys,
        "trip_crowding": crowd_trips,
        "crowding_summary": crowd_hours,
        "scheduled_trips": scheduled,
        "trip_outcomes": observed,
        "gtfs_routes": routes,
        "vehicles": vehicles,
    }
    return YearInputs(
        year=year,
        routes=routes,
        vehicles=vehicles,
        scopes=compute_line_scopes(routes, runs, vehicles),
        surveys=surveys,
        infractions=read_suggested_infractions(store, start, end, ALL),
        crowd_trips=crowd_trips,
        crowd_hours=crowd_hours,
        scheduled=scheduled,
        observed=observed,
        hashes={name: compute_frame_sha256(frame) for name, frame in inputs.items()},
    )


SIGNATURE_BLOCK = (
    N_(
        "Prepared by: ______________________________________  Staff no.: ____________  "
        "Date: ____/____/________"
    ),
    N_(
        "Checked by (managing body): ________________________  Staff no.: ____________  "
        "Date: ____/____/________"
    ),
    N_(
        "Considered by the council (minutes no. ________): ___________________________________________"
    ),
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
    return _(
        "Grades by year: {letters}; cassação watch (art. 72-VII): {watch}.",
        letters=letters,
        watch=to_yes_no(watch),
    )


def build_cases_paragraph(by_state: pl.DataFrame | None) -> str:
    """The year's infraction cases by state, in words (or why they are not here)."""
    if by_state is None:
        return _(
            "Infraction cases: the case database was not given when this was made; "
            "the cases are not in this dossier."
        )
    held = by_state.filter(pl.col("n_cases") > 0)
    if held.height == 0:
        return _("Infraction cases with a fact in the year: none.")
    parts = ", ".join(
        f"{to_state_label(state)} {to_quantity(n)}"
        + (_(" ({n} past their deadline)", n=to_quantity(late)) if late else "")
        for state, n, late in held.select("state", "n_cases", "n_overdue").iter_rows()
    )
    return _(
        "Infraction cases with a fact in the year: {n} — {parts}. Repeats and "
        "sanctions count only cases judged procedente (BG art. 65).",
        n=to_quantity(int(held["n_cases"].sum())),
        parts=parts,
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
            _(
                "Grade {grade} — annual score {score} points. The criteria of each "
                "verdict, with each one's article and status, and the make-up of the "
                "score are in the tables below.",
                grade=letter,
                score=to_quantity(score) if score is not None else "—",
            )
        )
    share = grade.get("evaluated_share")
    if grade.get("is_provisional"):
        limit = profile.evidence.provisional_below_evaluated_share.value
        paragraphs.append(
            _(
                "PROVISIONAL: only {share} of the year's scheduled trips could be "
                "evaluated (GPS, ticketing or inspection), below {limit}. Trips without "
                "data count neither as suppressed nor as run; the score is not enough to "
                "decide the renewal.",
                share=to_percent(share),
                limit=to_percent(limit),
            )
        )
    defaults = [
        name
        for name, value in (
            (_("the grades' minimum scores"), quality.grade_min_points),
            (_("the annual score's weights"), quality.annual_weight_icv),
            (_("the ICV's weights"), icv.weight_fulfilment),
            (_("the ICV's bands"), icv.fulfilment_band),
        )
        if value.default
    ]
    if defaults:
        paragraphs.append(
            _(
                "Indicative: {defaults} are Pontual's defaults, to be fixed by decree (BG art. "
                "58); the grade shows where the operator would stand with them.",
                defaults=", ".join(defaults),
            )
        )
    n_sched = int(completeness["n_scheduled"].sum()) if completeness.height else 0
    n_gps = int(completeness["n_with_gps"].sum()) if completeness.height else 0
    paragraphs.append(
        _(
            "Data coverage: GPS on {share_gps} of the year's {n} scheduled trips; {share} "
            "evaluated.",
            share_gps=to_percent(n_gps / n_sched if n_sched else None),
            n=to_quantity(n_sched),
            share=to_percent(share),
        )
        if share is not None
        else _(
            "Data coverage: GPS on {share_gps} of the year's {n} scheduled trips.",
            share_gps=to_percent(n_gps / n_sched if n_sched else None),
            n=to_quantity(n_sched),
        )
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
    year_inputs: YearInputs | None = None,
    cases: CaseDB | None = None,
    today: date | None = None,
) -> ReportData:
    """The annual renewal dossier of one operator (scope 'operator') or lot ('lot').
    `raw_digests`: the year's raw day digests when the caller already has them (one dossier per
    operator of the same year hashes the year's raw pings and taps once). `year_inputs`: the
    year's tables every dossier reads alike (`read_year_inputs`), likewise read and hashed once
    for all the operators. `cases`: the case
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
    shared = year_inputs if year_inputs is not None else read_year_inputs(store, year)
    if shared.year != year:
        raise ValueError(f"year inputs of {shared.year} given for the dossier of {year}")
    routes, vehicles, surveys = shared.routes, shared.vehicles, shared.surveys
    lines = _scope_lines(shared.scopes, scope, scope_id)
    operators = sorted(
        [scope_id] if scope == "operator" else lines["operator_id"].unique().to_list()
    )
    infractions = shared.infractions.filter(pl.col("operator_id").is_in(operators))
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
    crowd_trips, crowd_hours = shared.crowd_trips, shared.crowd_hours
    scheduled, observed = shared.scheduled, shared.observed

    # -- tables ------------------------------------------------------------------------------
    icv_monthly = compute_month_table(indicators, year, tuple(i for i, _label in ICV_PARTS))
    km_monthly = compute_month_table(
        indicators, year, tuple(i for i, _label in KM_PARTS)
    ).with_columns(
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
            pl.col("unit").replace({**UNIT_LABELS, "ratio": _("ratio (unit)")}),
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
        Headline(_("Grade"), grade.get("grade"), "text"),
        Headline(_("Annual score (points)"), grade.get("annual_score")),
        Headline(_("ICV (points)"), grade.get("icv_score", year_values.get("icv_score"))),
        Headline(_("IQS (points)"), grade.get("iqs_score")),
        *[
            indicator_headline(_(label), id, year_values.get(id))
            for id, label in ICV_PARTS
            if id in HEADLINE_PARTS
        ],
        Headline(
            _("Km run ÷ scheduled"),
            grade.get("km_efficiency", year_values.get("km_efficiency")),
            "percent",
        ),
        Headline(_("Quality goals met"), grade.get("is_quality_goal_met")),
        Headline(_("Eligible for renewal"), grade.get("is_renewal_eligible")),
        Headline(_("Cassação watch"), grade.get("is_cassacao_watch")),
        Headline(profile.verdicts.renewal.title, outcomes.get("renewal"), "text"),
        Headline(profile.verdicts.termination.title, outcomes.get("termination", "—"), "text"),
        Headline(_("Years with grade E (consecutive)"), grade.get("n_e_consecutive"), "integer"),
        Headline(_("Years with grade E (total)"), grade.get("n_e_total"), "integer"),
        Headline(_("Suggested infractions"), infractions.height, "integer"),
        Headline(
            _("Suggested fines (URM)"), float(infractions["urm"].fill_null(0).sum()), "number"
        ),
        Headline(
            _("Trips over the crowding limit"),
            int(crowding["n_over_limit"].sum()) / n_runs if n_runs else None,
            "percent",
        ),
        Headline(
            _("Scheduled trips with GPS"),
            int(completeness["n_with_gps"].sum()) / n_sched if n_sched else None,
            "percent",
        ),
    ]
    pct = "percent"
    tables = [
        ReportTable(
            "icv_mensal",
            _("The ICV and its three parts by month"),
            icv_monthly,
            (
                Col("month", _("Month"), "month"),
                *[indicator_col(id, _(label)) for id, label in ICV_PARTS],
            ),
        ),
        ReportTable(
            "iqs_dimensoes",
            _("IQS by survey dimension"),
            iqs_dims,
            (
                Col("dimension", _("Dimension"), "code"),
                Col("score_100", _("Score (0-100)"), "number"),
                Col("n_surveys", _("Surveys"), "integer"),
                Col("n_respondents", _("Respondents"), "integer"),
            ),
        ),
        ReportTable(
            "criterios_vereditos",
            _("Criteria of renewal and of cassação/revogação, with each one's article"),
            criteria,
            (
                Col("verdict_title", _("Verdict")),
                Col("criterion", _("Criterion")),
                Col("article", _("Article")),
                Col("status_label", _("Status")),
                Col("value", _("Found")),
                Col("threshold", _("Limit")),
                Col("is_law", _("Set by law"), "bool"),
                Col("decides", _("Decides alone"), "bool"),
                Col("note", _("Remark")),
            ),
            note=_(
                "'Set by law' false: a criterion or limit that is Pontual's default until "
                "the decree (BG art. 58) — the result is indicative."
            ),
        ),
        ReportTable(
            "composicao_nota",
            _("Make-up of the annual score (points of each part)"),
            breakdown,
            (
                Col("part", _("Part")),
                Col("measure", _("Measured"), "number", 3),
                Col("points", _("Points"), "number"),
                Col("weight", _("Weight"), "number", 2),
                Col("contribution", _("Contribution"), "number"),
                Col("rule", _("Rule")),
                Col("is_law", _("Set by law"), "bool"),
            ),
        ),
        ReportTable(
            "historico_conceitos",
            _("Grade history and cassação watch"),
            grades,
            (
                Col("year", _("Year"), "code"),
                Col("icv_score", "ICV", "number"),
                Col("iqs_score", "IQS", "number"),
                Col("annual_score", _("Annual score"), "number"),
                Col("grade", _("Grade"), "code"),
                Col("km_efficiency", _("Km run ÷ scheduled"), pct),
                Col("is_quality_goal_met", _("Goals met"), "bool"),
                Col("is_renewal_eligible", _("Eligible for renewal"), "bool"),
                Col("n_e_consecutive", _("Consecutive E years"), "integer"),
                Col("n_e_total", _("E years in total"), "integer"),
                Col("is_cassacao_watch", _("Cassação watch"), "bool"),
                Col("is_history", _("Supplied (history)"), "bool"),
            ),
        ),
        ReportTable(
            "eficiencia_km",
            _("Km efficiency by month (CGS art. 2, 20-II)"),
            km_monthly,
            (
                Col("month", _("Month"), "month"),
                *[indicator_col(id, _(label)) for id, label in KM_PARTS],
                Col("is_km_ok", _("Reaches the minimum"), "bool"),
            ),
        ),
        ReportTable(
            "eficiencia_km_prazo",
            _(
                "Km efficiency over the concession's term, month by month (CGS art. 2, "
                "parágrafo único, a)"
            ),
            km_term,
            (
                Col("month", _("Month"), "month"),
                Col("has_data", _("With data"), "bool"),
                Col("km_run", _("Km run (term)"), "number"),
                Col("km_programmed", _("Scheduled km (term)"), "number"),
                Col("efficiency", _("Run ÷ scheduled"), pct),
                Col("term_efficiency", _("Cumulative over the term"), pct),
            ),
            note=_(
                "A month without data is left out of the term's sums (it does not count as 0 %)."
            ),
        ),
        ReportTable(
            "planilha_tarifaria",
            _("Technical fare worksheet (CGS art. 15-16; BG art. 26 §2, 49)"),
            tariff_sheet,
            (
                Col("line", _("Line"), "integer"),
                Col("item", _("Item")),
                Col("value", _("Value"), "number", 4),
                Col("unit", _("Unit")),
                Col("detail", _("Months")),
                Col("article", _("Legal basis")),
            ),
            note=_(
                "Indicative: the km run measured by GPS stands in for the ticketing's 'rodagem'."
            ),
        ),
        ReportTable(
            "frota",
            _("Fleet compliance"),
            fleet,
            (
                Col("label", _("Indicator")),
                Col("numerator", _("Numerator"), "number"),
                Col("denominator", _("Denominator"), "number"),
                Col("value", _("Value"), "number", 2),
                Col("unit", _("Unit"), "code"),
                Col("source", _("Source (of the value)")),
            ),
        ),
        ReportTable(
            "infracoes_resumo",
            _("Suggested infractions by item of Anexo I"),
            infra_summary,
            (
                Col("group", _("Group"), "code"),
                Col("item", _("Item"), "code"),
                Col("description", _("Description")),
                Col("n", _("Occurrences"), "integer"),
                Col("n_repeat", _("Repeats"), "integer"),
                Col("urm_total", "URM", "number"),
            ),
            note=_("Suggestions for an inspector to review, never automatic fines (BG art. 77)."),
        ),
        ReportTable(
            "infracoes",
            _("Suggested infractions, with the evidence"),
            infraction_rows,
            (
                Col("occurred_on", _("Date"), "date"),
                Col("group", _("Group"), "code"),
                Col("item", _("Item"), "code"),
                Col("route_id", _("Line"), "code"),
                Col("vehicle_id", _("Vehicle"), "code"),
                Col("fact", _("Fact")),
                Col("evidence", _("Evidence")),
                Col("trip_ids", _("Trips"), "code"),
                Col("ping_ids", _("Pings (first-last)"), "code"),
                Col("is_repeat", _("Repeat"), "bool"),
                Col("urm", "URM", "number"),
            ),
        ),
        ReportTable(
            "lotacao",
            _("Crowding by line (BG art. 59)"),
            crowding,
            (
                Col("route_id", _("Line"), "code"),
                Col("n_runs", _("Trips with a load profile"), "integer"),
                Col("n_over_limit", _("Over the limit"), "integer"),
                Col("over_limit_share", _("Share over the limit"), pct),
                Col("max_standees_per_m2", _("Max. standing per m²"), "number", 2),
                Col("n_hours_action", _("Hours that call for reinforcement"), "integer"),
                Col("extra_trips_needed", _("Extra trips suggested"), "integer"),
            ),
        ),
        ReportTable(
            "completude",
            _("Data completeness by month"),
            completeness,
            (
                Col("month", _("Month"), "month"),
                Col("n_scheduled", _("Scheduled trips"), "integer"),
                Col("n_with_outcome", _("Trips evaluated"), "integer"),
                Col("n_with_gps", _("Trips with GPS"), "integer"),
                Col("share_judged", _("Evaluated ÷ scheduled"), pct),
                Col("share_gps", _("With GPS ÷ scheduled"), pct),
            ),
        ),
        ReportTable(
            "metodologia",
            _("Regulation profile in force: each value and its source"),
            methodology,
            (
                Col("key", _("Parameter"), "code"),
                Col("value", _("Value")),
                Col("unit", _("Unit"), "code"),
                Col("citation", _("Source (of the value)")),
                Col("is_default", _("Default to be fixed by decree"), "bool"),
            ),
        ),
    ]
    if cases_by_state is not None:
        tables.append(
            ReportTable(
                "casos_por_estado",
                _("Infraction cases with a fact in the year, by state"),
                cases_by_state.with_columns(label_states(cases_by_state["state"])),
                (
                    Col("state", _("State")),
                    Col("n_cases", _("Cases"), "integer"),
                    Col("n_overdue", _("Past the deadline"), "integer"),
                ),
                note=_("Status on the day it was made; not part of the input hash."),
            )
        )
    limit = profile.crowding.standees_max_per_m2
    sections = [
        Section(
            _("Verdicts: criteria, articles and make-up of the score"),
            (),
            (
                "criterios_vereditos",
                "composicao_nota",
                *(("casos_por_estado",) if cases_by_state is not None else ()),
            ),
        ),
        Section(
            _("Trip Fulfilment Index (ICV)"),
            (
                _(
                    "Fulfilment = trips run ÷ scheduled not justified (BG art. 57-I-a); "
                    "punctuality = trips on time ÷ run (57-I-b); breakdowns per 10,000 km run "
                    "(57-I-c). Trips with an approved justification leave the numerator and "
                    "the denominator (art. 57 §1)."
                ),
            ),
            ("icv_mensal",),
            (
                Chart(
                    _("ICV score by month"),
                    "icv_mensal",
                    "month",
                    ("icv_score",),
                    "line",
                    _("points (axis)"),
                ),
                Chart(
                    _("Fulfilment and punctuality by month"),
                    "icv_mensal",
                    "month",
                    ("icv_fulfilment", "icv_punctuality"),
                    "bar",
                    _("fraction (0-1)"),
                ),
            ),
        ),
        Section(
            _("Service Quality Index (IQS) and annual score"),
            (_("IQS = the mean of the user survey's dimensions, in 0-100 (BG art. 57-II)."),),
            ("iqs_dimensoes", "historico_conceitos"),
            (
                Chart(
                    _("Annual score by year"),
                    "historico_conceitos",
                    "year",
                    ("annual_score",),
                    "bar",
                    _("points (axis)"),
                ),
            ),
        ),
        Section(
            _("Km efficiency"),
            (
                _(
                    "A minimum of {share} % of the scheduled km ({basis}).",
                    share=to_quantity(profile.km.efficiency_min_ratio.value * 100),
                    basis=profile.km.efficiency_min_ratio.citation,
                ),
            ),
            ("eficiencia_km", "eficiencia_km_prazo"),
        ),
        Section(
            _("Technical fare"),
            (
                _(
                    "The technical fare worksheet as the law computes it (CGS art. 15-16: the "
                    "IPK of the last 12 months' equivalent passengers over scheduled plus "
                    "idle km; BG art. 49: the ticketing's yearly means). Months without data "
                    "are left out of the sums and listed."
                ),
            ),
            ("planilha_tarifaria",),
        ),
        Section(
            _("Fleet"), (_("Age, inspections, reserve and fleet cuts in the year."),), ("frota",)
        ),
        Section(
            _("Suggested infractions"),
            (
                _(
                    "Summary by item of Anexo I. Each occurrence, with the evidence and the trips "
                    "and GPS positions that support it, is in the Annex — Suggested infractions: "
                    "evidence."
                ),
            ),
            ("infracoes_resumo",),
        ),
        Section(
            _("Crowding"),
            (
                _(
                    "A limit of {standees} standing passengers per m² ({basis}).",
                    standees=to_quantity(limit.value),
                    basis=limit.citation,
                ),
            ),
            ("lotacao",),
        ),
        Section(
            _("Data completeness"),
            (
                _(
                    "Trips evaluated: scheduled trips for which the matching with the GPS was "
                    "run; with GPS: evaluated with at least one run of the vehicle recorded "
                    "by the GPS. Months without evaluated trips do not enter the indices."
                ),
            ),
            ("completude",),
        ),
        Section(_("Methodology"), build_methodology_paragraphs(profile), ("metodologia",)),
        Section(_("Signatures"), tuple(_(line) for line in SIGNATURE_BLOCK)),
        Section(
            _("Annex — Suggested infractions: evidence"),
            (
                _(
                    "Each occurrence with the fact, the evidence, the scheduled trips (trip_id) "
                    "and the first and last GPS ping of the runs that support it; the full text "
                    "is in the XLSX workbook and the CSV files."
                ),
            ),
            ("infracoes",),
        ),
    ]
    kind_word = _("operator (scope)") if scope == "operator" else _("lot (scope)")
    return finish_report(
        kind="annual",
        title=_("Annual renewal dossier — {kind} {id}", kind=kind_word, id=scope_id),
        subtitle=_(
            "Year {year} — BG Lei 6.784/2021, art. 32, 38, 56-58, 72; CGS Lei 40/2003, art. 2, "
            "20-II",
            year=year,
        ),
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
        input_hashes=shared.hashes,
        raw_days=(start, end),
        raw_digests=raw_digests,
        summary=build_summary_paragraphs(profile, grade, completeness, grades, cases_by_state),
        cover=(
            (_("Document"), _("Annual evaluation dossier for the renewal of the concession")),
            (_("Operator") if scope == "operator" else _("Concession lot"), scope_id),
            (_("Year evaluated"), str(year)),
            (_("Regulation profile"), f"{profile.name} ({profile.id})"),
            (_("Made by"), f"Pontual {__version__}"),
        ),
        profile=profile,
        store=store,
        command=command
        or f"pontual --profile {profile.id} report annual --year {year} --{scope} {scope_id}",
    )
