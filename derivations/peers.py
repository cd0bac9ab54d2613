"""Proofs of formulas/peers.py (placeholder)."""

DERIVATIONS = ()
