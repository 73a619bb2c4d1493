"""Lazy start-up: `pontual --help` and `pontual VERB --help` import no heavy module.

Each check runs a fresh interpreter (an import already made by another test would hide a
regression) and lists the modules loaded when the parser has printed its help. The whole-process
time and memory are measured by benchmarks/bench_startup.py (a test would be flaky on a shared
machine); this test guards the cause: what gets imported.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from pontual.cli import build_parser, named_verb
from pontual.verbs import VERB_MODULE_NAMES, VERBS, verb_module, verb_modules

ROOT = Path(__file__).resolve().parents[2]

# Third-party packages that cost hundreds of milliseconds or tens of MB each, and the project's
# own heavy packages (their modules import Polars, DuckDB, numba...).
HEAVY = (
    "babel",
    "polars",
    "duckdb",
    "numba",
    "numpy",
    "scipy",
    "streamlit",
    "pyarrow",
    "pydantic",
    "rich",
    "shapely",
    "pyproj",
    "uvicorn",
    "starlette",
    "paho",
    "reportlab",
    "xlsxwriter",
    "analytics",
    "dashboard",
    "gtfs",
    "sample_data.simulate",
    "core.store",
    "core.profile",
    "pontual.feed_server",
)

# Runs the CLI with the given arguments, catches argparse's exit and prints the loaded modules.
PROBE = """
import json, sys
from pontual.cli import main
try:
    main(sys.argv[1:])
except SystemExit:
    pass
print("\\n@@" + json.dumps(sorted(sys.modules)))
"""


def loaded_modules(*argv: str) -> list[str]:
    result = subprocess.run(
        [sys.executable, "-c", PROBE, *argv],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
    )
    assert "uso: pontual" in result.stdout, result.stdout + result.stderr
    return list(json.loads(result.stdout.rsplit("\n@@", 1)[1]))


def heavy_of(modules: list[str]) -> list[str]:
    return [m for m in modules if any(m == h or m.startswith(h + ".") for h in HEAVY)]


def verb_names() -> set[str]:
    """The verbs `pontual --help` lists."""
    (verbs,) = [a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction)]
    return set(verbs.choices)


def test_help_imports_no_heavy_module() -> None:
    modules = loaded_modules("--help")
    assert heavy_of(modules) == []
    # and the verbs are all there to be listed
    assert {m.__name__ for m in verb_modules()} <= set(modules)


@pytest.mark.parametrize(
    "argv",
    [
        ("init", "--help"),
        ("profiles", "show", "--help"),
        ("simulate", "--help"),
        ("gtfs", "load", "--help"),
        ("ingest", "avl", "--help"),
        ("quarantine", "--help"),
        ("listen", "--help"),
        ("match", "--help"),
        ("crowding", "--help"),
        ("indices", "--help"),
        ("report", "annual", "--help"),
        ("serve", "--help"),
        ("dashboard", "--help"),
        ("demo", "--help"),
        ("warm", "--help"),
        ("export", "tides", "--help"),
        ("lake", "export", "--help"),
        ("cases", "--help"),
        ("users", "--help"),
        ("audit", "--help"),
        ("verify", "--help"),
        ("replay", "--help"),
    ],
    ids=lambda argv: "-".join(argv[:-1]),
)
def test_verb_help_imports_no_heavy_module(argv: tuple[str, ...]) -> None:
    assert heavy_of(loaded_modules(*argv)) == []


def test_every_verb_has_a_help_case() -> None:
    # a new verb must be added to the cases above (it would escape the guard otherwise)
    cases = {"init", "profiles", "simulate", "gtfs", "ingest", "quarantine", "listen", "match"}
    cases |= {"crowding", "indices", "report", "serve", "dashboard", "demo", "warm"}
    cases |= {"export", "lake", "cases", "users", "audit", "verify", "replay"}
    assert verb_names() == cases


def test_a_command_imports_only_its_verbs_module() -> None:
    """`pontual ingest ...` registers the ingest verbs alone (ADR 0114)."""
    modules = set(loaded_modules("--quiet", "--store", "s.duckdb", "ingest", "avl", "--help"))
    loaded = {n for n in VERB_MODULE_NAMES if f"pontual.verbs.{n}" in modules}
    assert loaded == {"ingest"}


@pytest.mark.parametrize(
    ("argv", "verb"),
    [
        (("ingest", "incidents", "f.csv"), "ingest"),
        (("--quiet", "--store", "s.duckdb", "ingest", "surveys", "f.csv"), "ingest"),
        (("--store=s.duckdb", "--profile", "p.toml", "quarantine", "--limit", "3"), "quarantine"),
        (("--sto", "s.duckdb", "--q", "gtfs", "load", "feed.zip"), "gtfs"),  # prefixes
        (("--store", "init", "init"), "init"),  # a value that is a verb's name
        (("--lake", "lake/", "--debug", "lake", "export", "--lake", "l2"), "lake"),
        (("users", "list"), "users"),
        (("audit", "--by", "ana"), "audit"),
        (("--version", "init"), "init"),
    ],
)
def test_the_named_verbs_parser_parses_as_the_whole_one(argv: tuple[str, ...], verb: str) -> None:
    assert named_verb(argv) == verb
    alone = build_parser((verb_module(VERBS[verb]),))
    (verbs,) = [a for a in alone._actions if isinstance(a, argparse._SubParsersAction)]
    assert verb in verbs.choices
    if "--version" in argv:
        return  # both print the version and exit before the verb
    assert vars(alone.parse_args(argv)) == vars(build_parser().parse_args(argv))


@pytest.mark.parametrize(
    "argv",
    [
        (),
        ("--help", "ingest"),  # the help lists every verb
        ("-h",),
        ("--he", "match"),
        ("inget", "avl"),  # unknown: the whole parser names the choices
        ("--bogus", "ingest"),
        ("--quiet=yes", "ingest"),
        ("--store",),
        ("--", "ingest"),
        ("-q", "ingest"),
    ],
)
def test_in_doubt_every_verb_is_registered(argv: tuple[str, ...]) -> None:
    assert named_verb(argv) is None


def test_every_verb_is_known_to_its_module() -> None:
    for name, module in VERBS.items():
        assert module in VERB_MODULE_NAMES
        parser = build_parser((verb_module(module),))
        (verbs,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
        assert name in verbs.choices
    assert set(VERBS) == verb_names()


def test_version_is_read_when_asked() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "pontual", "--version"],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
    )
    from core import __version__

    assert result.stdout == f"pontual {__version__}\n"


# A command's work, not its help: what `ingest incidents` of a small file loads. It needs
# Polars, DuckDB, pydantic (the profile, the options) and the store; none of the modules below
# (the matcher's numba and scipy, Babel's formatting, Rich's console under --quiet, the
# catalogue of texts...). ADR 0007, session 33 addendum.
NOT_FOR_A_REGISTER = (
    "numba",
    "scipy",
    "pandas",
    "babel",
    "rich",
    "streamlit",
    "shapely",
    "pyproj",
    "reportlab",
    "xlsxwriter",
    "analytics",
    "dashboard",
    "exports",
    "sample_data",
    "gtfs",
    "core.pt_br",
)

RUN_PROBE = """
import json, sys
import core.texts
from pontual.cli import main
code = main(sys.argv[1:])
read = core.texts.catalogue.cache_info().currsize
print("\\n@@" + json.dumps({"code": code, "catalogue": read, "modules": sorted(sys.modules)}))
"""


def test_a_register_ingest_loads_only_what_it_uses(tmp_path: Path) -> None:
    store = str(tmp_path / "s.duckdb")
    incidents = str(ROOT / "tests" / "fixtures" / "ingest" / "incidents.csv")
    seen = {}
    for argv in (("init",), ("ingest", "incidents", incidents)):
        result = subprocess.run(
            [sys.executable, "-c", RUN_PROBE, "--quiet", "--store", store, *argv],
            capture_output=True,
            text=True,
            check=True,
            cwd=ROOT,
        )
        seen = json.loads(result.stdout.rsplit("\n@@", 1)[1])
        assert seen["code"] == 0, result.stderr
    modules = seen["modules"]
    assert {"polars", "duckdb", "pydantic", "core.store", "core.profile"} <= set(modules)
    assert [
        m for m in modules if any(m == n or m.startswith(n + ".") for n in NOT_FOR_A_REGISTER)
    ] == []
    assert seen["catalogue"] == 0  # --quiet: no message was worded


@pytest.mark.parametrize(
    ("given", "expected"), [(None, "__all__"), ("", ""), ("logfire", "logfire")]
)
def test_the_program_turns_pydantic_plugins_off_unless_told(
    given: str | None, expected: str
) -> None:
    # pydantic scans every distribution's entry points for plugins at its first model
    # (~10 ms of each command); the program turns that off, a value set by the user stays
    probe = (
        "import os, sys\n"
        "from pontual import cli\n"
        "sys.argv = ['pontual', '--help']\n"
        "try:\n"
        "    cli.main()\n"
        "except SystemExit:\n"
        "    pass\n"
        "print('@@' + repr(os.environ.get(cli.PLUGINS_ENV)))\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "PYDANTIC_DISABLE_PLUGINS"}
    if given is not None:
        env["PYDANTIC_DISABLE_PLUGINS"] = given
    result = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, cwd=ROOT, env=env
    )
    assert result.stdout.rsplit("@@", 1)[1].strip() == repr(expected)
