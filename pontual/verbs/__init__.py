"""One module per verb (or verb group). Each has ``register(subparsers)``; the parser it adds
sets ``func=run`` where ``run(args, ctx) -> int``. Add a module here when its capability lands.

Lazy start-up: `pontual --help` imports every verb module to build the parser, so a verb
module's top level imports only the standard library, `argparse` helpers
(`pontual.verbs.arguments`), `pontual.context` and `core.errors`/`core.settings` (all light).
Everything else -- polars, duckdb, rich, pydantic profiles, the store, `analytics`, `ingest`,
`dashboard`, `sample_data`, `gtfs` -- is imported *inside the function that uses it*, at the
top of its body; names needed only in annotations are imported under ``TYPE_CHECKING``.
`register()` is argparse only: a default that needs a heavy module is resolved in `run`.
tests/pontual/test_startup.py guards this (no heavy module after `--help` or `VERB --help`);
benchmarks/bench_startup.py measures it.
"""

from pontual.verbs import (
    cases,
    crowding,
    dashboard,
    demo,
    export,
    gtfs,
    indices,
    ingest,
    init,
    listen,
    match,
    profiles,
    replay,
    report,
    serve,
    simulate,
    users,
    verify,
    warm,
)

# In pipeline order, as `pontual --help` lists them.
VERB_MODULES = (
    init,
    profiles,
    simulate,
    gtfs,
    ingest,
    listen,
    match,
    crowding,
    indices,
    report,
    export,
    cases,
    users,
    verify,
    serve,
    replay,
    dashboard,
    demo,
    warm,
)
