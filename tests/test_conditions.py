"""Every divisibility condition is enforced: ``eval`` at a point that violates it is refused, naming it.

For each formula and each of its ``d divides x`` conditions, the same inputs are tried twice: x a multiple of
d (accepted), then x one more (refused with exit 2 and the condition in the message). Dropping a condition,
or testing the wrong symbol, fails here.
"""

from fractions import Fraction

import pytest
import sympy as sp

from llm_formulas.formulas.vocabulary.catalogue import all_formulas
from llm_formulas.formulas.vocabulary.symbols import quantity
from helpers import run

DIVISIBILITY = [
    (formula, condition)
    for formula in all_formulas()
    for condition in formula.conditions
    if isinstance(condition.predicate, sp.Eq) and isinstance(condition.predicate.lhs, sp.Mod)
    and condition.predicate.free_symbols <= set(formula.inputs)
]


def test_the_conditions_are_found():
    assert len(DIVISIBILITY) >= 15 and {c.text for _, c in DIVISIBILITY} >= {"t divides a", "p divides l", "g divides a"}


def _inputs(formula) -> dict[sp.Symbol, Fraction]:
    """A point every other condition accepts: switches 1, fractions of one ½, memory and time budgets ample."""
    values = {}
    for symbol in formula.inputs:
        entry = quantity(symbol)
        if entry.maximum is not None:
            values[symbol] = Fraction(1) if symbol.is_integer else Fraction(1, 2)
        elif symbol.name in ("M_gpu", "tau"):
            values[symbol] = Fraction(10**15)
        else:
            values[symbol] = Fraction(4)
    return values


def _eval(capsys, formula, values):
    assignments = [f"{symbol.name}={value}" for symbol, value in values.items()]
    return run(capsys, "eval", formula.id, *assignments)


@pytest.mark.parametrize("formula, condition", DIVISIBILITY, ids=[f"{f.id}: {c.text}" for f, c in DIVISIBILITY])
def test_a_point_that_violates_the_condition_is_refused(capsys, formula, condition):
    dividend, divisor = condition.predicate.lhs.args  # Mod(dividend, divisor)
    values = _inputs(formula)
    for symbol in divisor.free_symbols:
        values[symbol] = Fraction(2)
    divisor_value = int(divisor.subs({s: int(v) for s, v in values.items()}))
    # every divisibility condition of this formula holds first (the others too), so only this one can fail
    for other in formula.conditions:
        if (formula, other) in DIVISIBILITY:
            other_dividend, other_divisor = other.predicate.lhs.args
            for symbol in other_divisor.free_symbols:
                values.setdefault(symbol, Fraction(2))
            values[other_dividend] = Fraction(3 * 2 * int(other_divisor.subs({s: int(v) for s, v in values.items()})))
    code, _, err = _eval(capsys, formula, values)
    assert code == 0, err
    values[dividend] = Fraction(3 * divisor_value + 1)
    code, _, err = _eval(capsys, formula, values)
    assert code == 2 and f"requires {condition.text}" in err, err
