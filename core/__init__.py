"""The ground of Pontual: settings, the error hierarchy, the store, the regulation profiles and
the pt-BR formatting of every user-facing number and date (`core.pt_br`, Babel).

`core` imports none of the other Pontual packages.
"""

from functools import cache


@cache
def _installed_version() -> str:
    # importlib.metadata costs tens of milliseconds: looked up on first use only, so that
    # `pontual --help` starts without it (docs/adr: lazy start-up)
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("pontual")
    except PackageNotFoundError:  # running from a source tree that was never installed
        return "0.0.0+unknown"


def __getattr__(name: str) -> str:
    if name == "__version__":
        return _installed_version()
    raise AttributeError(f"module 'core' has no attribute {name!r}")
