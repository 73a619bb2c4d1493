"""`ingest.files`: the chunks of a file judged one ahead of the writer."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from datetime import UTC, datetime

import polars as pl
import pytest

from core.errors import InputError
from ingest.checks import JudgedBatch
from ingest.files import compute_judged_ahead


def _judge(chunk: pl.DataFrame) -> JudgedBatch:
    return JudgedBatch("t", chunk, chunk.clear(), chunk.height, datetime.now(UTC))


def test_chunks_are_judged_in_order_one_ahead_and_a_reader_error_comes_in_its_place() -> None:
    # The reader fails at its fourth chunk: the three before are given first, in order; the
    # error is raised where the fourth would have been; no chunk is read more than one ahead.
    read: list[int] = []
    given: list[int] = []
    judged_on = set()

    def chunks() -> Iterator[pl.DataFrame]:
        for i in range(3):
            read.append(i)
            # at most one chunk judged ahead of the ones given
            assert len(read) <= len(given) + 2
            yield pl.DataFrame({"i": [i] * (i + 1)})
        raise InputError("cannot read as CSV: broken line", where="f.csv")

    def judge(chunk: pl.DataFrame) -> JudgedBatch:
        judged_on.add(threading.current_thread().name)
        return _judge(chunk)

    with pytest.raises(InputError, match="broken line"):
        for batch in compute_judged_ahead(chunks(), judge):
            given.append(batch.accepted["i"][0])
            assert batch.n_read == given[-1] + 1
    assert given == [0, 1, 2]
    assert all(name.startswith("judge") for name in judged_on)


def test_a_writer_that_stops_early_leaves_no_chunk_in_flight() -> None:
    read: list[int] = []

    def chunks() -> Iterator[pl.DataFrame]:
        for i in range(10):
            read.append(i)
            yield pl.DataFrame({"i": [i]})

    ahead = compute_judged_ahead(chunks(), _judge)
    assert next(ahead).accepted["i"].to_list() == [0]
    ahead.close()  # waits for the chunk being judged ahead
    assert read == [0, 1]
    assert list(compute_judged_ahead(iter([]), _judge)) == []
