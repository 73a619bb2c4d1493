"""Card hashing: HMAC-SHA256 of the card id; raw card ids never reach the store file."""

from __future__ import annotations

import hashlib
import hmac
from pathlib import Path

import polars as pl
import pytest
from polars.testing import assert_frame_equal

from core.store import Store
from ingest.cards import compute_card_hashes
from pontual.cli import main
from tests.ingest.conftest import DATA, KEY, ingest_fixture


def test_card_hash_is_hmac_sha256_of_the_card_id() -> None:
    df = pl.DataFrame(
        {"card_id": ["3839538659", None, " 42 "], "raw_record": ["a,3839538659", "b", "42"]}
    )
    out = compute_card_hashes(df, KEY)
    expected = hmac.new(KEY, b"3839538659", hashlib.sha256).hexdigest()
    assert out["card_hash"].to_list() == [
        expected,
        None,
        hmac.new(KEY, b"42", hashlib.sha256).hexdigest(),
    ]
    assert out["raw_record"][0] == "a," + expected
    assert "card_id" not in out.columns


@pytest.mark.parametrize("key", [KEY, bytes(range(100))], ids=["key of 32 bytes", "key of 100"])
def test_card_hash_is_hmac_of_the_card_bytes_whatever_the_key_and_text(key: bytes) -> None:
    # the pads and the card are hashed as bytes: a card id in UTF-8 beyond ASCII, and a key
    # longer than SHA-256's block (hashed first, as HMAC says), give Python's `hmac`
    cards = ["3839538659", "cartão-ção-7", "カード42", "0" * 80]
    out = compute_card_hashes(pl.DataFrame({"card_id": cards}), key)
    assert out["card_hash"].to_list() == [
        hmac.new(key, c.encode(), hashlib.sha256).hexdigest() for c in cards
    ]


def test_fares_store_no_raw_card_id(store_path: Path) -> None:
    with Store.open(store_path) as store:
        counts = ingest_fixture(store, "fares_with_card_ids.csv", "fares")
        assert (counts.n_accepted, counts.n_quarantined) == (3, 2)
        reasons = store.query("SELECT record_key, field FROM quarantine ORDER BY record_key").rows()
        assert reasons == [("4", "fare_class"), ("5", "amount")]
        classes = store.query("SELECT fare_class FROM fare_transactions ORDER BY event_at")
        assert classes["fare_class"].to_list() == ["full", "student", "elderly"]
        derived = store.query(
            "SELECT transaction_id FROM fare_transactions WHERE vehicle_id = '102'"
        )
        assert derived.item().startswith("derived:")
        store.con.execute("CHECKPOINT").fetchall()
    data = b"".join(p.read_bytes() for p in store_path.parent.iterdir() if p.is_file())
    for card in (b"918273645", b"555000111", b"777444222", b"333222111"):
        assert card not in data


@pytest.mark.parametrize(
    ("name", "cards", "n_quarantined"),
    [
        (
            "fares_line_shifted_card_lands_in_fare_class.csv",
            ("6037990011223344", "6037990055667788", "6037 9900 9988 7766"),
            2,
        ),
        (
            "fares_line_not_json_keeps_its_card.jsonl",
            ("6037990011220001", "6037990011220002", "6037990011220003"),
            2,
        ),
    ],
)
def test_a_fare_line_that_does_not_parse_leaves_no_card_number_anywhere(
    store_path: Path,
    capsys: pytest.CaptureFixture[str],
    name: str,
    cards: tuple[str, ...],
    n_quarantined: int,
) -> None:
    path = str(DATA / name)
    assert main(["--store", str(store_path), "ingest", "fares", path]) == 0
    assert main(["--store", str(store_path), "quarantine"]) == 0
    out = capsys.readouterr().out
    with Store.open(store_path) as store:
        assert store.count("quarantine") == n_quarantined
        raw = store.query("SELECT raw_record FROM quarantine")["raw_record"].to_list()
        store.publish_snapshot()
    assert all("***" in r for r in raw), raw
    files = [p for p in store_path.parent.iterdir() if p.is_file()]
    assert any(p.name.endswith(".snapshot.duckdb") for p in files)
    data = b"".join(p.read_bytes() for p in files)
    for card in cards:
        assert card.encode() not in data, card
        assert card not in out


def _reference_card_hashes(df: pl.DataFrame, key: bytes) -> pl.DataFrame:
    """The card hashes, derived transaction ids and masked raw records worked out row by row
    with Python's `hmac` and `hashlib` (the ground truth of the vectorised, once-per-card
    `compute_card_hashes`); DuckDB's `trim` (spaces, not tabs) on the given ids."""

    def text(value: object) -> str:
        return "" if value is None else str(value)

    rows = []
    for row in df.iter_rows(named=True):
        card = row["card_id"]
        card = None if card is None or not str(card).strip() else str(card).strip()
        card_hash = None if card is None else hmac.new(key, card.encode(), "sha256").hexdigest()
        given = text(row["transaction_id"]).strip(" ")
        derived = (
            "derived:"
            + hashlib.sha256(
                f"{text(card_hash)}|{text(row['event_at'])}|{text(row['vehicle_id'])}".encode()
            ).hexdigest()
        )
        raw = row["raw_record"] if card is None else row["raw_record"].replace(card, card_hash)
        rows.append(
            {
                "record_key": row["record_key"],
                "event_at": row["event_at"],
                "vehicle_id": row["vehicle_id"],
                "transaction_id": given if given and row["transaction_id"] is not None else derived,
                "raw_record": raw,
                "card_hash": card_hash,
            }
        )
    return pl.DataFrame(rows, schema_overrides={"record_key": pl.UInt32})


@pytest.mark.parametrize("transaction_ids", ["given", "some missing or padded"])
def test_hashing_once_per_card_gives_every_tap_its_card_hash(transaction_ids: str) -> None:
    # 2 000 taps of 150 cards (a card taps many times), some taps without a card; with every
    # transaction id given (as a validator writes them) or some missing, blank or padded
    n = 2_000
    cards = [
        None if i % 37 == 0 else (" " if i % 41 == 0 else f"6037{i % 150:08d}") for i in range(n)
    ]
    ids: list[str | None] = [f"TX{i:06d}" for i in range(n)]
    if transaction_ids != "given":
        ids = [
            None if i % 11 == 0 else ("" if i % 13 == 0 else (f" {t} " if i % 17 == 0 else t))
            for i, t in enumerate(ids)
        ]
    df = pl.DataFrame(
        {
            "record_key": pl.Series(range(1, n + 1), dtype=pl.UInt32),
            "transaction_id": ids,
            "event_at": [f"2025-01-01T08:{i % 60:02d}:00Z" for i in range(n)],
            "vehicle_id": [str(100 + i % 7) for i in range(n)],
            "card_id": cards,
            "raw_record": [f'{{"card_id": "{c}", "n": {i}}}' for i, c in enumerate(cards)],
        }
    )
    out = compute_card_hashes(df, KEY)
    assert out.columns == [
        "record_key",
        "event_at",
        "vehicle_id",
        "transaction_id",
        "raw_record",
        "card_hash",
    ]
    assert_frame_equal(out, _reference_card_hashes(df, KEY))
