"""Dashboard pages: each file is a Streamlit page script run by `dashboard/app.py`."""

PAGES = (
    ("pages/overview.py", "Visão geral", "visao-geral", ":material/dashboard:"),
    ("pages/lines.py", "Linhas", "linhas", ":material/timeline:"),
    ("pages/trip.py", "Viagem", "viagem", ":material/directions_bus:"),
    ("pages/crowding.py", "Lotação", "lotacao", ":material/groups:"),
    ("pages/fleet.py", "Frota", "frota", ":material/garage:"),
    ("pages/live.py", "Ao vivo", "ao-vivo", ":material/sensors:"),
    ("pages/accuracy.py", "Precisão das previsões", "precisao", ":material/target:"),
    ("pages/quality.py", "Qualidade dos dados", "qualidade", ":material/fact_check:"),
    ("pages/annual.py", "Avaliação anual", "avaliacao-anual", ":material/grading:"),
    ("pages/trends.py", "Tendências e risco", "tendencias", ":material/trending_up:"),
    ("pages/infractions.py", "Infrações sugeridas", "infracoes", ":material/gavel:"),
)
"""(file, title, URL path, icon) of every page, in menu order."""


def page_url(url_path: str) -> str:
    """The URL path of a page: the first (default) page is served at the root."""
    return "" if url_path == PAGES[0][2] else url_path
