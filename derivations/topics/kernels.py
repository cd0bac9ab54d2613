"""Proofs of the per-op time formulas (formulas/topics/kernels.py).

Each time is built from its terms and concluded; the claims that make the forms what they are proved as identities:

- a GEMM's transition rows M* solve compute time = memory time, and the time there is the floor plus either one;
- the causal prefill's score pairs are the series 1 + 2 + … + s = s(s + 1)/2;
- a collective's pipeline cost: k segments cost k·τ_p and fill the pipeline with one segment B/k; the derivative
  τ_p − B/k² vanishes at k* = √(B/τ_p), where the sum is 2√(τ_p·B) (the minimum: the second derivative 2B/k³ is
  positive);
- the engine's all-reduce is the one-shot kernel below the size where the two meet and the ring above it.
"""

from __future__ import annotations

import sympy as sp

from llm_formulas.derivations.topics.cluster import solved_for
from llm_formulas.derivations.vocabulary.engine import Derivation
from llm_formulas.formulas.vocabulary.catalogue import get
from llm_formulas.formulas.topics.kernels import LATENCY, MEASURED, ONE_SHOT, PIPELINE, SOFTMAX
from llm_formulas.formulas.topics.performance import NCCL, ROOFLINE, gemm_bytes, gemm_flops
from llm_formulas.formulas.vocabulary.symbols import (
    K_inner, M_rows, W_bus, W_mem, W_os, X, a, b, c_blk, c_head, c_mac, c_pos, d_half, d_head, eta_ca, eta_cab, eta_da,
    eta_dax, eta_ew, eta_mm, eta_mmb, g, n, q, q_kv, s, s_ctx, s_half, tau_ca, tau_da, tau_ew, tau_mm, tau_os, tau_p,
    x_ew, x_msg,
)

_segments = sp.Dummy("k", positive=True)  # segments a pipelined collective cuts its message into, relaxed to a real
_position = sp.Dummy("i", positive=True, integer=True)  # a query's position, summed over


def gemm() -> Derivation:
    d_ = Derivation("perf.op.gemm.time", "One GEMM kernel: a floor, then the larger of compute and memory", (ROOFLINE, MEASURED))
    compute = d_.defines("T_X", gemm_flops / (X * eta_mm), "2MKN FLOPs at the fraction η_mm of peak a compute-bound kernel sustains")
    d_.concludes("perf.op.gemm.compute")
    memory = d_.defines("T_B", gemm_bytes / (W_mem * eta_mmb), "A and B read, C written once, at η_mm^B of the HBM bandwidth")
    d_.concludes("perf.op.gemm.memory")
    d_.defines("T_mm", tau_mm + sp.Max(get("perf.op.gemm.compute").part, get("perf.op.gemm.memory").part),
               "inside one kernel the loads overlap the math: the longer of the two bounds it, the floor (launch, prologue, "
               "epilogue) adds")
    d_.concludes("perf.op.gemm.time")
    gap = d_.defines("T_X − T_B", compute - memory, "compute time less memory time: both affine in M, so their gap is")
    d_.solves("M*", solved_for(gap, sp.Integer(0), M_rows), "SymPy solves T_X(M) = T_B(M) for M: below M* the bytes bound the "
              "kernel, above it the FLOPs", unknown=M_rows, target=sp.Integer(0), of="T_X − T_B")
    d_.concludes("perf.op.gemm.transition")
    return d_


def elementwise() -> Derivation:
    d_ = Derivation("perf.op.elementwise.time", "One element-wise kernel: a floor and its bytes", (ROOFLINE, MEASURED))
    d_.defines("T_ew", tau_ew + x_ew / (W_mem * eta_ew), "no reuse: every byte crosses HBM once, at η_ew of its bandwidth")
    d_.concludes("perf.op.elementwise.time")
    d_.defines("T_cast", get("perf.op.elementwise.time").dimensioned.xreplace({x_ew: 3 * q * M_rows * K_inner}),
               "the cast of the [M, K] activation to FP8: 2q bytes read and q written per element at q = 1")
    d_.defines("T_mm^fp8", get("perf.op.gemm.time").part + get("perf.op.elementwise.time").at(x_ew=3 * q * M_rows * K_inner),
               "the cast runs before the GEMM, which needs its result")
    d_.concludes("perf.op.gemm.fp8.time")
    return d_


def decode_attention() -> Derivation:
    d_ = Derivation("perf.op.attention.decode.time", "One decode-attention kernel", (ROOFLINE, MEASURED))
    read = d_.defines("R_KV", b * s_ctx * 2 * g * d_head * q_kv, "each sequence's keys and values: s_ctx positions of g "
                      "heads of d_head values, q_KV bytes each")
    flops = d_.defines("F", 2 * c_mac * b * a * s_ctx * d_head, "QKᵀ and the scores times V: two products of d_head MACs "
                       "per position and query head")
    d_.defines("T_da", tau_da + sp.Max(read / (W_mem * eta_da), flops / (X * eta_dax)) + c_blk * b * g + c_pos * s_ctx * d_head,
               "the read and the products overlap; each (sequence, KV head) block costs c_blk to schedule and reduce, and "
               "one block walks its positions serially at c_pos per position and head dimension")
    d_.concludes("perf.op.attention.decode.time")
    return d_


def prefill_attention() -> Derivation:
    d_ = Derivation("perf.op.attention.prefill.time", "One causal prefill-attention kernel", (ROOFLINE, SOFTMAX, MEASURED))
    d_.defines("N_pairs", sp.Sum(_position, (_position, 1, s)), "query i attends to the i positions up to itself")
    pairs = d_.equals("N_pairs", s * (s + 1) / 2, "the arithmetic series", aside=True)
    flops = d_.defines("F", 2 * c_mac * b * a * d_head * pairs, "QKᵀ and PV: two products of d_head MACs per pair and head")
    moved = d_.defines("B", q * b * s * 2 * (a + g) * d_head, "Q and the output (a heads), K and V (g heads) cross HBM once")
    d_.defines("T_ca", tau_ca + sp.Max(flops / (X * eta_ca) * (1 + s_half / s) * (1 + d_half / d_head),
                                       moved / (W_mem * eta_cab)) + c_head * b * a,
               "short prompts fill fewer tiles (1 + s_½/s); the softmax's work per score does not grow with d_head "
               "(1 + d_½/d_head); compute and traffic overlap; each (sequence, head) row of tiles costs c_head")
    d_.concludes("perf.op.attention.prefill.time")
    return d_


def collective(name: str, share: sp.Expr) -> Derivation:
    d_ = Derivation(f"perf.op.{name}.time", "One NCCL collective: latency, bytes and the pipeline at its best segment",
                    (NCCL, PIPELINE, MEASURED))
    moved = d_.defines("B", share * x_msg / W_bus, "the bytes each GPU sends at the bus bandwidth fitted at n GPUs")
    d_.defines("T(k)", LATENCY + moved + _segments * tau_p + moved / _segments,
               "the message cut into k segments pays k segment costs and fills the pipeline with one segment, B/k")
    best = LATENCY + moved + 2 * sp.sqrt(tau_p * moved)
    d_.equals("T(k)", best + (sp.sqrt(_segments * tau_p) - sp.sqrt(moved / _segments))**2, "completing the square")
    d_.bounds("T(k*)", best, "k·τ_p + B/k ≥ 2√(τ_p·B) for every k (the arithmetic over the geometric mean), with "
              "equality at k* = √(B/τ_p): NCCL picks its chunk size near there", direction="lower", of="T(k)")
    d_.defines("T", best, "the time at the best segment count")
    d_.concludes(f"perf.op.{name}.time")
    return d_


def oneshot() -> Derivation:
    d_ = Derivation("perf.op.allreduce.oneshot.time", "A one-shot all-reduce, and the engine's choice", (ONE_SHOT, NCCL, MEASURED))
    d_.defines("T_1", tau_os + (n - 1) * x_msg / W_os, "each GPU reads its n − 1 peers' whole buffers over NVLink and sums "
               "them in one kernel: no ring steps, n − 1 times the bytes")
    d_.concludes("perf.op.allreduce.oneshot.time")
    d_.defines("T_AR^eng", sp.Min(get("perf.op.allreduce.oneshot.time").part, get("perf.op.allreduce.time").part),
               "the engine switches to the ring where it is faster (TensorRT-LLM's and vLLM's size thresholds)")
    d_.concludes("perf.op.allreduce.custom.time")
    return d_


DERIVATIONS = (
    gemm, elementwise, decode_attention, prefill_attention,
    lambda: collective("allreduce", 2 * (n - 1) / n),
    lambda: collective("allgather", (n - 1) / n),
    lambda: collective("reducescatter", (n - 1) / n),
    lambda: collective("alltoall", (n - 1) / n),
    oneshot,
)
