"""Proofs about the declared data: each family's reduction and its own closed forms."""
