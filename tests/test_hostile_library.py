"""Nothing typed is executed by the library (issue 37): strings given where an expression is expected are read by
formulas/vocabulary/expressions.py's grammar or refused with a project error; before, sympify ran them through eval and
``"__import__('os').system('touch marker')"`` created the file."""

from __future__ import annotations

import os

import pytest

import llm_formulas as lf
from llm_formulas.formulas.vocabulary.catalogue import at_most, divides
from llm_formulas.formulas.vocabulary.expressions import ExpressionError, parse_expression
from llm_formulas.formulas.vocabulary.symbols import h

HOSTILE = ["__import__('os').system('touch marker')", "().__class__.__bases__[0].__subclasses__()", "lambda: 0",
           "exec('x')", "9**9**9", "h.__class__"]


def _derivation() -> lf.Derivation:
    d = lf.Derivation("hostile", "t")
    d.defines("A", h, ".")
    return d


ENTRY_POINTS = {
    "assert_identity left": lambda code: lf.assert_identity(code, "0"),
    "assert_identity right": lambda code: lf.assert_identity("0", code),
    "assert_approximation": lambda code: lf.assert_approximation(code, h, dropped=code),
    "defines": lambda code: lf.Derivation("x", "t").defines("A", code, "."),
    "equals": lambda code: _derivation().equals("B", code, "."),
    "solves": lambda code: _derivation().solves("B", code, ".", unknown="h", target=1),
    "solves target": lambda code: _derivation().solves("B", h, ".", unknown="h", target=code),
    "approximates": lambda code: _derivation().approximates("B", code, ".", condition=lf.much_less(1, h), dropped=0),
    "approximates dropped": lambda code: _derivation().approximates("B", h, ".", condition=lf.much_less(1, h), dropped=code),
    "bounds": lambda code: _derivation().bounds("B", code, ".", direction="upper"),
    "refutes": lambda code: _derivation().refutes("B", code, ".", correct=1, source=lf.Source("000")),
    "concludes where": lambda code: _derivation().concludes("params.layer", where={"h": code}),
    "much_less": lambda code: lf.much_less(code, h),
    "much_greater": lambda code: lf.much_greater(h, code),
    "divides": lambda code: divides(code, h),
    "at_most": lambda code: at_most(h, code),
    "Catalogue.formula expr": lambda code: lf.Catalogue("u").formula("u.x", code, "1", "m", sources=()),
    "Catalogue.formula conditions": lambda code: lf.Catalogue("u").formula("u.x", h, "1", "m", sources=(), conditions=[code]),
    "evaluate value": lambda code: lf.evaluate("params.layer", h=code),
    "symbol": lambda code: lf.symbol(code),
    "get": lambda code: lf.get(code),
    "latex": lambda code: lf.latex(code),
}


@pytest.mark.parametrize("entry", sorted(ENTRY_POINTS))
def test_a_hostile_string_is_refused_and_never_run(entry, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for code in HOSTILE:
        with pytest.raises((ExpressionError, KeyError, ValueError, TypeError)) as raised:
            ENTRY_POINTS[entry](code)
        assert not isinstance(raised.value, AssertionError)
        assert os.listdir(tmp_path) == []


def test_the_grammar_reads_what_a_user_writes():
    assert parse_expression("12*h**2 + 13*h") == 12 * h**2 + 13 * h  # the catalogue's h, with its assumptions
    assert parse_expression("0.35") == lf.evaluate("params.layer", h=1) * 0 + parse_expression("7/20")
    assert parse_expression("1e9") == 10**9 and parse_expression("2^-1") * 2 == 1


def test_a_derivation_written_as_strings_proves():
    d = lf.Derivation("strings", "one layer as text")
    d.defines("Ψ", "12*h**2 + 13*h", "by hand")
    d.concludes("params.layer")
    lf.assert_derivation(d)
