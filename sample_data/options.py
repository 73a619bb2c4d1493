"""What a simulation run is made of: every rate and parameter, and what it produced."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Literal


@dataclass(frozen=True)
class SimulationOptions:
    """Every parameter of a run. The run is a pure function of these (same options → same bytes).

    Rates are probabilities per scheduled trip unless the name says otherwise.
    """

    start: date = date(2026, 3, 2)
    days: int = 7
    # Explicit service dates (sorted, distinct) instead of `days` consecutive ones from `start`,
    # e.g. a sampled year (`sampled_year_dates`). Day-indexed options (`text_days`,
    # `fleet_cut_start_day`, `fleet_cut_days`) count these simulated days, not calendar days.
    dates: tuple[date, ...] | None = None
    seed: int = 1
    # Target number of vehicles in service at the peak. Up to `grid_city_above_vehicles` the
    # built-in fictional city is used (its headways scaled to the target); above it a synthetic
    # grid city with as many lines as needed (the benchmark's São Paulo-sized system).
    n_vehicles: int = 40
    grid_city_above_vehicles: int = 200
    profile_id: str = "bento-goncalves-2021"
    gtfs_path: Path | None = None
    # AVL
    ping_interval_s: int = 30
    gps_sigma_m: float = 8.0
    loss_rate: float = 0.01
    jump_rate: float = 0.002
    jump_distance_m: tuple[float, float] = (300.0, 2000.0)
    duplicate_rate: float = 0.005
    out_of_order_rate: float = 0.01
    out_of_order_delay_s: tuple[float, float] = (60.0, 600.0)
    outages_per_vehicle_day: float = 0.3
    outage_duration_s: tuple[float, float] = (300.0, 1800.0)
    # Data coverage (issue 16), off by default so the default outputs stay as they were:
    # a vehicle-day whose unit sends nothing while the vehicle runs its block (a dark vehicle),
    # and whole-operator feed outages (one operator's every unit silent for hours). Recorded
    # in truth/avl_dark.parquet; their own random stream, so switching them on changes
    # nothing else.
    dark_vehicle_day_rate: float = 0.0
    feed_outages_per_day: int = 0
    feed_outage_duration_s: tuple[float, float] = (5400.0, 10800.0)
    # Mid-route silences (issue 16, item 3): on this share of the trips run end to end the
    # unit sends nothing for a while between its departure and its arrival (5 to 15 min, at
    # least a minute clear of both terminals). Off by default (the default outputs stay as
    # they were); their own random stream. Every silence of 5 min or more inside a trip, from
    # this or from the outages above, is recorded in truth/avl_silences.parquet.
    mid_route_silence_rate: float = 0.0
    mid_route_silence_s: tuple[float, float] = (300.0, 900.0)
    # Halts off the stop point (issue 16, item 4): on this share of the dwells at a trip's
    # intermediate stops the bus stands `halt_offset_m` metres short of or past the stop's
    # point (either side, uniform), as real buses do behind another bus or at a long bay.
    # Truth arrival/departure are the halt's start and end. Off by default; own random stream.
    halt_offset_rate: float = 0.0
    halt_offset_m: tuple[float, float] = (5.0, 30.0)
    clock_skew_vehicle_rate: float = 0.05
    clock_skew_s: tuple[float, float] = (45.0, 180.0)
    power_on_before_s: int = 300
    with_trip_id: bool = False
    # Which days the text copies (avl.csv, avl_mqtt.jsonl, fares_mqtt.jsonl) cover: the first
    # N service days (None: all). Parquet always covers every day. Keeps the default run small.
    text_days: int | None = 1
    write_text_avl: bool = True
    # Operation
    departure_mean_s: float = 25.0
    departure_sigma_s: float = 28.0
    late_tail_rate: float = 0.04
    late_tail_median_s: float = 240.0
    travel_time_sigma: float = 0.06
    min_layover_s: int = 120
    deadhead_speed_m_s: float = 9.0
    dwell_base_s: float = 10.0
    dwell_per_boarding_s: float = 3.0
    dwell_per_alighting_s: float = 1.5
    # Injections (each recorded in truth/trips.parquet `injected`)
    suppressed_rate: float = 0.02
    early_rate: float = 0.02
    late_rate: float = 0.04
    breakdown_rate: float = 0.004
    breakdown_event_code_rate: float = 0.5
    breakdown_duration_s: tuple[float, float] = (1800.0, 5400.0)
    replacement_rate: float = 0.6
    detour_rate: float = 0.01
    detour_justified_rate: float = 0.5
    detour_offset_m: float = 450.0
    obstructions_per_day: float = 1.0
    obstruction_delay_s: tuple[float, float] = (420.0, 1500.0)
    swap_rate_per_block: float = 0.03
    fleet_cut_ratio: float = 0.15
    fleet_cut_days: int = 4
    fleet_cut_start_day: int = 1
    # Demand: each card is one person whose day is a tour (home -> work/school -> home), some
    # with a transfer near where the first leg ended; the same people come back on other days.
    # Fare taps per operated vehicle and day (about; legs per card set the number of people).
    riders_per_vehicle_day: float = 300.0
    # share of people whose tour changes line at a stop near the first leg's alighting
    second_leg_rate: float = 0.15
    # share of a weekday's card holders among the whole population of card holders
    ride_day_share: float = 0.85
    # person-days that ride one way only (the other way on foot, by car, ...)
    one_way_rate: float = 0.06
    # returns that alight one stop before or after the home stop (walk a stop spacing)
    home_walk_rate: float = 0.08
    # farthest walk between the stop a leg alights at and the next leg's boarding stop
    transfer_walk_max_m: float = 300.0
    walk_speed_m_s: float = 1.2
    # slack between the planned arrival plus the walk and the rider's wait at the next stop
    transfer_slack_s: tuple[float, float] = (60.0, 300.0)
    # shortest stay at the destination before the return
    min_stay_s: float = 1800.0
    fare_full_brl: float = 5.20
    fare_class_shares: tuple[tuple[str, float], ...] = (
        ("full", 0.45),
        ("student", 0.18),
        ("elderly", 0.08),
        ("disabled", 0.03),
        ("vale_transporte", 0.26),
    )
    # Output
    vehicle_chunk: int = 400
    compression: Literal["zstd", "lz4", "snappy", "gzip", "uncompressed"] = "zstd"


@dataclass(frozen=True)
class SimulationSummary:
    """What a run wrote, with a few counts to print."""

    out_dir: Path
    n_days: int
    n_routes: int
    n_vehicles_register: int
    n_scheduled_trips: int
    n_pings: int
    n_fare_taps: int
    outcome_counts: dict[str, int]
    files: tuple[str, ...]
