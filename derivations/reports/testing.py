"""Assertion helpers for users' own pytest suites.

    from llm_formulas.derivations.reports.testing import assert_derivation, assert_identity, assert_approximation
    from llm_formulas.derivations.vocabulary.proof import much_greater
    assert_identity(my_params, 12*l*h**2 + 13*l*h)
    assert_approximation(12*l*h**2 + 13*l*h, 12*l*h**2, dropped=13*l*h, condition=much_greater(h, 1))
    assert_derivation(my_derivation)   # every step proved, and the derivation sound

A failure raises AssertionError whose message shows both sides, their
difference and, when one is found, a point where they differ. A derivation
gets the engine's soundness errors (a circular read of its own conclusion, a
dead step, a dropped part built from both sides, limits that are not the
condition's), one line each, naming the step.
"""

from __future__ import annotations

import sympy as sp

from llm_formulas.derivations.vocabulary.engine import Derivation
from llm_formulas.formulas.vocabulary.dimensions import DimensionError, units_of
from llm_formulas.formulas.vocabulary.expressions import ExpressionError, as_expression, as_sympy
from llm_formulas.derivations.vocabulary.proof import Regime, built_from, changed_kept_terms, limits_match, prove_equal, prove_negligible, prove_vanishes, valued

__all__ = ["assert_approximation", "assert_derivation", "assert_identity"]


def _show(expr: sp.Basic) -> str:
    return sp.pretty(valued(expr), use_unicode=True)


def assert_identity(lhs: sp.Basic, rhs: sp.Basic, message: str = "") -> None:
    """Assert lhs == rhs exactly (symbolic proof, never a numeric spot check), in the same units.

    Units are read as ``derivations.vocabulary.engine`` reads a step's: where both sides state one (a unit mark such as
    ``u_param``, a symbol with a unit), it must be the same one.
    """
    __tracebackhide__ = True  # pytest shows the failing call in the user's test, not this helper's source
    prefix = message + "\n" if message else ""
    lhs, rhs = as_expression(lhs), as_expression(rhs)  # a string is read by the project's grammar, never evaluated
    try:
        left, right = units_of(lhs), units_of(rhs)
    except DimensionError as error:
        raise AssertionError(f"{prefix}the units do not add up: {error}") from None
    if not left.is_dimensionless and not right.is_dimensionless and left != right:
        raise AssertionError(f"{prefix}the units differ: the left side is in {left}, the right side in {right}\n"
                             f"left:\n{_show(lhs)}\nright:\n{_show(rhs)}")
    verdict = prove_equal(lhs, rhs)
    if not verdict.ok:
        difference = sp.simplify(valued(lhs) - valued(rhs))
        raise AssertionError(
            prefix
            + f"not an identity ({verdict.method}: {verdict.detail})\n"
            + f"left:\n{_show(lhs)}\nright:\n{_show(rhs)}\nleft − right:\n{_show(difference)}"
            + _lookalikes(lhs, rhs)
        )


def _lookalikes(lhs: sp.Basic, rhs: sp.Basic) -> str:
    """A hint when the sides hold different symbols of one name (``sympy.Symbol("h")`` beside the catalogue's h)."""
    names: dict[str, set] = {}
    for symbol in as_sympy(lhs).free_symbols | as_sympy(rhs).free_symbols:
        names.setdefault(symbol.name, set()).add(symbol)
    twins = sorted(name for name, found in names.items() if len(found) > 1)
    if not twins:
        return ""
    return (f"\nnote: {', '.join(twins)} appear as two different symbols of one name: the catalogue's carry assumptions "
            "(positive, integer), sympy.Symbol(name) does not; take symbols from llm_formulas.symbols(...)")


def assert_approximation(
    exact: sp.Basic,
    approx: sp.Basic,
    *,
    dropped: sp.Basic | None = None,
    condition: Regime | tuple[Regime, ...] = (),
    error: sp.Basic | None = None,
    limits: list[tuple[sp.Symbol, sp.Basic]] | tuple[tuple[sp.Symbol, sp.Basic], ...] = (),
    message: str = "",
) -> None:
    """Assert exact == approx + dropped exactly, and dropped/approx → 0 under ``condition``.

    The older form (``error`` relative, ``limits`` explicit) is still accepted:
    then dropped = approx·error and the limits are taken in order. Limits stated
    together with a condition must be the condition's.
    """
    __tracebackhide__ = True
    prefix = message + "\n" if message else ""
    regimes = (condition,) if isinstance(condition, Regime) else tuple(condition)
    if not all(isinstance(regime, Regime) for regime in regimes):
        raise ExpressionError("a condition is much_less(...) or much_greater(...), or a tuple of them")
    if dropped is None and error is None:
        raise AssertionError(prefix + "an approximation must state what it drops: dropped=<the terms left out>")
    exact, approx = as_expression(exact), as_expression(approx)
    stated = as_expression(dropped if dropped is not None else error)
    dropped = stated if dropped is not None else approx * stated
    limits = tuple((as_expression(symbol), as_expression(value)) for symbol, value in limits)
    for name, side in (("exact", exact), ("approximate", approx)):
        if (isinstance(side, sp.Add) or len(valued(side).free_symbols) >= 2) and built_from(side, stated):
            raise AssertionError(
                prefix + f"the dropped part is built from the {name} side: exact = approximate + dropped then holds "
                "whatever the approximation is; write the dropped terms out"
            )
    changed = changed_kept_terms(exact, approx)
    if changed:
        monomial, was, now = changed[0]
        raise AssertionError(
            prefix + f"the approximation keeps {sp.sstr(monomial)} but changes its coefficient ({was} → {now}): "
            "an approximation drops whole terms, it does not alter the ones it keeps"
        )
    try:
        assert_identity(exact, approx + dropped, message="exact ≠ approximate + dropped")
    except AssertionError as failure:
        true_dropped = sp.simplify(valued(exact) - valued(approx))
        raise AssertionError(f"{prefix}{failure}\nwhat is really dropped:\n{_show(true_dropped)}") from None
    if regimes and limits:
        verdict = limits_match(regimes, tuple(limits))
        if not verdict.ok:
            raise AssertionError(prefix + verdict.detail)
    verdict = prove_negligible(dropped, approx, regimes) if regimes else prove_vanishes(sp.cancel(dropped / approx), tuple(limits))
    if not verdict.ok:
        raise AssertionError(prefix + f"the dropped part is not negligible: {verdict.detail}")


def assert_derivation(derivation: Derivation) -> None:
    """Assert every step of ``derivation`` is proved, in consistent units, and the derivation is sound
    (no circular read of its conclusion, no dead step); a failure shows each failed step's two sides,
    their difference and the point where they differ."""
    __tracebackhide__ = True
    failed = [outcome for outcome in derivation.check() if not outcome.ok]
    if failed:
        raise AssertionError("\n".join(_failure(outcome) for outcome in failed))


def _failure(outcome) -> str:
    """One line for the failed step; below it, where the claim had two sides, both, their difference and the point."""
    text = f"{outcome.where}: {outcome.method}: {outcome.detail}"
    if outcome.lhs or outcome.rhs:
        text += f"\n    left:  {outcome.lhs}\n    right: {outcome.rhs}"
        if outcome.difference:
            text += f"\n    left − right: {outcome.difference}"
    return text
