"""Proofs of the inference formulas (001).

Latency bounds are bytes over bandwidth and FLOPs over FLOP/s; the balance
batch is obtained by SymPy solving their equality, and lands on the roofline's
ridge point. Pipeline latency adds stage after stage; the largest batch within a
latency budget is solved for. Inference traffic is the forward half of the
training traffic at s = 1 (``comms``). The KV cache's savings are GEMMs
(``flops.gemm``); 001's "16K FLOPs saved per byte" is refuted (8K by its own
figures).
"""

from __future__ import annotations

import sympy as sp

from llm_formulas.derivations.topics.cluster import solved_for
from llm_formulas.derivations.vocabulary.engine import Derivation
from llm_formulas.derivations.topics.flops import gemm
from llm_formulas.formulas.vocabulary.catalogue import get
from llm_formulas.formulas.topics.inference import LI_BOUND, LI_KV, LI_PIPELINE, WILLIAMS
from llm_formulas.formulas.vocabulary.symbols import P, u_seq, W_link, W_mem, X, b, c_step, h, l, n, p, q, q_w, s, tau



LLAMA2_70B_HOP = {h: 8192, q: 2}  # 001's pipeline over Ethernet: LLaMA-2 70B's hidden state in 16-bit values
GIGABIT = 125 * 10**6  # 1 Gbps Ethernet in bytes per second


def _step_flops() -> sp.Basic:
    """FLOPs of one decoding step: b sequences emit one token each, 2Ψ FLOPs a token."""
    return b * c_step * get("flops.inference.per_token").part


def arithmetic_intensity() -> Derivation:
    d = Derivation("inference.arithmetic_intensity", "Arithmetic intensity of a decoding step", (LI_BOUND,))
    work = d.defines("F_step", _step_flops(), "b sequences each emit one token, 2Ψ FLOPs a token")
    read = d.defines("M_step", q_w * P, "every weight is read once per step, whatever b is")
    d.defines("I", sp.Mul(work, sp.Pow(read, -1, evaluate=False), evaluate=False), "FLOPs per byte read: batching is the only way to raise it")
    d.concludes("inference.arithmetic_intensity")
    return d


def roofline() -> Derivation:
    d = Derivation("inference.roofline", "The roofline", (WILLIAMS, LI_BOUND))
    d.defines(
        "X_att",
        sp.Min(X, get("inference.arithmetic_intensity").part * W_mem),
        "a kernel of intensity I cannot exceed the compute roof X nor the I·W_mem that memory can feed",
    )
    d.concludes("inference.roofline")
    return d


def memory_bound() -> Derivation:
    d = Derivation("inference.latency.memory_bound", "Memory-bound step: bytes over bandwidth", (LI_BOUND,))
    share = d.defines("M_GPU", q_w * P / n, "each of n GPUs holds and reads 1/n of the weights")
    d.defines("T_mem", share / W_mem, "at its memory bandwidth")
    d.concludes("inference.latency.memory_bound")
    return d


def compute_bound() -> Derivation:
    d = Derivation("inference.latency.compute_bound", "Compute-bound step: FLOPs over FLOP/s", (LI_BOUND,))
    share = d.defines("F_GPU", _step_flops() / n, "each of n GPUs does 1/n of the step's FLOPs")
    d.defines("T_compute", share / X, "at its peak FLOP/s")
    d.concludes("inference.latency.compute_bound")
    return d


def step_latency() -> Derivation:
    d = Derivation("inference.latency.step", "A step takes the slower of the two", (LI_BOUND, WILLIAMS))
    d.defines(
        "T_step",
        sp.Max(get("inference.latency.memory_bound").part, get("inference.latency.compute_bound").part),
        "reading and computing overlap, so the longer one sets the pace",
    )
    d.concludes("inference.latency.step")
    return d


def balance_batch() -> Derivation:
    d = Derivation("inference.balance_batch", "The balance batch: solve T_mem = T_compute for b", (LI_BOUND,))
    memory = d.defines("T_mem", get("inference.latency.memory_bound").part, "the memory-bound step")
    compute = d.defines("T_compute", get("inference.latency.compute_bound").part, "the compute-bound step, linear in b")
    d.solves("b*", solved_for(compute, memory, b), "SymPy solves T_compute(b) = T_mem for b: Ψ and n cancel", unknown=b, target=memory, of="T_compute")
    d.concludes("inference.balance_batch", of="b*")
    d.defines(
        "I(b*)",
        get("inference.arithmetic_intensity").dimensioned.subs(b, get("inference.balance_batch").part / u_seq),
        "the intensity at that batch",
    )
    d.equals("X/W_mem", X / W_mem, aside=True, why="is the roofline's ridge point X/W_mem: below it memory-bound, above it compute-bound")
    return d


def pipeline_latency() -> Derivation:
    d = Derivation("inference.latency.pipeline", "Pipeline stages add up", (LI_BOUND,))
    stage = d.defines("T_stage", get("inference.latency.memory_bound").dimensioned.subs(n, p), "each of p stages reads its Ψ/p weights")
    d.defines("T_pipe", sp.Mul(p, stage, evaluate=False), "a token passes the stages one after another")
    d.concludes("inference.latency.pipeline")
    d.equals("T_1GPU", get("inference.latency.memory_bound").dimensioned.subs(n, 1), "the latency of one GPU holding everything", of="T_pipe")
    return d


def stage_traffic() -> Derivation:
    d = Derivation("inference.pipeline.stage_traffic", "Traffic at a pipeline boundary", (LI_PIPELINE,))
    traffic = d.defines("V_stage", b * h * q, "each of the b sequences hands the hidden state of its new token (h values) on")
    d.concludes("inference.pipeline.stage_traffic")
    d.refutes(
        "S15b: 5.28 MB at b = 330",
        sp.Rational("5.28e6"),
        "001 multiplies 16 KB (16 384 bytes) by 330 and reads the 5280 KB as 5.28 MB; it is 5 406 720 bytes, 5.41 MB",
        correct=traffic.subs(LLAMA2_70B_HOP | {b: 330}),
        source=LI_PIPELINE,
        unit="byte",
    )
    d.equals(
        "V_PP/2 at s = 1",
        get("comms.pp.per_microbatch").dimensioned.subs(s, 1) / 2,
        "the forward half of training's 2bsh, for the one new token",
        of="V_stage",
    )
    return d


def stage_transfer() -> Derivation:
    d = Derivation("inference.pipeline.transfer_time", "Time of one hop", (LI_PIPELINE,))
    hop = d.defines("T_hop", get("inference.pipeline.stage_traffic").part / W_link, "the boundary's bytes over the link")
    d.concludes("inference.pipeline.transfer_time")
    d.refutes(
        "001: 16 KB over 1 Gbps in 0.25 ms",
        sp.Rational("0.25e-3"),
        "at batch 1, 16 384 bytes over 1 Gbps (125 MB/s) take 0.131 ms, about half the 0.25 ms 001 gives",
        correct=hop.subs(LLAMA2_70B_HOP | {b: 1, W_link: GIGABIT}),
        source=LI_PIPELINE,
        unit="second",
    )
    d.refutes(
        "S15d: 41 ms at b = 330",
        sp.Rational("0.041"),
        "5 406 720 bytes at 10⁹ bit/s (125 MB/s) take 43.25 ms; 001's 41 ms mixes binary and decimal units",
        correct=hop.subs(LLAMA2_70B_HOP | {b: 330, W_link: GIGABIT}),
        source=LI_PIPELINE,
        unit="second",
    )
    return d


def network_latency() -> Derivation:
    d = Derivation("inference.latency.pipeline.network", "Pipeline latency with its network hops", (LI_PIPELINE,))
    compute = d.defines("T_pipe", get("inference.latency.pipeline").part, "the stages' memory-bound compute, in series")
    hops = d.defines("T_net", p * get("inference.pipeline.transfer_time").part, "p hops per token, as 001 counts them (8 cards, 8 transfers)")
    total = d.defines("T", compute + hops, "the hops do not overlap the token's own compute")
    d.concludes("inference.latency.pipeline.network")
    d.refutes(
        "001: 0.33 s, 3 tokens/s",
        sp.Rational(1, 3),
        "001 turns 8 hops of 41 ms (0.33 s) into 3 tokens/s, leaving out the 0.14 s the 8 stages compute; "
        "with it (and 43.25 ms hops) a token takes 0.486 s: 2.06 tokens/s",
        correct=total.subs(LLAMA2_70B_HOP | {b: 330, p: 8, P: 70 * 10**9, q_w: 2, W_mem: 10**12, W_link: GIGABIT}),
        source=LI_PIPELINE,
        unit="second",
    )
    return d


def max_batch() -> Derivation:
    d = Derivation("inference.pipeline.max_batch", "Largest batch within a latency budget: solve T(b) = τ", (LI_PIPELINE,))
    latency = d.defines("T", get("inference.latency.pipeline.network").part, "the per-token latency grows linearly with b")
    largest = d.solves("b_max", solved_for(latency, tau, b), "SymPy solves T(b) = τ for b; every smaller batch meets the budget", unknown=b, target=tau, of="T")
    d.concludes("inference.pipeline.max_batch")
    d.refutes(
        "S15e: batch ≤ 60",
        sp.Integer(60),
        "001 takes 1 Gbps as 128 MB/s and 16 KB as 16 000 bytes; at 125 MB/s and 16 384 bytes, 5 tokens/s "
        "(τ = 0.2 s) allow batch 57.2",
        correct=largest.subs(
            LLAMA2_70B_HOP | {tau: sp.Rational(1, 5), p: 8, P: 70 * 10**9, q_w: 2, W_mem: 10**12, W_link: GIGABIT}
        ),
        source=LI_PIPELINE,
    )
    return d


def tp_traffic() -> Derivation:
    d = Derivation("inference.tp.traffic_per_token", "TP traffic of a decoding step", (LI_PIPELINE,))
    d.defines(
        "V_TP^token",
        get("comms.tp.per_microbatch").dimensioned.subs({s: 1, p: 1}) / 2,
        "training's TP volume with one new token per sequence (s = 1), all layers on the TP group (p = 1), "
        "forward only (2 of the 4 all-reduces)",
    )
    d.concludes("inference.tp.traffic_per_token")
    return d


def kv_flops() -> Derivation:
    d = Derivation("inference.kv_recompute.flops", "What the KV cache saves", (LI_KV,))
    layer = d.defines("F_KV,layer", 2 * gemm(s, h, h), "K = X·W_K and V = X·W_V for the s earlier tokens of one sequence")
    d.defines("F_KV", layer * l * b, "in every layer, for every sequence of the batch")
    d.concludes("inference.kv_recompute.flops")
    at = {h: 8192, s: 4096, l: 80, b: 8, q: 2}
    cache_bytes = 2 * l * h * s * b * q  # 001's KV cache: K and V, l layers, h values per token, q bytes each
    d.refutes(
        "001: 16K FLOPs per byte",
        sp.Integer(16 * 1024),
        "001 says each cached byte saves 16K FLOPs; its own 640 Ti FLOPs over its 80 GiB cache are 8K (c·h/q)",
        correct=(get("inference.kv_recompute.flops").dimensioned / cache_bytes).subs(at),
        source=LI_KV,
    )
    return d


def kv_reads() -> Derivation:
    d = Derivation("inference.kv_recompute.reads", "Weight reads of the K, V recompute", (LI_KV,))
    d.defines("R_token", 2 * h * h, "W_K and W_V, h×h values each, loaded again for every earlier token")
    d.defines("R_KV", 2 * h * h * s * l, "s earlier tokens in l layers (001 counts one sequence)")
    d.concludes("inference.kv_recompute.reads")
    return d


DERIVATIONS = (
    arithmetic_intensity,
    roofline,
    memory_bound,
    compute_bound,
    step_latency,
    balance_batch,
    pipeline_latency,
    stage_traffic,
    stage_transfer,
    network_latency,
    max_batch,
    tp_traffic,
    kv_flops,
    kv_reads,
)
