"""pydeck maps drawn from the store's own geometry (itinerary, stops, pings, live vehicles).
`map_style=None` lets Streamlit pick its themed base map when the browser can reach the tile
provider; without a network the layers still draw on a blank background."""

from __future__ import annotations

import math

import polars as pl
import pydeck as pdk

# Colours (RGBA) by delay class, shared by the trip and live maps.
LATE_RGBA = [214, 39, 40, 220]
EARLY_RGBA = [255, 127, 14, 220]
ON_TIME_RGBA = [44, 160, 44, 220]
UNKNOWN_RGBA = [120, 120, 120, 200]


def _view(points: pl.DataFrame) -> pdk.ViewState:
    """A view centred on the points, zoomed roughly to their extent."""
    if points.is_empty():
        return pdk.ViewState(latitude=0.0, longitude=0.0, zoom=1)
    lat_span = float(points["lat"].max() - points["lat"].min())  # type: ignore[operator,arg-type]
    lon_span = float(points["lon"].max() - points["lon"].min())  # type: ignore[operator,arg-type]
    span = max(lat_span, lon_span, 1e-4)
    # ~360° at zoom 0, halving per level; a margin of less than a level.
    zoom = max(1.0, min(17.0, math.log2(360.0 / span) - 0.4))
    return pdk.ViewState(
        latitude=float(points["lat"].mean()),  # type: ignore[arg-type]
        longitude=float(points["lon"].mean()),  # type: ignore[arg-type]
        zoom=zoom,
    )


def build_trip_deck(
    shape: pl.DataFrame,
    stops: pl.DataFrame,
    pings: pl.DataFrame,
    current: pl.DataFrame | None = None,
) -> pdk.Deck:
    """A trip's evidence: the itinerary (grey path), its stops (white, outlined), the GPS
    pings of the run (blue) and, during playback, the `current` ping (red, larger)."""
    layers = []
    if shape.height:
        path = [[lon, lat] for lat, lon in shape.select("lat", "lon").iter_rows()]
        layers.append(
            pdk.Layer(
                "PathLayer",
                data=[{"path": path, "name": "itinerário"}],
                get_path="path",
                get_color=[110, 110, 110],
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
    everything = (
        pl.concat(
            [f.select("lat", "lon") for f in (shape, stops, pings) if f.height],
            how="vertical_relaxed",
        )
        if any(f.height for f in (shape, stops, pings))
        else pl.DataFrame()
    )
    return pdk.Deck(
        layers=layers,
        initial_view_state=_view(everything.drop_nulls()),
        map_style=None,
        tooltip={"text": "{stop_name}{ping_id}"},
    )


OCCUPANCY_LEVELS: dict[str, tuple[str, list[int]]] = {
    "EMPTY": ("vazio", [26, 152, 80, 220]),
    "MANY_SEATS_AVAILABLE": ("muitos assentos livres", [102, 189, 99, 220]),
    "FEW_SEATS_AVAILABLE": ("poucos assentos livres", [217, 239, 139, 230]),
    "STANDING_ROOM_ONLY": ("só em pé", [253, 174, 97, 230]),
    "CRUSHED_STANDING_ROOM_ONLY": ("em pé, apertado", [244, 109, 67, 230]),
    "FULL": ("lotado", [215, 48, 39, 230]),
    "NOT_ACCEPTING_PASSENGERS": ("não aceita passageiros", [120, 30, 120, 230]),
}
"""GTFS-RT occupancy statuses: label (pt-BR) and colour, emptiest first."""


def compute_live_colours(
    vehicles: pl.DataFrame, colour_by: str, late_s: int, early_s: int
) -> pl.DataFrame:
    """Add `color` (RGBA) and `status` (pt-BR text) to live vehicles, by `colour_by`:
    'delay' (late / early beyond the profile's windows at the origin, on time, unknown) or
    'occupancy' (the GTFS-RT occupancy status)."""
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
            .then(pl.lit("atrasado"))
            .when(delay < -early_s)
            .then(pl.lit("adiantado"))
            .when(delay.is_not_null())
            .then(pl.lit("no horário"))
            .otherwise(pl.lit("sem previsão"))
        )
    else:
        occ = pl.col("occupancy_status")
        colour = pl.lit(UNKNOWN_RGBA)
        status = pl.lit("sem informação")
        for code, (label, rgba) in OCCUPANCY_LEVELS.items():
            colour = pl.when(occ == code).then(pl.lit(rgba)).otherwise(colour)
            status = pl.when(occ == code).then(pl.lit(label)).otherwise(status)
    return vehicles.with_columns(colour.alias("color"), status.alias("status"))


def build_live_deck(vehicles: pl.DataFrame) -> pdk.Deck:
    """Vehicles by position, in the colours of `compute_live_colours`; the tooltip gives the
    vehicle, its line and its status."""
    layer = pdk.Layer(
        "ScatterplotLayer",
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
    return pdk.Deck(
        layers=[layer],
        initial_view_state=_view(vehicles),
        map_style=None,
        tooltip={"text": "Veículo {vehicle_id} · linha {line}\n{status}"},
    )
