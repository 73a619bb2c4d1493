"""Settings: where the store lives, which profile is in force, the card-hashing key.

Resolution order for each: command-line option, then environment variable, then default.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import secrets
import stat
from dataclasses import dataclass
from pathlib import Path

from core.errors import ConfigError

DEFAULT_STORE = Path("data") / "pontual.duckdb"
DEFAULT_PROFILE = "bento-goncalves-2021"
LAKE_ENV = "PONTUAL_LAKE"
STORE_ENV = "PONTUAL_STORE"
PROFILE_ENV = "PONTUAL_PROFILE"
HASH_KEY_ENV = "PONTUAL_HASH_KEY"
CASES_DB_ENV = "PONTUAL_CASES_DB"
RETENTION_ENV = "PONTUAL_RETENTION_YEARS"
MAP_TILES_ENV = "PONTUAL_MAP_TILES"
MAP_ATTRIBUTION_ENV = "PONTUAL_MAP_ATTRIBUTION"
# The dashboard's street basemap (ADR 0105): OpenStreetMap's standard raster tiles, whose use
# asks for this credit under the map. A city with its own tile server sets both variables.
DEFAULT_MAP_TILES_URL = "https://tile.openstreetmap.org/{z}/{x}/{y}.png"
DEFAULT_MAP_ATTRIBUTION = "© colaboradores do OpenStreetMap"
# Raw data is kept at least as long as the longest legal horizon in force: cassação may rest on
# 8 non-consecutive years of grade E (BG art. 72-VII), so 9 years covers the evidence behind it.
DEFAULT_RETENTION_YEARS = 9


@dataclass(frozen=True)
class ArchiveLimits:
    """Caps on unpacking a zip archive (a GTFS feed), so a zip bomb fails clearly instead of
    exhausting memory. Real feeds stay far below: the largest stop_times.txt we know are
    around 1 GiB, and CSV text compresses 5-30 to 1.

    max_entry_bytes: largest uncompressed file; max_total_bytes: largest sum over the files
    read; max_ratio: largest uncompressed/compressed ratio of a file, checked once
    `ratio_floor_bytes` of it are unpacked (a tiny file may compress well and harm nobody).
    """

    max_entry_bytes: int = 2 * 1024**3
    max_total_bytes: int = 4 * 1024**3
    max_ratio: float = 200.0
    ratio_floor_bytes: int = 16 * 1024**2


@dataclass(frozen=True)
class Settings:
    """What every command needs to know about its environment."""

    store_path: Path
    profile_id: str
    quiet: bool = False
    debug: bool = False
    lake_path: Path | None = None
    """a lake (`core.lake`) the reading verbs read instead of the store file (--lake)"""

    @classmethod
    def resolve(
        cls,
        store: str | None = None,
        profile: str | None = None,
        *,
        quiet: bool = False,
        debug: bool = False,
        lake: str | None = None,
    ) -> Settings:
        if store is not None and not store.strip():
            raise ConfigError(
                "--store is empty", where="option --store", hint="give the store file's path"
            )
        store_path = Path(store or os.environ.get(STORE_ENV) or DEFAULT_STORE)
        profile_id = profile or os.environ.get(PROFILE_ENV) or DEFAULT_PROFILE
        if lake is not None and not lake.strip():
            raise ConfigError(
                "--lake is empty", where="option --lake", hint="give the lake folder's path"
            )
        lake = lake or os.environ.get(LAKE_ENV) or None
        return cls(
            store_path=store_path,
            profile_id=profile_id,
            quiet=quiet,
            debug=debug,
            lake_path=Path(lake) if lake else None,
        )

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
    def map_tiles_url(self) -> str:
        """The dashboard maps' raster tile URL ({z}/{x}/{y} template): PONTUAL_MAP_TILES,
        else OpenStreetMap's standard tiles; set but empty, maps draw without a basemap."""
        return os.environ.get(MAP_TILES_ENV, DEFAULT_MAP_TILES_URL).strip()

    @property
    def map_tiles_attribution(self) -> str:
        """The credit shown under a map with tiles: PONTUAL_MAP_ATTRIBUTION, else
        OpenStreetMap's (the default tiles' licence asks for it) unless the tiles are off."""
        env = os.environ.get(MAP_ATTRIBUTION_ENV)
        if env is not None:
            return env.strip()
        return DEFAULT_MAP_ATTRIBUTION if self.map_tiles_url else ""

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


MIN_KEY_BYTES = 32
"""Shortest card-hashing key accepted (bytes): HMAC-SHA256's own block strength."""
_FINGERPRINT_LABEL = b"pontual card-hashing key fingerprint v1"


def key_fingerprint(key: bytes) -> str:
    """A name for `key` that reveals nothing of it: HMAC-SHA256(key, a fixed label), hex."""
    return hmac.new(key, _FINGERPRINT_LABEL, hashlib.sha256).hexdigest()


def hash_key(settings: Settings, *, create: bool = False) -> bytes:
    """The secret key for HMAC-SHA256 of card ids (LGPD).

    Taken from PONTUAL_HASH_KEY (hex) when set, else from the key file beside the store. The
    key must be at least `MIN_KEY_BYTES` long, and its file readable by its owner only. With
    `create=True` (init, ingest, listen) an absent file is created (mode 0600), but only while
    no card was hashed into the store yet: a lost key is never silently replaced (that would
    split every card's history), it is an error with a hint. The key is never printed.
    `core.store.Store.check_key_fingerprint` refuses a key other than the store's.
    """
    env = os.environ.get(HASH_KEY_ENV)
    if env:
        try:
            key = bytes.fromhex(env.strip())
        except ValueError as exc:
            raise ConfigError(
                f"{HASH_KEY_ENV} must be hex", hint="e.g. 64 hex characters (32 bytes)"
            ) from exc
        return _long_enough(key, HASH_KEY_ENV)
    path = settings.key_path
    if path.exists():
        mode = path.stat().st_mode
        if mode & 0o077:
            raise ConfigError(
                f"the card-hashing key file can be read by others (mode {stat.S_IMODE(mode):o})",
                where=str(path),
                hint=f"chmod 600 {path}",
            )
        try:
            key = bytes.fromhex(path.read_text(encoding="ascii").strip())
        except (ValueError, UnicodeDecodeError) as exc:
            raise ConfigError(
                "the card-hashing key file is corrupt (expected hex text)",
                where=str(path),
                hint="restore it from the backup (see docs/key-rotation.md)",
            ) from exc
        return _long_enough(key, str(path))
    if not create:
        raise ConfigError(
            "no card-hashing key", where=str(path), hint=f"run `pontual init` or set {HASH_KEY_ENV}"
        )
    if store_has_key_fingerprint(settings.store_path):
        raise ConfigError(
            "the card-hashing key file is missing, and this store's cards were hashed with it",
            where=str(path),
            hint="restore the key file from the backup (docs/key-rotation.md); a new key "
            "would make every card a new one",
        )
    path.parent.mkdir(parents=True, exist_ok=True)
    key = secrets.token_bytes(MIN_KEY_BYTES)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w") as fh:
        fh.write(key.hex())
    return key


def _long_enough(key: bytes, where: str) -> bytes:
    if len(key) < MIN_KEY_BYTES:
        raise ConfigError(
            f"the card-hashing key is {len(key)} bytes; at least {MIN_KEY_BYTES} are required",
            where=where,
            hint=f"a key of {MIN_KEY_BYTES} random bytes, hex-encoded ({2 * MIN_KEY_BYTES} "
            "characters), e.g. from `pontual init`",
        )
    return key


def store_has_key_fingerprint(store_path: Path) -> bool:
    """Whether the store file records a card-hashing key (cards were hashed into it).

    Opens the file read-only; a store that cannot be opened (another process writes it) is
    taken to have one, so that a missing key is never replaced behind a running writer.
    """
    if not store_path.exists():
        return False
    import duckdb  # only on this rare path (creating a key): the CLI starts without it

    try:
        con = duckdb.connect(str(store_path), read_only=True)
    except duckdb.Error:
        return True
    try:
        found = con.execute(
            "SELECT count(*) FROM information_schema.tables "
            "WHERE table_name = 'hash_key_fingerprints'"
        ).fetchall()[0][0]
        if not found:
            return False
        return bool(con.execute("SELECT count(*) FROM hash_key_fingerprints").fetchall()[0][0])
    finally:
        con.close()
