"""Bounded work, the exit-code contract, and figures that cannot be impossible (issue 27, items 5-9 and 11-13).

Each case is the issue's reproduction, run as a real process where the process is what is judged (time,
memory, what reaches stderr), in-process otherwise: one line on stderr and exit 2 for bad input, never exit 3,
never more than 80 characters of what was typed in that line, never a control character; within seconds.
"""

from __future__ import annotations

import io
import json
import re
import subprocess
import sys
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import pytest

from llm_formulas.render.cli.main import main

COMMAND = [sys.executable, "-m", "llm_formulas"]
LLAMA = {"model_type": "llama", "hidden_size": 64, "num_attention_heads": 4, "num_hidden_layers": 2,
         "intermediate_size": 128, "vocab_size": 100}
SPEC = {"models": ["llama2-7b"], "gpus": ["a100-80gb"], "sizes": [8], "global_batch": 8, "seq": 2048}


def cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = main(list(argv))
    return code, out.getvalue(), err.getvalue()


def refused(*argv: str, says: str) -> str:
    code, out, err = cli(*argv)
    assert code == 2 and out == "", (code, err)
    assert err.count("\n") == 1 and err.startswith("llm-formulas: error: ") and says in err, err
    return err


def measured(*argv: str, timeout: float = 600) -> tuple[subprocess.CompletedProcess, int]:
    """A real process and its peak memory in kB (GNU time); the timeout is a hang guard (speed: tests/benchmarks)."""
    run = subprocess.run(["/usr/bin/time", "-f", "%M", *COMMAND, *argv], capture_output=True, timeout=timeout)
    return run, int(run.stderr.decode().strip().splitlines()[-1])


def write(path: Path, document: object) -> str:
    path.write_text(document if isinstance(document, str) else json.dumps(document))
    return str(path)


# --- item 5: a 200-byte config cannot declare 2³¹ layers ---------------------------------------------------------


@pytest.mark.parametrize("layers", [2**31, 10**8, 10**7, 10_001])
def test_a_config_deeper_than_any_model_is_refused(tmp_path, layers):
    # params: MemoryError (exit 3); kv-cache --json at l = 10⁷: 659 MB of JSON in 4.3 GB, at 10⁸ MemoryError
    path = write(tmp_path / "deep.json", LLAMA | {"num_hidden_layers": layers})
    for argv in (["params", "--hf-config", path], ["kv-cache", "--hf-config", path, "--batch", "1", "--seq", "8", "--json"]):
        refused(*argv, says="'num_hidden_layers' = ")
        assert "is out of range (at most 10,000)" in cli(*argv)[2]


def test_the_deepest_model_allowed_is_cheap(tmp_path):
    from llm_formulas.formulas.vocabulary.bounds import MAX_LAYERS

    path = write(tmp_path / "deep.json", LLAMA | {"num_hidden_layers": MAX_LAYERS})
    run, peak_kb = measured("kv-cache", "--hf-config", path, "--batch", "1", "--seq", "8", "--json")
    assert run.returncode == 0 and len(json.loads(run.stdout)["layers"]) == MAX_LAYERS
    assert len(run.stdout) < 2_000_000 and peak_kb < 300_000, (len(run.stdout), peak_kb)


# --- item 6: a sweep is bounded as plan is ------------------------------------------------------------------------


@pytest.mark.parametrize("change, says", [
    ({"sizes": ["1e100"]}, "n = 1e+100 is beyond the bound of 10,000,000 GPUs"),  # ran past a minute
    ({"global_batch": 10**18}, "B = 1e+18 is beyond the bound of 10,000,000 sequences"),
    ({"sizes": [10**18]}, "n = 1e+18 is beyond the bound"),  # 34 s to return nothing
    ({"sizes": [10**8]}, "beyond the bound of 10,000,000 GPUs"),  # plan's limit, now sweep's too
    ({"seq": "1e100"}, "s = 1e+100 is beyond the bound of 1,000,000,000 tokens"),  # item 8: OverflowError, exit 3
    ({"top": 10**30}, "top must be a whole number from 1 to 2,000,000"),
    ({"tokens": "1e999"}, "sweep spec tokens: '1e999' is out of range"),
    ({"mfu": float("nan")}, "sweep spec mfu: 'nan' is not a number"),
])
def test_a_sweep_spec_goes_through_the_command_lines_grammar_and_bounds(tmp_path, change, says):
    spec = write(tmp_path / "spec.json", SPEC | change)
    refused("sweep", spec, "--out", str(tmp_path / "table.csv"), says=says)
    assert not (tmp_path / "table.csv").exists()


# --- item 7: --stages is bounded before it is read -------------------------------------------------------------------


def test_fifty_thousand_stages_are_refused_at_once(tmp_path):
    stages = ",".join(["1"] * 50_000)  # 47 s before
    run, _ = measured("estimate", "--model", "llama2-7b", "--gpu", "a100-80gb", "--seq", "128", "--pp", "8",
                      "--stages", stages)
    assert run.returncode == 2 and b"--stages lists 50,000 stages; a pipeline has at most 10,000" in run.stderr


def test_the_most_stages_allowed_run_within_seconds(tmp_path):
    # the longest accepted case of the bounds: 10,000 one-layer stages of a 10,000-layer model, predicted step time
    path = write(tmp_path / "deep.json", LLAMA | {"num_hidden_layers": 10_000})
    run, peak_kb = measured("estimate", "--hf-config", path, "--gpu", "a100-80gb", "--seq", "128", "--pp", "10000",
                            "--stages", ",".join(["1"] * 10_000), "--json")
    assert run.returncode == 0, run.stderr[-300:]
    assert json.loads(run.stdout)["pipeline"]["stages"] == [1] * 10_000
    assert peak_kb < 500_000, peak_kb  # 61 MB here


# --- item 8: every bad input is exit 2, never an internal error ---------------------------------------------------


def test_a_duplicate_key_is_refused_in_a_spec_and_a_config(tmp_path):
    spec = tmp_path / "spec.json"
    spec.write_text('{"models": ["llama2-7b"], "gpus": ["a100-80gb"], "sizes": [8], "global_batch": 8, "seq": 2048, "seq": "1e100"}')
    refused("sweep", str(spec), "--out", str(tmp_path / "t.csv"), says="the key 'seq' is given twice")
    config = tmp_path / "config.json"
    config.write_text(json.dumps(LLAMA)[:-1] + ', "num_hidden_layers": 4}')  # the last one silently won
    refused("params", "--hf-config", str(config), says="the key 'num_hidden_layers' is given twice")


@pytest.mark.parametrize("address", ["not a url", "inproc://x", "tcp://host:99999", "tcp://:8786"])
def test_a_scheduler_address_that_is_none_is_bad_input(tmp_path, address):
    spec = write(tmp_path / "spec.json", SPEC)
    refused("sweep", spec, "--out", str(tmp_path / "t.csv"), "--scheduler", address, says="is not a Dask scheduler address")


# --- item 9: an error line escapes control characters and quotes at most 80 characters --------------------------


def _quoted_at_most_80(err: str, typed: str) -> None:
    assert err.count("\n") == 1 and "\x1b" not in err and "\r" not in err
    assert typed[:81] not in err  # never more than 80 characters of it


@pytest.mark.parametrize("argv", [
    ["list", "--x\nline2\x1b[31m"],  # argparse's "unrecognized arguments": two lines and a raw ESC
    ["list", "y" * 100_000],  # a 100 kB error line
    ["validate", "--paper", "z" * 10_000],  # echoed all 10,000
    ["estimate", "--zero", "w" * 5_000],  # argparse's "invalid choice"
    ["estimate", "--model", "llama2-7b", "--gpu", "a100-80gb", "--seq", "4096", "--network", "-" + "9" * 90],
])
def test_error_lines_escape_and_cut_what_was_typed(argv):
    run = subprocess.run([*COMMAND, *argv], capture_output=True, timeout=60)
    err = run.stderr.decode()
    assert run.returncode == 2 and err.startswith("llm-formulas: error: "), err[:300]
    _quoted_at_most_80(err, max(argv, key=len))
    assert len(err) < 400
    if argv[0] == "list" and "\n" in argv[1]:
        assert "'--x\\nline2\\x1b[31m'" in err


def test_paths_in_lines_are_escaped_for_build_and_sweep(tmp_path):
    err = refused("build", "--out", "/proc/llm\nformulas\x1b[2J/site", says="cannot write")
    assert err == "llm-formulas: error: cannot write /proc/llm\\nformulas\\x1b[2J: No such file or directory\n"
    long = "/proc/" + "x" * 200
    err = refused("build", "--out", long, says="cannot write …x")
    _quoted_at_most_80(err, long)
    spec = write(tmp_path / "spec.json", SPEC)
    out = tmp_path / "table\nwith\x1b[31m.csv"
    code, text, err = cli("sweep", spec, "--out", str(out))
    assert code == 0 and out.exists() and text.count("\n") == 1 and "\x1b" not in text and "\\x1b" in text


# --- item 11: no utilization above the peak, and the flag as typed ---------------------------------------------


ESTIMATE = ["estimate", "--model", "llama2-7b", "--gpu", "a100-80gb", "--seq", "4096"]


def test_an_hfu_above_100_percent_is_refused_naming_the_flag_as_typed():
    # --mfu 1 printed HFU 100.9 %; --achieved 312 on an A100 printed "U = 100.0% (--mfu)" and HFU 102.4 %
    err = refused(*ESTIMATE, "--mfu", "1", says="--mfu 1 means HFU 104.7 % with the recomputed FLOPs on top")
    assert err.endswith("give at most --mfu 0.955\n")
    err = refused(*ESTIMATE, "--achieved", "312", says="--achieved 312 means HFU 104.7 %")
    assert err.endswith("give at most --achieved 298\n")
    code, out, _ = cli(*ESTIMATE, "--achieved", "200")
    assert code == 0 and "U = 64.1% (--achieved 200 TFLOP/s of the GPU's peak)" in out and "(--mfu)" not in out
    code, out, _ = cli(*ESTIMATE, "--mfu", "1", "--recompute", "none", "--json")
    assert code == 0 and json.loads(out)["time"]["hfu"] == 1  # no recomputation: the peak itself


def test_plan_and_sweep_rank_no_layout_above_the_peak(tmp_path):
    code, out, _ = cli("plan", "--model", "llama2-7b", "--gpu", "a100-80gb", "--gpus", "8", "--global-batch", "64",
                       "--seq", "2048", "--mfu", "1", "--top", "50", "--json")
    ranked = json.loads(out)["ranked"]
    assert code == 0 and ranked and all(entry["hfu"] <= 1 for entry in ranked)
    assert {entry["layout"]["recompute"] for entry in ranked} == {"none"}  # any recomputation needs more than U = 1


# --- item 12: a case listed twice is refused, never counted twice ---------------------------------------------


def test_a_model_listed_twice_in_a_sweep_is_refused(tmp_path):
    from llm_formulas.render.numeric.sweep import Spec

    # models: ["llama2-7b", "llama2-7b"] gave 10824/8186 explored/fitting for each, truly 5412/4093
    for key, value in (("models", ["llama2-7b", "llama2-7b"]), ("gpus", ["a100-80gb"] * 2), ("sizes", [8, "8", 8.0])):
        spec = write(tmp_path / "spec.json", SPEC | {key: value})
        refused("sweep", spec, "--out", str(tmp_path / "t.csv"), says="twice")
    with pytest.raises(ValueError, match="twice"):
        Spec(models=("llama2-7b", "llama2-7b"), gpus=("a100-80gb",), sizes=(8,), global_batch=8, seq=2048)


# --- item 13: numbers far from 1 in exponent notation -------------------------------------------------------------


def test_numbers_far_from_one_use_exponent_notation_or_the_next_unit():
    from fractions import Fraction

    from llm_formulas.render.printers.human import human, significant

    assert human(3.49e-80, "second") == "3.49e-80 s"  # "0.000…0349 ns": 80 zeros
    assert human(2e30, "byte") == "2.00e+30 B" and human(2e27, "byte") == "2,000 YB"
    assert human(1.23e20, "1") == "1.23e+20" and human(5e100, "parameter") == "5.00e+100 parameters"
    assert significant(0.000209) == "2.09e-4" and significant(0.0012) == "0.0012" and significant(4096) == "4,096"
    assert human(Fraction(10**400), "byte") == "1.00e+400 B"  # beyond a float, exact


def test_extreme_reports_print_no_zero_runs_nor_long_integers():
    # --dp 1e100 printed "0.000…0349 ns"; the footprint line printed 100-digit integers
    code, out, _ = cli(*ESTIMATE, "--mfu", "0.5", "--dp", "1e7", "--network", "1e-100", "--tokens", "1e100")
    assert code == 0
    assert not re.search(r"0\.0{5,}", out) and not re.search(r"[0-9,]{25,}", out), out
    assert "e+" in out.split("footprint:")[1]


def test_one_token_is_not_zero_gpu_hours():
    code, out, _ = cli(*ESTIMATE, "--mfu", "0.5", "--tokens", "1")
    footprint = next(line for line in out.splitlines() if line.startswith("footprint:"))
    assert code == 0 and "0 GPU-hours" not in footprint and "$0 " not in footprint, footprint
    # one iteration of 1.27 s on one A100: 3.52e-4 GPU-hours at $2 = $7.04e-4, as the time line says
    assert footprint.startswith("footprint: 3.52e-4 GPU-hours, $7.04e-4 at $2/GPU-hour"), footprint
