"""Suggested infractions: detected facts mapped to the catalogue (BG Anexo I), with evidence.

These are suggestions for a human inspector, never automatic fines. One suggestion per item,
operator, service day and line (or vehicle / year), listing the trips, times, vehicles and
pings behind it. Facts detected (the item numbers of BG Anexo I):

- VII    late trips (outcome 'late') not justified by an approved incident;
- XVIII  early trips (schedule of the service order not kept);
- XXI    trips interrupted without a justification (`is_interrupted`: not breakdowns, not
         short-turns with an incident, not GPS gaps);
- XXIV   runs that left the itinerary (detours) on trips no approved incident covers;
- LXIV   a line with programmed trips that ran none of them, not all justified;
- XXXV   reserve fleet below the minimum on a day (fleet_days operator total);
- LXIX   contracted fleet not completed: fewer active registered vehicles than the day's
         programme needs (fleet_days);
- LXXII, LXXXII, LXVI, XIV: speeding, stoppages and fares, in `speeding`, `stoppage` and
  `fares_charged`;
- VI, XVII: doors opened away from stops, and stops of a trip where the doors never opened
  (on a trip whose door sensor works), in `off_stop` and `skipped_stops`;
- LXI / LXXXV / LXXXVIII  quality goals not met for 1, 2, or 3-consecutive-or-8 years (the
  most severe that applies, from annual_grades).

Repeat (art. 65 §1-2): the same item of the same group by the same operator on an earlier day
within the `infractions.repeat_window_months` calendar months before ("nos 06 meses
imediatamente anteriores": 31 Jan -> 31 Jul is a repeat, 31 Jan -> 1 Aug is not; a month end
clips, 31 Aug looks back to 28/29 Feb). The fine is
the item's `urm_repeat`, else `urm_first` × `repeat_multiplier`; group A has no fine on the first
offence (warning, 0 URM).
"""

from __future__ import annotations

from datetime import date

import polars as pl

from core.profile import Profile
from core.pt_br import to_number, to_percent
from core.texts import N_

STATUS = "sugestão"
DISCLAIMER = N_(
    "Suggestions for the inspector's review: they are not infraction notices nor automatic "
    "fines (BG art. 77: GPS and ticketing records as means of proof)."
)
"""What the suggestions are (a catalogue id: shown with `gettext`)."""
FACT_COLUMNS = (
    "item",
    "operator_id",
    "route_id",
    "vehicle_id",
    "occurred_on",
    "occurred_at",
    "fact",
    "evidence",
    "trip_ids",
    "ping_ids",
)


def _trip_evidence(tz: str) -> pl.Expr:
    """One trip in words: 'T1 08:00 (+7 min, veículo V1, pings 10-42)'."""
    local = pl.col("planned_start_at").dt.convert_time_zone(tz).dt.strftime("%H:%M")
    delay = (pl.col("departure_delay_s") / 60.0).round(0).cast(pl.Int64)
    pings = pl.concat_str(
        [pl.col("first_ping_id").cast(pl.String), pl.col("last_ping_id").cast(pl.String)],
        separator="-",
    )
    return pl.concat_str(
        [
            pl.col("trip_id"),
            pl.lit(" "),
            local,
            pl.lit(" ("),
            pl.when(delay.is_not_null())
            .then(
                pl.format(
                    "{} min, ",
                    pl.when(delay > 0)
                    .then(pl.format("+{}", delay))
                    .otherwise(delay.cast(pl.String)),
                )
            )
            .otherwise(pl.lit("")),
            pl.lit("veículo "),
            pl.col("vehicle_id").fill_null("—"),
            pl.lit(", pings "),
            pings.fill_null("—"),
            pl.lit(")"),
        ]
    )


def _trip_facts(trips: pl.DataFrame, item: str, what: str, tz: str) -> pl.DataFrame:
    """Group trips into one fact per operator, line and day."""
    if trips.height == 0:
        # typed as the non-empty facts: an all-String empty part would turn the dates of the
        # other parts into strings when they are concatenated
        dtypes: dict[str, pl.DataType] = {
            "occurred_on": pl.Date(),
            "occurred_at": pl.Datetime("us", "UTC"),
        }
        return pl.DataFrame(schema={c: dtypes.get(c, pl.String) for c in FACT_COLUMNS})
    return (
        trips.sort("planned_start_at", "trip_id")
        .with_columns(
            _trip_evidence(tz).alias("_ev"),
            pl.concat_str(
                [pl.col("first_ping_id").cast(pl.String), pl.col("last_ping_id").cast(pl.String)],
                separator="-",
            ).alias("_pings"),
        )
        .group_by("operator_id", "route_id", "service_date")
        .agg(
            pl.col("planned_start_at").min().alias("occurred_at"),
            pl.len().alias("_n"),
            pl.col("_ev").str.join("; ").alias("evidence"),
            pl.col("trip_id").str.join(",").alias("trip_ids"),
            pl.col("_pings").drop_nulls().str.join(",").alias("ping_ids"),
        )
        .select(
            pl.lit(item).alias("item"),
            "operator_id",
            "route_id",
            pl.lit(None, dtype=pl.String).alias("vehicle_id"),
            pl.col("service_date").alias("occurred_on"),
            "occurred_at",
            pl.format("linha {}: {} {}", pl.col("route_id"), pl.col("_n"), pl.lit(what)).alias(
                "fact"
            ),
            "evidence",
            "trip_ids",
            "ping_ids",
        )
    )


def is_interrupted() -> pl.Expr:
    """XXI "interromper a viagem sem motivo justificado", on trip outcomes: a partial trip
    (itinerary covered below the profile's ratio) that

    - is not a breakdown (`broken_down` trips are counted as breakdowns already, BG art. 57;
      one fact is not charged twice);
    - has no incident attached (a short-turn ordered around an obstruction or accident has its
      incident; art. 57 §1 only stops it excusing the *ICV*, not the fiscal's judgment);
    - was seen by the GPS: the share of its planned minutes with a fix is above the share of
      the itinerary covered, so the missing stretch cannot be a gap in the fixes (a GPS gap is
      missing data, not an interrupted trip). A trip without that share is not raised."""
    return (
        (pl.col("outcome") == "partial")
        & pl.col("incident_id").is_null()
        & (pl.col("gps_minutes_share") > pl.col("coverage_ratio")).fill_null(False)
    )


def match_trip_facts(
    outcomes: pl.DataFrame, trips_performed: pl.DataFrame | None, profile: Profile
) -> pl.DataFrame:
    """Facts VII, XVIII, XXI, XXIV and LXIV from trip outcomes (with operator_id) and runs."""
    tz = profile.general.timezone.value
    # one filter each (a year's outcomes are a million wide rows: no copy of the unjustified)
    free = ~pl.col("is_justified")
    parts = [
        _trip_facts(
            outcomes.filter(free & (pl.col("outcome") == "late")),
            "VII",
            "viagem(ns) atrasada(s) sem motivo justificado",
            tz,
        ),
        _trip_facts(
            outcomes.filter(free & (pl.col("outcome") == "early")),
            "XVIII",
            "viagem(ns) adiantada(s): horário da OSO não cumprido",
            tz,
        ),
        _trip_facts(
            outcomes.filter(free & is_interrupted()),
            "XXI",
            "viagem(ns) interrompida(s) sem motivo justificado",
            tz,
        ),
    ]
    if trips_performed is not None and trips_performed.height:
        detours = (
            trips_performed.filter(pl.col("n_off_route") > 0)
            .select("service_date", "vehicle_id", "run_index", "first_ping_id", "last_ping_id")
            .join(
                outcomes.select(
                    "service_date",
                    "vehicle_id",
                    "run_index",
                    "trip_id",
                    "route_id",
                    "operator_id",
                    "planned_start_at",
                    "departure_delay_s",
                    "is_justified",
                ),
                on=["service_date", "vehicle_id", "run_index"],
                how="inner",
            )
            .filter(~pl.col("is_justified"))
        )
        parts.append(
            _trip_facts(
                detours, "XXIV", "viagem(ns) com desvio de itinerário sem incidente aprovado", tz
            )
        )
    line_day = ["operator_id", "route_id", "service_date"]
    line_days = outcomes.group_by(line_day).agg(
        pl.len().alias("n"),
        pl.col("outcome").is_in(["on_time", "late", "early"]).sum().alias("n_run"),
        pl.col("is_justified").sum().alias("n_justified"),
        pl.col("planned_start_at").min().alias("occurred_at"),
    )
    not_run = line_days.filter((pl.col("n_run") == 0) & (pl.col("n") > pl.col("n_justified")))
    # the trip ids of the lines not run only (every line-day's list cost most of the facts)
    trip_ids = (
        outcomes.select(*line_day, "trip_id")
        .join(not_run.select(line_day), on=line_day, how="semi", nulls_equal=True)
        .group_by(line_day)
        .agg(pl.col("trip_id").sort().str.join(",").alias("trip_ids"))
    )
    not_run = not_run.join(trip_ids, on=line_day, how="left", nulls_equal=True)
    parts.append(
        not_run.select(
            pl.lit("LXIV").alias("item"),
            "operator_id",
            "route_id",
            pl.lit(None, dtype=pl.String).alias("vehicle_id"),
            pl.col("service_date").alias("occurred_on"),
            "occurred_at",
            pl.format(
                "linha {} não operada: nenhuma das {} viagens programadas realizada",
                "route_id",
                "n",
            ).alias("fact"),
            pl.format("viagens programadas: {}", "trip_ids").alias("evidence"),
            "trip_ids",
            pl.lit(None, dtype=pl.String).alias("ping_ids"),
        )
    )
    return pl.concat([p.select(FACT_COLUMNS) for p in parts], how="vertical_relaxed")


def match_fleet_facts(fleet_days: pl.DataFrame) -> pl.DataFrame:
    """Facts XXXV (reserve below minimum) and LXIX (fleet cut over the limit) per operator-day."""
    total = fleet_days.filter(pl.col("route_id") == "*")
    common: list[pl.Expr] = [
        pl.col("operator_id"),
        pl.lit(None, dtype=pl.String).alias("route_id"),
        pl.lit(None, dtype=pl.String).alias("vehicle_id"),
        pl.col("service_date").alias("occurred_on"),
        pl.lit(None, dtype=pl.Datetime("us", "UTC")).alias("occurred_at"),
    ]
    reserve = total.filter(~pl.col("is_reserve_ok").fill_null(True)).select(
        pl.lit("XXXV").alias("item"),
        *common,
        pl.format(
            "reserva técnica de {} veículo(s), abaixo do mínimo de {}", "n_reserve", "n_reserve_min"
        ).alias("fact"),
        pl.format(
            "frota cadastrada ativa {}, frota necessária {} (blocos da programação)",
            "n_vehicles_registered",
            "n_vehicles_required",
        ).alias("evidence"),
        pl.lit(None, dtype=pl.String).alias("trip_ids"),
        pl.lit(None, dtype=pl.String).alias("ping_ids"),
    )
    # LXIX "deixar de completar a frota contratada": the fleet the operator keeps (active in
    # the register) is short of the fleet its service order needs. A day it *operated* fewer
    # vehicles is not LXIX (its trips not run are VII/LXIV facts already) and the 10 % of
    # art. 72 p.ú. I is a cassação ground, not this item's threshold (legal audit c9).
    cut = total.filter(
        (pl.col("n_vehicles_registered") < pl.col("n_vehicles_required")).fill_null(False)
    ).select(
        pl.lit("LXIX").alias("item"),
        *common,
        pl.format(
            "frota cadastrada ativa de {} veículo(s), abaixo dos {} que a programação exige",
            "n_vehicles_registered",
            "n_vehicles_required",
        ).alias("fact"),
        pl.format(
            "cadastro da frota (vehicles) × blocos programados do dia; frota operada {}",
            "n_vehicles_operated",
        ).alias("evidence"),
        pl.lit(None, dtype=pl.String).alias("trip_ids"),
        pl.lit(None, dtype=pl.String).alias("ping_ids"),
    )
    return pl.concat([reserve, cut], how="vertical_relaxed").select(FACT_COLUMNS)


def match_grade_facts(grades: pl.DataFrame, profile: Profile) -> pl.DataFrame:
    """LXI, LXXXV or LXXXVIII per operator and computed year with quality goals missed."""
    q = profile.quality
    missed = grades.filter(
        (pl.col("scope") == "operator") & ~pl.col("is_quality_goal_met") & ~pl.col("is_history")
    )
    item = (
        pl.when(pl.col("is_cassacao_watch"))
        .then(pl.lit("LXXXVIII"))
        .when(pl.col("n_goal_missed_total") >= 2)
        .then(pl.lit("LXXXV"))
        .otherwise(pl.lit("LXI"))
    )
    return missed.select(
        item.alias("item"),
        pl.col("scope_id").alias("operator_id"),
        pl.lit(None, dtype=pl.String).alias("route_id"),
        pl.lit(None, dtype=pl.String).alias("vehicle_id"),
        pl.date(pl.col("year"), 12, 31).alias("occurred_on"),
        pl.lit(None, dtype=pl.Datetime("us", "UTC")).alias("occurred_at"),
        pl.format(
            "metas de qualidade não atendidas em {}: conceito {}, {} ano(s) sem atender, "
            "{} ano(s) seguidos com conceito E",
            "year",
            "grade",
            "n_goal_missed_total",
            "n_e_consecutive",
        ).alias("fact"),
        pl.format(
            "nota anual {} (ICV {}, IQS {}), eficiência de km {}; cassação a partir de {} anos "
            "seguidos ou {} intercalados com conceito E",
            # pt-BR digits (one row per operator and year: a Python formatter is no cost)
            *[
                pl.col(c)
                .cast(pl.Float64)
                .map_elements(fmt, return_dtype=pl.String, skip_nulls=True)
                .fill_null("—")
                for c, fmt in (
                    ("annual_score", to_number),
                    ("icv_score", to_number),
                    ("iqs_score", to_number),
                    ("km_efficiency", to_percent),
                )
            ],
            pl.lit(q.cassacao_consecutive_e_years.value if q.cassacao_consecutive_e_years else "—"),
            pl.lit(q.cassacao_total_e_years.value if q.cassacao_total_e_years else "—"),
        ).alias("evidence"),
        pl.lit(None, dtype=pl.String).alias("trip_ids"),
        pl.lit(None, dtype=pl.String).alias("ping_ids"),
    )


def catalogue(profile: Profile) -> pl.DataFrame:
    """The profile's infractions catalogue: group, item, description, urm_first, urm_repeat,
    item_source."""
    items = profile.infractions.items
    return pl.DataFrame(
        {
            "group": [i.group for i in items],
            "item": [i.item for i in items],
            "description": [i.description for i in items],
            "urm_first": [i.urm_first for i in items],
            "urm_repeat": [i.urm_repeat for i in items],
            "item_source": [i.source for i in items],
        },
        schema={
            "group": pl.String,
            "item": pl.String,
            "description": pl.String,
            "urm_first": pl.Float64,
            "urm_repeat": pl.Float64,
            "item_source": pl.String,
        },
    )


def compute_suggested_infractions(
    facts: pl.DataFrame, previous: pl.DataFrame | None, profile: Profile
) -> pl.DataFrame:
    """The `suggested_infractions` rows (without the derived version columns) for `facts`.

    `previous`: earlier suggestions (operator_id, group, item, occurred_on) that make a fact a
    repeat. Facts whose item the profile's catalogue lacks are dropped (no catalogue, no
    suggestion).
    """
    inf = profile.infractions
    window = f"-{inf.repeat_window_months.value}mo"
    facts = facts.with_columns(pl.col("occurred_on").cast(pl.Date))
    rows = facts.join(catalogue(profile), on="item", how="inner")
    keys = ["operator_id", "group", "item"]
    history = [rows.select(*keys, "occurred_on")]
    if previous is not None and previous.height:
        history.append(previous.select(*keys, pl.col("occurred_on").cast(pl.Date)))
    days = pl.concat(history).unique().sort([*keys, "occurred_on"])
    days = days.with_columns(pl.col("occurred_on").shift(1).over(keys).alias("previous_on"))
    rows = rows.join(days, on=[*keys, "occurred_on"], how="left")
    repeat = (pl.col("previous_on") >= pl.col("occurred_on").dt.offset_by(window)).fill_null(False)
    urm_repeat = pl.coalesce(
        pl.col("urm_repeat"), pl.col("urm_first") * inf.repeat_multiplier.value
    )
    subject = pl.coalesce(pl.col("route_id"), pl.col("vehicle_id"), pl.lit("*"))
    return (
        rows.with_columns(repeat.alias("is_repeat"))
        .with_columns(
            pl.concat_str(
                [
                    pl.col("item"),
                    pl.col("operator_id"),
                    pl.col("occurred_on").cast(pl.String),
                    subject,
                ],
                separator="|",
            ).alias("infraction_key"),
            pl.when(pl.col("is_repeat"))
            .then(urm_repeat)
            .otherwise(pl.col("urm_first").fill_null(0.0))
            .alias("urm"),
            pl.lit(inf.currency_unit.value).alias("currency_unit"),
            pl.lit(STATUS).alias("status"),
            pl.format(
                "{}; reincidência: {}",
                pl.col("item_source"),
                pl.lit(f"{inf.repeat_multiplier.citation}, {inf.repeat_window_months.citation}"),
            ).alias("source"),
        )
        .sort("occurred_on", "operator_id", "item", "route_id")
    )


def repeat_window_start(day: date, months: int) -> date:
    """The first day whose offences make an offence on `day` a repeat: `months` calendar
    months before, clipped to the month's end (31 Aug, 6 months -> 28/29 Feb)."""
    start = pl.select(pl.lit(day).dt.offset_by(f"-{months}mo")).item()
    assert isinstance(start, date)
    return start


def year_end(year: int) -> date:
    return date(year, 12, 31)
