"""One module per verb (or verb group). Each has ``register(subparsers)``; the parser it adds
sets ``func=run`` where ``run(args, ctx) -> int``. Add a module here when its capability lands:
its name to `VERB_MODULE_NAMES`, and each verb it registers to `VERBS`.

Lazy start-up: `pontual --help` imports every verb module to build the parser, so a verb
module's top level imports only the standard library, `argparse` helpers
(`pontual.verbs.arguments`), `pontual.context` and `core.errors`/`core.settings` (all light).
Everything else -- polars, duckdb, rich, pydantic profiles, the store, `analytics`, `ingest`,
`dashboard`, `sample_data`, `gtfs` -- is imported *inside the function that uses it*, at the
top of its body; names needed only in annotations are imported under ``TYPE_CHECKING``.
`register()` is argparse only: a default that needs a heavy module is resolved in `run`.
A command that names its verb (`pontual ingest incidents F`) imports and registers that verb's
module only (`pontual.cli`, ADR 0114): this package imports none of them itself.
tests/pontual/test_startup.py guards this (no heavy module after `--help` or `VERB --help`);
benchmarks/bench_startup.py measures it.
"""

from __future__ import annotations

from importlib import import_module
from types import ModuleType

# In pipeline order, as `pontual --help` lists them.
VERB_MODULE_NAMES = (
    "init",
    "profiles",
    "simulate",
    "gtfs",
    "ingest",
    "listen",
    "match",
    "crowding",
    "indices",
    "report",
    "export",
    "cases",
    "users",
    "verify",
    "serve",
    "replay",
    "dashboard",
    "demo",
    "warm",
)

# Each verb of the command line -> the module that registers it.
VERBS = {name: name for name in VERB_MODULE_NAMES} | {
    "quarantine": "ingest",
    "lake": "export",
    "audit": "users",
}


def verb_module(name: str) -> ModuleType:
    """The module `pontual.verbs.NAME` (one of `VERB_MODULE_NAMES`), imported."""
    return import_module(f"{__name__}.{name}")


def verb_modules() -> tuple[ModuleType, ...]:
    """Every verb module, in pipeline order (what `pontual --help` lists)."""
    return tuple(verb_module(name) for name in VERB_MODULE_NAMES)
