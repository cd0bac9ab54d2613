"""What a generated numeric function does with a size that only matters under a switch, and with a term a switch at 0
removes (NumPy only).

The generated module (render/printers/codegen.py) prints these functions' own source into its prelude, and
``llm_formulas.numpy_function`` calls them: one definition of each rule for both.
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


def _times(switch, term, *inputs):
    """``switch · term()``, the term left uncomputed where the switch is a scalar 0 (a layer kind, block or feature the
    model does not have: Mamba layers at l_mamba = 0, MLA at mla = 0): the product is then 0 at any finite value of
    the term, an array of zeros shaped as the term's inputs broadcast."""
    if getattr(switch, "ndim", 0) or switch != 0:  # an array, or a scalar not 0 (numpy.ndim of a float costs a cast)
        return switch * term()
    shapes = {x.shape for x in inputs if type(x) is not float and x.ndim}  # the inputs are floats or arrays here
    if not shapes:
        return 0.0 * switch
    return numpy.zeros(shapes.pop() if len(shapes) == 1 else numpy.broadcast_shapes(*shapes))
