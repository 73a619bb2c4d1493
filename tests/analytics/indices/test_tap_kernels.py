"""The compiled passes over the taps in time order (`tap_kernels`): card codes and ties, the
places of lines and classes, the fare suspects, and the integration chains counted per period
against the vectorised rounds (`compute_journey_starts`) on the same taps."""

from __future__ import annotations

import numpy as np
import pytest

from analytics.indices.ridership import compute_journey_starts
from analytics.indices.tap_kernels import (
    NOT_FOUND,
    UNKNOWN,
    count_layer,
    find_suspects,
    to_card_codes,
    to_places,
)

HOUR_US = 3_600_000_000


def test_card_codes_are_dense_in_order_of_first_tap_and_mark_ties() -> None:
    card = np.array([7, 0, 9, 7, 2**63 + 5, 9, 9, 0, 0], dtype=np.uint64)
    at_us = np.array([1, 2, 3, 4, 4, 5, 5, 6, 6], dtype=np.int64)
    codes, n_cards, tied = to_card_codes(card, at_us)
    assert codes.tolist() == [0, UNKNOWN, 1, 0, 2, 1, 1, UNKNOWN, UNKNOWN]
    assert n_cards == 3
    # card 9 twice at 5; card 7 at 4 and the other card at 4 are no tie; unknown cards never
    assert tied.tolist() == [False, False, False, False, False, True, True, False, False]


def test_card_codes_hold_many_cards_as_the_table_grows() -> None:
    rng = np.random.default_rng(3)
    distinct = rng.choice(2**62, size=200_000, replace=False).astype(np.uint64) + np.uint64(1)
    card = distinct[rng.integers(0, distinct.shape[0], 600_000)]
    codes, n_cards, tied = to_card_codes(card, np.arange(card.shape[0], dtype=np.int64))
    _, first, inverse = np.unique(card, return_index=True, return_inverse=True)
    # one code per card, numbered by first appearance
    assert n_cards == first.shape[0]
    order = np.argsort(first)
    rank = np.empty_like(order)
    rank[order] = np.arange(order.shape[0])
    assert np.array_equal(codes, rank[inverse])
    assert not tied.any()


def test_places_of_lines_unknown_and_strangers() -> None:
    keys = np.array([11, 2**64 - 3, 5], dtype=np.uint64)
    hashes = np.array([5, 0, 11, 2**64 - 3, 12, 5], dtype=np.uint64)
    assert to_places(hashes, keys).tolist() == [2, UNKNOWN, 0, 1, NOT_FOUND, 2]
    with pytest.raises(ValueError):
        to_places(hashes, np.array([3, 3], dtype=np.uint64))


def test_suspects_are_over_the_floor_or_a_benefit_on_a_selective_vehicle() -> None:
    fare = np.array([0, 0, 1, 1, 1], dtype=np.int32)
    amount = np.array([5.20, 5.21, 2.60, 2.60, -np.inf])
    vehicle = np.array([1, 1, 7, 8, 7], dtype=np.uint64)
    floor = np.array([520.5, 260.5])
    benefit = np.array([False, True])
    got = find_suspects(fare, amount, vehicle, floor, benefit, np.array([7], dtype=np.uint64))
    assert got.tolist() == [False, True, True, False, True]
    none = find_suspects(fare, amount, vehicle, floor, benefit, np.array([], dtype=np.uint64))
    assert none.tolist() == [False, True, False, False, False]


def _by_rounds(
    card: np.ndarray,
    at_us: np.ndarray,
    route: np.ndarray,
    vehicle: np.ndarray,
    window_us: int,
) -> np.ndarray:
    """is_integration of each tap (given in time order) by the vectorised rounds, in the
    (card, time) order they need."""
    order = np.lexsort((np.arange(card.shape[0]), at_us, card))
    start = compute_journey_starts(
        card[order],
        card[order] >= 0,
        at_us[order],
        route[order],
        route[order] >= 0,
        vehicle[order],
        vehicle[order] != 0,
        window_us,
    )
    out = np.empty(card.shape[0], dtype=np.bool_)
    out[order] = ~start
    return out


def test_counts_per_period_equal_the_rounds_on_each_period_s_own_taps() -> None:
    rng = np.random.default_rng(11)
    n = 20_000
    at_us = np.sort(rng.integers(0, 30 * 24 * HOUR_US, n))
    card = rng.integers(-1, 300, n).astype(np.int32)  # -1: unknown cards
    route = rng.integers(-1, 6, n).astype(np.int32)
    vehicle = rng.integers(0, 9, n).astype(np.uint64)
    fare = rng.integers(0, 3, n).astype(np.int32)
    # three periods of ten days, the last ending before the taps do, a gap before the second
    edges = np.array([0, 10, 11, 20, 20, 29], dtype=np.int64) * 24 * HOUR_US
    got = count_layer(card, 300, at_us, route, vehicle, fare, edges, HOUR_US, 6, 3)
    n_keys = 7 * 3 * 2
    assert got.shape == (3 * n_keys,)
    for p in range(3):
        inside = (at_us >= edges[2 * p]) & (at_us < edges[2 * p + 1])
        inferred = _by_rounds(card[inside], at_us[inside], route[inside], vehicle[inside], HOUR_US)
        slot = np.where(route[inside] >= 0, route[inside], 6)
        want = np.bincount(
            (slot * 3 + fare[inside]) * 2 + inferred.astype(np.int64), minlength=n_keys
        )
        assert np.array_equal(got[p * n_keys : (p + 1) * n_keys], want)
        assert 200 < want[1::2].sum() < inside.sum()  # integrations and breaks drawn
    # no window: nothing inferred, every tap of the periods counted once
    none = count_layer(card, 300, at_us, route, vehicle, fare, edges, None, 6, 3)
    assert none[1::2].sum() == 0
    assert (
        none.sum()
        == got.sum()
        == int(sum(((at_us >= edges[2 * p]) & (at_us < edges[2 * p + 1])).sum() for p in range(3)))
    )
