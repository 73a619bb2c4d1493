"""A GTFS zip whose member names climb out of the archive's folder is refused (zip slip).

The fixture `tests/fixtures/bad/gtfs/zip_member_path_traversal.zip` holds a good agency.txt
and `../../evil.txt`; the others are written here. Each is an `InputError` naming the member,
before any entry is unpacked; the CLI's pt-BR text is checked in
tests/pontual/test_error_language.py.
"""

from __future__ import annotations

import zipfile
from pathlib import Path

import pytest

from core.errors import InputError
from gtfs.read import read_feed_files
from pontual.cli import main
from tests.conftest import FIXTURES

TRAVERSAL = FIXTURES / "bad" / "gtfs" / "zip_member_path_traversal.zip"
AGENCY = "agency_id,agency_name,agency_url,agency_timezone\nA,Bus,http://a.example,UTC\n"


def test_fixture_holds_a_member_outside_its_folder() -> None:
    with zipfile.ZipFile(TRAVERSAL) as zf:
        assert zf.namelist() == ["agency.txt", "../../evil.txt"]


def test_path_traversal_member_is_refused_naming_it() -> None:
    with pytest.raises(InputError) as err:
        read_feed_files(TRAVERSAL)
    assert err.value.what == (
        "the zip archive holds a member named ../../evil.txt, outside its own folder "
        "(path traversal): refused"
    )
    assert err.value.where == str(TRAVERSAL)


@pytest.mark.parametrize(
    "name", ["/etc/evil.txt", "feed/../../evil.txt", "..\\evil.txt", "C:\\evil.txt"]
)
def test_absolute_and_windows_member_names_are_refused(tmp_path: Path, name: str) -> None:
    path = tmp_path / "feed.zip"
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("agency.txt", AGENCY)
        zf.writestr(name, "x\n")
    with pytest.raises(InputError, match="path traversal"):
        read_feed_files(path)


def test_plain_and_folder_member_names_still_load(tmp_path: Path) -> None:
    path = tmp_path / "feed.zip"
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("feed/agency.txt", AGENCY)
        zf.writestr("feed/notes..txt", "dots in a name are not a parent folder\n")
    files = read_feed_files(path)
    assert files["agency.txt"] == AGENCY.encode()


def test_cli_refuses_it_with_exit_2_and_stores_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store = tmp_path / "s.duckdb"
    code = main(["--store", str(store), "gtfs", "load", str(TRAVERSAL)])
    err = capsys.readouterr().err
    assert code == 2
    assert "../../evil.txt" in err and "Traceback" not in err
    assert not (tmp_path.parent / "evil.txt").exists()
