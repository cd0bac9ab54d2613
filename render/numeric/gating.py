"""What a generated numeric function does with a size that only matters under a switch (NumPy only).

The generated module (render/printers/codegen.py) prints this function's own source into its prelude, and
``llm_formulas.numpy_function`` calls it: one definition of the rule for both.
"""

import numpy


def _gated(formula, name, value, switches, neutral=0):
    """A size that matters only when a switch leaves its classic value (MLA's d_rope under mla = 1): None is 0 (1
    where the size divides a term the switch removes: e under l_moe = 0) while every such switch keeps its classic
    value, and an error naming the size otherwise."""
    if value is not None:
        return value
    for switch, (given, classic) in switches.items():
        if numpy.any(numpy.asarray(given) != classic):
            raise TypeError(f"{formula} needs {name} when {switch} is not {classic}")
    return neutral
