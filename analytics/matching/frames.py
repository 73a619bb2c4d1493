"""The frames matching passes between its steps, declared once like the stored tables.

Each is a `core.schema.Table` (columns with dtype, nullability and meaning) that is never
stored: the step that builds a frame conforms it to its declaration (`Table.conform`: exactly
these columns, in this order, of these dtypes, no null where none is allowed), so the next step
reads a known contract and a change of shape fails where it is made. Conforming selects and
casts columns that already have their dtype: no copy of the data.

They live here, not in `core.tables`, because they are the matching room's own working frames:
nothing outside matching reads them from the store (`core.tables` registers what migrations
create), and `core` must not know the inside of one job.

Flow, in a batch of vehicles (`batches.match_vehicles`): cleaned pings numbered by `row` ->
`PING_CANDIDATES` (`project.project_pings`) -> `STRETCHES` and `STRETCH_POINTS`
(`stretches.cut_stretches`) -> `RUNS` and `TRACK` (`runs.build_runs`), beside
`BREAKDOWN_STANDS` (`breakdowns.find_stands`). The day then adds to `RUNS` the columns of
`MATCHED_RUN_COLUMNS` (assignment to trips, duplicates).
"""

from __future__ import annotations

import polars as pl

from core.schema import Column, Table, cols

ROW = (
    "row",
    pl.Int64(),
    "the ping's row in the batch's cleaned pings (by vehicle, then time)",
    False,
)
SHAPE_IDX = ("shape_idx", pl.Int32(), "the shape's row in `Network.shapes`", False)
STRETCH_INDEX = (
    "stretch_index",
    pl.Int64(),
    "number of the stretch, unique in the batch (stretches in (shape, vehicle) order)",
    False,
)
VEHICLE_ID = ("vehicle_id", pl.String(), "fleet number", False)
RUN_INDEX = (
    "run_index",
    pl.Int32(),
    "order of the run among the vehicle's runs of the batch, by start, from 0 (as stored)",
    False,
)

PING_CANDIDATES = Table(
    "ping_candidates",
    "Each ping's position on every shape that passes within `on_route_buffer_m` of it, one "
    "pass per (ping, shape) (`project.project_pings`); rows by ping, then shape.",
    cols(
        ROW,
        SHAPE_IDX,
        ("dist_m", pl.Float64(), "position of the ping along the shape, metres", False),
        ("offset_m", pl.Float64(), "distance from the ping to the shape, metres", False),
    ),
)

STRETCHES = Table(
    "stretches",
    "Stretches of forward progress of one vehicle along one shape between terminals, with "
    "the distance run on the itinerary (`stretches.cut_stretches`); only those with at least "
    "`run_min_progress_m` of observed progress. A run is a stretch that is kept.",
    cols(
        STRETCH_INDEX,
        ("first_row", pl.Int64(), "row of the stretch's first ping", False),
        SHAPE_IDX,
        ("n_mid_pings", pl.Int64(), "pings of the stretch off the terminals", False),
        ("first_dist_m", pl.Float64(), "position of its first ping along the shape, metres", False),
        (
            "max_dist_m",
            pl.Float64(),
            "furthest position of its pings along the shape, metres",
            False,
        ),
        ("first_s", pl.Float64(), "time of its first ping, epoch seconds", False),
        ("last_s", pl.Float64(), "time of its last ping, epoch seconds", False),
        ("n_off_route", pl.Int64(), "excursions off the shape inside it", False),
        ("off_route_s", pl.Float64(), "seconds spent off the shape inside it", False),
        ("is_departed", pl.Boolean(), "a terminal ping at the origin just before it", False),
        ("is_arrived", pl.Boolean(), "a terminal ping at the destination just after it", False),
        (
            "distance_run_m",
            pl.Float64(),
            "metres run on the itinerary (progress on the shape, plus the likely share across "
            "excursions and silences)",
            False,
        ),
        (
            "observed_progress_m",
            pl.Float64(),
            "metres of progress on the shape between pings at most `gap_s` apart (no credit "
            "for silences or excursions)",
            False,
        ),
        (
            "gps_gap_s",
            pl.Float64(),
            "seconds of GPS silence credited to it (`GapCredit`; 0: none)",
            False,
        ),
        ("gps_gap_m", pl.Float64(), "metres of it credited across those silences", False),
        ("origin_dist_m", pl.Float64(), "where the shape's trips start along it, metres", False),
        ("destination_dist_m", pl.Float64(), "where the shape's trips end along it, metres", False),
        ("length_m", pl.Float64(), "length of the shape, metres", False),
        (
            "start_dist_m",
            pl.Float64(),
            "where the stretch starts along the shape (the origin when departed), metres",
            False,
        ),
        (
            "end_dist_m",
            pl.Float64(),
            "where the stretch ends along the shape (the destination when arrived), metres",
            False,
        ),
    ),
)

POINT_KINDS = {0: "departure anchor", 1: "ping", 2: "arrival anchor"}
"""`point_kind` of `STRETCH_POINTS`"""

STRETCH_POINTS = Table(
    "stretch_points",
    "Every stretch's departure anchor, pings and arrival anchor (all stretches, also those "
    "left out of `STRETCHES`), in (stretch, kind, time) order: a terminal ping closes the "
    "stretch before it and opens the next one.",
    cols(
        STRETCH_INDEX,
        ("point_kind", pl.Int8(), "0 departure anchor, 1 ping, 2 arrival anchor", False),
        ROW,
        ("t_s", pl.Float64(), "time of the ping, epoch seconds", False),
        (
            "dist_m",
            pl.Float64(),
            "position along the shape, metres: the ping's, or the shape's origin / destination "
            "for an anchor",
            False,
        ),
    ),
)

RUNS = Table(
    "runs",
    "One row per run of a vehicle along one shape (`runs.build_runs`): the stretches kept "
    "after the minimum pings and the dominance of better runs of the same vehicle.",
    cols(
        VEHICLE_ID,
        RUN_INDEX,
        SHAPE_IDX,
        ("shape_id", pl.String(), "itinerary run", False),
        ("route_id", pl.String(), "line of the shape"),
        ("direction_id", pl.Int32(), "direction of the shape"),
        ("first_dist_m", pl.Float64(), "position of its first ping along the shape, metres", False),
        (
            "max_dist_m",
            pl.Float64(),
            "furthest position of its pings along the shape, metres",
            False,
        ),
        ("origin_dist_m", pl.Float64(), "where the shape's trips start along it, metres", False),
        ("destination_dist_m", pl.Float64(), "where the shape's trips end along it, metres", False),
        ("length_m", pl.Float64(), "length of the shape, metres", False),
        ("start_dist_m", pl.Float64(), "where the run starts along the shape, metres", False),
        ("end_dist_m", pl.Float64(), "where the run ends along the shape, metres", False),
        ("distance_run_m", pl.Float64(), "metres run on the itinerary", False),
        (
            "gps_gap_s",
            pl.Float64(),
            "seconds of GPS silence credited inside the run or at its ends (0: none)",
            False,
        ),
        (
            "gps_gap_m",
            pl.Float64(),
            "metres of `distance_run_m` credited across those silences (not seen by a fix)",
            False,
        ),
        ("coverage_ratio", pl.Float64(), "share of the itinerary covered (0-1)", False),
        ("is_departed", pl.Boolean(), "the run left the origin terminal", False),
        ("is_arrived", pl.Boolean(), "the run reached the destination terminal", False),
        ("first_s", pl.Float64(), "time of its first ping, epoch seconds", False),
        ("last_s", pl.Float64(), "time of its last ping, epoch seconds", False),
        (
            "started_s",
            pl.Float64(),
            "departure from the start (back-extrapolated), or the first ping, epoch seconds",
            False,
        ),
        (
            "ended_s",
            pl.Float64(),
            "arrival at the destination when arrived, else the last ping, epoch seconds",
            False,
        ),
        ("first_ping_id", pl.Int64(), "first ping of the run (evidence)", False),
        ("last_ping_id", pl.Int64(), "last ping of the run (evidence)", False),
        ("n_pings", pl.UInt32(), "pings of the run, anchors included", False),
        ("n_off_route", pl.Int32(), "excursions off the shape inside the run", False),
        ("off_route_s", pl.Int32(), "seconds off the shape inside the run", False),
        (
            "gps_completeness_ratio",
            pl.Float64(),
            "share of the run's minutes with at least one ping (0-1)",
            False,
        ),
        (
            "silence_first_s",
            pl.Float64(),
            "seconds of GPS silence (gaps over `gap_s`) of the vehicle up to the run's first ping",
            False,
        ),
        (
            "silence_last_s",
            pl.Float64(),
            "the same up to its last ping (the difference between runs: silence between them)",
            False,
        ),
        ("reported_trip_id", pl.String(), "the trip id the device reported most on the run"),
        (
            "alt_shapes",
            pl.List(pl.Int32()),
            "`shape_idx` of shapes the vehicle ran as far at the same time (identical itineraries)",
            False,
        ),
    ),
)

MATCHED_RUN_COLUMNS: tuple[Column, ...] = cols(
    ("trip_id", pl.String(), "scheduled trip the run was assigned (null: none)"),
    ("departure_delay_s", pl.Int32(), "departure minus the trip's planned time there, seconds"),
    ("match_method", pl.String(), "'reported' or 'inferred'", False),
    ("is_counted", pl.Boolean(), "false for a run that duplicates a trip already served", False),
)
"""what the day adds to `RUNS` (`assign.match_runs_to_trips`, then the duplicates' mark)"""

TRACK = Table(
    "track",
    "The pings of every run with monotone progress along its shape (`runs.build_runs`, "
    "`crossings.build_track`): each run's rows together, in time order, runs by vehicle and "
    "`run_index`. Stop visits and departures are read from it (`crossings`).",
    cols(
        VEHICLE_ID,
        ("ping_id", pl.Int64(), "the stored ping (the departure anchor's terminal ping)", False),
        ("t_s", pl.Float64(), "time of the ping, epoch seconds", False),
        (
            "prog_m",
            pl.Float64(),
            "running maximum of the position along the shape, metres (an anchor: the origin or "
            "destination)",
            False,
        ),
        RUN_INDEX,
        ("v_prev_m_s", pl.Float64(), "speed of the step from the previous ping, m/s (clipped)"),
        ("v_next_m_s", pl.Float64(), "speed of the step to the next ping, m/s (clipped)"),
        ("t_prev_s", pl.Float64(), "time of the run's previous ping, epoch seconds"),
        ("t_next_s", pl.Float64(), "time of the run's next ping, epoch seconds"),
    ),
)

BREAKDOWN_STANDS = Table(
    "breakdown_stands",
    "Breakdown evidence in a batch's pings before any run is matched (`breakdowns.find_stands`), "
    "and, in `find_breakdowns`, the day's declared incidents in the same columns.",
    cols(
        VEHICLE_ID,
        ("started_s", pl.Float64(), "start of the stand or event, epoch seconds", False),
        ("ended_s", pl.Float64(), "end of the stand, epoch seconds (null: an instant event)"),
        ("source", pl.String(), "'inferred', 'event_code' or 'incident'", False),
        ("incident_id", pl.String(), "the declared incident (source 'incident')"),
        ("lat", pl.Float64(), "where it stood (mean of its pings), degrees"),
        ("lon", pl.Float64(), "where it stood (mean of its pings), degrees"),
        ("first_ping_id", pl.Int64(), "first ping of the evidence"),
        ("last_ping_id", pl.Int64(), "last ping of the evidence"),
        ("evidence", pl.String(), "what shows it, in words (pt-BR)", False),
    ),
)
