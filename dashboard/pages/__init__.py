"""Dashboard pages: each file is a Streamlit page script run by `dashboard/app.py`."""
