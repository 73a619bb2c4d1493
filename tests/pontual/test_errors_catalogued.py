"""Every user error's text is a catalogue id, so the command line and the dashboard can say it
in the chosen language (docs/adr/0093, 0106).

A `PontualError` reaches the user as ``erro: <what>`` / ``dica: <hint>``: `pontual.messages`
translates the English text by matching it against the templates of `MESSAGES`; a text no
template matches is printed as it was written. An error written in pt-BR, or in English without
its catalogue entry, therefore shows in one language whatever `PONTUAL_LANG` says (and tests
reading the pt-BR output do not notice a pt-BR literal). This walks the syntax tree of every
package and fails on a `PontualError` (or subclass) raised with a literal `what` or `hint`
that no template of `MESSAGES` matches. f-string fields become a placeholder that any template
field matches; a module's string constants (``f"{AUTH_ENV}=..."``) are filled in; both
branches of a conditional part are checked.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

from core.texts import compile_templates, match_template
from pontual.messages import MESSAGES

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("core", "gtfs", "ingest", "analytics", "exports", "cases", "dashboard", "pontual")
FIELD = "\x00"
"""An f-string's field in a scanned text (any template field matches it)."""

NOT_SHOWN = {
    # (file, start of the text): why it need not be in the catalogue
    ("dashboard/browser.py", ""): "the tests' Chromium driver; no user runs it",
    ("gtfs/read.py", f"{FIELD} to more than"): "composed: its callers' texts are the ids "
    "'{name} unpacks to more than...' and 'the feed's files unpack to more than...'",
}


def _texts(node: ast.expr, constants: dict[str, str]) -> list[str] | None:
    """The texts a literal (an f-string, a concatenation, a conditional) can make; None when
    the node is no literal."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, ast.JoinedStr):
        out = [""]
        for part in node.values:
            if isinstance(part, ast.Constant):
                out = [t + str(part.value) for t in out]
            elif (
                isinstance(part, ast.FormattedValue)
                and isinstance(part.value, ast.Name)
                and part.value.id in constants
                and part.conversion == -1
                and part.format_spec is None
            ):
                out = [t + constants[part.value.id] for t in out]
            else:
                out = [t + FIELD for t in out]
        return out
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left = _texts(node.left, constants) or [FIELD]
        right = _texts(node.right, constants) or [FIELD]
        return [a + b for a in left for b in right]
    if isinstance(node, ast.IfExp):
        body = _texts(node.body, constants) or [FIELD]
        orelse = _texts(node.orelse, constants) or [FIELD]
        return body + orelse
    return None


def _error_classes(trees: dict[Path, ast.Module]) -> set[str]:
    """PontualError and the classes that derive from it, by name, in every scanned module."""
    found = {"PontualError"}
    while True:
        more = {
            node.name
            for tree in trees.values()
            for node in ast.walk(tree)
            if isinstance(node, ast.ClassDef)
            and any(getattr(b, "id", getattr(b, "attr", None)) in found for b in node.bases)
        } - found
        if not more:
            return found
        found |= more


def _raised_texts() -> Iterator[tuple[str, int, str]]:
    """(file, line, text) of each literal what/hint given to a PontualError."""
    trees = {
        path: ast.parse(path.read_text(), filename=str(path))
        for package in PACKAGES
        for path in sorted((ROOT / package).rglob("*.py"))
    }
    errors = _error_classes(trees)
    for path, tree in trees.items():
        constants = {
            node.targets[0].id: node.value.value
            for node in tree.body
            if isinstance(node, ast.Assign)
            and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name)
            and isinstance(node.value, ast.Constant)
            and isinstance(node.value.value, str)
        }
        where = str(path.relative_to(ROOT))
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call):
                continue
            name = getattr(node.func, "id", getattr(node.func, "attr", ""))
            if name not in errors:
                continue
            given = node.args[:1] + [k.value for k in node.keywords if k.arg in ("what", "hint")]
            for value in given:
                for text in _texts(value, constants) or []:
                    if re.search(r"[^\W\d_]{2,}", text):
                        yield where, node.lineno, text


def find_uncatalogued_errors() -> list[str]:
    """'file:line: text' of every user error's text that no catalogue id matches."""
    templates = compile_templates(MESSAGES)
    ids = set(MESSAGES)
    found = []
    for where, line, text in _raised_texts():
        if any(where == f and text.startswith(start) for f, start in NOT_SHOWN):
            continue
        if text in ids or match_template(text.replace(FIELD, "x"), templates) is not None:
            continue
        found.append(f"{where}:{line}: {text.replace(FIELD, '{…}')!r}")
    return found


def test_every_user_error_is_a_catalogue_id() -> None:
    assert find_uncatalogued_errors() == []


def test_the_scan_reads_each_kind_of_literal() -> None:
    source = """
ENV = "PONTUAL_X"
raise ConfigError("plain", hint=f"set {ENV} to {value!r}")
raise StoreError("open" + (f" (PID {pid})" if pid else ""), where=w)
raise ValueError("not a user error")
"""
    tree = ast.parse(source)
    calls = [n for n in ast.walk(tree) if isinstance(n, ast.Call)]
    constants = {"ENV": "PONTUAL_X"}
    texts = [t for call in calls for a in call.args for t in _texts(a, constants) or []]
    hints = [t for call in calls for k in call.keywords for t in _texts(k.value, constants) or []]
    assert texts == ["plain", "open (PID \x00)", "open", "not a user error"]
    assert hints[0] == "set PONTUAL_X to \x00"
    assert {"PontualError", "ConfigError"} <= _error_classes(
        {Path("x"): ast.parse("class ConfigError(PontualError): ...")}
    )
