"""The library keeps the command line's contract (issue 37, items 1, 2, 3, 8, 9): the same checks from one place,
never a silently wrong number, and results and types that fit ordinary Python tooling."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest
import sympy as sp

import llm_formulas as lf
from llm_formulas.render.cli.main import main

GPT2 = {"l": 12, "h": 768, "V": 50257, "s": 1024}


def cli_error(capsys, *argv: str) -> str:
    """The one line the command line prints for bad input (exit 2), without its prefix."""
    assert main(list(argv)) == 2
    line = capsys.readouterr().err.strip()
    return line.split("error: ", 1)[1]


# --- 1. evaluate checks every value as the command line does, with the same words ----------------------------------

@pytest.mark.parametrize("formula_id, values", [
    ("params.total", {**GPT2, "l": 12.5}),  # the old library: 127,983,744
    ("params.total", {**GPT2, "l": -1}),  # the old library: 32,297,472
    ("memory.zero.stage1", {"P": 7e9, "t": 1, "p": 1, "d": 0}),  # the old library: zoo
    ("cluster.amdahl", {"n": 512, "f": 1.5}),  # the old library: 1024/1535
])
def test_evaluate_refuses_what_the_command_line_refuses_with_its_words(capsys, formula_id, values):
    with pytest.raises(lf.InputError) as refused:
        lf.evaluate(formula_id, **values)
    assert isinstance(refused.value, ValueError)
    typed = [f"{name}={value:g}" if isinstance(value, float) else f"{name}={value}" for name, value in values.items()]
    assert str(refused.value) == cli_error(capsys, "eval", formula_id, *typed)


# --- 2. a model's values never go into a formula whose assumptions the model breaks -------------------------------

def test_a_classic_formula_refuses_a_model_it_does_not_describe_naming_the_general_one():
    # the old library: 6,592,012,288, a GPT-2-shaped count for a gated, untied model without a position table
    with pytest.raises(lf.InputError, match=r"params\.decoder\.total describes them"):
        lf.evaluate("params.total", model="llama2-7b", s=4096)
    with pytest.raises(lf.InputError, match=r"params\.decoder\.total"):  # the model's values passed by hand, too
        lf.evaluate("params.total", {**lf.model("llama2-7b"), "s": 4096})
    # the general formula gives the count transformers builds for meta-llama/Llama-2-7b-hf: 6,738,415,616
    assert lf.evaluate("params.decoder.total", model="llama2-7b") == 6_738_415_616
    # a model the classic form does describe is evaluated: GPT-3 175B, 96 layers of h = 12288, V = 50257, s = 2048
    # 96·(12·12288² + 13·12288) + 50257·12288 + 2048·12288 + 2·12288 = 174,604,259,328 (hand arithmetic)
    assert 96 * (12 * 12288**2 + 13 * 12288) + 50257 * 12288 + 2048 * 12288 + 2 * 12288 == 174_604_259_328
    assert lf.evaluate("params.total", model="gpt3-175b", s=2048) == 174_604_259_328


# --- 3. numpy_function: by name only, checked, typed -----------------------------------------------------------------

def test_numpy_function_refuses_a_positional_call_naming_its_inputs():
    total = lf.numpy_function("params.total")
    with pytest.raises(TypeError, match=r"by name \(s, h, l, V\)"):  # the old callable: 356,215,980,288
        total(12, 768, 50257, 1024)
    assert total(l=12, h=768, V=50257, s=1024) == 124_439_808  # GPT-2 small, 000 §3.1


def test_numpy_function_checks_conditions_and_assumptions_over_whole_arrays():
    per_layer = lf.numpy_function("memory.activations.layer.tp")  # "t divides a"
    with pytest.raises(lf.InputError, match="requires t divides a"):  # the old callable returned a value
        per_layer(b=1, s=2048, h=4096, a=32, t=3)
    with pytest.raises(lf.InputError, match=r"requires t divides a \(false at 1 of 3 points\)"):
        per_layer(b=1, s=2048, h=4096, a=32, t=np.array([1, 3, 8]))
    total = lf.numpy_function("params.total")
    with pytest.raises(lf.InputError, match=r"l \(layers\) must be a whole number, got 25/2"):
        total(l=np.array([12, 12.5]), h=768, V=50257, s=1024)
    assert "nothing is masked" in (total.__doc__ or "")


# --- 8. results and inputs that fit ordinary Python ----------------------------------------------------------------

def test_results_format_compare_and_serialize_like_python_numbers():
    whole = lf.evaluate("params.total", **GPT2)
    assert f"{whole:,}" == "124,439,808" and format(whole, ".3e") == "1.244e+08" and json.dumps(whole) == "124439808"
    assert isinstance(whole, int) and whole.exact == sp.Integer(124_439_808)
    # Amdahl at n = 2, f = 1/2: 1/(f + (1 − f)/n) = 1/(1/2 + 1/4) = 4/3, not whole: a float, exact one attribute away
    part = lf.evaluate("cluster.amdahl", n=2, f="1/2")
    assert isinstance(part, float) and part.exact == sp.Rational(4, 3)
    assert json.loads(json.dumps({"speedup": part})) == {"speedup": 4 / 3} and f"{part:.3f}" == "1.333"
    assert part < 2 and sorted([2, part, 1]) == [1, part, 2]


def test_inputs_take_numpy_scalars_and_the_command_lines_grammar():
    assert lf.evaluate("params.total", l=np.int64(12), h=np.int32(768), V=50257, s=1024) == 124_439_808
    # ZeRO-free mixed-precision Adam: 16 bytes a parameter (memory.zero at t = p = 1), 7B parameters: 112 GB
    assert lf.evaluate("memory.zero", P="7B", t=1, p=1) == 16 * 7 * 10**9 == lf.evaluate("memory.zero", P="7e9", t=1, p=1)
    with pytest.raises(lf.InputError, match="suffix is for counts"):  # the grammar's own rule, as on the command line
        lf.evaluate("cluster.amdahl", n=8, f="1k")
    with pytest.raises(lf.InputError, match="is not a number"):
        lf.evaluate("params.total", **{**GPT2, "h": "0x300"})


def test_the_public_names_are_a_static_list_that_mypy_strict_accepts(tmp_path):
    import ast
    from pathlib import Path

    import llm_formulas.__init__ as api

    tree = ast.parse(Path(api.__file__).read_text())
    written = next(node.value for node in tree.body if isinstance(node, ast.Assign)
                   and any(isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets))
    assert isinstance(written, ast.List)  # a literal, not computed: what type checkers read
    assert sorted(lf.__all__) == sorted(["__version__", *api._EXPORTS])
    user = Path(__file__).parent / "typed_user_script.py"
    used = {node.attr for node in ast.walk(ast.parse(user.read_text())) if isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name) and node.value.id == "lf"}
    assert used >= set(lf.__all__)  # the script uses every public name
    # the package as an installed wheel lays it out (the editable install's import hook is invisible to mypy): its
    # own modules are read for their types, not reported on (as mypy treats site-packages); the user's script strictly
    root = Path(__file__).parent.parent
    package = tmp_path / "site" / "llm_formulas"
    package.mkdir(parents=True)
    for entry in (root / "render" / "api").iterdir():
        (package / entry.name).symlink_to(entry)
    for folder in ("formulas", "derivations", "render"):
        (package / folder).symlink_to(root / folder)
    config = tmp_path / "mypy.ini"
    config.write_text("[mypy]\nstrict = True\n[mypy-llm_formulas,llm_formulas.*]\nfollow_imports = silent\n"
                      "[mypy-sympy.*]\nignore_missing_imports = True\n")
    checked = subprocess.run([sys.executable, "-m", "mypy", "--config-file", str(config), "--no-incremental",
                              "--cache-dir", str(tmp_path / "cache"), str(user)], capture_output=True, text=True,
                             timeout=1200, env={**os.environ, "MYPYPATH": str(package.parent)})
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "Success" in checked.stdout


# --- 9. discrete results, a user's formula's points, public conditions, the version -------------------------------

def test_a_count_is_rounded_as_its_meaning_says():
    # Llama-2-7B's cache, 2·l·g·d_head·q_kv bytes a token = 2·32·32·128·2 = 524,288; 4,096 tokens: 2,147,483,648 bytes
    # a sequence. 80 GB − 13.5 GB of weights − 1 GB of workspace = 65.5 GB: 65.5e9 / 2,147,483,648 = 30.5 → 30 fit
    wall = lf.evaluate("serving.memory.max_batch", g=32, d_head=128, l=32, t=1, p=1, M_gpu="80e9", s_ctx=4096, q_kv=2,
                       M_w="13.5e9", M_ws="1e9")  # the old library: 30642499/81920 sequences
    assert wall == 30 and isinstance(wall, int)
    # Little's law: 10 requests/s × 3 s in flight, 8 per replica: 30/8 = 3.75 replicas → 4 (round up)
    assert lf.evaluate("serving.replicas", R_req=10, T_e2e=3, b=8, p=1) == 4
    assert main(["eval", "serving.replicas", "R_req=10", "T_e2e=3", "b=8", "p=1"]) == 0


def test_valid_point_reads_a_user_formulas_own_catalogue():
    from hypothesis import given, settings

    from llm_formulas.testing.strategies import valid_point

    acme = lf.Catalogue("acme_points")
    acme.source("acme2026", authors="A. Engineer", title="Notes", date="2026")
    card = acme.cite("acme2026")
    n_img = acme.symbol("n_img", "n_{img}", "image tokens per sample", "1", integer=True, source=card)
    h = lf.symbol("h")
    adapter = acme.formula("acme.adapter", 2 * n_img * h, "1", "adapter", sources=[card],
                           conditions=[lf.divides(h, n_img), lf.Condition("a note without a test")])
    seen = []

    @settings(max_examples=5, deadline=None)
    @given(valid_point(adapter))  # outside ``with acme:``: the old code raised UnknownSymbol for n_img
    def check(values: dict) -> None:
        seen.append(values)
        assert values[n_img] % values[h] == 0

    check()
    assert seen


def test_the_version_is_pyprojects_without_the_metadata_scan():
    import tomllib
    from pathlib import Path

    pyproject = tomllib.loads((Path(__file__).parent.parent / "pyproject.toml").read_text())
    assert lf.__version__ == pyproject["project"]["version"]
    probe = "import sys, llm_formulas; print('importlib.metadata' in sys.modules, llm_formulas.__version__)"
    shown = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=300).stdout.split()
    assert shown == ["False", pyproject["project"]["version"]]
