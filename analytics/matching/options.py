"""Matching parameters: geometry buffers, geofences and windows, with units in their names.

Regulatory thresholds (early/late windows, partial ratio, breakdown stop, frequent headway) come
from the regulation profile; these are the *method's* parameters, tuned on the simulator and
on real traces (see tests/analytics), and documented here once.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from core.profile import Profile


@dataclass(frozen=True)
class MatchOptions:
    """How pings are cleaned, referenced on shapes, cut into runs and matched to trips."""

    max_speed_m_s: float = 40.0
    """implied speed above which a ping that jumps away and back is an outlier (144 km/h)"""
    spike_m: float = 250.0
    """a fix whose detour via it exceeds the straight line between its neighbours by more than
    this is a jump (GPS multipath), whatever the ping interval: a bus does not go 250 m out
    and back between two fixes except at a turnaround, where losing one fix costs nothing (the
    runs on either side then share the fixes around the terminal and both are kept, see
    `turnaround_reach_m`). Measured on the stress simulation: sparing fixes near terminals
    gains nothing (99.5 % agreement against 99.6 %), sparing spikes at plausible speeds lets
    the 60 s jumps through (98.3 %)"""
    gap_s: float = 180.0
    """a silence longer than this between two pings is a GPS gap (noted on the ping after it)"""
    densify_step_m: float = 20.0
    """spacing of the points the shapes are densified into for the grid search"""
    typical_speed_m_s: float = 6.0
    """speed used to extrapolate the position along a shape that passes a point twice"""
    on_route_buffer_m: float = 60.0
    """a ping farther than this from a shape is off that shape (TransitClock uses 60 m)"""
    terminal_radius_m: float = 100.0
    """geofence around a shape's first and last point (Rio Viagens 2.0 uses 100 m)"""
    stop_radius_m: float = 50.0
    """a stop's zone: this along-shape distance before and after it (never past half the way
    to the trip's previous or next stop). A visit is observed when a ping lies in it, else
    interpolated; the bus arrives at its first fix in the zone and leaves from its last one
    (`stop_visits._zone_targets`): a halt a few metres off the point keeps its dwell"""
    clearance_m: float = 25.0
    """progress past a stop that shows the vehicle has left it (about three GPS sigmas)"""
    backward_break_m: float = 60.0
    """a step backwards along the shape larger than this ends a run (wrong direction, short-turn)"""
    detour_max_s: float = 1800.0
    """an off-shape stretch up to this long, rejoining ahead, is a detour inside the run"""
    run_min_progress_m: float = 400.0
    """runs that progress less than this along their shape are discarded (corridor noise)"""
    run_min_pings: int = 3
    """runs with fewer pings (anchors included) are discarded: two fixes are not a trip"""
    dominance_overlap_s: float = 60.0
    """a run overlapped this long (or a quarter of its time) by a longer run of the same vehicle
    on another shape is dropped: a vehicle runs one shape at a time"""
    dominance_coverage_margin: float = 0.1
    """between overlapping runs, the one covering more of its own itinerary by this share wins;
    within it, the one that went further"""
    look_alike_min_ratio: float = 0.75
    """two overlapping runs of one vehicle whose distances differ by less than this ratio (the
    shorter one at least this share of the longer) lie on look-alike shapes (terminal variants,
    a short-turn): between them, the one whose shape has trips planned around the run wins"""
    turnaround_reach_m: float = 1000.0
    """runs of one vehicle overlapping only at a turnaround are consecutive, not concurrent,
    when the first ends within this of its shape's end and the second starts within this of
    its own start (the fixes around a terminal none of which fell inside the geofence: the
    stress simulation's lie 100 to 550 m from it, a stub street and a lost 60 s fix or two)"""
    min_duration_ratio: float = 0.6
    """a run faster than this share of the planned time for the stretch it covered cannot be
    that trip (a deadhead between terminals, or fixes that only touch the shape's ends)"""
    match_window_s: float = 2700.0
    """a run is matched to a trip whose planned start lies within this of its departure"""
    early_cost_factor: float = 2.0
    """early departures cost this many times their seconds when matching (early is worse)"""
    unmatched_base_cost_s: float = 600.0
    unmatched_full_cost_s: float = 1200.0
    """leaving a run without a trip costs base + full x its coverage ratio: a complete run
    stays unmatched only when no trip is within about 30 min; a stray fragment easily"""
    block_bonus_s: float = 900.0
    """cost reduction for a trip of the block the vehicle is running (block continuity)"""
    reported_bonus_s: float = 3600.0
    """cost reduction for the trip the device reported, when consistent with the shape run"""
    stationary_speed_m_s: float = 1.0
    """below this implied speed a vehicle is standing still (breakdown inference)"""
    stationary_radius_m: float = 40.0
    """a standing vehicle stays within this radius of where it stopped"""
    breakdown_clear_of_stop_m: float = 80.0
    """an inferred breakdown stands at least this far from any stop and terminal"""
    breakdown_event_codes: tuple[str, ...] = ("breakdown", "pane", "avaria")
    """AVL event codes that declare a breakdown"""
    incident_margin_s: float = 600.0
    """an incident covers a trip when its window overlaps the trip's planned window ± this"""


DEFAULT_OPTIONS = MatchOptions()


@dataclass(frozen=True)
class GapCredit:
    """When the distance across a GPS silence inside a run is credited to it (issue 16, item 3):
    the profile's `[evidence]` values `gap_credit_max_s`, `gap_credit_min_speed_m_s` and
    `gap_credit_max_speed_m_s` (what counts as evidence is the regulator's call, not the
    method's). A silence is credited when the fixes on both sides lie on the run's shape,
    progress across it is forward, it lasts at most `max_s` and the implied speed along the
    shape lies between the two speeds (`analytics.matching.stretches`)."""

    max_s: float
    """longest silence credited, seconds"""
    min_speed_m_s: float
    """slowest implied speed across it credited, m/s"""
    max_speed_m_s: float
    """fastest implied speed across it credited, m/s"""

    @classmethod
    def from_profile(cls, profile: Profile) -> GapCredit:
        ev = profile.evidence
        return cls(
            float(ev.gap_credit_max_s.value),
            float(ev.gap_credit_min_speed_m_s.value),
            float(ev.gap_credit_max_speed_m_s.value),
        )


ANY_GAP = GapCredit(float("inf"), 0.0, float("inf"))
"""Every silence inside a run credited, whatever its length or speed: the partition step's
default where no profile judges the runs (the live engine only follows where a vehicle is)."""
