"""pt-BR numbers and dates through Babel: the one formatter of dashboard, reports and CLI."""

from __future__ import annotations

from datetime import date

from core.pt_br import to_date, to_integer, to_number, to_percent, to_quantity


def test_numbers_read_the_brazilian_way() -> None:
    assert to_number(1234567.891, 2) == "1.234.567,89"
    assert to_number(2.5, 0) == "3"  # half away from zero, not Python's half-even
    assert to_number(-0.04) == "0,0"  # no negative zero
    assert to_integer(1105) == "1.105"  # not "1105 viagens"
    assert to_percent(0.016) == "1,6 %"
    assert to_quantity(1598.0) == "1.598" and to_quantity(11317.149) == "11.317,15"
    assert to_number(float("nan")) == to_percent(None) == "—"
    assert to_date(date(2026, 12, 1)) == "01/12/2026"


def test_rule_values_and_yes_no() -> None:
    from core.pt_br import to_plain, to_yes_no

    assert [to_plain(v) for v in (0.9, 300.0, 1234.5, 4)] == ["0,9", "300", "1234,5", "4"]
    assert (to_yes_no(True), to_yes_no(False), to_yes_no(None)) == ("sim", "não", "—")


def test_parsed_locale_and_patterns_give_babels_own_text() -> None:
    """The formatter keeps Babel's parsed locale and patterns (speed): the text is what Babel
    writes when given the locale's name and the pattern as text."""
    from decimal import ROUND_HALF_UP, Decimal, localcontext

    from babel.numbers import format_decimal

    values = [0.0, -0.0, 0.05, -0.05, 1.25, -1.25, 999.995, 1234567.891, -98765.4321, 1e12]
    for decimals in (0, 1, 2, 3):
        for value in values:
            with localcontext(rounding=ROUND_HALF_UP):
                number = Decimal(repr(value)).quantize(Decimal(1).scaleb(-decimals))
                number = abs(number) if number == 0 else number
                pattern = "#,##0" + ("." + "0" * decimals if decimals else "")
                expected = format_decimal(number, format=pattern, locale="pt_BR")
            assert to_number(value, decimals) == expected, (value, decimals)
