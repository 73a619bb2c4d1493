"""The one catalogue of every user-facing text: the dashboard's pages, the reports (PDF, XLSX,
CSV), the indicators' names and the command line's messages (docs/adr/0106).

Gettext's convention: a text's id is its English wording, a template with ``{named}`` fields;
`core/locale/pt_BR/LC_MESSAGES/pontual.po` gives its pt-BR text (and its plural forms). pt-BR
is the default; `PONTUAL_LANG=en` shows the ids. The .po file is read with Babel on the first
text asked for (never at import: `pontual --help` loads neither Babel nor the file) and kept.

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
from collections.abc import Callable, Hashable, Iterator, Mapping
from dataclasses import dataclass
from functools import cache
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
    """The catalogue of `lang`, read once (Babel's .po reader)."""
    from gettext import c2py

    from babel.messages.pofile import read_po

    with po_path(lang).open("rb") as f:
        po = read_po(f, locale=lang, domain=DOMAIN)
    singular: dict[str, str] = {}
    plural: dict[tuple[str, str], tuple[str, ...]] = {}
    for message in po:
        if not message.id or message.fuzzy:
            continue
        if isinstance(message.id, tuple):
            forms = tuple(message.string or ())
            if forms and all(forms):
                plural[(message.id[0], message.id[1])] = forms
        elif isinstance(message.id, str) and isinstance(message.string, str) and message.string:
            singular[message.id] = message.string
    return Catalogue(singular, plural, c2py(po.plural_expr))


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
