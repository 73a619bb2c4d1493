"""The one catalogue of user-facing texts (core.texts, docs/adr/0106).

Every text the code marks (`_`, `gettext`, `ngettext`, `N_`) is found by walking the packages'
syntax trees, as `pybabel extract` does, and must have its pt-BR text in the .po with the same
``{fields}``; the .po has no entry the code no longer uses (`make messages` drops them).
"""

from __future__ import annotations

import ast
import string
from pathlib import Path

import pytest
from babel.messages.pofile import read_po

from core import texts
from core.texts import N_, Labels, gettext, ngettext

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = (
    "core",
    "gtfs",
    "ingest",
    "analytics",
    "exports",
    "cases",
    "dashboard",
    "pontual",
    "sample_data",
)
MARKERS = {"_", "gettext", "ngettext", "N_"}


def _name(func: ast.expr) -> str:
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):
        return func.attr
    return ""


def extract() -> tuple[dict[str | tuple[str, str], list[str]], list[str]]:
    """The marked texts of the packages ({msgid or (singular, plural): [where]}) and the
    calls whose text is not a literal a tool can extract (an f-string, a + or a %)."""
    found: dict[str | tuple[str, str], list[str]] = {}
    bad: list[str] = []
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            where = str(path.relative_to(ROOT))
            for node in ast.walk(ast.parse(path.read_text(), filename=where)):
                if not (isinstance(node, ast.Call) and _name(node.func) in MARKERS):
                    continue
                n_texts = 2 if _name(node.func) == "ngettext" else 1
                args = node.args[:n_texts]
                if len(args) < n_texts:
                    continue
                if any(isinstance(a, ast.JoinedStr | ast.BinOp) for a in args):
                    bad.append(f"{where}:{node.lineno}")
                    continue
                if not all(isinstance(a, ast.Constant) and isinstance(a.value, str) for a in args):
                    continue  # a wrapper passing its argument on (gettext(msgid))
                values = [str(a.value) for a in args if isinstance(a, ast.Constant)]
                key: str | tuple[str, str] = values[0] if n_texts == 1 else (values[0], values[1])
                found.setdefault(key, []).append(f"{where}:{node.lineno}")
    return found, bad


def fields(text: str) -> set[str]:
    """The names of a template's ``{fields}``."""
    return {name for _, name, _, _ in string.Formatter().parse(text) if name is not None}


@pytest.fixture(scope="module")
def po() -> dict[str | tuple[str, str], str | tuple[str, ...]]:
    with texts.po_path().open("rb") as f:
        catalogue = read_po(f, locale="pt_BR", domain=texts.DOMAIN)
    assert not catalogue.obsolete, "obsolete entries: run `make messages`"
    assert [m.id for m in catalogue if m.id and m.fuzzy] == []
    assert catalogue.plural_forms == "nplurals=2; plural=(n > 1);"
    out: dict[str | tuple[str, str], str | tuple[str, ...]] = {}
    for m in catalogue:
        if m.id:
            key = (m.id[0], m.id[1]) if isinstance(m.id, tuple) else str(m.id)
            out[key] = tuple(m.string) if isinstance(m.string, list | tuple) else str(m.string)
    return out


def test_no_marked_text_is_built_at_run_time() -> None:
    """_(f"...") cannot be in the catalogue: the id must be a literal template."""
    assert extract()[1] == []


def test_every_marked_text_has_its_pt_br_text_with_the_same_fields(po: dict) -> None:
    found, _ = extract()
    assert len(found) > 1000
    missing = [k for k in found if k not in po]
    assert missing == [], "not in the .po: run `make messages` and fill in the msgstr"
    for key in found:
        text = po[key]
        if isinstance(key, tuple):
            assert isinstance(text, tuple) and len(text) == 2 and all(text), key
            ids = fields(key[0]) | fields(key[1])
            assert set().union(*map(fields, text)) == ids, key
            assert all(fields(t) <= ids for t in text), key
        else:
            assert isinstance(text, str) and text, f"empty msgstr: {key!r} ({found[key][0]})"
            assert fields(text) == fields(key), key


def test_the_po_has_no_unused_entry(po: dict) -> None:
    found, _ = extract()
    assert [k for k in po if k not in found] == []


def test_pt_br_is_the_default_and_en_shows_the_ids(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(texts.LANG_ENV, raising=False)
    assert gettext("error: {text}", text="x") == "erro: x"
    assert gettext("a text nobody marked") == "a text nobody marked"
    labels = Labels({"err": N_("error: {text}"), "int": N_("interrupted")})
    assert dict(labels) == {"err": "erro: {text}", "int": "interrompido"}
    monkeypatch.setenv(texts.LANG_ENV, "en_US")
    assert gettext("error: {text}", text="x") == "error: x"
    assert labels["int"] == "interrupted"
    monkeypatch.setenv(texts.LANG_ENV, "pt-BR")
    assert labels["int"] == "interrompido"


def test_counted_texts_take_the_pt_br_plural_forms(monkeypatch: pytest.MonkeyPatch) -> None:
    """pt-BR: 0 and 1 take the singular (Plural-Forms n > 1), as GNU gettext and CLDR say."""
    found = [k for k in extract()[0] if isinstance(k, tuple)]
    assert found, "no counted text marked with ngettext"
    singular, plural = found[0]
    forms = texts.catalogue().plural[(singular, plural)]
    other = {name: f"<{name}>" for name in fields(singular) | fields(plural) if name != "n"}
    monkeypatch.delenv(texts.LANG_ENV, raising=False)
    assert [ngettext(singular, plural, n, **other) for n in (0, 1, 2)] == [
        forms[0].format(n=0, **other),
        forms[0].format(n=1, **other),
        forms[1].format(n=2, **other),
    ]
    monkeypatch.setenv(texts.LANG_ENV, "en")
    assert ngettext(singular, plural, 1, **other) == singular.format(n=1, **other)
    assert ngettext(singular, plural, 0, **other) == plural.format(n=0, **other)


def test_the_runtime_reader_reads_the_po_as_babel_does(tmp_path: Path) -> None:
    """core.texts reads the .po with the standard library (the CLI's --help reads it); Babel,
    which writes it, must read the same translations, plural rule, escapes and skips."""
    from babel.messages.pofile import read_po as babel_read_po

    odd = tmp_path / "odd.po"
    odd.write_text(
        'msgid ""\nmsgstr ""\n"Plural-Forms: nplurals=2; plural=(n > 1);\\n"\n\n'
        '#, python-brace-format\nmsgid "a \\"quoted\\" {x}"\nmsgstr "um \\"citado\\"\\t{x}"\n\n'
        'msgid ""\n"continued "\n"line"\nmsgstr "linha "\n"continuada"\n\n'
        '#, fuzzy\nmsgid "fuzzy"\nmsgstr "difuso"\n\nmsgid "empty"\nmsgstr ""\n\n'
        '#~ msgid "gone"\n#~ msgstr "sumiu"\n',
        encoding="utf-8",
    )
    for path in (texts.po_path(), odd):
        ours = texts.read_po(path)
        with path.open("rb") as f:
            theirs = babel_read_po(f, locale="pt_BR")
        singular = {
            str(m.id): str(m.string)
            for m in theirs
            if m.id and not isinstance(m.id, tuple) and m.string and not m.fuzzy
        }
        plural = {
            (m.id[0], m.id[1]): tuple(m.string)
            for m in theirs
            if isinstance(m.id, tuple) and isinstance(m.string, tuple | list) and all(m.string)
        }
        assert (ours.singular, ours.plural) == (singular, plural)
        assert [ours.plural_index(n) for n in range(4)] == [0, 0, 1, 1]
    assert texts.read_po(odd).singular == {
        'a "quoted" {x}': 'um "citado"\t{x}',
        "continued line": "linha continuada",
    }
