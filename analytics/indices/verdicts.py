"""Verdicts with their legal basis: renewal and cassação/revogação as lists of criteria.

A profile declares each verdict (`verdicts.renewal`, `verdicts.termination`) as a list of
criteria, each with the rule Pontual evaluates, its article, and whether it decides alone. This
module evaluates them for one scope and year, frame in, frame out, so the CLI, the dashboard's
annual page and the dossier show the same list.

Statuses (closed set, `STATUSES`):
- met / not_met: evaluated from the data (for a termination ground, "met" means the ground
  is present: an alert);
- not_evaluable: the rule is computable but its input is missing (no grades, no fleet days,
  no register, the sanctions register not yet kept);
- not_computed: the law sets it on facts Pontual does not see (fiscal qualification, taxes,
  bankruptcy...): the city records it.

Renewal outcome (`compute_verdict_outcomes`): "não apta" when a deciding criterion is not met;
"apta" when every deciding criterion is met; otherwise "em aberto" (some deciding criterion
not evaluable or not computed). Termination: "alerta" when any ground is met, otherwise
"sem alerta". Termination grounds concern the concessionaire: they are evaluated for the
operator scope only (no rows for a lot or the system).

The texts (values, thresholds, notes, outcomes) come from the catalogue (`core.texts`,
docs/adr/0106) in the chosen language: these frames are made when they are shown, never
stored.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import polars as pl

from core.profile import Criterion, Profile
from core.pt_br import to_percent
from core.texts import N_, Labels
from core.texts import gettext as _

STATUSES = ("met", "not_met", "not_evaluable", "not_computed")
STATUS_LABELS = Labels(
    {
        "met": N_("met (criterion)"),
        "not_met": N_("not met (criterion)"),
        "not_evaluable": N_("not evaluable"),
        "not_computed": N_("not computed by Pontual (supplied by the city)"),
    }
)
GROUND_LABELS = Labels(
    {
        "met": N_("occurs (ground)"),
        "not_met": N_("does not occur (ground)"),
        "not_evaluable": N_("not evaluable"),
        "not_computed": N_("not computed by Pontual (supplied by the city)"),
    }
)
CRITERIA_SCHEMA = {
    "verdict": pl.String,
    "verdict_title": pl.String,
    "rule": pl.String,
    "criterion": pl.String,
    "article": pl.String,
    "status": pl.String,
    "value": pl.String,
    "threshold": pl.String,
    "is_law": pl.Boolean,
    "decides": pl.Boolean,
    "note": pl.String,
}


@dataclass(frozen=True)
class Evaluation:
    status: str
    value: str | None = None
    threshold: str | None = None
    is_law: bool = True
    note: str | None = None


@dataclass(frozen=True)
class Inputs:
    """What the criteria read, for one scope and year. Frames may be None (not evaluable).

    grades: annual_grades rows of the scope, all years (history included);
    fleet_days: fleet_days rows of the operator over the year (lines and the '*' total);
    register: fleet register rows of the operator (compute_fleet_register) at the year end.
    """

    profile: Profile
    scope: str
    scope_id: str
    year: int
    grades: pl.DataFrame | None = None
    fleet_days: pl.DataFrame | None = None
    register: pl.DataFrame | None = None


def _pct(x: float) -> str:
    return to_percent(x)


def _graded(inp: Inputs) -> pl.DataFrame | None:
    g = inp.grades
    if g is None or not g.height:
        return None
    g = g.filter(
        (pl.col("scope") == inp.scope)
        & (pl.col("scope_id") == inp.scope_id)
        & (pl.col("year") <= inp.year)
        & pl.col("grade").is_not_null()
    ).sort("year")
    return g if g.height else None


def describe_e_years(years: list[int], grades: list[str]) -> tuple[int, int, list[int]]:
    """(E years in the run ending at the last graded year, E years in total, the years
    without grade inside that run). A year with no grade does not end a run."""
    total = sum(1 for g in grades if g == "E")
    run: list[int] = []
    for year, grade in zip(years, grades, strict=True):
        run = [*run, year] if grade == "E" else []
    gaps = [y for y in range(run[0], run[-1] + 1) if y not in run] if run else []
    return len(run), total, gaps


def _e_record(inp: Inputs, *, as_ground: bool) -> Evaluation:
    q = inp.profile.quality
    consecutive, total_max = q.cassacao_consecutive_e_years, q.cassacao_total_e_years
    g = _graded(inp)
    grades_law = not q.grade_min_points.default
    if consecutive is None or total_max is None:
        return Evaluation("not_evaluable", note=_("the profile has no count of years with grade E"))
    threshold = _(
        "{consecutive} consecutive years or {total} non-consecutive ones with grade E",
        consecutive=consecutive.value,
        total=total_max.value,
    )
    if g is None:
        return Evaluation(
            "not_evaluable",
            threshold=threshold,
            is_law=grades_law,
            note=_("no year with a grade"),
        )
    years, grades = g["year"].to_list(), g["grade"].to_list()
    run, total, gaps = describe_e_years(years, grades)
    reached = run >= consecutive.value or total >= total_max.value
    value = _("{run} consecutive, {total} in all", run=run, total=total)
    notes = []
    if gaps:
        notes.append(
            _(
                "run with a gap: {years} without a grade (a data gap does not break the count)",
                years=", ".join(str(y) for y in gaps),
            )
        )
    if not grades_law:
        notes.append(_("indicative grade: default bands until the decree (BG art. 58)"))
    status = ("met" if reached else "not_met") if as_ground else ("not_met" if reached else "met")
    return Evaluation(status, value, threshold, grades_law, "; ".join(notes) or None)


def _quality_goals(inp: Inputs) -> Evaluation:
    return _e_record(inp, as_ground=False)


def _grade_e_years(inp: Inputs) -> Evaluation:
    return _e_record(inp, as_ground=True)


def _km_efficiency(inp: Inputs) -> Evaluation:
    km = inp.profile.km.efficiency_min_ratio
    threshold = _("≥ {share} of the scheduled km in each year", share=_pct(km.value))
    g = inp.grades
    if g is not None and g.height:
        g = g.filter(
            (pl.col("scope") == inp.scope)
            & (pl.col("scope_id") == inp.scope_id)
            & (pl.col("year") <= inp.year)
            & pl.col("km_efficiency").is_not_null()
        ).sort("year")
    if g is None or not g.height:
        return Evaluation(
            "not_evaluable",
            threshold=threshold,
            is_law=not km.default,
            note=_("no km measured"),
        )
    worst = g.sort("km_efficiency").row(0, named=True)
    below = g.filter(pl.col("km_efficiency") < km.value)["year"].to_list()
    value = _("worst year {year}: {share}", year=worst["year"], share=_pct(worst["km_efficiency"]))
    note = (
        _("years below the minimum: {years}", years=", ".join(map(str, below))) if below else None
    )
    years = g["year"].to_list()
    with_data = _(
        "years with data: {first}–{last} ({n})", first=years[0], last=years[-1], n=len(years)
    )
    note = "; ".join([n for n in (note, with_data) if n])
    return Evaluation("not_met" if below else "met", value, threshold, not km.default, note)


def _past_life(inp: Inputs) -> tuple[Evaluation, int]:
    reg = inp.register
    ages = inp.profile.fleet.age
    is_law = all(not a.max_age_years.default for a in ages.values())
    threshold = _("age up to the useful life of the type and area")
    if reg is None or not reg.height:
        return Evaluation(
            "not_evaluable", threshold=threshold, is_law=is_law, note=_("no fleet register")
        ), 0
    if inp.scope == "operator":
        reg = reg.filter(pl.col("operator_id") == inp.scope_id)
    over = reg.filter(pl.col("is_over_max_age").fill_null(False))
    ids = over["vehicle_id"].to_list()
    value = _("{n} of {total} vehicles past their useful life", n=len(ids), total=reg.height)
    listed = ", ".join(ids[:10]) + ("…" if len(ids) > 10 else "")
    note = _("vehicles: {ids}", ids=listed) if ids else None
    return Evaluation("met", value, threshold, is_law, note), len(ids)


def _fleet_renewed(inp: Inputs) -> Evaluation:
    ev, n = _past_life(inp)
    if ev.status != "met":
        return ev
    return Evaluation("not_met" if n else "met", ev.value, ev.threshold, ev.is_law, ev.note)


def _vehicles_past_useful_life(inp: Inputs) -> Evaluation:
    ev, n = _past_life(inp)
    if ev.status != "met":
        return ev
    return Evaluation("met" if n else "not_met", ev.value, ev.threshold, ev.is_law, ev.note)


def _operator_days(inp: Inputs) -> pl.DataFrame | None:
    d = inp.fleet_days
    if d is None or not d.height:
        return None
    d = d.filter(
        (pl.col("operator_id") == inp.scope_id) & (pl.col("service_date").dt.year() == inp.year)
    )
    return d if d.height else None


def _grave_fleet_cut(inp: Inputs) -> Evaluation:
    f = inp.profile.fleet
    threshold = _(
        "cut > {share} for more than {days} consecutive days",
        share=_pct(f.grave_cut_min_ratio.value),
        days=f.grave_cut_min_days.value,
    )
    is_law = not (f.grave_cut_min_ratio.default or f.grave_cut_min_days.default)
    d = _operator_days(inp)
    if d is None:
        return Evaluation(
            "not_evaluable",
            threshold=threshold,
            is_law=is_law,
            note=_("no fleet days measured in the year"),
        )
    grave = d.filter(pl.col("is_grave_cut") & (pl.col("route_id") != "*"))
    lines = sorted(set(grave["route_id"].to_list()))
    value = _("{n} line-day(s) with a grave cut", n=grave.height)
    note = _("lines: {lines}", lines=", ".join(lines)) if lines else None
    return Evaluation("met" if grave.height else "not_met", value, threshold, is_law, note)


def _paralisacao(inp: Inputs) -> Evaluation:
    threshold = _("a day with scheduled trips and no vehicle of the operator running")
    d = _operator_days(inp)
    if d is None:
        return Evaluation(
            "not_evaluable", threshold=threshold, note=_("no fleet days measured in the year")
        )
    stop = d.filter(
        (pl.col("route_id") == "*")
        & (pl.col("n_vehicles_required") > 0)
        & (pl.col("n_vehicles_operated") == 0)
    )
    days = [f"{x:%d/%m/%Y}" for x in stop["service_date"].to_list()]
    return Evaluation(
        "met" if days else "not_met",
        _("{n} day(s)", n=len(days)),
        threshold,
        True,
        _("days: {days}", days=", ".join(days[:10]))
        if days
        else _("a partial stoppage is not detected"),
    )


def _suspensions(inp: Inputs) -> Evaluation:
    return Evaluation(
        "not_evaluable",
        threshold=_("more than one suspension in 24 months"),
        note=_("depends on the register of sanctions applied (not kept yet)"),
    )


def _recorded_by_city(inp: Inputs) -> Evaluation:
    return Evaluation("not_computed", note=_("recorded by the city; Pontual does not compute it"))


RULES: dict[str, Callable[[Inputs], Evaluation]] = {
    "quality_goals": _quality_goals,
    "km_efficiency": _km_efficiency,
    "fleet_renewed": _fleet_renewed,
    "grade_e_years": _grade_e_years,
    "grave_fleet_cut": _grave_fleet_cut,
    "paralisacao": _paralisacao,
    "suspensions": _suspensions,
    "vehicles_past_useful_life": _vehicles_past_useful_life,
    "recorded_by_city": _recorded_by_city,
}


def _row(verdict: str, title: str, c: Criterion, ev: Evaluation) -> dict[str, object]:
    return {
        "verdict": verdict,
        "verdict_title": title,
        "rule": c.rule,
        "criterion": c.label,
        "article": c.citation,
        "status": ev.status,
        "value": ev.value,
        "threshold": ev.threshold,
        # law only when both the criterion and its thresholds are law
        "is_law": ev.is_law and not c.default,
        "decides": c.decides,
        "note": ev.note,
    }


def build_verdict_criteria(inp: Inputs) -> pl.DataFrame:
    """The criteria of the profile's verdicts for one scope and year.

    Columns: verdict ('renewal' | 'termination'), verdict_title, rule, criterion (pt-BR
    label), article, status (one of STATUSES), value (what the data show), threshold (both
    texts from the catalogue), is_law (the criterion and its thresholds are fixed by law, not
    defaults), decides (the criterion decides the verdict on its own), note (gaps, default thresholds,
    vehicles or lines behind the status).
    """
    v = inp.profile.verdicts
    rows = [_row("renewal", v.renewal.title, c, RULES[c.rule](inp)) for c in v.renewal.criteria]
    if inp.scope == "operator":
        rows += [
            _row("termination", v.termination.title, c, RULES[c.rule](inp))
            for c in v.termination.criteria
        ]
    return pl.DataFrame(rows, schema=CRITERIA_SCHEMA)


def compute_verdict_outcomes(criteria: pl.DataFrame) -> pl.DataFrame:
    """verdict, outcome (from the catalogue; pt-BR: 'apta' | 'não apta' | 'em aberto' |
    'alerta' | 'sem alerta'),
    is_law (every deciding criterion is law) from `build_verdict_criteria`."""
    out = []
    for verdict in ("renewal", "termination"):
        c = criteria.filter(pl.col("verdict") == verdict)
        if not c.height:
            continue
        deciding = c.filter(pl.col("decides"))
        statuses = set(deciding["status"].to_list())
        if verdict == "renewal":
            if "not_met" in statuses:
                outcome = _("not eligible")
            elif statuses <= {"met"}:
                outcome = _("eligible")
            else:
                outcome = _("not decided")
        else:
            outcome = _("alert") if "met" in statuses else _("no alert")
        out.append(
            {"verdict": verdict, "outcome": outcome, "is_law": bool(deciding["is_law"].all())}
        )
    return pl.DataFrame(
        out, schema={"verdict": pl.String, "outcome": pl.String, "is_law": pl.Boolean}
    )


def describe_profile_verdicts(profile: Profile) -> pl.DataFrame:
    """The criteria a profile declares, without data: verdict, verdict_title, criterion,
    article, decides (for `pontual profiles show` and the methodology pages)."""
    v = profile.verdicts
    rows = [
        {
            "verdict": name,
            "verdict_title": verdict.title,
            "criterion": c.label,
            "article": c.citation,
            "decides": c.decides,
        }
        for name, verdict in (("renewal", v.renewal), ("termination", v.termination))
        for c in verdict.criteria
    ]
    return pl.DataFrame(
        rows,
        schema={
            "verdict": pl.String,
            "verdict_title": pl.String,
            "criterion": pl.String,
            "article": pl.String,
            "decides": pl.Boolean,
        },
    )


def verdicts_text(profile: Profile) -> str:
    """The verdicts of a profile in one paragraph (from the catalogue), each criterion with
    its article (the methodology of the dossier)."""
    parts = []
    for verdict in (profile.verdicts.renewal, profile.verdicts.termination):
        items = "; ".join(
            (
                _("{criterion} ({basis})")
                if c.decides
                else _("{criterion} ({basis}, does not decide alone)")
            ).format(
                criterion=c.label,
                basis=c.source if c.source else _("Pontual's default, not law"),
            )
            for c in verdict.criteria
        )
        parts.append(f"{verdict.title} ({verdict.source}): {items}.")
    return " ".join(parts)
