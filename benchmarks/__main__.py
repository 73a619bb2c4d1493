"""Run every benchmark: each ``benchmarks/bench_*.py`` module's ``main()`` in turn.

Run: ``.venv/bin/python -m benchmarks`` (``make bench``); ``python -m benchmarks gtfs matching``
(``make bench ONLY="gtfs matching"``) runs only those; options after ``--`` go to each one run,
e.g. ``python -m benchmarks year -- --days 31`` (a month of the year benchmark).
"""

from __future__ import annotations

import importlib
import sys
from pathlib import Path


def main() -> int:
    failed = []
    args = sys.argv[1:]
    options = args[args.index("--") + 1 :] if "--" in args else []
    only = set(args[: args.index("--")] if "--" in args else args)
    for path in sorted(Path(__file__).parent.glob("bench_*.py")):
        if only and path.stem.removeprefix("bench_") not in only:
            continue
        name = f"benchmarks.{path.stem}"
        print(f"== {name}", flush=True)
        sys.argv = [name, *options]  # each benchmark parses its own options
        try:
            importlib.import_module(name).main()
        except SystemExit as exc:  # a benchmark's argparse or early exit
            if exc.code not in (0, None):
                failed.append(name)
        except Exception as exc:  # keep going: one broken benchmark should not hide the others
            print(f"{name} failed: {type(exc).__name__}: {exc}", file=sys.stderr)
            failed.append(name)
    if failed:
        print("failed: " + ", ".join(failed), file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
