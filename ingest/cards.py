"""Card hashing (LGPD): raw card ids in, keyed hashes out, before anything is stored.

`mask_card_numbers` masks what may be a card number in the raw text of a rejected record, which
may not have parsed at all (so its card field is unknown). `compute_card_hashes` reads a frame of raw taps with `card_id` (and optionally `raw_record`,
`transaction_id`, `event_at`, `vehicle_id`) and returns it with `card_hash` in place of
`card_id`, the card id replaced by its hash inside `raw_record` too, and a derived
`transaction_id` where the source gave none. The key is `core.settings.hash_key`.
"""

from __future__ import annotations

import hashlib

import polars as pl

from core.settings import key_fingerprint
from core.store import Store
from ingest.parsing import CARD_ID, RAW_RECORD, scratch_connection


def compute_card_hashes(df: pl.DataFrame, key: bytes) -> pl.DataFrame:
    """Replace `card_id` by `card_hash` = HMAC-SHA256(key, card_id) in hex (null stays null).

    Also replaces the card id inside `raw_record` by its hash, and derives a `transaction_id`
    where the source gave none, as the SHA-256 of (card hash, event time text, vehicle). The
    HMAC runs vectorised in DuckDB as H((K^opad) || H((K^ipad) || m)) over bytes, once per distinct card,
    checked against Python's `hmac` in the tests.
    """
    block = key if len(key) <= 64 else hashlib.sha256(key).digest()
    block = block.ljust(64, b"\0")
    ipad = bytes(b ^ 0x36 for b in block)
    opad = bytes(b ^ 0x5C for b in block)
    frame = df.with_columns(
        pl.col(CARD_ID).cast(pl.String).str.strip_chars().replace("", None).alias(CARD_ID)
    )
    absent = [c for c in ("transaction_id", "event_at", "vehicle_id") if c not in frame.columns]
    frame = frame.with_columns(pl.lit(None, dtype=pl.String).alias(c) for c in absent)
    with scratch_connection() as con:
        # Each card once: a card taps many times (a week of a 300-bus city: ten taps a card),
        # and the two SHA-256 passes are the cost; the hashes are then looked up per tap.
        cards = frame.select(pl.col(CARD_ID).drop_nulls().unique())
        con.register("cards", cards.to_arrow())
        # The pads are bound as blobs and the card's UTF-8 bytes appended to them as they are
        # (hex text built and parsed back per card cost a third of the hashing).
        hashed = con.sql(
            f"SELECT {CARD_ID}, sha256($opad::BLOB || unhex(sha256($ipad::BLOB || "
            f"encode({CARD_ID})))) AS card_hash FROM cards",
            params={"opad": opad, "ipad": ipad},
        ).pl()
        frame = frame.join(hashed, on=CARD_ID, how="left", maintain_order="left")
        tid = frame["transaction_id"]
        # A text id with nothing to trim or derive (the usual file) is kept as it is; else
        # DuckDB trims it and derives the missing ones, as it always has.
        as_given = (
            isinstance(tid.dtype, pl.String)
            and not frame.select((tid.is_null() | tid.str.contains(r"^\s|\s$|^$")).any()).item()
        )
        selects = []
        if not as_given:
            selects.append(
                "coalesce(nullif(trim(CAST(transaction_id AS VARCHAR)), ''), "
                "'derived:' || sha256(coalesce(card_hash, '') || '|' || "
                "coalesce(CAST(event_at AS VARCHAR), '') || '|' || "
                "coalesce(CAST(vehicle_id AS VARCHAR), ''))) AS transaction_id"
            )
        if RAW_RECORD in df.columns:
            selects.append(
                f"CASE WHEN {CARD_ID} IS NULL THEN {RAW_RECORD} "
                f"ELSE replace({RAW_RECORD}, {CARD_ID}, card_hash) END AS {RAW_RECORD}"
            )
        if selects:
            used = ["transaction_id", "event_at", "vehicle_id", "card_hash", CARD_ID]
            con.register(
                "taps",
                frame.select(*used, *([RAW_RECORD] if RAW_RECORD in df.columns else [])).to_arrow(),
            )
            derived = con.sql(f"SELECT {', '.join(selects)} FROM taps").pl()
            frame = frame.with_columns(derived)
    excluded = (CARD_ID, "transaction_id", RAW_RECORD, "card_hash")
    ordered = [c for c in frame.columns if c not in excluded]
    ordered += ["transaction_id", *([RAW_RECORD] if RAW_RECORD in df.columns else []), "card_hash"]
    return frame.select(ordered)


CARD_MASK = "***"
# A `card_id` field in JSON text, whatever its value (a string with escapes, or a bare token).
_CARD_FIELD = r'("card_id"\s*:\s*)("(?:[^"\\]|\\.)*"|[^,}\s]+)'
# A card number anywhere: a word of 8 or more digits (transport cards, PANs), or 12 to 20
# digits in groups of four (as printed). Words with letters (ids like TX000000001, hex hashes)
# and ISO dates are left alone.
_CARD_LIKE = r"\b\d{8,}\b|\b\d{4}(?:[ -]\d{4}){2,4}\b"


def mask_card_numbers(text: pl.Expr) -> pl.Expr:
    """`text` with any `card_id` JSON field and every card-like number replaced by `***`.

    For the raw text of rejected fare records (and messages): a record that did not parse may
    hold its card number anywhere (a shifted CSV field, a truncated JSON line), and the raw
    card number must never be stored. Epoch times (10 digits) are masked too: the price of
    never guessing wrong; the record's line number (`record_key`) still finds it.
    """
    return text.str.replace_all(_CARD_FIELD, '${1}"' + CARD_MASK + '"').str.replace_all(
        _CARD_LIKE, CARD_MASK
    )


def require_store_key(store: Store, key: bytes) -> None:
    """Refuse `key` unless it is the key of `store`'s card hashes (recorded on first use)."""
    store.check_key_fingerprint(key_fingerprint(key))
