"""A GTFS zip bomb fails clearly (exit 2) with bounded memory, instead of exhausting it.

The bombs are written in steps (never more than a few MiB in memory) and read under
`tracemalloc`: reading must stop long before the archive's full size, well under 1 GB.
"""

from __future__ import annotations

import tracemalloc
import zipfile
from pathlib import Path
from typing import Any

import pytest

from core.errors import InputError
from core.settings import ArchiveLimits
from gtfs.read import read_feed_files
from pontual.cli import main

MiB = 1024**2
AGENCY = b"agency_id,agency_name,agency_url,agency_timezone\nA,Bus,http://a.example,UTC\n"


def write_bomb(path: Path, entries: dict[str, int]) -> Path:
    """A zip whose entries unpack to the given sizes of zeros (after a CSV header line)."""
    block = b"0" * MiB
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=9) as zf:
        zf.writestr("agency.txt", AGENCY)
        for name, size in entries.items():
            with zf.open(name, "w", force_zip64=True) as fh:
                fh.write(b"trip_id\n")
                for _ in range(size // MiB):
                    fh.write(block)
    return path


def read_peak(path: Path, limits: ArchiveLimits | None = None) -> tuple[InputError, int]:
    tracemalloc.start()
    try:
        with pytest.raises(InputError) as err:
            read_feed_files(path, limits)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return err.value, peak


def test_a_highly_compressed_entry_is_refused_as_a_bomb(tmp_path: Path) -> None:
    # 160 MiB of zeros in about 160 KiB: ratio ~1000, refused after 16 MiB unpacked.
    bomb = write_bomb(tmp_path / "bomb.zip", {"stop_times.txt": 160 * MiB})
    assert bomb.stat().st_size < MiB
    err, peak = read_peak(bomb)
    assert "stop_times.txt unpacks to more than 200 times its compressed size" in err.what
    assert err.where == str(bomb)
    assert peak < 64 * MiB


def test_entry_and_total_sizes_are_capped(tmp_path: Path) -> None:
    no_ratio: dict[str, Any] = {"max_ratio": 1e12}
    bomb = write_bomb(tmp_path / "big.zip", {"stop_times.txt": 40 * MiB})
    err, peak = read_peak(bomb, ArchiveLimits(max_entry_bytes=24 * MiB, **no_ratio))
    assert "stop_times.txt unpacks to more than 24 MiB" in err.what
    assert peak < 64 * MiB
    two = write_bomb(tmp_path / "two.zip", {"shapes.txt": 20 * MiB, "stop_times.txt": 20 * MiB})
    err, _ = read_peak(two, ArchiveLimits(max_total_bytes=30 * MiB, **no_ratio))
    assert "the feed's files unpack to more than 30 MiB" in err.what


def test_the_sizes_an_archive_declares_are_not_trusted(tmp_path: Path) -> None:
    # The headers say 1 KiB; the data unpacks to 40 MiB.
    bomb = tmp_path / "liar.zip"
    with zipfile.ZipFile(bomb, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("stop_times.txt", b"trip_id\n" + b"0" * 40 * MiB)
    data = bytearray(bomb.read_bytes())
    for signature, offset in ((b"PK\x03\x04", 22), (b"PK\x01\x02", 24)):
        at = data.index(signature) + offset
        assert int.from_bytes(data[at : at + 4], "little") == 40 * MiB + 8
        data[at : at + 4] = (1024).to_bytes(4, "little")
    bomb.write_bytes(bytes(data))
    with zipfile.ZipFile(bomb) as zf:
        assert zf.getinfo("stop_times.txt").file_size == 1024
    err, peak = read_peak(bomb, ArchiveLimits(max_entry_bytes=8 * MiB, max_ratio=1e12))
    # The unpacking stops at the declared size, and the cut data fails its checksum.
    assert "cannot read the zip archive" in err.what
    assert peak < 16 * MiB


def test_gtfs_validate_of_a_bomb_exits_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bomb = write_bomb(tmp_path / "bomb.zip", {"stop_times.txt": 64 * MiB})
    code = main(["--store", str(tmp_path / "s.duckdb"), "gtfs", "validate", str(bomb)])
    assert code == 2
    err = " ".join(capsys.readouterr().err.split())
    assert "bomba zip" in err
