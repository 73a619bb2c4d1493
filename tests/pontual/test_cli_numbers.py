"""The CLI tables format numbers as the dashboard does (core.pt_br, Babel pt_BR)."""

from __future__ import annotations

from pontual.verbs.indices import format_value


def test_the_cli_indicator_table_uses_the_same_formatter() -> None:
    assert format_value(0.973, "ratio") == "97,3 %"
    assert format_value(12345.0, "trips") == "12.345"
    assert format_value(1444.5549, "km") == "1.444,55"
    assert format_value(None, "km") == "—"
