"""The dashboard's maps (ADR 0105): the basemap from the settings, views fitted to their
content, the network map's colours and legend, the itineraries under the live map and the
sidebar's filters on it. Values from the fixture store (tests/dashboard/store_builder.py) and
the feed of tests/dashboard/test_live.py."""

from __future__ import annotations

import json
import math
import urllib.parse
from datetime import date
from pathlib import Path

import polars as pl
import pytest
from streamlit.testing.v1 import AppTest

from core.settings import (
    DEFAULT_MAP_ATTRIBUTION,
    DEFAULT_MAP_TILES_URL,
    MAP_ATTRIBUTION_ENV,
    MAP_TILES_ENV,
    Settings,
)
from core.store import open_snapshot
from dashboard import maps
from dashboard.queries import live, network
from dashboard.queries.lines import build_line_ranking, read_outcome_counts
from tests.dashboard.test_live import feed_url  # noqa: F401 (a fixture)

APP = str(Path(__file__).resolve().parents[2] / "dashboard" / "app.py")
MARCH = (date(2026, 3, 1), date(2026, 3, 31))


def _style(basemap: maps.Basemap) -> dict:
    url = maps.to_map_style(basemap)
    assert url.startswith("data:application/json;charset=utf-8,")
    return dict(json.loads(urllib.parse.unquote(url.split(",", 1)[1])))


def test_the_basemap_comes_from_the_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(MAP_TILES_ENV, raising=False)
    monkeypatch.delenv(MAP_ATTRIBUTION_ENV, raising=False)
    default = maps.read_basemap(Settings.resolve())
    assert default == maps.Basemap(DEFAULT_MAP_TILES_URL, "© colaboradores do OpenStreetMap")
    source = _style(default)["sources"]["ruas"]
    assert source["tiles"] == ["https://tile.openstreetmap.org/{z}/{x}/{y}.png"]
    assert source["attribution"] == DEFAULT_MAP_ATTRIBUTION
    monkeypatch.setenv(MAP_TILES_ENV, "http://mapas.prefeitura/{z}/{x}/{y}.png")
    monkeypatch.setenv(MAP_ATTRIBUTION_ENV, "© Prefeitura")
    own = maps.read_basemap(Settings.resolve())
    assert _style(own)["sources"]["ruas"]["tiles"] == ["http://mapas.prefeitura/{z}/{x}/{y}.png"]
    assert _style(own)["sources"]["ruas"]["attribution"] == "© Prefeitura"
    # Set but empty: no basemap, and no style at all (Streamlit then fetches none either).
    monkeypatch.setenv(MAP_TILES_ENV, "")
    monkeypatch.delenv(MAP_ATTRIBUTION_ENV)
    off = maps.read_basemap(Settings.resolve())
    assert off == maps.Basemap("", "")
    assert maps.to_map_style(off) == ""
    deck = json.loads(maps.build_network_deck(pl.DataFrame(), off).to_json())
    assert deck["mapStyle"] == ""


def _pixels(view: dict, lat: float, lon: float) -> tuple[float, float]:
    """Where a point lands on the map, in pixels from its centre (Web Mercator, 512-px world
    at zoom 0 as deck.gl counts)."""
    scale = 512 * 2 ** view["zoom"]

    def y(lat_deg: float) -> float:
        return math.log(math.tan(math.pi / 4 + math.radians(lat_deg) / 2))

    return (
        (lon - view["longitude"]) / 360 * scale,
        (y(view["latitude"]) - y(lat)) / (2 * math.pi) * scale,
    )


def test_a_view_is_fitted_to_its_content() -> None:
    # Bento Gonçalves' fixture itinerary: 0,02° by 0,02°, a map of 900 x 420 px.
    points = pl.DataFrame({"lat": [-29.17, -29.16, -29.15], "lon": [-51.52, -51.51, -51.50]})
    view = json.loads(maps.compute_view(points, 420).to_json())
    corners = [_pixels(view, lat, lon) for lat in (-29.17, -29.15) for lon in (-51.52, -51.50)]
    xs, ys = [abs(x) for x, _ in corners], [abs(y) for _, y in corners]
    # centred: the corners are symmetric around the middle of the map
    assert max(xs) - min(xs) < 0.5 and max(ys) - min(ys) < 0.5
    # the tall side fills FIT_MARGIN of the height; the rest fits inside the width
    assert 2 * max(ys) == pytest.approx(maps.FIT_MARGIN * 420, rel=1e-6)
    assert 2 * max(xs) < 900
    assert json.loads(maps.compute_view(pl.DataFrame(), 420).to_json())["zoom"] == 1


def test_network_colours_and_legend_follow_the_lines_shares(dashboard_store: Path) -> None:
    with open_snapshot(dashboard_store) as store:
        points = network.read_route_shapes(store, *MARCH, None, None)
        ranking = build_line_ranking(read_outcome_counts(store, *MARCH, None, None))
        crowding = network.read_line_crowding(store, *MARCH, None)
        latest = network.read_route_shapes(store, None, None, ("L2",), None)
    # L1 and L2 both run SH1 (3 points) in March
    assert points.group_by("route_id").len().sort("route_id").rows() == [("L1", 3), ("L2", 3)]
    assert latest["route_id"].unique().to_list() == ["L2"]
    paths = network.build_shape_paths(points)
    assert paths["path"][0].to_list() == [[-51.52, -29.17], [-51.51, -29.16], [-51.5, -29.15]]
    # L1: 1 of its 2 run trips on time (50 %: red); L2: 1 of 1 (100 %: green)
    by_line = maps.compute_network_colours(paths, ranking, "punctuality")
    assert by_line.select("route_id", "value", "color", "status").rows() == [
        ("L1", 0.5, [214, 39, 40, 230], "50,0 % no horário"),
        ("L2", 1.0, [44, 160, 44, 230], "100,0 % no horário"),
    ]
    unknown = maps.compute_network_colours(
        paths.with_columns(pl.lit("L9").alias("route_id")), ranking, "punctuality"
    )
    assert unknown["color"].to_list()[0] == maps.NO_DATA_RGBA
    assert unknown["status"].to_list()[0] == "sem dados no período"
    crowded = maps.compute_network_colours(paths, crowding, "crowding")
    expected = dict(zip(crowding["route_id"], crowding["over_limit_share"], strict=True))
    assert dict(zip(crowded["route_id"], crowded["value"], strict=True)) == {
        r: expected.get(r) for r in ("L1", "L2")
    }
    assert maps.to_network_legend("punctuality") == (
        ":green[■] 95 % ou mais no horário · :yellow[■] 85 % a 95 % · :orange[■] 70 % a 85 % "
        "· :red[■] menos de 70 % · :gray[■] sem dados no período"
    )
    assert maps.to_network_legend("crowding") == (
        ":red[■] 15 % ou mais das viagens acima do limite · :orange[■] 5 % a 15 % · "
        ":yellow[■] menos de 5 % · :green[■] nenhuma · :gray[■] sem dados no período"
    )


def test_stored_positions_carry_the_line_of_the_last_trip(dashboard_store: Path) -> None:
    with open_snapshot(dashboard_store) as store:
        last = live.read_last_positions(store)
    # V1's pings (07:02-07:22 local) follow its start of L1-0700 at 07:02
    assert last.select("vehicle_id", "route_id", "direction_id").rows() == [("V1", "L1", 0)]
    assert live.build_live_selection(last, ("L2",), None).is_empty()
    assert live.build_live_selection(last, None, 1).is_empty()
    assert live.build_live_selection(last, ("L1",), 0).height == 1


def test_the_live_map_shows_routes_and_follows_the_filters(
    dashboard_store: Path,
    feed_url: str,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("PONTUAL_STORE", str(dashboard_store))
    monkeypatch.setenv("PONTUAL_LIVE_URL", feed_url)
    monkeypatch.setenv(MAP_TILES_ENV, "http://127.0.0.1:9/{z}/{x}/{y}.png")  # never fetched
    at = AppTest.from_file(APP, default_timeout=60)
    at.run()
    at.switch_page("pages/live.py").run()
    assert not at.exception, [e.value for e in at.exception]
    deck = json.loads(at.get("deck_gl_json_chart")[0].proto.json)
    layers = {layer["id"]: layer for layer in deck["layers"]}
    assert [layer["id"] for layer in deck["layers"]] == ["routes", "vehicles"]  # routes under
    assert {r["route_id"] for r in layers["routes"]["data"]} == {"L1", "L2"}
    assert [v["vehicle_id"] for v in layers["vehicles"]["data"]] == ["V1", "V2", "V3"]
    assert deck["mapStyle"].startswith("data:application/json")
    at.sidebar.selectbox(key="f_route").set_value("L2").run()
    assert not at.exception, [e.value for e in at.exception]
    deck = json.loads(at.get("deck_gl_json_chart")[0].proto.json)
    layers = {layer["id"]: layer for layer in deck["layers"]}
    assert {r["route_id"] for r in layers["routes"]["data"]} == {"L2"}
    assert [v["vehicle_id"] for v in layers["vehicles"]["data"]] == ["V2"]
    assert pl.from_pandas(at.dataframe[0].value)["Veículo"].to_list() == ["V2"]
