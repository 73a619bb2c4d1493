"""The catalogue of the command line's user-facing messages: pt-BR by default, English by
setting (`PONTUAL_LANG=en`).

Gettext's convention without its build step (docs/adr/0075): a message's id is its English
text, a template with ``{named}`` fields; `CATALOGUE` gives its pt-BR text. `gettext(msgid,
**fields)` formats a message in the chosen language; `translate(text)` turns an English text
that the layers below produce (ingest notes, e.g. "no records read: the file has a header line
and no records") into the chosen language by matching it against the templates (a text no
template matches is shown as it is). Standard library only: imported at start-up.
"""

from __future__ import annotations

import os
import re
from functools import cache

LANG_ENV = "PONTUAL_LANG"
DEFAULT_LANG = "pt_BR"

CATALOGUE: dict[str, str] = {
    # -- ingest: per-file summary ---------------------------------------------------------
    "{name}: {n_read} read, {n_accepted} stored, {n_duplicate} duplicate, "
    "{n_quarantined} quarantined": "{name}: {n_read} lidos, {n_accepted} aceitos, "
    "{n_duplicate} duplicados, {n_quarantined} em quarentena",
    "warning: {text}": "aviso: {text}",
    "reason": "motivo",
    "records": "registros",
    "example": "exemplo",
    "record {key}": "registro {key}",
    "quarantined in {name}, by reason": "em quarentena em {name}, por motivo",
    # -- pontual quarantine -----------------------------------------------------------------
    "quarantine: {n} records": "quarentena: {n} registros",
    "source": "origem",
    "record": "registro",
    "table": "tabela",
    "field": "campo",
    "original": "original",
    # -- ingest: notes from ingest/ -------------------------------------------------------
    "no GTFS stops loaded: positions not checked against the network's area": (
        "nenhuma parada GTFS carregada: posições não conferidas com a área da rede"
    ),
    "fleet register empty: vehicle ids not checked (run `pontual ingest vehicles`)": (
        "cadastro de frota vazio: veículos não conferidos (rode `pontual ingest vehicles`)"
    ),
    "columns taken by their common names: {pairs}": (
        "colunas reconhecidas pelos nomes usuais: {pairs}"
    ),
    "times read as {how}": "horários lidos como {how}",
    "columns not loaded (no place in the {kind} layout): {names}": (
        "colunas não carregadas (sem lugar no leiaute {kind}): {names}"
    ),
    "epoch seconds": "segundos desde 1970 (epoch)",
    "epoch milliseconds": "milissegundos desde 1970 (epoch)",
    "ISO 8601 with offset": "ISO 8601 com fuso",
    "ISO 8601 local time": "ISO 8601 em hora local",
    "layout of mapping {name} ({description})": "leiaute do mapeamento {name} ({description})",
    "JSON document: {n} records ({where})": "documento JSON: {n} registros ({where})",
    "no records read: {why}": "nenhum registro lido: {why}",
    "the file has a header line and no records": "o arquivo tem cabeçalho e nenhum registro",
    "the file is empty (only blanks)": "o arquivo está vazio (só espaços)",
    "the reader found no record in it": "o leitor não encontrou registros nele",
    "GPX: {n} route(s) ({n_points} points) not loaded: a route is a planned path, not a "
    "vehicle's trace": "GPX: {n} rota(s) ({n_points} pontos) não carregada(s): uma rota é um "
    "trajeto planejado, não o rastro de um veículo",
    "GPX: {n} waypoint(s) not loaded: a waypoint is a place, not a vehicle's trace (record "
    "inspections with `pontual ingest inspections`)": "GPX: {n} ponto(s) de referência não "
    "carregado(s): um ponto é um lugar, não o rastro de um veículo (registre fiscalizações com "
    "`pontual ingest inspections`)",
    "cannot fetch the feed ({url}): {error}; next try in {wait_s} s": (
        "não foi possível buscar o feed ({url}): {error}; nova tentativa em {wait_s} s"
    ),
    # -- ingest: refusals (InputError texts from ingest/, translated by the verb) ------------
    "the file's columns do not match the {kind} layout: no column for {lacking}. Columns "
    "found: {found}; expected: {expected} (optional: {optional})": "as colunas do arquivo não "
    "seguem o leiaute {kind}: nenhuma coluna para {lacking}. Colunas encontradas: {found}; "
    "esperadas: {expected} (opcionais: {optional})",
    "save this mapping as vendor.toml and pass --map vendor.toml:{toml}": (
        "salve este mapeamento como vendor.toml e passe --map vendor.toml:{toml}"
    ),
    "the header names the column(s) {names} more than once": (
        "o cabeçalho nomeia a(s) coluna(s) {names} mais de uma vez"
    ),
    "rename or remove the repeated column, so that each name says one thing": (
        "renomeie ou remova a coluna repetida, para que cada nome diga uma coisa só"
    ),
    "the file is {name} text, not UTF-8": "o arquivo é texto {name}, não UTF-8",
    "convert it: iconv -f {name} -t UTF-8 FILE > FILE.utf8": (
        "converta-o: iconv -f {name} -t UTF-8 ARQUIVO > ARQUIVO.utf8"
    ),
    "binary data, not text (a NUL byte at byte {n})": (
        "dados binários, não texto (um byte NUL no byte {n})"
    ),
    "is this the right file? expected a UTF-8 text file": (
        "é o arquivo certo? esperava-se um arquivo de texto UTF-8"
    ),
    "not UTF-8 text: byte {byte} at byte {n} cannot be read": (
        "não é texto UTF-8: o byte {byte} na posição {n} não pode ser lido"
    ),
    "save the file as UTF-8, or convert it: iconv -f latin1 -t UTF-8 FILE > FILE.utf8 (if it "
    "is Latin-1/Windows-1252)": "salve o arquivo como UTF-8, ou converta-o: iconv -f latin1 -t "
    "UTF-8 ARQUIVO > ARQUIVO.utf8 (se for Latin-1/Windows-1252)",
    "a GTFS-Realtime {feed} feed ({held}, no vehicle positions): it carries no vehicle "
    "positions, so it cannot be loaded as AVL": "um feed GTFS-Realtime {feed} ({held}, nenhuma "
    "posição de veículo): não traz posições de veículos, por isso não pode ser carregado como AVL",
    "{n} trip updates": "{n} atualizações de viagem",
    "{n} alerts": "{n} alertas",
    "GPX track {n} has no name, so its vehicle is unknown": (
        "a trilha GPX {n} não tem nome, então seu veículo é desconhecido"
    ),
    "give the vehicle's fleet number: pontual ingest avl FILE.gpx --vehicle N": (
        "informe o número de frota do veículo: pontual ingest avl ARQUIVO.gpx --vehicle N"
    ),
    "JSON array element {n} is not an object": "o elemento {n} do array JSON não é um objeto",
    "not JSON lines: none of the first {n} lines is a JSON object": (
        "não é JSON lines: nenhuma das {n} primeiras linhas é um objeto JSON"
    ),
    "{what}; the {n} records read before it were taken back": (
        "{what}; os {n} registros lidos antes foram desfeitos"
    ),
}
"""English message id -> pt-BR text (the same ``{fields}``)."""


def language() -> str:
    """The language of the command line's messages: "en" or "pt_BR" (the default)."""
    lang = os.environ.get(LANG_ENV, DEFAULT_LANG).strip().lower().replace("-", "_")
    return "en" if lang.startswith("en") else DEFAULT_LANG


def gettext(msgid: str, **fields: object) -> str:
    """The message `msgid` (its English text) in the chosen language, with its fields."""
    text = msgid if language() == "en" else CATALOGUE.get(msgid, msgid)
    return text.format(**fields) if fields else text


@cache
def _patterns() -> list[tuple[re.Pattern[str], str]]:
    out = []
    for msgid in CATALOGUE:
        parts = re.split(r"(\{[a-z_]+\})", msgid)
        regex = "".join(
            f"(?P<{p[1:-1]}>.+?)" if p.startswith("{") and p.endswith("}") else re.escape(p)
            for p in parts
        )
        out.append((re.compile(f"^{regex}$", re.DOTALL), msgid))
    return out


def translate(text: str) -> str:
    """An English text produced below the command line, in the chosen language: the first
    catalogue template it matches, its fields translated in turn; else the text as it is."""
    if language() == "en":
        return text
    if text in CATALOGUE:
        return CATALOGUE[text]
    for pattern, msgid in _patterns():
        found = pattern.match(text)
        if found:
            fields = {k: translate(v) for k, v in found.groupdict().items()}
            return CATALOGUE[msgid].format(**fields)
    return text
