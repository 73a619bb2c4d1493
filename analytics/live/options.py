"""Parameters of the live engine (method choices, not law: thresholds of the law come from the
regulation profile). Units are in the names."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class LiveOptions:
    """How much recent trace the engine keeps and how it predicts."""

    future_skew_s: float = 120.0
    """a fix stamped further than this past the wall clock is ignored (a unit with a wrong
    clock would otherwise move the engine's clock ahead and empty the feed; ingest
    quarantines such fixes with the same allowance)"""
    window_s: float = 7200.0
    """pings kept per vehicle: the current run is cut from this window with the batch rules
    (two hours covers the longest trip of a city network with its layover)"""
    active_s: float = 600.0
    """a vehicle silent for longer than this leaves the feed"""
    silent_s: float = 300.0
    """a vehicle silent for longer than this keeps its position in the feed but no
    predictions (they would drift into the past: TransitClock drops them the same way)"""
    run_stale_s: float = 180.0
    """a run whose last ping is older than this (relative to the vehicle's last ping) is over"""
    delay_decay_s: float = 600.0
    """e-folding time of the current delay: a prediction h seconds ahead weighs the
    constant-delay estimate by exp(-h / delay_decay_s) and the learned pattern by the rest"""
    min_layover_s: float = 120.0
    """shortest layover at a terminal between two trips of a block (delay carried forward)
    where history has not taught the terminal's own (`analytics.live.layovers`)"""
    layover_max_gap_s: float = 3600.0
    """two trips of a vehicle more than this apart (arrival to the next planned departure)
    are not a layover in the history (a pull-in or a crew break): they teach nothing"""
    next_trips: int = 2
    """trips of the block predicted after the current one"""
    history_days: int = 28
    """days of `stop_visits` before the service day that teach the travel times"""
    min_samples: int = 3
    """fewest observed traversals of a segment in an hour before its median replaces the
    timetable's running time (and fewest layovers at a terminal before they teach it)"""
    cancel_grace_s: float = 600.0
    """added to the profile's late-departure window before an unserved trip is CANCELED: a
    trip that nobody runs 15 min after its time (BG: 5 min late window + 10) is announced
    cancelled; sooner, late trips were announced too (precision 0.68 -> 0.70 on the
    simulated morning)"""
    switch_after_refreshes: int = 3
    """refreshes in a row at which another trip must be proposed before a vehicle leaves the
    trip it holds while its fixes stay on that trip's shape (with minute batches: three
    minutes of contrary evidence; one refresh flipped vehicles between blocks on a real day,
    `benchmarks.bench_live_wmata`)"""
    hold_backtrack_m: float = 50.0
    """a held trip is dropped at once when the vehicle's latest fix lies further than this
    behind its last position along the shape (GPS noise at a stop stays well under it)"""
    layover_radius_m: float = 150.0
    """a vehicle laying over whose latest fix is within this distance of where it arrived is
    still waiting: its next trip leaves no sooner than now; further away it
    has left without the engine seeing its trip yet, and the next trip is chained from the
    arrival (a terminal's bays and GPS noise stay within it)"""
