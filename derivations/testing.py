"""Assertion helpers for users' own pytest suites.

    from derivations.testing import assert_identity, assert_approximation
    assert_identity(my_params, 12*l*h**2 + 13*l*h)
    assert_approximation(exact, 12*l*h**2, error=13/(12*h), limits=[(h, oo)])

A failure raises AssertionError whose message shows both sides, their
difference and, when one is found, a point where they differ.
"""

from __future__ import annotations

import sympy as sp

from derivations.proof import prove_equal, prove_vanishes, valued


def _show(expr: sp.Basic) -> str:
    return sp.pretty(valued(expr), use_unicode=True)


def assert_identity(lhs: sp.Basic, rhs: sp.Basic, message: str = "") -> None:
    """Assert lhs == rhs exactly (symbolic proof, never a numeric spot check)."""
    verdict = prove_equal(lhs, rhs)
    if not verdict.ok:
        difference = sp.simplify(valued(lhs) - valued(rhs))
        raise AssertionError(
            (message + "\n" if message else "")
            + f"not an identity ({verdict.method}: {verdict.detail})\n"
            + f"left:\n{_show(lhs)}\nright:\n{_show(rhs)}\nleft − right:\n{_show(difference)}"
        )


def assert_approximation(
    exact: sp.Basic,
    approx: sp.Basic,
    *,
    error: sp.Basic,
    limits: list[tuple[sp.Symbol, sp.Basic]] | tuple[tuple[sp.Symbol, sp.Basic], ...],
    message: str = "",
) -> None:
    """Assert exact == approx·(1 + error) exactly, and error → 0 under ``limits``."""
    try:
        assert_identity(exact, approx * (1 + error), message="the stated relative error is not exact")
    except AssertionError as failure:
        true_error = sp.simplify(valued(exact) / valued(approx) - 1)
        raise AssertionError(f"{message}\n{failure}\nthe exact relative error is:\n{_show(true_error)}".lstrip()) from None
    verdict = prove_vanishes(error, tuple(limits))
    if not verdict.ok:
        raise AssertionError((message + "\n" if message else "") + f"the error does not vanish: {verdict.detail}")
