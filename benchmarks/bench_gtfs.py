"""GTFS benchmark: load + validate + planned km of the largest shared feed (WMATA, 232 k stop_times).

Side by side in the same run, on the same feed:
- Pontual: `read_feed` + `validate_feed` + `build_geometry` (shapes in metres, every stop placed
  on its shape, planned distance of every trip) + the per-trip durations;
- gtfs_kit: `read_feed` then `compute_trip_stats` (per-trip distances and durations);
- partridge: `load_feed` (reading and typing only; it computes no distances).

Each is timed as the best of `--repeat` runs; the ratios say how many times faster Pontual is.
Targets: >= 3x gtfs_kit, > 1x partridge.

Run: ``.venv/bin/python -m benchmarks.bench_gtfs [--feed PATH] [--repeat N]``.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import polars as pl

from gtfs.read import read_feed
from gtfs.schedule import build_geometry, build_trip_summary
from gtfs.validate import validate_feed

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_FEED = ROOT.parent / "shared" / "data" / "avl_wmata_transittraj" / "gtfs"


def run_pontual(path: Path) -> pl.DataFrame:
    """Read, validate, project, place stops, measure: one row per trip with km and duration."""
    feed = read_feed(path)
    issues = validate_feed(feed)
    assert not [i for i in issues if i.is_error], issues[:3]
    geometry = build_geometry(feed)
    return build_trip_summary(feed, geometry).with_columns(
        (pl.col("last_s") - pl.col("first_s")).alias("duration_s")
    )


def run_gtfs_kit(path: Path) -> Any:
    import gtfs_kit

    feed = gtfs_kit.read_feed(path, dist_units="m")
    return gtfs_kit.compute_trip_stats(feed)


def run_partridge(path: Path) -> Any:
    import partridge

    feed = partridge.load_feed(str(path))
    # partridge reads lazily: touch every table the others read
    for name in ("agency", "stops", "routes", "trips", "stop_times", "shapes", "calendar"):
        getattr(feed, name).shape  # noqa: B018
    return feed


def best_of(fn: Callable[[Path], Any], path: Path, repeat: int) -> tuple[float, Any]:
    best, out = float("inf"), None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn(path)
        best = min(best, time.perf_counter() - t0)
    return best, out


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--feed", type=Path, default=DEFAULT_FEED)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)
    if not args.feed.exists():
        print(f"bench_gtfs: feed not found: {args.feed} (skipped)")
        return
    t_pontual, trips = best_of(run_pontual, args.feed, args.repeat)
    print(f"feed {args.feed}: {trips.height} trips")
    print(f"pontual   read+validate+planned km   {t_pontual:7.3f} s")
    try:
        t_kit, stats = best_of(run_gtfs_kit, args.feed, max(1, args.repeat - 1))
    except ImportError:
        print("gtfs_kit not installed (pip install '.[bench]'): skipped")
    else:
        ours = trips.select("trip_id", "planned_distance_m", "duration_s")
        # gtfs_kit reports distance in km (metric feed) and duration in hours
        theirs = pl.from_pandas(stats[["trip_id", "distance", "duration"]]).with_columns(
            pl.col("distance") * 1000
        )
        both = ours.join(theirs, on="trip_id")
        rel = ((both["planned_distance_m"] - both["distance"]).abs() / both["distance"]).median()
        dur = (both["duration_s"] - both["duration"] * 3600).abs().max()
        print(
            f"gtfs_kit  read_feed+trip_stats       {t_kit:7.3f} s   ratio {t_kit / t_pontual:5.1f}x"
        )
        print(
            f"          same trips: {both.height}, median |km difference| {rel:.2%}, max |duration difference| {dur:.0f} s"
        )
    try:
        t_pt, _ = best_of(run_partridge, args.feed, args.repeat)
    except ImportError:
        print("partridge not installed (pip install '.[bench]'): skipped")
    else:
        print(
            f"partridge load_feed                  {t_pt:7.3f} s   ratio {t_pt / t_pontual:5.1f}x"
        )


if __name__ == "__main__":
    main()
