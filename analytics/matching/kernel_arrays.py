"""Frame columns as the compiled (numba) kernels of matching take them.

A kernel is compiled once per combination of argument types, and a read-only array (what a
null-free column converts to without a copy) is another type than a writable one: every column
goes in as a writable copy of one dtype, so each kernel compiles once.
"""

from __future__ import annotations

import numpy as np
import polars as pl


def to_kernel_array(series: pl.Series, dtype: type[pl.DataType] = pl.Float64) -> np.ndarray:
    """`series` as a writable numpy array of `dtype`; a float column's nulls become NaN (filled
    only when there are some: `fill_null` copies the column even when it has none, a third
    of this function's cost on the kernels' null-free columns)."""
    series = series.cast(dtype)
    if dtype in (pl.Float64, pl.Float32) and series.has_nulls():
        series = series.fill_null(np.nan)
    return series.to_numpy(writable=True)
