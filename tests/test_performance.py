"""The predicted step time: calibration on Megatron-LM 2021 Table 1, validation on other publications,
MFU as an output of ``estimate`` and ``plan``, ``plan --explain``, and the proofs that decide rankings.

Expected values are the publications' printed figures (formulas/published/*.json, each with its
source) or hand arithmetic written out here; the model's constants are never fitted on the
validation runs."""

from fractions import Fraction
from statistics import median

import numpy as np
import pytest
import sympy as sp

from derivations.catalogue import derivation_of
from formulas.calibration import a100, efficiency
from formulas.estimate import Inputs
from formulas.gpus import NODE_SIZE, gpu
from render.numeric.calibrate import calibration_runs, errors, fit, other_runs
from render.numeric.plan import evaluate, shapes
from helpers import cli_json, run, value

TABLE1_MEDIAN, TABLE1_MAX = 0.05, 0.10  # issue 16's "done when"
OTHERS_MEDIAN, OTHERS_MAX = 0.10, 0.20


# --- calibration and validation ------------------------------------------------------
def test_table1_is_reproduced_by_the_calibrated_constants():
    # Narayanan et al. 2021 Table 1: 137, 138, 142, 135, 138, 140, 148, 155, 163, 163 TFLOP/s per GPU
    runs = calibration_runs()
    assert [run.published for run in runs] == [137, 138, 142, 135, 138, 140, 148, 155, 163, 163]
    error = np.abs(errors(runs, a100()))
    assert median(error) <= TABLE1_MEDIAN and error.max() <= TABLE1_MAX, error


def test_the_stored_constants_are_what_the_fit_finds():
    refit = fit()
    stored = a100()
    for name in ("eta_gemm", "eta_mem", "tau_k", "eta_link"):
        assert float(getattr(refit, name)) == pytest.approx(float(getattr(stored, name)), rel=1e-9, abs=1e-12), name


MEGATRON_FRAMEWORK = ("Korthikanti 22B", "Korthikanti 175B", "Korthikanti 530B", "Korthikanti 1T", "BLOOM-176B")


def test_runs_of_other_publications_are_predicted_without_refitting():
    runs = other_runs()
    assert len(runs) >= 8
    error = dict(zip((run.name for run in runs), np.abs(errors(runs, a100()))))
    # Megatron-LM's own code (Korthikanti et al. 2022) and Megatron-DeepSpeed (BLOOM): within 10 % each
    for name in MEGATRON_FRAMEWORK:
        assert error[name] <= OTHERS_MEDIAN, (name, error[name])
    assert median(error.values()) <= OTHERS_MEDIAN
    # MT-NLG (Smith et al. 2022) ran the same 530B model on DeepSpeed's pipeline engine at 113-126 TFLOP/s where
    # Megatron-LM's Table 1 reached 163: the model, calibrated on Megatron-LM, predicts it 23-30 % too fast. This
    # is a known gap (the implementation, not the layout), asserted so that it cannot silently grow.
    for name in ("MT-NLG 530B, 280 nodes", "MT-NLG 530B, 350 nodes", "MT-NLG 530B, 420 nodes"):
        assert OTHERS_MAX < error[name] < 0.30, (name, error[name])


def test_mtnlg_throughput_falls_as_data_parallelism_grows():
    # Smith et al. 2022: 126 > 121 > 113 TFLOP/s on 280, 350, 420 nodes (fewer micro-batches, a larger bubble)
    runs = [run for run in other_runs() if run.name.startswith("MT-NLG")]
    from render.numeric.calibrate import predicted
    values = [float(predicted(run, a100())) for run in runs]
    assert values[0] > values[1] > values[2]


# --- MFU is an output -----------------------------------------------------------------
ONE_T = ["--model", "megatron-1t", "--gpu", "a100-80gb", "--tp", "8", "--pp", "64", "--dp", "6", "--global-batch", "3072",
         "--seq", "2048", "--recompute", "full"]


def test_estimate_predicts_mfu_and_hfu_without_mfu(capsys):
    report = cli_json(capsys, "estimate", *ONE_T)
    time = report["time"]
    assert time["mode"] == "predicted" and report["assumptions"]["mode"] == "predicted"
    # Table 1's 1T row: 163 TFLOP/s per GPU by Eq. 3 (recompute counted) = 52 % of 312: HFU within 5 % of it
    assert time["hfu"] == pytest.approx(163 / 312, rel=0.05)
    assert time["mfu"] < time["hfu"]  # the recomputed forward counts for HFU only
    parts = time["predicted"]
    total = sum(parts[name] for name in ("compute_seconds", "tp_seconds", "pp_seconds", "bubble_seconds",
                                         "dp_exposed_seconds", "optimizer_seconds"))
    assert total == pytest.approx(time["step_seconds"], rel=1e-12)
    # the 1F1B bubble: (p − 1)/v slots of one micro-batch, against m = 512 slots
    assert parts["bubble_seconds"] / (parts["compute_seconds"] + parts["tp_seconds"] + parts["pp_seconds"]) == pytest.approx(63 / 512)


def test_mfu_given_overrides_and_says_so(capsys):
    report = cli_json(capsys, "estimate", *ONE_T, "--mfu", "0.5")
    assert report["time"]["mode"] == "given" and report["time"]["mfu"] == 0.5 and "step_seconds" in report["time"]
    code, out, _ = run(capsys, "estimate", *ONE_T, "--mfu", "0.5")
    assert code == 0 and "MFU given: U = 0.500" in out
    code, out, _ = run(capsys, "estimate", *ONE_T)
    assert code == 0 and "MFU predicted" in out and "calibrated on Megatron-LM 2021 Table 1" in out


def test_a_gpu_without_constants_is_refused_in_predicted_mode(capsys):
    argv = ["estimate", "--model", "llama2-7b", "--gpu", "rtx4090", "--seq", "2048"]
    code, out, err = run(capsys, *argv)
    assert code == 2 and out == "" and err.count("\n") == 1 and "--mfu" in err and "rtx4090" in err
    code, _, _ = run(capsys, *argv, "--mfu", "0.3")
    assert code == 0


def test_hopper_constants_are_derived_and_say_so(capsys):
    report = cli_json(capsys, "estimate", "--model", "llama2-7b", "--gpu", "h100-sxm", "--seq", "4096", "--tp", "8")
    assert "derived from the datasheet" in report["assumptions"]["constants"]["provenance"]
    assert efficiency("h100-sxm").eta_gemm == a100().eta_gemm


# --- the model's parts, by hand ---------------------------------------------------------
def test_gemm_efficiency_falls_for_skinny_gemms():
    constants = a100().values()
    a100_80 = gpu("a100-80gb").inputs()
    square = value("perf.gemm.efficiency", M_rows=8192, K_inner=8192, N_cols=8192, q=2, **constants, **a100_80)
    # by hand: 2·8192³ FLOPs at η_gemm·312 TFLOP/s, 2·3·8192² bytes at η_mem·2039 GB/s (τ_k = 0 here)
    flops, bytes_ = 2 * 8192**3, 2 * 3 * 8192**2
    seconds = Fraction(flops) / (312 * 10**12 * Fraction(a100().eta_gemm)) + Fraction(bytes_) / (2039 * 10**9 * Fraction(a100().eta_mem))
    assert square == sp.Rational(Fraction(flops) / (312 * 10**12 * seconds))
    skinny = value("perf.gemm.efficiency", M_rows=8192, K_inner=8192, N_cols=16, q=2, **constants, **a100_80)
    assert skinny < square / 4  # N = 16: about 16 FLOPs per byte, under the A100's ridge point of ~150


def test_zero_traffic_grows_with_micro_batches():
    common = dict(P=10**12, q_w=2, t=8, p=1, d=384)
    shard = Fraction(10**12 * 2, 8)  # Ψ·2 bytes over t·p
    for m in (8, 16):
        # ZeRO-3: two weight all-gathers and a gradient reduce-scatter per micro-batch, (d−1)/d of the shard each
        assert value("perf.zero.stage3.sent", m=m, **common) == 3 * m * Fraction(383, 384) * shard
        # ZeRO-2: a reduce-scatter per micro-batch and one all-gather; ZeRO-1 once per iteration
        assert value("perf.zero.stage2.sent", m=m, **common) == (m + 1) * Fraction(383, 384) * shard
        assert value("perf.zero.stage1.sent", m=m, **common) == 2 * Fraction(383, 384) * shard


@pytest.mark.parametrize("formula_id", ["perf.pipeline", "perf.zero.stage2.sent", "perf.zero.stage3.sent", "perf.gemm.efficiency",
                                        "perf.dp.allreduce"])
def test_the_ranking_claims_are_proved_in_check(formula_id):
    outcomes = derivation_of(formula_id).check()
    assert outcomes and all(outcome.ok for outcome in outcomes), [o.describe() for o in outcomes if not o.ok]
    assert any(outcome.claim in ("equals", "approximates") for outcome in outcomes)


def test_tp_time_is_on_the_critical_path_whatever_the_overlap(capsys):
    # slower NVLink (the A800's 400 GB/s against the A100's 600) adds the extra TP time to the step in full, in
    # every one of the m + (p−1)/v slots; only the DP all-reduce, which hides under the (now longer) backward, shrinks
    base = ["--model", "megatron-1t", "--tp", "8", "--pp", "64", "--dp", "6", "--global-batch", "3072", "--seq", "2048",
            "--recompute", "full"]
    fast, slow = (cli_json(capsys, "estimate", "--gpu", key, *base)["time"] for key in ("a100-80gb", "a800"))
    extra = slow["step_seconds"] - fast["step_seconds"]
    tp_extra = (slow["predicted"]["tp_seconds"] - fast["predicted"]["tp_seconds"]) * (1 + 63 / 512)
    dp_change = slow["predicted"]["dp_exposed_seconds"] - fast["predicted"]["dp_exposed_seconds"]
    assert tp_extra > 0 and dp_change <= 0
    assert extra == pytest.approx(tp_extra + dp_change, rel=1e-9)
    # the TP share: 3 all-reduce pairs per layer (forward, backward, recompute) at 2/3 of the bandwidth → 3/2 the time
    assert slow["predicted"]["tp_seconds"] > 1.4 * fast["predicted"]["tp_seconds"]


# --- plan ranks by predicted time ------------------------------------------------------------
def _predicted_inputs(model):
    return Inputs(model=model, gpu=gpu("a100-80gb").inputs(), network=25 * 10**9, tokens=None, utilization=None,
                  overlap=Fraction(1, 2), efficiency=a100(), node_size=NODE_SIZE["a100-80gb"])


MEGATRON_2021 = {"zero": 0, "recompute": 2, "sequence_parallel": False}  # what the paper's code ran: no ZeRO, full recompute
WITHIN_10 = (0, 1, 5, 6, 7, 8, 9)  # 1.7B, 3.6B, 76.1B, 145.6B, 310.1B, 529.6B, 1T
MID_SIZE = (2, 3, 4)  # 7.5B, 18.4B, 39.1B


def _published_against_best(index: int) -> float:
    """Published (t, p, d) at its best b and v over plan's best, both under Megatron-LM 2021's settings."""
    run = calibration_runs()[index]
    lay = run.layout
    table = evaluate(shapes(run.model, lay.n, lay.global_batch, None), lay.n, lay.s, _predicted_inputs(run.model))
    same = table["fits"] & np.logical_and.reduce([table[name] == value for name, value in MEGATRON_2021.items()])
    published = same & (table["t"] == lay.t) & (table["p"] == lay.p) & (table["d"] == lay.d)
    assert published.any()
    return table["step_seconds"][published].min() / table["step_seconds"][same].min()


@pytest.mark.parametrize("index", WITHIN_10)
def test_table1_published_layout_is_within_10_percent_of_plans_best(index):
    assert _published_against_best(index) <= 1.10


@pytest.mark.parametrize("index", MID_SIZE)
def test_table1_mid_size_layouts_are_not_what_the_model_would_pick(index):
    # For 7.5B-39.1B Table 1 uses t = 4-8 on purpose (weak scaling); the model prefers t = 2 with more data or
    # pipeline parallelism, 12-22 % faster, as the paper's own Figs. 14-15 find data parallelism cheaper than TP
    # when memory allows. Not within the 10 %: asserted so that the gap is seen, not hidden.
    assert 1.10 < _published_against_best(index) < 1.25


def test_one_trillion_plans_first_answer_is_near_the_published_layout(capsys):
    argv = ["plan", "--model", "megatron-1t", "--gpu", "a100-80gb", "--gpus", "3072", "--global-batch", "3072", "--seq", "2048"]
    first = cli_json(capsys, *argv, "--top", "1")["ranked"][0]
    assert first["layout"]["t"] == 8  # TP stays inside the node although t up to 160 is allowed and priced
    explained = cli_json(capsys, *argv, "--explain", "t=8 p=64 d=6 v=2 b=1 zero=1 recompute=selective sp=1")["explain"]
    assert explained["first"]["step_seconds"] == pytest.approx(first["step_seconds"], rel=1e-12)
    assert explained["layout"]["step_seconds"] <= 1.10 * first["step_seconds"]  # Narayanan et al. 2021's t=8, p=64
    assert explained["rank"] > 1 and {term["term"] for term in explained["terms"]} >= {"bubble_seconds", "tp_seconds", "dp_exposed_seconds"}


def test_zero3_is_no_longer_nearly_free(capsys):
    # the former first answer: ZeRO-3, t=8 p=1 d=384, m=8. Its per-micro-batch gathers cross the network
    argv = ["plan", "--model", "megatron-1t", "--gpu", "a100-80gb", "--gpus", "3072", "--global-batch", "3072", "--seq", "2048"]
    explained = cli_json(capsys, *argv, "--explain", "t=8 p=1 d=384 zero=3 recompute=full")["explain"]
    assert explained["terms"][0]["term"] == "dp_exposed_seconds" and explained["rank"] > 100


@pytest.mark.parametrize("layout, message", [
    ("t=7 p=64", "t·p·d"),
    ("t=8 p=64 d=6 zero=4", "zero"),
    ("t=8 p=64 x=1", "key=value"),
    ("t=8 p=1 d=384 zero=3 recompute=none", "does not fit"),
    ("t=3 p=1 d=1024", "attention heads"),
    ("t=8 p=64 d=6 v=4", "layers"),
])
def test_explain_refuses_invalid_or_non_fitting_layouts(capsys, layout, message):
    code, out, err = run(capsys, "plan", "--model", "megatron-1t", "--gpu", "a100-80gb", "--gpus", "3072", "--global-batch", "3072",
                         "--seq", "2048", "--explain", layout)
    assert code == 2 and out == "" and err.count("\n") == 1 and message in err, err


def test_plan_first_answer_equals_estimate_in_predicted_mode(capsys):
    doc = cli_json(capsys, "plan", "--model", "llama2-70b", "--gpu", "a100-80gb", "--gpus", "64", "--global-batch", "64",
                   "--seq", "4096", "--top", "1")
    best = doc["ranked"][0]
    lay = best["layout"]
    report = cli_json(capsys, "estimate", "--model", "llama2-70b", "--gpu", "a100-80gb", "--gpus", "64", "--seq", "4096",
                      "--tp", lay["t"], "--pp", lay["p"], "--dp", lay["d"], "--interleave", lay["v"], "--micro-batch", lay["b"],
                      "--micro-batches", lay["m"], "--zero", lay["zero"], "--recompute", lay["recompute"],
                      *(["--sequence-parallel"] if lay["sequence_parallel"] else []))
    assert best["step_seconds"] == pytest.approx(report["time"]["step_seconds"], rel=1e-9)  # NumPy floats against exact
    assert best["mfu"] == pytest.approx(report["time"]["mfu"], rel=1e-9)
