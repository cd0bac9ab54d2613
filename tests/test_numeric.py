"""The committed generated module is fresh, and the vectorised report equals the exact one layout by layout."""

import itertools
import subprocess
import sys

import numpy as np
import pytest
import sympy as sp

from llm_formulas.formulas.reports.estimate import RECOMPUTE_MODES, Inputs, Layout, estimate, model_values
from llm_formulas.formulas.data.gpus import gpu
from llm_formulas.formulas.data.presets import preset
from build_session import built
from llm_formulas.render.printers.codegen import MODULE_NAME
from llm_formulas.render.numeric.evaluator import GENERATED_PATH, NUMPY_OPS, numeric, numeric_inputs


def test_committed_module_is_fresh():
    # the session build's module is module_source() as `build` writes it (generated once per test run)
    fresh = (built().out / f"{MODULE_NAME}.py").read_text(encoding="utf-8")
    assert GENERATED_PATH.read_text(encoding="utf-8") == fresh, "stale: run python3 -m llm_formulas.render.numeric.evaluator"


def test_generated_module_imports_numpy_only():
    code = ("import sys; import render.numeric.llm_formulas_numeric; "
            "print(sorted(m for m in ('sympy', 'formulas', 'derivations', 'jinja2') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_numeric_matches_the_papers_arithmetic_on_arrays():
    # Korthikanti et al. 2022, eq. 2: sbh(10 + 24/t) bytes per layer with selective recompute
    b, s, h, t = np.array([1, 2, 4]), np.array([2048, 4096, 8192]), 8192, np.array([1, 2, 8])
    expected = s * b * h * (10 + 24 / t)
    np.testing.assert_allclose(numeric("memory.activations.layer.selective", b=b, s=s, h=h, t=t), expected, rtol=1e-15)
    with pytest.raises(KeyError, match="needs t"):
        numeric("memory.activations.layer.selective", b=b, s=s, h=h)


LLAMA2_70B = model_values(preset("llama2-70b").architecture.values)  # no position table: n_pos must vanish


def _inputs(model):
    return Inputs(model=model, gpu=gpu("h100-sxm").inputs(), network=25 * 10**9,
                  tokens=None, utilization=sp.Rational(2, 5), overlap=sp.Rational(1, 2))


def _as_float(value):
    return bool(value) if isinstance(value, sp.logic.boolalg.BooleanAtom) else float(value)


def _assert_same(exact, vector, index, path=""):
    if isinstance(exact, dict):
        for key in exact:
            _assert_same(exact[key], vector[key], index, f"{path}.{key}")
    elif isinstance(exact, str):
        assert exact == (vector[index] if np.ndim(vector) else vector), path
    else:
        got = vector[index] if np.ndim(vector) else vector
        assert got == pytest.approx(_as_float(exact), rel=1e-12, abs=0), path


SETTINGS = list(itertools.product([0, 1, 2, 3], RECOMPUTE_MODES, [False, True]))
# (t, p, d, b, m, v) on 64 GPUs: no TP, no PP, no DP, interleaved, and everything at once
SHAPES = [(1, 1, 64, 1, 2, 1), (8, 1, 8, 2, 4, 1), (2, 4, 8, 1, 8, 2), (8, 8, 1, 1, 16, 5), (4, 2, 8, 4, 2, 1)]


@pytest.fixture(scope="module")
def vector():
    """One call over every shape × setting: the settings are arrays too (recompute as indices into RECOMPUTE_MODES)."""
    rows = [(shape, setting) for shape in SHAPES for setting in SETTINGS]
    t, p, d, b, m, v = (np.array(column) for column in zip(*(shape for shape, _ in rows)))
    zero, recompute, parallel = zip(*(setting for _, setting in rows))
    layout = Layout(n=64, t=t, p=p, d=d, b=b, m=m, s=4096, v=v, zero=np.array(zero),
                    recompute=np.array([RECOMPUTE_MODES.index(mode) for mode in recompute]), sequence_parallel=np.array(parallel))
    return rows, estimate(layout, numeric_inputs(_inputs(LLAMA2_70B)), numeric, NUMPY_OPS)


@pytest.mark.parametrize("shape", SHAPES)
def test_vectorised_estimate_equals_exact_layout_by_layout(vector, shape):
    rows, report = vector
    for index, (row_shape, (zero, recompute, parallel)) in enumerate(rows):
        if row_shape != shape:
            continue
        t, p, d, b, m, v = shape
        exact = estimate(Layout(n=64, t=t, p=p, d=d, b=b, m=m, s=4096, v=v, zero=zero, recompute=recompute,
                                sequence_parallel=parallel), _inputs(LLAMA2_70B))
        _assert_same(exact, report, index)


def test_a_missing_size_that_does_not_vanish_is_an_error():
    model = dict(LLAMA2_70B)
    del model["h"]
    with pytest.raises(KeyError, match="needs"):
        numeric_inputs(_inputs(model))


def test_every_frameworks_states_vanish_without_parameters():
    # the report leaves out the experts' states when a model has none (formulas.reports.estimate._states): exact only while
    # every states formula a framework prices is proportional to Ψ (P·q_W + P·q_G + P·q_O over their replicas)
    from llm_formulas.formulas.vocabulary.catalogue import get
    from llm_formulas.formulas.data.frameworks import FRAMEWORKS
    from llm_formulas.formulas.vocabulary.symbols import P

    ids = {formula for chosen in FRAMEWORKS.values() for formula in (*chosen.holds.states, chosen.holds.step) if formula}
    assert "memory.states.stage3" in ids
    for formula in sorted(ids):
        expr = get(formula).expr
        assert P in expr.free_symbols and sp.simplify(expr.xreplace({P: 0})) == 0, formula


def test_every_generated_function_takes_its_inputs_by_position_in_their_order():
    # issue 36 item 7: numeric() passes every argument by position (by name, the sixty-odd switches and sizes of
    # params.decoder.total took longer to bind than its arithmetic); so each function's parameters are its INPUTS, in
    # order, none keyword-only, the required ones first and the others with defaults (a switch's classic value, None)
    import inspect

    from llm_formulas.render.numeric import llm_formulas_numeric as generated

    for formula_id, function in generated.FORMULAS.items():
        parameters = list(inspect.signature(function).parameters.values())
        names, required = generated.INPUTS[formula_id], generated.REQUIRED[formula_id]
        assert tuple(p.name for p in parameters) == names, formula_id
        assert all(p.kind is inspect.Parameter.POSITIONAL_OR_KEYWORD for p in parameters), formula_id
        assert [p.default is inspect.Parameter.empty for p in parameters] == [name in required for name in names], formula_id


def test_numeric_gives_each_value_to_its_own_argument():
    # every input a different array (switches too, away from their classic values), or the optional ones left out:
    # numeric() by position equals the generated function called by name, to the bit
    from llm_formulas.render.numeric import llm_formulas_numeric as generated

    rng = np.random.default_rng(36)
    for formula_id, function in generated.FORMULAS.items():
        names, required = generated.INPUTS[formula_id], generated.REQUIRED[formula_id]
        values = {name: rng.integers(1, 50, size=3).astype(float) for name in names}
        with np.errstate(all="ignore"):
            for given in (values, {name: values[name] for name in required}):
                np.testing.assert_array_equal(numeric(formula_id, **given, unused=np.zeros(3)), function(**given),
                                              err_msg=formula_id)
