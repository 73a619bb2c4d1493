"""`pontual init`: create (or migrate) the store and the card-hashing key."""

from __future__ import annotations

import argparse

from core.settings import hash_key
from pontual.context import Context
from pontual.messages import gettext


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("init", help="create or migrate the store and the card-hashing key")
    p.set_defaults(func=run)


def run(args: argparse.Namespace, ctx: Context) -> int:
    hash_key(ctx.settings, create=True)
    with ctx.store() as store:
        ctx.say(
            gettext(
                "store {path} at schema version {version}",
                path=store.path,
                version=store.schema_version,
            )
        )
    return 0
