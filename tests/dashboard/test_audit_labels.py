"""Every audit action reads in words on the Auditoria page: an action without a label showed
its code (`report_delivery`) on screen."""

from __future__ import annotations

import ast
from pathlib import Path

from cases.audit import AUDIT_ACTIONS

PAGE = Path(__file__).resolve().parents[2] / "dashboard" / "pages" / "audit.py"


def _labelled_actions() -> set[str]:
    tree = ast.parse(PAGE.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Assign)
            and any(isinstance(t, ast.Name) and t.id == "ACTION_LABELS" for t in node.targets)
            and isinstance(node.value, ast.Dict)
        ):
            return {
                k.value
                for k in node.value.keys
                if isinstance(k, ast.Constant) and isinstance(k.value, str)
            }
    raise AssertionError("no ACTION_LABELS in the audit page")


def test_every_audit_action_has_a_label_on_the_audit_page() -> None:
    assert _labelled_actions() == set(AUDIT_ACTIONS)
