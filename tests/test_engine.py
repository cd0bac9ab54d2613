"""The derivation engine: each claim proves what it should and fails loudly otherwise."""

import pytest
import sympy as sp

from llm_formulas.derivations.vocabulary.engine import Derivation
from llm_formulas.derivations.vocabulary.proof import much_greater, much_less
from llm_formulas.derivations.reports.testing import assert_approximation, assert_identity
from llm_formulas.formulas.vocabulary.catalogue import Source
from llm_formulas.formulas.vocabulary.symbols import V, a, h, l, s


def outcomes(derivation):
    return {o.label: o for o in derivation.check()}


def test_equals_is_proved_and_a_wrong_step_shows_both_sides():
    d = Derivation("demo", "demo")
    d.defines("x", (h + 1) ** 2, "a square")
    d.equals("good", h**2 + 2 * h + 1, "expand", aside=True)
    d.equals("bad", h**2 + 1, "forgot the cross term", of="x", aside=True)
    result = outcomes(d)
    assert result["good"].ok and result["good"].method == "common denominator"
    bad = result["bad"]
    assert not bad.ok and bad.method == "counterexample"
    text = bad.describe()
    assert "demo step 3 (bad)" in text
    assert "(h + 1)**2" in text and "h**2 + 1" in text


def test_equality_with_rational_functions_needs_cancel():
    d = Derivation("demo", "demo")
    d.defines("x", (h**2 - 1) / (h - 1), "a ratio")
    d.equals("y", h + 1, "cancel", aside=True)
    assert outcomes(d)["y"].ok


def test_approximation_needs_the_exact_dropped_part_and_its_condition():
    d = Derivation("demo", "demo")
    d.defines("x", 12 * l * h**2 + 13 * l * h, "exact")
    d.approximates("ok", 12 * l * h**2, "leading term", condition=much_greater(h, 1), dropped=13 * l * h, of="x")
    d.approximates("wrong dropped", 12 * l * h**2, "", condition=much_greater(h, 1), dropped=13 * h, of="x")
    d.approximates("not negligible", 12 * l * h**2, "", condition=much_less(h, 1), dropped=13 * l * h, of="x")
    result = outcomes(d)
    assert result["ok"].ok and "h ≫ 1" in result["ok"].detail
    assert not result["wrong dropped"].ok and result["wrong dropped"].method == "counterexample"
    # h ≪ 1: dropped/kept = 13/(12h) grows without bound
    assert not result["not negligible"].ok and "not 0" in result["not negligible"].detail


def test_bounds():
    d = Derivation("demo", "demo")
    d.defines("x", 12 * l * h**2, "a count")
    d.bounds("upper", 12 * l * h**2 + V * h, "adding a positive term", direction="upper", of="x")
    d.bounds("not lower", 12 * l * h**2 + V * h, "", direction="lower", of="x")
    result = outcomes(d)
    assert result["upper"].ok
    assert not result["not lower"].ok


def test_refutes_accepts_a_real_slip_only():
    d = Derivation("demo", "demo")
    d.defines("x", h, "anything")
    d.refutes("slip", sp.Integer(10) ** 22, "a factor ten", correct=sp.Integer(10) ** 21, source=Source("002"))
    d.refutes("not a slip", 6 * h, "", correct=2 * 3 * h, source=Source("002"))
    result = outcomes(d)
    assert result["slip"].ok and "10" in result["slip"].detail
    assert not result["not a slip"].ok


def test_a_figure_refuted_by_an_expression_is_not_a_slip():
    # a correct figure left with an input unset (a part substituted before it was spelled out) is not a number:
    # 16K against 8192·h/h' proves nothing about the source
    d = Derivation("demo", "demo")
    d.defines("x", h, "anything")
    d.refutes("figure against expression", sp.Integer(16 * 1024), "", correct=8192 * h / 4096, source=Source("002"))
    assert not outcomes(d)["figure against expression"].ok


def test_a_step_that_cannot_be_evaluated_fails_instead_of_raising():
    d = Derivation("demo", "demo")
    d.defines("x", h, "anything")
    d.concludes("no.such.formula")
    result = outcomes(d)
    assert not result["no.such.formula"].ok and result["no.such.formula"].method == "error"


def test_references_must_exist():
    d = Derivation("demo", "demo")
    with pytest.raises(ValueError):
        d.equals("y", h, "nothing before")
    d.defines("x", h, "")
    with pytest.raises(ValueError):
        d.equals("y", h, "", of="missing")


def test_assert_identity_message_shows_both_sides():
    assert_identity(a * (h + s), a * h + a * s)
    with pytest.raises(AssertionError) as failure:
        assert_identity(a * (h + s), a * h + s)
    message = str(failure.value)
    assert "left:" in message and "right:" in message and "left − right" in message


def test_assert_approximation_reports_the_true_error():
    assert_approximation(h**2 + h, h**2, error=1 / h, limits=[(h, sp.oo)])
    with pytest.raises(AssertionError) as failure:
        assert_approximation(h**2 + 2 * h, h**2, error=1 / h, limits=[(h, sp.oo)])
    assert "what is really dropped" in str(failure.value) and "2" in str(failure.value)
    with pytest.raises(AssertionError, match="not negligible"):
        assert_approximation(h**2 + h**3, h**2, error=h, limits=[(h, sp.oo)])
    with pytest.raises(AssertionError, match=r"keeps h\*\*2 but changes its coefficient \(2 → 1\)"):
        assert_approximation(h**2 + h**2, h**2, error=sp.Integer(1), limits=[(h, sp.oo)])


def test_a_repeated_label_is_checked_against_the_earlier_step_not_itself():
    # found in review: `defines("F", x); equals("F", y)` once compared y with itself
    d = Derivation("demo", "demo")
    d.defines("F", (h + 1) ** 2, "a square")
    d.equals("F", h**2 + 1, "wrong, and must be caught")
    d.equals("F", h**2 + 1, "compares with the previous F, which is the same wrong value", aside=True)
    first, second = d.check()[1:]
    assert not first.ok and first.lhs == "(h + 1)**2"
    assert second.ok
