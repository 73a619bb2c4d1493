"""Columns handed to the compiled kernels: one dtype, writable, nulls as NaN."""

from __future__ import annotations

import numpy as np
import polars as pl

from analytics.matching.kernel_arrays import to_kernel_array


def test_columns_become_writable_arrays_of_one_dtype() -> None:
    floats = to_kernel_array(pl.Series([1.5, None, 3.0], dtype=pl.Float32))
    assert floats.dtype == np.float64 and floats.flags.writeable
    assert np.isnan(floats[1]) and floats[[0, 2]].tolist() == [1.5, 3.0]
    ints = to_kernel_array(pl.Series([3, 1, 2], dtype=pl.UInt8), pl.Int64)
    assert ints.dtype == np.int64 and ints.flags.writeable
    assert ints.tolist() == [3, 1, 2]
