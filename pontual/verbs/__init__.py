"""One module per verb (or verb group). Each has ``register(subparsers)``; the parser it adds
sets ``func=run`` where ``run(args, ctx) -> int``. Add a module here when its capability lands."""

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
)
