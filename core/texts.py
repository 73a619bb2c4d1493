"""The one catalogue of every user-facing text: the dashboard's pages, the reports (PDF, XLSX,
CSV), the indicators' names and the command line's messages (docs/adr/0106).

Gettext's convention: a text's id is its English wording, a template with ``{named}`` fields;
`core/locale/pt_BR/LC_MESSAGES/pontual.po` gives its pt-BR text (and its plural forms). pt-BR
is the default; `PONTUAL_LANG=en` shows the ids. The .po file is read on the first text asked
for (never at import) and kept, by a reader of the standard library (`read_po`; Babel, which
`make messages` uses to write it, would be the heaviest import of `pontual --help`).

- `gettext(msgid, **fields)` (imported as ``_`` where it is used a lot): the text in the chosen
  language, its fields filled in with `str.format`.
- `ngettext(singular, plural, count, **fields)`: the form for `count` (pt-BR: the singular for 0
  and 1, as the .po's Plural-Forms says); the field ``{n}`` is `count` unless given (pass it
  formatted: `n=to_integer(count)`).
- `N_(msgid)`: marks a text for the catalogue where it is written (a labels dict, a tuple of
  panels) and returns it unchanged; it is translated where it is shown, with `gettext`.

`make messages` extracts the marked texts (`pybabel extract`) and updates the .po;
tests/core/test_texts.py checks every marked text has its pt-BR text with the same fields.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Hashable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from functools import cache
from gettext import c2py
from pathlib import Path
from typing import TypeVar

LANG_ENV = "PONTUAL_LANG"
"""The environment variable choosing the language: "en" for English, else pt-BR."""

DEFAULT_LANG = "pt_BR"
DOMAIN = "pontual"
LOCALE_DIR = Path(__file__).parent / "locale"
"""Where the catalogues are: LOCALE_DIR / LANG / "LC_MESSAGES" / "pontual.po"."""


def language() -> str:
    """The language of user-facing texts: "en" or "pt_BR" (the default)."""
    lang = os.environ.get(LANG_ENV, DEFAULT_LANG).strip().lower().replace("-", "_")
    return "en" if lang.startswith("en") else DEFAULT_LANG


def po_path(lang: str = DEFAULT_LANG) -> Path:
    """The .po file of a language's catalogue."""
    return LOCALE_DIR / lang / "LC_MESSAGES" / f"{DOMAIN}.po"


@dataclass(frozen=True)
class Catalogue:
    """One language's translations, as read from its .po file (untranslated and fuzzy entries
    left out, so their English id shows)."""

    singular: dict[str, str]
    plural: dict[tuple[str, str], tuple[str, ...]]
    plural_index: Callable[[int], int]


@cache
def catalogue(lang: str = DEFAULT_LANG) -> Catalogue:
    """The catalogue of `lang`, read once from its .po file (`read_po`)."""
    return read_po(po_path(lang))


_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", '"': '"', "\\": "\\"}
_ESCAPE = re.compile(r"\\(.)")
_PLURAL = re.compile(r"plural\s*=\s*([^;\n]+)")


def _unquote(text: str) -> str:
    text = text.strip()
    return _ESCAPE.sub(lambda m: _ESCAPES.get(m[1], m[1]), text[1:-1])


def read_po(path: Path) -> Catalogue:
    """A .po file's translations: the entries with a msgstr (all forms of a plural one), not
    fuzzy, not obsolete; the plural rule from the header's Plural-Forms.

    A reader of the format's few statements (comments, msgctxt, msgid, msgid_plural, msgstr,
    msgstr[N], continued strings), standard library only: the command line reads the
    catalogue for its `--help`, where importing Babel (whose `read_po` gives the same result,
    checked by tests/core/test_texts.py) would cost more than the whole parse."""
    singular: dict[str, str] = {}
    plural: dict[tuple[str, str], tuple[str, ...]] = {}
    plural_expr = "(n != 1)"
    entry: dict[str, str] = {}
    flags: set[str] = set()
    key = ""

    def flush() -> None:
        nonlocal plural_expr
        msgid = entry.get("msgid")
        if msgid is None or "msgctxt" in entry:
            return
        if msgid == "":
            found = _PLURAL.search(entry.get("msgstr", ""))
            if found:
                plural_expr = found[1].strip()
            return
        if "fuzzy" in flags:
            return
        if "msgid_plural" in entry:
            forms = tuple(entry[k] for k in sorted(entry) if k.startswith("msgstr["))
            if forms and all(forms):
                plural[(msgid, entry["msgid_plural"])] = forms
        elif entry.get("msgstr"):
            singular[msgid] = entry["msgstr"]

    for line in path.read_text(encoding="utf-8").splitlines():
        line = line.strip()
        if not line:
            flush()
            entry, flags, key = {}, set(), ""
        elif line.startswith("#,"):
            flags.update(f.strip() for f in line[2:].split(","))
        elif line.startswith("#~"):
            flags.add("obsolete")
        elif line.startswith("#"):
            continue
        elif line.startswith('"'):
            if key:
                entry[key] += _unquote(line)
        elif "obsolete" not in flags:
            key, _, rest = line.partition(" ")
            entry[key] = _unquote(rest)
    flush()
    return Catalogue(singular, plural, c2py(plural_expr))


def gettext(msgid: str, **fields: object) -> str:
    """The text `msgid` (its English wording) in the chosen language, with its fields."""
    lang = language()
    text = msgid if lang == "en" else catalogue(lang).singular.get(msgid, msgid)
    return text.format(**fields) if fields else text


def ngettext(singular: str, plural: str, count: int, /, **fields: object) -> str:
    """The form of a counted text for `count` in the chosen language, with its fields (the
    field ``{n}`` is `count` as given unless the caller passes it formatted: n=to_integer(c))."""
    n = int(count)
    fields.setdefault("n", n)
    lang = language()
    text = singular if n == 1 else plural
    if lang != "en":
        found = catalogue(lang)
        forms = found.plural.get((singular, plural))
        if forms is not None:
            text = forms[min(found.plural_index(n), len(forms) - 1)]
    return text.format(**fields)


def compile_templates(
    msgids: Iterable[str],
) -> list[tuple[re.Pattern[str], str]]:
    """The catalogue ids with ``{fields}`` as patterns matching the texts made from them, the
    most specific first: more literal text, then fewer fields ("'{value}' is not defined in
    {what}" before "'{value}' is not {expected}"). A field used twice matches the same text."""
    ranked = []
    for msgid in msgids:
        parts = re.split(r"(\{[a-z_]+\})", msgid)
        fields = [p for p in parts if p.startswith("{") and p.endswith("}")]
        if not fields:
            continue  # an id without fields is matched exactly
        named: set[str] = set()
        regex = ""
        for p in parts:
            if p not in fields:
                regex += re.escape(p)
            elif p in named:
                regex += f"(?P={p[1:-1]})"
            else:
                named.add(p)
                regex += f"(?P<{p[1:-1]}>.+?)"
        literal = sum(len(p) for p in parts if p not in fields)
        ranked.append((-literal, len(named), re.compile(f"^{regex}$", re.DOTALL), msgid))
    ranked.sort(key=lambda r: (r[0], r[1]))
    return [(pattern, msgid) for _, _, pattern, msgid in ranked]


def match_template(
    text: str, templates: list[tuple[re.Pattern[str], str]]
) -> tuple[str, dict[str, str]] | None:
    """The first of `templates` (`compile_templates`) that `text` was made from, and the
    values of its fields; None when none matches."""
    for pattern, msgid in templates:
        found = pattern.match(text)
        if found:
            return msgid, found.groupdict()
    return None


def N_(msgid: str) -> str:
    """Marks `msgid` for the catalogue where it is written; translate it where it is shown."""
    return msgid


K = TypeVar("K", bound=Hashable)


class Labels(Mapping[K, str]):
    """A dict of codes to marked texts (`N_`) that gives each text in the chosen language when
    read: ``FARE_CLASS_LABELS["student"]`` is "Estudante" (pt-BR) or "Student" (English)."""

    def __init__(self, texts: Mapping[K, str]) -> None:
        self._texts = dict(texts)

    def __getitem__(self, key: K) -> str:
        return gettext(self._texts[key])

    def __iter__(self) -> Iterator[K]:
        return iter(self._texts)

    def __len__(self) -> int:
        return len(self._texts)

    def __repr__(self) -> str:
        return f"Labels({self._texts!r})"
