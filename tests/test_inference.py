"""Inference: latency bounds, the balance batch, pipeline traffic, the KV cache's savings (SOURCES.md S13–S15).

Article figures from 001 (cited per test) sit beside exact figures written out as
arithmetic here; the K, V recompute FLOPs are also measured with PyTorch's
FlopCounterMode on real projections.
"""

import json
from fractions import Fraction

import pytest
import torch
from torch.utils.flop_counter import FlopCounterMode

from llm_formulas.derivations.reports.catalogue import derivation_of
from llm_formulas.formulas.vocabulary.examples import example
from helpers import run, value


# --- latency bounds and the balance batch (S14) ------------------------------------


def test_s14_memory_bound_stage_and_pipeline():
    # 001: 2 bytes × 70G / 8 cards / 1 TB/s = 0.0175 s per card per token; × 8 stages in series = 0.14 s.
    per_stage = Fraction(2 * 70 * 10**9, 8 * 10**12)
    assert example("S14a").exact() == per_stage == Fraction(175, 10000)
    assert example("S14a").claimed == per_stage  # the article's 17.5 ms is exact
    assert example("S14b").exact() == 8 * per_stage == Fraction(14, 100) == example("S14b").claimed


def test_s14_compute_bound_batch_1024():
    # 001: 1024 × 2 × 70G / 8 / 330 TFLOPS = 0.0543 s
    exact = Fraction(1024 * 2 * 70 * 10**9, 8 * 330 * 10**12)
    assert example("S14c").exact() == exact
    assert round(float(exact), 4) == float(example("S14c").claimed) == 0.0543


@pytest.mark.parametrize("case, flops, bandwidth, article", [
    ("S14d", 330 * 10**12, 10**12, 330),                     # RTX 4090: 330 / 1
    ("S14e", 989 * 10**12, Fraction(335, 100) * 10**12, 295),  # H100: 989 / 3.35
])
def test_s14_balance_batch(case, flops, bandwidth, article):
    exact = Fraction(flops) / Fraction(bandwidth)
    assert example(case).exact() == exact
    assert round(exact) == article == example(case).claimed


def test_balance_batch_is_solved_and_is_the_ridge_point():
    derivation = derivation_of("inference.balance_batch")
    outcomes = derivation.check()
    assert all(o.ok for o in outcomes)
    assert "SymPy solves" in derivation.step("b*").why
    assert outcomes[-1].label == "X/W_mem" and outcomes[-1].claim == "equals"


def test_latency_is_the_slower_bound_on_each_side_of_the_balance():
    gpu = dict(q_w=2, P=70 * 10**9, n=8, X=330 * 10**12, W_mem=10**12)
    memory = value("inference.latency.memory_bound", q_w=2, P=70 * 10**9, n=8, W_mem=10**12)
    for batch, bound in ((8, "memory"), (330, "both"), (1024, "compute")):
        compute = value("inference.latency.compute_bound", b=batch, P=70 * 10**9, n=8, X=330 * 10**12)
        step = value("inference.latency.step", b=batch, **gpu)
        assert step == max(memory, compute)
        assert (compute < memory, compute == memory, compute > memory) == (bound == "memory", bound == "both", bound == "compute")
    # the roofline: below the ridge the memory slope, above it the compute roof
    assert value("inference.roofline", b=8, q_w=2, X=330 * 10**12, W_mem=10**12) == 8 * 10**12
    assert value("inference.roofline", b=1024, q_w=2, X=330 * 10**12, W_mem=10**12) == 330 * 10**12
    assert value("inference.arithmetic_intensity", b=128, q_w=2) == 128  # 001: batch 1, 128 tokens → 128 FLOPs per 2-byte load


# --- pipeline inference over slow links (S15) ---------------------------------------


def test_s15_stage_traffic_and_pcie_hop():
    # 001: batch 8 × 8192 × 2 bytes = 128 KB, 4 µs over 32 GB/s PCIe Gen4 x16 (one way).
    assert example("S15a").exact() == 8 * 8192 * 2 == 128 * 1024 == example("S15a").claimed
    hop = Fraction(8 * 8192 * 2, 32 * 10**9)
    assert example("S15c").exact() == hop == Fraction(4096, 10**9)  # 4.096 µs
    assert abs(hop - example("S15c").claimed) / hop < Fraction(3, 100)  # the article's 4 µs


def test_s15_batch_330_over_1gbps_are_slips_of_units():
    # 001: "16 KB × 330 = 5.28 MB ... needs 41 ms" over 1 Gbps.
    exact_bytes = 330 * 8192 * 2
    assert example("S15b").exact() == exact_bytes == 5_406_720  # 5.41 MB, 5.16 MiB
    assert example("S15b").claimed == 5_280_000 and example("S15b").slip
    seconds = Fraction(exact_bytes * 8, 10**9)  # 1 Gbps = 10^9 bit/s
    assert example("S15d").exact() == seconds == Fraction(4325376, 10**8)  # 43.25 ms
    assert example("S15d").claimed == Fraction(41, 1000) and example("S15d").slip
    assert 1 < seconds / example("S15d").claimed < Fraction(11, 10)


def test_s15_largest_batch_for_five_tokens_per_second():
    # 001: 5 tokens/s leaves 200 − 140 = 60 ms for 8 hops: 7.5 ms each, "960 KB" at 1 Gbps → batch ≤ 60.
    budget = Fraction(1, 5) - Fraction(2 * 70 * 10**9, 10**12)
    exact = budget / 8 * 125 * 10**6 / (8192 * 2)
    assert example("S15e").exact() == exact
    assert round(float(exact), 1) == 57.2 and example("S15e").claimed == 60
    # 001's own conventions (1 Gbps = 128 MB/s, 16 KB = 16 000 bytes per token) give its 60 exactly
    assert value("inference.pipeline.max_batch", q_w=2, P=70 * 10**9, W_mem=10**12, tau="0.2", p=8, h=8000, q=2,
                 W_link=128 * 10**6) == 60
    # and the batch that fits the budget meets it exactly
    latency = value("inference.latency.pipeline.network", q_w=2, P=70 * 10**9, W_mem=10**12, p=8, b=exact, h=8192, q=2,
                    W_link=125 * 10**6)
    assert latency == Fraction(1, 5)


def test_inference_traffic_is_the_forward_half_of_training_at_one_token():
    # TP: 2 all-reduces of b·h per layer per token (forward only); PP: b·h per boundary.
    assert value("inference.tp.traffic_per_token", l=80, b=8, h=8192, q=2) == 2 * 80 * 8 * 8192 * 2
    assert value("inference.tp.traffic_per_token", l=80, b=8, h=8192, q=2) * 2 == value(
        "comms.tp.per_microbatch", b=8, s=1, h=8192, q=2, l=80, p=1)
    assert value("inference.pipeline.stage_traffic", b=8, h=8192, q=2) * 2 == value("comms.pp.per_microbatch", b=8, s=1, h=8192, q=2)


# --- what the KV cache saves (S13) ---------------------------------------------------


@pytest.mark.parametrize("b, s, h, l", [(1, 5, 16, 1), (2, 7, 24, 3)])
def test_kv_recompute_flops_match_flop_counter(b, s, h, l):
    projections = torch.nn.ModuleList(torch.nn.Linear(h, h, bias=False) for _ in range(2 * l))  # W_K, W_V per layer
    x = torch.randn(b, s, h)
    with FlopCounterMode(display=False) as counter, torch.no_grad():
        for layer in projections:
            layer(x)
    assert counter.get_total_flops() == value("inference.kv_recompute.flops", b=b, s=s, h=h, l=l)


def test_s13_flops_and_reads():
    # 001: 4096 × 80 × 8 × 4 × 8192 × 8192 = 640 T FLOPs; 4096 × 80 × 2 × 8192 × 8192 = 40 T reads (binary T).
    flops = 4096 * 80 * 8 * 4 * 8192 * 8192
    reads = 4096 * 80 * 2 * 8192 * 8192
    assert example("S13a").exact() == flops == 640 * 2**40 == example("S13a").claimed
    assert example("S13b").exact() == reads == 40 * 2**40 == example("S13b").claimed
    assert round(flops / 1e14, 2) == 7.04  # SOURCES.md: 640 Ti = 7.04e14


def test_s13_sixteen_k_flops_per_byte_is_refuted():
    # 001: "each byte stored saves 16K FLOPs"; its own 640 Ti FLOPs over 80 GiB (2·80·8192·4096·8·2 bytes) are 8K.
    cache = 2 * 80 * 8192 * 4096 * 8 * 2
    assert Fraction(640 * 2**40, cache) == 8192
    refutation = next(o for o in derivation_of("inference.kv_recompute.flops").check() if o.claim == "refutes")
    assert refutation.ok and refutation.lhs == "16384" and refutation.rhs == "8192"


# --- the command line -------------------------------------------------------------------


def test_cli_evaluates_inference_formulas(capsys):
    code, out, err = run(capsys, "eval", "inference.balance_batch", "q_w=2", "X=989e12", "W_mem=3.35e12", "--json")
    assert code == 0 and err == ""
    assert Fraction(json.loads(out)["exact"]) == Fraction(989, Fraction(335, 100))
    code, out, _ = run(capsys, "eval", "inference.latency.memory_bound", "q_w=2", "P=70e9", "n=8", "W_mem=1e12", "--json")
    assert code == 0 and json.loads(out)["exact"] == "7/400" and json.loads(out)["unit"] == "second"


@pytest.mark.parametrize("argv, fragment", [
    (["eval", "inference.latency.memory_bound", "q_w=2", "P=70e9", "W_mem=1e12"], "missing"),
    (["eval", "inference.pipeline.max_batch", "q_w=2", "P=70e9", "W_mem=1e12", "tau=0.1", "p=8", "h=8192", "q=2",
      "W_link=125e6"], "exceeds the compute latency"),
    (["eval", "inference.balance_batch", "q_w=2", "X=989e12", "W_mem=0"], "positive"),
    (["eval", "inference.pipeline.stage_traffic", "b=8.5", "h=8192", "q=2"], "whole number"),
    (["eval", "inference.kv_recompute.reads", "h=8192", "s=4096", "l=80", "c_mac=2"], "unknown symbol"),
    (["eval", "inference.latency.step", "b=1", "q_w=two", "P=7e10", "n=8", "X=3e14", "W_mem=1e12"], "not a number"),
])
def test_cli_bad_input_exits_2(capsys, argv, fragment):
    code, out, err = run(capsys, *argv)
    assert code == 2 and out == ""
    assert fragment in err and err.count("\n") == 1 and "Traceback" not in err
