"""Dashboard pages: each file is a Streamlit page script run by `dashboard/app.py`."""

from core.texts import N_

PAGES = (
    ("pages/overview.py", N_("Overview"), "visao-geral", ":material/dashboard:"),
    ("pages/lines.py", N_("Lines"), "linhas", ":material/timeline:"),
    ("pages/trip.py", N_("Trip"), "viagem", ":material/directions_bus:"),
    ("pages/crowding.py", N_("Crowding"), "lotacao", ":material/groups:"),
    ("pages/fleet.py", N_("Fleet"), "frota", ":material/garage:"),
    ("pages/live.py", N_("Live"), "ao-vivo", ":material/sensors:"),
    ("pages/accuracy.py", N_("Prediction accuracy"), "precisao", ":material/target:"),
    ("pages/quality.py", N_("Data quality"), "qualidade", ":material/fact_check:"),
    ("pages/annual.py", N_("Annual evaluation"), "avaliacao-anual", ":material/grading:"),
    ("pages/trends.py", N_("Trends and risk"), "tendencias", ":material/trending_up:"),
    ("pages/infractions.py", N_("Suggested infractions"), "infracoes", ":material/gavel:"),
)
"""(file, title, URL path, icon) of every page, in menu order; the title is the catalogue's
English id (the page's own `st.title`), translated where it is shown (`dashboard/app.py`)."""


def page_url(url_path: str) -> str:
    """The URL path of a page: the first (default) page is served at the root."""
    return "" if url_path == PAGES[0][2] else url_path
