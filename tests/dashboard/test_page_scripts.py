"""Streamlit's magic draws every bare expression of a script it runs: a string after an
assignment, an attribute's docstring in a module, shows on the page as it is written, in
English (it did on the Casos and Auditoria pages, issue 20). The apps' scripts and the page
scripts hold no bare expression but their own docstring; a call (`st.title(...)`) is no bare
value."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SCRIPTS = sorted(
    p
    for p in [
        ROOT / "dashboard" / "app.py",
        ROOT / "dashboard" / "public_app.py",
        *(ROOT / "dashboard" / "pages").glob("*.py"),
    ]
    if p.name != "__init__.py"  # the page list, a module the scripts import
)


def _bare_values(tree: ast.Module) -> list[int]:
    """The lines of the bare expressions magic would draw, as `streamlit.runtime.scriptrunner.
    magic` finds them: in the script and in every block and function of it, but a call, a
    yield, an await, the docstring of the script or of a function, and a class's own body."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef):
            continue  # magic reads only its methods (walked as functions)
        docstring_owner = isinstance(node, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef))
        for field in ("body", "orelse", "finalbody"):
            block = getattr(node, field, None)
            for i, statement in enumerate(block if isinstance(block, list) else []):
                if not isinstance(statement, ast.Expr) or isinstance(
                    statement.value, (ast.Call, ast.Await, ast.Yield, ast.YieldFrom)
                ):
                    continue
                value = statement.value
                is_string = isinstance(value, ast.Constant) and isinstance(value.value, str)
                if not (docstring_owner and field == "body" and i == 0 and is_string):
                    found.append(statement.lineno)
    return sorted(found)


def test_no_script_draws_a_bare_value() -> None:
    assert len(SCRIPTS) >= 15  # 13 pages and the two apps
    found = {
        str(p.relative_to(ROOT)): lines
        for p in SCRIPTS
        if (lines := _bare_values(ast.parse(p.read_text(encoding="utf-8"))))
    }
    assert not found, found


def test_the_scan_finds_a_docstring_after_an_assignment() -> None:
    script = (
        '"""The page."""\nLABELS = {}\n"""What LABELS is."""\nif True:\n    x\n'
        'def f():\n    """Doc."""\n    "drawn"\nst.title("a")\n'
    )
    assert _bare_values(ast.parse(script)) == [3, 5, 8]
