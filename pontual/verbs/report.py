"""`pontual report semester|monthly|annual`: the reports the laws ask for, as PDF, XLSX and CSV.

pontual report semester --half 2026-1 --maintenance custos.csv
pontual report monthly --month 2026-03 --staff pessoal.csv
pontual report annual --year 2026                 # one dossier per operator graded that year
pontual report annual --year 2026 --lot L1

Files go to `<store folder>/reports/` unless --out is given (the dashboard's "Avaliação anual"
page offers the PDF and XLSX found there for download). Every file written is a
`dossier_download` in the case database's audit log (`--by NAME`, default the system user);
`--delivered-on DATE` records the day a monthly or semester report reached SEGIMU, so the
reports' own due days (BG art. 62-VII, Anexo I XLII) are tracked.
"""

from __future__ import annotations

import argparse
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from core.errors import ConfigError, StoreError
from pontual.context import Context
from pontual.messages import gettext

if TYPE_CHECKING:
    from cases.db import CaseDB
    from core.store import Store
    from dashboard.reports.model import ReportData

FORMATS = ("pdf", "xlsx", "csv", "csv-raw")


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "report",
        help="semester report, monthly operating report, annual renewal dossier (PDF/XLSX/CSV)",
        description="Builds the reports of BG Anexo I XLII (semester), art. 62-VII (monthly) "
        "and the annual renewal dossier from the store, as PDF (pt-BR), XLSX (one sheet per "
        "table) and CSV (one file per table: ';' and decimal commas for pt-BR spreadsheets; "
        "csv-raw for machines).",
    )
    kinds = p.add_subparsers(dest="report", metavar="REPORT")
    kinds.required = True
    sem = kinds.add_parser("semester", help="semester report (BG Anexo I XLII)")
    sem.add_argument("--half", required=True, help="YYYY-1 (January-June) or YYYY-2")
    sem.add_argument(
        "--maintenance", help="CSV operator_id,month,item,cost_brl of maintenance costs"
    )
    mon = kinds.add_parser("monthly", help="monthly operating report (BG art. 62-VII)")
    mon.add_argument("--month", required=True, help="YYYY-MM")
    mon.add_argument("--staff", help="CSV route_id,month,n_drivers,n_inspectors")
    for k in (sem, mon):
        k.add_argument(
            "--delivered-on",
            metavar="YYYY-MM-DD",
            help="record that this report reached SEGIMU on that day (its due day is tracked: "
            "BG art. 62-VII, Anexo I XLII)",
        )
    ann = kinds.add_parser("annual", help="annual renewal dossier per operator or lot")
    ann.add_argument("--year", required=True, type=int, help="calendar year")
    who = ann.add_mutually_exclusive_group()
    who.add_argument("--operator", help="one operator (default: every operator graded)")
    who.add_argument("--lot", help="one concession lot")
    for k in (sem, mon, ann):
        k.add_argument("--out", help="output folder (default: <store folder>/reports)")
        k.add_argument(
            "--by",
            help="who takes the report, for the audit log (default: the system user)",
        )
        k.add_argument(
            "--format",
            action="append",
            choices=FORMATS,
            help="pdf, xlsx, csv (pt-BR spreadsheets) or csv-raw (machines); repeatable; "
            "default: pdf, xlsx and csv",
        )
        k.set_defaults(func=run)


@contextmanager
def open_for_reading(path: Path, lake: Path | None = None) -> Iterator[Store]:
    """The store read-only; its published snapshot when a writer holds the file; the lake
    (`open_lake`) when one is given (global --lake)."""
    from core.store import Store, open_snapshot

    if lake is not None:
        from core.lake import open_lake

        with open_lake(lake) as parquet:
            yield parquet
        return

    try:
        store = Store.open(path, read_only=True)
    except StoreError as exc:
        if not exc.what.startswith("cannot open the store"):
            raise  # absent or unmigrated store: the snapshot would not help
        store = open_snapshot(path)
    try:
        yield store
    finally:
        store.close()


def write_report(report: ReportData, out: Path, formats: tuple[str, ...]) -> list[Path]:
    """Write the report in each format under `out`; the paths written."""
    from dashboard.reports.render_csv import to_csv, to_csv_raw
    from dashboard.reports.render_pdf import to_pdf
    from dashboard.reports.render_xlsx import to_xlsx

    paths: list[Path] = []
    if "pdf" in formats:
        paths.append(to_pdf(report, out / f"{report.file_stem}.pdf"))
    if "xlsx" in formats:
        paths.append(to_xlsx(report, out / f"{report.file_stem}.xlsx"))
    if "csv" in formats:
        folder = out / report.file_stem
        to_csv(report, folder)
        paths.append(folder)
    if "csv-raw" in formats:
        folder = out / f"{report.file_stem}-raw"
        to_csv_raw(report, folder)
        paths.append(folder)
    return paths


def build_reports(
    args: argparse.Namespace, store: Store, ctx: Context, cases: CaseDB | None = None
) -> list[ReportData]:
    from dashboard.queries.annual import read_annual_scopes
    from dashboard.reports.annual import build_annual_dossier, read_year_inputs
    from dashboard.reports.monthly import build_monthly_report
    from dashboard.reports.semester import build_semester_report

    profile = ctx.profile
    if args.report == "semester":
        return [
            build_semester_report(
                store, args.half, profile, maintenance=args.maintenance, cases=cases
            )
        ]
    if args.report == "monthly":
        return [build_monthly_report(store, args.month, profile, staff=args.staff, cases=cases)]
    if args.lot:
        return [
            build_annual_dossier(
                store, args.year, profile, scope="lot", scope_id=args.lot, cases=cases
            )
        ]
    operators = [args.operator] if args.operator else read_annual_scopes(store, args.year)
    if not operators:
        raise ConfigError(
            f"no operator has an annual grade for {args.year}",
            where=f"store {store.path}, table annual_grades",
            hint=f"run `pontual indices --period {args.year}` first",
        )
    from cases.evidence import compute_period_day_digests
    from core.periods import year_period

    # every dossier of the year covers the same raw days and reads the same year-wide tables
    # (crowding, trips by month, lines): read and hash them once, not per operator
    whole = year_period(args.year)
    digests = compute_period_day_digests(
        store, whole.start, whole.end, profile.general.timezone.value
    )
    shared = read_year_inputs(store, args.year)
    return [
        build_annual_dossier(
            store,
            args.year,
            profile,
            scope="operator",
            scope_id=op,
            raw_digests=digests,
            year_inputs=shared,
            cases=cases,
        )
        for op in operators
    ]


def record_downloads(db: CaseDB, actor: str, written: list[tuple[ReportData, Path]]) -> None:
    """One `dossier_download` audit row per file written (target: the file, detail: the report
    kind and its input hash), in the case database's audit log: who took which figures when."""
    from cases.audit import record_audit

    with db.begin() as conn:
        for report, path in written:
            record_audit(
                conn,
                actor,
                "dossier_download",
                str(path),
                f"{report.kind}; hash das entradas {report.input_hash}",
            )


def run(args: argparse.Namespace, ctx: Context) -> int:
    import getpass
    from datetime import date

    from cases.db import CaseDB

    out = Path(args.out) if args.out else ctx.settings.store_path.parent / "reports"
    formats = tuple(args.format) if args.format else ("pdf", "xlsx", "csv")
    actor = args.by or getpass.getuser()
    delivered = getattr(args, "delivered_on", None)
    if delivered is not None:
        try:
            delivered = date.fromisoformat(delivered)
        except ValueError:
            raise ConfigError(
                f"invalid --delivered-on {delivered!r}: expected YYYY-MM-DD",
                where="--delivered-on",
                hint="e.g. --delivered-on 2026-04-20",
            ) from None
    with CaseDB.open(ctx.settings.cases_db_url) as db:
        with open_for_reading(ctx.settings.store_path, ctx.settings.lake_path) as store:
            reports = build_reports(args, store, ctx, db)
        written: list[tuple[ReportData, Path]] = []
        for report in reports:
            for path in write_report(report, out, formats):
                written.append((report, path))
                ctx.say(f"{report.title}: {path}")
            if not ctx.settings.quiet:
                ctx.console.print(
                    gettext("input hash: {hash}", hash=report.input_hash), soft_wrap=True
                )
        record_downloads(db, actor, written)
        if delivered is not None:
            from cases.report_dues import record_report_delivery

            label = _period_label(args)
            record_report_delivery(db, args.report, label, delivered, actor, reports[0].input_hash)
            ctx.say(
                gettext(
                    "delivery recorded: {report} on {day}",
                    report=reports[0].file_stem,
                    day=f"{delivered:%d/%m/%Y}",
                )
            )
    return 0


def _period_label(args: argparse.Namespace) -> str:
    """The period label of a monthly ('2026-03') or semester ('2026-S1') report's arguments."""
    from core.periods import parse_period, parse_semester

    if args.report == "monthly":
        return parse_period(args.month, where="--month").label
    return parse_semester(args.half).label
