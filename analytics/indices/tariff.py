"""The technical tariff worksheet as the law computes it (CGS art. 15-16; BG art. 26 §2, 49).

CGS: IPK = equivalent passengers of the last 12 months ÷ total km of the system, where total
km = programmed km + the km to start the operation and back to the garage (art. 15 §1-3);
tariff = cost of the total km per km ÷ IPK (art. 16), the cost per km weighted by each
month's share of the km (16 §1). BG: km ("rodagem") and equivalent passengers from ticketing,
as annual (monthly) means (art. 26 §2, 49-I, 49-II); IPK = mean monthly equivalent passengers ÷
mean monthly km. Pontual's ticketing carries no odometer, so the km run measured from GPS
stands for the ticketing system's "rodagem" (the worksheet says so).

The months summed are the profile's `tariff.demand_months` ending with a given month. A month
without passengers or without km is kept out of the sums, explicitly: `n_months` and
`months_missing` say which were used and which were not (a month without data is not a month
without passengers).
"""

from __future__ import annotations

from datetime import date

import polars as pl

from core.periods import months_back
from core.profile import Profile
from core.texts import N_, gettext

WORKSHEET_LINES = (
    # (column, item, unit): catalogue ids, in the chosen language in the worksheet
    ("n_months", N_("Months with data (ticketing and km) in the window"), N_("months")),
    ("months_missing", N_("Months of the window without data (out of the sums)"), N_("months")),
    ("equivalent_passengers", N_("Equivalent passengers in the window"), N_("passengers")),
    ("km_programmed", N_("Km scheduled in the window"), "km"),
    ("dead_km", N_("Km from the garage to the start of service and back"), "km"),
    ("km_run", N_("Km run in the window"), "km"),
    ("km_total", N_("Total km of the system (basis of the IPK)"), "km"),
    ("ipk", N_("IPK (equivalent passengers per km)"), N_("passengers/km")),
    ("cost_per_km", N_("Cost per km (weighted by each month's km)"), "R$/km"),
    ("technical_tariff", N_("Technical tariff = cost per km ÷ IPK"), "R$"),
)


WORKSHEET_SCHEMA = {
    "scope": pl.String,
    "scope_id": pl.String,
    "line": pl.Int32,
    "item": pl.String,
    "value": pl.Float64,
    "detail": pl.String,
    "unit": pl.String,
    "article": pl.String,
}


def compute_tariff_inputs(monthly: pl.DataFrame, profile: Profile, end_month: date) -> pl.DataFrame:
    """The worksheet's figures per scope, over the `tariff.demand_months` months ending with
    `end_month`.

    `monthly`: scope, scope_id, month (Date, first day), equivalent_passengers, km_run,
    km_programmed (km), cost_km (cost per km × km run, currency; null when no cost given).
    Returns scope, scope_id, n_months (months with both passengers and km), months_missing
    (the window's other months, 'YYYY-MM' joined by ', '; '' when none), equivalent_passengers,
    km_programmed, dead_km (km_programmed × `tariff.dead_km_ratio`; null for the `run` basis),
    km_run, km_total (CGS: programmed + dead; BG: km run), mean_monthly_passengers and
    mean_monthly_km (BG's annual means, per month), ipk (equivalent passengers per km of
    km_total; BG: the ratio of the means, the same number), cost_per_km (Σ cost ÷ Σ km run,
    null when any month lacks a cost) and technical_tariff (cost_per_km ÷ ipk, currency).
    """
    tariff = profile.tariff
    if tariff is None:
        raise ValueError(f"profile {profile.id} declares no [tariff]")  # programming error
    n = tariff.demand_months.value
    start = months_back(end_month, n).start.replace(day=1)
    months = pl.date_range(start, end_month.replace(day=1), "1mo", eager=True).alias("month")
    window = monthly.filter(pl.col("month").is_between(start, end_month))
    has_data = (pl.col("equivalent_passengers").fill_null(0) > 0) & (
        pl.col("km_programmed").fill_null(0) > 0
    )
    used = window.filter(has_data)
    scopes = monthly.select("scope", "scope_id").unique()
    missing = (
        scopes.join(pl.DataFrame(months), how="cross")
        .join(
            used.select("scope", "scope_id", "month"), on=["scope", "scope_id", "month"], how="anti"
        )
        .sort("month")
        .group_by("scope", "scope_id")
        .agg(pl.col("month").dt.strftime("%Y-%m").str.join(", ").alias("months_missing"))
    )
    ratio = tariff.dead_km_ratio.value if tariff.dead_km_ratio is not None else 0.0
    sums = used.group_by("scope", "scope_id").agg(
        pl.len().cast(pl.Int32).alias("n_months"),
        pl.col("equivalent_passengers").sum(),
        pl.col("km_programmed").sum(),
        pl.col("km_run").sum(),
        pl.when(pl.col("cost_km").null_count() == 0).then(pl.col("cost_km").sum()).alias("_cost"),
    )
    programmed_plus_dead = tariff.km_basis.value == "programmed_plus_dead"
    dead = pl.col("km_programmed") * ratio if programmed_plus_dead else pl.lit(None, pl.Float64)
    total = (
        pl.col("km_programmed") + pl.col("dead_km") if programmed_plus_dead else pl.col("km_run")
    )
    return (
        scopes.join(sums, on=["scope", "scope_id"], how="left")
        .join(missing, on=["scope", "scope_id"], how="left")
        .with_columns(
            pl.col("n_months").fill_null(0),
            pl.col("months_missing").fill_null(""),
            dead.alias("dead_km"),
        )
        .with_columns(total.alias("km_total"))
        .with_columns(
            (pl.col("equivalent_passengers") / pl.col("n_months")).alias("mean_monthly_passengers"),
            (pl.col("km_total") / pl.col("n_months")).alias("mean_monthly_km"),
            pl.when(pl.col("km_total") > 0)
            .then(pl.col("equivalent_passengers") / pl.col("km_total"))
            .alias("ipk"),
            pl.when(pl.col("km_run") > 0)
            .then(pl.col("_cost") / pl.col("km_run"))
            .alias("cost_per_km"),
        )
        .with_columns(
            pl.when(pl.col("ipk") > 0)
            .then(pl.col("cost_per_km") / pl.col("ipk"))
            .alias("technical_tariff")
        )
        .drop("_cost")
        .sort("scope", "scope_id")
    )


def build_tariff_worksheet(inputs: pl.DataFrame, profile: Profile) -> pl.DataFrame:
    """The worksheet as a table per scope: scope, scope_id, line (1-based), item,
    value (the figure in `unit`; the missing months' line: how many), detail (the missing
    months, 'YYYY-MM' joined by ', '; else null), unit, and article (the legal basis of the
    line under the profile, or the default it rests on); the texts in the chosen language (a
    table made to be shown, never stored)."""
    tariff = profile.tariff
    assert tariff is not None
    basis = tariff.km_basis
    art = {
        "n_months": tariff.demand_months.citation,
        "months_missing": gettext(
            "months without data stay out of the sums (they do not count as zero)"
        ),
        "equivalent_passengers": tariff.demand_months.citation,
        "km_programmed": basis.citation,
        "dead_km": (
            tariff.dead_km_ratio.citation
            if tariff.dead_km_ratio is not None and basis.value == "programmed_plus_dead"
            else gettext("does not apply (the basis is the km run)")
        ),
        "km_run": gettext("km run measured by GPS (ticketing records no km)"),
        "km_total": basis.citation,
        "ipk": basis.citation,
        "cost_per_km": gettext("cost given per operator and month (--costs), weighted by km"),
        "technical_tariff": (
            gettext("CGS art. 16 (cost of the total km ÷ IPK)")
            if basis.value == "programmed_plus_dead"
            else gettext("cost per km ÷ IPK (BG art. 49: annual means of the ticketing)")
        ),
    }
    rows = []
    for i, (column, item, unit) in enumerate(WORKSHEET_LINES, start=1):
        if column == "months_missing":
            listed = (
                pl.col(column).str.split(", ").list.eval(pl.element().filter(pl.element() != ""))
            )
            # no missing month: no detail (null, as a spreadsheet cell reads back), not ""
            value, detail = listed.list.len(), pl.col(column).replace("", None)
        else:
            value, detail = pl.col(column), pl.lit(None, dtype=pl.String)
        rows.append(
            inputs.select(
                "scope",
                "scope_id",
                pl.lit(i).cast(pl.Int32).alias("line"),
                pl.lit(gettext(item)).alias("item"),
                value.cast(pl.Float64).alias("value"),
                detail.alias("detail"),
                pl.lit(gettext(unit)).alias("unit"),
                pl.lit(art[column]).alias("article"),
            )
        )
    return pl.concat(rows).cast(WORKSHEET_SCHEMA).sort("scope", "scope_id", "line")  # type: ignore[arg-type]
