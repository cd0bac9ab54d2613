"""The other calculators (placeholder)."""
