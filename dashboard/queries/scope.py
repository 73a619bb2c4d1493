"""An operator account's reads, limited to its operator in the query layer (issue #23).

`scope_store` shadows, on one connection to the snapshot, every table of the store by a
temporary view that keeps only the rows of the account's operator, so every reader of
`dashboard.queries` (and every report builder) run on that connection sees only those rows,
whatever page, filter or URL asked. DuckDB resolves an unqualified or ``main.`` table name to
the temporary view first; only the views themselves name the snapshot's catalogue.

Which rows are the operator's, by the columns a table has (`cases.roles.scope_sql` writes the
operator condition):
- an ``operator_id`` column: that column (where it is null, the row's vehicle, if any);
- a ``vehicle_id`` column: the operator's vehicles (fleet register); rows without a vehicle
  (a trip never run) belong to the operator's lines;
- ``scope``/``scope_id`` (indicators, grades): the operator, its lots and its lines;
- a ``route_id`` column (crowding summaries, headways, the planned trips of a day): its lines;
- the published timetable (``gtfs_*``, ``feed_versions``) and the schema version: every row
  (the GTFS feed is public);
- anything else (quarantine, ingest runs, key fingerprints, prediction accuracy, a table added
  later): no row. A new table is closed to operators until someone decides otherwise.
An operator's lines: the lines of its GTFS agency and the lines its vehicles ran (the same rule
as the sidebar, `dashboard.queries.filters.read_route_ids`).
"""

from __future__ import annotations

from cases.roles import (
    READ_DOSSIER,
    READ_INDICES,
    Account,
    authorize,
    may,
    operator_scope,
    scope_sql,
)
from core.store import Store

PUBLIC_PREFIXES = ("gtfs_",)
PUBLIC_TABLES = frozenset({"feed_versions", "schema_version"})


def read_table_columns(store: Store) -> dict[str, list[str]]:
    """Every base table of the snapshot and its columns."""
    rows = store.query(
        "SELECT table_name, column_name FROM duckdb_columns() "
        "WHERE schema_name = 'main' AND database_name = current_database() "
        "AND NOT internal ORDER BY table_name, column_index"
    )
    tables: dict[str, list[str]] = {}
    for table, column in rows.iter_rows():
        tables.setdefault(table, []).append(column)
    return tables


def check_store_access(account: Account) -> None:
    """Refuse (`AccessDenied`) an account whose role reads nothing of the analytic store
    (public: the transparency page reads its own published aggregates)."""
    if not (may(account, READ_INDICES) or may(account, READ_DOSSIER)):
        authorize(account, READ_INDICES)


def build_scope_views(
    catalog: str, tables: dict[str, list[str]], account: Account
) -> list[tuple[str, list[str]]]:
    """The CREATE TEMP VIEW statements (and parameters) that limit `tables` to `account`'s
    operator; none for an account that reads every operator. `catalog` is the snapshot's
    catalogue name, so a view reads the table it shadows, not itself."""
    check_store_access(account)
    if operator_scope(account) is None:
        return []
    where_op, params = scope_sql(account, READ_INDICES, ["operator_id"])
    op = params[0]

    def base(name: str) -> str:
        return f'"{catalog}".main."{name}"'

    vehicles = f"(SELECT vehicle_id FROM {base('vehicles')} WHERE {where_op})"
    routes = (
        f"(SELECT route_id FROM {base('gtfs_routes')} WHERE agency_id = ? UNION "
        f"SELECT o.route_id FROM {base('trip_outcomes')} o "
        f"WHERE o.vehicle_id IN {vehicles})"
    )
    lots = f"(SELECT lot_id FROM {base('vehicles')} WHERE {where_op} AND lot_id IS NOT NULL)"
    statements = []
    for name, columns in tables.items():
        cond: str
        args: list[str]
        if name.startswith(PUBLIC_PREFIXES) or name in PUBLIC_TABLES:
            continue
        if "operator_id" in columns and "vehicle_id" in columns:
            # a row whose source did not name the operator (e.g. a ping file without it)
            # is the operator's when its vehicle is
            cond = f"{where_op} OR (operator_id IS NULL AND vehicle_id IN {vehicles})"
            args = [op, op]
        elif "operator_id" in columns:
            cond, args = where_op, [op]
        elif "vehicle_id" in columns and "route_id" in columns:
            cond = f"vehicle_id IN {vehicles} OR (vehicle_id IS NULL AND route_id IN {routes})"
            args = [op, op, op]
        elif "vehicle_id" in columns:
            cond, args = f"vehicle_id IN {vehicles}", [op]
        elif "scope" in columns and "scope_id" in columns:
            cond = (
                "(scope = 'operator' AND scope_id = ?) OR (scope = 'lot' AND scope_id IN "
                f"{lots}) OR (scope = 'line' AND scope_id IN {routes})"
            )
            args = [op, op, op, op]
        elif "route_id" in columns:
            cond, args = f"route_id IN {routes}", [op, op]
        else:
            cond, args = "false", []
        statements.append(
            (
                f'CREATE OR REPLACE TEMP VIEW "{name}" AS SELECT * FROM {base(name)} WHERE {cond}',
                args,
            )
        )
    return statements


def scope_store(store: Store, account: Account) -> Store:
    """`store` (one cursor of the snapshot, not shared) with its tables limited to what
    `account` may read (see the module's rules). Refused (`AccessDenied`) for a role that reads
    no analytic data (public)."""
    if operator_scope(account) is None:
        check_store_access(account)
        return store
    catalog = str(store.query("SELECT current_database() AS c")["c"][0])
    statements = []
    for sql, params in build_scope_views(catalog, read_table_columns(store), account):
        # DuckDB does not take parameters in a view's definition: inline them as literals.
        parts = sql.split("?")
        literals = ["'" + value.replace("'", "''") + "'" for value in params]
        statements.append(
            parts[0] + "".join(v + p for v, p in zip(literals, parts[1:], strict=True))
        )
    if statements:  # one round trip for every view (about 40)
        store.con.execute(";\n".join(statements))
    return store


def read_scope_vehicle_ids(store: Store) -> list[str] | None:
    """The vehicles the connection may see, when it is limited to one operator (None: every
    vehicle). For data that does not come from the store (the live feed)."""
    scoped = store.query(
        "SELECT count(*) AS n FROM duckdb_views() WHERE temporary AND view_name = 'vehicles'"
    )["n"][0]
    if not scoped:
        return None
    return store.query("SELECT vehicle_id FROM vehicles ORDER BY 1")["vehicle_id"].to_list()
