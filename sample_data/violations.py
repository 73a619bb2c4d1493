"""Injected infractions with their truth, for the detections of issue 18 (BG Anexo I).

Each function takes what the simulator wrote (reported pings, fare taps, truth trips), changes
a few records the way the infraction would show in real data, and returns the changed frame
with the truth of what it injected. They are applied after `simulate` (their own random
streams), so a run without them is byte-identical to before.

- `inject_speeding`: runs of consecutive fixes where the vehicle really goes faster than the
  limit (positions moved along its heading, speeds reported accordingly) — LXXII;
- `inject_fare_violations`: taps charged above the authorised fare of their class, and
  exempt or student taps on selective vehicles — LXVI, XIV;
- `inject_stoppage`: an operator's programmed trips not run over a window of a day — LXXXII;
- `inject_door_events`: door events at stops (lawful) and in the middle of runs, far from any
  stop (VI);
- `inject_skipped_stops`: door sensors on some vehicles, opening at every stop they visit,
  except at a few stops of some trips (XVII).
"""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from zoneinfo import ZoneInfo

import numpy as np
import polars as pl

EARTH_RADIUS_M = 6_371_000.0
DOOR_EVENT = "door_open"

SPEEDING_TRUTH = pl.Schema(
    {
        "vehicle_id": pl.String(),
        "start_at": pl.Datetime("us", "UTC"),
        "end_at": pl.Datetime("us", "UTC"),
        "speed_m_s": pl.Float64(),
    }
)


def inject_speeding(
    pings: pl.DataFrame,
    n_episodes: int,
    *,
    seed: int,
    speed_m_s: tuple[float, float] = (19.0, 24.0),
    n_fixes: tuple[int, int] = (3, 6),
    max_interval_s: float = 45.0,
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """(pings, truth): `n_episodes` runs of consecutive fixes of a moving vehicle rewritten as
    a burst at a speed drawn from `speed_m_s`: each fix of the run moves along the heading of
    the fix before it by speed × elapsed time, and reports that speed (±3 %). Pings are one per
    (vehicle_id, event_at) (duplicates dropped, as the store does), sorted by vehicle and time.
    Truth (SPEEDING_TRUTH): vehicle_id, start_at and end_at (first and last fast fix), speed."""
    rng = np.random.default_rng([seed, 18001])
    p = pings.unique(["vehicle_id", "event_at"], keep="first").sort("vehicle_id", "event_at")
    p = p.with_columns(pl.col("vehicle_id").cast(pl.String))
    veh = p["vehicle_id"].to_numpy()
    t = p["event_at"].dt.epoch("us").to_numpy() / 1e6
    lat = p["lat"].to_numpy().copy()
    lon = p["lon"].to_numpy().copy()
    speed = p["speed_m_s"].to_numpy().copy()
    heading = p["heading_deg"].fill_null(0.0).to_numpy()
    n = len(t)
    longest = n_fixes[1]
    # a run may start at i when i-1 .. i+longest-1 are one vehicle, close in time and moving
    ok = np.zeros(n, dtype=bool)
    if n > longest + 1:
        before = np.arange(n - longest - 1)  # the fix before the run
        good = np.ones(len(before), dtype=bool)
        for k in range(longest + 1):
            good &= speed[before + k] > 2.0
            if k < longest:
                good &= veh[before + k] == veh[before + k + 1]
                good &= (t[before + k + 1] - t[before + k]) <= max_interval_s
        ok[before + 1] = good
    candidates = np.flatnonzero(ok)
    rng.shuffle(candidates)
    taken: list[int] = []
    busy = np.zeros(n, dtype=bool)
    for i in candidates.tolist():
        if len(taken) == n_episodes:
            break
        # clear of other runs by ten fixes, so runs never touch
        lo, hi = max(0, i - 10), min(n, i + longest + 10)
        if busy[lo:hi].any():
            continue
        busy[lo:hi] = True
        taken.append(int(i))
    rows = []
    for i in sorted(taken):
        m = int(rng.integers(n_fixes[0], n_fixes[1] + 1))
        v = float(rng.uniform(*speed_m_s))
        h = np.deg2rad(heading[i - 1])
        for k in range(i, i + m):
            d = v * (t[k] - t[i - 1])
            lat[k] = lat[i - 1] + np.rad2deg(d * np.cos(h) / EARTH_RADIUS_M)
            lon[k] = lon[i - 1] + np.rad2deg(
                d * np.sin(h) / (EARTH_RADIUS_M * np.cos(np.deg2rad(lat[i - 1])))
            )
            speed[k] = round(v * float(rng.normal(1.0, 0.01)), 1)
        rows.append((veh[i], t[i], t[i + m - 1], v))
    out = p.with_columns(
        pl.Series("lat", np.round(lat, 6)),
        pl.Series("lon", np.round(lon, 6)),
        pl.Series("speed_m_s", speed),
    )
    truth = pl.DataFrame(
        rows, schema=["vehicle_id", "start_s", "end_s", "speed_m_s"], orient="row"
    ).select(
        pl.col("vehicle_id").cast(pl.String),
        *[
            pl.from_epoch((pl.col(c) * 1e6).round(0).cast(pl.Int64), time_unit="us")
            .dt.replace_time_zone("UTC")
            .alias(a)
            for c, a in (("start_s", "start_at"), ("end_s", "end_at"))
        ],
        pl.col("speed_m_s").cast(pl.Float64),
    )
    return out, truth.cast(SPEEDING_TRUTH)


BENEFIT_CLASSES = ("student", "elderly", "disabled", "exempt")


def inject_fare_violations(
    taps: pl.DataFrame,
    vehicles: pl.DataFrame,
    *,
    n_over: int,
    n_selective_benefit: int,
    seed: int,
    tariff: float,
    overcharge: tuple[float, float] = (0.3, 2.0),
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """(taps, truth). First the lawful baseline: the simulator draws fare classes without
    looking at the service, but selective service admits no exemption or discount (BG art. 6,
    50 §2, 51 §2), so benefit taps on selective vehicles become full fares. Then `n_over`
    taps on any vehicle are charged `overcharge` reais above their lawful amount (LXVI), and
    `n_selective_benefit` full taps on selective vehicles become student (half) or elderly
    (free) taps (XIV). Truth: transaction_id, kind ('over_tariff' or 'benefit_on_selective')."""
    rng = np.random.default_rng([seed, 18002])
    selective = (
        vehicles.filter(pl.col("service_class") == "selective")["vehicle_id"].cast(pl.String)
    ).implode()
    on_sel = pl.col("vehicle_id").cast(pl.String).is_in(selective)
    out = taps.with_columns(
        pl.when(on_sel & pl.col("fare_class").is_in(BENEFIT_CLASSES))
        .then(pl.lit("full"))
        .otherwise(pl.col("fare_class"))
        .alias("fare_class"),
        pl.when(on_sel & pl.col("fare_class").is_in(BENEFIT_CLASSES))
        .then(pl.lit(tariff))
        .otherwise(pl.col("amount"))
        .alias("amount"),
    ).with_row_index("_i")
    sel_full = out.filter(on_sel & (pl.col("fare_class") == "full"))["_i"].to_numpy()
    benefit = rng.choice(sel_full, size=min(n_selective_benefit, len(sel_full)), replace=False)
    rest = np.setdiff1d(out["_i"].to_numpy(), benefit)
    over = rng.choice(rest, size=min(n_over, len(rest)), replace=False)
    extra = np.round(rng.uniform(*overcharge, len(over)), 2)
    to_student = rng.random(len(benefit)) < 0.5
    cls = out["fare_class"].to_numpy().copy()
    amount = out["amount"].to_numpy().copy()
    cls[benefit] = np.where(to_student, "student", "elderly")
    amount[benefit] = np.where(to_student, round(tariff / 2, 2), 0.0)
    amount[over] = np.round(amount[over] + extra, 2)
    out = out.with_columns(pl.Series("fare_class", cls), pl.Series("amount", amount))
    ids = out["transaction_id"].to_numpy()
    truth = pl.DataFrame(
        {
            "transaction_id": np.concatenate([ids[over], ids[benefit]]),
            "kind": ["over_tariff"] * len(over) + ["benefit_on_selective"] * len(benefit),
        },
        schema={"transaction_id": pl.String, "kind": pl.String},
    )
    return out.drop("_i"), truth


STOPPAGE_TRUTH = pl.Schema(
    {
        "operator_id": pl.String(),
        "service_date": pl.Date(),
        "start_at": pl.Datetime("us", "UTC"),
        "end_at": pl.Datetime("us", "UTC"),
    }
)


def inject_stoppage(
    trips: pl.DataFrame,
    operator_of_route: pl.DataFrame,
    stoppages: list[tuple[str, date, str, str]],
    tz: str,
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """(trips, truth): for each (operator_id, service_date, 'HH:MM', 'HH:MM' local) every trip
    of the operator's lines planned to start in the window is not run: true_outcome and
    injected 'suppressed' / 'stoppage', no vehicle, not justified. `trips` is the simulator's
    truth/trips.parquet; `operator_of_route`: route_id, operator_id. Truth (STOPPAGE_TRUTH):
    operator_id, service_date, start_at, end_at of each window (UTC)."""
    zone = ZoneInfo(tz)
    out = trips.join(operator_of_route, on="route_id", how="left")
    rows = []
    for op, day, first, last in stoppages:
        start = datetime.combine(day, datetime.strptime(first, "%H:%M").time(), zone)
        end = datetime.combine(day, datetime.strptime(last, "%H:%M").time(), zone)
        start, end = start.astimezone(UTC), end.astimezone(UTC)
        if end <= start:
            end += timedelta(days=1)
        hit = (
            (pl.col("operator_id") == op)
            & (pl.col("service_date") == day)
            & (pl.col("planned_start_at") >= start)
            & (pl.col("planned_start_at") < end)
        )
        out = out.with_columns(
            pl.when(hit).then(pl.lit("suppressed")).otherwise("true_outcome").alias("true_outcome"),
            pl.when(hit).then(pl.lit("stoppage")).otherwise("injected").alias("injected"),
            pl.when(hit).then(pl.lit(False)).otherwise("is_justified").alias("is_justified"),
            pl.when(hit).then(pl.lit(None)).otherwise("vehicle_id").alias("vehicle_id"),
        )
        rows.append((op, day, start, end))
    truth = pl.DataFrame(rows, schema=list(STOPPAGE_TRUTH), orient="row").cast(STOPPAGE_TRUTH)
    return out.drop("operator_id"), truth


DOOR_TRUTH = pl.Schema({"vehicle_id": pl.String(), "event_at": pl.Datetime("us", "UTC")})


def inject_door_events(
    pings: pl.DataFrame,
    stop_visits: pl.DataFrame,
    stops: pl.DataFrame,
    runs: pl.DataFrame,
    *,
    n_at_stops: int,
    n_off_stop: int,
    seed: int,
    gps_sigma_m: float = 8.0,
    min_off_m: float = 200.0,
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """(pings, truth). The simulated units send no door events; this adds them:
    `n_at_stops` lawful ones (a fix at a stop visited, 5 s after the true arrival, GPS noise
    `gps_sigma_m`, speed 0) from truth/stop_visits.parquet, and marks `n_off_stop` fixes taken
    during a run (`runs`: vehicle_id, started_at, ended_at) farther than `min_off_m` from every
    stop as door events (VI). `stops`: stop_id, stop_lat, stop_lon. Pings as `inject_speeding`
    returns them (one per vehicle and instant). Truth (DOOR_TRUTH): the off-stop events."""
    from scipy.spatial import cKDTree

    rng = np.random.default_rng([seed, 18004])
    p = pings.unique(["vehicle_id", "event_at"], keep="first").with_columns(
        pl.col("vehicle_id").cast(pl.String)
    )
    lat0 = float(stops["stop_lat"].mean())  # type: ignore[arg-type]
    rad = np.pi / 180.0

    def xy(lat: np.ndarray, lon: np.ndarray) -> np.ndarray:
        return np.column_stack(
            [lon * rad * EARTH_RADIUS_M * np.cos(lat0 * rad), lat * rad * EARTH_RADIUS_M]
        )

    tree = cKDTree(xy(stops["stop_lat"].to_numpy(), stops["stop_lon"].to_numpy()))
    dist, _ = tree.query(xy(p["lat"].to_numpy(), p["lon"].to_numpy()))
    far = (
        p.with_row_index("_i")
        .with_columns(pl.Series("_d", dist))
        .filter(pl.col("_d") > min_off_m)
        .join(
            runs.select(pl.col("vehicle_id").cast(pl.String), "started_at", "ended_at"),
            on="vehicle_id",
        )
        .filter(pl.col("event_at").is_between("started_at", "ended_at"))
        .unique("_i")
        .sort("_i")
    )
    off = rng.choice(far["_i"].to_numpy(), size=min(n_off_stop, far.height), replace=False)
    has_codes = "event_code" in p.columns
    marked = p.with_row_index("_i").with_columns(
        pl.when(pl.col("_i").is_in(pl.Series(off).implode()))
        .then(pl.lit(DOOR_EVENT))
        .otherwise(pl.col("event_code") if has_codes else pl.lit(None, pl.String))
        .alias("event_code")
    )
    visits = stop_visits.filter(
        pl.col("arrived_at").is_not_null() & pl.col("vehicle_id").is_not_null()
    )
    pick = visits.with_row_index("_v").filter(
        pl.col("_v").is_in(
            pl.Series(
                rng.choice(visits.height, size=min(n_at_stops, visits.height), replace=False)
            ).implode()
        )
    )
    at = pick.join(stops.select("stop_id", "stop_lat", "stop_lon"), on="stop_id").join(
        p.group_by("vehicle_id").agg(pl.col("operator_id").first()), on="vehicle_id"
    )
    noise = rng.normal(0.0, gps_sigma_m, (at.height, 2))
    lawful = at.select(
        "vehicle_id",
        (pl.col("arrived_at") + pl.duration(seconds=5)).alias("event_at"),
        (pl.col("stop_lat") + pl.Series(noise[:, 1]) / (rad * EARTH_RADIUS_M))
        .round(6)
        .alias("lat"),
        (pl.col("stop_lon") + pl.Series(noise[:, 0]) / (rad * EARTH_RADIUS_M * np.cos(lat0 * rad)))
        .round(6)
        .alias("lon"),
        pl.lit(0.0).alias("speed_m_s"),
        pl.lit(DOOR_EVENT).alias("event_code"),
        "operator_id",
    )
    out = pl.concat([marked.drop("_i"), lawful], how="diagonal_relaxed").sort(
        "vehicle_id", "event_at"
    )
    truth = marked.filter(pl.col("_i").is_in(pl.Series(off).implode())).select(list(DOOR_TRUTH))
    return out, truth.cast(DOOR_TRUTH)


SKIPPED_TRUTH = pl.Schema(
    {"trip_id": pl.String(), "stop_sequence": pl.Int32(), "stop_id": pl.String()}
)


def inject_skipped_stops(
    pings: pl.DataFrame,
    stop_visits: pl.DataFrame,
    stops: pl.DataFrame,
    *,
    vehicle_ids: list[str],
    n_skipped: int,
    seed: int,
    gps_sigma_m: float = 8.0,
    seen_within_m: float = 30.0,
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """(pings, truth). The `vehicle_ids` get a working door sensor: a door event 2 s after the
    true arrival at every stop they visit (truth/stop_visits.parquet), at the stop's point plus
    GPS noise `gps_sigma_m`, speed 0. At `n_skipped` intermediate stops of their trips the
    doors stay shut (no event): stops where a fix of the vehicle lies within `seen_within_m`
    of the stop around the visit (the vehicle is seen passing it; a stop between two far fixes
    cannot be judged). Pings as `inject_speeding` returns them. Truth (SKIPPED_TRUTH): trip_id,
    stop_sequence, stop_id of the stops skipped."""
    rng = np.random.default_rng([seed, 18005])
    p = pings.unique(["vehicle_id", "event_at"], keep="first").with_columns(
        pl.col("vehicle_id").cast(pl.String)
    )
    lat0 = float(stops["stop_lat"].mean())  # type: ignore[arg-type]
    m_lat = np.pi / 180.0 * EARTH_RADIUS_M
    m_lon = m_lat * np.cos(np.deg2rad(lat0))
    ends = (
        pl.col("stop_sequence").min().over("trip_id"),
        pl.col("stop_sequence").max().over("trip_id"),
    )
    visits = (
        stop_visits.with_columns(pl.col("vehicle_id").cast(pl.String))
        .filter(
            pl.col("arrived_at").is_not_null()
            & pl.col("vehicle_id").is_in(pl.Series(vehicle_ids, dtype=pl.String).implode())
        )
        .with_columns(
            ((pl.col("stop_sequence") > ends[0]) & (pl.col("stop_sequence") < ends[1])).alias(
                "_mid"
            )
        )
        .join(stops.select("stop_id", "stop_lat", "stop_lon"), on="stop_id")
        .with_row_index("_v")
    )
    seen = (
        visits.filter("_mid")
        .join(p.select("vehicle_id", "event_at", "lat", "lon"), on="vehicle_id")
        .filter(
            pl.col("event_at").is_between(
                pl.col("arrived_at") - pl.duration(seconds=60),
                pl.col("departed_at") + pl.duration(seconds=60),
            )
            & (
                (
                    ((pl.col("lat") - pl.col("stop_lat")) * m_lat) ** 2
                    + ((pl.col("lon") - pl.col("stop_lon")) * m_lon) ** 2
                ).sqrt()
                <= seen_within_m
            )
        )["_v"]
        .unique()
        .sort()
        .to_numpy()
    )
    shut = rng.choice(seen, size=min(n_skipped, len(seen)), replace=False)
    opened = visits.filter(~pl.col("_v").is_in(pl.Series(shut).implode()))
    operator = p.group_by("vehicle_id").agg(pl.col("operator_id").first())
    noise = rng.normal(0.0, gps_sigma_m, (opened.height, 2))
    doors = opened.join(operator, on="vehicle_id", how="left").select(
        "vehicle_id",
        (pl.col("arrived_at") + pl.duration(seconds=2)).alias("event_at"),
        (pl.col("stop_lat") + pl.Series(noise[:, 1]) / m_lat).round(6).alias("lat"),
        (pl.col("stop_lon") + pl.Series(noise[:, 0]) / m_lon).round(6).alias("lon"),
        pl.lit(0.0).alias("speed_m_s"),
        pl.lit(DOOR_EVENT).alias("event_code"),
        "operator_id",
    )
    out = pl.concat([p, doors], how="diagonal_relaxed").sort("vehicle_id", "event_at")
    truth = visits.filter(pl.col("_v").is_in(pl.Series(shut).implode())).select(list(SKIPPED_TRUTH))
    return out, truth.cast(SKIPPED_TRUTH)
