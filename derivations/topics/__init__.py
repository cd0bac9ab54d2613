"""The proofs of each topic's formulas, one module per topic of formulas/topics."""
