"""Ridership from ticketing: IPK, equivalent passengers, fare integrations, technical tariff.

- passengers of a line = its fare taps (BG art. 26, 49: ticketing is the source of passengers);
- a tap is an *integration* (BG art. 7-V) when the same card tapped on another line within
  `fares.integration_window_s` before it; a tap the validator already recorded with the fare
  class 'integration' is one too; a profile without integration keys (CGS, which grants no
  integration fare) infers none;
- equivalent passengers (CGS art. 7 §2) weigh each tap by `fares.equivalent_weights` of its fare
  class; an inferred integration pays `fares.integration_fare_ratio` of its class's weight. The
  effect of integrations = equivalent passengers without that discount − with it;
- IPK = passengers ÷ km run; IPKe = equivalent passengers ÷ km run;
- technical tariff (CGS art. 16) = cost per km ÷ IPKe. Indicative: art. 15 §2-3 asks for the
  equivalent passengers of the last 12 months and the total km including dead km to and from
  the garage; this uses the period's taps and the km run in service (source says so).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import polars as pl

from analytics.indices.scopes import LEVELS, IndicatorSpec, compute_by_scope, to_indicator_rows
from core.periods import Period
from core.profile import Profile

INTEGRATION_CLASS = "integration"


def compute_integration_chains(
    taps: pl.DataFrame, window_us: int, *, has_vehicle: bool
) -> pl.Series:
    """is_integration of each tap of `taps` (any order; the result is in that order).

    BG art. 5 (viagens integradas) and 7-V: a trip using more than one line, changing to
    another vehicle, within one hour. The hour runs from the journey's first (paid) boarding,
    not from the previous tap, so a chain cannot stretch past it. Each card's taps are taken
    in time order (equal times by transaction id); a tap continues the journey when its card
    is known, its line differs from the previous tap's, its vehicle differs (when both are
    known) and it is within the window of the journey's first boarding; otherwise it starts
    a new journey.

    Cards, lines and vehicles are compared by their dictionary codes, and only the codes and
    times are put in order (sorting and moving the 64-character card hashes cost more than
    all the rest). Vectorised in rounds, none per journey: the taps that surely start a
    journey (a card's first, a tap that is no link, one more than the window after the tap
    before it: the journey's start is no later than that tap) cut the taps into stretches of
    links. Within a stretch a tap starts a journey only when it is past the window from the
    current journey's start, and the first such tap of a journey surely does (the taps before
    it joined the journey). Each round adds those first taps as starts, on the stretches that
    still hold one, until none does: rounds = the most journeys one stretch holds (taps each
    within the window of the one before, alternating lines: one to three in practice), not
    the most journeys a card makes in the period (hundreds in a year; docs/adr/0110).
    """
    if taps.height == 0:
        return pl.Series("is_integration", [], dtype=pl.Boolean)

    def codes(column: str) -> tuple[np.ndarray, np.ndarray]:
        code = pl.col(column).cast(pl.Categorical).to_physical().cast(pl.Int64)
        frame = taps.select(code.fill_null(-1).alias("c"), pl.col(column).is_not_null().alias("k"))
        return frame["c"].to_numpy(), frame["k"].to_numpy()

    card, _ = codes("card_hash")  # unknown cards: -1, together, never linked
    t = taps["event_at"].dt.epoch("us").to_numpy()
    order = np.lexsort((t, card))  # by card, then time
    card, t = card[order], t[order]
    order = _order_equal_times(taps, order, card, t)
    route, has_route = (a[order] for a in codes("route_id"))
    vehicle = has_vehicle_id = None
    if has_vehicle:
        vehicle, has_vehicle_id = (a[order] for a in codes("vehicle_id"))
    start = compute_journey_starts(
        card, card >= 0, t, route, has_route, vehicle, has_vehicle_id, window_us
    )
    out = np.empty(t.shape[0], dtype=np.bool_)
    out[order] = ~start
    return pl.Series("is_integration", out, dtype=pl.Boolean)


def compute_journey_starts(
    card: np.ndarray,
    has_card: np.ndarray,
    t: np.ndarray,
    route: np.ndarray,
    has_route: np.ndarray,
    vehicle: np.ndarray | None,
    has_vehicle: np.ndarray | None,
    window_us: int,
) -> np.ndarray:
    """Whether each tap starts a journey (else it is an integration), the taps given in
    journey order: by card, then time, equal instants by transaction id. Card, line and
    vehicle are any codes equal exactly when the values are (`has_*`: the value is known);
    `vehicle` None: the taps name no vehicle. The rounds of `compute_integration_chains`."""
    link = (card[1:] == card[:-1]) & has_card[1:] & has_card[:-1]
    link &= has_route[1:] & has_route[:-1] & (route[1:] != route[:-1])
    if vehicle is not None and has_vehicle is not None:
        link &= ~(has_vehicle[1:] & has_vehicle[:-1]) | (vehicle[1:] != vehicle[:-1])
    # a start for sure: no link, or past the window after the previous tap (the journey's
    # start is no later than that tap)
    start = np.concatenate(([True], ~link | (t[1:] - t[:-1] > window_us)))
    # the rows in play: whole stretches of two taps or more, in order (a stretch of one tap
    # is a start and nothing else: most taps)
    rows = np.flatnonzero(~start | np.concatenate((~start[1:], [False])))
    while rows.shape[0]:
        t_in, start_in = t[rows], start[rows]
        # each row's journey start: the last start at or before it (the first row is a start)
        journey = np.maximum.accumulate(np.where(start_in, np.arange(rows.shape[0]), 0))
        past = ~start_in & (t_in - t_in[journey] > window_us)
        if not past.any():
            break
        first_past = past & ~np.concatenate(([False], past[:-1]))
        start[rows[first_past]] = True
        # keep only the stretches that had a tap past the window
        stretch = np.cumsum(start_in)
        rows = rows[np.isin(stretch, stretch[past])]
    return start


def _disjoint_layers(bounds: Sequence[tuple[int, int]]) -> list[list[int]]:
    """The periods (first, end) grouped so that none of a group overlaps another, in order
    of their first instants (a year's months, then the year)."""
    layers: list[list[int]] = []
    for i in sorted(range(len(bounds)), key=lambda i: bounds[i]):
        for layer in layers:
            if bounds[layer[-1]][1] <= bounds[i][0]:
                layer.append(i)
                break
        else:
            layers.append([i])
    return layers


def _order_equal_times(
    taps: pl.DataFrame, order: np.ndarray, card: np.ndarray, t: np.ndarray
) -> np.ndarray:
    """`order` with the taps of one card at one instant (two validators at once: rare) put in
    transaction id order, when the taps have one (the validator's sequence), so which of them
    continues a journey does not depend on how the rows came; otherwise as given."""
    tie = (card[1:] == card[:-1]) & (t[1:] == t[:-1])
    if "transaction_id" not in taps.columns or not tie.any():
        return order
    in_tie = np.concatenate(([False], tie)) | np.concatenate((tie, [False]))
    rows = np.flatnonzero(in_tie)  # positions in `order` of the tied taps
    group = np.cumsum(~np.concatenate(([False], tie)))[rows]  # one number per (card, instant)
    ranked = (
        pl.DataFrame(
            {"group": group, "row": rows, "id": taps["transaction_id"].gather(order[rows])}
        )
        .sort("group", "id", nulls_last=True, maintain_order=True)["row"]
        .to_numpy()
    )
    out = order.copy()
    out[rows] = order[ranked]
    return out


def match_integrations(taps: pl.DataFrame, profile: Profile) -> pl.DataFrame:
    """Taps plus is_integration and the equivalent weights (rows in the order given).

    `taps`: fare_transactions rows (card_hash, event_at, route_id, fare_class; vehicle_id
    when known). Added columns: is_integration (bool; `compute_integration_chains`, or a tap
    the validator recorded as 'integration'), weight_full (the class's weight, 0-1) and weight
    (after the integration discount, 0-1). Taps without a card are never integrations; a
    profile without integration keys (CGS) infers none.
    """
    window = profile.fares.integration_window_s
    if window is not None:
        inferred = compute_integration_chains(
            taps, window.value * 1_000_000, has_vehicle="vehicle_id" in taps.columns
        )
    else:
        inferred = pl.Series("is_integration", [False] * taps.height, dtype=pl.Boolean)
    recorded = pl.col("fare_class") == INTEGRATION_CLASS
    return with_weights(
        taps.with_columns((pl.lit(inferred) | recorded).alias("is_integration")), profile
    )


def with_weights(taps: pl.DataFrame, profile: Profile) -> pl.DataFrame:
    """`taps` (fare_class, is_integration: inferred or recorded) plus weight_full (the class's
    equivalent weight) and weight (after the integration discount of an inferred one)."""
    fares = profile.fares
    ratio = fares.integration_fare_ratio.value if fares.integration_fare_ratio else 1.0
    weights = fares.equivalent_weights.value
    recorded = pl.col("fare_class") == INTEGRATION_CLASS
    weight_full = pl.col("fare_class").replace_strict(
        weights, default=weights.get("other", 1.0), return_dtype=pl.Float64
    )
    return taps.with_columns(weight_full.alias("weight_full")).with_columns(
        pl.when(pl.col("is_integration") & ~recorded)
        .then(pl.col("weight_full") * ratio)
        .otherwise(pl.col("weight_full"))
        .alias("weight")
    )


def compute_tap_counts(
    codes: pl.DataFrame,
    route_ids: Sequence[str],
    fare_classes: Sequence[str],
    window_us: int | None,
    bounds: Sequence[tuple[int, int]],
) -> list[pl.DataFrame]:
    """The taps of each period counted by line, fare class and is_integration (route_id,
    fare_class, is_integration, n_taps; a line or class without taps has no row), the journeys
    chained within each period on its own (as `match_integrations` on the period's taps).

    `codes`: one row per tap in time order (a card's taps of one instant in transaction id
    order) with card (dense codes 0 .. n - 1 of `tap_kernels.to_card_codes`, -1 unknown),
    at_us (epoch microseconds), route (index into `route_ids`, -1 unknown), vehicle (any
    code equal exactly when the vehicles are, 0 unknown) and fare (index into
    `fare_classes`); `window_us`: the integration window (None: the profile infers none);
    `bounds`: [first, end) epoch microseconds of each period. One compiled pass over the taps
    per layer of periods that do not overlap (a year's months, then the year), no sort
    (`tap_kernels`: a card's journey is a sequential scan of its taps).
    """
    from analytics.indices.tap_kernels import count_layer  # numba: only for the store's taps

    card = codes["card"].to_numpy()
    t = codes["at_us"].to_numpy()
    route = codes["route"].to_numpy()
    vehicle = codes["vehicle"].to_numpy()
    fare = codes["fare"].to_numpy()
    n_cards = int(card.max()) + 1 if card.shape[0] else 0
    n_routes, n_fares = len(route_ids), len(fare_classes)
    n_keys = (n_routes + 1) * n_fares * 2
    recorded = np.array([c == INTEGRATION_CLASS for c in fare_classes], dtype=np.bool_)
    names_route = [*route_ids, None]
    counts: dict[int, np.ndarray] = {}
    for layer in _disjoint_layers(bounds):
        # the periods of a layer do not overlap (a year's months): one pass chains them all,
        # a journey never crossing from one to the next, as each on its own taps
        edges = np.array([x for i in layer for x in bounds[i]], dtype=np.int64)
        n = count_layer(card, n_cards, t, route, vehicle, fare, edges, window_us, n_routes, n_fares)
        for place, i in enumerate(layer):
            counts[i] = n[place * n_keys : (place + 1) * n_keys]
    out = []
    for i in range(len(bounds)):
        n = counts[i]
        found = np.flatnonzero(n)
        pair, is_inferred = found // 2, (found % 2).astype(np.bool_)
        f = pair % n_fares
        out.append(
            pl.DataFrame(
                {
                    "route_id": [names_route[r] for r in (pair // n_fares).tolist()],
                    "fare_class": [fare_classes[j] for j in f.tolist()],
                    "is_integration": is_inferred | recorded[f],
                    "n_taps": n[found],
                },
                schema={
                    "route_id": pl.String,
                    "fare_class": pl.String,
                    "is_integration": pl.Boolean,
                    "n_taps": pl.Int64,
                },
            )
            .group_by("route_id", "fare_class", "is_integration")
            .agg(pl.col("n_taps").sum())
            .sort("route_id", "fare_class", "is_integration", nulls_last=True)
        )
    return out


def compute_ridership(
    taps: pl.DataFrame,
    km: pl.DataFrame,
    levels: Sequence[tuple[str, str | None]] = LEVELS,
    by: Sequence[str] = (),
) -> pl.DataFrame:
    """Passengers, equivalent passengers and km per scope.

    `taps`: from `match_integrations`, with route_id, operator_id, lot_id (one row per tap,
    or per group of `n_taps` alike: `compute_tap_counts` then `with_weights`); `km`: route_id,
    operator_id, lot_id, km_run (per trip or per line) and optionally cost_km (cost per km ×
    km run, currency). Returns scope, scope_id, *by, n_passengers, n_integrations,
    equivalent_passengers, equivalent_without_integration, km_run, cost_km (null without cost).
    """
    n = pl.col("n_taps") if "n_taps" in taps.columns else pl.lit(1, dtype=pl.Int64)
    tap_rows = taps.select(
        "route_id",
        "operator_id",
        "lot_id",
        *by,
        n.alias("n_passengers"),
        (pl.col("is_integration").cast(pl.Int64) * n).alias("n_integrations"),
        (pl.col("weight") * n).alias("equivalent_passengers"),
        (pl.col("weight_full") * n).alias("equivalent_without_integration"),
    )
    cost = pl.col("cost_km") if "cost_km" in km.columns else pl.lit(None, dtype=pl.Float64)
    km_rows = km.select("route_id", "operator_id", "lot_id", *by, "km_run", cost.alias("cost_km"))
    rows = pl.concat([tap_rows, km_rows], how="diagonal_relaxed")
    sums = (
        "n_passengers",
        "n_integrations",
        "equivalent_passengers",
        "equivalent_without_integration",
        "km_run",
    )
    aggs = [pl.col(c).fill_null(0).sum().alias(c) for c in sums]
    # the cost is only known where every km row of the scope has one
    aggs.append(
        pl.when(pl.col("cost_km").filter(pl.col("km_run").is_not_null()).null_count() == 0)
        .then(pl.col("cost_km").sum())
        .alias("cost_km")
    )
    return compute_by_scope(rows, aggs, levels, by)


def compute_technical_tariff(ridership: pl.DataFrame, cost_per_km: float | None) -> pl.DataFrame:
    """Adds integration_effect (equivalent passengers lost to integrations) and, when
    `cost_per_km` (currency/km) is given, replaces cost_km with cost × km run. The tariff is
    cost per km ÷ IPKe = cost_km ÷ equivalent passengers."""
    out = ridership.with_columns(
        (pl.col("equivalent_without_integration") - pl.col("equivalent_passengers")).alias(
            "integration_effect"
        )
    )
    if cost_per_km is not None:
        out = out.with_columns((pl.col("km_run") * cost_per_km).alias("cost_km"))
    return out


RIDERSHIP_SPECS = (
    IndicatorSpec("passengers", "n_passengers", None, "passengers", "BG art. 26, 49"),
    IndicatorSpec(
        "equivalent_passengers", "equivalent_passengers", None, "passengers", "CGS art. 7 §2"
    ),
    IndicatorSpec("fare_integrations", "n_integrations", "n_passengers", "ratio", "BG art. 7-V"),
    IndicatorSpec(
        "integration_effect_equivalent",
        "integration_effect",
        "equivalent_without_integration",
        "ratio",
        "BG art. 7-V (fares.integration_fare_ratio)",
    ),
    IndicatorSpec("ipk", "n_passengers", "km_run", "passengers/km", "CGS art. 15"),
    IndicatorSpec(
        "ipk_equivalent", "equivalent_passengers", "km_run", "passengers/km", "CGS art. 15, 16"
    ),
)
TARIFF_SPEC = IndicatorSpec(
    "technical_tariff_brl",
    "cost_km",
    "equivalent_passengers",
    "brl",
    "CGS art. 16 (cost per km ÷ IPKe); indicative: km run in service and the period's taps, "
    "not yet the total km with dead km nor the 12-month demand of art. 15 §2-3",
)


def compute_ridership_indicators(
    taps: pl.DataFrame,
    km: pl.DataFrame,
    profile: Profile,
    period: Period,
    cost_per_km: float | None,
) -> pl.DataFrame:
    """Ridership indicators of the period at every scope (long format). The tariff uses
    `cost_per_km` when given, else the cost_km column of `km` (per-operator costs). `taps`:
    one row per tap, or the period's `compute_tap_counts` (with an n_taps column)."""
    matched = (
        with_weights(taps, profile)
        if "n_taps" in taps.columns
        else match_integrations(taps, profile)
    )
    wide = compute_technical_tariff(compute_ridership(matched, km), cost_per_km)
    has_cost = bool(wide["cost_km"].is_not_null().any())
    specs = (*RIDERSHIP_SPECS, TARIFF_SPEC) if has_cost else RIDERSHIP_SPECS
    return to_indicator_rows(wide, specs, period)
