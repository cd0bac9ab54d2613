"""The generated NumPy module: imports without SymPy, and equals SymPy's evaluation.

Every function is compared, at 1000 random valid points per formula, with the
formula's SymPy expression evaluated by mpmath at 40 significant digits (SymPy's
own lambdify), to 1e-12 relative; a few points per formula are also checked
against exact SymPy substitution, so the high-precision oracle is itself checked.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
import zlib

import mpmath
import numpy as np
import pytest
import sympy as sp

from llm_formulas.formulas.vocabulary.catalogue import all_formulas
from llm_formulas.formulas.vocabulary.symbols import constant_values, quantity
from build_session import built
from llm_formulas.render.printers.codegen import MODULE_NAME, function_name

POINTS = 1000
RTOL = 1e-12


def generated_source() -> str:
    """The generated module as the session's ``build`` wrote it (module_source(), generated once per test run)."""
    return (built().out / f"{MODULE_NAME}.py").read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def numeric(tmp_path_factory):
    path = tmp_path_factory.mktemp("numeric") / f"{MODULE_NAME}.py"
    path.write_text(generated_source())
    spec = importlib.util.spec_from_file_location(MODULE_NAME, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_module_imports_without_sympy(tmp_path):
    (tmp_path / f"{MODULE_NAME}.py").write_text(generated_source())
    script = (
        "import sys; sys.modules['sympy'] = None\n"
        f"import {MODULE_NAME} as m\n"
        "print(len(m.FORMULAS))\n"
        # GPT-2 small: 124,439,808 parameters with the 1024-position table (HF GPT-2 model card)
        "print(int(m.params_total(s=1024, h=768, l=12, V=50257)))\n"
    )
    run = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, capture_output=True, text=True, check=True)
    count, gpt2 = run.stdout.split()
    assert int(count) == len(all_formulas())
    assert int(gpt2) == 124439808


def test_int64_inputs_do_not_overflow(numeric):
    # 6·N·D for N = 7e9, D = 2e12 is 8.4e22, far beyond int64 (PITFALLS.md)
    value = numeric.flops_training_approx(np.array([7 * 10**9], dtype=np.int64), np.array([2 * 10**12], dtype=np.int64))
    assert value[0] == pytest.approx(8.4e22, rel=1e-15)


def test_docstrings_carry_formula_units_and_sources(numeric):
    for formula in all_formulas():
        doc = getattr(numeric, function_name(formula.id)).__doc__
        assert formula.id in doc and f"[{formula.unit}]" in doc
        assert all(str(source) in doc for source in formula.sources)


def _sample(symbol: sp.Symbol, rng: np.random.Generator, size: int) -> np.ndarray:
    """Random valid values: exact in float64, integers as integers, within a symbol's bounds."""
    entry = quantity(symbol)
    if entry.is_integer:
        low = 0 if not symbol.is_positive else 1
        high = int(entry.maximum) if entry.maximum is not None else 2**20
        if entry.maximum is not None:
            return rng.integers(low, high + 1, size).astype(np.float64)
        powers = 2.0 ** rng.integers(0, 12, size)
        spread = np.floor(np.exp(rng.uniform(0, np.log(high), size)))
        return np.where(rng.random(size) < 0.5, powers, np.maximum(spread, low))
    if entry.maximum is not None:
        return rng.uniform(1e-3, float(entry.maximum), size)
    return np.exp(rng.uniform(np.log(1e-3), np.log(1e15), size))


def _valid_points(formula, rng: np.random.Generator) -> dict[sp.Symbol, np.ndarray]:
    inputs = formula.inputs
    tests = [c.predicate for c in formula.conditions if c.predicate is not None and c.predicate.free_symbols <= set(inputs)]
    size = POINTS * 200 if tests else POINTS
    points = {s: _sample(s, rng, size) for s in inputs}
    keep = np.ones(size, dtype=bool)
    for test in tests:
        holds = sp.lambdify(sorted(test.free_symbols, key=lambda x: x.name), test, "numpy")
        keep &= np.asarray(holds(*[points[x] for x in sorted(test.free_symbols, key=lambda x: x.name)]), dtype=bool)
    assert keep.sum() >= POINTS, f"{formula.id}: too few valid points"
    return {s: v[keep][:POINTS] for s, v in points.items()}


def _near_integer_step(expr: sp.Expr, args: list[sp.Symbol], row: list) -> bool:
    """True when a floor/ceiling argument is within 1e-9 of an integer (float rounding may flip it)."""
    for step in expr.atoms(sp.floor, sp.ceiling):
        inner = sp.lambdify(args, step.args[0], "mpmath")(*row)
        if abs(inner - mpmath.nint(inner)) <= 1e-9 * max(1, abs(inner)):
            return True
    return False


@pytest.mark.parametrize("formula", all_formulas(), ids=lambda f: f.id)
def test_generated_function_equals_sympy(formula, numeric):
    rng = np.random.default_rng(zlib.crc32(formula.id.encode()))
    expr = formula.expr.subs(constant_values())
    args = list(formula.inputs)
    points = _valid_points(formula, rng)
    got = np.broadcast_to(getattr(numeric, function_name(formula.id))(**{s.name: points[s] for s in args}), (POINTS,))
    oracle = sp.lambdify(args, expr, "mpmath")
    rows = list(zip(*[points[s].tolist() for s in args])) if args else [()] * POINTS
    with mpmath.workdps(40):
        for i, row in enumerate(rows):
            row = [mpmath.mpf(x) for x in row]
            want = oracle(*row)
            if not mpmath.isfinite(want):
                assert not np.isfinite(got[i]), (formula.id, row, got[i])
                continue
            if abs(got[i] - want) > RTOL * abs(want):
                assert _near_integer_step(expr, args, row), f"{formula.id} at {dict(zip([s.name for s in args], row))}: {got[i]} != {want}"
        for row in rows[:2]:  # the oracle itself against exact rational substitution
            exact = expr.xreplace({s: sp.Rational(x) for s, x in zip(args, row)})
            if exact.is_finite:
                reference = mpmath.mpf(sp.N(exact, 50))
                assert abs(oracle(*[mpmath.mpf(x) for x in row]) - reference) <= 1e-30 * abs(reference)


def test_functions_broadcast_scalars_with_arrays(numeric):
    # one input an array, the others plain Python scalars: the result is elementwise
    rng = np.random.default_rng(6)
    for formula in all_formulas():
        args = list(formula.inputs)
        if not args:
            continue
        points = _valid_points(formula, rng)
        vector = points[args[0]][:5]
        scalars = {s.name: float(points[s][0]) for s in args[1:]}
        function = getattr(numeric, function_name(formula.id))
        together = np.asarray(function(**{args[0].name: vector}, **scalars))
        one_by_one = np.array([float(function(**{args[0].name: x}, **scalars)) for x in vector])
        assert together.shape == (5,), formula.id
        np.testing.assert_array_equal(together, one_by_one, err_msg=formula.id)
