"""``plan``'s NumPy path without SymPy (issue 36 item 5): each check runs in a fresh interpreter that cannot import it."""

import json
import subprocess
import sys
from dataclasses import asdict

import pytest

NO_SYMPY = "import sys\nsys.modules['sympy'] = None  # any import of SymPy now raises ImportError\n"
README_PLAN = ["plan", "--model", "megatron-1t", "--gpu", "a100-80gb", "--gpus", "3072", "--global-batch", "3072",
               "--seq", "2048", "--top", "5"]


def _python(code: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)


def test_the_numeric_planner_imports_no_sympy():
    # formulas/reports/estimate.py imported SymPy at start-up (for EXACT_OPS), and formulas/data/calibration.py too
    run = _python(NO_SYMPY + "import llm_formulas.render.numeric.plan, llm_formulas.render.numeric.evaluator\nprint('ok')")
    assert run.returncode == 0 and run.stdout == "ok\n", run.stderr


def test_plan_ranks_without_sympy_given_its_inputs_as_plain_numbers():
    # the inputs are built here (the preset and GPU readers still use SymPy) and cross as floats; the ranking done in
    # a process that cannot import SymPy is the one plan gives here
    from llm_formulas.formulas.data.calibration import efficiency
    from llm_formulas.formulas.reports.estimate import Inputs, model_values
    from llm_formulas.formulas.data.gpus import NODE_SIZE, gpu
    from llm_formulas.formulas.data.presets import preset
    from llm_formulas.render.numeric.plan import plan

    model = model_values(preset("llama2-7b").architecture.values)
    constants = efficiency("a100-80gb")
    inputs = Inputs(model=model, gpu=gpu("a100-80gb").inputs(), network=25 * 10**9, tokens=None, utilization=None,
                    overlap=0.5, efficiency=constants, node_size=NODE_SIZE["a100-80gb"])
    expected = plan(model, inputs, 64, 512, 4096, top=3, max_tp=None)
    plain = {"model": model, "gpu": {name: float(value) for name, value in inputs.gpu.items()},
             "efficiency": {name: value if name == "provenance" else float(value) for name, value in asdict(constants).items()}}
    code = NO_SYMPY + f"""
import json
from llm_formulas.formulas.data.calibration import Efficiency
from llm_formulas.formulas.reports.estimate import Inputs
from llm_formulas.render.numeric.plan import plan
given = json.loads({json.dumps(json.dumps(plain))})
inputs = Inputs(model=given["model"], gpu=given["gpu"], network=25e9, tokens=None, utilization=None, overlap=0.5,
                efficiency=Efficiency(**given["efficiency"]), node_size={NODE_SIZE["a100-80gb"]})
print(json.dumps(plan(given["model"], inputs, 64, 512, 4096, top=3, max_tp=None)["ranked"]))
"""
    run = _python(code)
    assert run.returncode == 0, run.stderr
    got = json.loads(run.stdout)
    assert [entry["layout"] for entry in got] == [entry["layout"] for entry in expected["ranked"]]
    assert [entry["step_seconds"] for entry in got] == pytest.approx([entry["step_seconds"] for entry in expected["ranked"]])


README_SPEC = """models = ["llama2-7b", "llama2-13b"]
gpus = ["a100-80gb", "h100-sxm"]
sizes = [64, 256]
global_batch = 512
seq = 4096
top = 3
"""  # README.md's sweep spec


def _main_without_sympy(argv: list[str], cwd=None) -> subprocess.CompletedProcess:
    """``llm-formulas ARGV`` in a fresh interpreter; prints its exit code and whether SymPy was imported."""
    code = f"""
import contextlib, io, sys
from llm_formulas.render.cli.main import main
with contextlib.redirect_stdout(io.StringIO()):
    try:
        code = main({argv!r})
    except SystemExit as done:
        code = done.code
print(code, 'sympy' in sys.modules)
"""
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, cwd=cwd)


@pytest.mark.parametrize("argv", [
    README_PLAN,
    README_PLAN + ["--mfu", "0.5", "--overlap", "1/2", "--tokens", "450B", "--network", "50"],  # the assumptions typed
    ["plan", "--model", "llama2-7b", "--gpu", "h100-sxm", "--gpus", "64", "--global-batch", "512", "--seq", "4096",
     "--framework", "deepspeed"],  # another preset, a Hopper GPU's derived constants, a framework
], ids=["readme", "assumptions", "hopper"])
def test_plan_imports_no_sympy(argv):
    # the data layer (formulas/data/hf_config.py through presets, gpus.py, symbols.py, render/cli/inputs.py) imported SymPy
    run = _main_without_sympy(argv)
    assert run.stdout.split() == ["0", "False"], run.stderr


def test_the_readmes_sweep_imports_no_sympy(tmp_path):
    (tmp_path / "spec.toml").write_text(README_SPEC, encoding="utf-8")
    run = _main_without_sympy(["sweep", "spec.toml", "--out", "table.csv"], cwd=tmp_path)
    assert run.stdout.split() == ["0", "False"], run.stderr
    header, first, *_ = (tmp_path / "table.csv").read_text(encoding="utf-8").splitlines()
    assert header.startswith("model,gpu,n,rank") and first.startswith("llama2-7b,a100-80gb,64,1,")


@pytest.mark.parametrize("argv, message", [
    (README_PLAN[:-2] + ["--top", "0"], "--top must be a whole number from 1"),
    (["plan", "--model", "megatron-1t", "--gpu", "a100-80gb", "--gpus", "3072.5", "--global-batch", "3072", "--seq", "2048"],
     "n (GPUs (workers)) must be a whole number, got 6145/2"),
    (README_PLAN + ["--mfu", "1.5"], "U (utilization (MFU)) must be at most 1, got 3/2"),
    (["plan", "--model", "megatron-1t", "--gpu", "tpu-v5p", "--gpus", "8", "--global-batch", "8", "--seq", "2048"], "unknown GPU"),
])
def test_bad_input_to_the_numeric_plan_is_one_line_and_exit_2(argv, message, capsys):
    from llm_formulas.render.cli.main import main

    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and message in err, err


def test_the_stored_preset_values_are_what_the_readers_read():
    # formulas/data/preset_values.json is the readers' output for every preset: stale, rewrite it with the command below
    from llm_formulas.formulas.data.presets import VALUES_PATH, read_presets

    stored = json.loads(VALUES_PATH.read_text(encoding="utf-8"))
    assert stored == read_presets(), "stale: run python -m llm_formulas.formulas.data.presets"


def test_the_workload_declarations_are_the_symbol_tables():
    # symbols.py declares the layout and workload symbols from formulas/vocabulary/workload_symbols.py: one statement of each
    from llm_formulas.formulas.vocabulary.symbols import quantity
    from llm_formulas.formulas.vocabulary.workload_symbols import DECLARATIONS

    for name, entry in DECLARATIONS.items():
        assert quantity(name).rule == entry.rule and quantity(name).meaning == entry.meaning, name
    assert quantity("U").rule.maximum == 1 and not quantity("D").rule.is_integer and quantity("n").rule.is_integer


def test_the_gpu_figures_without_sympy_are_the_presets():
    # formulas/data/gpus.py builds each SymPy preset from formulas/data/gpu_specs.py; A100 80 GB SXM4: 312 TFLOPS bf16, 2,039 GB/s,
    # NVLink 600 GB/s (NVIDIA's A100 datasheet)
    from llm_formulas.formulas.data.gpu_specs import SPECS
    from llm_formulas.formulas.data.gpus import PRESETS

    assert set(SPECS) == set(PRESETS)
    for key, spec in SPECS.items():
        assert spec.inputs() == {name: value for name, value in PRESETS[key].inputs().items()}, key
    assert SPECS["a100-80gb"].inputs() == {"X": 312 * 10**12, "W_mem": 2039 * 10**9, "W_link": 600 * 10**9, "M_gpu": 80 * 10**9}
