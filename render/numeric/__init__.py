"""Numeric evaluation: the generated NumPy module, its evaluator, the planner and sweeps.

Only constants live here, so that the command line can name them without importing NumPy.
"""

GPUS_PER_NODE = 8  # an HGX/DGX node: the NVLink domain the report's TP bandwidth assumes
