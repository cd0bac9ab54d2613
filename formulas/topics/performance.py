"""The step time predicted from the layout: a performance model of one training iteration.

Per GPU, per micro-batch, per pipeline stage of l/p layers (Megatron's layout: TP ranks
innermost, then DP, then PP):

- **a GEMM** [M, K]·[K, N] takes c·MKN/(X·η_gemm) + q(MK + KN + MN)/(W_mem·η_mem) + τ_k:
  its FLOPs at the fraction η_gemm of peak that large GEMMs sustain, plus the bytes it must
  move at the sustained HBM bandwidth, plus a fixed per-kernel cost (the roofline of
  Williams, Waterman & Patterson 2009, with compute and memory time added rather than
  overlapped, and NVIDIA's GEMM guide's arithmetic intensity MNK/(MK + KN + MN) against the
  ridge point X/W_mem). Its efficiency, 2MNK/(X·time), is η_gemm for large squarish GEMMs
  and falls for small or skinny ones (``perf.gemm.efficiency``);
- **a layer** under t: the QKV, output and MLP GEMMs with their N or K divided by t; the
  attention core as two batched GEMMs whose s² scores go through HBM, or one fused
  FlashAttention kernel whose backward is 2.5× its forward (Dao 2023); the memory-bound
  element-wise work (two norms, two bias-dropout-adds, the activation, and without flash the
  softmax and its dropout over b·a·s²/t scores) as bytes over η_mem·W_mem, the norms and
  dropouts on s/t tokens under sequence parallelism; the backward moves twice the forward's
  bytes and runs two GEMMs (data and weight gradients) per forward GEMM;
- **TP**: two all-reduces of b·s·h·q bytes in the forward and two in the backward of each
  layer (Shoeybi et al. 2019; with SP a reduce-scatter and an all-gather of the same bytes,
  Korthikanti et al. 2022), 2(t−1)/t of the buffer over the ring's one-way bandwidth (NCCL's
  bus bandwidth), *blocking*: the next GEMM needs the result, so every second is on the
  critical path (``perf.pipeline`` is increasing in it, proved). The backward's two are the
  input-gradient all-reduces of the column-parallel QKV and MLP-up GEMMs; Megatron-LM since
  September 2021 overlaps each with that GEMM's weight-gradient computation (σ_TP^ovl = 1,
  Korthikanti et al. 2022 §6.2: why full recompute costs 39 % rather than 33 %), so only what
  exceeds the weight-gradient GEMM is exposed (``perf.tp.backward``);
- **recompute**: full recompute runs each layer's forward again (its all-reduces too),
  selective recompute the attention core (Korthikanti et al. 2022 §5);
- **logits and loss** on the last stage: the vocabulary-parallel GEMM forward and backward
  and the cross-entropy's passes over fp32 logits;
- **PP**: the activation b·s·h·q/t (Megatron's scatter/gather; DeepSpeed's PartitionedTensor
  does the same) each way per micro-batch per chunk boundary, v boundaries per stage when
  interleaved, then all-gathered over NVLink at the receiver, on the critical path (Narayanan et
  al. 2021 §4.1). Megatron sends and receives in one batched call, so each exchange costs one
  message; DeepSpeed's pipeline engine sends and receives one after the other (σ_P2P^ser = 1):
  two; and until v0.5.4 (September 2021) it sent each gradient whole, b·s·h·q from every TP rank
  with nothing to gather (σ_P2P^grad = 1, ``is_grad_partitioned = False``);
- **the schedule**: m micro-batches through p stages take (m + (p−1)/v) slots of one
  micro-batch's stage time (1F1B and interleaved 1F1B, Narayanan et al. 2021 §2.2);
- **DP**: the gradients Ψ/(t·p)·q_w, all-reduced hierarchically (reduce-scatter inside the
  node, all-reduce across nodes on 1/d_node of the buffer, all-gather inside; Jia et al.
  2018) in buckets overlapped with the last micro-batch's backward (PyTorch DDP, Li et al.
  2020; Megatron's overlap_grad_reduce): only what exceeds that backward is exposed. Megatron-LM
  2021 (its local DDP) and DeepSpeed's pipeline engine all-reduce after the last backward
  instead (σ_DP^ovl = 0): all of it is exposed (Korthikanti et al. 2022 §6 measured +3.5 % for
  that on 530B at d = 8);
- **ZeRO** (Rajbhandari et al. 2020; ZeRO++, Wang et al. 2023; DeepSpeed's ZeRO docs):
  stage 1 reduce-scatters once per iteration (overlapped as DP) and all-gathers the updated
  weights once (exposed); stage 2 keeps only its gradient shard, so it reduce-scatters every
  micro-batch (each overlapped with that micro-batch's backward); stage 3 also all-gathers the
  weights before every micro-batch's forward and again for its backward, prefetched under that
  forward and backward: only what exceeds them is exposed. Their traffic grows with m (proved);
- **the optimizer**: Adam reads and writes 30 bytes per parameter of its shard at η_mem·W_mem.

The four framework switches σ_DP^ovl, σ_TP^ovl, σ_P2P^ser, σ_P2P^grad describe the framework, not
the layout: formulas/data/frameworks.py names them for Megatron-LM 2021 (Narayanan et al.), Megatron-LM
2022 (Korthikanti et al.), DeepSpeed's pipeline engine in 2021 (MT-NLG) and 2022 (BLOOM) and the
default (DP overlapped, TP blocking, batched p2p). The constants η_gemm, η_mem, τ_k and the links'
efficiency are calibrated per GPU (formulas/data/calibration.py) on Megatron-LM 2021 Table 1 and
only there.
"""

from __future__ import annotations

import sympy as sp

from llm_formulas.formulas.vocabulary.catalogue import Condition, Source, formula
from llm_formulas.formulas.vocabulary.symbols import (
    K_inner, M_rows, N_cols, P, W_intra, W_mem, W_net, W_pp, W_tp, X, a, b, c_byte, c_mac, d, d_ff, d_head, d_node,
    eta_gemm, eta_mem, flash, g, gated, grad_fp32, h, l, m, ovl_dp, ovl_tp, p, p2p_grad_whole, p2p_serial, piped, q, q_bf16,
    q_fp32, q_w, rc_full, rc_sel, s, seq_par, t, T_slow, T_stages, tau_bwd, tau_fwd, tau_k, v, V,
)

ROOFLINE = Source("williams2009", "attainable FLOP/s bounded by peak and by arithmetic intensity × memory bandwidth; "
                  "ridge point X/W_mem")
NVIDIA_GEMM = Source("nvidia-gemm", "arithmetic intensity of an M×N×K GEMM 2MNK / 2(MK + NK + MN) against the GPU's "
                     "ops:byte ratio; small and skinny GEMMs are memory- or latency-bound")
SHOEYBI = Source("shoeybi2019", "§3: operators f and g, two all-reduces in the forward and two in the backward of each layer")
NARAYANAN = Source("narayanan2021", "§2.2 1F1B and interleaved schedules, §4.1 scatter/gather of p2p messages, Table 1")
KORTHIKANTI = Source("korthikanti2022", "§4.2.2 sequence parallelism: reduce-scatter + all-gather in place of each "
                     "all-reduce; §5 selective recompute")
FLASH = Source("dao2023", "the scores never reach HBM; the backward runs 5 matmuls to the forward's 2")
NCCL = Source("nccl-tests", "bus bandwidth: all-reduce moves 2(n−1)/n of the buffer per rank, reduce-scatter and "
              "all-gather (n−1)/n")
HIERARCHICAL = Source("jia2018", "hierarchical all-reduce: reduce inside the node, all-reduce across nodes, broadcast inside")
DDP = Source("li2020", "gradient buckets all-reduced while the backward still runs")
ZERO = Source("rajbhandari2020", "§7: stages 1-2 move 2Ψ per step (reduce-scatter + all-gather), stage 3 3Ψ "
              "(an all-gather in forward and backward)")
ZEROPP = Source("wang2023", "§3: ZeRO-3 gathers the weights for the forward and the backward of every micro-step and "
                "reduce-scatters the gradients of every micro-step")
ASYNC_TP = Source("korthikanti2022", "§6.2: the backward overlaps the all-reduce with the linear weight's gradient computation "
                  "(Megatron-LM's LinearWithGradAccumulationAndAsyncAllreduce, since September 2021)")
MEGATRON_2021 = Source("megatron-lm-2021", "megatron/training.py train_step: the local DDP all-reduces the gradients after "
                       "forward_backward_func; megatron/p2p_communication.py: one batch_isend_irecv per exchange")
DEEPSPEED_PIPE = Source("deepspeed-pipe", "deepspeed/runtime/pipe/schedule.py TrainSchedule (1F1B, ReduceGrads last), p2p.py "
                        "(blocking send/recv), engine.py (PartitionedTensor: a 1/t slice, all-gathered on receipt)")
DEEPSPEED_GRAD = Source("deepspeed-pipe", "engine.py until v0.5.4 (commit e2fdd254e, 29 September 2021): "
                        "is_grad_partitioned = False, _exec_send_grads sends each input gradient whole")
BLOOM_STAGES = Source("bigscience2022", "§3.4: 70 blocks and the two embeddings over 12 stages (type:transformer|embedding)")
DEEPSPEED_BF16 = Source("deepspeed-pipe", "bf16+pipeline parallelism (#1801, 19 April 2022): the engine's backward pass "
                        "calls the BF16_Optimizer's update_hp_grads after every micro-batch, which adds each 16-bit gradient "
                        "into its fp32 one")
DEEPSPEED = Source("deepspeed", "overlap_comm, reduce_bucket_size, stage3_prefetch_bucket_size: collectives overlapped "
                   "with compute")

KERNEL = Condition("one kernel per GEMM; compute and memory time add (no overlap inside a kernel)")
LAYOUT = Condition("Megatron's rank order: TP innermost, then DP, then PP")

# --- one GEMM ------------------------------------------------------------------------
HBM = W_mem * eta_mem  # the sustained memory bandwidth
gemm_flops = c_mac * M_rows * K_inner * N_cols
gemm_bytes = q * (M_rows * K_inner + K_inner * N_cols + M_rows * N_cols)
gemm_time = formula(
    "perf.gemm.time",
    gemm_flops / (X * eta_gemm) + gemm_bytes / HBM + tau_k,
    "second",
    "time of one [M,K]·[K,N] GEMM: its FLOPs at η_gemm of peak, its operands' bytes at η_mem of HBM, one kernel's fixed cost",
    sources=[ROOFLINE, NVIDIA_GEMM],
    conditions=[KERNEL],
    symbol_latex=r"T_{GEMM}",
)
gemm_efficiency = formula(
    "perf.gemm.efficiency",
    eta_gemm / (1 + eta_gemm * X * gemm_bytes / (gemm_flops * HBM) + eta_gemm * X * tau_k / gemm_flops),
    "1",
    "fraction of peak one GEMM achieves: η_gemm, lowered by the ridge point over its arithmetic intensity and by the kernel's fixed cost",
    sources=[ROOFLINE, NVIDIA_GEMM],
    conditions=[KERNEL],
    related=["perf.gemm.time"],
    symbol_latex=r"\eta_{GEMM}",
)


def gemm(rows: sp.Expr, inner: sp.Expr, cols: sp.Expr) -> sp.Expr:
    """``perf.gemm.time`` at one shape."""
    return gemm_time.at(M_rows=rows, K_inner=inner, N_cols=cols)


# --- one layer under t, per micro-batch -------------------------------------------------
tokens = b * s
layer_gemms = (gemm(tokens, h, (a + 2 * g) * d_head / t) + gemm(tokens, a * d_head / t, h)
               + gemm(tokens, h, (1 + gated) * d_ff / t) + gemm(tokens, d_ff / t, h))
heads = b * a / t  # attention heads this rank computes, over the micro-batch
scores_bytes = heads * s**2 * (4 * q + c_byte)  # softmax read+write, dropout read+write and its 1-byte mask
attention_unfused = (c_mac * 2 * heads * s**2 * d_head / (X * eta_gemm)
                     + q * heads * 2 * (2 * s * d_head + s**2) / HBM + 2 * tau_k)  # QKᵀ and scores·V as batched GEMMs
attention_flash = c_mac * 2 * heads * s**2 * d_head / (X * eta_gemm) + q * 4 * heads * s * d_head / HBM + tau_k
attention_core = attention_unfused + scores_bytes / HBM + 2 * tau_k  # with the softmax and dropout kernels
attention_backward = (1 - flash) * 2 * attention_core + flash * sp.Rational(5, 2) * attention_flash
recomputed_core = (1 - flash) * attention_core  # what selective recompute repeats (flash recomputes inside its kernel)
attention_forward = (1 - flash) * attention_core + flash * attention_flash
# norms and dropouts see s/t tokens under SP: (t − σ_SP(t − 1))/t, which floats compute exactly (1 − σ + σ/t cancels)
tokens_per_rank = tokens * (t - seq_par * (t - 1)) / t
elementwise_forward = ((tokens_per_rank * h * (10 * q + 2 * c_byte) + (2 + gated) * tokens * d_ff / t * q) / HBM
                       + 5 * tau_k)  # 2 norms (read+write), 2 bias-dropout-adds (read 2, write 1, mask), the activation
ring_allreduce = 2 * (t - 1) / t * tokens * h * q / W_tp  # one all-reduce of b·s·h·q over the TP ring
allreduce_forward = 2 * (ring_allreduce + (1 + seq_par) * tau_k)  # 2 all-reduces (SP: 2 RS + 2 AG)

gemms = formula(
    "perf.layer.gemms",
    layer_gemms,
    "second",
    "one layer's four GEMMs per micro-batch on one GPU under t: QKV [bs, h]·[h, (a + 2g)·d_head/t], the output "
    "projection [bs, a·d_head/t]·[.., h], the MLP's up (and gate) and down with d_ff/t",
    sources=[NVIDIA_GEMM, SHOEYBI],
    conditions=[KERNEL],
    related=["perf.gemm.time"],
    symbol_latex=r"T_{GEMM}^{layer}",
)
eager_core = formula(
    "perf.attention.eager",
    attention_core,
    "second",
    "one layer's attention core without a fused kernel: QKᵀ and scores·V as batched GEMMs, the s² scores written and read "
    "through HBM by the softmax and the dropout (and its 1-byte mask)",
    sources=[KORTHIKANTI],
    conditions=[KERNEL],
    symbol_latex=r"T_{core}",
)
flash_core = formula(
    "perf.attention.flash",
    attention_flash,
    "second",
    "one layer's attention core as one FlashAttention kernel: the QKᵀ and scores·V FLOPs, Q, K, V and the output "
    "through HBM once, no s² scores",
    sources=[FLASH],
    conditions=[KERNEL],
    symbol_latex=r"T_{flash}",
)
elementwise = formula(
    "perf.layer.elementwise",
    elementwise_forward,
    "second",
    "one layer's element-wise kernels: two norms, two bias-dropout-adds (with their masks) and the activation, their "
    "bytes at η_mem of the HBM bandwidth (norms and dropouts over s/t tokens under SP)",
    sources=[KORTHIKANTI],
    symbol_latex=r"T_{elem}",
)
ring = formula(
    "perf.tp.allreduce",
    ring_allreduce,
    "second",
    "one all-reduce of a layer's b·s·h·q output over the t ranks of a TP ring: 2(t − 1)/t of it over each link",
    sources=[SHOEYBI, NCCL],
    symbol_latex=r"T_{AR}",
)
tp_layer = formula(
    "perf.tp.layer",
    2 * (ring.part + (1 + seq_par) * tau_k),
    "second",
    "TP communication of one layer's forward per micro-batch: two all-reduces of b·s·h·q (with SP a reduce-scatter and an "
    "all-gather each), blocking; the backward has as many",
    sources=[SHOEYBI, KORTHIKANTI, NCCL],
    symbol_latex=r"T_{TP}",
)
wgrad_qkv = gemm(tokens, h, (a + 2 * g) * d_head / t)  # the weight gradient of the column-parallel QKV GEMM (same shape's time)
wgrad_up = gemm(tokens, h, (1 + gated) * d_ff / t)  # and of the column-parallel MLP-up GEMM
tp_backward = formula(
    "perf.tp.backward",
    (1 - ovl_tp) * tp_layer.part
    + ovl_tp * (sp.Max(ring.part - wgrad_qkv, 0) + sp.Max(ring.part - wgrad_up, 0) + 2 * (1 + seq_par) * tau_k),
    "second",
    "TP communication of one layer's backward per micro-batch: the two input-gradient all-reduces of the column-parallel "
    "GEMMs, blocking, or (σ_TP^ovl = 1) each overlapped with that GEMM's weight-gradient computation: only what exceeds it is exposed",
    sources=[SHOEYBI, ASYNC_TP, NCCL],
    related=["perf.tp.layer", "perf.gemm.time"],
    symbol_latex=r"T_{TP}^{bwd}",
)
layer_forward = formula(
    "perf.layer.forward",
    gemms.part + (1 - flash) * eager_core.part + flash * flash_core.part + elementwise.part + tp_layer.part,
    "second",
    "one layer's forward per micro-batch on one GPU under t: GEMMs, attention core, element-wise work, TP all-reduces",
    sources=[NVIDIA_GEMM, FLASH, SHOEYBI, KORTHIKANTI],
    conditions=[KERNEL],
    related=["perf.gemm.time", "perf.tp.layer"],
    symbol_latex=r"T_{layer}^{fwd}",
)
layer_backward = formula(
    "perf.layer.backward",
    2 * gemms.part + (1 - flash) * 2 * eager_core.part + flash * sp.Rational(5, 2) * flash_core.part
    + 2 * elementwise.part + tp_backward.part + rc_full * layer_forward.part + rc_sel * (1 - flash) * eager_core.part,
    "second",
    "one layer's backward per micro-batch: two GEMMs per forward GEMM, the attention backward, twice the element-wise bytes, "
    "the two input-gradient all-reduces (blocking or overlapped), and the forward that recompute repeats (all of it, "
    "all-reduces included, or the attention core)",
    sources=[NVIDIA_GEMM, FLASH, KORTHIKANTI, ASYNC_TP],
    conditions=[KERNEL],
    related=["perf.layer.forward", "perf.tp.backward"],
    symbol_latex=r"T_{layer}^{bwd}",
)
logits_time = formula(
    "perf.logits",
    3 * gemm(tokens, h, V / t) + 5 * tokens * V / t * 2 * q / HBM,
    "second",
    "logits and loss per micro-batch on the last stage: the vocabulary-parallel GEMM forward and its two backward GEMMs, "
    "five passes of the cross-entropy over fp32 logits",
    sources=[SHOEYBI, NVIDIA_GEMM],
    symbol_latex=r"T_{logits}",
)
p2p_message = tokens * h * q / (t * W_pp) + tau_k  # one 1/t slice over the stage boundary (scatter/gather)
p2p_gather = (t - 1) / t * tokens * h * q / W_intra  # the receiver's all-gather of the slices over NVLink
grad_message = tokens * h * q * (1 + p2p_grad_whole * (t - 1)) / (t * W_pp) + tau_k  # the gradient: a slice, or whole
grad_gather = (1 - p2p_grad_whole) * p2p_gather  # a whole gradient needs no gather
p2p_time = formula(
    "perf.pp.p2p",
    piped * v * ((1 + p2p_serial) * (p2p_message + grad_message) + p2p_gather + grad_gather),
    "second",
    "PP point-to-point per micro-batch per stage, at each of v chunk boundaries: two exchanges, each an activation going "
    "forward and a gradient going back, as b·s·h·q/t slices sent and received at once (Megatron) or one after the other "
    "(σ_P2P^ser = 1, DeepSpeed) and all-gathered over NVLink; DeepSpeed before v0.5.4 sent the gradient whole "
    "(σ_P2P^grad = 1)",
    sources=[NARAYANAN, MEGATRON_2021, DEEPSPEED_PIPE, DEEPSPEED_GRAD],
    conditions=[Condition("σ_P2P^grad = 1 only with σ_P2P^ser = 1: batched (σ_P2P^ser = 0), an exchange would last as long "
                          "as its longer message, not the sum of both")],
    symbol_latex=r"T_{P2P}",
)
FP32_ACCUMULATE_BYTES = q_bf16 + 4 * q_fp32  # the 16-bit gradient read (2), its fp32 copy written and read (8), fp32 read and written (8)
accumulate_time = formula(
    "perf.grad.accumulate_fp32",
    grad_fp32 * FP32_ACCUMULATE_BYTES * P / (t * p) / HBM,
    "second",
    "per micro-batch, the stage's Ψ/(t·p) 16-bit gradients added into fp32 ones, hp_grad.add_(lp.grad.to(float32)): "
    "18 bytes per parameter through HBM, on the compute stream (σ_acc^fp32 = 1: DeepSpeed's BF16_Optimizer, whose "
    "pipeline engine calls update_hp_grads after every backward pass); a lower bound: the per-tensor kernel launches "
    "and any zeroing of the 16-bit gradients before the next backward are left out",
    sources=[DEEPSPEED_BF16],
    symbol_latex=r"T_{acc}^{fp32}",
)
stage_time = formula(
    "perf.stage.microbatch",
    l / p * (layer_forward.part + layer_backward.part) + logits_time.part + p2p_time.part + accumulate_time.part,
    "second",
    "one micro-batch's forward and backward on the slowest (last) stage: its l/p layers, the logits, the p2p messages and "
    "any fp32 gradient accumulation",
    sources=[NARAYANAN],
    conditions=[Condition("p·v divides l; the last stage, which also holds the logits, is the slowest")],
    related=["perf.layer.forward", "perf.layer.backward", "perf.logits", "perf.pp.p2p", "perf.grad.accumulate_fp32"],
    symbol_latex=r"T_{mb}",
)
pipeline_time = formula(
    "perf.pipeline",
    (m + (p - 1) / v) * stage_time.part,
    "second",
    "m micro-batches through p stages (1F1B, interleaved with v chunks): m + (p−1)/v slots of one micro-batch's stage time",
    sources=[NARAYANAN],
    related=["cluster.bubble.interleaved", "perf.stage.microbatch"],
    symbol_latex=r"T_{pipe}",
)
pipeline_uneven = formula(
    "perf.pipeline.uneven",
    (m - 1) * T_slow + T_stages,
    "second",
    "m micro-batches through p uneven stages (1F1B, v = 1): the first crosses every stage (the sum of their micro-batch "
    "times), each of the other m − 1 leaves at the slowest stage's pace",
    sources=[NARAYANAN, BLOOM_STAGES],
    conditions=[Condition("v = 1: an explicit partition is not interleaved")],
    related=["perf.pipeline", "pipeline.bubble.uneven"],
    symbol_latex=r"T_{pipe}^{uneven}",
)

# --- data parallelism and ZeRO ------------------------------------------------------------
shard = P * q_w / (t * p)  # this rank's gradient (or weight) bytes
nodes = d / d_node
allreduce_dp = formula(
    "perf.dp.allreduce",
    2 * (d_node - 1) / d_node * shard / W_intra + 2 * (nodes - 1) / nodes * shard / (d_node * W_net),
    "second",
    "hierarchical all-reduce of a rank's gradients: reduce-scatter and all-gather inside the node over NVLink, "
    "all-reduce of 1/d_node of the buffer across the d/d_node nodes",
    sources=[HIERARCHICAL, NCCL],
    conditions=[LAYOUT, Condition("d_node divides d")],
    symbol_latex=r"T_{DP}",
)
window_forward = formula(
    "perf.window.forward",
    l / p * layer_forward.part,
    "second",
    "one micro-batch's forward on one stage: the compute a prefetched all-gather hides under",
    sources=[DEEPSPEED],
    related=["perf.layer.forward"],
    symbol_latex=r"\tau_{fwd}",
)
window_backward = formula(
    "perf.window.backward",
    l / p * layer_backward.part,
    "second",
    "one micro-batch's backward on one stage: the compute bucketed gradient collectives hide under",
    sources=[DDP, DEEPSPEED],
    related=["perf.layer.backward"],
    symbol_latex=r"\tau_{bwd}",
)
forward_window, backward_window = tau_fwd, tau_bwd  # the ZeRO formulas take the windows as inputs
half = allreduce_dp.part / 2  # a reduce-scatter or an all-gather: half an all-reduce's bytes


def _exposed(comm: sp.Expr, window: sp.Expr) -> sp.Expr:
    """What of ``comm`` does not hide under ``window``: max(comm − window, 0) (a zero has every unit)."""
    return sp.Max(comm - window, 0)


def _reduced(comm: sp.Expr, window: sp.Expr) -> sp.Expr:
    """A gradient reduction: bucketed under the last backward (σ_DP^ovl = 1), or all of it after the backward (0)."""
    return ovl_dp * _exposed(comm, window) + (1 - ovl_dp) * comm


zero_exposed = {
    0: formula("perf.zero.stage0.exposed", _reduced(allreduce_dp.part, backward_window), "second",
               "exposed DP time without ZeRO: the bucketed all-reduce beyond the last micro-batch's backward (σ_DP^ovl = 1), "
               "or all of it after the backward (0: Megatron-LM 2021, DeepSpeed's pipeline engine)",
               sources=[DDP, HIERARCHICAL, MEGATRON_2021, DEEPSPEED_PIPE], related=["perf.dp.allreduce"], symbol_latex=r"T_{DP}^{exp}"),
    1: formula("perf.zero.stage1.exposed", _reduced(half, backward_window) + half, "second",
               "exposed ZeRO-1 time: the gradient reduce-scatter beyond the last backward (σ_DP^ovl = 1) or all of it (0), then "
               "the weights' all-gather, once per iteration",
               sources=[ZERO, DDP, DEEPSPEED_PIPE], related=["perf.dp.allreduce"], symbol_latex=r"T_{Z1}^{exp}"),
    2: formula("perf.zero.stage2.exposed", m * _exposed(half, backward_window) + half, "second",
               "exposed ZeRO-2 time: a gradient reduce-scatter per micro-batch beyond its backward, the weights' all-gather once",
               sources=[ZERO, ZEROPP, DEEPSPEED], related=["perf.dp.allreduce"], symbol_latex=r"T_{Z2}^{exp}"),
    3: formula("perf.zero.stage3.exposed", m * (_exposed(half, forward_window) + _exposed(2 * half, backward_window)), "second",
               "exposed ZeRO-3 time: per micro-batch, the weights' all-gather beyond its forward and the second all-gather and "
               "the gradient reduce-scatter beyond its backward (prefetched)",
               sources=[ZERO, ZEROPP, DEEPSPEED], related=["perf.dp.allreduce"], symbol_latex=r"T_{Z3}^{exp}"),
}
SENT = "bytes each GPU sends per iteration"
zero_sent = {
    1: formula("perf.zero.stage1.sent", 2 * (d - 1) / d * shard, "byte",
               f"ZeRO-1 {SENT}: one reduce-scatter and one all-gather of its stage's Ψ/(t·p), whatever m is",
               sources=[ZERO, NCCL], symbol_latex=r"S_{Z1}"),
    2: formula("perf.zero.stage2.sent", (m + 1) * (d - 1) / d * shard, "byte",
               f"ZeRO-2 {SENT}: a gradient reduce-scatter per micro-batch and one all-gather of the updated weights",
               sources=[ZERO, ZEROPP, NCCL], symbol_latex=r"S_{Z2}"),
    3: formula("perf.zero.stage3.sent", 3 * m * (d - 1) / d * shard, "byte",
               f"ZeRO-3 {SENT}: per micro-batch two weight all-gathers (forward, backward) and a gradient reduce-scatter",
               sources=[ZERO, ZEROPP, NCCL], symbol_latex=r"S_{Z3}"),
}
ADAM_BYTES = 15 * q_bf16  # 30 bytes: fp32 weight, momentum, variance, gradient read (16), three written back (12), the 16-bit copy (2)
optimizer_time = formula(
    "perf.optimizer",
    ADAM_BYTES * P / (t * p) / HBM,
    "second",
    "Adam's step over this rank's Ψ/(t·p) parameters: 30 bytes per parameter through HBM",
    sources=[ZERO],
    symbol_latex=r"T_{opt}",
)
optimizer_sharded = formula(
    "perf.optimizer.sharded",
    ADAM_BYTES * P / (t * p * d) / HBM,
    "second",
    "Adam's step over a ZeRO shard, Ψ/(t·p·d) parameters: 30 bytes per parameter through HBM",
    sources=[ZERO],
    related=["perf.optimizer"],
    symbol_latex=r"T_{opt}^{ZeRO}",
)
