"""The case database: accounts, audit log, cases, their events and evidence.

Cases are written by several people at once (fiscais, the authority, operators) while the
pipeline writes the analytic DuckDB store, so they live in a transactional database with
concurrent writers (ADR 0008, docs/adr/0008-case-database.md): SQLite in WAL mode beside the store by default,
PostgreSQL for a city's deployment (``PONTUAL_CASES_DB=postgresql+psycopg://...``). The analytic
store references cases by `cases.case_id` and `cases.infraction_key`.

Every write goes through `CaseDB.begin()`: one transaction, which on SQLite takes the write lock
at once (``BEGIN IMMEDIATE``, so two writers queue instead of failing on a lock upgrade) and
on PostgreSQL is READ COMMITTED with row locks (``SELECT ... FOR UPDATE``) where a row is changed.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection, Engine

from core import __version__
from core.errors import StoreError

# SQLite waits this long for another writer's lock before giving up (seconds).
SQLITE_BUSY_TIMEOUT_S = 30
_READ_ONLY = "pontual_read_only"

metadata = sa.MetaData()

SCHEMA_VERSION = sa.Table(
    "case_schema_version",
    metadata,
    sa.Column("version", sa.Integer, primary_key=True, comment="migration number"),
    sa.Column("description", sa.String(200), nullable=False),
    sa.Column("applied_at", sa.DateTime(timezone=True), nullable=False, comment="UTC"),
    sa.Column("pontual_version", sa.String(50), nullable=False),
)

ACCOUNTS = sa.Table(
    "accounts",
    metadata,
    sa.Column("name", sa.String(100), primary_key=True, comment="login name"),
    sa.Column("role", sa.String(20), nullable=False, comment="one of cases.roles.ROLES"),
    sa.Column("operator_id", sa.String(100), comment="operator of an operadora account"),
    sa.Column("password_hash", sa.String(200), nullable=False, comment="argon2id hash"),
    sa.Column("is_active", sa.Boolean, nullable=False, default=True),
    sa.Column("created_at", sa.DateTime(timezone=True), nullable=False, comment="UTC"),
)

AUDIT_LOG = sa.Table(
    "audit_log",
    metadata,
    sa.Column("audit_id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("at", sa.DateTime(timezone=True), nullable=False, comment="when (UTC)"),
    sa.Column("actor", sa.String(100), nullable=False, comment="account name, or 'sistema'"),
    sa.Column("action", sa.String(50), nullable=False, comment="cases.audit.AUDIT_ACTIONS"),
    sa.Column("target", sa.String(200), comment="what it acted on: case id, file, account"),
    sa.Column("detail", sa.Text, comment="outcome and parameters, in words"),
)

CASES = sa.Table(
    "cases",
    metadata,
    sa.Column("case_id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("infraction_key", sa.String(300), nullable=False, unique=True),
    sa.Column("state", sa.String(20), nullable=False, comment="cases.workflow.STATES"),
    sa.Column("row_version", sa.Integer, nullable=False, default=1, comment="optimistic lock"),
    sa.Column("operator_id", sa.String(100), nullable=False),
    sa.Column("group", sa.String(5), nullable=False, comment="Anexo I group"),
    sa.Column("item", sa.String(10), nullable=False, comment="Anexo I item"),
    sa.Column("description", sa.Text, nullable=False),
    sa.Column("article", sa.Text, nullable=False, comment="provision violated (art. 68 §1-IV)"),
    sa.Column("route_id", sa.String(100)),
    sa.Column("vehicle_id", sa.String(100)),
    sa.Column("occurred_on", sa.Date, nullable=False, comment="service day of the fact"),
    sa.Column("fact", sa.Text, nullable=False),
    sa.Column("suggested_urm", sa.Float),
    # the auto de infração (art. 68 §1), filled at lavratura
    sa.Column("auto_number", sa.String(50), unique=True),
    sa.Column("place_stop_id", sa.String(100), comment="place as a stop (art. 68 §1-III)"),
    sa.Column("place_lat", sa.Float, comment="place as WGS 84 coordinates"),
    sa.Column("place_lon", sa.Float),
    sa.Column("vehicle_plate", sa.String(20), comment="from the fleet register (§1-II)"),
    sa.Column("fact_at", sa.DateTime(timezone=True), comment="date and time (§1-III), UTC"),
    sa.Column("lavrada_by", sa.String(100), comment="the fiscal who signed (§1-V)"),
    sa.Column("lavrada_on", sa.Date),
    sa.Column("notified_on", sa.Date, comment="the operator's ciência (art. 69)"),
    sa.Column("defence_on", sa.Date),
    sa.Column("judged_on", sa.Date),
    sa.Column("verdict", sa.String(20), comment="procedente / improcedente"),
    sa.Column("sanctions", sa.String(200), comment="applied sanctions by name, comma-separated"),
    sa.Column("sanction_authority", sa.Text, comment="competent authority (art. 64)"),
    sa.Column("urm", sa.Float, comment="fine applied, in URM (doubled on a judged repeat)"),
    sa.Column("is_repeat", sa.Boolean, comment="a procedente case of the same item in 6 months"),
    sa.Column("appeal_on", sa.Date),
    sa.Column("appeal_outcome", sa.String(20), comment="provido / improvido"),
    sa.Column("closed_on", sa.Date),
    sa.Column("discard_reason", sa.Text),
    sa.Column("is_legal_hold", sa.Boolean, nullable=False, default=False),
    sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
    sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
)

CASE_EVENTS = sa.Table(
    "case_events",
    metadata,
    sa.Column("event_id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("case_id", sa.Integer, sa.ForeignKey("cases.case_id"), nullable=False),
    sa.Column("from_state", sa.String(20), nullable=False),
    sa.Column("to_state", sa.String(20), nullable=False),
    sa.Column("actor", sa.String(100), nullable=False, comment="account that did it"),
    sa.Column("role", sa.String(20), nullable=False, comment="its role at the time"),
    sa.Column("at", sa.DateTime(timezone=True), nullable=False, comment="recorded at (UTC)"),
    sa.Column("on_date", sa.Date, nullable=False, comment="legal date of the act"),
    sa.Column("reason", sa.Text, nullable=False),
    sa.Column("attachments", sa.Text, comment="JSON list of {name, sha256}"),
)

CASE_EVIDENCE = sa.Table(
    "case_evidence",
    metadata,
    sa.Column("case_id", sa.Integer, sa.ForeignKey("cases.case_id"), primary_key=True),
    sa.Column("sha256", sa.String(64), nullable=False, comment="SHA-256 of `package`"),
    sa.Column("package", sa.Text, nullable=False, comment="canonical JSON evidence package"),
    sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
)


REPORT_DELIVERIES = sa.Table(
    "report_deliveries",
    metadata,
    sa.Column("kind", sa.String(16), primary_key=True, comment="'monthly' or 'semester'"),
    sa.Column("period", sa.String(16), primary_key=True, comment="'2026-03' or '2026-S1'"),
    sa.Column("delivered_on", sa.Date, nullable=False, comment="day SEGIMU received it"),
    sa.Column("recorded_by", sa.String(64), nullable=False),
    sa.Column("recorded_at", sa.DateTime(timezone=True), nullable=False),
    sa.Column("input_hash", sa.String(64), comment="input hash of the report delivered"),
)


@dataclass(frozen=True)
class CaseMigration:
    version: int
    description: str
    tables: tuple[str, ...] = ()
    extra: Callable[[Connection], None] | None = field(default=None, compare=False)


# Shipped migrations are frozen records: a later column gets its own migration (ALTER TABLE).
MIGRATIONS: tuple[CaseMigration, ...] = (
    CaseMigration(
        1,
        "accounts, audit log, cases, case events and evidence",
        tables=("accounts", "audit_log", "cases", "case_events", "case_evidence"),
    ),
    CaseMigration(
        2,
        "report deliveries (BG art. 62-VII, Anexo I XLII)",
        tables=("report_deliveries",),
    ),
)


def now_utc() -> datetime:
    return datetime.now(UTC)


def _sqlite_listeners(engine: Engine) -> None:
    """WAL (readers never block the writer), a busy timeout, and transactions that take the
    write lock at BEGIN: pysqlite's own deferred BEGIN is replaced by ours."""

    @sa.event.listens_for(engine, "connect")
    def _connect(dbapi_con: Any, _record: Any) -> None:
        dbapi_con.isolation_level = None  # we emit BEGIN ourselves
        cur = dbapi_con.cursor()
        cur.execute("PRAGMA journal_mode=WAL")
        cur.execute(f"PRAGMA busy_timeout={SQLITE_BUSY_TIMEOUT_S * 1000}")
        cur.execute("PRAGMA foreign_keys=ON")
        cur.close()

    @sa.event.listens_for(engine, "begin")
    def _begin(conn: Connection) -> None:
        # readers take no lock (WAL gives them a snapshot); writers take it at BEGIN
        conn.exec_driver_sql("BEGIN" if conn.info.get(_READ_ONLY) else "BEGIN IMMEDIATE")


class CaseDB:
    """A handle on the case database. Open with `CaseDB.open(url)`; migrates on open."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self.is_sqlite = engine.dialect.name == "sqlite"

    @classmethod
    def open(cls, url: str, *, migrate: bool = True) -> CaseDB:
        if url.startswith("sqlite:///") and url != "sqlite:///:memory:":
            Path(url.removeprefix("sqlite:///")).parent.mkdir(parents=True, exist_ok=True)
        try:
            engine = sa.create_engine(url, future=True, pool_pre_ping=True)
        except (sa.exc.ArgumentError, ImportError) as exc:
            raise StoreError(
                f"cannot use the case database URL: {exc}",
                where="PONTUAL_CASES_DB",
                hint="e.g. sqlite:///data/pontual.cases.sqlite or postgresql+psycopg://user@host/db",
            ) from exc
        if engine.dialect.name == "sqlite":
            _sqlite_listeners(engine)
        db = cls(engine)
        if migrate:
            db.migrate()
        return db

    def close(self) -> None:
        self.engine.dispose()

    def __enter__(self) -> CaseDB:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @contextmanager
    def begin(self) -> Iterator[Connection]:
        """One write transaction (committed on exit, rolled back on an exception)."""
        try:
            with self.engine.connect() as conn:
                conn.info[_READ_ONLY] = False
                with conn.begin():
                    yield conn
        except sa.exc.OperationalError as exc:
            raise StoreError(
                f"the case database refused the write: {exc.orig}",
                where=self.engine.url.render_as_string(hide_password=True),
                hint="try again; if it persists, check that the database is reachable",
            ) from exc

    @contextmanager
    def read(self) -> Iterator[Connection]:
        with self.engine.connect() as conn:
            conn.info[_READ_ONLY] = True
            yield conn

    def schema_version(self) -> int:
        with self.read() as conn:
            if not sa.inspect(conn).has_table(SCHEMA_VERSION.name):
                return 0
            got = conn.execute(sa.select(sa.func.max(SCHEMA_VERSION.c.version))).scalar()
            return int(got or 0)

    def migrate(self) -> int:
        """Apply the migrations not yet applied, each in its own transaction; the version."""
        try:
            current = self.schema_version()
        except sa.exc.OperationalError as exc:
            raise StoreError(
                f"cannot open the case database: {exc.orig}",
                where=self.engine.url.render_as_string(hide_password=True),
                hint="check PONTUAL_CASES_DB and that the server is running",
            ) from exc
        latest = MIGRATIONS[-1].version
        if current > latest:
            raise StoreError(
                f"the case database is at schema version {current}, newer than this Pontual "
                f"({latest})",
                where=self.engine.url.render_as_string(hide_password=True),
                hint="upgrade Pontual",
            )
        for migration in MIGRATIONS:
            if migration.version <= current:
                continue
            with self.begin() as conn:
                SCHEMA_VERSION.create(conn, checkfirst=True)
                if conn.dialect.name == "postgresql":  # one migrator at a time
                    conn.exec_driver_sql("LOCK TABLE case_schema_version IN EXCLUSIVE MODE")
                done = conn.execute(
                    sa.select(SCHEMA_VERSION.c.version).where(
                        SCHEMA_VERSION.c.version == migration.version
                    )
                ).first()
                if done is not None:  # another process applied it meanwhile
                    continue
                for name in migration.tables:
                    metadata.tables[name].create(conn, checkfirst=True)
                if migration.extra is not None:
                    migration.extra(conn)
                conn.execute(
                    SCHEMA_VERSION.insert().values(
                        version=migration.version,
                        description=migration.description,
                        applied_at=now_utc(),
                        pontual_version=__version__,
                    )
                )
        return latest
