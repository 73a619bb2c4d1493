"""One module per verb (or verb group). Each has ``register(subparsers)``; the parser it adds
sets ``func=run`` where ``run(args, ctx) -> int``. Add a module here when its capability lands."""

from pontual.verbs import (
    crowding,
    dashboard,
    demo,
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
    serve,
    replay,
    dashboard,
    demo,
)
