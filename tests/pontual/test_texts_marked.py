"""No line the command line prints escapes the catalogue (docs/adr/0106).

The sibling of tests/dashboard/test_texts_marked.py for `pontual/`: a text written straight
into an output call prints in one language whatever `PONTUAL_LANG` says (and tests reading
pt-BR output do not notice a pt-BR literal). This walks the syntax tree of `pontual/` and
fails on a string literal with words of its own (an f-string's literal parts, a
concatenation's) that is not the argument of `gettext` / `ngettext` / `N_` / `translate` in:

- the verbs' output calls: `ctx.say(...)`, `*.console.print(...)`, `*.err.print(...)`,
  `print(...)`;
- a Rich `Table(...)`'s column headers, `title=` and `caption=`;
- an option's or a verb's `help=` / `description=`, unless it is a catalogue id (the parser
  translates them by matching `pontual.messages.MESSAGES`).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

from core.texts import compile_templates, match_template
from pontual.messages import MESSAGES

ROOT = Path(__file__).resolve().parents[2]
WORD = re.compile(r"[^\W\d_]{2,}")
FIELD = "\x00"
ALLOWED = {"ICV", "IQS", "URM", "pings", "OpenID Connect"}
"""Literals that read the same in pt-BR and English (whole literal)."""
OUTPUT_CALLS = ("say", "console.print", "err.print", "print")
HELP_CALLS = {"add_parser", "add_argument", "add_argument_group", "add_subparsers"}


def _literal(node: ast.expr) -> str | None:
    """The text of a literal, an f-string (fields as FIELD) or a concatenation with one."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        return "".join(str(v.value) if isinstance(v, ast.Constant) else FIELD for v in node.values)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = _literal(node.left), _literal(node.right)
        if left is None and right is None:
            return None
        return (left or FIELD) + (right or FIELD)
    return None


def _words(text: str | None) -> str | None:
    """The text when it has words to translate (Rich markup and allowed names aside)."""
    if text is None:
        return None
    bare = re.sub(r"\[/?[a-z ]*\]", "", text)  # Rich markup
    bare = re.sub(r"\bpontual\b", "", bare)  # the command's name
    if bare.strip(" :()" + FIELD) in ALLOWED:
        return None
    return text if WORD.search(bare) else None


def _is_catalogued(text: str, templates: list[tuple[re.Pattern[str], str]]) -> bool:
    """Whether a help text is a catalogue id: itself, a text a template makes, or (an f-string
    filled with constants at run time, "ingest {kind} files into {table}") the literal parts of
    an id."""
    if text in MESSAGES or match_template(text.replace(FIELD, "x"), templates) is not None:
        return True
    parts = re.compile(".+?".join(map(re.escape, text.split(FIELD))), re.DOTALL)
    return FIELD in text and any(parts.fullmatch(msgid) for msgid in MESSAGES)


def _python_files() -> Iterator[Path]:
    yield from sorted((ROOT / "pontual").rglob("*.py"))


def find_unmarked_output(paths: Iterator[Path] | None = None) -> list[str]:
    """'file:line: text' of every printed literal outside the catalogue."""
    templates = compile_templates(MESSAGES)
    found: list[str] = []
    for path in paths or _python_files():
        where = str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else path.name
        for node in ast.walk(ast.parse(path.read_text(), filename=where)):
            if not isinstance(node, ast.Call):
                continue
            called = ast.unparse(node.func)
            name = called.rsplit(".", 1)[-1]
            texts: list[str | None] = []
            if called == "print" or called.endswith(OUTPUT_CALLS[:3]):
                texts += [_literal(a) for a in node.args[:1]]
            elif name == "Table":
                texts += [_literal(a) for a in node.args]
                texts += [_literal(k.value) for k in node.keywords if k.arg in ("title", "caption")]
            elif name in HELP_CALLS:
                for k in node.keywords:
                    text = _literal(k.value) if k.arg in ("help", "description") else None
                    if _words(text) and text is not None and not _is_catalogued(text, templates):
                        found.append(f"{where}:{node.lineno}: {text!r}")
                continue
            found += [f"{where}:{node.lineno}: {t!r}" for t in texts if _words(t) is not None]
    return found


def test_every_line_the_command_line_prints_is_marked() -> None:
    assert find_unmarked_output() == []


def test_the_scan_finds_what_it_is_for(tmp_path: Path) -> None:
    source = tmp_path / "verb.py"
    source.write_text(
        """
ctx.say(f"{n} validações em {s} s")
ctx.say(gettext("{n} taps in {seconds} s", n=n, seconds=s))
ctx.console.print(f"[bold]({i}/{n}) {title}[/]: pontual {argv}")
self.err.print("aviso: algo")
print(f"{a} → {b}")
Table("dia", gettext("day"), "ICV", title=f"Índices de {p}")
p.add_argument("--x", help="show the version and exit")
p.add_argument("--y", help="conferir tudo")
"""
    )
    found = [line.split(": ", 1)[1] for line in find_unmarked_output(iter([source]))]
    assert found == [
        repr("\x00 validações em \x00 s"),
        repr("aviso: algo"),
        repr("dia"),
        repr("Índices de \x00"),
        repr("conferir tudo"),
    ]
