"""Table schemas, declared once and used at every boundary.

A `Table` names its columns with a Polars dtype, the matching DuckDB type, whether nulls are
allowed and what the column means (with its unit). The same declaration creates the store table,
casts frames before they are written, and builds empty frames. Table declarations live in
`core.tables.*` and register themselves in `TABLES`.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

import polars as pl

from core.errors import PontualError

UTC_INSTANT = pl.Datetime("us", "UTC")

# Polars dtype -> DuckDB column type. Instants are always UTC (`*_at` columns).
_DUCKDB_TYPES: dict[str, str] = {
    "String": "VARCHAR",
    "Int8": "TINYINT",
    "Int16": "SMALLINT",
    "Int32": "INTEGER",
    "Int64": "BIGINT",
    "UInt32": "UINTEGER",
    "UInt64": "UBIGINT",
    "Float32": "FLOAT",
    "Float64": "DOUBLE",
    "Boolean": "BOOLEAN",
    "Date": "DATE",
    "Datetime": "TIMESTAMPTZ",
}


def duckdb_type(dtype: pl.DataType) -> str:
    """The DuckDB column type that stores a Polars dtype without loss."""
    name = type(dtype).__name__ if not isinstance(dtype, type) else dtype.__name__
    try:
        return _DUCKDB_TYPES[name]
    except KeyError as exc:  # pragma: no cover - a declaration error, caught by tests
        raise TypeError(f"no DuckDB type declared for Polars dtype {dtype!r}") from exc


@dataclass(frozen=True)
class Column:
    """One column: its name (with unit and role), dtype, nullability and meaning."""

    name: str
    dtype: pl.DataType
    doc: str
    nullable: bool = True


@dataclass(frozen=True)
class Table:
    """A table of the store, or a frame contract between functions.

    `primary_key` columns identify a row: appending a row whose key exists is a no-op, which is
    what makes re-ingesting idempotent. Derived tables carry `pontual_version` and `profile_id`.

    How the key is held: a DuckDB primary-key index (ART) by default; large append-only tables
    with a `key_time_column` skip stored keys with an anti-join instead; and a table declared
    `key_index=False` (every derived table but those declared otherwise: their writers replace a
    whole partition, delete and insert in one transaction) has no index and no skipping: the
    store checks each write against the key (`Store.append`) and raises on a repeated key. The
    ART indexes of the derived tables were a quarter of a month's store (ADR 0111).
    """

    name: str
    doc: str
    columns: tuple[Column, ...]
    primary_key: tuple[str, ...] = ()
    derived: bool = False
    identity: str | None = None
    # Large append-only tables keep their key without a DuckDB index: appends skip stored keys
    # with an anti-join bounded to the batch's range of this time column (an ART primary-key
    # index made bulk inserts 5-8x slower; see benchmarks/bench_ingest_files.py).
    key_time_column: str | None = None
    # None: an index unless the table is derived (see the class docstring)
    key_index: bool | None = None
    _by_name: dict[str, Column] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        cols = list(self.columns)
        if self.derived:
            cols += [
                Column(
                    "pontual_version", pl.String(), "Pontual version that computed the row", False
                ),
                Column(
                    "profile_id",
                    pl.String(),
                    "regulation profile the row was computed under",
                    False,
                ),
            ]
            object.__setattr__(self, "columns", tuple(cols))
        names = [c.name for c in cols]
        if len(set(names)) != len(names):
            raise ValueError(f"table {self.name}: duplicate column names")
        if self.key_time_column is not None and self.key_time_column not in self.primary_key:
            raise ValueError(f"table {self.name}: key_time_column must be part of the key")
        missing = [k for k in self.primary_key if k not in names]
        if missing:
            raise ValueError(f"table {self.name}: primary key columns {missing} not declared")
        object.__setattr__(self, "_by_name", {c.name: c for c in cols})

    @property
    def column_names(self) -> list[str]:
        return [c.name for c in self.columns]

    @property
    def polars_schema(self) -> pl.Schema:
        return pl.Schema({c.name: c.dtype for c in self.columns})

    @property
    def has_key_index(self) -> bool:
        """The key is a DuckDB PRIMARY KEY (an ART index); appends skip stored keys by it."""
        if not self.primary_key or self.key_time_column is not None:
            return False
        return self.key_index if self.key_index is not None else not self.derived

    @property
    def is_key_checked(self) -> bool:
        """The key has no index and no skipping: each write is checked, a repeat raises."""
        return bool(self.primary_key) and self.key_time_column is None and not self.has_key_index

    def column(self, name: str) -> Column:
        return self._by_name[name]

    def empty(self) -> pl.DataFrame:
        """A frame with this table's columns and no rows."""
        return pl.DataFrame(schema=self.polars_schema)

    def conform(self, df: pl.DataFrame, *, fill: dict[str, object] | None = None) -> pl.DataFrame:
        """Return `df` with exactly this table's columns, in order, cast to the declared dtypes.

        Columns missing from `df` are taken from `fill` or filled with nulls when nullable; a
        missing non-nullable column, or a null in one, is a programming error and raises.
        Extra columns are dropped.
        """
        fill = fill or {}
        exprs: list[pl.Expr] = []
        for col in self.columns:
            if col.name == self.identity and col.name not in df.columns:
                continue  # filled by the store
            if col.name in df.columns:
                exprs.append(pl.col(col.name).cast(col.dtype).alias(col.name))
            elif col.name in fill:
                exprs.append(pl.lit(fill[col.name]).cast(col.dtype).alias(col.name))
            elif col.nullable:
                exprs.append(pl.lit(None).cast(col.dtype).alias(col.name))
            else:
                raise PontualError(
                    f"frame for table {self.name} lacks required column {col.name!r}",
                    hint="this is a bug in the job that built the frame",
                )
        out = df.select(exprs)
        required = [c.name for c in self.columns if not c.nullable and c.name in out.columns]
        if required and out.height:
            nulls = out.select(pl.col(required).null_count())
            bad = [name for name in required if nulls[name][0] > 0]
            if bad:
                raise PontualError(
                    f"frame for table {self.name} has nulls in required columns {bad}",
                    hint="this is a bug in the job that built the frame",
                )
        return out

    @property
    def sequence_name(self) -> str:
        return f"seq_{self.name}_{self.identity}"

    @property
    def insert_columns(self) -> list[str]:
        """Columns a writer supplies (the identity column is filled by the store)."""
        return [c.name for c in self.columns if c.name != self.identity]

    def create_sql(self) -> str:
        """CREATE TABLE IF NOT EXISTS for the store (and its identity sequence)."""
        defs = []
        for c in self.columns:
            default = f" DEFAULT nextval('{self.sequence_name}')" if c.name == self.identity else ""
            null = "" if c.nullable else " NOT NULL"
            defs.append(f'"{c.name}" {duckdb_type(c.dtype)}{default}{null}')
        if self.has_key_index:
            defs.append("PRIMARY KEY (" + ", ".join(f'"{k}"' for k in self.primary_key) + ")")
        seq = f"CREATE SEQUENCE IF NOT EXISTS {self.sequence_name};\n" if self.identity else ""
        return seq + f'CREATE TABLE IF NOT EXISTS "{self.name}" (\n  ' + ",\n  ".join(defs) + "\n)"


TABLES: dict[str, Table] = {}


def register(*tables: Table) -> None:
    """Add table declarations to the registry (each name once)."""
    for table in tables:
        if table.name in TABLES and TABLES[table.name] is not table:
            raise ValueError(f"table {table.name} declared twice")
        TABLES[table.name] = table


def table(name: str) -> Table:
    """The declaration of a registered table."""
    import core.tables  # noqa: F401  (registers every declaration)

    return TABLES[name]


def cols(*specs: Sequence[object]) -> tuple[Column, ...]:
    """Shorthand: ``cols(("name", pl.String(), "doc"), ("id", pl.Int64(), "doc", False))``."""
    out = []
    for spec in specs:
        name, dtype, doc, *rest = spec
        out.append(Column(str(name), dtype, str(doc), bool(rest[0]) if rest else True))  # type: ignore[arg-type]
    return tuple(out)


def names(columns: Iterable[Column]) -> list[str]:
    return [c.name for c in columns]
