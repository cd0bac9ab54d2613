"""Checks over the whole catalogue: check, mutations, validate, and the helpers for users' tests."""
