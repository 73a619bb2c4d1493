"""Where the analytics' compiled (numba) kernels keep their machine code, and whether it is there.

Imported by the `__init__` of every analytics package with kernels (matching, indices,
crowding) *before* `numba`, so that numba reads the folder when it decorates the kernels. The folder is, first that is set:

1. ``NUMBA_CACHE_DIR`` (numba's own variable, respected as given);
2. ``PONTUAL_CACHE_DIR``/numba (Pontual's cache root, e.g. on a shared build machine);
3. the user's cache folder (platformdirs: ``~/.cache/pontual/numba`` on Linux).

Without it numba writes beside the sources (``__pycache__``), which fails silently in a
read-only install (a site-packages owned by root, a container image) and recompiles on every
run: some 30 s per process. `is_cache_cold` tells whether the kernels loaded so far would
compile rather than load; `announce_if_cold` prints the one line the user sees before that
pause (docs/adr/0001-compiled-kernels-and-spatial-grid.md).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import TextIO

from core.texts import N_, gettext

CACHE_ENV = "PONTUAL_CACHE_DIR"
NUMBA_CACHE_ENV = "NUMBA_CACHE_DIR"
COLD_MESSAGE = N_("compiling the analytics kernels, once: ~30 s")
"""The line said before the first compilation (a catalogue id: printed with `gettext`)."""


def resolve_cache_dir() -> Path:
    """The folder numba caches the kernels in (see the module docstring for the order)."""
    if os.environ.get(NUMBA_CACHE_ENV):
        return Path(os.environ[NUMBA_CACHE_ENV])
    if os.environ.get(CACHE_ENV):
        return Path(os.environ[CACHE_ENV]) / "numba"
    from platformdirs import user_cache_dir

    return Path(user_cache_dir("pontual")) / "numba"


def configure() -> Path:
    """Point numba at the cache folder: the environment (read by numba when first imported,
    inherited by `spawn` workers) and, when numba is already loaded, its live config."""
    folder = resolve_cache_dir()
    os.environ[NUMBA_CACHE_ENV] = str(folder)
    if "numba" in sys.modules:
        from numba.core import config

        # numba's config module sets its attributes from the environment at run time
        setattr(config, "CACHE_DIR", str(folder))  # noqa: B010
    return folder


CACHE_DIR = configure()


def _kernels() -> list[object]:
    """The compiled kernels (numba dispatchers) of the analytics modules imported so far,
    except the ones always inlined into their callers (numba never caches those alone)."""
    from numba.core.registry import CPUDispatcher

    found: dict[int, object] = {}
    for name, module in list(sys.modules.items()):
        if not name.startswith("analytics.") or module is None:
            continue
        for value in vars(module).values():
            if isinstance(value, CPUDispatcher) and value.targetoptions.get("inline") != "always":
                found[id(value)] = value
    return list(found.values())


def is_cache_cold(kernels: Iterable[object] | None = None) -> bool:
    """True when some kernel (default: every one imported so far) has no fresh machine code in
    the cache (never compiled here, or compiled from another version of its source): its first
    call will compile it."""
    for kernel in _kernels() if kernels is None else kernels:
        cache = getattr(kernel, "_cache", None)
        cache_file = getattr(cache, "_cache_file", None)
        if cache_file is None:  # caching off, or numba's internals moved: cannot tell
            return False
        if not cache_file._load_index():
            return True
    return False


def announce_if_cold(stream: TextIO | None = None) -> bool:
    """Print the one-line notice (pt-BR) when the kernels are about to compile; whether it did."""
    if not is_cache_cold():
        return False
    print(gettext(COLD_MESSAGE), file=stream or sys.stderr, flush=True)
    return True
