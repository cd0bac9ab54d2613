"""The per-op time formulas (formulas/topics/kernels.py) and their constants fitted on AIConfigurator's measured tables.

Nothing here needs the wheel: the constants, their provenance and a few dozen measured rows are committed in
formulas/data/published/kernel_constants.json (rows copied from aiconfigurator-core 0.12.0, Apache-2.0, each with its table
path). The fit's agreement over whole tables is printed by tests/benchmarks/bench_kernel_fit.py.
"""

from __future__ import annotations

import statistics
import tomllib
from pathlib import Path

import numpy as np
import pytest
import sympy as sp

from llm_formulas.formulas.vocabulary.catalogue import get
from llm_formulas.formulas.vocabulary.evaluation import evaluate
from llm_formulas.formulas.data.kernel_calibration import NoKernelFit, constants, fitted_op, sample, stored
from llm_formulas.formulas.data.gpu_specs import SPECS

ROOT = Path(__file__).resolve().parents[1]
H100 = SPECS["h100-sxm"]
FITTED = ("h100_sxm", "h200_sxm")
OPS = ("trtllm/gemm.bf16", "trtllm/gemm.fp8", "trtllm/elementwise", "trtllm/attention.decode", "trtllm/attention.prefill",
       "vllm/gemm.bf16", "vllm/attention.decode", "vllm/attention.prefill", "nccl/allreduce", "nccl/allgather",
       "nccl/reducescatter", "nccl/alltoall", "trtllm/allreduce.custom", "vllm/allreduce.custom")


def _at(formula_id: str, values: dict) -> sp.Expr:
    return evaluate(get(formula_id), values)


def _gemm(system: str, m: int, n: int, k: int) -> dict:
    return {**constants(system, "trtllm/gemm.bf16"), "M_rows": m, "N_cols": n, "K_inner": k, "q": 2,
            "X": H100.bf16, "W_mem": H100.memory_bandwidth}


@pytest.mark.parametrize("system", FITTED)
def test_the_committed_constants_load_with_their_tables(system):
    for op in OPS:
        entry = fitted_op(system, op)
        backend, kind = op.split("/")
        # the table it was fitted on, inside the wheel's data folder: <system>/<op>/<backend>/<version>/<file>
        assert entry["table"].startswith(f"{system}/") and f"/{backend}/{entry['version']}/" in entry["table"], op
        assert entry["formula"] == ("perf.op.gemm.time" if kind == "gemm.bf16" else f"perf.op.{kind}.time"), op
        values = constants(system, op, gpus=8)
        assert values and all(v.is_Rational and v > 0 for v in values.values()), op
        assert all(v <= 1 for name, v in values.items() if name.startswith("eta")), op  # fractions of a peak
    assert stored()["source"]["package"] == "aiconfigurator-core" and stored()["source"]["version"] == "0.12.0"
    assert "Apache" in stored()["source"]["license"]


def test_an_op_or_gpu_without_a_fit_is_one_clear_line():
    with pytest.raises(NoKernelFit, match="no kernel fit for 'b200_sxm'") as caught:
        constants("b200_sxm", "trtllm/gemm.bf16")
    assert "\n" not in str(caught.value)
    with pytest.raises(NoKernelFit, match="fitted at 2, 4, 8 GPUs, not at 3"):
        constants("h100_sxm", "nccl/allreduce", gpus=3)


def test_a_small_gemm_is_its_floor_and_a_large_one_reaches_the_roofline():
    floor = constants("h100_sxm", "trtllm/gemm.bf16")["tau_mm"]
    # one token through a 128 × 128 weight: 2·(128 + 16384 + 128) bytes, nanoseconds against a microseconds floor
    assert abs(_at("perf.op.gemm.time", _gemm("h100_sxm", 1, 128, 128)) / floor - 1) < sp.Rational(1, 100)
    big = _gemm("h100_sxm", 65536, 65536, 65536)
    compute = _at("perf.op.gemm.compute", big)
    assert abs(_at("perf.op.gemm.time", big) / compute - 1) < sp.Rational(1, 10**4)
    efficiency = 2 * 65536**3 / (H100.bf16 * _at("perf.op.gemm.time", big))  # → η_mm
    assert abs(efficiency / big["eta_mm"] - 1) < sp.Rational(1, 10**4)


def test_the_gemm_transition_is_where_compute_meets_memory():
    values = _gemm("h100_sxm", 1, 8192, 8192)
    values.pop("M_rows")
    rows = _at("perf.op.gemm.transition", values)
    # by hand: q·K·N·X·η / (2·K·N·W·η_B − q(K + N)·X·η) with the stored constants
    X, W, eta, eta_b = values["X"], values["W_mem"], values["eta_mm"], values["eta_mmb"]
    assert rows == 2 * 8192**2 * X * eta / (2 * 8192**2 * W * eta_b - 2 * 16384 * X * eta)
    assert 100 < rows < 1000  # H100's ridge, about 300 tokens at the fitted fractions
    below, above = int(rows) - 8, int(rows) + 8
    assert _at("perf.op.gemm.memory", {**values, "M_rows": below}) > _at("perf.op.gemm.compute", {**values, "M_rows": below})
    assert _at("perf.op.gemm.memory", {**values, "M_rows": above}) < _at("perf.op.gemm.compute", {**values, "M_rows": above})


def test_collectives_grow_with_gpus_at_small_sizes_and_stream_at_large():
    small = {"x_msg": 1024}
    latency = [_at("perf.op.allreduce.time", {**constants("h100_sxm", "nccl/allreduce", gpus=n), **small, "n": n})
               for n in (2, 4, 8)]
    assert latency[0] < latency[1] < latency[2]
    for n in (2, 4, 8):  # the pipeline's 2√(τ_p·B) over B falls as 1/√x: 6 % at 1 GiB, under 1 % at 64 GiB
        ratios = []
        for huge in (2**30, 2**36):
            values = {**constants("h100_sxm", "nccl/allreduce", gpus=n), "x_msg": huge, "n": n}
            streaming = sp.Rational(2 * (n - 1), n) * huge / values["W_bus"]
            ratios.append(_at("perf.op.allreduce.time", values) / streaming - 1)
        assert 0 < ratios[1] < ratios[0] / 7 and ratios[1] < sp.Rational(1, 50)


def test_the_engine_all_reduce_is_one_shot_when_small_and_the_ring_when_large():
    for n in (2, 8):
        values = {**constants("h100_sxm", "trtllm/allreduce.custom", gpus=n), "n": n}
        small, large = {**values, "x_msg": 4096}, {**values, "x_msg": 2**30}
        assert _at("perf.op.allreduce.custom.time", small) == _at("perf.op.allreduce.oneshot.time", small)
        assert _at("perf.op.allreduce.custom.time", large) == _at("perf.op.allreduce.time", large)
        # the issue's finding: a small one-shot all-reduce is several times faster than NCCL's ring
        assert _at("perf.op.allreduce.time", small) > 2 * _at("perf.op.allreduce.oneshot.time", small)


def test_decode_attention_has_a_floor_and_reaches_the_bandwidth():
    spec = {"X": H100.bf16, "W_mem": H100.memory_bandwidth, "a": 32, "g": 8, "d_head": 128, "q_kv": 2}
    values = {**constants("h100_sxm", "vllm/attention.decode"), **spec}
    tiny = _at("perf.op.attention.decode.time", {**values, "b": 1, "s_ctx": 1})
    assert tiny > values["tau_da"] and tiny < 2 * values["tau_da"]  # a few µs: never the nanoseconds of its bytes
    b, s = 256, 32768  # 256 sequences of 32k tokens: 34 GB of cache, the read dominates
    read = sp.Integer(b * s * 2 * 8 * 128 * 2) / (values["W_mem"] * values["eta_da"])
    assert abs(_at("perf.op.attention.decode.time", {**values, "b": b, "s_ctx": s}) / read - 1) < sp.Rational(1, 20)


def test_prefill_attention_is_quadratic_at_long_prompts():
    spec = {"X": H100.bf16, "W_mem": H100.memory_bandwidth, "a": 32, "g": 8, "d_head": 128, "q": 2, "b": 1}
    values = {**constants("h100_sxm", "trtllm/attention.prefill"), **spec}
    long, longer = (_at("perf.op.attention.prefill.time", {**values, "s": s}) for s in (32768, 65536))
    assert sp.Rational(39, 10) < longer / long < sp.Rational(41, 10)  # twice the prompt, four times the pairs


def test_the_sample_of_measured_rows_is_reproduced_exactly_as_the_formula_states():
    rows = sample()
    assert 30 <= len(rows) <= 120 and {row["system"] for row in rows} >= set(FITTED)
    errors = []
    for row in rows:
        entry = fitted_op(row["system"], row["op"])
        assert row["table"] == entry["table"]
        gpus = int(row["inputs"]["n"]) if "n" in row["inputs"] else None
        values = {**constants(row["system"], row["op"], gpus), **{name: sp.Rational(str(v)) for name, v in row["inputs"].items()}}
        predicted = float(_at(entry["formula"], values))
        error = abs(predicted / row["measured_s"] - 1)
        # each row within the worst error the fit has over its whole table (the benchmark recomputes it from the wheel)
        assert error <= entry["agreement"]["all"]["worst"] + 1e-3, (row, predicted)
        errors.append(error)
    assert statistics.median(errors) < 0.15  # the stated per-op agreement: about 3-13 % median over the tables


def test_the_fit_prices_with_the_catalogue_formula_itself():
    # the calibration evaluates numpy_function(formula): the same expression as the exact evaluation above
    from llm_formulas.render.library import numpy_function

    for row in sample()[:12]:
        entry = fitted_op(row["system"], row["op"])
        gpus = int(row["inputs"]["n"]) if "n" in row["inputs"] else None
        values = {**constants(row["system"], row["op"], gpus, exact=False), **row["inputs"]}
        function = numpy_function(entry["formula"])
        wanted = set(function.__signature__.parameters)
        fast = float(function(**{k: np.float64(v) for k, v in values.items() if k in wanted}))
        exact = float(_at(entry["formula"], {k: sp.Rational(str(v)) for k, v in values.items()}))
        assert fast == pytest.approx(exact, rel=1e-9)


def test_the_kernel_formulas_are_proved_and_their_units_check():
    from llm_formulas.derivations.reports.catalogue import check_slice, topic_formula_ids

    ids = topic_formula_ids("kernels")
    assert {"perf.op.gemm.time", "perf.op.attention.decode.time", "perf.op.allreduce.custom.time"} <= set(ids)
    report = check_slice(ids)
    assert report.ok, [outcome for outcome in report.failed]


def test_the_calibration_extra_is_never_a_run_time_dependency():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert "aiconfigurator-core==0.12.0" in project["optional-dependencies"]["calibration"]
    assert not any("aiconfigurator" in dependency for dependency in project["dependencies"])


def test_the_fitting_script_without_the_wheel_says_how_to_install_it(monkeypatch):
    import sys

    from llm_formulas.render.numeric import kernel_calibrate

    monkeypatch.setitem(sys.modules, "aiconfigurator_core", None)  # an import of it now fails
    with pytest.raises(SystemExit, match=r"pip install 'llm-formulas\[calibration\]'"):
        kernel_calibrate.data_root()


@pytest.mark.parametrize("system", FITTED)
def test_the_stored_fit_meets_the_issues_targets(system):
    # issue 33: every op kind within 10 % median on H100 and H200 (the best engine's kernels of each kind); issue 34:
    # no op kind's median above 20 %. The numbers are the fit's over whole tables, recomputed by bench_kernel_fit.py
    ops = stored()["systems"][system]["ops"]
    by_kind: dict[str, list[float]] = {}
    for key, entry in ops.items():
        median = entry["agreement"]["all"]["median"]
        assert median <= 0.20, key
        by_kind.setdefault(key.split("/")[1], []).append(median)
    assert set(by_kind) >= {"gemm.bf16", "gemm.fp8", "elementwise", "attention.decode", "attention.prefill", "allreduce",
                            "allgather", "reducescatter", "alltoall", "allreduce.custom"}
    assert all(min(medians) <= 0.10 for medians in by_kind.values()), by_kind
