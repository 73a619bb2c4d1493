"""The operator's entered CSVs: valid files read as typed frames, bad ones fail naming the
file, the line and the field."""

from __future__ import annotations

from datetime import date

import pytest

from core.errors import InputError
from dashboard.reports.inputs import read_maintenance_costs, read_staff
from tests.conftest import FIXTURES

HERE = FIXTURES / "reports"


def test_maintenance_costs_read_typed() -> None:
    costs = read_maintenance_costs(HERE / "maintenance_costs_2026_s1.csv")
    assert costs.height == 5
    assert costs["month"].to_list()[0] == date(2026, 5, 1)
    assert costs["cost_brl"].sum() == pytest.approx(10250.40 + 8120.00 + 3400.60 + 5600.00 + 999.99)


def test_staff_read_typed() -> None:
    staff = read_staff(HERE / "staff_2026_07.csv")
    t10 = staff.filter(staff["route_id"] == "T10").sort("month")
    assert t10["n_drivers"].to_list() == [5, 6]
    assert t10["n_inspectors"].to_list() == [1, 1]


@pytest.mark.parametrize(
    ("reader", "name", "where", "what"),
    [
        (
            read_maintenance_costs,
            "maintenance_negative_cost.csv",
            "line 3, field cost_brl",
            "-3400.60",
        ),
        (
            read_maintenance_costs,
            "maintenance_month_not_yyyy_mm.csv",
            "line 2, field month",
            "YYYY-MM",
        ),
        (
            read_staff,
            "staff_missing_inspectors_column.csv",
            "line 1, field n_inspectors",
            "n_inspectors",
        ),
        (read_staff, "staff_repeated_line_and_month.csv", "line 4, field month", "T10"),
        (
            read_staff,
            "staff_drivers_not_a_whole_number.csv",
            "line 3, field n_drivers",
            "whole number",
        ),
    ],
)
def test_bad_entered_files_name_file_line_and_field(reader, name, where, what) -> None:
    with pytest.raises(InputError) as err:
        reader(HERE / name)
    assert err.value.where is not None
    assert err.value.where.endswith(where)
    assert name in err.value.where
    assert what in err.value.what
    assert err.value.hint


def test_missing_file_says_so(tmp_path) -> None:
    with pytest.raises(InputError, match="file not found"):
        read_staff(tmp_path / "none.csv")
