"""The passenger's stop page of `pontual serve`: `/paradas/{stop_id}` (the next arrivals at one
stop) and `/paradas` (a stop search by name or code), small mobile-first HTML.

Everything is inline (style and a few lines of script; no external asset, so the page works
offline on a local network); the texts are the catalogue's (`core.texts`), the clock times
Babel's in the profile's time zone (`core.pt_br`). The page is complete without script (each
arrival says "em N min" as of the feed's clock, and a `<noscript>` refresh reloads it); with
script it counts each arrival down every second and reads the JSON API
(`/api/stops/{stop_id}/arrivals`) every `REFRESH_S` seconds, reloading itself when the list of
trips changed. Every value from the feed or the GTFS (stop names, headsigns, line names) is
HTML-escaped: they are input data.
"""

from __future__ import annotations

import json
import unicodedata
from dataclasses import dataclass
from datetime import datetime
from html import escape
from typing import Any
from urllib.parse import quote

import polars as pl

from core.pt_br import to_time_of_day
from core.texts import gettext as _
from core.texts import language

REFRESH_S = 15
"""Seconds between two readings of the JSON API by the page's script (the engine refreshes
its predictions every few seconds; a passenger needs no more)."""

NOSCRIPT_REFRESH_S = 30
"""Seconds between two reloads of the page when the browser runs no script."""

SEARCH_LIMIT = 50
"""The most stops a search lists (a name matching more is too vague to browse)."""

ARRIVING_S = 60
"""Under this many seconds to go, an arrival reads "chegando" instead of "em N min"."""

SHOWN_DELAY_S = 60
"""A prediction this far (or more) from the timetable shows the timetable's time beside it."""


@dataclass(frozen=True)
class PassengerNames:
    """What a passenger reads besides ids: `stops` (stop_id, stop_code, stop_name, and
    folded_name: the name in lower case without accents, what a search compares) and `trips` (trip_id of the GTFS, route_short_name, trip_headsign)."""

    stops: pl.DataFrame
    trips: pl.DataFrame


def build_passenger_names(
    stops: pl.DataFrame, routes: pl.DataFrame | None = None, trips: pl.DataFrame | None = None
) -> PassengerNames:
    """The names of `gtfs_stops` (stop_code may be absent), `gtfs_routes` and `gtfs_trips`
    rows; without routes and trips, a line reads as its route_id and has no headsign."""
    if "stop_code" not in stops.columns:
        stops = stops.with_columns(pl.lit(None, pl.String).alias("stop_code"))
    names = pl.DataFrame(
        schema={"trip_id": pl.String, "route_short_name": pl.String, "trip_headsign": pl.String}
    )
    if routes is not None and trips is not None:
        names = trips.join(routes.select("route_id", "route_short_name"), on="route_id", how="left")
        names = names.select(
            "trip_id",
            pl.col("route_short_name").fill_null(pl.col("route_id")),
            "trip_headsign",
        ).unique("trip_id")
    stops = stops.select("stop_id", "stop_code", "stop_name")
    folded = [_strip_accents(name or "") for name in stops["stop_name"].to_list()]
    return PassengerNames(stops.with_columns(pl.Series("folded_name", folded, pl.String)), names)


def _strip_accents(text: str) -> str:
    """`text` in lower case without accents ("Praça" -> "praca")."""
    return "".join(
        c for c in unicodedata.normalize("NFKD", text) if not unicodedata.combining(c)
    ).casefold()


def build_stop_search(stops: pl.DataFrame, query: str, limit: int = SEARCH_LIMIT) -> pl.DataFrame:
    """The stops (`PassengerNames.stops`) whose name contains `query` (case and accents
    ignored) or whose code or id is `query`, by name. An empty query finds nothing."""
    wanted = _strip_accents(query.strip())
    if not wanted:
        return stops.clear()
    return (
        stops.filter(
            pl.col("folded_name").str.contains(wanted, literal=True)
            | (pl.col("stop_code").str.to_lowercase() == wanted)
            | (pl.col("stop_id").str.to_lowercase() == wanted)
        )
        .sort("stop_name", nulls_last=True)
        .head(limit)
    )


STYLE = """
*{box-sizing:border-box}body{margin:0;font:16px/1.4 system-ui,-apple-system,'Segoe UI',Roboto,
sans-serif;background:#f4f6f8;color:#1b1f24}header{background:#0b5394;color:#fff;
padding:14px 16px}header h1{margin:0;font-size:1.3em}header p{margin:4px 0 0;opacity:.85;
font-size:.9em}main{padding:8px 12px;max-width:40em;margin:0 auto}ol{list-style:none;margin:0;
padding:0}li{background:#fff;border-radius:10px;margin:8px 0;padding:10px 12px;display:flex;
gap:12px;align-items:center;box-shadow:0 1px 2px rgba(0,0,0,.08)}.line{font-weight:700;
font-size:1.2em;min-width:3.2em;text-align:center;background:#0b5394;color:#fff;
border-radius:6px;padding:4px 6px}.what{flex:1;min-width:0}.to{font-weight:600;overflow:hidden;
text-overflow:ellipsis}.when{font-size:.85em;color:#555}.eta{font-weight:700;font-size:1.1em;
white-space:nowrap;text-align:right}.cancelled{opacity:.65}.cancelled .to{text-decoration:
line-through}.cancelled .eta{color:#b00020}.late{color:#b45f06}.note{color:#555;font-size:.85em;
margin:12px 4px}form{display:flex;gap:8px;margin:12px 0}input{flex:1;font-size:1em;padding:10px;
border:1px solid #bbb;border-radius:8px}button{font-size:1em;padding:10px 14px;border:0;
border-radius:8px;background:#0b5394;color:#fff}a{color:#0b5394}.stops a{display:block;
text-decoration:none;color:inherit;flex:1}
"""

# The countdown: the seconds each arrival had to go at the feed's clock of the page (or of the
# last reading of the API that moved it), less the seconds since; each row keeps what it shows
# in data-left. The texts come from the page (data-texts), never from here.
SCRIPT = """
(function(){
  var root=document.getElementById('arrivals');if(!root)return;
  var t=JSON.parse(root.getAttribute('data-texts')),api=root.getAttribute('data-api');
  var at=root.getAttribute('data-at'),t0=Date.now();
  function keyOf(list){return list.map(function(a){return a.trip_id+'|'+a.status}).join(',')}
  function tick(){
    var gone=Math.floor((Date.now()-t0)/1000);
    root.querySelectorAll('li[data-s]').forEach(function(li){
      var left=Number(li.getAttribute('data-s'))-gone,eta=li.querySelector('.eta');
      li.setAttribute('data-left',left);
      if(li.classList.contains('cancelled'))return;
      eta.textContent=left<t.arriving_s?t.arriving:t.in_min.replace('{n}',Math.floor(left/60));
    });
  }
  function read(){
    fetch(api,{cache:'no-store'}).then(function(r){return r.json()}).then(function(body){
      if(body.generated_at===at)return;
      if(keyOf(body.arrivals)!==root.getAttribute('data-key')){location.reload();return}
      var rows=root.querySelectorAll('li[data-s]');
      body.arrivals.forEach(function(a,i){if(rows[i])rows[i].setAttribute('data-s',a.seconds)});
      at=body.generated_at;t0=Date.now();tick();
    }).catch(function(){});
  }
  tick();setInterval(tick,1000);setInterval(read,REFRESH_MS);
})();
"""


def _page(title: str, body: str, *, head: str = "", script: str = "") -> str:
    lang = "en" if language() == "en" else "pt-BR"
    return (
        f'<!doctype html><html lang="{lang}"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width,initial-scale=1">'
        f"<title>{escape(title)}</title>{head}<style>{STYLE}</style></head>"
        f"<body>{body}{f'<script>{script}</script>' if script else ''}</body></html>"
    )


def _eta_text(seconds: float) -> str:
    if seconds < ARRIVING_S:
        return _("arriving")
    return _("in {n} min", n=int(seconds // 60))


def _clock(iso: str | None, timezone: str) -> str:
    if iso is None:
        return ""
    return to_time_of_day(datetime.fromisoformat(iso.replace("Z", "+00:00")), timezone)


def _arrival_row(row: dict[str, Any], timezone: str) -> str:
    line = escape(str(row.get("route_short_name") or row.get("route_id") or "—"))
    headsign = escape(str(row.get("headsign") or row.get("route_id") or ""))
    planned = _clock(row.get("planned_arrival"), timezone)
    seconds = int(row["seconds"])
    if row["status"] == "cancelado":
        when = escape(_("trip cancelled · timetable {time}", time=planned))
        eta = escape(_("cancelled"))
        return (
            f'<li class="cancelled" data-s="{seconds}"><span class="line">{line}</span>'
            f'<span class="what"><div class="to">{headsign}</div><div class="when">{when}</div>'
            f'</span><span class="eta">{eta}</span></li>'
        )
    predicted = _clock(row.get("predicted_arrival"), timezone)
    delay_s = row.get("delay_s") or 0
    if abs(delay_s) >= SHOWN_DELAY_S:
        when = escape(_("predicted {time} · timetable {planned}", time=predicted, planned=planned))
        late = " late" if delay_s > 0 else ""
    else:
        when, late = escape(_("predicted {time} · on time", time=predicted)), ""
    eta = escape(_eta_text(seconds))
    return (
        f'<li data-s="{seconds}"><span class="line">{line}</span>'
        f'<span class="what"><div class="to">{headsign}</div>'
        f'<div class="when{late}">{when}</div></span><span class="eta">{eta}</span></li>'
    )


def to_stop_page(body: dict[str, Any], timezone: str, api_path: str) -> str:
    """The HTML of a stop's next arrivals. `body`: the JSON API's answer for the stop (with
    each arrival's `seconds`, `route_short_name` and `headsign`); `api_path`: where its script
    reads it again."""
    arrivals: list[dict[str, Any]] = body["arrivals"]
    name = str(body.get("stop_name") or body["stop_id"])
    code = body.get("stop_code")
    sub = escape(_("Stop {code}", code=code) if code else _("Next buses"))
    clock = _clock(body["generated_at"], timezone)
    rows = "".join(_arrival_row(a, timezone) for a in arrivals)
    none = escape(_("No bus expected at this stop for now."))
    listing = f"<ol>{rows}</ol>" if arrivals else f'<p class="note">{none}</p>'
    texts = {"arriving": _("arriving"), "in_min": _("in {n} min"), "arriving_s": ARRIVING_S}
    data_texts = escape(json.dumps(texts, ensure_ascii=False))
    key = escape(",".join(f"{a['trip_id']}|{a['status']}" for a in arrivals))
    as_of = escape(_("Live predictions as of {time}; the page updates itself.", time=clock))
    other = escape(_("Other stops"))
    content = (
        f"<header><h1>{escape(name)}</h1><p>{sub}</p></header><main>"
        f'<div id="arrivals" data-api="{escape(api_path)}" data-key="{key}" '
        f'data-at="{escape(str(body["generated_at"]))}" '
        f'data-texts="{data_texts}">{listing}</div>'
        f'<p class="note">{as_of} <a href="/paradas">{other}</a></p></main>'
    )
    head = f'<noscript><meta http-equiv="refresh" content="{NOSCRIPT_REFRESH_S}"></noscript>'
    script = SCRIPT.replace("REFRESH_MS", str(REFRESH_S * 1000))
    title = _("{stop} · next buses", stop=name)
    return _page(title, content, head=head, script=script)


def to_stop_search_page(query: str, found: pl.DataFrame) -> str:
    """The HTML of the stop search: a form, and the stops found for `query` (linked)."""
    items = []
    for s in found.iter_rows(named=True):
        href = "/paradas/" + quote(str(s["stop_id"]), safe="")
        label = escape(str(s["stop_name"] or s["stop_id"]))
        code = escape(_("Stop {code}", code=s["stop_code"] or s["stop_id"]))
        items.append(
            f'<li><a href="{escape(href)}"><div class="to">{label}</div>'
            f'<div class="when">{code}</div></a></li>'
        )
    if items:
        result = f'<ol class="stops">{"".join(items)}</ol>'
    elif query.strip():
        none = escape(_("No stop found for “{query}”.", query=query))
        result = f'<p class="note">{none}</p>'
    else:
        hint = escape(_("Type the stop name or the code on its sign."))
        result = f'<p class="note">{hint}</p>'
    title, find = escape(_("Next buses")), escape(_("Find your stop"))
    field, search = escape(_("Stop name or code")), escape(_("Search"))
    content = (
        f"<header><h1>{title}</h1><p>{find}</p></header><main>"
        f'<form action="/paradas" method="get"><input name="q" type="search" '
        f'value="{escape(query)}" aria-label="{field}" placeholder="{field}">'
        f'<button type="submit">{search}</button></form>{result}</main>'
    )
    return _page(_("Next buses"), content)


def to_unknown_stop_page(stop_id: str) -> str:
    """The HTML of a stop the day's GTFS does not have (served with status 404)."""
    title = escape(_("Stop not found"))
    why = escape(_("There is no stop “{stop_id}” in the schedule.", stop_id=stop_id))
    find = escape(_("Find your stop"))
    content = (
        f"<header><h1>{title}</h1></header><main>"
        f'<p class="note">{why} <a href="/paradas">{find}</a></p></main>'
    )
    return _page(_("Stop not found"), content)
