"""pytest plugin (placeholder until the fixtures land)."""
