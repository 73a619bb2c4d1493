"""`pontual ingest avl|fares|vehicles|incidents|surveys|counts|inspections FILE...` and
`pontual quarantine`."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from core.errors import ConfigError, InputError
from core.settings import hash_key
from ingest.kinds import KIND_TABLES
from pontual.context import Context
from pontual.messages import gettext, translate

if TYPE_CHECKING:
    from collections.abc import Callable
    from concurrent.futures import Future, ThreadPoolExecutor
    from contextlib import ExitStack
    from datetime import datetime

    from core.store import Store
    from ingest.options import IngestOptions
    from ingest.writing import IngestCounts


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "ingest",
        help="load AVL pings, fare taps, the fleet register, incidents, surveys, inspections",
    )
    kinds = p.add_subparsers(dest="kind", metavar="KIND")
    kinds.required = True
    for kind in KIND_TABLES:
        k = kinds.add_parser(kind, help=f"ingest {kind} files into {KIND_TABLES[kind]}")
        k.add_argument("files", nargs="*", metavar="FILE")
        k.add_argument(
            "--map", dest="mapping", help="vendor mapping: shipped name (e.g. sube) or .toml path"
        )
        k.add_argument(
            "--source-tz", help="IANA zone of times without offset (default: the profile's)"
        )
        k.add_argument("--time-format", help="strptime format of the source's times")
        k.add_argument("--chunk-rows", type=int, help="records per transaction (default 1 000 000)")
        k.add_argument("--future-skew-s", type=float, help="allowed clock skew into the future, s")
        k.add_argument("--bbox-margin-m", type=float, help="margin around the stops' box, m")
        k.add_argument("--max-speed-m-s", type=float, help="highest believable speed, m/s")
        k.add_argument("--stale-fix-max-age-s", type=float, help="Olho Vivo: oldest fix kept, s")
        k.add_argument(
            "--min-event-year",
            type=int,
            help="records dated before 1 January of this year are refused (default 2000)",
        )
        k.add_argument(
            "--accept-unknown-vehicles",
            action="store_true",
            default=None,
            help="store records of vehicles absent from the fleet register",
        )
        if kind == "avl":
            k.add_argument("--vehicle", help="GPX: vehicle id of the track (default: track name)")
            k.add_argument("--url", help="GTFS-RT VehiclePositions URL to poll")
            k.add_argument("--interval-s", type=float, default=30.0, help="polling interval, s")
            k.add_argument("--polls", type=int, help="number of polls (default: until interrupted)")
        k.set_defaults(func=run)
    q = sub.add_parser("quarantine", help="list quarantined records with their reasons")
    q.add_argument("--source", help="only records whose source contains this text")
    q.add_argument("--limit", type=int, default=50, help="rows to show (default 50)")
    q.set_defaults(func=run_quarantine)


def _say_counts(ctx: Context, name: str, counts: IngestCounts) -> None:
    """The per-file summary line (hidden by --quiet: then not even worded, which would read
    the message catalogue)."""
    if ctx.settings.quiet:
        return
    ctx.say(
        gettext(
            "{name}: {n_read} read, {n_accepted} stored, {n_duplicate} duplicate, "
            "{n_quarantined} quarantined",
            name=name,
            n_read=counts.n_read,
            n_accepted=counts.n_accepted,
            n_duplicate=counts.n_duplicate,
            n_quarantined=counts.n_quarantined,
        )
    )


def _warn(ctx: Context, text: str) -> None:
    """A data warning: always on stderr, --quiet or not."""
    ctx.err.print(gettext("warning: {text}", text=translate(text)), highlight=False, markup=False)


def _say_reasons(ctx: Context, store: Store, name: str, source: str, n_top: int = 5) -> None:
    """The file's quarantined records by reason (the top `n_top`), each with an example record
    (its line or key and its text); hidden by --quiet."""
    if ctx.settings.quiet:
        return
    from rich.table import Table as RichTable

    top = store.query(
        "SELECT reason, count(*) AS n, arg_min(record_key, quarantined_at) AS key, "
        "arg_min(raw_record, quarantined_at) AS example FROM quarantine WHERE source = ? "
        f"GROUP BY reason ORDER BY n DESC, reason LIMIT {int(n_top)}",
        [source],
    )
    if top.height == 0:
        return
    view = RichTable(title=gettext("quarantined in {name}, by reason", name=name))
    view.add_column(gettext("reason"), overflow="fold")
    view.add_column(gettext("records"), justify="right")
    view.add_column(gettext("example"), overflow="fold")
    for reason, n, key, example in top.iter_rows():
        view.add_row(
            translate(reason), str(n), gettext("record {key}", key=key) + f": {example[:100]}"
        )
    ctx.console.print(view)


def run(args: argparse.Namespace, ctx: Context) -> int:
    """`pontual ingest KIND`; a refusal's text (English, from ingest/) is put in the
    catalogue's language by the CLI's error printer (`pontual.cli.format_error`)."""
    from ingest.options import build_options

    options = build_options(
        source_tz=args.source_tz,
        time_format=args.time_format,
        chunk_rows=args.chunk_rows,
        future_skew_s=args.future_skew_s,
        bbox_margin_m=args.bbox_margin_m,
        max_speed_m_s=args.max_speed_m_s,
        stale_fix_max_age_s=args.stale_fix_max_age_s,
        min_event_year=args.min_event_year,
        accept_unknown_vehicles=args.accept_unknown_vehicles,
    )
    url = getattr(args, "url", None)
    if not args.files and not url:
        raise ConfigError(
            f"nothing to ingest for {args.kind}", hint="give FILE... (or --url URL for avl)"
        )
    tz = ctx.profile.general.timezone.value  # the profile is read (and checked) first
    key = hash_key(ctx.settings, create=True) if args.kind == "fares" else None
    warned: set[str] = set()

    def warn_new(notes: tuple[str, ...]) -> None:
        for note in notes:
            if note not in warned:
                warned.add(note)
                _warn(ctx, note)

    with ctx.store() as store:
        # the current digest of each raw day a file wrote, so that a report reuses it while
        # the day is unchanged (ADR 0113), computed while the next file is ingested
        digests = _FileDigests(store, tz)
        try:
            total = _ingest_files(ctx, store, args, options, key, digests, warn_new)
        except BaseException:
            digests.close(quiet=True)  # the command's own error is the one to show
            raise
        digests.close()
    if len(args.files) > 1:
        _say_counts(ctx, "total", total)
    return 0


class _FileDigests:
    """The raw-day digests of an `ingest avl|fares` command (ADR 0113), file by file: the days
    each file wrote are digested on a worker thread, through a second handle of the store
    (`Store.writer_beside`), while the next file is read, judged and inserted; the digests of
    the last file are waited for before the command publishes its snapshot.

    A job's transaction starts (and sees the store) when its file is written, before the next
    file begins: it digests exactly the days of the rows its file wrote (`ingested_at` at or
    after the file's start), each whole. A day that two files write is digested by both, the
    later job last (the jobs run one after another), so each day's recorded digest is of all
    its rows. The worker writes `raw_day_fingerprints` alone, which the ingest never writes.
    Other kinds digest nothing."""

    def __init__(self, store: Store, tz: str) -> None:
        self._store = store
        self._tz = tz
        self._beside: Store | None = None
        self._pool: ThreadPoolExecutor | None = None
        self._job: Future[None] | None = None

    def submit(self, since: datetime) -> None:
        """Digest, on the worker, the raw days of the rows ingested at or after `since`."""
        from concurrent.futures import ThreadPoolExecutor
        from contextlib import ExitStack

        self.wait()
        if self._beside is None:
            self._beside = self._store.writer_beside()
            self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="digests")
        beside = self._beside
        tx = ExitStack()
        tx.enter_context(beside.transaction())
        try:
            beside.query("SELECT count(*) AS n FROM raw_day_fingerprints")  # the view: now
        except BaseException:
            tx.close()
            raise
        assert self._pool is not None
        self._job = self._pool.submit(self._digest, tx, since)

    def _digest(self, tx: ExitStack, since: datetime) -> None:
        from cases.digests import record_ingested_day_fingerprints

        assert self._beside is not None
        with tx:  # commits, or rolls back on an error
            record_ingested_day_fingerprints(self._beside, self._tz, since)

    def wait(self) -> None:
        """Wait for the job in flight; its error, if any, is raised here."""
        job, self._job = self._job, None
        if job is not None:
            job.result()

    def close(self, *, quiet: bool = False) -> None:
        """Wait for the last job and close the worker and the handle; the job's error is
        raised unless `quiet` (the command is failing already)."""
        try:
            self.wait()
        except Exception:
            if not quiet:
                raise
        finally:
            if self._pool is not None:
                self._pool.shutdown(wait=True)
            if self._beside is not None:
                self._beside.close()
            self._pool = self._beside = None


def _ingest_files(
    ctx: Context,
    store: Store,
    args: argparse.Namespace,
    options: IngestOptions,
    key: bytes | None,
    digests: _FileDigests,
    warn_new: Callable[[tuple[str, ...]], None],
) -> IngestCounts:
    """Ingest the command's files (then poll its --url): the counts summed."""
    from datetime import UTC, datetime
    from pathlib import Path

    from ingest.files import ingest_file
    from ingest.writing import IngestCounts, write_avl_records

    profile = ctx.profile
    url = getattr(args, "url", None)
    digested = args.kind in ("avl", "fares")
    total = IngestCounts()
    for name in ctx.progress(args.files, f"ingest {args.kind}", total=len(args.files)):
        since = datetime.now(UTC)  # rows this file writes are stamped at or after it
        counts = ingest_file(
            store,
            name,
            args.kind,
            options=options,
            profile=profile,
            mapping=args.mapping,
            key=key,
            vehicle_id=getattr(args, "vehicle", None),
        )
        if digested:
            digests.submit(since)
        _say_counts(ctx, name, counts)
        _say_reasons(ctx, store, name, str(Path(name).resolve()))
        warn_new(counts.notes)
        total = total + counts
    if url:
        from ingest.gtfsrt import poll_vehicle_positions

        since = datetime.now(UTC)
        tz = options.source_tz or profile.general.timezone.value
        opts = options.model_copy(update={"source_tz": tz})

        def report_failure(message: str, wait_s: float) -> None:
            text = gettext(
                "cannot fetch the feed ({url}): {error}; next try in {wait_s} s",
                url=url,
                error=message.split(": ", 1)[-1],
                wait_s=f"{wait_s:g}",
            )
            ctx.err.print(gettext("warning: {text}", text=text), highlight=False, markup=False)

        polls = poll_vehicle_positions(url, args.interval_s, args.polls, on_error=report_failure)
        n_fetched = 0
        for batch in polls:
            n_fetched += 1
            counts = write_avl_records(store, batch, source=url, options=opts)
            _say_counts(ctx, url, counts)
            warn_new(counts.notes)
            total = total + counts
        if n_fetched == 0:  # only a bounded run (--polls) ends; it fetched nothing
            raise InputError(
                f"cannot fetch the feed: all {args.polls} tries failed",
                where=url,
                hint="check the URL and the network (each failure is shown above)",
            )
        digests.submit(since)
    return total


def run_quarantine(args: argparse.Namespace, ctx: Context) -> int:
    from rich.table import Table as RichTable

    if args.limit < 0:
        raise ConfigError("--limit must be 0 or more", where="option --limit")
    with ctx.store(read_only=True) as store:  # a reader: the snapshot while a writer runs
        where, params = ("", [])
        if args.source:
            where, params = ("WHERE source LIKE ?", [f"%{args.source}%"])
        rows = store.query(
            "SELECT source, record_key, target_table, field, reason, raw_record FROM quarantine "
            f"{where} ORDER BY quarantined_at, source, record_key LIMIT {int(args.limit)}",
            params,
        )
        total = store.query(f"SELECT count(*) AS n FROM quarantine {where}", params)["n"][0]
    view = RichTable(title=gettext("quarantine: {n} records", n=total))
    for name in ("source", "record", "table", "field", "reason", "original"):
        view.add_column(gettext(name), overflow="fold")
    for source, key, target, field, reason, raw in rows.iter_rows():
        # reasons are stored in English (grouped and searched by their text): shown translated
        cells = (source, key, target, field, translate(reason), raw)
        view.add_row(*[("" if v is None else str(v))[:120] for v in cells])
    if not ctx.settings.quiet:
        ctx.console.print(view)
    return 0
