"""Fares charged against the law, from the ticketing taps (BG art. 46, 50-51; Anexo I LXVI and
XIV).

- LXVI "cobrar tarifa superior à autorizada": a tap whose amount is above the authorised full
  fare of its service (`infractions.authorised_fares`: urban, district, selective) times its
  class's share (`fares.equivalent_weights`: full and vale-transporte 1, student and
  integration 0.5, exempt 0 — BG art. 7-V, 50, 51), compared in whole centavos;
- XIV "transportar passageiro gratuitamente, exceto aqueles com benefício legal": an exempt or
  discounted tap (student, elderly, disabled, exempt) on a selective vehicle, where the law
  grants no benefit (BG art. 6-II, 50 §2, 51 §2). The issue filed this under LXVI; LXVI is
  about charging *more*, and a benefit granted where none is legal is XIV (ADR 0065).

The service of a tap is its vehicle's in the fleet register (selective, else its service
area); an unregistered vehicle is held to the highest authorised fare, so it never raises a
false overcharge. One suggestion per item, operator, line and local day, listing the taps.
"""

from __future__ import annotations

import polars as pl

from analytics.indices.infractions import FACT_COLUMNS
from core.profile import Profile

BENEFIT_CLASSES = ("student", "elderly", "disabled", "exempt")

VIOLATION_SCHEMA = pl.Schema(
    {
        "transaction_id": pl.String(),
        "event_at": pl.Datetime("us", "UTC"),
        "operator_id": pl.String(),
        "vehicle_id": pl.String(),
        "route_id": pl.String(),
        "fare_class": pl.String(),
        "amount": pl.Float64(),
        "service": pl.String(),
        "authorised_amount": pl.Float64(),
        "kind": pl.String(),
    }
)


def compute_fare_violations(
    taps: pl.DataFrame, vehicles: pl.DataFrame, profile: Profile
) -> pl.DataFrame:
    """Taps charged against the law (VIOLATION_SCHEMA): the tap's columns, service ('urban',
    'district' or 'selective'), authorised_amount (the most the class may be charged there)
    and kind ('over_tariff' or 'benefit_on_selective'). Empty without authorised fares."""
    fares = profile.infractions.authorised_fares
    if fares is None or taps.height == 0:
        return pl.DataFrame(schema=VIOLATION_SCHEMA)
    table = fares.value
    shares = profile.fares.equivalent_weights.value
    register = vehicles.select(
        pl.col("vehicle_id").cast(pl.String),
        pl.when(pl.col("service_class") == "selective")
        .then(pl.lit("selective"))
        .otherwise(pl.col("service_area"))
        .alias("service"),
    ).unique("vehicle_id", keep="last")
    top = max(table.values())
    fare = pl.col("service").replace_strict(table, default=top, return_dtype=pl.Float64)
    share = pl.col("fare_class").replace_strict(shares, default=1.0, return_dtype=pl.Float64)
    cents = 100.0
    rows = (
        taps.with_columns(pl.col("vehicle_id").cast(pl.String))
        .join(register, on="vehicle_id", how="left")
        .with_columns(((fare * share * cents).round(0) / cents).alias("authorised_amount"))
        .with_columns(
            pl.when(
                (pl.col("service") == "selective") & pl.col("fare_class").is_in(BENEFIT_CLASSES)
            )
            .then(pl.lit("benefit_on_selective"))
            .when((pl.col("amount") * cents).round(0) > (pl.col("authorised_amount") * cents))
            .then(pl.lit("over_tariff"))
            .alias("kind")
        )
        .filter(pl.col("kind").is_not_null())
    )
    return rows.select(list(VIOLATION_SCHEMA)).cast(VIOLATION_SCHEMA).sort("event_at")


def to_suspect_floors(profile: Profile) -> tuple[dict[str, float], float] | None:
    """The least amount × 100 a tap of each fare class must reach to be charged over any
    authorised fare, and that of a class the weights do not name; None without authorised
    fares (no tap is ever charged over them).

    A tap is charged over when round(amount × 100) > A, A its authorised amount in centavos
    (`compute_fare_violations`; A is at least that of the lowest authorised fare, the same
    operations being monotone). round() of the amount is an integer above A, so at least
    floor(A) + 1, and the amount × 100 is at least that minus 0.5. A tap below its floor is
    charged over nowhere: a reader may leave it out (keeping the benefit classes' taps on
    selective vehicles) and `compute_fare_violations` finds the same taps in the rest."""
    fares = profile.infractions.authorised_fares
    if fares is None:
        return None
    shares = profile.fares.equivalent_weights.value
    cents = 100.0
    floors = (
        pl.DataFrame({"fare_class": [*shares, None], "fare": min(fares.value.values())})
        .with_columns(
            pl.col("fare_class")
            .replace_strict(shares, default=1.0, return_dtype=pl.Float64)
            .alias("share")
        )
        .with_columns(
            (
                ((pl.col("fare") * pl.col("share") * cents).round(0) / cents * cents).floor() + 0.5
            ).alias("floor")
        )
    )
    by_class = {
        r["fare_class"]: r["floor"]
        for r in floors.iter_rows(named=True)
        if r["fare_class"] is not None
    }
    return by_class, float(floors.filter(pl.col("fare_class").is_null())["floor"][0])


def match_fare_facts(violations: pl.DataFrame, profile: Profile) -> pl.DataFrame:
    """Facts LXVI (over_tariff) and XIV (benefit_on_selective), one per item, operator, line
    and local day (FACT_COLUMNS); evidence lists each tap: id, local time, vehicle, class,
    amount charged and authorised."""
    tz = profile.general.timezone.value
    local = pl.col("event_at").dt.convert_time_zone(tz)
    money = "R$ {}"
    one = pl.format(
        "{} {} (veículo {}, {}, cobrado " + money + ", autorizado " + money + ")",
        "transaction_id",
        local.dt.strftime("%H:%M:%S"),
        pl.col("vehicle_id").fill_null("—"),
        "fare_class",
        pl.col("amount").round(2),
        pl.col("authorised_amount").round(2),
    )
    what = (
        pl.when(pl.col("kind") == "over_tariff")
        .then(pl.lit("cobrança(s) acima da tarifa autorizada (BG art. 46; Anexo I LXVI)"))
        .otherwise(
            pl.lit(
                "embarque(s) com isenção ou desconto no transporte seletivo, que não os admite "
                "(BG art. 6-II, 50 §2, 51 §2)"
            )
        )
    )
    return (
        violations.with_columns(
            local.dt.date().alias("occurred_on"),
            one.alias("_ev"),
            pl.when(pl.col("kind") == "over_tariff")
            .then(pl.lit("LXVI"))
            .otherwise(pl.lit("XIV"))
            .alias("item"),
            what.alias("_what"),
        )
        .group_by("item", "operator_id", "route_id", "occurred_on")
        .agg(
            pl.col("event_at").min().alias("occurred_at"),
            pl.len().alias("_n"),
            pl.col("_what").first(),
            pl.col("_ev").sort_by("event_at").str.join("; ").alias("evidence"),
        )
        .select(
            "item",
            "operator_id",
            "route_id",
            pl.lit(None, dtype=pl.String).alias("vehicle_id"),
            "occurred_on",
            "occurred_at",
            pl.format("linha {}: {} {}", pl.col("route_id").fill_null("—"), "_n", "_what").alias(
                "fact"
            ),
            "evidence",
            pl.lit(None, dtype=pl.String).alias("trip_ids"),
            pl.lit(None, dtype=pl.String).alias("ping_ids"),
        )
        .select(FACT_COLUMNS)
        .sort("occurred_on", "item", "route_id")
    )
