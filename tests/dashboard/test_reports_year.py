"""The three reports over a simulated year (issue 10), and the annual grades and cassação watch
on that year's store (issue 6).

The year is a *sampled* year: one working day in the middle of each month of 2025
(`pontual simulate --year 2025 --days-per-month 1`, 10 vehicles at the peak), because a full
year of the sample city is ~17 M pings, far too slow for a test on two shared cores. The store
holds the scheduled trips of those 12 days only, so every monthly and yearly figure is the one
of the simulated days. The year is 2025 and not the current one because ingest quarantines
pings stamped in the future (a 2026 December would be, before it has happened).

The store is built by the same commands `pontual demo` runs (simulate, init, gtfs load and
schedule, ingest of the register, incidents, surveys, AVL and fares, match, crowding, the indices
of each month, then of the year with a grade history giving O1 grade E in 2023 and 2024), in
about 30-60 s. Then: the semester report of both halves, the monthly report of three months and
the annual dossier of each operator; their headline numbers against the store's `indicators`
and `annual_grades` rows, in the pdftotext text too; their XLSX reopened with openpyxl; and a
second rendering from a fresh read of the store gives the same hash and the same bytes.
"""

from __future__ import annotations

import re
import shutil
from collections.abc import Iterator
from datetime import date
from pathlib import Path

import openpyxl
import polars as pl
import pytest

from core.profile import load_profile
from core.store import Store
from dashboard.format import to_integer, to_number, to_percent, to_period
from dashboard.reports.annual import build_annual_dossier
from dashboard.reports.model import ReportData
from dashboard.reports.monthly import build_monthly_report
from dashboard.reports.render_pdf import to_pdf
from dashboard.reports.render_xlsx import to_xlsx
from dashboard.reports.semester import build_semester_report
from pontual.cli import main
from sample_data.timetable import sampled_year_dates
from tests.conftest import FIXTURES
from tests.dashboard.report_reading import headline, line_in, pdf_text

PROFILE = load_profile("bento-goncalves-2021")
YEAR = 2025
DATES = sampled_year_dates(YEAR, 1)
MONTHS = [f"{YEAR}-{m:02d}" for m in range(1, 13)]
HISTORY = FIXTURES / "reports" / "grade_history_2025_o1_two_e_years.csv"
OPERATORS = ("O1", "O2")
MONTHLY = ("2025-01", "2025-06", "2025-12")
Rendered = dict[str, tuple[ReportData, Path, Path]]


def build_year_stages(sample: Path) -> list[list[str]]:
    """The pipeline of `pontual demo` (`build_stages`) over the sampled days: argv lists."""
    first = DATES[0].isoformat()
    stages = [
        [
            *("simulate", "--out", str(sample), "--year", str(YEAR), "--days-per-month", "1"),
            *("--vehicles", "10", "--seed", "7"),
        ],
        ["init"],
        # only the sampled days are scheduled: a month's programme is its simulated day's
        ["gtfs", "load", str(sample / "gtfs.zip"), "--from", first, "--to", first],
        *[["gtfs", "schedule", "--from", d.isoformat(), "--to", d.isoformat()] for d in DATES[1:]],
        ["ingest", "vehicles", str(sample / "vehicles.csv")],
        ["ingest", "incidents", str(sample / "incidents.csv")],
        ["ingest", "surveys", str(sample / "iqs_surveys.csv")],
        ["ingest", "avl", str(sample / "avl.parquet")],
        ["ingest", "fares", str(sample / "fares.csv")],
        # one process: a worker pool per day costs more than the day's matching here
        *[["match", "--from", d.isoformat(), "--workers", "1"] for d in DATES],
        ["crowding", "--from", first, "--to", DATES[-1].isoformat()],
    ]
    extra = ["--costs", str(sample / "cost_per_km.csv")]
    extra += ["--population", str(sample / "population.csv")]
    stages += [["indices", "--period", month, *extra] for month in MONTHS]
    stages.append(["indices", "--period", str(YEAR), *extra, "--grade-history", str(HISTORY)])
    return stages


@pytest.fixture(scope="module")
def store_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("year")
    path = root / "store" / "pontual.duckdb"
    for argv in build_year_stages(root / "sample"):
        assert main(["--quiet", "--store", str(path), *argv]) == 0, argv
    return path


@pytest.fixture(scope="module")
def store(store_file: Path) -> Iterator[Store]:
    with Store.open(store_file, read_only=True) as s:
        yield s


def build_all(store: Store) -> list[ReportData]:
    """Both semesters, three monthly reports, the dossier of each operator."""
    return [
        *[build_semester_report(store, f"{YEAR}-{h}", PROFILE) for h in (1, 2)],
        *[build_monthly_report(store, month, PROFILE) for month in MONTHLY],
        *[build_annual_dossier(store, YEAR, PROFILE, scope_id=op) for op in OPERATORS],
    ]


@pytest.fixture(scope="module")
def rendered(store: Store, tmp_path_factory: pytest.TempPathFactory) -> Rendered:
    """file stem -> (report, PDF path, XLSX path), rendered once for the module."""
    out = tmp_path_factory.mktemp("rendered")
    return {
        r.file_stem: (
            r,
            to_pdf(r, out / f"{r.file_stem}.pdf"),
            to_xlsx(r, out / f"{r.file_stem}.xlsx"),
        )
        for r in build_all(store)
    }


def values(store: Store, scope: str, scope_id: str, name: str) -> dict[str, float]:
    """period -> value of one indicator of one scope, every period in the store."""
    rows = store.query(
        "SELECT period, value FROM indicators WHERE scope = ? AND scope_id = ? AND indicator = ?",
        [scope, scope_id, name],
    )
    return dict(rows.iter_rows())


# -- the store of the sampled year ------------------------------------------------------------
def test_the_sampled_year_is_twelve_days_each_month_indexed(store: Store) -> None:
    days = store.query("SELECT DISTINCT service_date FROM scheduled_trips ORDER BY 1")
    assert tuple(days["service_date"]) == DATES
    judged = store.query("SELECT DISTINCT service_date FROM trip_outcomes ORDER BY 1")
    assert tuple(judged["service_date"]) == DATES
    n_sched = store.query("SELECT count(*) AS n FROM scheduled_trips")["n"][0]
    n_taps = store.query("SELECT count(*) AS n FROM fare_transactions")["n"][0]
    programmed = values(store, "system", "all", "trips_programmed")
    passengers = values(store, "system", "all", "passengers")
    run = values(store, "system", "all", "trips_run")
    # every month has its indices, and the year's counts are the sums of the months'
    assert sorted(p for p in programmed if len(p) == 7) == MONTHS
    assert sum(programmed[m] for m in MONTHS) == programmed[str(YEAR)] == n_sched
    assert sum(passengers[m] for m in MONTHS) == passengers[str(YEAR)] == n_taps
    assert sum(run[m] for m in MONTHS) == run[str(YEAR)]
    # the simulator's fleet cut (simulated days 2 to 5) is seen in February to May only
    cut = store.query(
        "SELECT period FROM indicators WHERE scope = 'operator' AND length(period) = 7 "
        "AND indicator = 'days_fleet_cut_over_limit' AND value > 0 ORDER BY period"
    )
    assert cut["period"].to_list() == MONTHS[1:5]


def test_annual_grades_and_the_cassacao_watch(store: Store) -> None:
    grades = store.query(
        "SELECT * FROM annual_grades WHERE scope = 'operator' ORDER BY scope_id, year"
    )
    o1 = grades.filter(pl.col("scope_id") == "O1")
    assert o1["year"].to_list() == [2023, 2024, 2025]
    assert o1["is_history"].to_list() == [True, True, False]
    now = {r["scope_id"]: r for r in grades.filter(pl.col("year") == YEAR).iter_rows(named=True)}
    for op in OPERATORS:
        g = now[op]
        icv = values(store, "operator", op, "icv_score")[str(YEAR)]
        assert g["icv_score"] == pytest.approx(icv)
        # annual score = 0.7 ICV + 0.3 IQS (BG art. 58, profile weights), graded by the bands
        assert g["annual_score"] == pytest.approx(0.7 * g["icv_score"] + 0.3 * g["iqs_score"])
        assert g["grade"] == "E" and g["annual_score"] < 60
    # O1: E in 2023, 2024 (history) and 2025 -> three in a row: cassação watch (art. 72-VII)
    assert (now["O1"]["n_e_consecutive"], now["O1"]["is_cassacao_watch"]) == (3, True)
    # O2: B in 2024, E in 2025 -> one E, no watch
    assert (now["O2"]["n_e_consecutive"], now["O2"]["is_cassacao_watch"]) == (1, False)
    # the watch is suggested as infraction LXXXVIII for O1 only, dated the year's last day
    items = store.query(
        "SELECT operator_id, occurred_on FROM suggested_infractions WHERE item = 'LXXXVIII'"
    )
    assert items.rows() == [("O1", date(YEAR, 12, 31))]


# -- semester ---------------------------------------------------------------------------------
@pytest.mark.parametrize("half", [1, 2])
def test_semester_reports_add_up_their_six_months(
    store: Store, rendered: Rendered, half: int
) -> None:
    report, pdf, _ = rendered[f"relatorio-semestral-{YEAR}-{half}"]
    months = MONTHS[6 * (half - 1) : 6 * half]
    total = {
        name: sum(values(store, "system", "all", name)[m] for m in months)
        for name in ("passengers", "trips_programmed", "trips_run", "km_run")
    }
    assert headline(report, "Passageiros transportados") == total["passengers"]
    assert headline(report, "Viagens programadas") == total["trips_programmed"]
    assert headline(report, "Viagens realizadas") == total["trips_run"]
    assert headline(report, "Km rodados") == pytest.approx(total["km_run"])
    # the IPK table per line and month is the store's line IPK of that month, every row
    ipk = report.table("ipk_mensal").frame
    assert sorted({d.strftime("%Y-%m") for d in ipk["month"]}) == months
    for route, month, value in ipk.select("route_id", "month", "ipk").iter_rows():
        assert value == pytest.approx(
            values(store, "line", route, "ipk")[month.strftime("%Y-%m")]
        ), (route, month)

    text = pdf_text(pdf)
    assert "Relatório semestral da operação" in text and f"{half}º semestre de {YEAR}" in text
    assert line_in(text, "Passageiros transportados", to_integer(total["passengers"]))
    assert line_in(text, "Viagens realizadas", to_integer(total["trips_run"]))
    assert line_in(text, "Km rodados", to_number(total["km_run"]))
    assert all(to_period(m) in text for m in months)


# -- monthly ----------------------------------------------------------------------------------
@pytest.mark.parametrize("month", MONTHLY)
def test_monthly_reports_equal_the_months_indicators(
    store: Store, rendered: Rendered, month: str
) -> None:
    report, pdf, _ = rendered[f"relatorio-mensal-{month}"]
    ops = report.table("operacao_por_linha").frame
    assert (
        ops.height
        == store.query(
            "SELECT count(DISTINCT route_id) AS n FROM scheduled_trips WHERE strftime(service_date, "
            "'%Y-%m') = ?",
            [month],
        )["n"][0]
    )
    for row in ops.iter_rows(named=True):
        line = row["route_id"]
        assert row["n_run"] == values(store, "line", line, "trips_run")[month]
        assert row["n_programmed"] == values(store, "line", line, "trips_programmed")[month]
        assert row["km_run"] == pytest.approx(values(store, "line", line, "km_run")[month])
    passengers = values(store, "system", "all", "passengers")[month]
    assert headline(report, "Passageiros transportados") == passengers

    text = pdf_text(pdf)
    assert f"{to_period(month)} (01/" in text
    assert line_in(text, "Passageiros transportados", to_integer(passengers))
    km = values(store, "system", "all", "km_run")[month]
    assert line_in(text, "Km rodados", to_number(km))


# -- annual -----------------------------------------------------------------------------------
@pytest.mark.parametrize("operator", OPERATORS)
def test_annual_dossier_equals_the_grades_and_the_monthly_icv(
    store: Store, rendered: Rendered, operator: str
) -> None:
    report, pdf, _ = rendered[f"dossie-anual-{YEAR}-{operator}"]
    grade = store.query(
        "SELECT * FROM annual_grades WHERE scope = 'operator' AND scope_id = ? AND year = ?",
        [operator, YEAR],
    ).row(0, named=True)
    assert headline(report, "Conceito") == grade["grade"]
    assert headline(report, "Nota anual (pontos)") == pytest.approx(grade["annual_score"])
    assert headline(report, "ICV (pontos)") == pytest.approx(grade["icv_score"])
    assert headline(report, "IQS (pontos)") == pytest.approx(grade["iqs_score"])
    watch = "sim" if grade["is_cassacao_watch"] else "não"
    assert headline(report, "Alerta de cassação") == watch
    # the verdict criteria the annual page shows, each with its article (issue 17)
    criteria = report.table("criterios_vereditos").frame
    e_years = criteria.filter(pl.col("rule") == "grade_e_years").row(0, named=True)
    assert e_years["article"] == "BG art. 72-VII; Anexo I LXXXVIII"
    assert e_years["status"] == ("met" if grade["is_cassacao_watch"] else "not_met")
    assert e_years["value"] == f"{grade['n_e_consecutive']} seguidos, {grade['n_e_total']} no total"
    fiscal = criteria.filter(pl.col("article") == "BG art. 32-II, 38-II")
    assert fiscal["status"].to_list() == ["not_computed"]
    assert headline(report, "Prorrogação do contrato") in ("não apta", "em aberto")
    # the point breakdown adds up to the annual score (0.7 ICV + 0.3 IQS)
    parts = report.table("composicao_nota").frame
    shares = parts.filter(pl.col("part").is_in(["ICV (nota)", "IQS (pesquisa)"]))
    assert shares["contribution"].sum() == pytest.approx(grade["annual_score"])
    # ICV by month in the dossier = the operator's monthly indicators, all twelve months
    icv = report.table("icv_mensal").frame
    assert icv["month"].to_list() == [date(YEAR, m, 1) for m in range(1, 13)]
    monthly = {
        name: values(store, "operator", operator, name)
        for name in ("icv_score", "icv_fulfilment", "icv_punctuality")
    }
    for row in icv.iter_rows(named=True):
        month = row["month"].strftime("%Y-%m")
        for name, by_period in monthly.items():
            assert row[name] == pytest.approx(by_period[month]), (month, name)
    # completeness: each month's scheduled trips of the operator's lines (its sampled day's)
    lines = report.table("lotacao").frame["route_id"].to_list()
    sched = store.query(
        "SELECT CAST(date_trunc('month', service_date) AS DATE) AS month, count(*) AS n "
        "FROM scheduled_trips WHERE list_contains(?, route_id) GROUP BY 1 ORDER BY 1",
        [lines],
    )
    done = report.table("completude").frame
    assert done["month"].to_list() == sched["month"].to_list()
    assert done["n_scheduled"].to_list() == sched["n"].to_list()

    text = pdf_text(pdf)
    assert f"Dossiê anual de renovação — operadora {operator}" in text
    assert line_in(text, "Conceito", grade["grade"])
    assert line_in(text, "Nota anual (pontos)", to_number(grade["annual_score"]))
    assert line_in(text, "ICV (pontos)", to_number(grade["icv_score"]))
    assert line_in(text, "IQS (pontos)", to_number(grade["iqs_score"]))
    assert line_in(text, "Alerta de cassação", watch)
    # the month rows of the ICV table: fulfilment first, the ICV score last
    for row in icv.iter_rows(named=True):
        label = to_period(row["month"].strftime("%Y-%m"))
        shown = [ln.split() for ln in text.splitlines() if ln.split()[:1] == [label]]
        want = [to_percent(row["icv_fulfilment"]), to_number(row["icv_score"])]
        icv_rows = [w for w in shown if " ".join(w[1:3]) == want[0]]
        assert len(icv_rows) == 1 and icv_rows[0][-1] == want[1], (label, shown)
    # the chart of fulfilment and punctuality reads its axis in percent, as the table does
    chart = text.split("Cumprimento e pontualidade por mês", 1)[1].split("Qualidade", 1)[0]
    assert any(ln.split()[:2] == ["80", "%"] for ln in chart.splitlines())
    assert "0,80" not in chart
    assert report.input_hash in text


# -- formats and determinism ------------------------------------------------------------------
def test_xlsx_sheets_reopen_with_the_same_values(rendered: Rendered) -> None:
    for report, _, xlsx in rendered.values():
        book = openpyxl.load_workbook(xlsx)
        assert book.sheetnames == list(report.tables)
        for name, table in report.tables.items():
            rows = list(book[name].iter_rows(values_only=True))
            assert list(rows[0]) == [c.label for c in table.columns]
            data = table.data
            assert len(rows) - 1 == data.height, (report.file_stem, name)
            for j, col in enumerate(table.columns):
                got = [r[j] for r in rows[1:]]
                if data[col.name].dtype == pl.Date:
                    got = [g.date() if g is not None else None for g in got]
                assert got == data[col.name].to_list(), (report.file_stem, name, col.name)


def test_regenerating_gives_the_same_numbers_hash_and_bytes(
    store_file: Path, rendered: Rendered, tmp_path: Path
) -> None:
    with Store.open(store_file, read_only=True) as again:
        reports = build_all(again)
    assert [r.file_stem for r in reports] == list(rendered)
    for report in reports:
        first, pdf, xlsx = rendered[report.file_stem]
        assert report.input_hash == first.input_hash and len(report.input_hash) == 64
        assert to_pdf(report, tmp_path / "p.pdf").read_bytes() == pdf.read_bytes()
        assert to_xlsx(report, tmp_path / "x.xlsx").read_bytes() == xlsx.read_bytes()
        for name, table in report.tables.items():
            assert table.data.equals(first.table(name).data), (report.file_stem, name)
    assert len({r.input_hash for r in reports}) == len(reports)


def test_the_crowding_table_of_the_cli_reads_local_hours(
    store_file: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Issue 20: times in the profile's zone everywhere. `pontual crowding`'s table heads its
    hour column "hora (local)" and each row's hour is the summary's UTC hour in
    America/Sao_Paulo (the simulated peak's 07:00 local is 10:00 UTC)."""
    from zoneinfo import ZoneInfo

    path = tmp_path / "pontual.duckdb"
    shutil.copy(store_file, path)
    first, last = DATES[0].isoformat(), DATES[-1].isoformat()
    monkeypatch.setenv("COLUMNS", "300")  # the whole table on one line per row
    capsys.readouterr()
    assert main(["--store", str(path), "crowding", "--from", first, "--to", last]) == 0
    out = capsys.readouterr().out
    with Store.open(path, read_only=True) as s:
        needed = s.query("SELECT route_id, hour_at FROM crowding_summary WHERE is_action_required")
    if needed.height == 0:
        pytest.fail("the sampled year has no crowded hour: the table is not printed")
    assert "hora (local)" in out and "UTC" not in out
    tz = ZoneInfo(PROFILE.general.timezone.value)
    local = {h.astimezone(tz).strftime("%H:%M") for h in needed["hour_at"].to_list()}
    utc_only = {h.strftime("%H:%M") for h in needed["hour_at"].to_list()} - local
    shown = set(re.findall(r"\b\d\d:\d\d\b", out))
    assert shown and shown <= local
    assert not shown & utc_only
