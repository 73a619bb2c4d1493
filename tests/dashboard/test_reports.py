"""The three reports rendered from a simulated store: the PDF text holds the store's headline
numbers, the XLSX sheets reopen with the same values, and regenerating from the same store
gives the same numbers, hash and bytes.

The store: two simulated service days (30 June and 1 July 2026, 10 vehicles) through the real
pipeline — GTFS load, ingest of the register, incidents, surveys, AVL and fares, matching,
crowding, then the indices of June, July and the year 2026 with a grade history that gives O1
two earlier E years. A simulated year is too slow for the test budget; two days across a
month and a semester boundary exercise every table. Building it takes about 10 s.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from collections.abc import Iterator
from datetime import date, timedelta
from pathlib import Path
from xml.sax.saxutils import escape

import openpyxl
import polars as pl
import pytest

from analytics.crowding.job import run_crowding
from analytics.indices.grades import read_grade_history
from analytics.indices.job import run_indices
from analytics.matching.day import run_match_day
from analytics.matching.options import MatchOptions
from core.errors import ConfigError
from core.periods import parse_period
from core.profile import load_profile
from core.store import Store
from dashboard.format import to_integer, to_number, to_percent
from dashboard.reports.annual import build_annual_dossier
from dashboard.reports.model import ReportData
from dashboard.reports.monthly import build_monthly_report
from dashboard.reports.render_csv import to_csv, to_csv_raw
from dashboard.reports.render_pdf import to_pdf
from dashboard.reports.render_xlsx import to_xlsx
from dashboard.reports.semester import build_semester_report
from ingest.files import ingest_file
from ingest.gtfs_feed import load_gtfs
from ingest.options import build_options
from pontual.cli import main
from sample_data.options import SimulationOptions
from sample_data.simulate import simulate
from tests.conftest import FIXTURES
from tests.dashboard.report_reading import headline, line_in, pdf_text, pdf_word_boxes
from tests.dashboard.test_browser import ROOT

PROFILE = load_profile("bento-goncalves-2021")
HERE = FIXTURES / "reports"
START, DAYS = date(2026, 6, 30), 2
TZ = PROFILE.general.timezone.value


@pytest.fixture(scope="module")
def store_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("reports")
    sim = root / "sim"
    simulate(SimulationOptions(start=START, days=DAYS, n_vehicles=10, write_text_avl=False), sim)
    path = root / "store" / "pontual.duckdb"
    end = START + timedelta(days=DAYS - 1)
    with Store.open(path) as store:
        load_gtfs(store, sim / "gtfs.zip", materialise_days=(START, end))
        options = build_options()
        for kind, name in (
            ("vehicles", "vehicles.csv"),
            ("incidents", "incidents.csv"),
            ("surveys", "iqs_surveys.csv"),
            ("avl", "avl.parquet"),
            ("fares", "fares.csv"),
        ):
            ingest_file(store, sim / name, kind, options=options, profile=PROFILE, key=b"k" * 32)
        for i in range(DAYS):
            run_match_day(store, START + timedelta(days=i), PROFILE, MatchOptions())
        run_crowding(store, PROFILE, START, end)
        history = read_grade_history(HERE / "grade_history_o1_two_e_years.csv")
        for period in ("2026-06", "2026-07"):
            run_indices(store, PROFILE, parse_period(period))
        run_indices(store, PROFILE, parse_period("2026"), grade_history=history)
    return path


@pytest.fixture
def store(store_file: Path) -> Iterator[Store]:
    with Store.open(store_file, read_only=True) as s:
        yield s


def indicator(store: Store, scope: str, scope_id: str, period: str, name: str) -> float:
    rows = store.query(
        "SELECT value FROM indicators WHERE scope = ? AND scope_id = ? AND period = ? "
        "AND indicator = ?",
        [scope, scope_id, period, name],
    )
    assert rows.height == 1, (scope, scope_id, period, name)
    return float(rows["value"][0])


# -- semester -------------------------------------------------------------------------------
def test_semester_report_headlines_equal_the_store(store: Store, tmp_path: Path) -> None:
    report = build_semester_report(
        store, "2026-1", PROFILE, maintenance=HERE / "maintenance_costs_2026_s1.csv"
    )
    # the first semester holds one simulated day (30 June): June's indicators are its numbers
    n_taps = store.query(
        "SELECT count(*) AS n FROM fare_transactions WHERE event_at < '2026-07-01 03:00:00+00'"
    )["n"][0]
    assert headline(report, "Passageiros transportados") == n_taps
    assert n_taps == indicator(store, "system", "all", "2026-06", "passengers")
    km = indicator(store, "system", "all", "2026-06", "km_run")
    trips = indicator(store, "system", "all", "2026-06", "trips_run")
    assert headline(report, "Km rodados") == pytest.approx(km)
    assert headline(report, "Viagens realizadas") == trips
    # hand sum of the fixture's January-June rows (the July row is outside the semester)
    assert headline(report, "Custos de manutenção (R$)") == pytest.approx(27371.00)
    classes = sum(
        headline(report, label)  # type: ignore[misc]
        for label in (
            "Pagantes (inteira)",
            "Estudantes",
            "Vale-transporte",
            "Isentos (idosos, PcD, gratuidades)",
            "Integrações",
            "Outros",
        )
    )
    assert classes == n_taps
    lines = report.table("linhas").frame
    t10 = lines.filter(pl.col("route_id") == "T10").row(0, named=True)
    assert t10["ipk"] == pytest.approx(indicator(store, "line", "T10", "2026-06", "ipk"))

    text = pdf_text(to_pdf(report, tmp_path / "s.pdf"))
    assert "Relatório semestral da operação" in text
    assert line_in(text, "Passageiros transportados", to_integer(n_taps))
    assert line_in(text, "Km rodados", to_number(km))
    assert line_in(text, "Viagens realizadas", to_integer(trips))
    assert line_in(text, "Custos de manutenção (R$)", "27.371,00")
    assert "Tabela de IPK por linha e mês" in text and "jun/2026" in text


# -- monthly --------------------------------------------------------------------------------
def test_monthly_report_lines_and_staff(store: Store, tmp_path: Path) -> None:
    report = build_monthly_report(store, "2026-07", PROFILE, staff=HERE / "staff_2026_07.csv")
    ops = report.table("operacao_por_linha").frame
    t10 = ops.filter(pl.col("route_id") == "T10").row(0, named=True)
    assert (t10["n_drivers"], t10["n_inspectors"]) == (6, 1)  # July row, not June's 5
    assert t10["n_run"] == indicator(store, "line", "T10", "2026-07", "trips_run")
    assert t10["n_programmed"] == indicator(store, "line", "T10", "2026-07", "trips_programmed")
    assert t10["km_run"] == pytest.approx(indicator(store, "line", "T10", "2026-07", "km_run"))
    forms = report.table("passageiros_por_forma").frame
    assert forms["n_passengers"].sum() == indicator(store, "system", "all", "2026-07", "passengers")
    assert headline(report, "Motoristas") == 6 + 3 + 4
    assert headline(report, "Fiscais") == 2

    text = pdf_text(to_pdf(report, tmp_path / "m.pdf"))
    assert "jul/2026 (01/07/2026 a 31/07/2026)" in text
    passengers = indicator(store, "system", "all", "2026-07", "passengers")
    assert line_in(text, "Passageiros transportados", to_integer(passengers))
    assert line_in(text, "Motoristas", "13")


def test_monthly_report_without_staff_says_how_to_enter_it(store: Store) -> None:
    report = build_monthly_report(store, "2026-07", PROFILE)
    assert report.table("operacao_por_linha").frame["n_drivers"].null_count() > 0
    assert "--staff" in (report.table("operacao_por_linha").note or "")


# -- annual ---------------------------------------------------------------------------------
def test_annual_dossier_equals_the_store_grades(store: Store, tmp_path: Path) -> None:
    report = build_annual_dossier(store, 2026, PROFILE, scope_id="O1")
    grade = store.query(
        "SELECT * FROM annual_grades WHERE scope = 'operator' AND scope_id = 'O1' AND year = 2026"
    ).row(0, named=True)
    assert headline(report, "Conceito") == grade["grade"]
    assert headline(report, "Nota anual (pontos)") == pytest.approx(grade["annual_score"])
    # the history gives O1 grade E in 2024 and 2025; a third E in 2026 is the cassação watch
    history = report.table("historico_conceitos").frame
    assert history["year"].to_list() == [2024, 2025, 2026]
    assert grade["grade"] == "E" and grade["is_cassacao_watch"]
    assert headline(report, "Alerta de cassação") == "sim"
    assert headline(report, "Anos com conceito E (consecutivos)") == 3
    icv = report.table("icv_mensal").frame
    assert icv["month"].to_list() == [date(2026, 6, 1), date(2026, 7, 1)]
    assert icv["icv_fulfilment"][1] == pytest.approx(
        indicator(store, "operator", "O1", "2026-07", "icv_fulfilment")
    )
    # the km series over the term so far: the months with data, the rest of 2026 marked
    # without data and kept out of the term's sums (CGS art. 2 p.u. a)
    km = store.query(
        "SELECT sum(numerator) AS run, sum(denominator) AS programmed FROM indicators "
        "WHERE scope = 'operator' AND scope_id = 'O1' AND indicator = 'km_efficiency' "
        "AND period IN ('2026-06', '2026-07')"
    ).row(0, named=True)
    term = report.table("eficiencia_km_prazo").frame
    assert term["month"].to_list() == [date(2026, m, 1) for m in range(6, 13)]
    assert term.filter(pl.col("has_data"))["month"].to_list() == icv["month"].to_list()
    assert term["term_efficiency"][-1] == pytest.approx(km["run"] / km["programmed"])
    # BG's tariff worksheet: IPK = equivalent passengers ÷ km run over the months with both
    eq = store.query(
        "SELECT sum(value) AS n FROM indicators WHERE scope = 'operator' AND scope_id = 'O1' "
        "AND indicator = 'equivalent_passengers' AND period IN ('2026-06', '2026-07')"
    )["n"][0]
    sheet = report.table("planilha_tarifaria").frame
    ipk = sheet.filter(pl.col("item").str.starts_with("IPK"))["value"][0]
    assert ipk == pytest.approx(eq / km["run"])
    n_infractions = store.query(
        "SELECT count(*) AS n FROM suggested_infractions WHERE operator_id = 'O1'"
    )["n"][0]
    assert headline(report, "Infrações sugeridas") == n_infractions
    # completeness: judged trips with a GPS run over scheduled trips of O1's lines
    lines = report.table("lotacao").frame["route_id"].to_list()
    counts = store.query(
        "SELECT (SELECT count(first_ping_id) FROM trip_outcomes WHERE list_contains(?, route_id)) "
        "AS gps, (SELECT count(*) FROM scheduled_trips WHERE list_contains(?, route_id)) AS n",
        [lines, lines],
    ).row(0)
    assert headline(report, "Viagens programadas com GPS") == pytest.approx(counts[0] / counts[1])
    method = report.table("metodologia").frame
    assert method.height == len(PROFILE.cited_values())
    late = method.filter(pl.col("key") == "trips.late_departure_s").row(0, named=True)
    assert late["is_default"] and late["citation"].startswith("padrão, a ser fixado por decreto")
    limit = method.filter(pl.col("key") == "crowding.standees_max_per_m2").row(0, named=True)
    assert limit["citation"] == "BG art. 59" and limit["value"] == "4"

    text = pdf_text(to_pdf(report, tmp_path / "a.pdf"))
    assert "Dossiê anual de renovação — operadora O1" in text
    assert line_in(text, "Conceito", grade["grade"])
    assert line_in(text, "Nota anual (pontos)", to_number(grade["annual_score"]))
    assert line_in(text, "ICV (pontos)", to_number(grade["icv_score"]))
    assert line_in(text, "Km rodados ÷ programados", to_percent(grade["km_efficiency"]))
    assert line_in(text, "Alerta de cassação", "sim")
    assert "crowding.standees_max_per_m2" in text and "BG art. 59" in text
    assert report.input_hash in text


def test_annual_dossier_of_a_lot_and_of_a_missing_scope(store: Store) -> None:
    lot = build_annual_dossier(store, 2026, PROFILE, scope="lot", scope_id="L2")
    grade = store.query(
        "SELECT annual_score FROM annual_grades WHERE scope = 'lot' AND scope_id = 'L2' "
        "AND year = 2026"
    )["annual_score"][0]
    assert headline(lot, "Nota anual (pontos)") == pytest.approx(grade)
    with pytest.raises(ConfigError, match="no indices of operator O9 in 2026"):
        build_annual_dossier(store, 2026, PROFILE, scope_id="O9")


# -- formats and determinism ----------------------------------------------------------------
def build_all(store: Store) -> list[ReportData]:
    return [
        build_semester_report(
            store, "2026-1", PROFILE, maintenance=HERE / "maintenance_costs_2026_s1.csv"
        ),
        build_monthly_report(store, "2026-07", PROFILE, staff=HERE / "staff_2026_07.csv"),
        build_annual_dossier(store, 2026, PROFILE, scope_id="O2"),
    ]


def test_xlsx_sheets_reopen_with_the_same_values(store: Store, tmp_path: Path) -> None:
    for report in build_all(store):
        book = openpyxl.load_workbook(to_xlsx(report, tmp_path / f"{report.file_stem}.xlsx"))
        assert book.sheetnames == list(report.tables)
        for name, table in report.tables.items():
            rows = list(book[name].iter_rows(values_only=True))
            assert list(rows[0]) == [c.label for c in table.columns]
            data = table.data
            assert len(rows) - 1 == data.height, name
            for j, col in enumerate(table.columns):
                got = [r[j] for r in rows[1:]]
                want = data[col.name].to_list()
                if data[col.name].dtype == pl.Date:
                    got = [g.date() if g is not None else None for g in got]
                assert got == want, (name, col.name)


def test_no_english_and_no_raw_value_in_any_xlsx_cell(store: Store, tmp_path: Path) -> None:
    """Issue 20 asks for no English in the XLSX either: every text cell of every sheet (the
    headers, notes, units, statuses, the methodology) is held to the PDFs' deny-list, with no
    None/True and no number written as English text (numbers are numbers, Excel formats them)."""
    found = []
    for report in build_all(store):
        book = openpyxl.load_workbook(to_xlsx(report, tmp_path / f"{report.file_stem}.xlsx"))
        for sheet in book.worksheets:
            texts = {v for row in sheet.iter_rows(values_only=True) for v in row}
            for text in sorted(t for t in texts if isinstance(t, str)):
                prose = VERBATIM.sub(" ", text)
                for pattern in (PDF_ENGLISH, RAW_VALUES, ENGLISH_DECIMAL):
                    found += [(report.file_stem, sheet.title, m) for m in pattern.findall(prose)]
    assert not found, "\n".join(map(str, found))


def test_csv_files_reread_equal(store: Store, tmp_path: Path) -> None:
    report = build_all(store)[2]
    paths = to_csv_raw(report, tmp_path / "csv")
    assert [p.stem for p in paths] == list(report.tables)
    icv = pl.read_csv(tmp_path / "csv" / "icv_mensal.csv", try_parse_dates=True)
    assert icv.equals(report.table("icv_mensal").data)


def test_csv_for_brazilian_spreadsheets(store: Store, tmp_path: Path) -> None:
    """';' separators, decimal commas, dd/mm/aaaa, a BOM and the pt-BR headers; the numbers
    read back equal to the table's data."""
    report = build_all(store)[2]
    paths = to_csv(report, tmp_path / "csv")
    table = report.table("icv_mensal")
    raw = (tmp_path / "csv" / "icv_mensal.csv").read_bytes()
    assert raw.startswith(b"\xef\xbb\xbf")
    header = raw[3:].decode("utf-8").splitlines()[0]
    assert header.split(";") == [c.label for c in table.columns]
    back = pl.read_csv(
        paths[list(report.tables).index("icv_mensal")], separator=";", decimal_comma=True
    )
    back.columns = [c.removeprefix("\ufeff") for c in back.columns]
    data = table.data
    numbers = [c for c in table.columns if data[c.name].dtype.is_numeric()]
    assert numbers
    for col in numbers:
        got = back[col.label].cast(pl.Float64).to_list()
        assert got == data[col.name].cast(pl.Float64).to_list(), col.name
    assert "," in raw.decode("utf-8").splitlines()[1]


def test_regenerating_gives_the_same_numbers_hash_and_bytes(
    store_file: Path, tmp_path: Path
) -> None:
    outputs = []
    for run in ("a", "b"):
        with Store.open(store_file, read_only=True) as store:
            reports = build_all(store)
        files = {}
        for report in reports:
            folder = tmp_path / run
            files[report.file_stem] = (
                report.input_hash,
                to_pdf(report, folder / f"{report.file_stem}.pdf").read_bytes(),
                to_xlsx(report, folder / f"{report.file_stem}.xlsx").read_bytes(),
                [p.read_bytes() for p in to_csv(report, folder / report.file_stem)],
            )
        outputs.append(files)
    assert outputs[0] == outputs[1]
    hashes = {v[0] for v in outputs[0].values()}
    assert len(hashes) == 3 and all(len(h) == 64 for h in hashes)


def test_a_changed_entered_file_changes_the_hash(store: Store, tmp_path: Path) -> None:
    base = build_monthly_report(store, "2026-07", PROFILE, staff=HERE / "staff_2026_07.csv")
    edited = tmp_path / "staff.csv"
    edited.write_text(
        (HERE / "staff_2026_07.csv").read_text().replace("T10,2026-07,6", "T10,2026-07,7")
    )
    changed = build_monthly_report(store, "2026-07", PROFILE, staff=edited)
    assert changed.input_hash != base.input_hash
    assert build_monthly_report(store, "2026-07", PROFILE).input_hash != base.input_hash


# -- CLI ------------------------------------------------------------------------------------
def test_cli_writes_every_format_beside_the_store(store_file: Path, tmp_path: Path) -> None:
    store = tmp_path / "s" / "pontual.duckdb"
    store.parent.mkdir()
    shutil.copyfile(store_file, store)
    code = main(
        ["--store", str(store), "--quiet", "report", "annual", "--year", "2026", "--by", "carla"]
    )
    assert code == 0
    out = store.parent / "reports"
    for op in ("O1", "O2"):
        assert (out / f"dossie-anual-2026-{op}.pdf").stat().st_size > 0
        assert (out / f"dossie-anual-2026-{op}.xlsx").stat().st_size > 0
        assert (out / f"dossie-anual-2026-{op}" / "metodologia.csv").exists()
    # every file taken is in the audit log, with who took it and the report's input hash
    import sqlalchemy as sa

    from cases.db import AUDIT_LOG, CaseDB

    with CaseDB.open(f"sqlite:///{store.with_name('pontual.cases.sqlite')}") as db, db.read() as c:
        audit = c.execute(
            sa.select(AUDIT_LOG.c.actor, AUDIT_LOG.c.action, AUDIT_LOG.c.target)
        ).all()
    assert sorted((a, b, Path(t).name) for a, b, t in audit) == sorted(
        ("carla", "dossier_download", f"dossie-anual-2026-{op}{ext}")
        for op in ("O1", "O2")
        for ext in (".pdf", ".xlsx", "")
    )
    code = main(
        [
            "--store",
            str(store),
            "--quiet",
            "report",
            "monthly",
            "--month",
            "2026-07",
            "--out",
            str(tmp_path / "o"),
            "--format",
            "csv",
            "--delivered-on",
            "2026-08-20",
            "--by",
            "ana",
        ]
    )
    assert code == 0
    assert sorted(p.name for p in (tmp_path / "o").iterdir()) == ["relatorio-mensal-2026-07"]
    # the delivery is recorded: July's report is due 14 Sep (30 business days; 7 Sep is
    # Independence Day), so 20 Aug is on time
    from cases.report_dues import read_report_dues

    with CaseDB.open(f"sqlite:///{store.with_name('pontual.cases.sqlite')}") as db:
        dues = read_report_dues(db, "monthly", ["2026-07"], PROFILE, date(2026, 9, 1))
    assert dues.select("due_on", "delivered_on", "days_late").rows() == [
        (date(2026, 9, 14), date(2026, 8, 20), 0)
    ]


def test_cli_bad_half_and_bad_staff_file_are_user_errors(
    store_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["--store", str(store_file), "report", "semester", "--half", "2026-3"])
    assert code == 2
    assert "semestre inválido '2026-3'" in capsys.readouterr().err
    bad = HERE / "staff_repeated_line_and_month.csv"
    code = main(
        ["--store", str(store_file), "report", "monthly", "--month", "2026-07", "--staff", str(bad)]
    )
    assert code == 2
    err = capsys.readouterr().err
    assert "route_id, month repetido" in err and "linha 4" in err


def test_citations_are_text_never_reformatted(store: Store) -> None:
    """The decimal comma of a number never reaches an article ("BG art. 59", not "art, 59")."""
    dossier = build_annual_dossier(store, 2026, PROFILE, scope_id="O2")
    paragraphs = [p for s in dossier.sections for p in s.paragraphs]
    crowding = next(p for p in paragraphs if "passageiros em pé por m²" in p)
    km = next(p for p in paragraphs if "dos km programados" in p)
    assert "art." in crowding and "art," not in crowding, crowding
    assert "art," not in km and km.startswith("Mínimo de 90 % dos km programados"), km


def test_a_changed_raw_ping_changes_the_dossier_input_hash(
    store_file: Path, tmp_path: Path
) -> None:
    from cases.evidence import record_day_digests

    path = tmp_path / "pontual.duckdb"
    shutil.copyfile(store_file, path)
    with Store.open(path) as store:
        record_day_digests(store, PROFILE)
        base = build_annual_dossier(store, 2026, PROFILE, scope_id="O1")
        entries = base.table("entradas").frame
        raw = entries.filter(pl.col("input").str.starts_with("raw:vehicle_locations"))
        n_pings = store.query(
            "SELECT count(*) AS n FROM vehicle_locations WHERE event_at >= '2026-06-30 03:00Z' "
            "AND event_at < '2026-07-02 03:00Z'"
        )["n"][0]
        # the two local service days of the store, every ping of them, none changed yet
        assert raw.rows() == [
            (raw["input"][0], n_pings, raw["sha256"][0]),
        ]
        assert raw["input"][0] == "raw:vehicle_locations (2 dia(s))"
        assert entries["input"].str.starts_with("raw:fare_transactions").sum() == 1
        # one stored latitude moves by a metre: the derived tables are untouched, the hash moves
        ping = store.query("SELECT min(ping_id) AS p FROM vehicle_locations")["p"][0]
        store.con.execute(
            "UPDATE vehicle_locations SET lat = lat + 0.00001 WHERE ping_id = ?", [ping]
        )
        changed = build_annual_dossier(store, 2026, PROFILE, scope_id="O1")
    assert changed.input_hash != base.input_hash
    moved = changed.table("entradas").frame.filter(
        pl.col("input").str.starts_with("raw:vehicle_locations")
    )
    assert (
        moved["input"][0] == "raw:vehicle_locations (2 dia(s), 1 diferente(s) do digest registrado)"
    )
    assert moved["sha256"][0] != raw["sha256"][0]


def test_dossier_input_hash_reuses_day_digests_and_moves_with_a_late_ping(
    store_file: Path, tmp_path: Path
) -> None:
    """ADR 0113: with every raw day's digest recorded (`raw_day_fingerprints`) the dossier
    reuses them and its hash is the one computed without them; a late ping ingested with
    `pontual ingest avl` moves it, and so does a latitude changed by direct SQL on the store
    (no Pontual command notes it): each time, the hash of a dossier whose raw days are all
    hashed in full again."""
    from cases.digests import compute_raw_day_digests, record_day_fingerprints

    path = tmp_path / "pontual.duckdb"
    shutil.copyfile(store_file, path)
    tz = PROFILE.general.timezone.value

    def dossier_now() -> tuple[str, str, bool]:
        """(input hash reusing the recorded digests, input hash hashing every day again,
        whether the first reused every day)."""
        with Store.open(path) as store:
            end = START + timedelta(days=DAYS - 1)
            reused = compute_raw_day_digests(store, "vehicle_locations", START, end, tz)
            kept = build_annual_dossier(store, 2026, PROFILE, scope_id="O1").input_hash
            saved = store.query("SELECT * FROM raw_day_fingerprints")
            store.con.execute("DELETE FROM raw_day_fingerprints")
            fresh = build_annual_dossier(store, 2026, PROFILE, scope_id="O1").input_hash
            store.append("raw_day_fingerprints", saved)
        return kept, fresh, bool(reused["is_reused"].all())

    with Store.open(path) as store:
        assert store.count("raw_day_fingerprints") == 0  # the fixture ingested in-process
        record_day_fingerprints(store, tz)
        ping = store.query(
            "SELECT vehicle_id, event_at, lat, lon FROM vehicle_locations ORDER BY ping_id LIMIT 1"
        ).row(0, named=True)
    base, base_fresh, base_reused = dossier_now()
    assert base == base_fresh and base_reused
    # (a) a late ping of the first day, through Pontual: one second after the first ping
    late = tmp_path / "late.csv"
    at = (ping["event_at"] + timedelta(seconds=1)).strftime("%Y-%m-%dT%H:%M:%SZ")
    late.write_text(
        f"vehicle_id,event_at,lat,lon\n{ping['vehicle_id']},{at},{ping['lat']},{ping['lon']}\n"
    )
    assert main(["--quiet", "--store", str(path), "ingest", "avl", str(late)]) == 0
    after_ingest, after_ingest_fresh, ingest_reused = dossier_now()
    assert after_ingest != base
    assert after_ingest == after_ingest_fresh and ingest_reused  # the ingest digested its day
    # (b) behind Pontual's back: the recorded digest of that day no longer holds
    with Store.open(path) as store:
        store.con.execute(
            "UPDATE vehicle_locations SET lat = lat + 0.00001 WHERE event_at = ?",
            [ping["event_at"]],
        )
    after_sql, after_sql_fresh, sql_reused = dossier_now()
    assert after_sql not in (base, after_ingest)
    assert after_sql == after_sql_fresh and not sql_reused


def test_monthly_report_lists_cases_by_state_and_the_report_due_days(
    store: Store, tmp_path: Path
) -> None:
    from cases.accounts import add_user
    from cases.db import CaseDB
    from cases.register import open_case
    from cases.report_dues import record_report_delivery
    from cases.workflow import Workflow
    from tests.cases.test_workflow import auto, suggestion

    with CaseDB.open(f"sqlite:///{tmp_path / 'cases.sqlite'}") as db:
        boss = add_user(db, "paula", "planejamento", password="x" * 12)
        fiscal = add_user(db, "fabio", "fiscal", password="x" * 12, by=boss)
        late = open_case(db, suggestion(key="a", occurred_on=date(2026, 7, 1)), fiscal)
        Workflow(db, PROFILE).lavrar(late, fiscal, auto(number="AI-1"), on=date(2026, 7, 1))
        open_case(db, suggestion(key="b", occurred_on=date(2026, 7, 1)), fiscal)
        open_case(db, suggestion(key="c", occurred_on=date(2026, 6, 30)), fiscal)  # June's
        record_report_delivery(db, "monthly", "2026-06", date(2026, 8, 20), "ana")
        report = build_monthly_report(store, "2026-07", PROFILE, cases=db, today=date(2026, 9, 1))
    cases = report.table("casos").frame
    assert cases.select("state", "due_on", "days_late").rows() == [
        ("sugerida", None, 0),
        ("lavrada", date(2026, 7, 16), 47),  # 15 days to send the auto (art. 68 §2)
    ]
    assert headline(report, "Casos com prazo vencido") == 1
    dues = report.table("prazos_relatorios").frame
    assert dues["period"].to_list() == [f"2026-0{m}" for m in range(2, 8)]
    june = dues.filter(pl.col("period") == "2026-06").row(0, named=True)
    # June 2026's report: 30 business days after 30 Jun (no holiday in July or early August
    # in RS) is 11 Aug; delivered 20 Aug, 9 days late
    assert (june["due_on"], june["days_late"], june["status"]) == (
        date(2026, 8, 11),
        9,
        "entregue com atraso",
    )
    text = pdf_text(to_pdf(report, tmp_path / "m.pdf"))
    assert "Casos de infração por estado" in text and "entregue com atraso" in text


def test_the_dossiers_first_page_carries_the_verdict_and_its_caveats(
    store: Store, tmp_path: Path
) -> None:
    """A renewal board reads the grade with its caveats before any number: the first page says
    whether the grade can bear a decision ("indicativo" while the bands are Pontual's defaults;
    PROVISÓRIO when too few trips could be judged) and how much of the year the data covers;
    the criteria with their articles follow, and the document ends with a signature block."""
    dossier = build_annual_dossier(store, 2026, PROFILE, scope_id="O2")
    text = pdf_text(to_pdf(dossier, tmp_path / "d.pdf"))
    cover, first = text.split("\f")[:2]
    # the cover says what the document is and whom it judges; no number before the verdict
    assert "Dossiê anual de avaliação para a renovação da concessão" in cover
    assert "Operadora" in cover and "O2" in cover and "Ano avaliado" in cover
    assert dossier.input_hash in cover
    assert "Conceito E — nota anual" in first, first[:2000]
    assert "Conceitos por ano: 2025 B · 2026 E; alerta de cassação (art. 72-VII): não." in first
    assert "a base de casos não foi informada na emissão" in " ".join(first.split())
    assert "Indicativo: notas mínimas dos conceitos" in first
    assert "a fixar por decreto (BG art. 58)" in first
    assert "Cobertura dos dados: GPS em" in first
    assert "Vereditos: critérios, artigos e composição da nota" in text
    assert "Tarifa técnica" in text and "Assinaturas" in text
    # signatures close the body; the reproducibility annex follows them
    assert text.index("Elaborado por:") > text.index("Metodologia")
    # the infractions' evidence (trip and ping ids) is an annex after the signatures
    assert text.rindex("Anexo — Infrações sugeridas: evidências") > text.index("Elaborado por:")
    assert "pontual " not in first  # no CLI hints in the document's opening


def test_dossiers_of_one_year_share_the_raw_digests_with_the_same_hash(store: Store) -> None:
    """`pontual report annual` hashes the year's raw data once for every operator's dossier,
    and reads and hashes the year's shared tables (crowding, trips by month, lines) once:
    passing those gives the very hash and tables each dossier computes on its own."""
    from cases.evidence import compute_period_day_digests
    from core.periods import year_period
    from dashboard.reports.annual import read_year_inputs
    from dashboard.reports.reproducibility import compute_frame_sha256

    whole = year_period(2026)
    digests = compute_period_day_digests(
        store, whole.start, whole.end, PROFILE.general.timezone.value
    )
    year_inputs = read_year_inputs(store, 2026)
    assert year_inputs.hashes["trip_crowding"] == compute_frame_sha256(
        store.query("SELECT route_id, is_over_limit, max_standees_per_m2 FROM trip_crowding")
    )
    for op in ("O1", "O2"):
        alone = build_annual_dossier(store, 2026, PROFILE, scope_id=op)
        shared = build_annual_dossier(
            store, 2026, PROFILE, scope_id=op, raw_digests=digests, year_inputs=year_inputs
        )
        assert shared.input_hash == alone.input_hash
        assert shared.tables.keys() == alone.tables.keys()
        for name, table in alone.tables.items():
            assert shared.tables[name].frame.equals(table.frame), (op, name)
    with pytest.raises(ValueError, match="year inputs of 2026"):
        build_annual_dossier(store, 2025, PROFILE, scope_id="O1", year_inputs=year_inputs)


# -- every PDF page, as a reader sees it ----------------------------------------------------
PAGES_OUT = ROOT / "test-output" / "reports"
RAW_VALUES = re.compile(r"\b(None|NaN|nan|null|True|False|true|false)\b")
# English a reader of the PDFs must not meet (the browser test's list, plus words that have
# leaked into documents: units, profile keys).
PDF_ENGLISH = re.compile(
    r"\b(the|and|of|days|ratio|trips|default|source|practice|fee table|TfL|obstruction|"
    r"detour|weather|suppressed|on_time|not_evaluated|per_10000_km|to be fixed by decree)\b"
)
# A number in English format: a decimal point with one, two or four-plus digits after it
# ("1.0", "0.25"); pt-BR writes "1,0", and "1.846" (three digits) is a pt-BR thousand.
ENGLISH_DECIMAL = re.compile(r"(?<![\w.])\d+\.(?:\d{1,2}|\d{4,})(?![\w.])")
# What the reproducibility annex may hold verbatim: file names, table and column names, hashes.
VERBATIM = re.compile(r"\S+\.(?:duckdb|csv|parquet|zip|toml|json)\b|\b[0-9a-f]{16,}\b|\S*_\S*")


def _pdf_pages(path: Path) -> list[str]:
    """The text of each page (pdftotext); a PNG of each page beside the PDF (pdftoppm)."""
    if shutil.which("pdftoppm") is None:
        pytest.skip("pdftoppm (Debian poppler-utils, `make sysdeps`) is not installed")
    for old in path.parent.glob(f"{path.stem}-*.png"):
        old.unlink()
    subprocess.run(
        ["pdftoppm", "-png", "-r", "50", str(path), str(path.with_suffix(""))], check=True
    )
    return pdf_text(path).rstrip("\f").split("\f")


@pytest.fixture(scope="module")
def pdf_pages(store_file: Path) -> dict[str, list[str]]:
    """Every page of the semester and monthly reports and of both operators' dossiers, as
    PNG files under test-output/reports/ and as text, by report file stem."""
    with Store.open(store_file, read_only=True) as store:
        reports = [
            build_semester_report(
                store, "2026-1", PROFILE, maintenance=HERE / "maintenance_costs_2026_s1.csv"
            ),
            build_monthly_report(store, "2026-07", PROFILE, staff=HERE / "staff_2026_07.csv"),
            build_annual_dossier(store, 2026, PROFILE, scope_id="O1"),
            build_annual_dossier(store, 2026, PROFILE, scope_id="O2"),
        ]
        PAGES_OUT.mkdir(parents=True, exist_ok=True)
        return {
            r.file_stem: _pdf_pages(to_pdf(r, PAGES_OUT / f"{r.file_stem}.pdf")) for r in reports
        }


def test_every_pdf_page_has_a_png_and_no_raw_value(pdf_pages: dict[str, list[str]]) -> None:
    """One PNG per page of every report, no None/NaN/True on any page, and each dossier's
    first page after the cover carries the verdict and its caveats."""
    assert len(pdf_pages) == 4
    for stem, pages in pdf_pages.items():
        pngs = sorted(PAGES_OUT.glob(f"{stem}-*.png"))
        assert len(pngs) == len(pages) >= 2, (stem, len(pngs), len(pages))
        assert all(p.stat().st_size > 1000 for p in pngs)
        for number, page in enumerate(pages, start=1):
            assert not RAW_VALUES.findall(page), (stem, number, RAW_VALUES.findall(page))
        if stem.startswith("dossie-anual"):
            first = pages[1]  # after the cover
            assert re.search(r"Conceito [A-E] — nota anual", first), (stem, first)
            assert "Indicativo: notas mínimas dos conceitos" in first
            assert "Cobertura dos dados: GPS em" in first


def test_no_english_and_no_english_number_on_any_pdf_page(
    pdf_pages: dict[str, list[str]],
) -> None:
    found = []  # every page's findings, so that one run shows them all
    for stem, pages in pdf_pages.items():
        for number, page in enumerate(pages, start=1):
            prose = VERBATIM.sub(" ", page)
            found += [(stem, number, m) for m in sorted(set(PDF_ENGLISH.findall(prose)))]
            found += [(stem, number, m) for m in sorted(set(ENGLISH_DECIMAL.findall(prose)))]
    assert not found, "\n".join(map(str, found))


def test_the_dossiers_summary_counts_the_operators_cases_by_state(
    store: Store, tmp_path: Path
) -> None:
    """The year's infraction cases of the judged operator, by state, on the summary page and
    as a table beside the verdict (another operator's and another year's cases left out)."""
    from cases.accounts import add_user
    from cases.db import CaseDB
    from cases.register import open_case
    from cases.workflow import Workflow
    from tests.cases.test_workflow import auto, suggestion

    with CaseDB.open(f"sqlite:///{tmp_path / 'cases.sqlite'}") as db:
        boss = add_user(db, "paula", "planejamento", password="x" * 12)
        fiscal = add_user(db, "fabio", "fiscal", password="x" * 12, by=boss)
        lavrado = open_case(
            db, suggestion(key="a", operator_id="O2", occurred_on=date(2026, 7, 1)), fiscal
        )
        Workflow(db, PROFILE).lavrar(lavrado, fiscal, auto(number="AI-1"), on=date(2026, 7, 1))
        open_case(db, suggestion(key="b", operator_id="O2", occurred_on=date(2026, 8, 3)), fiscal)
        open_case(db, suggestion(key="c", operator_id="O1", occurred_on=date(2026, 8, 3)), fiscal)
        open_case(db, suggestion(key="d", operator_id="O2", occurred_on=date(2025, 8, 3)), fiscal)
        dossier = build_annual_dossier(
            store, 2026, PROFILE, scope_id="O2", cases=db, today=date(2026, 9, 1)
        )
    by_state = dossier.table("casos_por_estado").frame.filter(pl.col("n_cases") > 0)
    assert by_state.rows() == [("sugerida", 1, 0), ("lavrada", 1, 1)]
    assert dossier.summary[-1] == (
        "Casos de infração com fato no ano: 2 — sugerida 1, lavrada 1 (1 com prazo vencido). "
        "Reincidências e sanções contam só casos julgados procedentes (BG art. 65)."
    )


def test_no_header_breaks_mid_word() -> None:
    """Each column is at least as wide as its header's longest word, the rest narrowed."""
    from reportlab.pdfbase.pdfmetrics import stringWidth

    from dashboard.reports.render_pdf import HEADER_CELL, compute_column_widths

    labels = ["Data", "Reincidências", "Ocorrências", "Km rodados ÷ programados", "Fato"]
    widths = compute_column_widths(labels, [1.0, 1.0, 1.0, 1.0, 2.4], 240.0)
    assert abs(sum(widths) - 240.0) < 1e-6
    for label, width in zip(labels, widths, strict=True):
        longest = max(
            stringWidth(w, HEADER_CELL.fontName, HEADER_CELL.fontSize) for w in label.split()
        )
        assert width >= longest + 12.0 - 1e-6, label


def test_columns_are_sized_to_what_their_cells_need() -> None:
    """A date never wraps (its column is at least its widest value), and a column of short
    codes (one-letter groups) takes only what its widest cell needs: the rest of the page goes
    to the long texts, by their weights (the infractions' annex: a date wrapped as
    "07/01/" over "2025" while "B" sat in a column as wide as the evidence's)."""
    from reportlab.pdfbase.pdfmetrics import stringWidth

    from dashboard.reports.render_pdf import CELL, compute_column_widths

    labels = ["Data", "Grupo", "Fato", "Evidência"]
    date_w = stringWidth("07/01/2025", CELL.fontName, CELL.fontSize)
    group_w = stringWidth("B", CELL.fontName, CELL.fontSize)
    widest = [date_w, group_w, 900.0, 1200.0]
    widths = compute_column_widths(
        labels, [1.0, 2.4, 2.4, 2.4], 300.0, widest=widest, unbroken=[True, False, False, False]
    )
    assert abs(sum(widths) - 300.0) < 1e-6
    assert widths[0] >= date_w + 12.0  # the date on one line, padding included
    header_group = stringWidth("Grupo", "Helvetica-Bold", 7)
    assert widths[1] < header_group + 12.0 + 1.5  # only the header's word (wider than "B")
    # the two long texts share what is left equally (equal weights)
    assert abs(widths[2] - widths[3]) < 1e-6
    assert abs(widths[2] - (300.0 - widths[0] - widths[1]) / 2) < 1e-6


def test_a_cell_one_line_holds_is_a_plain_string_laid_out_as_its_paragraph() -> None:
    """`to_cells`: a text that fits on one line of its column is drawn as a plain string (no
    paragraph to parse and wrap); a text that would wrap, an empty one and one with runs of
    spaces stay paragraphs. A plain string is one that ReportLab's paragraph lays out as that
    same single line."""
    from reportlab.platypus import Paragraph

    from dashboard.reports.render_pdf import CELL, CELL_CODE, to_cells

    room = 60.0
    texts = [
        "não",
        "01/01/2025",  # wraps in a 60 pt column at 7 pt? (decided by the width, checked below)
        "G0016-WD-00-002",
        "linha G0000: 2 viagem(ns) atrasada(s) sem motivo justificado",
        "G0016-WD-00-002,G0016-WD-02-002,G0016-WD-16-001",
        "",
        "dois  espaços",
        " à esquerda",
        "R&D <b>",
    ]
    for style in (CELL, CELL_CODE):
        cells = to_cells(texts, style, room)
        for text, cell in zip(texts, cells, strict=True):
            reference = Paragraph(escape(text), style)
            reference.wrap(room, 1000.0)
            broken = reference.blPara
            if isinstance(cell, str):
                # joined: a list of ids in Courier, cut where the paragraph cuts it
                assert len(cell.split("\n")) == len(broken.lines), (style.name, text)
                assert cell.replace("\n", "") == text
                if broken.kind == 0:  # one plain fragment: each line's words
                    words = [" ".join(str(w) for w in line[1]) for line in broken.lines]
                    assert cell.split("\n") == words
            else:
                assert isinstance(cell, Paragraph)
        plain = [c for c in cells if isinstance(c, str)]
        assert "não" in plain and "R&D <b>" in plain
        assert not any(t in plain for t in ("", "dois  espaços", " à esquerda"))
        assert texts[3] not in plain  # a sentence that wraps stays a paragraph
        # the ids without spaces: a paragraph in Helvetica, their lines in Courier
        assert (style is CELL_CODE) == any("\n" in c for c in plain)


def test_ids_without_spaces_break_into_the_lines_of_reportlabs_paragraph() -> None:
    """`split_monospaced`: a list of ids in Courier wider than its column is cut into the
    lines ReportLab's paragraph makes of it (character by character, `_splitWord`), for widths
    around the line ends and for a cut cell ending in an ellipsis; a text with a space, or in a
    proportional font, is left to the paragraph."""
    from reportlab.platypus import Paragraph

    from dashboard.reports.render_pdf import CELL, CELL_CODE, split_monospaced

    ids = ",".join(f"G00{i:02d}-WD-{i % 17:02d}-{i * 7 % 100:03d}" for i in range(40))
    pings = ",".join(f"{i * 9173 % 500000}-{i * 9173 % 500000 + 4321}" for i in range(60))
    for text in (ids, pings, pings[:200] + "\u2026", "1234567890" * 9):
        for room in (20.0, 38.99, 39.0, 39.01, 46.8, 60.0, 77.7, 120.0 - 6.0 - 6.0):
            lines = split_monospaced(text, CELL_CODE, room)
            reference = Paragraph(escape(text), CELL_CODE)
            reference.wrap(room, 10_000.0)
            expected = ["".join(str(w) for w in line[1]) for line in reference.blPara.lines]
            assert lines == expected, (text[:20], room)
    assert split_monospaced("G0016-WD-00-002, G0016-WD-02-002", CELL_CODE, 40.0) is None
    assert split_monospaced(ids, CELL, 40.0) is None


def test_the_dossiers_pdf_lays_out_every_word_where_paragraph_cells_did(
    store: Store, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The PDF's faster tables (one-line cells as plain strings, each paragraph's lines broken
    once, `LongTable`) put every word of the dossier on the same page at the same place as a
    table of paragraph cells measured anew at each page (how it was made before, issue #21):
    the same rows, the same text, the same layout."""
    from reportlab.platypus import Paragraph, Table

    import dashboard.reports.render_pdf as render_pdf

    report = build_annual_dossier(store, 2026, PROFILE, scope_id="O1")
    fast = pdf_word_boxes(to_pdf(report, tmp_path / "fast.pdf"))
    monkeypatch.setattr(
        render_pdf,
        "to_cells",
        lambda texts, cell, room: [Paragraph(escape(t), cell) for t in texts],
    )
    monkeypatch.setattr(render_pdf, "LongTable", Table)
    reference = pdf_word_boxes(to_pdf(report, tmp_path / "reference.pdf"))
    assert fast == reference
    # the annex's rows are in it (each one's line), and its tables run over several pages
    rows = report.table("infracoes").frame
    words = set(re.findall(r">([^<>]+)</word>", fast))
    assert rows.height > 0 and set(rows["route_id"].drop_nulls().to_list()) <= words
    assert fast.count("<page ") >= 3


def test_dossier_input_hash_is_the_same_after_the_raw_days_are_archived(
    store_file: Path, tmp_path: Path
) -> None:
    """The annual dossier's input hash covers the raw pings and taps by their day digests:
    once the days are archived to the lake (rows gone from the store) the recorded digests
    stand for them, so the hash is the one computed before (issue #18, docs/adr/0099)."""
    from cases.archive import archive_days
    from cases.evidence import record_day_digests

    path = tmp_path / "pontual.duckdb"
    shutil.copy(store_file, path)
    with Store.open(path) as store:
        record_day_digests(store, PROFILE)
        before = build_annual_dossier(store, 2026, PROFILE, scope_id="O1")
        moved = archive_days(store, tmp_path / "lake", PROFILE, date(2027, 1, 1))
        assert set(moved["service_date"].to_list()) == {START, START + timedelta(days=1)}
        assert store.count("vehicle_locations") == 0 and store.count("fare_transactions") == 0
        after = build_annual_dossier(store, 2026, PROFILE, scope_id="O1")
    assert after.input_hash == before.input_hash
    entries = after.tables["entradas"].frame
    raw = entries.filter(pl.col("input").str.starts_with("raw:"))
    assert raw.height == 2 and (raw["n_rows"] > 0).all()


def test_a_cell_taller_than_a_page_is_cut_and_the_pdf_still_builds(tmp_path: Path) -> None:
    """ReportLab splits a table between rows, never inside one: a January annex row listing
    thousands of ping ids was 611 pt tall on a 507 pt frame and the whole dossier failed
    (LayoutError). Such a cell is cut at a separator, ends in an ellipsis and a note says the
    XLSX and CSV carry it whole; short cells are untouched."""
    from dashboard.reports.model import Col, Headline, ReportData, ReportTable, Section
    from dashboard.reports.render_pdf import to_pdf

    ids = ",".join(f"{i}-{i + 3}" for i in range(0, 120_000, 7))  # ~100 k characters
    frame = pl.DataFrame(
        {"service_date": [date(2025, 1, 2)] * 3, "pings": [ids, "10-42", "7"], "n": [1, 2, 3]}
    )
    table = ReportTable(
        "anexo",
        "Anexo",
        frame,
        (
            Col("service_date", "Data", "date"),
            Col("pings", "Pings", "code"),
            Col("n", "N", "integer"),
        ),
    )
    report = ReportData(
        kind="annual",
        title="Teste",
        subtitle="",
        file_stem="teste",
        headlines=(Headline("Linhas", 3, "integer"),),
        sections=(Section("Anexo", tables=("anexo",)),),
        tables={"anexo": table},
    )
    path = to_pdf(report, tmp_path / "teste.pdf")
    text = pdf_text(path)
    assert "10-42" in text
    assert "1 célula(s) longa(s) demais para uma página terminam em …" in text
    assert "119994-119997" not in text  # the tail of the long cell is cut
