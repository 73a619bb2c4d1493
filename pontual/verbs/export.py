"""`pontual export tides|parquet`: the store in open formats; `pontual lake export` is the
same as `export parquet`.

pontual export tides --from 2026-03-02 --to 2026-03-08 --out tides/
pontual export tides --from 2026-03-02 --to 2026-03-08 --out tides/ --schemas SPEC_DIR
pontual export parquet --lake lake/ [--from D --to D]
pontual export gtfs-rt-archive --from 2026-03-02 --to 2026-03-02 --out positions.zip
pontual lake export --lake lake/
pontual lake archive --before D --lake lake/   (and `lake prune`: pontual.verbs.archive)

Heavy modules are imported when the verb runs (the CLI starts without them).
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from pontual.messages import gettext
from pontual.verbs.archive import register_lake_actions
from pontual.verbs.arguments import service_date

if TYPE_CHECKING:
    from pontual.context import Context


def _add_parquet(p: argparse.ArgumentParser) -> None:
    p.add_argument("--lake", required=True, help="folder of the lake (created if absent)")
    p.add_argument("--from", dest="start", type=service_date, help="first service day YYYY-MM-DD")
    p.add_argument("--to", dest="end", type=service_date, help="last service day YYYY-MM-DD")
    p.set_defaults(func=run_parquet)


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "export",
        help="export the store: TIDES tables, or the partitioned Parquet lake",
        description="TIDES (tides-transit.org) CSV tables with a data-package descriptor, or "
        "the store's tables as Hive-partitioned Parquet (zstd) that DuckDB and Spark read.",
    )
    kinds = p.add_subparsers(dest="export", metavar="FORMAT")
    kinds.required = True
    tides = kinds.add_parser("tides", help="TIDES tables (CSV) and datapackage.json")
    tides.add_argument("--from", dest="start", type=service_date, required=True)
    tides.add_argument("--to", dest="end", type=service_date, required=True)
    tides.add_argument("--out", required=True, help="output folder")
    tides.add_argument(
        "--schemas",
        help="folder of the TIDES table schemas: copy them beside the data and validate",
    )
    tides.set_defaults(func=run_tides)
    _add_parquet(kinds.add_parser("parquet", help="the lake: Hive-partitioned Parquet"))
    archive = kinds.add_parser(
        "gtfs-rt-archive",
        help="the matched days as GTFS-RT VehiclePositions, one FeedMessage per minute (zip)",
    )
    archive.add_argument("--from", dest="start", type=service_date, required=True)
    archive.add_argument("--to", dest="end", type=service_date, required=True)
    archive.add_argument("--out", required=True, help="the zip file to write")
    archive.set_defaults(func=run_gtfs_rt_archive)
    lake = sub.add_parser("lake", help="the partitioned Parquet lake (same as export parquet)")
    lake_verbs = lake.add_subparsers(dest="lake", metavar="ACTION")
    lake_verbs.required = True
    _add_parquet(lake_verbs.add_parser("export", help="write the store's tables to the lake"))
    register_lake_actions(lake_verbs)


def run_tides(args: argparse.Namespace, ctx: Context) -> int:
    from pathlib import Path

    from core.errors import ConfigError, InputError
    from exports.tides import build_tides_tables, write_tides_package
    from exports.validate import validate_tides_package

    if args.end < args.start:
        raise ConfigError("--to is before --from", where="export tides")
    schemas = Path(args.schemas) if args.schemas else None
    if schemas is not None and not schemas.is_dir():
        raise ConfigError("schema folder not found", where=str(schemas))
    tz = ctx.profile.general.timezone.value
    with ctx.store(read_only=True) as store:
        tables = build_tides_tables(store, args.start, args.end, tz)
    target = write_tides_package(tables, args.out, schemas)
    for name, df in tables.items():
        ctx.say(gettext("{name}: {n} rows", name=name, n=df.height))
    if schemas is not None:
        errors = {k: v for k, v in validate_tides_package(target.parent, schemas).items() if v}
        if errors:
            first = next(iter(errors.items()))
            raise InputError(
                f"the TIDES export does not validate: {first[0]}: {first[1][0]}",
                where=str(target.parent),
            )
        ctx.say(gettext("valid against the TIDES schemas"))
    ctx.say(gettext("data package: {path}", path=target))
    return 0


def run_parquet(args: argparse.Namespace, ctx: Context) -> int:
    from core.errors import ConfigError
    from core.lake import export_lake

    if (args.start is None) != (args.end is None):
        raise ConfigError("give both --from and --to, or neither", where="export parquet")
    days = (args.start, args.end) if args.start is not None else None
    tz = ctx.profile.general.timezone.value
    with ctx.store(read_only=True) as store:
        written = export_lake(store, args.lake, tz, days)
    total = sum(written.values())
    ctx.say(
        gettext(
            "{n} partitions written in {lake} ({n_tables} tables)",
            n=total,
            lake=args.lake,
            n_tables=len(written),
        )
    )
    return 0


def run_gtfs_rt_archive(args: argparse.Namespace, ctx: Context) -> int:
    from core.errors import ConfigError
    from exports.gtfs_rt_archive import read_archive_positions, write_gtfs_rt_archive

    if args.end < args.start:
        raise ConfigError("--to is before --from", where="export gtfs-rt-archive")
    tz = ctx.profile.general.timezone.value
    with ctx.store(read_only=True) as store:
        positions = read_archive_positions(store, args.start, args.end, tz)
    done = write_gtfs_rt_archive(positions, args.out, start=args.start, end=args.end, timezone=tz)
    ctx.say(
        gettext(
            "{n_messages} GTFS-RT messages (one a minute), {n_entities} positions: {path}",
            n_messages=done["n_messages"],
            n_entities=done["n_entities"],
            path=args.out,
        )
    )
    return 0
