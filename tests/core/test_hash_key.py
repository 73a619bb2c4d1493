"""The card-hashing key: created 0600 by init, long enough, private, one per store, never
silently replaced; every refusal is a user error (exit 2) with a hint."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from core.errors import ConfigError
from core.settings import HASH_KEY_ENV, MIN_KEY_BYTES, Settings, hash_key, key_fingerprint
from core.store import Store
from pontual.cli import main
from tests.conftest import FIXTURES

FARES = str(FIXTURES / "ingest" / "fares_with_card_ids.csv")


@pytest.fixture(autouse=True)
def _no_env_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(HASH_KEY_ENV, raising=False)


def cli(store_path: Path, *args: str) -> int:
    return main(["--store", str(store_path), *args])


def test_init_creates_a_private_key_of_32_bytes(store_path: Path) -> None:
    assert cli(store_path, "init") == 0
    path = Settings.resolve(str(store_path)).key_path
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert len(bytes.fromhex(path.read_text())) == MIN_KEY_BYTES
    for p in store_path.parent.iterdir():  # the store is not readable by others either
        assert stat.S_IMODE(p.stat().st_mode) & 0o007 == 0, p


@pytest.mark.parametrize(
    ("content", "mode", "message", "shown"),
    [
        (
            "ab",
            0o600,
            "the card-hashing key is 1 bytes; at least 32 are required",
            "erro: a chave de hash de cartões tem 1 bytes; são exigidos pelo menos 32",
        ),
        (
            "11" * 32,
            0o644,
            "the card-hashing key file can be read by others (mode 644)",
            "erro: o arquivo da chave de hash de cartões pode ser lido por outros (modo 644)",
        ),
        (
            "11" * 32,
            0o640,
            "the card-hashing key file can be read by others (mode 640)",
            "erro: o arquivo da chave de hash de cartões pode ser lido por outros (modo 640)",
        ),
        (
            "not hex at all" * 5,
            0o600,
            "the card-hashing key file is corrupt",
            "erro: o arquivo da chave de hash de cartões está corrompido",
        ),
    ],
    ids=["one_byte_key_is_too_short", "world_readable", "group_readable", "corrupt"],
)
def test_a_bad_key_file_is_refused_with_exit_2(
    store_path: Path,
    capsys: pytest.CaptureFixture[str],
    content: str,
    mode: int,
    message: str,
    shown: str,
) -> None:
    path = Settings.resolve(str(store_path)).key_path
    path.parent.mkdir(parents=True)
    path.write_text(content)
    path.chmod(mode)
    with pytest.raises(ConfigError) as err:
        hash_key(Settings.resolve(str(store_path)), create=True)
    assert message in err.value.what
    assert cli(store_path, "ingest", "fares", FARES) == 2
    assert shown in " ".join(capsys.readouterr().err.split())  # the CLI speaks pt-BR


def test_a_short_key_in_the_environment_is_refused(
    store_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(HASH_KEY_ENV, "00" * 16)
    with pytest.raises(ConfigError, match="16 bytes; at least 32"):
        hash_key(Settings.resolve(str(store_path)))


def test_a_lost_key_is_not_replaced_and_another_key_is_refused(
    store_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    assert cli(store_path, "init") == 0
    assert cli(store_path, "ingest", "fares", FARES) == 0
    path = Settings.resolve(str(store_path)).key_path
    key = bytes.fromhex(path.read_text())
    with Store.open(store_path) as store:
        stored = store.query("SELECT fingerprint FROM hash_key_fingerprints")["fingerprint"]
    assert stored.to_list() == [key_fingerprint(key)]
    assert key.hex() not in stored[0]
    capsys.readouterr()
    # The key file is lost: no new key is made behind the user's back.
    path.unlink()
    assert cli(store_path, "ingest", "fares", FARES) == 2
    err = " ".join(capsys.readouterr().err.split())
    assert "chave de hash de cartões sumiu, e os cartões deste banco foram hasheados" in err
    assert not path.exists()
    # Another key (here from the environment) is refused.
    monkeypatch.setenv(HASH_KEY_ENV, "22" * 32)
    assert cli(store_path, "ingest", "fares", FARES) == 2
    err = " ".join(capsys.readouterr().err.split())
    assert "não é a usada nos cartões deste banco" in err
    # The right key works again.
    monkeypatch.setenv(HASH_KEY_ENV, key.hex())
    assert cli(store_path, "ingest", "fares", FARES) == 0


def test_a_key_is_created_while_no_card_was_hashed(store_path: Path) -> None:
    # A store with pings only: a key may still be created (nothing depends on one yet).
    assert cli(store_path, "init") == 0
    path = Settings.resolve(str(store_path)).key_path
    path.unlink()
    assert cli(store_path, "ingest", "fares", FARES) == 0
    assert path.exists()


def test_an_empty_store_option_is_an_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--store", "", "init"]) == 2
    assert "erro: --store está vazio" in capsys.readouterr().err
