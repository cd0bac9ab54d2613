"""The command line contract: list, show, eval, check; one-line errors with exit 2."""

import dataclasses
import json
import subprocess
import sys

import pytest

from llm_formulas.derivations.reports.catalogue import all_derivations
from llm_formulas.formulas.vocabulary.catalogue import catalogue
from llm_formulas.formulas.vocabulary.symbols import h
from helpers import run


def test_eval_gpt2_small_parameters_exactly(capsys):
    # GPT-2 small has 124,439,808 parameters (Hugging Face gpt2, tied head).
    code, out, err = run(capsys, "eval", "params.total", "l=12", "h=768", "V=50257", "s=1024", "--json")
    assert code == 0 and err == ""
    doc = json.loads(out)
    assert doc["value"] == 124439808 and isinstance(doc["value"], int)
    assert doc["unit"] == "parameter"
    assert doc["inputs"] == {"l": 12, "h": 768, "V": 50257, "s": 1024}


def test_console_script_runs_in_a_fresh_process():
    result = subprocess.run(
        [sys.executable, "-m", "llm_formulas", "eval", "params.total", "l=12", "h=768", "V=50257", "s=1024", "--json"],
        capture_output=True, text=True, check=False,
    )
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["value"] == 124439808


def test_eval_exact_rational_and_scientific_inputs(capsys):
    # 6·P·D with P = 1e9 and D = 2^15 tokens: 6 × 10^9 × 32768 = 196,608,000,000,000 (001's "196 Tflops").
    code, out, _ = run(capsys, "eval", "flops.training.approx", "P=1e9", "D=32768", "--json")
    assert code == 0 and json.loads(out)["value"] == 196_608_000_000_000


@pytest.mark.parametrize(
    "argv, fragment",
    [
        (["eval", "params.nope", "h=1"], "unknown formula id"),
        (["eval", "params.total", "l=12", "h=768", "V=50257"], "missing"),
        (["eval", "params.total", "l=12", "h=768", "V=50257", "s=1024", "zz=3"], "unknown symbol"),
        (["eval", "params.total", "l=12", "h=768", "V=50257", "s=1024", "t=3"], "does not use"),
        (["eval", "params.total", "l=twelve", "h=768", "V=50257", "s=1024"], "not a number"),
        (["eval", "params.total", "l=0", "h=768", "V=50257", "s=1024"], "positive"),
        (["eval", "params.total", "l=12", "h=-768", "V=50257", "s=1024"], "positive"),
        (["eval", "params.total", "l=1.5", "h=768", "V=50257", "s=1024"], "whole number"),
        (["eval", "params.total", "l=nan", "h=768", "V=50257", "s=1024"], "not a number"),
        (["eval", "params.total", "l=inf", "h=768", "V=50257", "s=1024"], "not a number"),
        (["eval", "params.total", "l=1e999999", "h=768", "V=50257", "s=1024"], "out of range"),
        (["eval", "params.total", "l=12", "l=12", "h=768", "V=50257", "s=1024"], "twice"),
        (["eval", "params.total", "l12"], "name=value"),
        (["eval", "flops.training.approx", "P=1/0", "D=1"], "division by zero"),
        (["eval", "flops.training.approx", "P=__import__('os')", "D=1"], "not a number"),
        (["show", "nope"], "unknown formula id"),
        (["frobnicate"], "invalid choice"),
        ([], "required"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(capsys, argv, fragment):
    code, out, err = run(capsys, *argv)
    assert code == 2
    assert out == ""
    assert err.count("\n") == 1 and fragment in err
    assert "Traceback" not in err


def test_list_json_contract(capsys):
    code, out, _ = run(capsys, "list", "--json")
    rows = json.loads(out)
    ids = {r["id"] for r in rows}
    for stable in ["params.layer", "params.total", "params.approx", "flops.gemm", "flops.layer.forward", "flops.forward",
                   "flops.training", "flops.training.approx", "flops.megatron", "flops.inference.per_token"]:
        assert stable in ids
    row = next(r for r in rows if r["id"] == "params.total")
    assert set(row) == {"id", "unit", "meaning", "symbols", "sources"}
    assert row["symbols"] == ["s", "h", "l", "V"]


def test_show_json_has_latex_and_steps(capsys):
    code, out, _ = run(capsys, "show", "flops.megatron", "--json")
    doc = json.loads(out)
    assert code == 0
    assert doc["id"] == "flops.megatron" and "96" in doc["latex"]
    claims = [step["claim"] for step in doc["steps"]]
    assert claims == ["defines", "equals", "concludes"]
    assert all(step["why"] and step["latex"] for step in doc["steps"])


def test_show_text_and_latex(capsys):
    code, out, _ = run(capsys, "show", "params.total", "--latex")
    assert code == 0 and r"\Psi" in out and "derivation:" in out


def test_check_proves_everything(capsys):
    code, out, _ = run(capsys, "check", "--json")
    doc = json.loads(out)
    assert code == 0, doc["failed"]
    assert doc["failed"] == [] and doc["derivations"] >= 19 and doc["steps"] > doc["derivations"]


@pytest.fixture
def fresh_derivations():
    """Derivations read the catalogue when built and are cached: rebuild them around a swapped formula."""
    all_derivations.cache_clear()
    yield
    all_derivations.cache_clear()


def test_breaking_one_formula_makes_check_fail_and_name_the_step(capsys, monkeypatch, fresh_derivations):
    entries = catalogue()
    broken = dataclasses.replace(entries["params.layer"], dimensioned=entries["params.layer"].dimensioned + h)
    monkeypatch.setitem(entries, "params.layer", broken)
    code, out, _ = run(capsys, "check")
    assert code == 1
    assert "params.layer step 2 (params.layer): concludes FAILED" in out
    assert "12*h**2 + 13*h" in out and "12*h**2 + 14*h" in out


def test_commands_import_only_what_they_use():
    # start-up is most of a command's time (tests/benchmarks/bench_startup.py): --help needs no SymPy, and plan/estimate
    # need neither the fine-tuning formulas (0.4 s to build), the code printers nor the document stack
    import subprocess
    import sys

    heavy = ("sympy", "llm_formulas.formulas.topics.precision", "llm_formulas.render.printers.codegen", "matplotlib", "nbformat", "jinja2")
    probe = ("import contextlib, io, json, sys\nfrom llm_formulas.render.cli.main import main\n"
             "try:\n    with contextlib.redirect_stdout(io.StringIO()):\n        main(sys.argv[1:])\n"
             "except SystemExit:\n    pass\n"
             f"print(json.dumps([m for m in {heavy!r} if m in sys.modules]))")

    def loaded(*argv: str) -> list[str]:
        run = subprocess.run([sys.executable, "-c", probe, *argv], capture_output=True, text=True, timeout=120)
        return json.loads(run.stdout.strip().splitlines()[-1])

    assert loaded("--help") == []
    plan = ["plan", "--model", "megatron-1t", "--gpu", "a100-80gb", "--gpus", "3072", "--global-batch", "3072", "--seq", "2048"]
    assert loaded(*plan) == []  # plan's NumPy path imports no SymPy (issue 36 item 5)
    assert loaded("estimate", "--model", "llama2-7b", "--gpu", "a100-80gb", "--seq", "4096") == ["sympy"]
