"""The engine refuses proofs that prove nothing (issue 17).

Each case is a derivation the old engine accepted: it read the entry it
concluded, carried a step nothing used, computed its error from both sides, or
stated a limit that was not its condition's. Each must now fail, naming the step.
The last tests replay the mutants the issue measured surviving ``check``.
"""

import dataclasses

import pytest
import sympy as sp

from llm_formulas.derivations.reports.catalogue import build, factories
from llm_formulas.derivations.vocabulary.engine import Derivation
from llm_formulas.derivations.vocabulary.proof import much_greater, much_less
from llm_formulas.derivations.reports.testing import assert_approximation, assert_derivation
from llm_formulas.formulas.vocabulary.catalogue import catalogue, get
from llm_formulas.formulas.vocabulary.symbols import V, a, b, c_byte, f, h, l, n, s, tau


def failures(derivation):
    return {o.label: o for o in derivation.check() if not o.ok}


def test_a_derivation_may_not_read_the_entry_it_concludes():
    d = Derivation("demo.circular", "reads its own conclusion")
    d.defines("Ψ", get("params.layer").dimensioned, "the layer count, read back from the catalogue")
    d.concludes("params.layer")
    failed = failures(d)
    assert list(failed) == ["params.layer"]
    assert failed["params.layer"].method == "circular"
    assert "step 1 (Ψ) read the catalogue entry 'params.layer'" in failed["params.layer"].detail


def test_reading_another_entry_is_composition_not_a_circle():
    d = Derivation("demo.composed", "builds on another entry")
    d.defines("Ψ_layers", l * get("params.layer").dimensioned, "l layers")
    d.equals("Ψ_layers", l * (12 * h**2 + 13 * h), "expand", aside=True)
    assert failures(d) == {}


def test_a_step_that_feeds_nothing_fails():
    # the issue's Amdahl case: T_n was defined and never used, so changing it changed nothing
    d = Derivation("demo.dead", "Amdahl with a loose step")
    d.defines("T_1", tau, "one worker")
    d.defines("T_n", f * tau + tau / n, "n workers (mutated: the serial part is sped up too)")
    d.defines("S", tau / (f * tau + (1 - f) * tau / n), "typed out again instead of T_1/T_n")
    d.concludes("cluster.amdahl")
    failed = failures(d)
    assert set(failed) == {"T_n"}
    assert failed["T_n"].method == "dead step" and "no later step uses 'T_n'" in failed["T_n"].detail


def test_the_same_steps_used_for_real_pass():
    d = Derivation("demo.live", "Amdahl, connected")
    one = d.defines("T_1", tau, "one worker")
    many = d.defines("T_n", f * tau + (1 - f) * tau / n, "n workers")
    d.defines("S", one / many, "speed-up")
    d.concludes("cluster.amdahl")
    assert failures(d) == {}


def test_an_error_built_from_both_sides_is_rejected():
    exact = (34 * s * b * h + 5 * a * s**2 * b + 8 * s * b) * c_byte
    printed = (34 * s * b * h + 6 * a * s**2 * b) * c_byte  # wrong: 6 for 5
    d = Derivation("demo.by_construction", "error computed from both sides")
    d.defines("A_exact", exact, "the inventory")
    d.approximates("A", printed, "the printed form", condition=much_greater(h, 1), dropped=exact - printed)
    failed = failures(d)
    assert failed["A"].method == "error by construction"
    assert "built from the exact side" in failed["A"].detail
    relative = Derivation("demo.relative", "the old helper's relative error")
    relative.defines("A_exact", exact, "the inventory")
    relative.approximates("A", printed, "", condition=much_greater(h, 1), error=sp.cancel((exact - printed) / printed))
    assert failures(relative)["A"].method == "error by construction"


def test_stated_limits_must_be_the_conditions():
    exact = 24 * b * s * l * h**2 + 4 * b * s**2 * l * h
    d = Derivation("demo.limit", "a limit that is not the condition's")
    d.defines("F", exact, "forward GEMMs")
    d.approximates("wrong limit", 24 * b * s * l * h**2, "", condition=much_less(s, 6 * h), dropped=4 * b * s**2 * l * h,
                   limits=((V, sp.oo),), of="F")
    d.approximates("right limit", 24 * b * s * l * h**2, "", condition=much_less(s, 6 * h), dropped=4 * b * s**2 * l * h,
                   limits=((h, sp.oo),), of="F")
    failed = failures(d)
    assert list(failed) == ["wrong limit"]
    assert "V does not appear in s ≪ 6h" in failed["wrong limit"].detail


def test_a_condition_in_words_only_is_refused():
    d = Derivation("demo.words", "condition as text")
    d.defines("F", 12 * l * h**2 + 13 * l * h, "count")
    d.approximates("F≈", 12 * l * h**2, "", condition="h ≫ 1", dropped=13 * l * h)
    assert "state it symbolically" in failures(d)["F≈"].detail


def test_the_dropped_part_is_negligible_only_under_its_own_condition():
    # s ≪ 6h alone does not make the 13 small vectors per layer negligible (dropped/kept → 13/(12h), not 0)
    d = Derivation("demo.regime", "condition too weak")
    d.defines("Ψ", 12 * l * h**2 + 13 * l * h, "count")
    d.approximates("12lh²", 12 * l * h**2, "", condition=much_less(s, 6 * h), dropped=13 * l * h)
    assert "not 0" in failures(d)["12lh²"].detail


def test_user_helpers_give_the_same_errors_one_line_each():
    d = Derivation("mine", "a user's derivation")
    d.defines("x", get("params.layer").dimensioned, "read back")
    d.defines("unused", h, "nothing uses this")
    d.concludes("params.layer", of="x")
    with pytest.raises(AssertionError) as failure:
        assert_derivation(d)
    lines = str(failure.value).splitlines()
    assert lines == [
        "mine step 2 (unused): dead step: no later step uses 'unused' (its expression appears in none, no claim is made "
        "about it): a step must feed a conclusion, approximation, bound or cross-check (build the later step from it, "
        "sum it with parts=, solve for it with solves(), or mark an identity proved for its own sake aside=True)",
        "mine step 3 (params.layer): circular: step 1 (x) read the catalogue entry 'params.layer' that this step concludes: "
        "a derivation must build its result, not read it back",
    ]
    exact, printed = 12 * l * h**2 + 13 * l * h, 12 * l * h**2
    wrong = 13 * l * h**2  # 12 → 13: exact − wrong auto-simplifies, but the kept term's coefficient changed
    with pytest.raises(AssertionError, match=r"keeps h\*\*2\*l but changes its coefficient \(12 → 13\)"):
        assert_approximation(exact, wrong, dropped=exact - wrong, condition=much_greater(h, 1))
    with pytest.raises(AssertionError, match="not the condition's"):
        assert_approximation(exact, printed, dropped=13 * l * h, condition=much_greater(h, 1), limits=[(l, sp.oo)])
    assert_approximation(exact, printed, dropped=13 * l * h, condition=much_greater(h, 1))


def _check_with(formula_id, expr):
    """Check every derivation that concludes or reads ``formula_id`` with its expression replaced."""
    entries = catalogue()
    original = entries[formula_id]
    entries[formula_id] = dataclasses.replace(original, dimensioned=expr)
    try:
        built = [build(make) for make in factories()]
        relevant = [d for d in built if formula_id in d.established or formula_id in d.reads]
        return [o for d in relevant for o in d.check() if not o.ok]
    finally:
        entries[formula_id] = original


@pytest.mark.parametrize(
    "formula_id, change",
    [
        ("memory.activations.layer", {5 * a * s**2 * b: 6 * a * s**2 * b}),  # the issue's 5as²b → 6as²b
        ("memory.activations.layer.tp", {sp.Integer(24): sp.Integer(25)}),  # 24/t → 25/t
        ("memory.activations.layer.gated", {sp.Integer(8): sp.Integer(7)}),  # the gated MLP's 8·d_ff → 7·d_ff
        ("memory.activations.layer.flash", {sp.Integer(4): sp.Integer(5)}),  # the log-sum-exp's 4as/t → 5as/t
    ],
)
def test_the_mutants_the_issue_found_surviving_now_fail(formula_id, change):
    expr = get(formula_id).dimensioned
    mutated = expr.xreplace(change)
    assert mutated != expr
    failed = _check_with(formula_id, mutated)
    assert any(o.derivation == formula_id for o in failed), failed
