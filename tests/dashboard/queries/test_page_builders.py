"""The pure builders behind the pages: the coverage notice, the legal basis, the evidence line,
the line ranking, the Marey markers and run times (hand-checked values)."""

from __future__ import annotations

import polars as pl

from dashboard.labels import to_basis
from dashboard.queries.overview import build_coverage_notice


def _rows(period: str, **values: float) -> dict[tuple[str, str], dict[str, float]]:
    return {(period, k): {"value": v} for k, v in values.items()}


def test_a_month_without_gps_is_stamped_provisional_with_its_figures() -> None:
    rows = _rows(
        "2026-03", evaluated_share=0.016, gps_coverage_share=0.016, trips_not_evaluated=1846
    )
    notice = build_coverage_notice(rows, "2026-03", 0.8)
    assert notice is not None and notice.is_provisional
    assert notice.text.startswith("PROVISÓRIO — Cobertura dos dados: GPS em 1,6 % das viagens")
    assert "1.846 viagens não avaliadas (sem dados)" in notice.text
    assert "Abaixo de 80,0 % avaliadas" in notice.text


def test_a_well_covered_month_gets_an_information_line_only() -> None:
    rows = _rows("2026-03", evaluated_share=0.97, gps_coverage_share=0.95, trips_not_evaluated=0)
    notice = build_coverage_notice(rows, "2026-03", 0.8)
    assert notice is not None and not notice.is_provisional
    assert notice.text == (
        "Cobertura dos dados: GPS em 95,0 % das viagens programadas; "
        "97,0 % das viagens programadas avaliadas."
    )
    # A store indexed before coverage existed has no rows: no notice rather than a guess.
    assert build_coverage_notice({}, "2026-03", 0.8) is None


def test_the_basis_column_cites_articles_not_profile_keys() -> None:
    ids = pl.Series(["icv_fulfilment", "evaluated_share", "unknown_id"])
    sources = pl.Series(["icv.fulfilment_band", "evidence.x", "practice (TfL EWT)"])
    assert to_basis(ids, sources).to_list() == [
        "BG art. 57-I-a",
        "padrão do Pontual, a fixar por decreto",
        "prática (TfL EWT)",
    ]


def test_the_trip_page_says_what_an_outcome_rests_on() -> None:
    from dashboard.queries.trip import to_evidence_text

    row = {
        "evidence_class": "gps_gap_credited",
        "gps_minutes_share": 0.62,
        "feed_up_share": 1.0,
        "gps_gap_s": 660.0,
        "gps_gap_m": 6800.0,
    }
    assert to_evidence_text(row) == (
        "Evidência: GPS com lacuna creditada · GPS em 62,0 % dos minutos programados · "
        "feed da operadora ativo em 100,0 % · lacuna de GPS creditada: 11 min, 6.800 m"
    )
    assert to_evidence_text({"evidence_class": "ticketing"}) == (
        "Evidência: bilhetagem eletrônica (sem GPS utilizável)"
    )


def test_the_line_ranking_puts_the_worst_first_and_leaves_unobserved_out() -> None:
    from dashboard.queries.lines import build_line_ranking

    counts = pl.DataFrame(
        {
            "route_id": ["A", "B", "C"],
            "n_programmed": [10, 10, 4],
            "n_on_time": [8, 3, 0],
            "n_late": [1, 1, 0],
            "n_early": [0, 0, 0],
            "n_partial": [0, 1, 0],
            "n_suppressed": [1, 1, 0],
            "n_broken_down": [0, 0, 0],
            "n_not_evaluated": [0, 4, 4],  # B: 4 trips without data are not failures
        }
    )
    ranking = build_line_ranking(counts)
    assert ranking["route_id"].to_list() == ["B", "A", "C"]  # C: nothing evaluated, last
    b = ranking.row(0, named=True)
    assert (b["n_evaluated"], b["n_run"], b["fulfilment"], b["punctuality"]) == (
        6,
        4,
        4 / 6,
        3 / 4,
    )
    assert ranking.row(2, named=True)["fulfilment"] is None


def test_marey_markers_and_run_times_from_the_points() -> None:
    from datetime import UTC, datetime, timedelta

    from dashboard.queries.lines import build_marey_markers, build_run_times

    t0 = datetime(2026, 3, 2, 10, 0, tzinfo=UTC)  # 07:00 in Bento Gonçalves
    rows = [
        # planned 30 min, run 36 min (late), both direction 0
        ("T1", "programada", t0, 0.0, None, 0, "late"),
        ("T1", "programada", t0 + timedelta(minutes=30), 10.0, None, 0, "late"),
        ("T1", "realizada", t0 + timedelta(minutes=2), 0.0, "V1", 0, "late"),
        ("T1", "realizada", t0 + timedelta(minutes=20), 6.0, "V1", 0, "late"),
        ("T1", "realizada", t0 + timedelta(minutes=38), 10.0, "V1", 0, "late"),
        # a suppressed trip: planned only, no run time of its own
        ("T2", "programada", t0 + timedelta(minutes=10), 0.0, None, 0, "suppressed"),
        ("T2", "programada", t0 + timedelta(minutes=40), 10.0, None, 0, "suppressed"),
    ]
    points = pl.DataFrame(
        rows,
        schema=["trip_id", "kind", "at", "dist_km", "vehicle_id", "direction_id", "outcome"],
        orient="row",
    )
    times = build_run_times(points, "America/Sao_Paulo")
    assert times.rows() == [(7, "programada", 30.0, 2), (7, "realizada", 36.0, 1)]
    breakdowns = pl.DataFrame(
        {"trip_id": ["T1"], "vehicle_id": ["V1"], "started_at": [t0 + timedelta(minutes=25)]}
    )
    marks = build_marey_markers(points, breakdowns)
    # placed at the run's last visit before it: km 6
    assert marks.select("trip_id", "dist_km", "direction_id", "label").rows() == [
        ("T1", 6.0, 0, "quebra")
    ]


def test_profile_sources_show_their_citation_not_the_engineers_notes() -> None:
    from core.profile import load_profile
    from dashboard.labels import to_citation, to_source

    assert to_source("BG art. 59 §1, as read by Pontual: the law has no trip-share metric") == (
        "BG art. 59 §1"
    )
    assert to_source("CGS art. 4 (mean displacement of a region's population)") == "CGS art. 4"
    assert to_source("Bento Gonçalves is a municipality of Rio Grande do Sul") == "perfil"
    profile = load_profile("bento-goncalves-2021")
    assert to_citation(profile.crowding.standees_max_per_m2) == "BG art. 59"
    assert to_citation(profile.trips.frequent_headway_max_s) == (
        "padrão do Pontual, a fixar por decreto"
    )


def test_a_bunched_pair_is_marked_once_where_it_begins() -> None:
    from datetime import UTC, date, datetime, timedelta

    from dashboard.queries.lines import build_bunching_markers

    t0, day = datetime(2026, 3, 2, 11, 0, tzinfo=UTC), date(2026, 3, 2)
    # t3 runs 100 s then 50 s behind t2 at stops A and B (bunched at both), t2 is not bunched;
    # a bunched visit of another day is not drawn on this day's diagram
    judged = pl.DataFrame(
        {
            "service_date": [day, day, day, date(2026, 3, 3)],
            "trip_id": ["t2", "t3", "t3", "t9"],
            "leader_trip_id": ["t1", "t2", "t2", "t8"],
            "leader_vehicle_id": ["V1", "V2", "V2", "V8"],
            "direction_id": pl.Series([0, 0, 0, 0], dtype=pl.Int32),
            "at": [t0, t0 + timedelta(seconds=100), t0 + timedelta(seconds=400), t0],
            "stop_dist_m": [0.0, 0.0, 1500.0, 0.0],
            "is_bunched": [False, True, True, True],
        }
    )
    marks = build_bunching_markers(judged, day)
    assert marks.rows() == [
        ("t3", t0 + timedelta(seconds=100), 0.0, 0, "em comboio atrás do veículo V2")
    ]
