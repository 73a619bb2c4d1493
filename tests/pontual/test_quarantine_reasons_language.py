"""Quarantine reasons are stored in English (they are data: grouped and searched by their
text); the CLI shows every reason of the closed set in pt-BR."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from core.profile import load_profile
from core.schema import table
from ingest import mqtt_payloads, registers, rules, tabular, writing
from ingest.options import IngestOptions
from ingest.parsing import _KIND_WORDS, input_columns
from pontual.messages import LANG_ENV, translate


def _closed_reasons() -> set[str]:
    options = IngestOptions()
    reasons = {
        rules.REASON_UNPROCESSABLE,
        rules.REASON_OTHER_OPERATOR.format(registered="OP2"),
        "vehicle_id not in the fleet register (load it, or pass --accept-unknown-vehicles)",
        rules.future_check("event_at", datetime.now(UTC), options).reason,
        rules.past_check("event_at", options).reason,
        registers.REASON_BACKDATED.format(since="2026-03-01"),
        writing.REASON_CONFLICT.format(key="vehicle_id, event_at"),
        tabular.REASON_NOT_JSON,
        tabular.REASON_NOT_OBJECT,
        mqtt_payloads.REASON_TOPIC.format(root="pontual"),
        mqtt_payloads.REASON_EMPTY,
        mqtt_payloads.REASON_TOO_LARGE.format(limit=65536),
        mqtt_payloads.REASON_NOT_UTF8,
        mqtt_payloads.REASON_NOT_JSON,
        mqtt_payloads.REASON_NOT_OBJECT,
        mqtt_payloads.REASON_FIELD_TOO_LONG.format(limit=256),
        mqtt_payloads.REASON_VEHICLE_DIFFERS,
        mqtt_payloads.REASON_OPERATOR_DIFFERS,
        mqtt_payloads.REASON_UNPROCESSABLE,
    }
    now = datetime.now(UTC)
    network = rules.NetworkContext(None, None)
    profile = load_profile("bento-goncalves-2021")
    checks = [
        *rules.compute_avl_checks(network, options, now, True)[0],
        *rules.compute_fare_checks(network, options, now)[0],
        *registers.compute_vehicle_checks(profile),
        *registers.compute_incident_checks(options),
        *registers.compute_survey_checks(profile, options),
        *registers.compute_count_checks(options),
    ]
    reasons |= {c.reason for c in checks if isinstance(c.reason, str)}
    for name in ("vehicle_locations", "fare_transactions", "vehicles", "incidents"):
        for col in input_columns(table(name)):
            reasons.add(f"missing {col.name}")
            kind = _KIND_WORDS.get(type(col.dtype).__name__)
            if kind is not None:
                reasons.add(f"cannot read {col.name} as {kind}")
    return {r for r in reasons if isinstance(r, str)}


def test_every_reason_of_the_closed_set_is_shown_in_pt_br(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv(LANG_ENV, raising=False)
    untranslated = sorted(r for r in _closed_reasons() if translate(r) == r)
    assert untranslated == []


def test_reasons_with_quantities_and_names(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(LANG_ENV, raising=False)
    assert translate("speed_m_s outside 0..55.5 m/s") == "speed_m_s fora de 0..55,5 m/s"
    assert (
        translate(
            "topic is not pontual/avl/{operator}/{vehicle} or pontual/fares/{operator}/{vehicle}"
        )
        == "o tópico não é pontual/avl/{operator}/{vehicle} nem pontual/fares/{operator}/{vehicle}"
    )
    assert translate("cannot read lat as a number") == "não foi possível ler lat como um número"
    monkeypatch.setenv(LANG_ENV, "en")
    assert translate("cannot read lat as a number") == "cannot read lat as a number"
