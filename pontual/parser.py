"""argparse in the command line's language: `CatalogueParser` and its help formatter.

argparse writes its own texts ("usage:", "options", "show this help message and exit", "the
following arguments are required: ...") in English through the stdlib's gettext, and prints
its errors as "prog: error: ..." without a hint. The parser below keeps argparse's behaviour
and routes every text through the command line's catalogue (`pontual.messages`):
- help: the usage prefix, section titles, each option's and verb's help, descriptions;
- errors: printed by the same printer as any user error (``erro:`` / ``dica:``), exit 2.
Subparsers inherit the class (argparse's `add_subparsers` defaults `parser_class` to it).
Nothing is patched in argparse itself; English stays available with PONTUAL_LANG=en.
Standard library only: built at every start-up.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterable
from typing import NoReturn

from pontual.messages import gettext, translate

EXIT_USAGE = 2


class CatalogueFormatter(argparse.HelpFormatter):
    """argparse's help layout with its texts in the chosen language."""

    def add_usage(
        self,
        usage: str | None,
        actions: Iterable[argparse.Action],
        groups: Iterable[argparse._MutuallyExclusiveGroup],
        prefix: str | None = None,
    ) -> None:
        super().add_usage(usage, actions, groups, gettext("usage: ") if prefix is None else prefix)

    def start_section(self, heading: str | None) -> None:
        super().start_section(translate(heading) if heading else heading)

    def add_text(self, text: str | None) -> None:
        super().add_text(translate(text) if text and text != argparse.SUPPRESS else text)

    def _get_help_string(self, action: argparse.Action) -> str | None:
        return translate(action.help) if action.help else action.help


class CatalogueParser(argparse.ArgumentParser):
    """An ArgumentParser whose help and errors speak the command line's language."""

    def __init__(self, *args: object, **kwargs: object) -> None:
        kwargs.setdefault("formatter_class", CatalogueFormatter)
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]

    def error(self, message: str) -> NoReturn:
        """A usage error: the usage line, then ``erro:`` and ``dica:`` as every user error; exit 2."""
        self.print_usage(sys.stderr)
        lines = [
            gettext("error: {text}", text=translate(message)),
            gettext("hint: {text}", text=gettext("see `{prog} --help`", prog=self.prog)),
        ]
        self.exit(EXIT_USAGE, "\n".join(lines) + "\n")
