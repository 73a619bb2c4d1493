"""Settings: where the store lives, which profile is in force, the card-hashing key.

Resolution order for each: command-line option, then environment variable, then default.
"""

from __future__ import annotations

import os
import secrets
from dataclasses import dataclass
from pathlib import Path

from core.errors import ConfigError

DEFAULT_STORE = Path("data") / "pontual.duckdb"
DEFAULT_PROFILE = "bento-goncalves-2021"
STORE_ENV = "PONTUAL_STORE"
PROFILE_ENV = "PONTUAL_PROFILE"
HASH_KEY_ENV = "PONTUAL_HASH_KEY"
CASES_DB_ENV = "PONTUAL_CASES_DB"
RETENTION_ENV = "PONTUAL_RETENTION_YEARS"
# Raw data is kept at least as long as the longest legal horizon in force: cassação may rest on
# 8 non-consecutive years of grade E (BG art. 72-VII), so 9 years covers the evidence behind it.
DEFAULT_RETENTION_YEARS = 9


@dataclass(frozen=True)
class Settings:
    """What every command needs to know about its environment."""

    store_path: Path
    profile_id: str
    quiet: bool = False
    debug: bool = False

    @classmethod
    def resolve(
        cls,
        store: str | None = None,
        profile: str | None = None,
        *,
        quiet: bool = False,
        debug: bool = False,
    ) -> Settings:
        store_path = Path(store or os.environ.get(STORE_ENV) or DEFAULT_STORE)
        profile_id = profile or os.environ.get(PROFILE_ENV) or DEFAULT_PROFILE
        return cls(store_path=store_path, profile_id=profile_id, quiet=quiet, debug=debug)

    @property
    def key_path(self) -> Path:
        """The card-hashing key file, kept beside the store (never inside it)."""
        return self.store_path.with_name(self.store_path.stem + ".hashkey")

    @property
    def cases_db_url(self) -> str:
        """The case database (SQLAlchemy URL): PONTUAL_CASES_DB (e.g. a PostgreSQL URL
        ``postgresql+psycopg://user@host/db``), else an SQLite file beside the store."""
        env = os.environ.get(CASES_DB_ENV)
        if env:
            return env
        path = self.store_path.with_name(self.store_path.stem + ".cases.sqlite")
        return f"sqlite:///{path}"

    @property
    def retention_years(self) -> int:
        """Years raw pings and taps are kept (PONTUAL_RETENTION_YEARS, default 9)."""
        env = os.environ.get(RETENTION_ENV)
        if not env:
            return DEFAULT_RETENTION_YEARS
        try:
            years = int(env)
        except ValueError as exc:
            raise ConfigError(f"{RETENTION_ENV} must be a whole number of years") from exc
        if years < DEFAULT_RETENTION_YEARS:
            raise ConfigError(
                f"{RETENTION_ENV}={years} is shorter than the longest legal horizon "
                f"({DEFAULT_RETENTION_YEARS} years: cassação, BG art. 72-VII)",
                hint=f"use {DEFAULT_RETENTION_YEARS} or more",
            )
        return years


def hash_key(settings: Settings, *, create: bool = False) -> bytes:
    """The secret key for HMAC-SHA256 of card ids (LGPD).

    Taken from PONTUAL_HASH_KEY (hex) when set, else from the key file beside the store, which
    `create=True` (used by `init` and by ingest) writes with mode 0600 when absent. The key is
    never printed.
    """
    env = os.environ.get(HASH_KEY_ENV)
    if env:
        try:
            return bytes.fromhex(env)
        except ValueError as exc:
            raise ConfigError(f"{HASH_KEY_ENV} must be hex", hint="e.g. 64 hex characters") from exc
    path = settings.key_path
    if path.exists():
        return bytes.fromhex(path.read_text().strip())
    if not create:
        raise ConfigError(
            "no card-hashing key", where=str(path), hint=f"run `pontual init` or set {HASH_KEY_ENV}"
        )
    path.parent.mkdir(parents=True, exist_ok=True)
    key = secrets.token_bytes(32)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w") as fh:
        fh.write(key.hex())
    return key
