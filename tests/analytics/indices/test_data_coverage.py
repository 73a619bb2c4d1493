"""Not-evaluated trips leave every index and are counted beside them (issue 16, item 1).

The hand-checked fixture of `test_icv` (16 trips, 14 with a vehicle) is scored twice: as it is,
and with four more programmed trips that could not be judged (`not_evaluated`: the operator's
feed was down). Every index must be the same; only the coverage figures and the grade's
PROVISÓRIO stamp differ.
"""

from __future__ import annotations

import polars as pl
import pytest

from analytics.indices.job import IndexInputs, compute_index_results
from core.periods import parse_period
from core.schema import table
from tests.analytics.indices.test_icv import PROFILE, fixture_frames

YEAR = parse_period("2026")


def _inputs(outcomes: pl.DataFrame) -> IndexInputs:
    f = fixture_frames()
    return IndexInputs(
        outcomes=outcomes,
        breakdowns=f["breakdowns"],
        headways=table("headway_observations").empty(),
        trips_performed=table("trips_performed").empty(),
        scheduled=table("scheduled_trips").empty(),
        vehicles=f["vehicles"],
        routes=f["routes"],
        taps=table("fare_transactions").empty(),
        surveys=table("iqs_surveys").empty(),
        monthly_km=pl.DataFrame(
            schema={
                "route_id": pl.String,
                "month": pl.Date,
                "km_run": pl.Float64,
                "km_programmed": pl.Float64,
            }
        ),
        stops=table("gtfs_stops").empty(),
        crs_epsg=None,
    )


def _with_dark_trips(outcomes: pl.DataFrame, n: int) -> pl.DataFrame:
    """`outcomes` plus `n` trips of its first line that could not be judged."""
    dark = outcomes.head(n).with_columns(
        (pl.col("trip_id") + "-dark").alias("trip_id"),
        pl.lit("not_evaluated").alias("outcome"),
        pl.lit("none").alias("evidence_class"),
        pl.lit(None, pl.String).alias("vehicle_id"),
        pl.lit(None, pl.Int32).alias("run_index"),
        pl.lit(None, pl.Int32).alias("departure_delay_s"),
        pl.lit(None, pl.Float64).alias("distance_run_m"),
        pl.lit(False).alias("is_justified"),
        pl.lit(None, pl.String).alias("incident_id"),
        pl.lit(0.0).alias("feed_up_share"),
    )
    return pl.concat([outcomes, dark], how="vertical_relaxed")


def _values(indicators: pl.DataFrame, names: tuple[str, ...] | None = None) -> dict:
    rows = indicators if names is None else indicators.filter(pl.col("indicator").is_in(names))
    return {
        (r["scope"], r["scope_id"], r["indicator"]): r["value"] for r in rows.iter_rows(named=True)
    }


COVERAGE = (
    "trips_not_evaluated",
    "evaluated_share",
    "gps_coverage_share",
    "trips_by_ticketing",
    "trips_by_inspection",
)


@pytest.fixture(scope="module")
def both() -> tuple:
    base = fixture_frames()["outcomes"]
    assert base.height == 16
    plain = compute_index_results(_inputs(base), PROFILE, YEAR)
    dark = compute_index_results(_inputs(_with_dark_trips(base, 4)), PROFILE, YEAR)
    return plain, dark


def test_not_evaluated_trips_change_no_index(both: tuple) -> None:
    plain, dark = both
    keep = ~pl.col("indicator").is_in(COVERAGE)
    assert _values(dark.indicators.filter(keep)) == _values(plain.indicators.filter(keep))
    # not a suppression, so no infraction for not operating either
    assert dark.suggested_infractions.height == plain.suggested_infractions.height


def test_coverage_counted_beside_the_headlines(both: tuple) -> None:
    plain, dark = both
    system = ("system", "all")
    got = _values(dark.indicators, COVERAGE)
    assert got[(*system, "trips_not_evaluated")] == 4
    assert got[(*system, "evaluated_share")] == pytest.approx(16 / 20)
    # 14 of the 16 fixture trips have a vehicle (their GPS run), of 20 programmed
    assert got[(*system, "gps_coverage_share")] == pytest.approx(14 / 20)
    base = _values(plain.indicators, COVERAGE)
    assert base[(*system, "trips_not_evaluated")] == 0
    assert base[(*system, "evaluated_share")] == 1.0


def test_grade_below_the_coverage_threshold_is_provisional(both: tuple) -> None:
    plain, dark = both
    # profile: evidence.provisional_below_evaluated_share = 0.95; 16 / 20 = 0.80 is below it
    sys_dark = dark.annual_grades.filter(pl.col("scope") == "system").row(0, named=True)
    sys_plain = plain.annual_grades.filter(pl.col("scope") == "system").row(0, named=True)
    assert (sys_dark["is_provisional"], sys_dark["evaluated_share"]) == (True, 0.8)
    assert (sys_plain["is_provisional"], sys_plain["evaluated_share"]) == (False, 1.0)
    # the grade itself rests on the evaluated trips alone
    assert sys_dark["grade"] == sys_plain["grade"]
    assert sys_dark["icv_score"] == pytest.approx(sys_plain["icv_score"])
