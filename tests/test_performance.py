"""The predicted step time: calibration on Megatron-LM 2021 Table 1, validation on other publications,
MFU as an output of ``estimate`` and ``plan``, ``plan --explain``, and the proofs that decide rankings.

Expected values are the publications' printed figures (formulas/data/published/*.json, each with its
source) or hand arithmetic written out here; the model's constants are never fitted on the
validation runs."""

from dataclasses import replace
from fractions import Fraction
from statistics import median

import numpy as np
import pytest
import sympy as sp

from llm_formulas.derivations.reports.catalogue import derivation_of
from llm_formulas.formulas.data.calibration import a100, efficiency
from llm_formulas.formulas.reports.estimate import Inputs, estimate, layout_violation
from llm_formulas.formulas.data.frameworks import Framework, framework
from llm_formulas.formulas.data.gpus import NODE_SIZE, gpu
from llm_formulas.render.numeric.calibrate import (
    calibration_runs, errors, fit, gpt, inputs_of, layer_runs, layer_summary, layer_times, other_runs, predicted,
)
from llm_formulas.render.numeric.evaluator import NUMPY_OPS, numeric
from llm_formulas.render.numeric.plan import evaluate, shapes
from helpers import cli_json, run, value

TABLE1_MEDIAN, TABLE1_MAX = 0.05, 0.10  # issue 16's "done when"
OTHERS_MEDIAN, OTHERS_MAX = 0.10, 0.20


# --- calibration and validation ------------------------------------------------------
def test_table1_is_reproduced_by_the_calibrated_constants():
    # Narayanan et al. 2021 Table 1: 137, 138, 142, 135, 138, 140, 148, 155, 163, 163 TFLOP/s per GPU
    runs = calibration_runs()
    assert [run.published for run in runs] == [137, 138, 142, 135, 138, 140, 148, 155, 163, 163]
    error = np.abs(errors(runs, a100()))
    assert median(error) <= TABLE1_MEDIAN and error.max() <= TABLE1_MAX, error  # the targets, met
    assert median(error) <= 0.015 and error.max() <= 0.045, error  # what the fit reaches: median 1.0 %, max 4.0 % (39.1B)


def test_table1_runs_as_the_authors_script_ran_it():
    # NVIDIA/Megatron-LM commit de7dc40f88, examples/sc21/run_table_1.sh: --micro-batch-size 16 16 16 8 4 2 2 1 1 1;
    # --num-layers-per-virtual-pipeline-stage 5, 5, 3, 1 for 76B, 145B, 310B, 530B (l/p = 15, 10, 6, 3), unset elsewhere;
    # --DDP-impl torch for the four rows without a pipeline, local for the rest
    runs = calibration_runs()
    assert [run.layout.b for run in runs] == [16, 16, 16, 8, 4, 2, 2, 1, 1, 1]
    assert [run.layout.v for run in runs] == [1, 1, 1, 1, 1, 3, 2, 2, 3, 1]
    assert [run.framework.ovl_dp for run in runs] == [1, 1, 1, 1, 0, 0, 0, 0, 0, 0]  # PyTorch DDP's buckets, or after
    assert all(run.layout.m * run.layout.b * run.layout.d == run.layout.global_batch for run in runs)
    assert all(layout_violation(run.layout, run.model) is None for run in runs)  # m a multiple of p where v > 1


def test_the_stored_constants_are_what_the_fit_finds():
    refit = fit()
    stored = a100()
    for name in ("eta_gemm", "eta_mem", "tau_k", "eta_link"):
        assert float(getattr(refit, name)) == pytest.approx(float(getattr(stored, name)), rel=1e-9, abs=1e-12), name


# |predicted / published − 1| of each validation run with the stored constants, rounded up to the next half percent of
# what the model reaches (render/numeric/calibrate.py --check prints them): never looser than measured
VALIDATION_BOUNDS = {
    "Korthikanti 22B": 0.005,
    "Korthikanti 175B": 0.08,  # −7.9 %
    "Korthikanti 530B": 0.04,
    "Korthikanti 1T": 0.07,  # −6.5 %: run without interleaving (none stated), the model's 12 % bubble
    "Korthikanti 22B, full recompute": 0.06,
    "Korthikanti 175B, full recompute": 0.105,  # +10.3 %
    "Korthikanti 530B, full recompute": 0.07,
    "Korthikanti 1T, full recompute": 0.08,
    "Korthikanti 530B, 8-way DP": 0.015,
    "MT-NLG 530B, 280 nodes": 0.055,  # +5.2 %
    "MT-NLG 530B, 350 nodes": 0.065,  # +6.1 %
    "MT-NLG 530B, 420 nodes": 0.105,  # +10.2 %
    "BLOOM-176B, fastest configuration": 0.035,  # +3.1 %
    "BLOOM-176B, production": 0.075,  # +7.4 %
    "BLOOM-176B, 48 nodes, TP 8 × PP 12": 0.17,  # −16.6 %: TP 8 priced too cheaply against TP 4
    "BLOOM-176B, 48 nodes, TP 4, b = 4": 0.06,  # −5.5 %
    "BLOOM-176B, 24 nodes, TP 4 × PP 12": 0.14,  # −13.9 %
    "BLOOM-176B, 24 nodes, TP 4, b = 1": 0.14,  # −14.0 %
    "BLOOM-176B, 24 nodes, TP 4 × PP 24": 0.06,  # −5.9 %
    "BLOOM-176B, 24 nodes, TP 2 × PP 24": 0.005,  # −0.2 %
    "BLOOM-176B, 36 nodes, TP 4 × PP 36": 0.08,  # −7.7 %
    "BLOOM-176B, 36 nodes, TP 2 × PP 36": 0.01,  # −0.9 %
}


def test_runs_of_other_publications_are_predicted_without_refitting():
    runs = other_runs()
    assert len(runs) >= 8
    # the published figures, from formulas/data/published/validation_runs.json with their sources: Korthikanti et al. 2022
    # Table 5 (MFU 41.5/51.4/56.0/56.3 %; full recompute 1.42/18.13/49.05/94.42 s) and §6.3 (39.15 s at 8-way DP), Smith
    # et al. 2022 §2.4 (126/121/113 TFLOP/s), BigScience 2022 §3.4 (156) and the tr11 chronicles (149.77), the tr11
    # chronicles-prequel's 02-28 sweep of the final shape (121.63 s, 102.27 s) and the reshaping log's runs of the
    # trained checkpoint on 24 and 36 nodes (215.99, 234.72, 220.30, 199.82, 155.71, 141.22 s)
    assert {run.name: run.published for run in runs} == {
        "Korthikanti 22B": 0.415, "Korthikanti 175B": 0.514, "Korthikanti 530B": 0.560, "Korthikanti 1T": 0.563,
        "Korthikanti 22B, full recompute": 1.42, "Korthikanti 175B, full recompute": 18.13,
        "Korthikanti 530B, full recompute": 49.05, "Korthikanti 1T, full recompute": 94.42, "Korthikanti 530B, 8-way DP": 39.15,
        "MT-NLG 530B, 280 nodes": 126, "MT-NLG 530B, 350 nodes": 121, "MT-NLG 530B, 420 nodes": 113,
        "BLOOM-176B, fastest configuration": 156, "BLOOM-176B, production": 149.77,
        "BLOOM-176B, 48 nodes, TP 8 × PP 12": 121.63, "BLOOM-176B, 48 nodes, TP 4, b = 4": 102.27,
        "BLOOM-176B, 24 nodes, TP 4 × PP 12": 215.99, "BLOOM-176B, 24 nodes, TP 4, b = 1": 234.72,
        "BLOOM-176B, 24 nodes, TP 4 × PP 24": 220.30, "BLOOM-176B, 24 nodes, TP 2 × PP 24": 199.82,
        "BLOOM-176B, 36 nodes, TP 4 × PP 36": 155.71, "BLOOM-176B, 36 nodes, TP 2 × PP 36": 141.22}
    error = dict(zip((run.name for run in runs), np.abs(errors(runs, a100()))))
    for name, bound in VALIDATION_BOUNDS.items():
        assert error[name] <= bound, (name, error[name])
    assert median(error.values()) <= OTHERS_MEDIAN  # the median target, met (6.3 %)
    assert median(error.values()) <= 0.065
    assert max(error.values()) <= OTHERS_MAX  # the "none above 20 %", met
    assert max(error.values()) <= 0.17  # the worst, BLOOM-176B at TP 8 × PP 12 on 48 nodes, is −16.6 %


def test_mtnlg_throughput_falls_as_data_parallelism_grows():
    # Smith et al. 2022: 126 > 121 > 113 TFLOP/s on 280, 350, 420 nodes (fewer micro-batches, a larger bubble)
    runs = [run for run in other_runs() if run.name.startswith("MT-NLG")]
    values = [float(predicted(run, a100())) for run in runs]
    assert values[0] > values[1] > values[2]


def test_the_frameworks_of_the_runs_are_the_cited_ones():
    runs = {run.name: run for run in other_runs()}
    # Korthikanti et al. 2022 §6: "the interleaving schedule with three interleaving stages (m = 3) for the 175B and 530B models"
    assert [runs[f"Korthikanti {size}"].layout.v for size in ("22B", "175B", "530B", "1T")] == [1, 3, 3, 1]
    # §6.3: "we do not use any overlapping of gradient all-reduces"; §6.2: the backward overlaps all-reduce with the weight gradient
    assert runs["Korthikanti 530B, 8-way DP"].framework.switches() == {"ovl_dp": 0, "ovl_tp": 1, "p2p_serial": 0,
                                                                        "p2p_grad_whole": 0, "grad_fp32": 0}
    # DeepSpeed's PipelineEngine: blocking, serialised p2p; ReduceGrads after the last micro-batch; no interleaving; until
    # v0.5.4 (commit e2fdd254e, 29 September 2021) is_grad_partitioned = False: MT-NLG's 2021 run sent gradients whole,
    # BLOOM's 2022 run sliced them. Both trained in bf16: DeepSpeed's BF16_Optimizer (#1801, which BLOOM ran) adds every
    # micro-batch's gradients into fp32 ones after its backward (MT-NLG's bf16 branch is not public: assumed the same)
    assert runs["MT-NLG 530B, 280 nodes"].framework.switches() == {"ovl_dp": 0, "ovl_tp": 0, "p2p_serial": 1,
                                                                    "p2p_grad_whole": 1, "grad_fp32": 1}
    assert runs["BLOOM-176B, production"].framework.switches() == {"ovl_dp": 0, "ovl_tp": 0, "p2p_serial": 1,
                                                                    "p2p_grad_whole": 0, "grad_fp32": 1}
    assert not runs["MT-NLG 530B, 280 nodes"].framework.interleaving


def test_a_whole_gradient_costs_its_extra_bytes_over_the_network():
    # DeepSpeed before v0.5.4 (MT-NLG): every TP rank sends its stage's input gradient whole, b·s·h·q = 1·2048·20480·2
    # bytes, where v0.5.4 sends a 1/8 slice and all-gathers it over NVLink. Serialised, the gradient goes twice per
    # micro-batch (in and out), so each micro-batch's p2p grows by 2·(7/8)·bshq/W_net − (7/8)·bshq/W_NVLink, where
    # W_net = 25 GB/s (Smith et al. 2022 §2.3: 8 × 200 Gb/s HDR per DGX) and W_NVLink = 600/2 GB/s, each at η_link
    run = next(run for run in other_runs() if run.name == "MT-NLG 530B, 280 nodes")
    times = {key: estimate(run.layout, inputs_of(replace(run, framework=framework(key)), a100()), numeric,
                           NUMPY_OPS)["time"] for key in ("deepspeed-pipe", "deepspeed-pipe-2021")}
    link = float(a100().eta_link)
    message = 1 * 2048 * 20480 * 2
    per_microbatch = 2 * Fraction(7, 8) * message / (25e9 * link) - Fraction(7, 8) * message / (300e9 * link)
    extra = {name: float(times["deepspeed-pipe-2021"]["predicted"][name]) - float(times["deepspeed-pipe"]["predicted"][name])
             for name in ("pp_seconds", "bubble_seconds", "step_seconds")}
    assert extra["pp_seconds"] == pytest.approx(240 * float(per_microbatch), rel=1e-9)  # m = 1920 / 8
    assert extra["bubble_seconds"] == pytest.approx(34 * float(per_microbatch), rel=1e-9)  # p − 1 = 34 slots
    assert extra["step_seconds"] == pytest.approx(274 * float(per_microbatch), rel=1e-9)


def test_a_whole_gradient_is_priced_for_serialised_p2p_only():
    # perf.pp.p2p adds the two messages of an exchange; batched (Megatron's batch_isend_irecv) they would overlap
    with pytest.raises(ValueError, match="serialised p2p only"):
        Framework("batched-whole", "not a framework", ovl_dp=0, ovl_tp=0, p2p_serial=0, p2p_grad_whole=1)


def test_one_layer_of_the_22b_model_against_korthikanti_table4():
    # Korthikanti et al. 2022 Table 4 (22B, t = 8, b = 4): 19.6, 19.0, 27.2, 20.9, 20.3 ms forward + backward
    rows = layer_summary(a100())
    assert [row["published"] for row in rows] == [19.6, 19.0, 27.2, 20.9, 20.3]
    # measured: +7 to +12 %. The constants are Megatron-LM 2021's (Table 1): the fixed cost per kernel τ_k = 55 µs that
    # its rows need prices 2022's layer high; within the issue's 20 %, not within 5 %
    assert max(abs(row["error"]) for row in rows) <= 0.12, rows
    # §6.2: full recompute costs 39 %, not the expected 33 %, "due to an optimization in the backward pass where we overlap
    # all-reduce communication with the linear weight's gradient computation" (Table 4: 27.2 / 19.6 ms = 1.388): the
    # overlapped model's ratio is nearer it than the blocking model's, whose recompute would cost about a third
    baseline, recomputed = layer_runs()[0], layer_runs()[2]
    ratio = {key: sum(layer_times(replace(recomputed, framework=framework(key)), a100()))
             / sum(layer_times(replace(baseline, framework=framework(key)), a100())) for key in ("megatron-lm-2022", "megatron-lm-2021")}
    assert abs(ratio["megatron-lm-2022"] - 27.2 / 19.6) < abs(ratio["megatron-lm-2021"] - 27.2 / 19.6), ratio


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
    assert code == 0 and "MFU given: U = 50.0% (--mfu)" in out
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
    # by hand: 2·8192³ FLOPs at η_gemm·312 TFLOP/s, 2·3·8192² bytes at η_mem·2039 GB/s, one kernel's τ_k
    flops, bytes_ = 2 * 8192**3, 2 * 3 * 8192**2
    seconds = (Fraction(flops) / (312 * 10**12 * Fraction(a100().eta_gemm)) + Fraction(bytes_) / (2039 * 10**9 * Fraction(a100().eta_mem))
               + Fraction(a100().tau_k))
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
    # every one of the m + (p−1)/v slots (and so does the extra time of the p2p's all-gather over NVLink, Narayanan
    # et al. 2021 §4.1); only the DP all-reduce, which hides under the (now longer) backward, shrinks
    base = ["--model", "megatron-1t", "--tp", "8", "--pp", "64", "--dp", "6", "--global-batch", "3072", "--seq", "2048",
            "--recompute", "full"]
    fast, slow = (cli_json(capsys, "estimate", "--gpu", key, *base)["time"] for key in ("a100-80gb", "a800"))
    extra = slow["step_seconds"] - fast["step_seconds"]
    tp_extra = (slow["predicted"]["tp_seconds"] - fast["predicted"]["tp_seconds"]) * (1 + 63 / 512)
    pp_extra = (slow["predicted"]["pp_seconds"] - fast["predicted"]["pp_seconds"]) * (1 + 63 / 512)
    dp_change = slow["predicted"]["dp_exposed_seconds"] - fast["predicted"]["dp_exposed_seconds"]
    assert tp_extra > 10 * pp_extra > 0 and dp_change <= 0
    assert extra == pytest.approx(tp_extra + pp_extra + dp_change, rel=1e-9)
    # the TP share: 3 all-reduce pairs per layer (forward, backward, recompute) at 2/3 of the bandwidth → 3/2 the time
    assert slow["predicted"]["tp_seconds"] > 1.4 * fast["predicted"]["tp_seconds"]


def test_the_backward_all_reduce_hides_under_the_weight_gradient_in_megatron_2022(capsys):
    # Korthikanti et al. 2022 §6.2: Megatron overlaps the backward all-reduce with the weight-gradient GEMM, so with full
    # recompute 2 of the 3 all-reduce pairs per layer stay exposed (the forward's and the recomputed forward's); at
    # h = 25600, t = 8 each all-reduce is shorter than its weight-gradient GEMM, so the third is hidden whole but for its
    # kernels' fixed cost: by hand, m·(l/p)·2 ring all-reduces of b·s·h·q = 1·2048·25600·2 bytes, 2·(7/8) of it over
    # NVLink's 300 GB/s one way at η_link, leave the step (m = 3072/6 = 512, l/p = 128/64 = 2)
    base = ["estimate", *ONE_T]
    blocking = cli_json(capsys, *base, "--framework", "megatron-lm-2021")["time"]["predicted"]
    overlapped = cli_json(capsys, *base, "--framework", "megatron-lm-2022")["time"]["predicted"]
    ring = 2 * 7 / 8 * 2048 * 25600 * 2 / (300e9 * float(a100().eta_link))
    assert blocking["tp_seconds"] - overlapped["tp_seconds"] == pytest.approx(512 * 2 * 2 * ring, rel=1e-9)
    assert overlapped["compute_seconds"] == pytest.approx(blocking["compute_seconds"], rel=1e-12)


def test_a_framework_without_a_feature_refuses_it(capsys):
    code, out, err = run(capsys, "estimate", *ONE_T, "--interleave", "2", "--framework", "deepspeed-pipe")
    assert code == 2 and out == "" and err.count("\n") == 1 and "interleaved" in err
    # Megatron-LM 2021's training.py: "We only support local DDP with multiple micro-batches" (p > 1 asserts local)
    code, out, err = run(capsys, "estimate", *ONE_T, "--framework", "megatron-lm-2021-torch")
    assert code == 2 and out == "" and err.count("\n") == 1 and "no pipeline parallelism" in err
    # no framework of 2021-2022 had LoRA, and their optimizers' extra states (the fp32 gradient copy, DDP's buckets)
    # are those of full training: a fine-tune under them is refused, not priced as full training
    code, out, err = run(capsys, "estimate", "--model", "llama2-7b", "--gpu", "a100-80gb", "--dp", "8", "--seq", "2048",
                         "--global-batch", "64", "--recompute", "full", "--mfu", "0.4", "--finetune", "lora",
                         "--framework", "megatron-lm-2021-torch")
    assert code == 2 and out == "" and err.count("\n") == 1 and "only under --framework default" in err
    # plan under it keeps p = 1, where 1T cannot fit (at t ≤ 8 each GPU would hold 125B parameters), and says which way
    # out the framework closed
    code, out, _ = run(capsys, "plan", "--model", "megatron-1t", "--gpu", "a100-80gb", "--gpus", "3072", "--global-batch",
                       "3072", "--seq", "2048", "--framework", "megatron-lm-2021-torch")
    assert code == 0 and out.splitlines()[-1] == ("no layout fits: more GPUs, a smaller batch or a GPU with more memory, "
                                                  "or a framework with a pipeline")
    code, out, err = run(capsys, "plan", "--model", "megatron-1t", "--gpu", "a100-80gb", "--gpus", "3072", "--global-batch",
                         "3072", "--seq", "2048", "--framework", "megatron-lm-2021", "--explain", "t=8 p=64 d=6 zero=1 recompute=full")
    assert code == 2 and out == "" and err.count("\n") == 1 and "ZeRO stage 1" in err


# --- plan ranks by predicted time ------------------------------------------------------------
def _predicted_inputs(model, framework_key="default"):
    return Inputs(model=model, gpu=gpu("a100-80gb").inputs(), network=25 * 10**9, tokens=None, utilization=None,
                  overlap=Fraction(1, 2), efficiency=a100(), node_size=NODE_SIZE["a100-80gb"], framework=framework(framework_key))


WITHIN_10 = (0, 1, 2, 5, 6, 7, 8, 9)  # every row but 18.4B and 39.1B
# the published layout's step over plan's best, as measured: 39.1B 1.114; 18.4B 1.105 since issue 25 priced what
# Megatron stores beyond the layers (the first stage's embedding, the last stage's logits and loss, the layer the
# backward rebuilds), 1.089 before it: not within the 10 %, bounded so that the gap cannot widen unseen
MID_SIZE = {3: 1.11, 4: 1.12}


MEGATRON_2021 = ("megatron-lm-2021", "megatron-lm-2021-torch")  # --DDP-impl local, or torch (without a pipeline)


def _best_step(run, key: str, **where) -> float:
    """The fastest fitting layout at full recompute (Table 1's, Eq. 3) with the run's n and B, in one framework (inf when
    none fits: the large rows without a pipeline)."""
    lay = run.layout
    chosen = framework(key)
    table = evaluate(shapes(run.model, lay.n, lay.global_batch, None, framework=chosen), lay.n, lay.s,
                     _predicted_inputs(run.model, key))
    assert set(table["zero"]) == {0} and not table["sequence_parallel"].any()  # the framework's feature set, searched
    keep = table["fits"] & (table["recompute"] == 2)
    for name, wanted in where.items():
        keep &= table[name] == wanted
    return float(table["step_seconds"][keep].min()) if keep.any() else float("inf")


def _published_against_best(index: int) -> float:
    """Published (t, p, d) at its best b and v in the row's framework (the DDP the authors' script gave it) over plan's
    best in Megatron-LM 2021 (either DDP: no ZeRO, no selective recompute, no sequence parallelism, 20 bytes of
    states per parameter at the optimizer step)."""
    run = calibration_runs()[index]
    lay = run.layout
    published = _best_step(run, run.framework.key, t=lay.t, p=lay.p, d=lay.d)
    assert published < float("inf")  # the published layout fits
    return published / min(_best_step(run, key) for key in MEGATRON_2021)


@pytest.mark.parametrize("index", WITHIN_10)
def test_table1_published_layout_is_within_10_percent_of_plans_best(index):
    assert _published_against_best(index) <= 1.10


@pytest.mark.parametrize("index", sorted(MID_SIZE))
def test_table1_mid_size_layouts_are_not_what_the_model_would_pick(index):
    # 39.1B (t=8 p=2, b=4, v=1): Narayanan et al. 2021 §5.1 picked the degrees "using heuristics described in §3", whose
    # Takeaway #1 uses tensor parallelism up to the node (8) before any pipeline. Within the same features the model
    # prefers t = 2 with an 8-stage interleaved pipeline (t=2 p=8 d=32 b=2 v=6), 11.4 % faster than the published degrees
    # at their best b and v: their blocking all-reduces cost 11 % of the step against 2 % at t = 2. The paper's own
    # Figures 14 and 15 measure smaller model-parallel degrees faster when memory allows, and the model ranks both as
    # measured (tests below); on Figure 13's 161B model, where memory forces t·p = 64, its ranking peaks at t = 8 as
    # measured. Of the 11.4 %, 4 points are the calibration's residual on this row (132.5 TFLOP/s predicted against 138
    # published). Not within the 10 %; bounded so that the gap cannot widen unseen.
    assert _published_against_best(index) <= MID_SIZE[index]


def test_table1_7b_under_torch_ddp_is_the_layout_the_authors_ran():
    # Table 1's 7.5B row ran t=4 d=32 b=16 with --DDP-impl torch (examples/sc21/run_table_1.sh). Under that DDP, whose
    # buckets are a second 16-bit copy of the gradients (memory.ddp.buckets, tests/test_ddp_buckets.py), t = 2 holds
    # 3.75B parameters at 22 bytes at the optimizer step, 82.5 GB > 80 GB: it does not fit, and the fastest layout that
    # does is the authors'
    run = calibration_runs()[2]
    lay = run.layout
    chosen = framework("megatron-lm-2021-torch")
    table = evaluate(shapes(run.model, lay.n, lay.global_batch, None, framework=chosen), lay.n, lay.s,
                     _predicted_inputs(run.model, chosen.key))
    full = table["recompute"] == 2
    assert not (table["fits"] & full & (table["t"] == 2)).any()
    best = np.argmin(np.where(table["fits"] & full, table["step_seconds"], np.inf))
    assert (table["t"][best], table["p"][best], table["d"][best], table["b"][best]) == (4, 1, 32, 16)


def _figure_steps(global_batch: int, degree: str, fixed: str) -> list[float]:
    """Figures 14-15's 5.9B GPT on 64 A100s under megatron-lm-2021, b = 1, full recompute, no interleaving, the other
    model-parallel degree 1: the predicted step at degree = 2, 4, 8, 16, 32 (the rest data parallelism)."""
    model = gpt(32, 3840, 32)
    table = evaluate(shapes(model, 64, global_batch, None), 64, 2048, _predicted_inputs(model, "megatron-lm-2021"))
    run = (table["recompute"] == 2) & (table["v"] == 1) & (table["b"] == 1) & (table[fixed] == 1) & table["fits"]
    return [float(table["step_seconds"][run & (table[degree] == value)].min()) for value in (2, 4, 8, 16, 32)]


@pytest.mark.parametrize("global_batch", [32, 128, 512])
def test_tensor_against_data_parallelism_falls_with_t_as_measured(global_batch):
    # Narayanan et al. 2021 §5.4.3, Figure 15: the 5.9B GPT (32 layers, h = 3840, 32 heads) on 64 A100s, (t, d) with
    # t·d = 64 and p = 1; the measured throughput falls as t grows, at every batch size. Settings: the authors' script
    # (commit de7dc40f88, examples/sc21/run_figure_15.sh): micro-batch 1, --checkpoint-activations, --DDP-impl local
    steps = _figure_steps(global_batch, "t", fixed="p")
    assert steps == sorted(steps) and len(set(steps)) == 5, steps


@pytest.mark.parametrize("global_batch", [32, 512])
def test_pipeline_against_data_parallelism_falls_with_p_as_measured(global_batch):
    # Narayanan et al. 2021 §5.4.2, Figure 14: the same 5.9B GPT on 64 A100s, (p, d) with p·d = 64 and t = 1; the measured
    # throughput falls as p grows, at both batch sizes. Settings: examples/sc21/run_figure_14.sh (micro-batch 1,
    # --checkpoint-activations, --DDP-impl local, no interleaving)
    steps = _figure_steps(global_batch, "p", fixed="t")
    assert steps == sorted(steps) and len(set(steps)) == 5, steps


@pytest.mark.parametrize("global_batch", [32, 128])
def test_tensor_against_pipeline_parallelism_peaks_at_the_node_as_measured(global_batch):
    # Narayanan et al. 2021 §5.4.1, Figure 13: the 161B GPT (32 layers, h = 20480, 128 heads) on 64 A100s, (t, p) with
    # t·p = 64, "peak performance is achieved when the tensor-parallel size is equal to 8". The run's settings are the
    # authors' script (NVIDIA/Megatron-LM commit de7dc40f88, examples/sc21/run_figure_13.sh and CONFIG.sh): micro-batch 1,
    # global batch 32 and 128, --checkpoint-activations, --DDP-impl local, no virtual pipeline stages, s = 2048, fp16
    model = gpt(128, 20480, 32)
    table = evaluate(shapes(model, 64, global_batch, None), 64, 2048, _predicted_inputs(model, "megatron-lm-2021"))
    run = (table["recompute"] == 2) & (table["v"] == 1) & (table["b"] == 1) & (table["d"] == 1)
    steps = {int(t): float(table["step_seconds"][run & (table["t"] == t)].min()) for t in (2, 4, 8, 16, 32)}
    assert min(steps, key=steps.get) == 8, steps


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
