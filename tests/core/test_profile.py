"""Regulation profiles: every shipped profile loads; every broken one names its key."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest

from core.errors import ProfileError
from core.profile import list_profiles, load_fee_table, load_profile, read_profile
from tests.conftest import FIXTURES

PROFILES = FIXTURES / "profiles"


@pytest.mark.parametrize("name", ["bento-goncalves-2021", "campina-grande-do-sul-2003"])
def test_shipped_profile_loads_with_provenance_for_every_value(name: str) -> None:
    prof = load_profile(name)
    values = prof.cited_values()
    assert len(values) > 50
    for key, cited in values:
        assert cited.source or (cited.default and cited.note), key


def test_shipped_profiles_are_listed() -> None:
    assert list_profiles() == ["bento-goncalves-2021", "campina-grande-do-sul-2003"]


def test_bento_goncalves_values_match_the_law() -> None:
    bg = load_profile("bento-goncalves-2021")
    assert bg.crowding.standees_max_per_m2.value == 4.0
    assert bg.crowding.standees_max_per_m2.source == "BG art. 59"
    assert bg.fleet.age["urban"].max_age_years.value == 12
    assert bg.fleet.age["urban"].mean_age_max_years.value == 8
    assert bg.fleet.age["urban"].entry_age_max_years.value == 6
    assert bg.fleet.age["district"].max_age_years.value == 16
    assert bg.fleet.age["district"].mean_age_max_years.value == 12
    assert bg.fleet.age["district"].entry_age_max_years.value == 10
    assert [b.interval_months.value for b in bg.fleet.inspections] == [20, 18, 6]
    consecutive, total = bg.quality.cassacao_consecutive_e_years, bg.quality.cassacao_total_e_years
    window = bg.fares.integration_window_s
    assert consecutive is not None and total is not None and window is not None
    assert consecutive.value == 3
    assert total.value == 8
    assert window.value == 3600
    assert bg.trips.late_departure_s.value == 300 and bg.trips.late_departure_s.default
    assert "a fixar por decreto" in bg.trips.late_departure_s.citation


def test_bento_goncalves_anexo_i_is_complete() -> None:
    items = load_profile("bento-goncalves-2021").infractions.items
    assert len(items) == 88
    by_item = {i.item: i for i in items}
    assert by_item["VII"].description.startswith("Atrasar o cumprimento do horário")
    assert (by_item["VII"].group, by_item["VII"].urm_first, by_item["VII"].urm_repeat) == (
        "B",
        2,
        3,
    )
    assert (by_item["XXIV"].urm_first, by_item["XXIV"].urm_repeat) == (3, 5)
    assert by_item["XXXV"].description.startswith("Não possuir frota de veículos de reserva")
    assert by_item["LXXXVIII"].group == "I"
    assert [i.group for i in items].count("A") == 3


def test_campina_grande_do_sul_values_match_the_law() -> None:
    cgs = load_profile("campina-grande-do-sul-2003")
    assert cgs.crowding.standees_max_per_m2.value == 7.5
    assert cgs.crowding.standees_max_per_m2.source == "CGS art. 45"
    assert cgs.km.efficiency_min_ratio.value == 0.9
    micro = cgs.crowding.vehicle_types["micro"].useful_life_years
    padron = cgs.crowding.vehicle_types["padron"].useful_life_years
    assert micro is not None and padron is not None
    assert micro.value == 8
    assert padron.value == 10
    assert cgs.fleet.reserve_max_ratio is not None and cgs.fleet.reserve_max_ratio.value == 0.15
    assert cgs.coverage.urban_walk_max_m.value == 400
    assert cgs.coverage.rural_walk_max_m.value == 1500


def test_fee_table_of_lei_221() -> None:
    fees = load_fee_table("lei-221-2017")
    collective = {i.capacity: i for i in fees.items if i.modality == "collective"}
    assert (collective["up_to_20"].yearly_ufitas, collective["up_to_20"].per_inspection_ufitas) == (
        700,
        45,
    )
    assert (collective["over_20"].yearly_ufitas, collective["over_20"].per_inspection_ufitas) == (
        945,
        60,
    )
    ott = next(i for i in fees.items if i.modality == "ott")
    assert ott.per_km_ufitas == 0.06
    # audit a16-a18: Itaboraí's ordinary law; OTT inspection 45; item 12 doubles the fee
    assert fees.municipality == "Itaboraí"
    assert fees.law.startswith("Lei Ordinária nº 221, de 07/04/2017")
    assert ott.per_inspection_ufitas == 45
    assert fees.chosen_place_inspection_factor == 2.0
    assert fees.small_capacity_max == 20


# Table (a) of the legal audit (shared/reviews/legal-audit-2026-11.md), one test per row.


def test_a1_bg_has_no_per_type_useful_life() -> None:
    bg = load_profile("bento-goncalves-2021")
    assert all(t.useful_life_years is None for t in bg.crowding.vehicle_types.values())


def test_a2_micro_onibus_has_up_to_20_seats() -> None:
    bg = load_profile("bento-goncalves-2021")
    micro = bg.crowding.vehicle_types["micro"].n_seats
    assert micro.value == 20 and micro.source is not None and "art. 15 §1" in micro.source
    cgs = load_profile("campina-grande-do-sul-2003")
    assert cgs.crowding.vehicle_types["micro"].n_seats.value == 20


def test_a3_repeat_window_is_six_calendar_months() -> None:
    for name in ("bento-goncalves-2021", "campina-grande-do-sul-2003"):
        window = load_profile(name).infractions.repeat_window_months
        assert (window.value, window.unit) == (6, "months")


def test_a7_bg_records_its_amendment() -> None:
    bg = load_profile("bento-goncalves-2021")
    assert "Lei nº 7.176, de 5 de junho de 2025" in bg.law


def test_a8_cgs_takes_effect_on_the_day_of_the_law() -> None:
    assert load_profile("campina-grande-do-sul-2003").effective_from == date(2003, 12, 24)


def test_a9_cgs_annual_inspection_is_law() -> None:
    (band,) = load_profile("campina-grande-do-sul-2003").fleet.inspections
    assert band.interval_months.value == 12
    assert band.interval_months.source is not None and "6-XII" in band.interval_months.source
    assert not band.interval_months.default and not band.min_age_years.default


def test_a10_a15_cgs_has_no_bg_discounts() -> None:
    cgs = load_profile("campina-grande-do-sul-2003")
    weights = cgs.fares.equivalent_weights.value
    assert weights["student"] == 1.0 and weights["integration"] == 1.0
    assert weights["fiscal"] == 0.0 and weights["elderly"] == 0.0  # art. 17-I, 17-II
    assert cgs.fares.integration_window_s is None and cgs.fares.integration_fare_ratio is None


def test_a11_cgs_age_cites_the_useful_life_articles() -> None:
    cgs = load_profile("campina-grande-do-sul-2003")
    source = cgs.fleet.age["urban"].max_age_years.source
    assert source is not None and "10-III" in source and "24, 25" in source


def test_a14_cgs_has_no_cassacao_by_grade() -> None:
    cgs = load_profile("campina-grande-do-sul-2003")
    assert cgs.quality.cassacao_consecutive_e_years is None
    assert cgs.quality.cassacao_total_e_years is None
    rules = {c.rule for c in cgs.verdicts.termination.criteria}
    assert "grade_e_years" not in rules and "vehicles_past_useful_life" in rules


def test_a17_no_shipped_profile_applies_the_itaborai_fee_table() -> None:
    for name in list_profiles():
        assert load_profile(name).fee_table is None


def test_bg_selective_service_carries_seated_passengers_only() -> None:
    by_class = load_profile("bento-goncalves-2021").crowding.standees_max_per_m2_by_class
    assert by_class is not None and by_class.value == {"selective": 0.0}


def test_renewal_criteria_cite_their_articles() -> None:
    bg = load_profile("bento-goncalves-2021").verdicts.renewal.criteria
    assert [(c.rule, c.source, c.decides) for c in bg] == [
        ("quality_goals", "BG art. 32-I, 38-I; art. 72-VII; Anexo I LXI, LXXXV, LXXXVIII", True),
        ("recorded_by_city", "BG art. 32-II, 38-II", True),
        ("km_efficiency", None, False),  # not BG law: a default that decides nothing alone
    ]
    cgs = load_profile("campina-grande-do-sul-2003").verdicts.renewal.criteria
    assert [c.source for c in cgs] == [
        "CGS art. 2, parágrafo único, a",
        "CGS art. 2, parágrafo único, b; art. 10-III, 24, 25",
    ]


def test_valid_minimal_fixture_loads() -> None:
    assert read_profile(PROFILES / "valid_minimal.toml").id == "bento-goncalves-2021"


@pytest.mark.parametrize(
    ("fixture", "expected"),
    [
        ("unknown_key_trips_late_departure_min", "key trips.late_departure_min: unknown key"),
        (
            "missing_key_crowding_standees_max_per_m2",
            "key crowding.standees_max_per_m2: missing key",
        ),
        (
            "wrong_unit_trips_early_departure_s",
            "key trips.early_departure_s: expected unit 's', got 'min'",
        ),
        (
            "out_of_range_trips_partial_trip_min_ratio",
            "key trips.partial_trip_min_ratio: value 80.0 is above the maximum 1",
        ),
        ("no_provenance_fleet_reserve_min_ratio", "key fleet.reserve_min_ratio: expected source"),
        (
            "default_without_note_icv_weight_fulfilment",
            "key icv.weight_fulfilment: a default value needs a note",
        ),
        ("weights_not_summing_to_one_icv", "ICV weights must add up to 1"),
        ("not_toml_unclosed_table", "not valid TOML"),
        ("not_finite_icv_weight_fulfilment", "key icv.weight_fulfilment: value nan is not finite"),
        (
            "unknown_timezone_general_timezone",
            "key general.timezone: unknown time zone 'America/Bento_Goncalves'",
        ),
    ],
)
def test_broken_profile_names_file_and_key(fixture: str, expected: str) -> None:
    path = PROFILES / f"{fixture}.toml"
    with pytest.raises(ProfileError) as err:
        read_profile(path)
    assert expected in err.value.what
    assert err.value.where == str(path)


def test_unknown_profile_id_lists_the_shipped_ones() -> None:
    with pytest.raises(ProfileError) as err:
        load_profile("porto-alegre-1999")
    assert err.value.hint is not None and "bento-goncalves-2021" in err.value.hint


def test_a_profile_written_before_the_bunching_key_still_loads(tmp_path: Path) -> None:
    """`trips.bunching_headway_max_ratio` came later: a city's own profile without it loads and
    judges bunching by the documented default (0.25 of the planned headway)."""
    text = (PROFILES / "valid_minimal.toml").read_text(encoding="utf-8")
    kept = "\n".join(
        line for line in text.splitlines() if not line.startswith("bunching_headway_max_ratio")
    )
    assert kept != text
    path = tmp_path / "older.toml"
    path.write_text(kept, encoding="utf-8")
    trips = read_profile(path).trips
    assert trips.bunching_headway_max_ratio is None
    assert trips.bunching_max_ratio == 0.25
    assert read_profile(PROFILES / "valid_minimal.toml").trips.bunching_max_ratio == 0.25
