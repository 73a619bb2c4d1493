"""Compare the crowding results of two versions of the code, frame by frame (issue 21).

    # results of each version on the same inputs (a bench cache folder: taps, stop_visits,
    # trips, vehicles, stops as Parquet), the other version's tree first on PYTHONPATH
    PYTHONPATH=/path/to/main python -m tests.analytics.crowding.compare_results \\
        write bench-output/crowding-cache/v300-r3300 /tmp/main-results
    PYTHONPATH=$PWD python -m tests.analytics.crowding.compare_results \\
        write bench-output/crowding-cache/v300-r3300 /tmp/new-results
    python -m tests.analytics.crowding.compare_results compare /tmp/main-results /tmp/new-results

Every non-float column must be identical (rows sorted on them); floats equal to 1e-9, since
group sums add in no fixed order (two runs of one version already differ in the last bits).
Exits 1 when a frame differs. Uses only `compute_crowding`, so any version can write.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import polars as pl
from polars.testing import assert_frame_equal

FRAMES = ("tap_placements", "trip_loads", "trip_crowding", "crowding_summary")
INPUTS = ("taps", "stop_visits", "trips", "vehicles", "stops")


def write_results(inputs: Path, out: Path) -> None:
    """Compute the crowding of the cached inputs and write its four frames under `out`."""
    from analytics.crowding.job import CrowdingInputs, compute_crowding
    from core.profile import load_profile

    frames = {n: pl.read_parquet(inputs / f"{n}.parquet") for n in INPUTS}
    began = time.perf_counter()
    result = compute_crowding(CrowdingInputs(**frames), load_profile("bento-goncalves-2021"))
    print(f"compute_crowding: {time.perf_counter() - began:.2f} s")
    out.mkdir(parents=True, exist_ok=True)
    for name in FRAMES:
        getattr(result, name).write_parquet(out / f"{name}.parquet")


def compare_results(a: Path, b: Path) -> bool:
    """Print how the frames under `a` and `b` compare; True when all are equal."""
    same = True
    for name in FRAMES:
        x, y = pl.read_parquet(a / f"{name}.parquet"), pl.read_parquet(b / f"{name}.parquet")
        try:
            assert x.schema == y.schema, (x.schema, y.schema)
            keys = [c for c, t in x.schema.items() if not t.is_float()]
            floats = [c for c, t in x.schema.items() if t.is_float()]
            xs, ys = x.sort(keys, nulls_last=True), y.sort(keys, nulls_last=True)
            assert_frame_equal(xs.select(keys), ys.select(keys), check_exact=True)
            assert_frame_equal(xs, ys, check_exact=False, rel_tol=1e-12, abs_tol=1e-9)
            cells = sum(int(xs[c].ne_missing(ys[c]).sum()) for c in floats)
            diffs = pl.DataFrame({c: (xs[c] - ys[c]).abs() for c in floats})
            worst = (diffs.max().max_horizontal().item() if floats else None) or 0.0
            print(
                f"{name}: {x.height:,} rows equal, non-float columns identical, same row "
                f"order: {x.select(keys).equals(y.select(keys))}; {cells:,} float cells "
                f"differ in the last bits (max {worst:.1e})"
            )
        except AssertionError as e:
            same = False
            print(f"{name}: DIFFERS: {str(e)[:2000]}")
    return same


def main(argv: list[str]) -> int:
    if len(argv) == 3 and argv[0] == "write":
        write_results(Path(argv[1]), Path(argv[2]))
        return 0
    if len(argv) == 3 and argv[0] == "compare":
        return 0 if compare_results(Path(argv[1]), Path(argv[2])) else 1
    print(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
