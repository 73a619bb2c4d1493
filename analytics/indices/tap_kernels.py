"""One pass over a span's taps in time order: card codes, fare integration chains, the taps
that may be charged against the law (compiled kernels).

`ridership.compute_tap_counts` counts each period's taps by line, fare class and inferred
integration (BG art. 5, 7-V; the rule is `ridership.compute_integration_chains`'). The store
gives the taps in time order; a card's journey depends on its own taps before it (the hour
runs from the journey's first boarding, so whether a tap continues a journey depends on where
the previous journey started): a sequential scan is the honest algorithm. In time order it
needs no sort, only a few numbers per card (its last line, vehicle and period, its journey's
first instant), held in arrays indexed by a dense code of the card: `to_card_codes` gives the
codes, `count_layer` chains and counts. The vectorised rounds of `compute_journey_starts` need
the taps in (card, time) order first, and putting the 27 M taps of a year in that order cost
more than everything else the indices do (docs/adr/0110, addendum of session 30). The other
two kernels (`to_places`, `find_suspects`) are a lookup and a test per tap, compiled so that
no array of the year's size is made in between.

Hash tables here are open-addressing tables of 64-bit hashes (DuckDB's `hash`, uniform),
placed by Fibonacci hashing and probed linearly, at most half full.
"""

from __future__ import annotations

import numba
import numpy as np

_FIBONACCI = np.uint64(0x9E3779B97F4A7C15)
"""Multiplier of Fibonacci hashing: spreads a 64-bit hash's bits over a table's slots."""
UNKNOWN = -1
"""The code or place of a tap whose card, line or vehicle is unknown (its hash is 0)."""
NOT_FOUND = -2
"""`to_places` of a hash that is none of the keys."""


def to_card_codes(card: np.ndarray, at_us: np.ndarray) -> tuple[np.ndarray, int, np.ndarray]:
    """A dense code per tap of its card (int32: 0, 1, ... in order of first appearance;
    UNKNOWN for an unknown card), the number of cards and whether each tap shares its card
    and instant with another tap (two validators at once: their order is not the store's to
    decide).

    `card`: a 64-bit hash of each tap's card, 0 when unknown (uint64); `at_us`: the taps'
    instants, in order (epoch microseconds, int64)."""
    if card.shape[0] != at_us.shape[0]:
        raise ValueError("card and at_us differ in length")
    codes, n_cards, tied = _card_codes(
        np.ascontiguousarray(card, dtype=np.uint64), np.ascontiguousarray(at_us, dtype=np.int64)
    )
    return codes, int(n_cards), tied


@numba.njit(cache=True, nogil=True)
def _card_codes(card, at_us):  # pragma: no cover - compiled; tested through to_card_codes
    """`to_card_codes`' scan: a table from hash to code (doubled when half full), one lookup
    per tap; the last instant and row of each card mark the taps tied. A slot holds its hash
    and code side by side, a card its last instant and row: one cache line each per tap."""
    n = card.shape[0]
    bits = 16
    slots = np.zeros((1 << bits, 2), dtype=np.uint64)  # (hash, code + 1), 0: empty
    last = np.empty((1 << 12, 2), dtype=np.int64)  # code -> (instant, row) of its last tap
    codes = np.empty(n, dtype=np.int32)
    tied = np.zeros(n, dtype=np.bool_)
    n_cards = 0
    for i in range(n):
        h = card[i]
        if h == 0:
            codes[i] = UNKNOWN
            continue
        mask = np.uint64((1 << bits) - 1)
        slot = (h * _FIBONACCI) >> np.uint64(64 - bits)
        while slots[slot, 1] != 0 and slots[slot, 0] != h:
            slot = (slot + np.uint64(1)) & mask
        if slots[slot, 1] == 0:
            code = n_cards
            n_cards += 1
            if n_cards > last.shape[0]:
                grown = np.empty((2 * last.shape[0], 2), dtype=np.int64)
                grown[: last.shape[0]] = last
                last = grown
            slots[slot, 0] = h
            slots[slot, 1] = code + 1
            if 2 * n_cards > slots.shape[0]:
                bits += 1
                slots = _regrown(slots, bits)
        else:
            code = int(slots[slot, 1]) - 1
            if last[code, 0] == at_us[i]:
                tied[i] = True
                tied[last[code, 1]] = True
        last[code, 0] = at_us[i]
        last[code, 1] = i
        codes[i] = code
    return codes, n_cards, tied


@numba.njit(cache=True, nogil=True)
def _regrown(slots, bits):  # pragma: no cover - compiled
    """`_card_codes`' table moved into 2**`bits` slots."""
    out = np.zeros((1 << bits, 2), dtype=np.uint64)
    mask = np.uint64((1 << bits) - 1)
    for s in range(slots.shape[0]):
        if slots[s, 1] != 0:
            slot = (slots[s, 0] * _FIBONACCI) >> np.uint64(64 - bits)
            while out[slot, 1] != 0:
                slot = (slot + np.uint64(1)) & mask
            out[slot, 0] = slots[s, 0]
            out[slot, 1] = slots[s, 1]
    return out


@numba.njit(cache=True, nogil=True)
def _table(keys, bits):  # pragma: no cover - compiled
    """A table of 2**`bits` slots holding the place of each of `keys` (distinct hashes)."""
    slots = np.full(1 << bits, -1, dtype=np.int32)
    mask = np.uint64((1 << bits) - 1)
    for k in range(keys.shape[0]):
        slot = (keys[k] * _FIBONACCI) >> np.uint64(64 - bits)
        while slots[slot] >= 0:
            slot = (slot + np.uint64(1)) & mask
        slots[slot] = k
    return slots


def to_places(hashes: np.ndarray, keys: np.ndarray) -> np.ndarray:
    """The place of each of `hashes` among `keys` (distinct, nonzero 64-bit hashes: a tap's
    line, class or vehicle): int32, UNKNOWN where the hash is 0, NOT_FOUND where it is none
    of the keys."""
    keys = np.ascontiguousarray(keys, dtype=np.uint64)
    if np.unique(keys).shape[0] != keys.shape[0] or bool(np.any(keys == 0)):
        raise ValueError("keys: distinct nonzero hashes")
    bits = max(4, int(2 * keys.shape[0]).bit_length())
    return _places(np.ascontiguousarray(hashes, dtype=np.uint64), keys, bits)


@numba.njit(cache=True, nogil=True)
def _places(hashes, keys, bits):  # pragma: no cover - compiled; tested through to_places
    slots = _table(keys, bits)
    mask = np.uint64((1 << bits) - 1)
    out = np.empty(hashes.shape[0], dtype=np.int32)
    for i in range(hashes.shape[0]):
        h = hashes[i]
        if h == 0:
            out[i] = UNKNOWN
            continue
        slot = (h * _FIBONACCI) >> np.uint64(64 - bits)
        place = slots[slot]
        while place >= 0 and keys[place] != h:
            slot = (slot + np.uint64(1)) & mask
            place = slots[slot]
        out[i] = place if place >= 0 else NOT_FOUND
    return out


def count_layer(
    card: np.ndarray,
    n_cards: int,
    at_us: np.ndarray,
    route: np.ndarray,
    vehicle: np.ndarray,
    fare: np.ndarray,
    edges: np.ndarray,
    window_us: int | None,
    n_routes: int,
    n_fares: int,
) -> np.ndarray:
    """The taps of periods that do not overlap, counted by (period, line, class, inferred
    integration), each period's journeys chained on its own taps (its first tap of a card
    starts a journey; a tap outside every period is left out).

    The taps in journey order within each card (time; a card's taps of one instant in
    transaction id order): `card` (dense codes `to_card_codes`, UNKNOWN: never an
    integration), `at_us` (non-decreasing), `route` (0 .. `n_routes` - 1, UNKNOWN),
    `vehicle` (any code equal exactly when the vehicles are, 0 unknown) and `fare`
    (0 .. `n_fares` - 1). `edges`: the periods' [first, end) instants in order, flattened;
    `window_us`: the integration window (None: none inferred). Returns the counts as one
    array of periods × (`n_routes` + 1 for no line) × `n_fares` × 2 (the last: inferred)."""
    n = at_us.shape[0]
    for values in (card, route, vehicle, fare):
        if values.shape[0] != n:
            raise ValueError("the taps' arrays differ in length")
    if edges.shape[0] % 2 or np.any(edges[1:] < edges[:-1]):
        raise ValueError("edges: the periods' first and end instants, in order")
    return _count_layer(
        np.ascontiguousarray(card, dtype=np.int32),
        n_cards,
        np.ascontiguousarray(at_us, dtype=np.int64),
        np.ascontiguousarray(route, dtype=np.int32),
        np.ascontiguousarray(vehicle, dtype=np.uint64),
        np.ascontiguousarray(fare, dtype=np.int32),
        np.ascontiguousarray(edges, dtype=np.int64),
        -1 if window_us is None else int(window_us),
        n_routes + 1,
        n_fares,
    )


@numba.njit(cache=True, nogil=True)
def _count_layer(  # pragma: no cover - compiled; tested through compute_tap_counts
    card, n_cards, at_us, route, vehicle, fare, edges, window_us, n_slots, n_fares
):
    """`count_layer`'s scan. A tap continues its card's journey when the card's previous tap
    was in the same period, both name a line and the lines differ, the vehicles differ (or
    one is unknown) and it comes within the window of the journey's first boarding."""
    n_keys = n_slots * n_fares * 2
    counts = np.zeros((edges.shape[0] // 2) * n_keys, dtype=np.int64)
    # per card, side by side (one cache line a tap): the period + 1 of its last tap (0: none),
    # that tap's line and vehicle, its journey's first boarding
    state = np.zeros((n_cards, 4), dtype=np.int64)
    p = 0
    for i in range(at_us.shape[0]):
        t = at_us[i]
        while p < edges.shape[0] and edges[p] <= t:
            p += 1
        if p % 2 == 0:
            continue  # before the first period, between two or after the last
        period = p // 2
        r = route[i]
        inferred = 0
        c = card[i]
        if c >= 0 and window_us >= 0:
            v = vehicle[i]
            vi = np.int64(v)  # the vehicle's code, bit for bit (only compared)
            if state[c, 0] == period + 1:
                r0 = state[c, 1]
                v0 = state[c, 2]
                link = r >= 0 and r0 >= 0 and r != r0 and (vi == 0 or v0 == 0 or vi != v0)
                if link and t - state[c, 3] <= window_us:
                    inferred = 1
            if inferred == 0:
                state[c, 3] = t
            state[c, 0] = period + 1
            state[c, 1] = r
            state[c, 2] = vi
        slot = r if r >= 0 else n_slots - 1
        counts[period * n_keys + (slot * n_fares + fare[i]) * 2 + inferred] += 1
    return counts


def find_suspects(
    fare: np.ndarray,
    amount: np.ndarray,
    vehicle: np.ndarray,
    floor: np.ndarray,
    benefit: np.ndarray,
    selective: np.ndarray,
) -> np.ndarray:
    """Whether each tap may be charged against the law (`fares_charged.to_suspect_floors`):
    its amount × 100 at or above its class's `floor` (indexed by `fare`; a null amount as
    -inf), or a `benefit` class on one of the `selective` vehicles (their codes)."""
    return _suspects(
        np.ascontiguousarray(fare, dtype=np.int32),
        np.ascontiguousarray(amount, dtype=np.float64),
        np.ascontiguousarray(vehicle, dtype=np.uint64),
        np.ascontiguousarray(floor, dtype=np.float64),
        np.ascontiguousarray(benefit, dtype=np.bool_),
        np.sort(np.asarray(selective, dtype=np.uint64)),
    )


@numba.njit(cache=True, nogil=True)
def _suspects(fare, amount, vehicle, floor, benefit, selective):  # pragma: no cover - compiled
    out = np.zeros(fare.shape[0], dtype=np.bool_)
    for i in range(fare.shape[0]):
        f = fare[i]
        if amount[i] * 100.0 >= floor[f]:
            out[i] = True
        elif benefit[f] and selective.shape[0]:
            j = np.searchsorted(selective, vehicle[i])
            out[i] = j < selective.shape[0] and selective[j] == vehicle[i]
    return out
