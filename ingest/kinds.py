"""The kinds of input files `pontual ingest KIND` takes, and the table each one feeds.

Its own light module (no Polars, no store) so the command line can list the kinds at start-up
without importing the ingest machinery.
"""

KIND_TABLES = {
    "avl": "vehicle_locations",
    "fares": "fare_transactions",
    "vehicles": "vehicles",
    "incidents": "incidents",
    "surveys": "iqs_surveys",
    "counts": "passenger_counts",
    "inspections": "inspections",
}
