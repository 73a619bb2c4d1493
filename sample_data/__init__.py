"""sample_data package."""
