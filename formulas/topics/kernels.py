"""Per-op times with a floor and a shape-dependent efficiency, fitted per GPU on measured kernels.

Each op a step runs is one kernel (or one collective) whose time has a floor it never goes below and rises to the
roofline it approaches (Williams et al. 2009), compute and memory traffic *overlapped* inside the kernel (the
larger of the two, not their sum). The constants are fitted per GPU on the measured per-op tables of NVIDIA's
AIConfigurator (``aiconfigurator-core`` 0.12.0 on PyPI, Apache-2.0: TensorRT-LLM's GEMM, context and generation
attention and quantize tables, NCCL's and TensorRT-LLM's all-reduce) by ``render/numeric/kernel_calibrate.py``,
stored with the table paths and versions and their agreement in ``formulas/data/published/kernel_constants.json``
(formulas/data/kernel_calibration.py reads them):

- **a GEMM** [M, K]·[K, N]: T = τ_mm + max(c·MKN/(X·η_mm), q(MK + KN + MN)/(W_mem·η_mmb)). A few tokens are
  floor-bound (the weights' KN·q bytes take less than τ_mm), then memory-bound, and compute-bound from the
  transition M* where the two terms meet (``perf.op.gemm.transition``), so its efficiency c·MKN/(X·T) tends to
  η_mm as M, N, K grow. FP8 GEMMs add the cast of their 16-bit activation to FP8, one element-wise kernel over
  3q·MK bytes (2q read, q written at q = 1);
- **element-wise work** (a norm, a residual add, SiLU·gate, a cast): T = τ_ew + x/(W_mem·η_ew);
- **decode attention** of b sequences at context s_ctx with g KV heads per GPU (a heads): the cache read
  b·s_ctx·2g·d_head·q_KV over η_da of the HBM bandwidth or the 2c·b·a·s_ctx·d_head FLOPs at η_da^X of peak,
  whichever is longer, plus c_blk per (sequence, KV head) block the kernel schedules and c_pos per position and
  head dimension one block walks serially, above the floor τ_da: few KV heads per GPU leave the bandwidth
  unused (the block term dominates), long contexts of one sequence are serial (the position term);
- **prefill (context) attention**, causal, over s tokens: c·b·a·d_head·s(s + 1) FLOPs (QKᵀ and PV over the
  s(s + 1)/2 pairs the mask keeps) at η_ca of peak, lowered at short prompts by (1 + s_½/s) and by (1 + d_½/d_head):
  the softmax's exponentials and rescaling per score do not shrink with the head dimension the matmuls grow with
  (Shah et al. 2024, FlashAttention-3 §3: the exponentials' throughput bounds the kernel), or the Q, K, V and
  output bytes at η_ca^B of the bandwidth, whichever is longer, plus c_head per (sequence, head) row of tiles,
  above the floor τ_ca;
- **collectives** of x bytes over n GPUs of one NVLink node: α_c + β_c(n − 2) + B + 2√(τ_p·B) with B = f·x/W_bus,
  a latency growing with the GPU count, the bytes at the bus bandwidth W_bus fitted at each n, and the cost of
  pipelining them in segments at the best segment size (k segments cost k·τ_p and fill the pipeline with B/k;
  k = √(B/τ_p) minimises the sum) (nccl-tests' bus bandwidth: f = 2(n − 1)/n for an
  all-reduce, (n − 1)/n for an all-gather, a reduce-scatter and an all-to-all of the whole buffer); a one-shot
  all-reduce (TensorRT-LLM's and vLLM's custom kernel) reads the n − 1 peers' buffers: τ_os + (n − 1)·x/W_os, and
  an engine takes the faster of the two (``perf.op.allreduce.custom``).
"""

from __future__ import annotations

import sympy as sp

from llm_formulas.formulas.vocabulary.catalogue import Condition, Source, formula
from llm_formulas.formulas.topics.performance import NCCL, ROOFLINE, gemm_bytes, gemm_flops
from llm_formulas.formulas.vocabulary.symbols import (
    K_inner, M_rows, N_cols, W_bus, W_mem, W_os, X, a, alpha_c, b, beta_c, c_blk, c_head, c_mac, c_pos, d_half, d_head,
    eta_ca, eta_cab, eta_da, eta_dax, eta_ew, eta_mm, eta_mmb, g, n, q, q_kv, s, s_ctx, s_half, tau_ca, tau_da,
    tau_ew, tau_mm, tau_os, tau_p, x_ew, x_msg,
)

MEASURED = Source("aiconfigurator", "collected per-op latencies (TensorRT-LLM 1.3.0rc20, NCCL 2.29.2 on H100 and H200), "
                  "fitted per GPU by render/numeric/kernel_calibrate.py")
PIPELINE = Source("thakur2005", "§2: the α + nβ cost of a message; a message cut into k segments pays k latencies and "
                  "fills the pipeline with one segment")
SOFTMAX = Source("shah2024", "§3: the softmax's exponentials, at a far lower throughput than the matmuls, bound the "
                 "attention kernel")
ONE_SHOT = Source("vllm", "custom_all_reduce: one-shot all-reduce of small messages over NVLink")
OVERLAP = Condition("one kernel: its compute and its memory traffic overlap (the roofline's max), its floor adds")
NODE = Condition("n ≥ 2 GPUs of one NVLink node (fitted at n = 2, 4 and 8, the tables' range)", sp.StrictGreaterThan(n, 1))
GROUPED = Condition("grouped-query attention, g < a ≤ 32g (the rows fitted: TensorRT-LLM's XQA kernel; multi-head "
                    "attention and groups above 32 take other kernels)", sp.StrictGreaterThan(a, g))
CAST = Condition("q = 1 byte: FP8 operands, the activation arriving in 16 bits")

# --- one GEMM ----------------------------------------------------------------------------------------------
gemm_compute = formula(
    "perf.op.gemm.compute",
    gemm_flops / (X * eta_mm),
    "second",
    "a GEMM kernel's compute time: its 2MKN FLOPs at the fraction η_mm of peak a compute-bound kernel sustains",
    sources=[ROOFLINE, MEASURED],
    symbol_latex=r"T_{mm}^{X}",
)
gemm_memory = formula(
    "perf.op.gemm.memory",
    gemm_bytes / (W_mem * eta_mmb),
    "second",
    "a GEMM kernel's memory time: A and B read and C written once at the fraction η_mm^B of the HBM bandwidth",
    sources=[ROOFLINE, MEASURED],
    symbol_latex=r"T_{mm}^{B}",
)
gemm_time = formula(
    "perf.op.gemm.time",
    tau_mm + sp.Max(gemm_compute.part, gemm_memory.part),
    "second",
    "time of one [M,K]·[K,N] GEMM kernel: its floor, then the larger of its compute and memory time (fitted per GPU "
    "on measured kernels)",
    sources=[ROOFLINE, MEASURED],
    conditions=[OVERLAP],
    related=["perf.gemm.time", "perf.op.gemm.transition"],
    symbol_latex=r"T_{mm}",
)
gemm_transition = formula(
    "perf.op.gemm.transition",
    q * K_inner * N_cols * X * eta_mm / (c_mac * K_inner * N_cols * W_mem * eta_mmb - q * (K_inner + N_cols) * X * eta_mm),
    "1",
    "rows M* at which a GEMM turns from memory-bound to compute-bound: its compute time equals its memory time",
    sources=[ROOFLINE],
    conditions=[Condition("the weight alone is compute-bound: c·KN·W_mem·η_mm^B > q(K + N)·X·η_mm",
                          sp.StrictGreaterThan(W_mem, q * (K_inner + N_cols) * X * eta_mm / (c_mac * K_inner * N_cols * eta_mmb)))],
    related=["perf.op.gemm.time"],
    symbol_latex=r"M^{*}",
)

# --- element-wise work -------------------------------------------------------------------------------------
elementwise = formula(
    "perf.op.elementwise.time",
    tau_ew + x_ew / (W_mem * eta_ew),
    "second",
    "time of one element-wise kernel moving x bytes: its floor plus the bytes at the fraction η_ew of the HBM bandwidth",
    sources=[ROOFLINE, MEASURED],
    symbol_latex=r"T_{ew}",
)
gemm_fp8 = formula(
    "perf.op.gemm.fp8.time",
    gemm_time.part + elementwise.at(x_ew=3 * q * M_rows * K_inner),
    "second",
    "time of one FP8 GEMM: the kernel at FP8 peak and operands, after the cast of its 16-bit activation to FP8 "
    "(an element-wise kernel reading 2q and writing q bytes per element)",
    sources=[ROOFLINE, MEASURED],
    conditions=[OVERLAP, CAST],
    related=["perf.op.gemm.time", "perf.op.elementwise.time"],
    symbol_latex=r"T_{mm}^{fp8}",
)

# --- attention ---------------------------------------------------------------------------------------------
decode_attention = formula(
    "perf.op.attention.decode.time",
    tau_da + sp.Max(b * s_ctx * 2 * g * d_head * q_kv / (W_mem * eta_da), 2 * c_mac * b * a * s_ctx * d_head / (X * eta_dax))
    + c_blk * b * g + c_pos * s_ctx * d_head,
    "second",
    "time of one decode-attention kernel over b sequences at context s_ctx with g KV heads per GPU: the cache read or "
    "the FLOPs, whichever is longer, plus a cost per (sequence, KV head) block and per position one block walks, "
    "above its floor",
    sources=[ROOFLINE, MEASURED],
    conditions=[OVERLAP, GROUPED],
    symbol_latex=r"T_{da}",
)
prefill_attention = formula(
    "perf.op.attention.prefill.time",
    tau_ca + sp.Max(c_mac * b * a * d_head * s * (s + 1) / (X * eta_ca) * (1 + s_half / s) * (1 + d_half / d_head),
                    q * b * s * 2 * (a + g) * d_head / (W_mem * eta_cab))
    + c_head * b * a,
    "second",
    "time of one causal prefill-attention kernel over b prompts of s tokens: its s(s + 1)/2 pairs' FLOPs at η_ca of "
    "peak (lowered by 1 + s_½/s at short prompts and by 1 + d_½/d_head for the softmax's work per score) or its Q, K, "
    "V and output bytes, whichever is longer, plus a cost "
    "per (sequence, head) row of tiles, above its floor",
    sources=[ROOFLINE, SOFTMAX, MEASURED],
    conditions=[OVERLAP, GROUPED],
    symbol_latex=r"T_{ca}",
)

# --- collectives -------------------------------------------------------------------------------------------
LATENCY = alpha_c + beta_c * (n - 2)  # the latency at n GPUs: α_c at two, β_c more per further GPU


def streamed(transfer: sp.Expr) -> sp.Expr:
    """A transfer B pipelined in segments at its best segment size: k segments cost k·τ_p and the pipeline's fill one
    segment, B/k; k = √(B/τ_p) minimises k·τ_p + B/k to 2√(τ_p·B)."""
    return transfer + 2 * sp.sqrt(tau_p * transfer)


def _collective(name: str, share: sp.Expr, what: str) -> object:
    return formula(
        f"perf.op.{name}.time",
        LATENCY + streamed(share * x_msg / W_bus),
        "second",
        f"time of one NCCL {what} of x bytes over n GPUs: a latency growing with n, the bytes at the bus bandwidth W_bus "
        "fitted at that GPU count, and the pipeline's cost at its best segment size 2√(τ_p·B)",
        sources=[NCCL, PIPELINE, MEASURED],
        conditions=[NODE],
        symbol_latex=r"T_{" + name.replace("_", r"\_") + "}",
    )


allreduce_ring = _collective("allreduce", 2 * (n - 1) / n, "all-reduce (ring: 2(n − 1)/n of the buffer per GPU)")
allgather = _collective("allgather", (n - 1) / n, "all-gather of a whole buffer ((n − 1)/n of it per GPU)")
reducescatter = _collective("reducescatter", (n - 1) / n, "reduce-scatter of a whole buffer ((n − 1)/n of it per GPU)")
alltoall = _collective("alltoall", (n - 1) / n, "all-to-all of a whole buffer ((n − 1)/n of it leaves each GPU)")
allreduce_oneshot = formula(
    "perf.op.allreduce.oneshot.time",
    tau_os + (n - 1) * x_msg / W_os,
    "second",
    "time of one one-shot all-reduce of x bytes over n GPUs: each reads its n − 1 peers' buffers over NVLink and sums",
    sources=[ONE_SHOT, MEASURED],
    conditions=[NODE],
    symbol_latex=r"T_{AR}^{1}",
)
allreduce_custom = formula(
    "perf.op.allreduce.custom.time",
    sp.Min(allreduce_oneshot.part, allreduce_ring.part),
    "second",
    "time of an engine's all-reduce of x bytes over n GPUs: the one-shot kernel or the ring, whichever is faster "
    "(TensorRT-LLM's and vLLM's custom all-reduce switch by size)",
    sources=[ONE_SHOT, NCCL, MEASURED],
    conditions=[NODE],
    related=["perf.op.allreduce.time", "perf.op.allreduce.oneshot.time"],
    symbol_latex=r"T_{AR}^{eng}",
)
