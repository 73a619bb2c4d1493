"""pydeck maps drawn from the store's own geometry (itinerary, stops, pings, live vehicles, the
network of lines) over a street basemap (ADR 0105).

The basemap is the raster tile URL of the settings (`Settings.map_tiles_url`: OpenStreetMap's
standard tiles unless a city sets its own; empty, no basemap), given to the map Streamlit draws
under the deck as an inline style with that one raster source and its credit (shown in the
map's corner). Nothing else is fetched: not Streamlit's default Carto style, not a CDN. Tiles
are decoration: when they cannot load (no network, a server down) the deck still draws every
content layer on a blank background. Each map's view is fitted to the bounds of what it shows.
"""

from __future__ import annotations

import json
import math
import urllib.parse
from dataclasses import dataclass

import polars as pl
import pydeck as pdk

from core.pt_br import to_percent
from core.settings import Settings
from core.texts import N_
from core.texts import gettext as _

# Colours (RGBA) by delay class, shared by the trip and live maps.
LATE_RGBA = [214, 39, 40, 220]
EARLY_RGBA = [255, 127, 14, 220]
ON_TIME_RGBA = [44, 160, 44, 220]
UNKNOWN_RGBA = [120, 120, 120, 200]
ROUTE_RGBA = [70, 90, 140, 150]

# The map's size assumed when fitting a view (a wide page's map is about this wide; the
# height is the map's own). A view fitted to a narrower map shows a little less.
MAP_WIDTH_PX = 900
FIT_MARGIN = 0.85  # the content fills this share of the map's smaller side
TILE_PX = 256  # the raster tiles' size
MAX_TILE_ZOOM = 19  # OpenStreetMap's deepest tiles (deeper views enlarge these)
VIEW_TILE_PX = 512  # deck.gl's zoom: the world is 512 px wide at zoom 0
MAX_ZOOM = 17.0


@dataclass(frozen=True)
class Basemap:
    """The street basemap of the settings: its raster tile URL ('' = none) and credit."""

    tiles_url: str
    attribution: str


def read_basemap(settings: Settings | None = None) -> Basemap:
    """The basemap the settings name (PONTUAL_MAP_TILES, PONTUAL_MAP_ATTRIBUTION)."""
    settings = settings or Settings.resolve()
    return Basemap(settings.map_tiles_url, settings.map_tiles_attribution)


def to_map_style(basemap: Basemap | None) -> str:
    """The map style under a deck: '' without tiles (no base map at all), else a Mapbox GL
    style (version 8) with the tiles as its one raster layer, inline as a `data:` URL.

    Why not a deck.gl `TileLayer`: pydeck describes layers as JSON, and a `TileLayer` draws
    images only through a JavaScript `renderSubLayers` function, which JSON cannot carry (a
    `TerrainLayer` can, but parses its tiles in a worker it downloads from a CDN)."""
    if basemap is None or not basemap.tiles_url:
        return ""
    style = {
        "version": 8,
        "sources": {
            "ruas": {
                "type": "raster",
                "tiles": [basemap.tiles_url],
                "tileSize": TILE_PX,
                "maxzoom": MAX_TILE_ZOOM,
                "attribution": basemap.attribution,
            }
        },
        "layers": [{"id": "ruas", "type": "raster", "source": "ruas"}],
    }
    return "data:application/json;charset=utf-8," + urllib.parse.quote(
        json.dumps(style, ensure_ascii=False, separators=(",", ":"))
    )


def _mercator_y(lat_deg: float) -> float:
    """Web Mercator northing of a latitude, in radians (±π at ±85.05°)."""
    lat = math.radians(max(-85.05, min(85.05, lat_deg)))
    return math.log(math.tan(math.pi / 4 + lat / 2))


def compute_view(
    points: pl.DataFrame, height_px: int, width_px: int = MAP_WIDTH_PX
) -> pdk.ViewState:
    """A view centred on the bounds of `points` (`lat`, `lon`) and zoomed so they fill the
    map (`FIT_MARGIN` of its width and height), in Web Mercator as the tiles are."""
    points = points.drop_nulls(["lat", "lon"]) if points.width else points
    if points.is_empty():
        return pdk.ViewState(latitude=0.0, longitude=0.0, zoom=1)
    south, north = float(points["lat"].min()), float(points["lat"].max())  # type: ignore[arg-type]
    west, east = float(points["lon"].min()), float(points["lon"].max())  # type: ignore[arg-type]
    y_south, y_north = _mercator_y(south), _mercator_y(north)
    # At zoom z the world is VIEW_TILE_PX * 2**z pixels wide: 360° of longitude, 2π of
    # northing.
    zooms = [MAX_ZOOM]
    if east > west:
        zooms.append(math.log2(FIT_MARGIN * width_px * 360.0 / ((east - west) * VIEW_TILE_PX)))
    if y_north > y_south:
        zooms.append(
            math.log2(FIT_MARGIN * height_px * 2 * math.pi / ((y_north - y_south) * VIEW_TILE_PX))
        )
    y_mid = (y_south + y_north) / 2
    return pdk.ViewState(
        latitude=math.degrees(2 * math.atan(math.exp(y_mid)) - math.pi / 2),
        longitude=(west + east) / 2,
        zoom=max(1.0, min(zooms)),
    )


def _deck(
    layers: list[pdk.Layer],
    bounds: pl.DataFrame,
    basemap: Basemap | None,
    height_px: int,
    tooltip: dict[str, str] | None,
) -> pdk.Deck:
    """A deck of `layers` over the basemap, its view fitted to `bounds`."""
    return pdk.Deck(
        layers=layers,
        initial_view_state=compute_view(bounds, height_px),
        map_style=to_map_style(basemap),
        tooltip=tooltip,
    )


def _bounds(*frames: pl.DataFrame) -> pl.DataFrame:
    """The `lat`, `lon` of every non-empty frame, for `compute_view`."""
    parts = [f.select("lat", "lon") for f in frames if f.height]
    return pl.concat(parts, how="vertical_relaxed") if parts else pl.DataFrame()


def build_route_layer(paths: pl.DataFrame, width_px: int = 3) -> pdk.Layer:
    """Itineraries (`dashboard.queries.network.build_shape_paths`, with a `color` column or in
    one muted blue) as a path layer, the line in the tooltip."""
    data = (
        paths.with_columns(pl.lit(ROUTE_RGBA).alias("color"))
        if "color" not in paths.columns
        else paths
    )
    keep = [c for c in ("route_id", "line", "status", "path", "color") if c in data.columns]
    return pdk.Layer(
        "PathLayer",
        id="routes",
        data=data.select(keep).to_dicts(),
        get_path="path",
        get_color="color",
        width_min_pixels=width_px,
        pickable=True,
    )


def build_trip_deck(
    shape: pl.DataFrame,
    stops: pl.DataFrame,
    pings: pl.DataFrame,
    current: pl.DataFrame | None = None,
    basemap: Basemap | None = None,
    height_px: int = 420,
) -> pdk.Deck:
    """A trip's evidence: the itinerary (grey path), its stops (white, outlined), the GPS
    pings of the run (blue) and, during playback, the `current` ping (red, larger), over the
    basemap, the view fitted to all of them."""
    layers = []
    if shape.height:
        path = [[lon, lat] for lat, lon in shape.select("lat", "lon").iter_rows()]
        layers.append(
            pdk.Layer(
                "PathLayer",
                data=[{"path": path}],
                get_path="path",
                get_color=[90, 90, 90],
                width_min_pixels=3,
            )
        )
    if stops.height:
        layers.append(
            pdk.Layer(
                "ScatterplotLayer",
                data=stops.select("stop_id", "stop_name", "lat", "lon")
                .drop_nulls(["lat", "lon"])
                .to_dicts(),
                get_position=["lon", "lat"],
                get_fill_color=[255, 255, 255],
                get_line_color=[0, 0, 0],
                stroked=True,
                line_width_min_pixels=1,
                radius_min_pixels=5,
                pickable=True,
            )
        )
    if pings.height:
        layers.append(
            pdk.Layer(
                "ScatterplotLayer",
                data=pings.select("ping_id", "lat", "lon").to_dicts(),
                get_position=["lon", "lat"],
                get_fill_color=[31, 119, 180, 200],
                radius_min_pixels=3,
                pickable=True,
            )
        )
    if current is not None and current.height:
        layers.append(
            pdk.Layer(
                "ScatterplotLayer",
                data=current.select("ping_id", "lat", "lon").to_dicts(),
                get_position=["lon", "lat"],
                get_fill_color=LATE_RGBA,
                get_line_color=[0, 0, 0],
                stroked=True,
                radius_min_pixels=8,
                pickable=True,
            )
        )
    return _deck(
        layers,
        _bounds(shape, stops, pings),
        basemap,
        height_px,
        {"text": "{stop_name}{ping_id}"},
    )


OCCUPANCY_LEVELS: dict[str, tuple[str, list[int]]] = {
    "EMPTY": (N_("empty"), [26, 152, 80, 220]),
    "MANY_SEATS_AVAILABLE": (N_("many seats available"), [102, 189, 99, 220]),
    "FEW_SEATS_AVAILABLE": (N_("few seats available"), [217, 239, 139, 230]),
    "STANDING_ROOM_ONLY": (N_("standing room only"), [253, 174, 97, 230]),
    "CRUSHED_STANDING_ROOM_ONLY": (N_("crushed standing room only"), [244, 109, 67, 230]),
    "FULL": (N_("full"), [215, 48, 39, 230]),
    "NOT_ACCEPTING_PASSENGERS": (N_("not accepting passengers"), [120, 30, 120, 230]),
}
"""GTFS-RT occupancy statuses: label (the catalogue's id: translate it where it is shown,
`to_occupancy_labels`) and colour, emptiest first."""


def to_occupancy_labels() -> dict[str, str]:
    """Each GTFS-RT occupancy status as the pages name it (in the chosen language)."""
    return {code: _(label) for code, (label, _rgba) in OCCUPANCY_LEVELS.items()}


def compute_live_colours(
    vehicles: pl.DataFrame, colour_by: str, late_s: int, early_s: int
) -> pl.DataFrame:
    """Add `color` (RGBA) and `status` (its text, from the catalogue) to live vehicles, by
    `colour_by`: 'delay' (late / early beyond the profile's windows at the origin, on time,
    unknown) or 'occupancy' (the GTFS-RT occupancy status)."""
    if colour_by == "delay":
        delay = pl.col("delay_s")
        colour = (
            pl.when(delay > late_s)
            .then(pl.lit(LATE_RGBA))
            .when(delay < -early_s)
            .then(pl.lit(EARLY_RGBA))
            .when(delay.is_not_null())
            .then(pl.lit(ON_TIME_RGBA))
            .otherwise(pl.lit(UNKNOWN_RGBA))
        )
        status = (
            pl.when(delay > late_s)
            .then(pl.lit(_("late")))
            .when(delay < -early_s)
            .then(pl.lit(_("early")))
            .when(delay.is_not_null())
            .then(pl.lit(_("on time")))
            .otherwise(pl.lit(_("no prediction")))
        )
    else:
        occ = pl.col("occupancy_status")
        colour = pl.lit(UNKNOWN_RGBA)
        status = pl.lit(_("no information"))
        labels = to_occupancy_labels()
        for code, (_label, rgba) in OCCUPANCY_LEVELS.items():
            colour = pl.when(occ == code).then(pl.lit(rgba)).otherwise(colour)
            status = pl.when(occ == code).then(pl.lit(labels[code])).otherwise(status)
    return vehicles.with_columns(colour.alias("color"), status.alias("status"))


def build_live_deck(
    vehicles: pl.DataFrame,
    routes: pl.DataFrame | None = None,
    basemap: Basemap | None = None,
    height_px: int = 520,
) -> pdk.Deck:
    """Vehicles by position, in the colours of `compute_live_colours`, over the itineraries
    of the lines in the filters (`routes`: `build_shape_paths`) and the basemap; the view is
    fitted to both. The tooltip gives the vehicle, its line and its status."""
    layer = pdk.Layer(
        "ScatterplotLayer",
        id="vehicles",
        data=vehicles.select("vehicle_id", "line", "lat", "lon", "color", "status").to_dicts(),
        get_position=["lon", "lat"],
        get_fill_color="color",
        get_line_color=[40, 40, 40],
        stroked=True,
        line_width_min_pixels=1,
        get_radius=60,
        radius_min_pixels=5,
        pickable=True,
    )
    layers = [layer]
    bounds = _bounds(vehicles)
    if routes is not None and routes.height:
        layers.insert(0, build_route_layer(routes, width_px=2))
        bounds = _bounds(bounds, _path_points(routes))
    return _deck(
        layers,
        bounds,
        basemap,
        height_px,
        # deck.gl fills the {fields} of a tooltip from the picked row
        {"text": _("Vehicle {vehicle_id} · line {line}") + "\n{status}"},
    )


def _path_points(paths: pl.DataFrame) -> pl.DataFrame:
    """The points of `build_shape_paths` paths as `lat`, `lon` (their bounds fit a view)."""
    if paths.is_empty():
        return pl.DataFrame()
    return paths.select(pl.col("path").explode()).select(
        pl.col("path").list.get(1).alias("lat"), pl.col("path").list.get(0).alias("lon")
    )


PUNCTUALITY_BANDS: tuple[tuple[float, list[int]], ...] = (
    (0.95, [44, 160, 44, 230]),
    (0.85, [255, 205, 0, 230]),
    (0.70, [255, 127, 14, 230]),
    (0.0, [214, 39, 40, 230]),
)
"""Network map colours by punctuality (share of run trips on time), best first: a band holds
the lines at or above its floor. Display bands for reading the map, not legal thresholds."""

CROWDING_BANDS: tuple[tuple[float, list[int]], ...] = (
    (0.15, [214, 39, 40, 230]),
    (0.05, [255, 127, 14, 230]),
    (1e-9, [255, 205, 0, 230]),
    (0.0, [44, 160, 44, 230]),
)
"""Network map colours by crowding (share of runs over the profile's limit), worst first: a
band holds the lines at or above its floor (the last: no run over the limit)."""

NO_DATA_RGBA = [150, 150, 150, 200]
BAND_SQUARES = {
    (44, 160, 44): ":green[■]",
    (255, 205, 0): ":yellow[■]",
    (255, 127, 14): ":orange[■]",
    (214, 39, 40): ":red[■]",
}
"""Each band colour as a coloured square of Streamlit markdown (the legend under the map)."""

NETWORK_COLOURS = {"punctuality": N_("Punctuality"), "crowding": N_("Crowding")}
"""What the network map can be coloured by (the values' column → the choice's name, the
catalogue's id: translate it where it is shown)."""


def compute_network_colours(
    paths: pl.DataFrame, values: pl.DataFrame, colour_by: str
) -> pl.DataFrame:
    """Add `value` (the line's share, 0-1, null without data), `color` and `status` (its text)
    to the itineraries, by `colour_by`: 'punctuality' (`values` has `route_id`,
    `punctuality`) or 'crowding' (`route_id`, `over_limit_share`)."""
    column, bands = (
        ("punctuality", PUNCTUALITY_BANDS)
        if colour_by == "punctuality"
        else ("over_limit_share", CROWDING_BANDS)
    )
    share_text = (
        _("{share} on time")
        if colour_by == "punctuality"
        else _("{share} above the crowding limit")
    )
    shares = (
        values.select("route_id", pl.col(column).cast(pl.Float64).alias("value"))
        if values.height and column in values.columns
        else pl.DataFrame(schema={"route_id": pl.String, "value": pl.Float64})
    )
    out = paths.join(shares, on="route_id", how="left")
    colour = pl.lit(NO_DATA_RGBA)
    for floor, rgba in reversed(bands):
        colour = pl.when(pl.col("value") >= floor).then(pl.lit(rgba)).otherwise(colour)
    texts = [
        share_text.format(share=to_percent(v, 1)) if v is not None else _("no data in the period")
        for v in out["value"].to_list()
    ]
    return out.with_columns(
        pl.when(pl.col("value").is_not_null())
        .then(colour)
        .otherwise(pl.lit(NO_DATA_RGBA))
        .alias("color"),
        pl.Series("status", texts, dtype=pl.String),
    )


def to_network_legend(colour_by: str) -> str:
    """The legend of the network map (from the catalogue; the bands' floors as pt-BR
    percentages)."""
    punctuality = colour_by == "punctuality"
    bands = PUNCTUALITY_BANDS if punctuality else CROWDING_BANDS
    floors = [to_percent(floor, 0) for floor, _rgba in bands]
    parts = []
    for i, (floor, rgba) in enumerate(bands):
        square = BAND_SQUARES[(rgba[0], rgba[1], rgba[2])]
        if i == 0:
            text = (
                _("{share} or more on time", share=floors[0])
                if punctuality
                else _("{share} or more of the trips above the limit", share=floors[0])
            )
        elif floor == 0.0:
            text = (
                _("under {share}", share=floors[i - 1])
                if punctuality
                else _("none above the limit")
            )
        elif floor < 0.005:  # the band of 'some, under the next floor'
            text = _("under {share}", share=floors[i - 1])
        else:
            text = _("{low} to {high}", low=floors[i], high=floors[i - 1])
        parts.append(f"{square} {text}")
    parts.append(":gray[■] " + _("no data in the period"))
    return " · ".join(parts)


def build_network_deck(
    paths: pl.DataFrame, basemap: Basemap | None = None, height_px: int = 520
) -> pdk.Deck:
    """Every line's itineraries in the colours of `compute_network_colours` over the basemap,
    the view fitted to the network; the tooltip names the line and its share."""
    return _deck(
        [build_route_layer(paths, width_px=4)],
        _path_points(paths),
        basemap,
        height_px,
        {"text": _("Line {line}") + "\n{status}"},
    )
