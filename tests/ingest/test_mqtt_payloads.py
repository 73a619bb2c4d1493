"""MQTT batches to frames: topics, JSON payloads decoded in bulk, messages that are not records."""

from __future__ import annotations

from datetime import UTC, datetime

import polars as pl
import pytest

from ingest import mqtt_payloads
from ingest.mqtt_payloads import (
    AVL_FIELDS,
    REASON_EMPTY,
    REASON_FIELD_TOO_LONG,
    REASON_NOT_JSON,
    REASON_TOO_LARGE,
    build_message_frames,
    decode_payloads,
)

AT = datetime(2026, 3, 2, 12, 0, tzinfo=UTC)
PING = b'{"event_at": 1772452800, "lat": -29.1712, "lon": -51.5191, "speed_m_s": 8.5}'


def test_vehicle_and_operator_come_from_the_topic_and_numbers_stay_text() -> None:
    frames = build_message_frames(["pontual/avl/opA/1042"], [PING], received_at=AT)
    row = frames.avl.row(0, named=True)
    assert row["vehicle_id"] == "1042"
    assert row["operator_id"] == "opA"
    assert row["event_at"] == "1772452800"
    assert row["lat"] == "-29.1712"
    assert row["speed_m_s"] == "8.5"
    assert row["heading_deg"] is None
    assert row["source"] == "pontual/avl/opA/1042"
    assert row["raw_record"] == PING.decode()
    assert frames.fares.height == 0 and frames.quarantine.height == 0


def test_fares_go_to_their_own_frame() -> None:
    payload = (
        b'{"transaction_id": "T-9", "event_at": "2026-03-02T12:00:05Z", "route_id": "101",'
        b' "card_id": "0042", "fare_class": "student", "amount": 2.4}'
    )
    frames = build_message_frames(["pontual/fares/opB/77"], [payload], received_at=AT)
    row = frames.fares.row(0, named=True)
    assert (row["transaction_id"], row["vehicle_id"], row["operator_id"]) == ("T-9", "77", "opB")
    assert (row["card_id"], row["fare_class"], row["amount"]) == ("0042", "student", "2.4")
    assert frames.avl.height == 0


def test_messages_that_are_not_records_are_quarantined_with_their_reason() -> None:
    topics = [
        "pontual/avl/opA/1",  # vehicle in the payload contradicts the topic
        "pontual/avl/opA/2",  # operator in the payload contradicts the topic
        "pontual/avl/opA/3",  # not JSON
        "pontual/avl/opA/4",  # not UTF-8
        "pontual/avl/opA/5",  # JSON, but not an object
        "pontual/trams/opA/6",  # unknown kind
        "pontual/avl/opA/7",  # good
    ]
    payloads = [
        b'{"vehicle_id": "99", "event_at": 1}',
        b'{"operator_id": "opB", "event_at": 1}',
        b'{"event_at": ',
        b"\xff\xfe",
        b"null",
        PING,
        PING,
    ]
    frames = build_message_frames(topics, payloads, received_at=AT)
    assert frames.avl["vehicle_id"].to_list() == ["7"]
    q = frames.quarantine.sort("source")
    assert q["source"].to_list() == topics[:6]
    assert q["field"].to_list() == ["vehicle_id", "operator_id", None, None, None, "topic"]
    reasons = q["reason"].to_list()
    assert reasons[0] == "payload vehicle_id differs from the topic's vehicle"
    assert reasons[1] == "payload operator_id differs from the topic's operator"
    assert reasons[2].startswith("payload is not a JSON object with text/number fields")
    assert reasons[3] == "payload is not UTF-8 text (expected a JSON object)"
    assert reasons[4].startswith("payload is not a JSON object (expected {...}")
    assert reasons[5].startswith("topic is not pontual/avl/{operator}/{vehicle}")
    assert q["raw_record"].to_list()[3] == "\\xff\\xfe"
    assert q["target_table"].to_list()[:5] == ["vehicle_locations"] * 5
    assert (q["quarantined_at"] == AT).all()


def test_a_redelivered_message_gets_the_same_record_key() -> None:
    first = build_message_frames(["pontual/avl/opA/1", "pontual/avl/opA/2"], [PING, PING])
    again = build_message_frames(["pontual/avl/opA/2"], [PING])
    assert first.avl["record_key"][1] == again.avl["record_key"][0]
    assert first.avl["record_key"][0] != first.avl["record_key"][1]


def test_bulk_decode_isolates_the_few_bad_payloads() -> None:
    good = [b'{"vehicle_id": "%d", "lat": %d}' % (i, i) for i in range(1000)]
    bad_at = {17, 500, 999}
    payloads = [b"{broken" if i in bad_at else p for i, p in enumerate(good)]
    decoded, reason = decode_payloads(pl.Series(payloads, dtype=pl.Binary()), AVL_FIELDS)
    assert decoded.height == 1000
    assert set(reason.is_not_null().arg_true().to_list()) == bad_at
    assert decoded["lat"][16] == "16" and decoded["lat"][17] is None
    assert decoded["vehicle_id"][998] == "998"


def test_empty_blank_and_oversized_payloads_do_not_shift_their_batch() -> None:
    # A 0-byte or blank payload decodes to no row at all in Polars: mixed with good ones it
    # made the batch's columns of unequal length (a native panic), and stopped the listener.
    big = b'{"lat": "' + b"9" * 70_000 + b'"}'
    payloads = [PING, b"", PING, b"  \n", PING, big, b'{"lat": "' + b"1" * 300 + b'"}', PING]
    topics = [f"pontual/avl/opA/{i}" for i in range(len(payloads))]
    frames = build_message_frames(topics, payloads, received_at=AT, max_message_bytes=65_536)
    assert frames.avl["vehicle_id"].to_list() == ["0", "2", "4", "7"]
    q = frames.quarantine.sort("source")
    assert q.select("source", "field", "reason").rows() == [
        ("pontual/avl/opA/1", None, REASON_EMPTY),
        ("pontual/avl/opA/3", None, REASON_EMPTY),
        ("pontual/avl/opA/5", None, REASON_TOO_LARGE.format(limit=65_536)),
        ("pontual/avl/opA/6", "lat", REASON_FIELD_TOO_LONG.format(limit=256)),
    ]
    # The oversized payload is kept cut, its size noted.
    assert q["raw_record"][2].endswith(f"... ({len(big)} bytes, cut)")
    assert len(q["raw_record"][2]) < 1_100


def test_a_panicking_decode_is_pinned_on_its_payload(monkeypatch: pytest.MonkeyPatch) -> None:
    real = mqtt_payloads._decode_chunk

    def panicking(payloads: pl.Series, dtype: pl.Struct) -> pl.Series:
        if any(b"poison" in p for p in payloads.to_list()):
            raise pl.exceptions.PanicException("assertion failed")
        return real(payloads, dtype)

    monkeypatch.setattr(mqtt_payloads, "_decode_chunk", panicking)
    payloads = [PING, b'{"vehicle_id": "poison"}', PING]
    decoded, reason = decode_payloads(pl.Series(payloads, dtype=pl.Binary()), AVL_FIELDS)
    assert reason.to_list() == [None, REASON_NOT_JSON, None]
    assert decoded.height == 3


def test_card_ids_are_masked_in_rejected_fare_payloads() -> None:
    payloads = [
        b'{"card_id": "6037990011223344", "vehicle_id": "99"}',  # vehicle contradicts topic
        b'{"card_id": 6037990011223344, "amount": [1]}',  # a field that is not text
        b'{"card_id" : "60379900\\"11223344", "x": ',  # not JSON, escaped quote inside
    ]
    frames = build_message_frames(["pontual/fares/opA/1"] * 3, payloads, received_at=AT)
    raw = frames.quarantine["raw_record"].to_list()
    assert len(raw) == 3
    assert not any("6037990" in r or "11223344" in r for r in raw), raw
    assert all('"card_id"' in r and '"***"' in r for r in raw)
