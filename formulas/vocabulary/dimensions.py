"""Dimensional analysis over a SymPy expression tree.

Rules: a symbol has its registered unit; a number is dimensionless; the terms
of a sum (and the arguments of Max, Min and the branches of a Piecewise) must
share one unit; products multiply units; a power needs a numeric exponent
unless its base is dimensionless; floor, ceiling and Abs keep their argument's
unit; every other function (log, exp, ...) needs dimensionless arguments.

There is no implicit step: a count states its unit in its expression
(``12 l h² u_param``), so a parameter count declared in FLOP is an error.
"""

from __future__ import annotations

from fractions import Fraction

import sympy as sp
from sympy.core.relational import Relational

from llm_formulas.formulas.vocabulary.symbols import is_declared, quantity
from llm_formulas.formulas.vocabulary.expressions import as_sympy
from llm_formulas.formulas.vocabulary.units import DIMENSIONLESS, Unit

__all__ = ["DimensionError", "check_declared_unit", "dimension_of", "units_of"]


class DimensionError(ValueError):
    """An expression that mixes units; the message names the offending terms."""


_UNIT_PRESERVING = (sp.floor, sp.ceiling, sp.Abs)


def dimension_of(expr: sp.Basic) -> Unit:
    """The unit of ``expr``, or DimensionError naming the terms that disagree."""
    if isinstance(expr, sp.Symbol):
        try:
            return quantity(expr).unit
        except KeyError:
            raise DimensionError(f"symbol {expr.name!r} is not in the symbol table") from None
    if expr.is_Number or expr in (sp.oo, -sp.oo, sp.zoo, sp.nan):
        return DIMENSIONLESS
    if isinstance(expr, sp.Add):
        return _same_unit(expr.args, "add")
    if isinstance(expr, sp.Mul):
        unit = DIMENSIONLESS
        for factor in expr.args:
            unit = unit * dimension_of(factor)
        return unit
    if isinstance(expr, sp.Pow):
        base_unit = dimension_of(expr.base)
        exponent_unit = dimension_of(expr.exp)
        if not exponent_unit.is_dimensionless:
            raise DimensionError(f"exponent {expr.exp} has unit {exponent_unit}")
        if base_unit.is_dimensionless:
            return DIMENSIONLESS
        if not expr.exp.is_Rational:
            raise DimensionError(f"{expr.base} [{base_unit}] raised to a symbolic power {expr.exp}")
        return base_unit ** Fraction(int(expr.exp.p), int(expr.exp.q))
    if isinstance(expr, (sp.Max, sp.Min)):
        return _same_unit(expr.args, type(expr).__name__)
    if isinstance(expr, sp.Piecewise):
        for _, condition in expr.args:
            _check_relational(condition)
        return _same_unit([value for value, _ in expr.args], "Piecewise")
    if isinstance(expr, Relational):
        _check_relational(expr)
        return DIMENSIONLESS
    if isinstance(expr, sp.Mod):
        return _same_unit(expr.args, "Mod")
    if isinstance(expr, _UNIT_PRESERVING):
        return dimension_of(expr.args[0])
    if isinstance(expr, sp.Function):
        for arg in expr.args:
            unit = dimension_of(arg)
            if not unit.is_dimensionless:
                raise DimensionError(f"{type(expr).__name__} of {arg} [{unit}]: the argument must be dimensionless")
        return DIMENSIONLESS
    if isinstance(expr, (sp.logic.boolalg.BooleanAtom, sp.logic.boolalg.BooleanFunction)):
        for arg in expr.args:
            dimension_of(arg)
        return DIMENSIONLESS
    raise DimensionError(f"cannot take the unit of {expr!r} ({type(expr).__name__})")


def units_of(expr: sp.Basic) -> Unit:
    """The unit a derivation step states, read leniently: a derivation counts in bare numbers as often as in
    marked ones (``V·d_emb`` parameters before ``u_param`` is put in), so a pure-number term beside a term with a unit
    is taken as unstated, and a symbol outside the table (``sympy.Symbol("x")``) as a pure number. Two terms
    (of a sum, a Max, a comparison) that both state units must state the same one: bytes beside FLOPs is a
    DimensionError naming both."""
    return _lenient(as_sympy(expr))


def _lenient(expr: sp.Basic) -> Unit:
    if isinstance(expr, sp.Symbol):
        return quantity(expr).unit if is_declared(expr.name) else DIMENSIONLESS
    if isinstance(expr, (sp.Add, sp.Max, sp.Min, sp.Mod)):
        return _one_stated(expr.args)
    if isinstance(expr, sp.Piecewise):
        return _one_stated([value for value, _ in expr.args])
    if isinstance(expr, Relational):
        _one_stated(expr.args)
        return DIMENSIONLESS
    if isinstance(expr, sp.Mul):
        unit = DIMENSIONLESS
        for factor in expr.args:
            unit = unit * _lenient(factor)
        return unit
    if isinstance(expr, sp.Pow) and expr.exp.is_Rational:
        return _lenient(expr.base) ** Fraction(int(expr.exp.p), int(expr.exp.q))
    if isinstance(expr, (sp.Sum, sp.Product, sp.Subs, sp.Derivative, sp.Integral)):
        return _lenient(expr.args[0]) if not isinstance(expr, sp.Product) else DIMENSIONLESS
    if isinstance(expr, _UNIT_PRESERVING):
        return _lenient(expr.args[0])
    if isinstance(expr, sp.Basic) and expr.args:
        for arg in expr.args:
            _lenient(arg)
    return DIMENSIONLESS


def _one_stated(terms) -> Unit:
    stated = [(term, _lenient(term)) for term in terms]
    units = [(term, unit) for term, unit in stated if not unit.is_dimensionless]
    for term, unit in units[1:]:
        if unit != units[0][1]:
            raise DimensionError(f"cannot add {units[0][0]} [{units[0][1]}] and {term} [{unit}]")
    return units[0][1] if units else DIMENSIONLESS


def _check_relational(condition: sp.Basic) -> None:
    if isinstance(condition, Relational):
        _same_unit(condition.args, "compare")
    elif isinstance(condition, sp.logic.boolalg.BooleanFunction):
        for arg in condition.args:
            _check_relational(arg)


def _same_unit(terms, what: str) -> Unit:
    units = [(term, dimension_of(term)) for term in terms if term != 0] or [(0, DIMENSIONLESS)]  # 0 has every unit
    first_term, first_unit = units[0]
    for term, unit in units[1:]:
        if unit != first_unit:
            verb = {"add": "add", "compare": "compare"}.get(what, f"combine in {what}")
            raise DimensionError(f"cannot {verb} {first_term} [{first_unit}] and {term} [{unit}]")
    return first_unit


def check_declared_unit(expr: sp.Basic, declared: Unit) -> str:
    """Check ``expr`` against its declared unit; returns how it matched.

    ``"exact"`` when the units agree; DimensionError otherwise, saying how to
    state a count whose expression is a pure number.
    """
    found = dimension_of(expr)
    if found == declared:
        return "exact"
    if found.is_dimensionless and declared.is_single_base:
        raise DimensionError(
            f"expression is a pure number, declared {declared}: a count states its unit in the expression "
            f"(multiply by u_{_MARKS.get(str(declared), str(declared))} from formulas.vocabulary.symbols)"
        )
    raise DimensionError(f"expression has unit {found}, declared {declared}")


_MARKS = {"parameter": "param", "FLOP": "flop", "layer": "layer", "sequence": "seq", "GPU": "gpu"}
