"""What every page shares: the store path, the cached reads, and the filters kept across pages.

The store path comes from PONTUAL_STORE (set by `pontual dashboard`), the profile from
PONTUAL_PROFILE. Reads go through `load`, cached with `st.cache_data` and keyed on the
snapshot's modification time, so a snapshot the pipeline publishes is picked up on the next
rerun without restarting the app. Every read runs for the session's account: an operadora's on
a connection whose tables are limited to its operator (`dashboard.queries.scope`), cached
apart from every other operator's.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import date
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

import polars as pl
import streamlit as st

from cases.audit import audit
from cases.roles import Account, operator_scope
from core.profile import Profile, load_profile
from core.settings import Settings
from core.store import Store
from core.texts import N_
from core.texts import gettext as _
from dashboard.format import to_period
from dashboard.queries import filters as filter_queries
from dashboard.queries.scope import check_store_access, scope_store
from dashboard.queries.snapshot import ALL, open_source, read_snapshot_mtime

if TYPE_CHECKING:  # the report builders (ReportLab) load only when a report is asked for
    from dashboard import downloads

DIRECTIONS: dict[int | None, str] = {
    None: N_("Both directions"),
    0: N_("Outbound (0)"),
    1: N_("Return (1)"),
}
"""The direction filter's choices (GTFS direction_id) and their labels."""


@dataclass(frozen=True)
class Filters:
    """The planner's selection, the same on every page (kept in the session state)."""

    period: str
    operator_id: str
    lot_id: str
    route_id: str
    direction: int | None
    route_ids: tuple[str, ...] | None
    """Lines of the chosen operator / lot (None: all lines)."""


def settings() -> Settings:
    return Settings.resolve()


def source_path() -> str:
    """What the pages read: the lake when one is given (PONTUAL_LAKE, `pontual --lake PATH
    dashboard`), else the store file (its published snapshot)."""
    current = settings()
    return str(current.lake_path or current.store_path)


def profile() -> Profile:
    return load_profile(settings().profile_id)


@st.cache_resource(show_spinner=False, max_entries=2)
def _snapshot(store_path: str, mtime: float) -> Store:
    """One open read-only connection per published snapshot (opening one costs 20-200 ms;
    the pipeline replaces the file by an atomic rename, so an open one keeps reading the
    snapshot it opened). `mtime` is only part of the key."""
    return open_source(store_path)


def _scoped_account(operator_id: str | None) -> Account:
    """The account whose view a cache entry holds: only the operator scope matters."""
    if operator_id is None:
        return Account("painel", "planejamento")
    return Account("painel", "operadora", operator_id)


@st.cache_data(show_spinner=False, max_entries=512)
def _cached(
    module: str,
    name: str,
    store_path: str,
    mtime: float,
    operator_id: str | None,
    args: tuple[Any, ...],
) -> Any:
    # `mtime` is only part of the key: a new snapshot is a new cache entry. Each read runs on
    # its own cursor of the shared connection: sessions run in threads, and a DuckDB
    # connection is not to be shared across threads, its cursors are. A cursor is its own
    # connection, so an operator's scoping views live and die with it.
    shared = _snapshot(store_path, mtime)
    cursor = shared.con.cursor()
    try:
        reader = getattr(importlib.import_module(module), name)
        store = Store(shared.path, cursor, read_only=True)
        return reader(scope_store(store, _scoped_account(operator_id)), *args)
    finally:
        cursor.close()


@contextmanager
def snapshot_store() -> Iterator[Store]:
    """A cursor of the published snapshot for the session's account (scoped like `load`),
    closed on exit: for reads that are not cached (a case's evidence package)."""
    path = source_path()
    shared = _snapshot(path, read_snapshot_mtime(path))
    cursor = shared.con.cursor()
    try:
        who = account()
        yield scope_store(Store(shared.path, cursor, read_only=True), who)
    finally:
        cursor.close()


def account() -> Account:
    """The session's account (set by `dashboard.app` before any page runs)."""
    from dashboard import auth_ui

    current = auth_ui.current_account()
    if current is None:  # a page script run without the app: nobody has logged in
        st.stop()
    return current


def may_open(page_path: str) -> bool:
    """Whether the session's account has the page of file `page_path` ('pages/annual.py')."""
    from dashboard.auth import pages_for

    return any(path == page_path for path, _t, _u, _i in pages_for(account()))


def load(reader: Callable[..., Any], *args: Any) -> Any:
    """`reader(snapshot, *args)` (a function of `dashboard.queries`), cached until the
    snapshot changes, run on the tables the session's account may read. The cache keys on the
    reader's module and name, not the function, and on the account's operator scope."""
    who = account()
    check_store_access(who)
    path = source_path()
    return _cached(
        reader.__module__,
        reader.__name__,
        path,
        read_snapshot_mtime(path),
        operator_scope(who),
        tuple(args),
    )


@st.cache_data(show_spinner=False, max_entries=64)
def _report_bytes(
    store_path: str,
    mtime: float,
    profile_id: str,
    operator_id: str | None,
    offer: downloads.ReportOffer,
    fmt: str,
) -> bytes:
    from dashboard import downloads

    shared = _snapshot(store_path, mtime)
    cursor = shared.con.cursor()
    try:
        store = scope_store(
            Store(shared.path, cursor, read_only=True), _scoped_account(operator_id)
        )
        from dashboard import auth_ui

        with auth_ui.case_db() as db:
            report = downloads.build_offered_report(store, offer, load_profile(profile_id), db)
    finally:
        cursor.close()
    return downloads.to_report_bytes(report, fmt)


def _audit_download(
    who: Account, target: str, detail: str, action: str = "dossier_download"
) -> None:
    from dashboard import auth_ui

    with auth_ui.case_db() as db:
        audit(db, who.name, action, target, detail)


def report_bytes(offer: downloads.ReportOffer, fmt: str, who: Account) -> bytes:
    """The bytes of an offered report as `fmt` for `who`, built on first use and cached until
    the snapshot changes; the download is audited."""
    check_store_access(who)
    path = source_path()
    mtime = read_snapshot_mtime(path)
    data = _report_bytes(path, mtime, settings().profile_id, operator_scope(who), offer, fmt)
    _audit_download(who, f"{offer.file_stem}.{fmt}", offer.label)
    return data


def report_download(offer: downloads.ReportOffer, fmt: str) -> Callable[[], bytes]:
    """What a download button calls when clicked (outside the page run, so the account is
    taken now): the report's bytes, audited."""
    return partial(report_bytes, offer, fmt, account())


def _file_bytes(path: Path, who: Account) -> bytes:
    data = path.read_bytes()
    _audit_download(who, path.name, "relatório gravado por `pontual report`")
    return data


def file_download(path: str | Path) -> Callable[[], bytes]:
    """What a download button of a report file calls when clicked: its bytes, audited."""
    return partial(_file_bytes, Path(path), account())


def _audit_table(who: Account, period: str, file_name: str) -> None:
    _audit_download(who, file_name, f"tabela do painel, período {period}", "table_download")


def show_table(frame: pl.DataFrame, *, name: str, **kwargs: Any) -> None:
    """A page's table with its "Baixar CSV" button (`dashboard.table_download.show_table`),
    the file named `<name>-<period>.csv` after the period chosen in the filters; each download
    is audited like a report's: who, which file, the period (all taken now: the button's
    callable runs outside the page run)."""
    from dashboard import table_download

    current = st.session_state.get("filters")
    period = current.period if isinstance(current, Filters) else ""
    table_download.show_table(
        frame,
        name=f"{name}-{period}" if period else name,
        on_download=partial(_audit_table, account(), period or "—"),
        **kwargs,
    )


def require_snapshot() -> None:
    """Stop the page with an explanation when no snapshot has been published yet."""
    path = source_path()
    if read_snapshot_mtime(path) == 0.0:
        st.info(
            _(
                "No data published in `{path}`. Run `pontual demo --no-serve` (or the "
                "ingestion and `pontual match`) to create the store and publish the "
                "reading snapshot; the demo writes to its own store, "
                "`data/demo/pontual.duckdb` (open it with `pontual --store "
                "data/demo/pontual.duckdb dashboard`).",
                path=path,
            )
        )
        st.stop()


def timezone() -> str:
    return str(load(filter_queries.read_timezone, profile().general.timezone.value))


def render_filters() -> Filters | None:
    """The sidebar filters (period, operator/lot, line, direction); None without a snapshot."""
    sidebar = st.sidebar
    sidebar.markdown(_("### Filters"))
    if read_snapshot_mtime(source_path()) == 0.0:
        sidebar.caption(_("No data published."))
        return None
    periods: pl.DataFrame = load(filter_queries.read_periods)
    period_ids = periods["period"].to_list() or [date.today().strftime("%Y-%m")]
    period = sidebar.selectbox(_("Period"), period_ids, format_func=to_period, key="f_period")
    operators: pl.DataFrame = load(filter_queries.read_operators)
    op_ids = [ALL, *sorted(set(operators["operator_id"].drop_nulls().to_list()))]
    own = operator_scope(account())
    if own is not None:  # an operadora reads only its own operator (the queries enforce it)
        op_ids = [own]
    operator_id = sidebar.selectbox(
        _("Operator"), op_ids, format_func=lambda v: v or _("All (operators)"), key="f_operator"
    )
    lots = operators.filter(pl.col("lot_id").is_not_null())
    if operator_id != ALL:
        lots = lots.filter(pl.col("operator_id") == operator_id)
    lot_ids = [ALL, *sorted(set(lots["lot_id"].to_list()))]
    if st.session_state.get("f_lot", ALL) not in lot_ids:
        st.session_state["f_lot"] = ALL
    lot_id = sidebar.selectbox(
        _("Lot"), lot_ids, format_func=lambda v: v or _("All (lots)"), key="f_lot"
    )
    route_ids = load(filter_queries.read_route_ids, operator_id, lot_id)
    lines: pl.DataFrame = load(filter_queries.read_lines)
    if route_ids is not None:
        lines = lines.filter(pl.col("route_id").is_in(route_ids))
    labels = dict(zip(lines["route_id"].to_list(), lines["label"].to_list(), strict=True))
    line_ids = [ALL, *labels]
    if st.session_state.get("f_route", ALL) not in line_ids:
        st.session_state["f_route"] = ALL
    route_id = sidebar.selectbox(
        _("Line"), line_ids, format_func=lambda v: labels.get(v, _("All (lines)")), key="f_route"
    )
    direction = sidebar.selectbox(
        _("Direction"), list(DIRECTIONS), format_func=lambda v: _(DIRECTIONS[v]), key="f_direction"
    )
    return Filters(
        period=period,
        operator_id=operator_id,
        lot_id=lot_id,
        route_id=route_id,
        direction=direction,
        route_ids=tuple(route_ids) if route_ids is not None else None,
    )


def filters() -> Filters:
    """The current filters (rendered by the app before the page); stops the page without data."""
    require_snapshot()
    current = st.session_state.get("filters")
    if current is None:
        st.info(_("Choose the filters in the sidebar."))
        st.stop()
    return current


def empty_notice(what: str, command: str) -> None:
    """The info box a page shows when a table it needs is still empty for the selection."""
    st.info(
        _(
            "No {what} data for this selection. Run `{command}` to fill them in.",
            what=what,
            command=command,
        )
    )
