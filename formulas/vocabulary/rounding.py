"""Discrete results, rounded as their meaning says when a number is asked for.

A formula's expression is the exact ratio its derivation proves (the KV wall is (M_gpu − M_w − M_ws) over the cache of
one sequence); what it counts is whole. Evaluated, such a count is rounded the way its meaning reads: the most
sequences that fit, the largest batch within a budget, rounded down, and never below zero (none fit); the replicas or
GPUs a load or a deadline needs, rounded up. ``memory.max_micro_batch`` states its floor in its expression.

Not rounded: ``inference.balance_batch`` (the batch at which two costs cross, a point on a line, not a count formed)
and ``comms.tp.max_degree`` (a bound a degree is compared with).
"""

from __future__ import annotations

import sympy as sp

__all__ = ["ROUNDED", "rounded"]

# formula id → "down" (the most that fit: ⌊x⌋, at least 0) or "up" (the fewest that suffice: ⌈x⌉)
ROUNDED: dict[str, str] = {
    "serving.memory.max_batch": "down",  # its meaning: "round down; none if the weights alone do not fit"
    "serving.replicas": "up",  # its meaning: "(round up)"
    "inference.pipeline.max_batch": "down",  # the largest batch whose latency stays within τ: sequences
    "cluster.gpus_for_deadline": "up",  # the GPUs a deadline needs
}


def rounded(formula_id: str, value: sp.Expr) -> sp.Expr:
    """``value`` of ``formula_id`` as the count it is (ROUNDED); any other formula's value as it is."""
    direction = ROUNDED.get(formula_id)
    if direction is None or not value.is_real:
        return value
    if direction == "up":
        return sp.ceiling(value)
    return sp.Max(sp.floor(value), 0)
