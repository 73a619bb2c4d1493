"""The disagreements report names each trip whose outcome differs from the truth, and why."""

from __future__ import annotations

from datetime import UTC, datetime

import polars as pl

from analytics.matching.disagreements import compare_outcomes, compute_agreement

T0 = datetime(2026, 3, 2, 11, 0, tzinfo=UTC)


def test_report_lists_only_disagreements_with_a_reason() -> None:
    ours = pl.DataFrame(
        {
            "trip_id": ["a", "b", "c"],
            "outcome": ["on_time", "suppressed", "late"],
            "actual_start_at": [T0, None, T0.replace(minute=9)],
            "vehicle_id": ["V1", None, "V2"],
            "coverage_ratio": [1.0, None, 1.0],
            "reason": ["partida no horário", "nenhum veículo", "partida 540 s após"],
        }
    )
    truth = pl.DataFrame(
        {
            "trip_id": ["a", "b", "c"],
            "true_outcome": ["on_time", "late", "on_time"],
            "vehicle_id": ["V1", "V3", "V2"],
            "actual_start_at": [T0, T0, T0.replace(minute=1)],
        }
    )
    rep = compare_outcomes(ours, truth)
    assert rep["trip_id"].to_list() == ["b", "c"]
    assert rep["why"].to_list() == ["no run matched (suppressed)", "departure off by 480 s"]
    figures = compute_agreement(ours, truth)
    assert figures["agreement"] == 1 / 3
    assert figures["start_error_median_s"] == 240.0
