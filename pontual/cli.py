"""The `pontual` command line.

Global options go before the verb: ``pontual --store x.duckdb gtfs load feed.zip``.
User-facing failures (`core.errors.PontualError`) print ``erro: <what>``, ``onde: <where>`` and
``dica: <hint>`` on stderr (English with PONTUAL_LANG=en) and exit 2, without a traceback unless
--debug; any other exception is an internal error and exits 1. The error's texts are English
ids made below the command line, translated here by `pontual.messages` (docs/adr/0075).
"""

from __future__ import annotations

import argparse
import gc
import os
import sys
from collections.abc import Sequence
from types import ModuleType

from core.errors import PontualError
from core.settings import Settings
from pontual.context import Context
from pontual.messages import gettext, translate, translate_where
from pontual.parser import CatalogueParser
from pontual.verbs import VERBS, verb_module, verb_modules

EXIT_USER_ERROR = 2
EXIT_INTERNAL_ERROR = 1


class _VersionAction(argparse.Action):
    """`--version`, reading the installed version only when asked (it costs start-up time)."""

    def __init__(self, option_strings: Sequence[str], dest: str, **kwargs: object) -> None:
        super().__init__(option_strings, dest, nargs=0, help="show the version and exit")

    def __call__(self, parser: argparse.ArgumentParser, *_: object) -> None:
        from core import __version__

        sys.stdout.write(f"pontual {__version__}\n")
        parser.exit()


def build_parser(modules: Sequence[ModuleType] | None = None) -> argparse.ArgumentParser:
    """The command line's parser with the verbs of `modules` (default: every verb)."""
    parser = _global_parser()
    sub = parser.add_subparsers(dest="verb", metavar="VERB")
    sub.required = True
    for module in verb_modules() if modules is None else modules:
        module.register(sub)
    return parser


def _global_parser() -> argparse.ArgumentParser:
    """The parser of the options that go before the verb, without the verbs."""
    parser = CatalogueParser(
        prog="pontual",
        description="Pontual: how well a city's buses keep their promises (ICV, IPK, lotação, "
        "grades) from GTFS, AVL and ticketing data.",
    )
    parser.add_argument("--version", action=_VersionAction)
    parser.add_argument(
        "--store", help="DuckDB store file (env PONTUAL_STORE; default data/pontual.duckdb)"
    )
    parser.add_argument(
        "--profile", help="regulation profile id or .toml path (env PONTUAL_PROFILE)"
    )
    parser.add_argument(
        "--lake",
        dest="global_lake",  # not `lake`: verbs have their own --lake (export parquet, match)
        help="read a Parquet lake (pontual export parquet) instead of the store file "
        "(env PONTUAL_LAKE); verbs that write the store refuse it",
    )
    parser.add_argument("--quiet", action="store_true", help="print only errors")
    parser.add_argument("--debug", action="store_true", help="show tracebacks")
    return parser


def named_verb(argv: Sequence[str]) -> str | None:
    """The verb `argv` names, told apart without the verbs' parsers: the first word that is
    neither a global option nor a global option's value (argparse's rules: `--store=X` or
    `--store X`, an unambiguous prefix of a long option).

    None when that is in any doubt -- no verb, an unknown word, an option the global parser
    does not know or cannot tell, `--` -- or when a help option comes first (the help lists
    every verb): the caller then builds the parser of every verb, which gives the error or
    the help. With a verb, the parser of that verb alone parses `argv` as the whole one does
    (its verbs' parsers are independent; tests/pontual/test_startup.py checks it)."""
    actions = _global_parser()._option_string_actions
    words = iter(argv)
    for word in words:
        if not word.startswith("-"):
            return word if word in VERBS else None
        name, equals, _ = word.partition("=")
        matches = {a for o, a in actions.items() if o == name} or {
            a for o, a in actions.items() if o.startswith("--") and o.startswith(name)
        }
        if word == "--" or len(matches) != 1:
            return None
        (action,) = matches
        if isinstance(action, argparse._HelpAction) or (equals and action.nargs == 0):
            return None
        if action.nargs != 0 and not equals:
            next(words, None)  # the option's value
    return None


def format_error(exc: PontualError) -> list[str]:
    """The lines a user error prints: what went wrong, where, and the hint, in the chosen
    language (texts no catalogue template matches are shown as they are)."""
    lines = [gettext("error: {text}", text=translate(exc.what))]
    if exc.where:
        lines.append(gettext("where: {text}", text=translate_where(exc.where)))
    if exc.hint:
        lines.append(gettext("hint: {text}", text=translate(exc.hint)))
    return lines


ALLOCATOR_ENV = "_RJEM_MALLOC_CONF"
"""Polars' allocator (jemalloc) reads its settings from this variable when it starts."""
ALLOCATOR_DECAY = "dirty_decay_ms:10000,muzzy_decay_ms:10000"
"""Freed pages kept 10 s (both stages) before they go back to the system, not handed back
at once: a month's crowding builds and drops frames of millions of rows day after day, and
faulting fresh pages in again was a fifth of its CPU (ADR 0103, session 31 addendum);
matching a fortnight, 3 % of its CPU. Peak memory grows by what is freed within 10 s."""

PLUGINS_ENV = "PYDANTIC_DISABLE_PLUGINS"
"""pydantic looks for plugins in every installed distribution's entry points when it builds
its first model (the profile's, the ingest options'): 10 ms of every command, for plugins
Pontual does not use. The program sets it to `__all__` unless the user set it (an empty value
lets every plugin load again), ADR 0007 addendum."""


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command `argv` (default: the process's arguments); its exit status."""
    if argv is None:
        # Run as the program: before any verb loads Polars or builds a pydantic model (and
        # inherited by the matching workers it spawns); a value set by the user stays.
        os.environ.setdefault(ALLOCATOR_ENV, ALLOCATOR_DECAY)
        os.environ.setdefault(PLUGINS_ENV, "__all__")
    code = _main(argv)
    if argv is None:
        # Run as the program (`python -m pontual`, the `pontual` script), whose process ends
        # on return: what is alive now is moved out of the garbage collector's sight, so the
        # interpreter's collections at shutdown do not walk the libraries' objects (0.1 s of
        # a small command's CPU, ADR 0114). Tests pass `argv` and keep collecting.
        gc.freeze()
    return code


def _main(argv: Sequence[str] | None) -> int:
    # Only the named verb's module is imported and registered (ADR 0114): building every
    # verb's parser costs a command more than its own work on a small file.
    verb = named_verb(sys.argv[1:] if argv is None else argv)
    parser = build_parser(None if verb is None else (verb_module(VERBS[verb]),))
    args = parser.parse_args(argv)
    try:
        settings = Settings.resolve(
            args.store, args.profile, quiet=args.quiet, debug=args.debug, lake=args.global_lake
        )
    except PontualError as exc:  # e.g. an empty --store: a user error, before any context
        print("\n".join(format_error(exc)), file=sys.stderr)
        return EXIT_USER_ERROR
    ctx = Context(settings)
    try:
        return int(args.func(args, ctx) or 0)
    except PontualError as exc:
        if args.debug:
            import traceback

            traceback.print_exc()
        first, *rest = format_error(exc)
        prefix, _, text = first.partition(" ")
        from rich.markup import escape

        ctx.err.print(f"[bold red]{prefix}[/] {escape(text)}", highlight=False, soft_wrap=True)
        for line in rest:
            ctx.err.print(line, highlight=False, markup=False, soft_wrap=True)
        return EXIT_USER_ERROR
    except KeyboardInterrupt:
        ctx.err.print(gettext("interrupted"))
        return 130
    except Exception as exc:  # an internal error: say so, keep the traceback for --debug
        if args.debug:
            import traceback

            traceback.print_exc()
        else:
            ctx.err.print(
                gettext(
                    "internal error: {name}: {text} (run with --debug for the traceback)",
                    name=type(exc).__name__,
                    text=exc,
                ),
                markup=False,
                highlight=False,
            )
        return EXIT_INTERNAL_ERROR


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
