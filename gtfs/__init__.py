"""gtfs package."""
