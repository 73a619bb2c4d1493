"""The passenger's stop page (`/paradas/{stop_id}`, `/paradas?q=`) on the hand-built live view
of test_serve_app: the page shows what the JSON API says (line number, headsign, "em N min",
the timetable beside a late prediction, the cancelled trip), in the profile's zone, escaped."""

from __future__ import annotations

import re

import polars as pl
import pytest
from starlette.applications import Starlette
from starlette.testclient import TestClient

from pontual.feed_server import build_app
from pontual.stop_page import build_passenger_names, build_stop_search
from tests.pontual.test_serve_app import Source, _reference, _view

ZONE = "America/Sao_Paulo"  # 14:00 UTC is 11:00 there


def _source(stop_name: str = "Rua A") -> Source:
    reference = _reference()
    reference.stops = pl.DataFrame(
        {"stop_id": ["S1", "S2", "S3"], "stop_name": ["Centro", stop_name, "Planalto"]}
    )
    return Source(_view(), reference)


def passenger_app(source: Source) -> Starlette:
    """The feed server of `source` with the test's stop codes, line number and headsign."""
    names = build_passenger_names(
        source.reference.stops.with_columns(pl.Series("stop_code", ["100", "200", "300"])),
        pl.DataFrame({"route_id": ["T10"], "route_short_name": ["10"]}),
        pl.DataFrame(
            {
                "trip_id": ["T10-1", "T10-2"],
                "route_id": ["T10", "T10"],
                "trip_headsign": ["Praça da Bandeira", "Praça da Bandeira"],
            }
        ),
    )
    return build_app(source, names=names, timezone=ZONE)


def _client(stop_name: str = "Rua A") -> TestClient:
    return TestClient(passenger_app(_source(stop_name)))


@pytest.fixture
def client() -> TestClient:
    return _client()


def _text(html: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<script>.*?</script>|<[^>]+>", " ", html, flags=re.S))


def test_the_api_names_the_line_and_its_headsign(client: TestClient) -> None:
    body = client.get("/api/stops/S2/arrivals").json()
    assert body["stop_code"] == "200"
    first, second = body["arrivals"]
    assert (first["route_short_name"], first["headsign"], first["seconds"]) == (
        "10",
        "Praça da Bandeira",
        120,
    )
    # the cancelled trip counts down to its timetable (14:08:20 UTC)
    assert (second["status"], second["seconds"], second["minutes"]) == ("cancelado", 500, 8)


def test_the_stop_page_shows_the_same_arrivals_in_the_local_clock(client: TestClient) -> None:
    r = client.get("/paradas/S2")
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/html")
    html = r.text
    assert '<html lang="pt-BR">' in html
    assert "http" not in html.split("<body>")[0].replace("http-equiv", "")  # no external asset
    text = _text(html)
    assert "Rua A" in text and "Parada 200" in text
    # V1 predicted at 14:02 UTC (11:02 local), 60 s after the timetable's 14:01 (11:01)
    assert "10 Praça da Bandeira previsto 11:02 · tabela 11:01 em 2 min" in text
    # T10-2 cancelled, timetable 14:08:20 UTC
    assert "viagem cancelada · tabela 11:08 cancelada" in text
    assert re.findall(r'data-s="(\d+)"', html) == ["120", "500"]
    assert 'data-api="/api/stops/S2/arrivals?limit=12"' in html
    assert "Previsões ao vivo às 11:00" in text


def test_unknown_stop_is_a_404_page_in_portuguese(client: TestClient) -> None:
    r = client.get("/paradas/NOPE")
    assert r.status_code == 404 and r.headers["content-type"].startswith("text/html")
    assert "Parada não encontrada" in r.text
    assert "Não há parada “NOPE” na programação." in _text(r.text)


def test_feed_values_are_escaped() -> None:
    evil = '<script>alert("x")</script> & Cia'
    client = _client(evil)
    html = client.get("/paradas/S2").text
    assert "<script>alert" not in html
    assert "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; Cia" in html
    found = client.get("/paradas", params={"q": "script"}).text
    assert "<script>alert" not in found and "&lt;script&gt;alert" in found
    query = client.get("/paradas", params={"q": '"><script>x()</script>'}).text
    assert "<script>x()" not in query
    assert client.get("/paradas/%3Cscript%3E").text.count("<script>") == 0


def test_stop_search_by_name_without_accents_or_by_code(client: TestClient) -> None:
    html = client.get("/paradas", params={"q": "planalto"}).text
    assert '<a href="/paradas/S3">' in html and "Centro" not in _text(html)
    names = build_passenger_names(
        pl.DataFrame(
            {"stop_id": ["A", "B"], "stop_code": ["7", None], "stop_name": ["Praça XV", "Rua B"]}
        )
    )
    assert build_stop_search(names.stops, "PRACA")["stop_id"].to_list() == ["A"]
    assert build_stop_search(names.stops, "7")["stop_id"].to_list() == ["A"]
    assert build_stop_search(names.stops, "  ").is_empty()
    assert "Nenhuma parada encontrada" in client.get("/paradas", params={"q": "zzz"}).text
    api = client.get("/api/stops", params={"q": "rua"}).json()
    assert api == {
        "stops": [{"stop_id": "S2", "stop_code": "200", "stop_name": "Rua A", "n_arrivals": 1}]
    }
    every = client.get("/api/stops").json()["stops"]
    assert [(s["stop_id"], s["n_arrivals"]) for s in every] == [("S1", 0), ("S2", 1), ("S3", 1)]
