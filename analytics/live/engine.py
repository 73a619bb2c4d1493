"""`LiveEngine`: the state of every vehicle, updated one batch of MQTT records at a time.

Its clock is the latest fix time it has seen (a replay and live operation behave alike). Each
`update` is vectorised over the batch: parse and project the pings, refresh the current run of
the vehicles that reported (batch matcher's rules over their recent window), re-assign the
current runs of all active vehicles to trips, place each vehicle on its trip (delay), add the
fare taps to the live loads, predict the stops ahead, and mark CANCELED the trips nobody runs
at their time. The result is published as an immutable `LiveView` that readers (the HTTP
server's threads) take without locking.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field, replace

import polars as pl
from pyproj import Transformer

from analytics.live.accuracy import horizon_bucket
from analytics.live.continuity import (
    ASSIGNED_SCHEMA,
    build_block_expectations,
    match_block_continuations,
)
from analytics.live.feeds import trip_descriptor_columns
from analytics.live.occupancy import compute_live_loads, compute_occupancy
from analytics.live.options import LiveOptions
from analytics.live.predict import (
    PREDICTION_COLUMNS,
    compute_stop_predictions,
    compute_trip_positions,
)
from analytics.live.reference import LiveReference
from analytics.live.runs import compute_current_runs, match_current_runs
from analytics.live.stability import PENDING_SCHEMA, hold_assignments, locate_on_held_trips
from analytics.matching.options import MatchOptions
from core.profile import Profile

PING_SCHEMA: dict[str, pl.DataType] = {
    "ping_id": pl.Int64(),
    "vehicle_id": pl.String(),
    "event_at": pl.Datetime("us", "UTC"),
    "t_s": pl.Float64(),
    "lat": pl.Float64(),
    "lon": pl.Float64(),
    "speed_m_s": pl.Float64(),
    "heading_deg": pl.Float64(),
    "reported_trip_id": pl.String(),
    "x_m": pl.Float64(),
    "y_m": pl.Float64(),
}

VEHICLE_SCHEMA: dict[str, pl.DataType] = {
    "vehicle_id": pl.String(),
    "trip_id": pl.String(),
    "t_s": pl.Float64(),
    "lat": pl.Float64(),
    "lon": pl.Float64(),
    "heading_deg": pl.Float64(),
    "speed_m_s": pl.Float64(),
    "dist_m": pl.Float64(),
    "delay_s": pl.Float64(),
    "next_stop_sequence": pl.Int32(),
    "next_stop_id": pl.String(),
    "load": pl.Float64(),
    "occupancy_status": pl.String(),
    "occupancy_percentage": pl.Int32(),
}


def read_avl_batch(raw: pl.DataFrame, transformer: Transformer) -> pl.DataFrame:
    """Pings of one batch of raw AVL records (text fields, as the MQTT decoder gives them).

    Output `PING_SCHEMA` without ping_id: records without a vehicle, a time or a position are
    left out (the store's writer quarantines them with the reason).
    """
    if raw.height == 0:
        return pl.DataFrame(schema={k: v for k, v in PING_SCHEMA.items() if k != "ping_id"})
    cols = raw.columns
    num = {
        c: pl.col(c).cast(pl.Float64, strict=False) if c in cols else pl.lit(None, pl.Float64)
        for c in ("lat", "lon", "speed_m_s", "heading_deg")
    }
    trip = pl.col("trip_id") if "trip_id" in cols else pl.lit(None, pl.String)
    pings = raw.select(
        pl.col("vehicle_id").cast(pl.String),
        pl.col("event_at").str.to_datetime(time_zone="UTC", time_unit="us", strict=False),
        *[e.alias(c) for c, e in num.items()],
        trip.alias("reported_trip_id"),
    ).drop_nulls(["vehicle_id", "event_at", "lat", "lon"])
    x, y = transformer.transform(pings["lon"].to_numpy(), pings["lat"].to_numpy())
    return pings.with_columns(
        (pl.col("event_at").dt.epoch("us") / 1e6).alias("t_s"),
        pl.Series("x_m", x),
        pl.Series("y_m", y),
    ).select([c for c in PING_SCHEMA if c != "ping_id"])


@dataclass(frozen=True)
class LiveView:
    """One published state: what the feeds and the stop displays show.

    `vehicles`: `VEHICLE_SCHEMA` (one row per active vehicle); `positions`: vehicles on a trip
    with their place and delay (`compute_trip_positions`); `predictions`:
    `PREDICTION_COLUMNS`; `canceled`: trip_id of trips nobody runs at their time;
    `descriptors`: `trip_descriptor_columns`; `clock_s`: epoch seconds of the newest fix;
    `updated_at_s`: wall-clock epoch seconds of the update; `version`: counter of published
    views (every batch); `state_version`: counter of trip-state refreshes (assignment and
    predictions: the trip-updates and alerts feeds change only with it); `state_clock_s`: epoch
    seconds of the newest fix the trip state was computed with (behind `clock_s` while a
    refresh is pending or running).
    """

    version: int
    clock_s: float
    updated_at_s: float
    vehicles: pl.DataFrame
    positions: pl.DataFrame
    predictions: pl.DataFrame
    canceled: pl.DataFrame
    descriptors: pl.DataFrame
    incidents: pl.DataFrame
    state_version: int = 0
    timings_ms: dict[str, float] = field(default_factory=dict)
    state_clock_s: float = 0.0


class LiveEngine:
    """The live state of the fleet for one service day (see the module docstring)."""

    def __init__(
        self,
        reference: LiveReference,
        profile: Profile,
        options: LiveOptions | None = None,
        match_options: MatchOptions | None = None,
    ) -> None:
        self.reference = reference
        self.profile = profile
        self.options = options or LiveOptions()
        self.match_options = match_options or MatchOptions()
        self.transformer = Transformer.from_crs(4326, reference.crs_epsg, always_xy=True)
        self.known_vehicles = reference.capacity.select("vehicle_id")
        self.descriptors = trip_descriptor_columns(reference.trips, reference.service_date)
        self.pings = pl.DataFrame(schema=PING_SCHEMA)
        self.runs: pl.DataFrame | None = None  # current run per vehicle (build_runs columns)
        self.assigned = pl.DataFrame(schema=ASSIGNED_SCHEMA)
        # refreshes in a row at which another trip was proposed for a vehicle (hysteresis)
        self.pending = pl.DataFrame(schema=PENDING_SCHEMA)
        # trips finished by a run (vehicle, run start, end): not offered to other runs again
        self.completed = pl.DataFrame(
            schema={
                "trip_id": pl.String,
                "vehicle_id": pl.String,
                "started_s": pl.Float64,
                "ended_s": pl.Float64,
            }
        )
        self.served = pl.DataFrame(schema={"trip_id": pl.String})
        # the feed's own error per horizon bucket (`accuracy.read_uncertainty`); empty: unknown
        self.uncertainty = pl.DataFrame(
            schema={"horizon_min": pl.Int16, "uncertainty_s": pl.Float64}
        )
        self.boardings = pl.DataFrame(
            schema={
                "transaction_id": pl.String,
                "vehicle_id": pl.String,
                "trip_id": pl.String,
                "board_dist_m": pl.Float64,
            }
        )
        self.n_pings = 0
        self.first_clock_s: float | None = None
        self.clock_s = 0.0
        # latest fix per vehicle (the positions feed) and what arrived since the last refresh
        self.last_fix = pl.DataFrame(schema=PING_SCHEMA)
        self._pending_vehicles = pl.DataFrame(schema={"vehicle_id": pl.String})
        self._pending_fares: list[pl.DataFrame] = []
        self._pending_pings: list[pl.DataFrame] = []
        self._ingest_lock = threading.Lock()  # pings, last fixes, pending work
        self._refresh_lock = threading.Lock()  # one refresh at a time
        self._view_lock = threading.Lock()  # view versions
        self.view = self._empty_view()

    def _empty_view(self) -> LiveView:
        return LiveView(
            0,
            0.0,
            time.time(),
            pl.DataFrame(schema=VEHICLE_SCHEMA),
            pl.DataFrame(
                schema={
                    "vehicle_id": pl.String,
                    "trip_id": pl.String,
                    "t_s": pl.Float64,
                    "dist_m": pl.Float64,
                    "delay_s": pl.Float64,
                }
            ),
            pl.DataFrame(
                schema={
                    c: pl.String
                    if c in ("vehicle_id", "trip_id", "stop_id")
                    else pl.Int32
                    if c in ("stop_sequence", "block_order")
                    else pl.Float64
                    for c in PREDICTION_COLUMNS
                }
            ),
            pl.DataFrame(schema={"trip_id": pl.String}),
            self.descriptors,
            self.reference.incidents,
        )

    # -- the batch update ------------------------------------------------------------------
    def update(self, avl_raw: pl.DataFrame, fares_raw: pl.DataFrame) -> LiveView:
        """Fold one batch of raw AVL and fare records into the state and refresh the trip
        state (`ingest` then `refresh`: what a replay does); publish the new view."""
        self.ingest(avl_raw, fares_raw)
        return self.refresh()

    def ingest(self, avl_raw: pl.DataFrame, fares_raw: pl.DataFrame) -> LiveView:
        """The fast path: add the batch's fixes and taps and publish the new positions at once,
        with the trip state (trip, delay, next stop, load) of the last refresh. Milliseconds
        per batch, so a ping reaches the positions feed while `refresh` runs elsewhere."""
        t0 = time.perf_counter()
        new = read_avl_batch(avl_raw, self.transformer)
        new = new.filter(pl.col("t_s") <= time.time() + self.options.future_skew_s)
        if self.known_vehicles.height:
            new = new.join(self.known_vehicles, on="vehicle_id", how="semi")
        with self._ingest_lock:
            if new.height:
                self._add_pings(new)
                self._pending_vehicles = pl.concat(
                    [self._pending_vehicles, new.select("vehicle_id")]
                ).unique()
            if fares_raw.height:
                self._pending_fares.append(fares_raw)
            if not new.height:
                return self.view
            vehicles = self._vehicles_now(self.view.vehicles)
        with self._view_lock:
            view = replace(
                self.view,
                version=self.view.version + 1,
                clock_s=self.clock_s,
                updated_at_s=time.time(),
                vehicles=vehicles,
                timings_ms={**self.view.timings_ms, "ingest": _ms(t0)},
            )
            self.view = view
        return view

    def refresh(self) -> LiveView:
        """The trip state: re-cut the runs of the vehicles heard since the last refresh,
        re-assign every active vehicle, place it, predict, count loads; publish the view."""
        with self._refresh_lock:
            with self._ingest_lock:
                changed = self._pending_vehicles
                fares = (
                    pl.concat(self._pending_fares, how="diagonal_relaxed")
                    if self._pending_fares
                    else pl.DataFrame()
                )
                pending = self._pending_pings
                state_clock = self.clock_s  # every fix up to here is in this refresh
                self._pending_vehicles = changed.clear()
                self._pending_fares = []
                self._pending_pings = []
            self._merge_pings(pending)
            timings: dict[str, float] = {}
            t1 = time.perf_counter()
            if changed.height:
                self._refresh_runs(changed)
            timings["runs"] = _ms(t1)
            t2 = time.perf_counter()
            self._assign()
            timings["assign"] = _ms(t2)
            t3 = time.perf_counter()
            state = self._build_view(fares, timings)
            timings["view"] = _ms(t3)
            with self._ingest_lock:
                vehicles = self._vehicles_now(state.vehicles)
                clock = self.clock_s
            with self._view_lock:
                view = replace(
                    state,
                    version=self.view.version + 1,
                    state_version=self.view.state_version + 1,
                    state_clock_s=state_clock,
                    clock_s=clock,
                    vehicles=vehicles,
                )
                self.view = view
            return view

    def _vehicles_now(self, state: pl.DataFrame) -> pl.DataFrame:
        """`VEHICLE_SCHEMA`: every active vehicle's latest fix with its trip state from
        `state` (a previous view's vehicles)."""
        trip_cols = [c for c in VEHICLE_SCHEMA if c not in self.last_fix.columns]
        return (
            self._active()
            .select("vehicle_id", "t_s", "lat", "lon", "heading_deg", "speed_m_s")
            .join(state.select("vehicle_id", *trip_cols), on="vehicle_id", how="left")
            .select(list(VEHICLE_SCHEMA))
            .sort("vehicle_id")
        )

    def _add_pings(self, new: pl.DataFrame) -> None:
        ids = pl.int_range(self.n_pings, self.n_pings + new.height, dtype=pl.Int64, eager=True)
        self.n_pings += new.height
        self.clock_s = max(self.clock_s, float(new["t_s"].max()))  # type: ignore[arg-type]
        if self.first_clock_s is None:
            self.first_clock_s = float(new["t_s"].min())  # type: ignore[arg-type]
        fresh = new.with_columns(ids.alias("ping_id")).select(list(PING_SCHEMA))
        # the trace window is consolidated by `refresh`; here only the latest fixes move
        self._pending_pings.append(fresh)
        self.last_fix = (
            pl.concat([self.last_fix, fresh])
            .sort("t_s", maintain_order=True)
            .group_by("vehicle_id", maintain_order=True)
            .last()
            .select(list(PING_SCHEMA))
        )

    def _merge_pings(self, pending: list[pl.DataFrame]) -> None:
        """Add the pending fixes to the trace window (last `window_s`, duplicates dropped)."""
        if not pending:
            return
        keep_after = self.clock_s - self.options.window_s
        self.pings = (
            pl.concat([self.pings, *pending])
            .filter(pl.col("t_s") >= keep_after)
            .unique(["vehicle_id", "event_at"], keep="first", maintain_order=True)
        )

    def _refresh_runs(self, changed: pl.DataFrame) -> None:
        window = self.pings.join(changed, on="vehicle_id", how="semi")
        fresh = compute_current_runs(
            window, self.reference.network, self.match_options, self.options.run_stale_s
        )
        if self.runs is None:
            self.runs = fresh
        else:
            kept = self.runs.join(changed, on="vehicle_id", how="anti")
            self.runs = pl.concat([kept, fresh], how="diagonal_relaxed") if fresh.height else kept

    def _active(self) -> pl.DataFrame:
        """Last fix of each vehicle heard within `active_s` of the clock."""
        return self.last_fix.filter(pl.col("t_s") >= self.clock_s - self.options.active_s)

    def _assign(self) -> None:
        if self.runs is None:
            return
        active = self._active().select("vehicle_id")
        runs = self.runs.join(active, on="vehicle_id", how="semi")
        # trips finished by a run other than the current runs are not offered again
        others = self.completed.join(
            runs.select("vehicle_id", "started_s"), on=["vehicle_id", "started_s"], how="anti"
        )
        matched = (
            match_current_runs(
                runs, self.reference.trips, others.select("trip_id"), self.match_options
            )
            if runs.height
            else runs.with_columns(pl.lit(None, pl.String).alias("trip_id"))
        )
        batch = (
            matched.filter(pl.col("trip_id").is_not_null())
            .with_columns(pl.col("departure_delay_s").cast(pl.Int32))
            .select(list(ASSIGNED_SCHEMA))
            if matched.height
            else pl.DataFrame(schema=ASSIGNED_SCHEMA)
        )
        # block continuity: a vehicle seen on the next trip of its block runs that trip, even
        # before the batch rules can cut its run (and whatever else they matched it to)
        open_trips = self.reference.trips.select("trip_id").join(
            others.select("trip_id"), on="trip_id", how="anti"
        )
        claimed = build_block_expectations(self.completed, self.reference.trips, open_trips).join(
            active, on="vehicle_id", how="semi"
        )
        expected = claimed.join(
            batch.select("vehicle_id", "trip_id"), on=["vehicle_id", "trip_id"], how="anti"
        )
        cont = match_block_continuations(
            self.pings.join(expected.select("vehicle_id"), on="vehicle_id", how="semi"),
            expected,
            self.reference.trips.join(open_trips, on="trip_id", how="semi"),
            self.reference.network,
            self.match_options,
            claimed.select("vehicle_id", "trip_id"),
        )
        batch = batch.join(cont.select("vehicle_id"), on="vehicle_id", how="anti").join(
            cont.select("trip_id"), on="trip_id", how="anti"
        )
        proposed = pl.concat([batch, cont.select(list(ASSIGNED_SCHEMA))])
        held = self.assigned.filter(~pl.col("is_arrived"))
        located = locate_on_held_trips(
            self.pings, held, self.reference.trips, self.reference.network, self.match_options
        )
        self.assigned, self.pending = hold_assignments(
            held,
            proposed,
            located,
            self.pending,
            active,
            switch_after_refreshes=self.options.switch_after_refreshes,
            backtrack_m=self.options.hold_backtrack_m,
            terminal_radius_m=self.match_options.terminal_radius_m,
        )
        done = self.assigned.filter(pl.col("is_arrived")).select(
            "trip_id", "vehicle_id", "started_s", "ended_s"
        )
        self.completed = pl.concat([self.completed, done]).unique(["trip_id"], keep="last")
        self.served = pl.concat([self.served, self.assigned.select("trip_id")]).unique()

    def _build_view(self, fares_raw: pl.DataFrame, timings: dict[str, float]) -> LiveView:
        ref, opt = self.reference, self.options
        last = self._active()
        # on a trip now: the current run's trip; laying over: the trip it last completed
        on_trip = self.assigned.select(
            "vehicle_id",
            "trip_id",
            pl.col("end_dist_m").alias("dist_m"),
            pl.lit(None, pl.Float64).alias("arrived_s"),
            pl.lit(None, pl.Float64).alias("waiting_s"),
        )
        # laying over: the layover counts from the arrival at the terminal; while the vehicle
        # is still where it arrived its next trip cannot start before now (`waiting_s`: the
        # engine's clock). A vehicle gone from there without a trip the engine can see keeps
        # the arrival alone: its next trip is predicted on time, not later every minute
        ended = (
            self.completed.join(on_trip, on="vehicle_id", how="anti")
            .sort("started_s")
            .group_by("vehicle_id")
            .last()
        )
        at_arrival = self.pings.join(
            ended.select("vehicle_id", pl.col("ended_s").alias("t_s")), on=["vehicle_id", "t_s"]
        ).select("vehicle_id", pl.col("x_m").alias("_x0"), pl.col("y_m").alias("_y0"))
        moved = ((pl.col("x_m") - pl.col("_x0")) ** 2 + (pl.col("y_m") - pl.col("_y0")) ** 2).sqrt()
        layover = (
            ended.join(
                last.select("vehicle_id", "x_m", "y_m", pl.col("t_s").alias("t_s_fix")),
                on="vehicle_id",
                how="left",
            )
            .join(at_arrival.unique("vehicle_id"), on="vehicle_id", how="left")
            .select(
                "vehicle_id",
                "trip_id",
                pl.lit(float("inf")).alias("dist_m"),
                pl.col("ended_s").alias("arrived_s"),
                pl.when(moved.fill_null(0.0) <= opt.layover_radius_m)
                .then(pl.max_horizontal("t_s_fix", pl.lit(self.clock_s)))
                .alias("waiting_s"),
            )
        )
        trip_of = pl.concat([on_trip, layover]).join(
            last.filter(pl.col("t_s") >= self.clock_s - opt.silent_s).select("vehicle_id", "t_s"),
            on="vehicle_id",
        )
        positions = compute_trip_positions(trip_of, ref.stop_times)
        t_pred = time.perf_counter()
        predictions = compute_stop_predictions(
            positions,
            ref.stop_times,
            ref.trips,
            delay_decay_s=opt.delay_decay_s,
            min_layover_s=opt.min_layover_s,
            next_trips=opt.next_trips,
            layovers=ref.layovers,
        )
        timings["predict"] = _ms(t_pred)
        if self.uncertainty.height:
            predictions = (
                predictions.with_columns(
                    horizon_bucket(pl.col("predicted_s") - self.clock_s).alias("horizon_min")
                )
                .join(self.uncertainty, on="horizon_min", how="left")
                .drop("horizon_min")
            )
        # live load: taps of this batch boarded where their vehicle is now
        running = positions.filter(pl.col("dist_m").is_finite())
        self._add_boardings(fares_raw, running)
        loads = compute_live_loads(self.boardings, running)
        occupancy = compute_occupancy(loads, ref.capacity, self.profile)
        next_stop = (
            predictions.filter(pl.col("block_order") == 0)
            .sort("stop_sequence")
            .group_by("vehicle_id")
            .first()
            .select(
                "vehicle_id",
                pl.col("stop_sequence").cast(pl.Int32).alias("next_stop_sequence"),
                pl.col("stop_id").alias("next_stop_id"),
            )
        )
        vehicles = (
            last.select("vehicle_id", "t_s", "lat", "lon", "heading_deg", "speed_m_s")
            .join(
                running.select("vehicle_id", "trip_id", "dist_m", "delay_s"),
                on="vehicle_id",
                how="left",
            )
            .join(next_stop, on="vehicle_id", how="left")
            .join(occupancy.drop("standees_per_m2"), on="vehicle_id", how="left")
            .select(list(VEHICLE_SCHEMA))
            .sort("vehicle_id")
        )
        return LiveView(
            version=self.view.version + 1,
            clock_s=self.clock_s,
            updated_at_s=time.time(),
            vehicles=vehicles,
            positions=running,
            predictions=predictions,
            canceled=self._canceled(predictions),
            descriptors=self.descriptors,
            incidents=ref.incidents,
            timings_ms=timings,
        )

    def _add_boardings(self, fares_raw: pl.DataFrame, running: pl.DataFrame) -> None:
        if fares_raw.height and "vehicle_id" in fares_raw.columns:
            taps = fares_raw.select(
                pl.col("transaction_id").cast(pl.String), pl.col("vehicle_id").cast(pl.String)
            ).drop_nulls()
            new = taps.join(
                running.select("vehicle_id", "trip_id", pl.col("dist_m").alias("board_dist_m")),
                on="vehicle_id",
            ).select(self.boardings.columns)
            self.boardings = pl.concat([self.boardings, new]).unique(
                "transaction_id", keep="first", maintain_order=True
            )
        # only the trips being run now carry a load
        self.boardings = self.boardings.join(
            running.select("vehicle_id", "trip_id"), on=["vehicle_id", "trip_id"], how="semi"
        )

    def _canceled(self, predictions: pl.DataFrame) -> pl.DataFrame:
        """Trips past their departure window that no vehicle runs or is predicted to run, and
        that no active vehicle which ran an earlier trip of their block could still reach.

        Only trips the engine could have seen depart (planned after its first fix) qualify.
        """
        if self.first_clock_s is None:
            return pl.DataFrame(schema={"trip_id": pl.String})
        late = float(self.profile.trips.late_departure_s.value) + self.options.cancel_grace_s
        start = pl.col("planned_start_at").dt.epoch("us") / 1e6
        end = pl.col("planned_end_at").dt.epoch("us") / 1e6
        due = self.reference.trips.filter(
            (start + late < self.clock_s) & (end > self.clock_s) & (start >= self.first_clock_s)
        ).select("trip_id")
        # a vehicle still on the road that has run an earlier trip of the block could still
        # run this one (late): not cancelled while it is on its way
        blocks = self.reference.trips.select("trip_id", "block_id", start.alias("_start_s"))
        active = self._active().select("vehicle_id")
        reached = (
            pl.concat(
                [
                    self.completed.select("vehicle_id", "trip_id"),
                    self.assigned.select("vehicle_id", "trip_id"),
                ]
            )
            .join(active, on="vehicle_id", how="semi")
            .join(blocks, on="trip_id")
            .drop_nulls("block_id")
            .group_by("block_id")
            .agg(pl.col("_start_s").max().alias("_reached_s"))
        )
        on_its_way = (
            due.join(blocks, on="trip_id")
            .join(reached, on="block_id")
            .filter(pl.col("_start_s") > pl.col("_reached_s"))
            .select("trip_id")
        )
        return (
            due.join(self.served, on="trip_id", how="anti")
            .join(predictions.select("trip_id").unique(), on="trip_id", how="anti")
            .join(on_its_way, on="trip_id", how="anti")
            .sort("trip_id")
        )


def _ms(since: float) -> float:
    return (time.perf_counter() - since) * 1000.0
