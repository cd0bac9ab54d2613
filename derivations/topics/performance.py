"""Proofs of the performance model (formulas/topics/performance.py).

Each time is built from its parts and concluded; the claims that decide how layouts rank
are proved as identities:
- a GEMM's efficiency is η_gemm over one plus the ridge point over its arithmetic
  intensity (plus the kernel cost over its compute time), and tends to η_gemm as the GEMM grows;
- the pipeline time is m micro-batch slots times one plus the interleaved bubble
  (``cluster.bubble.interleaved``);
- TP communication is on the critical path: with blocking all-reduces (σ_TP^ovl = 0) the
  derivative of the pipeline time in the TP ring's bandwidth is
  −(m + (p−1)/v)·(l/p)·(2 + σ_full)·4(t−1)/t·bshq/W_TP², no overlap budget hides any of it; with
  the backward's overlapped (σ_TP^ovl = 1) the forward's still count in full and each backward
  one only while it outlasts its weight-gradient GEMM (a Heaviside step);
- ZeRO-2 and ZeRO-3 traffic grows with m (one more micro-batch adds one reduce-scatter, or
  two all-gathers and a reduce-scatter), ZeRO-1's does not;
- the hierarchical all-reduce is the flat ring over the network when every DP rank sits in
  its own node, and the NVLink ring when all sit in one.
"""

from __future__ import annotations

import sympy as sp

from llm_formulas.derivations.vocabulary.engine import Derivation
from llm_formulas.derivations.vocabulary.proof import much_greater
from llm_formulas.formulas.vocabulary.catalogue import get
from llm_formulas.formulas.topics.cluster import bubble_interleaved
from llm_formulas.formulas.topics.performance import (
    ASYNC_TP, DDP, DEEPSPEED_BF16, DEEPSPEED_GRAD, DEEPSPEED_PIPE, FLASH, HIERARCHICAL, KORTHIKANTI, MEGATRON_2021, NARAYANAN, NCCL, NVIDIA_GEMM, ROOFLINE,
    SHOEYBI, ZERO, ZEROPP, allreduce_forward, attention_backward, attention_core, attention_flash, attention_forward,
    elementwise_forward, gemm_bytes, gemm_flops, layer_gemms, recomputed_core, ring_allreduce, shard, tokens,
)
from llm_formulas.formulas.vocabulary.symbols import (
    K_inner, M_rows, N_cols, P, V, W_intra, W_mem, W_net, W_pp, W_tp, X, a, d, d_ff, d_head, d_node, eta_gemm, eta_mem, g,
    gated, grad_fp32, h, l, m, ovl_dp, ovl_tp, p, p2p_grad_whole, p2p_serial, piped, q, q_bf16, q_fp32, rc_full, rc_sel,
    seq_par, t, T_slow, T_stages, tau_bwd, tau_fwd, tau_k, v,
)


def _composed(formula_id: str, title: str, sources: tuple, parts: list[tuple[str, sp.Expr, str]], why: str) -> Derivation:
    """A time built as the sum of named parts, concluded as the catalogue's closed form."""
    d_ = Derivation(formula_id, title, sources)
    total = 0
    for label, expr, reason in parts:
        total += d_.defines(label, expr, reason)
    d_.defines("total", total, why, parts=tuple(label for label, _, _ in parts))
    d_.concludes(formula_id, of="total")
    return d_


def gemm_time() -> Derivation:
    d_ = Derivation("perf.gemm.time", "Time of one GEMM: roofline plus a kernel's fixed cost", (ROOFLINE, NVIDIA_GEMM))
    compute = d_.defines("T_compute", gemm_flops / (X * eta_gemm), "2MKN FLOPs at the sustained fraction η_gemm of peak")
    memory = d_.defines("T_memory", gemm_bytes / (W_mem * eta_mem), "read A and B, write C once, at the sustained HBM bandwidth")
    d_.defines("T_GEMM", compute + memory + tau_k, "compute and memory time add (a conservative roofline), plus the launch and tail τ_k")
    d_.concludes("perf.gemm.time")
    return d_


def gemm_efficiency() -> Derivation:
    d_ = Derivation("perf.gemm.efficiency", "A GEMM's efficiency falls with its arithmetic intensity", (ROOFLINE, NVIDIA_GEMM))
    time = get("perf.gemm.time").part
    d_.defines("η", gemm_flops / (X * time), "achieved FLOP/s over peak")
    intensity = gemm_flops / gemm_bytes
    ridge = X / (W_mem * eta_mem)
    d_.equals("η_gemm/(1 + η_gemm·ridge/AI + η_gemm·X·τ_k/FLOPs)",
              eta_gemm / (1 + eta_gemm * ridge / intensity + eta_gemm * X * tau_k / gemm_flops),
              "divide through by the compute time: the ridge point X/(η_mem·W_mem) over the arithmetic intensity 2MNK/bytes")
    d_.concludes("perf.gemm.efficiency")
    error = -(eta_gemm * ridge / intensity + eta_gemm * X * tau_k / gemm_flops) / (
        1 + eta_gemm * ridge / intensity + eta_gemm * X * tau_k / gemm_flops)
    d_.approximates("η_gemm", eta_gemm, "a large GEMM reaches the calibrated η_gemm; small or skinny ones fall short",
                    condition=(much_greater(M_rows, ridge), much_greater(N_cols, ridge), much_greater(K_inner, ridge)),
                    dropped=eta_gemm * error, limits=((M_rows, sp.oo), (N_cols, sp.oo), (K_inner, sp.oo)), of="η")
    return d_


def tp_layer() -> Derivation:
    d_ = Derivation("perf.tp.layer", "TP communication of one layer's forward", (SHOEYBI, KORTHIKANTI, NCCL))
    message = d_.defines("x", tokens * h * q, "each all-reduce works on the layer's output b·s·h values")
    ring = d_.defines("T_AR", 2 * (t - 1) / t * message / W_tp, "a ring all-reduce moves 2(t−1)/t of the buffer over each GPU's link")
    d_.defines("T_TP", 2 * ring + 2 * (1 + seq_par) * tau_k,
               "the f and g operators: one all-reduce after attention, one after the MLP (SP: a reduce-scatter and an "
               "all-gather each, one more kernel)")
    d_.concludes("perf.tp.layer")
    return d_


def tp_backward() -> Derivation:
    d_ = Derivation("perf.tp.backward", "TP communication of one layer's backward", (SHOEYBI, ASYNC_TP, NCCL))
    ring = d_.defines("T_AR", 2 * (t - 1) / t * tokens * h * q / W_tp,
                      "the input gradient of a column-parallel GEMM (QKV, MLP up) is all-reduced: 2(t−1)/t of b·s·h·q")
    gemm = get("perf.gemm.time").dimensioned
    qkv = d_.defines("T_wgrad,QKV", gemm.xreplace({M_rows: tokens, K_inner: h, N_cols: (a + 2 * g) * d_head / t}),
                     "QKV's weight gradient [h, bs]·[bs, (a+2g)d_head/t]: the forward GEMM's FLOPs and operand bytes (perf.gemm.time)")
    up = d_.defines("T_wgrad,up", gemm.xreplace({M_rows: tokens, K_inner: h, N_cols: (1 + gated) * d_ff / t}),
                    "the MLP-up weight gradient [h, bs]·[bs, (1+σ_gated)d_ff/t]")
    kernels = d_.defines("T_k", 2 * (1 + seq_par) * tau_k, "two collectives' fixed cost (SP: a reduce-scatter and an all-gather each)")
    blocking = d_.defines("T_blocking", 2 * ring + kernels, "Megatron-LM 2021: each all-reduce blocks the next GEMM")
    overlapped = d_.defines("T_overlapped", sp.Max(ring - qkv, 0) + sp.Max(ring - up, 0) + kernels,
                            "Megatron-LM since 2021-09 launches each all-reduce asynchronously and computes the weight gradient "
                            "meanwhile: only what exceeds that GEMM is exposed")
    d_.defines("T_TP^bwd", (1 - ovl_tp) * blocking + ovl_tp * overlapped, "σ_TP^ovl picks the framework's schedule")
    d_.concludes("perf.tp.backward")
    backward = get("perf.tp.backward").dimensioned
    d_.defines("T_TP^bwd(σ_TP^ovl = 0)", backward.subs(ovl_tp, 0), "the blocking framework")
    d_.equals("T_TP (the forward's)", get("perf.tp.layer").part, "the same two all-reduces as the forward (perf.tp.layer)", aside=True)
    return d_


def layer_parts() -> Derivation:
    """The named parts of a layer's time, each from its kernels."""
    d_ = Derivation("perf.layer.gemms", "The parts of a layer's time", (NVIDIA_GEMM, FLASH, SHOEYBI, KORTHIKANTI))
    d_.defines("T_GEMMs", layer_gemms, "QKV [bs, h]·[h, (a+2g)d_head/t], output [bs, a·d_head/t]·[.., h], MLP up and down "
               "with d_ff/t, each a perf.gemm.time")
    d_.concludes("perf.layer.gemms")
    d_.defines("T_core", attention_core, "QKᵀ and scores·V as batched GEMMs, the s² scores through HBM twice for the "
               "softmax and the dropout, two launches more")
    d_.concludes("perf.attention.eager")
    d_.defines("T_flash", attention_flash, "the same FLOPs in one kernel that reads Q, K, V and writes the output once")
    d_.concludes("perf.attention.flash")
    d_.defines("T_elem", elementwise_forward, "norms, bias-dropout-adds and the activation: bytes over η_mem·W_mem")
    d_.concludes("perf.layer.elementwise")
    d_.defines("T_AR", ring_allreduce, "a ring all-reduce moves 2(t−1)/t of the b·s·h·q buffer over each GPU's link")
    d_.concludes("perf.tp.allreduce")
    return d_


def layer_forward() -> Derivation:
    return _composed("perf.layer.forward", "One layer's forward under t", (NVIDIA_GEMM, FLASH, SHOEYBI), [
        ("T_GEMMs", layer_gemms, "QKV [bs, h]·[h, (a+2g)d_head/t], output [bs, a·d_head/t]·[.., h], MLP up and down with d_ff/t"),
        ("T_attention", attention_forward, "QKᵀ and scores·V as batched GEMMs with the s² scores through HBM, or one flash kernel"),
        ("T_elementwise", elementwise_forward, "norms, bias-dropout-adds and the activation: bytes over η_mem·W_mem"),
        ("T_TP", allreduce_forward, "two blocking all-reduces"),
    ], "nothing overlaps inside a layer: each step needs the previous one's result")


def layer_backward() -> Derivation:
    forward = get("perf.layer.forward").part
    return _composed("perf.layer.backward", "One layer's backward, recompute included", (NVIDIA_GEMM, FLASH, KORTHIKANTI, ASYNC_TP), [
        ("T_GEMMs", 2 * layer_gemms, "a data-gradient and a weight-gradient GEMM of the same FLOPs per forward GEMM"),
        ("T_attention", attention_backward, "twice the unfused core; FlashAttention-2's backward is 2.5× its forward"),
        ("T_elementwise", 2 * elementwise_forward, "read the saved input and the incoming gradient, write the gradient: twice the bytes"),
        ("T_TP", get("perf.tp.backward").part, "the conjugate operators all-reduce the input gradients twice, blocking or "
         "overlapped with the weight gradients (perf.tp.backward)"),
        ("T_recompute", rc_full * forward + rc_sel * recomputed_core,
         "full recompute runs the forward again, all-reduces included; selective the attention core (without flash)"),
    ], "the backward and the forward it repeats, one after the other")


def logits() -> Derivation:
    d_ = Derivation("perf.logits", "Logits and loss on the last stage", (SHOEYBI,))
    shape = {M_rows: tokens, K_inner: h, N_cols: V / t}
    one = d_.defines("T_GEMM", get("perf.gemm.time").dimensioned.xreplace(shape), "the [bs, h]·[h, V/t] GEMM (perf.gemm.time)")
    loss = d_.defines("T_CE", 5 * tokens * V / t * 2 * q / (W_mem * eta_mem),
                      "cross-entropy passes five times over the b·s·V/t logits, read and written, at the sustained HBM bandwidth")
    d_.defines("T_logits", sp.Add(sp.Mul(3, one, evaluate=False), loss, evaluate=False),
               "the GEMM forward and its two backward GEMMs, then the loss; one micro-batch")
    d_.concludes("perf.logits")
    return d_


def p2p() -> Derivation:
    d_ = Derivation("perf.pp.p2p", "Pipeline point-to-point per micro-batch", (NARAYANAN, MEGATRON_2021, DEEPSPEED_PIPE,
                                                                                DEEPSPEED_GRAD))
    send = d_.defines("T_send", tokens * h * q / (t * W_pp) + tau_k,
                      "b·s·h·q/t bytes over each of the t links (scatter/gather), plus a kernel's fixed cost")
    gather = d_.defines("T_gather", (t - 1) / t * tokens * h * q / W_intra,
                        "the receiver all-gathers the t slices over NVLink to rematerialise the tensor (§4.1)")
    whole = d_.defines("T_send^whole", tokens * h * q / W_pp + tau_k,
                       "a gradient sent whole: all b·s·h·q bytes over each rank's link (DeepSpeed before v0.5.4)")
    gradient = d_.defines("T_send^grad", (1 - p2p_grad_whole) * send + p2p_grad_whole * whole,
                          "the gradient's message: a slice, or whole (σ_P2P^grad = 1)")
    d_.defines("T_P2P", sp.Mul(piped, v, (1 + p2p_serial) * (send + gradient) + gather + (1 - p2p_grad_whole) * gather,
                               evaluate=False),
               "per micro-batch at each of v chunk boundaries, when p > 1: an activation in and out and a gradient in and out, "
               "as two exchanges each taking one message time (Megatron's batch_isend_irecv, full duplex) or two "
               "(σ_P2P^ser = 1, DeepSpeed's blocking send/recv); the received activation, and a received gradient slice, "
               "gathered; on the critical path of 1F1B")
    d_.equals("σ_PP·v·(2((1 + σ_ser)·T_send + T_gather) + σ_grad·((1 + σ_ser)(T_send^whole − T_send) − T_gather))",
              piped * v * (2 * ((1 + p2p_serial) * send + gather)
                           + p2p_grad_whole * ((1 + p2p_serial) * (whole - send) - gather)),
              "two equal exchanges when the gradient is sliced like the activation; a whole gradient adds its extra bytes and "
              "saves its gather", of="T_P2P")
    d_.concludes("perf.pp.p2p")
    return d_


def stage() -> Derivation:
    return _composed("perf.stage.microbatch", "One micro-batch on the last stage", (NARAYANAN,), [
        ("T_layers", l / p * (get("perf.layer.forward").part + get("perf.layer.backward").part), "l/p layers forward and backward"),
        ("T_logits", get("perf.logits").part, "the last stage also computes the logits and the loss"),
        ("T_P2P", get("perf.pp.p2p").part, "and sends and receives the boundary activations"),
        ("T_acc", get("perf.grad.accumulate_fp32").part, "and, under σ_acc^fp32, adds the gradients into fp32 ones"),
    ], "the slowest stage sets the pace of the pipeline")


def accumulate_fp32() -> Derivation:
    d_ = Derivation("perf.grad.accumulate_fp32", "Adding each micro-batch's gradients into fp32", (DEEPSPEED_BF16,))
    share = d_.defines("Ψ_stage", P / (t * p), "the stage's parameters on this rank")
    moved = d_.defines("bytes", (q_bf16 + 4 * q_fp32) * share,
                       "hp_grad.add_(lp.grad.to(float32)): the 16-bit gradient read (2), its fp32 copy written and read "
                       "back (8), the fp32 gradient read and written (8): 18 bytes per parameter")
    d_.defines("T_acc", sp.Mul(grad_fp32, moved, sp.Pow(W_mem * eta_mem, -1, evaluate=False), evaluate=False),
               "two element-wise kernels, memory-bound: the bytes at the sustained HBM bandwidth, after every micro-batch's "
               "backward when σ_acc^fp32 = 1 (DeepSpeed's BF16_Optimizer), on the stage's compute stream")
    d_.concludes("perf.grad.accumulate_fp32")
    return d_


def pipeline() -> Derivation:
    d_ = Derivation("perf.pipeline", "Pipeline time: m slots plus the bubble; TP on the critical path", (NARAYANAN, SHOEYBI))
    slot = get("perf.stage.microbatch").part
    d_.defines("T_pipe", (m + (p - 1) / v) * slot, "m + (p−1)/v slots of T_mb (fill and drain of the interleaved 1F1B schedule)")
    d_.concludes("perf.pipeline")
    d_.equals("m·T_mb·(1 + β_int)", m * slot * (1 + bubble_interleaved.dimensioned), "the bubble of cluster.bubble.interleaved", of="T_pipe",
              aside=True)
    blocking = get("perf.pipeline").dimensioned.subs(ovl_tp, 0)
    d_.defines("∂T_pipe/∂W_TP (σ_TP^ovl = 0)", sp.diff(blocking, W_tp), "how the pipeline time answers the TP ring's bandwidth")
    d_.equals("−(m + (p−1)/v)(l/p)(2 + σ_full)·4(t−1)bshq/(t·W_TP²)",
              -(m + (p - 1) / v) * (l / p) * (2 + rc_full) * 4 * (t - 1) * tokens * h * q / (t * W_tp**2),
              "every byte of TP traffic adds its full time to every slot: no overlap budget hides a blocking all-reduce", aside=True)
    overlapped = get("perf.pipeline").dimensioned.subs(ovl_tp, 1)
    ring = 2 * (t - 1) / t * tokens * h * q / W_tp
    wgrad = [get("perf.gemm.time").dimensioned.xreplace({M_rows: tokens, K_inner: h, N_cols: width / t})
             for width in ((a + 2 * g) * d_head, (1 + gated) * d_ff)]
    d_.defines("∂T_pipe/∂W_TP (σ_TP^ovl = 1)", sp.diff(overlapped, W_tp),
               "the same with the backward's all-reduces overlapped with the weight gradients")
    d_.equals("−(m + (p−1)/v)(l/p)(1 + σ_full + H_QKV/2 + H_up/2)·4(t−1)bshq/(t·W_TP²)",
              -(m + (p - 1) / v) * (l / p) * (1 + rc_full + sum(sp.Heaviside(ring - w) for w in wgrad) / 2)
              * 4 * (t - 1) * tokens * h * q / (t * W_tp**2),
              "the forward's (and the recomputed forward's) all-reduces stay on the critical path in full; each backward "
              "all-reduce only while it outlasts its weight-gradient GEMM (H, the Heaviside step of their difference)", aside=True)
    return d_


def dp_allreduce() -> Derivation:
    d_ = Derivation("perf.dp.allreduce", "Hierarchical all-reduce of the gradients", (HIERARCHICAL, NCCL))
    intra = d_.defines("T_intra", 2 * (d_node - 1) / d_node * shard / W_intra,
                       "reduce-scatter then all-gather among the node's d_node DP ranks: 2(d_node−1)/d_node of the buffer over NVLink")
    inter = d_.defines("T_inter", 2 * (d / d_node - 1) / (d / d_node) * (shard / d_node) / W_net,
                       "each rank all-reduces its 1/d_node slice with its peers in the other d/d_node nodes, over its own NIC")
    d_.defines("T_DP", intra + inter, "the two levels run one after the other")
    d_.concludes("perf.dp.allreduce")
    formula = get("perf.dp.allreduce").dimensioned
    d_.defines("T_DP(d_node = 1)", formula.subs(d_node, 1), "every DP rank in its own node (t ≥ the node size)")
    d_.equals("2(d−1)/d·Ψq_w/(tp)/W_net", 2 * (d - 1) / d * shard / W_net, "the flat ring all-reduce over the network", aside=True)
    d_.defines("T_DP(d_node = d)", formula.subs(d_node, d), "all DP ranks in one node")
    d_.equals("2(d−1)/d·Ψq_w/(tp)/W_intra", 2 * (d - 1) / d * shard / W_intra, "the ring over NVLink", aside=True)
    return d_


def window(kind: str) -> Derivation:
    layer = get(f"perf.layer.{kind}").part
    return _composed(f"perf.window.{kind}", f"One micro-batch's {kind} on a stage", (DDP,), [
        ("T_window", l / p * layer, f"the stage's l/p layers, {kind}"),
    ], "the compute that overlapped collectives hide under")


def zero_exposed(stage: int) -> Derivation:
    d_ = Derivation(f"perf.zero.stage{stage}.exposed", f"Exposed DP time, ZeRO stage {stage}", (ZERO, ZEROPP, DDP, MEGATRON_2021))
    allreduce = d_.defines("T_AR", get("perf.dp.allreduce").part, "the gradients' hierarchical all-reduce")
    if stage == 0:
        exposed = ovl_dp * sp.Max(allreduce - tau_bwd, 0) + (1 - ovl_dp) * allreduce
    else:
        half = d_.defines("T_RS", sp.Mul(sp.Rational(1, 2), allreduce, evaluate=False),
                          "a reduce-scatter or an all-gather moves half an all-reduce's bytes")
        exposed = {1: ovl_dp * sp.Max(half - tau_bwd, 0) + (1 - ovl_dp) * half + half,
                   2: m * sp.Max(half - tau_bwd, 0) + half,
                   3: m * (sp.Max(half - tau_fwd, 0) + sp.Max(2 * half - tau_bwd, 0))}[stage]
    d_.defines("T_exposed", exposed,
               "each collective's time beyond the compute it is bucketed or prefetched under, max(T − W, 0): stage 0–1 once "
               "per iteration (all of it when the framework reduces after the backward, σ_DP^ovl = 0: Megatron-LM 2021, "
               "DeepSpeed's pipeline engine), stage 2's reduce-scatter and stage 3's gathers once per micro-batch")
    d_.concludes(f"perf.zero.stage{stage}.exposed")
    return d_


def zero_sent(stage: int) -> Derivation:
    d_ = Derivation(f"perf.zero.stage{stage}.sent", f"ZeRO-{stage} traffic per iteration, by micro-batch", (ZERO, ZEROPP, NCCL))
    collective = d_.defines("x_RS", (d - 1) / d * shard, "a reduce-scatter or an all-gather sends (d−1)/d of the stage's Ψ/(t·p)·q_w")
    per_iteration = {1: 2 * collective, 2: (m + 1) * collective, 3: 3 * m * collective}[stage]
    why = {1: "one reduce-scatter of the accumulated gradients and one all-gather of the updated weights",
           2: "the gradient shard is all it keeps: a reduce-scatter after each of the m backwards, one all-gather of the weights",
           3: "per micro-batch the weights are gathered for the forward, again for the backward, and the gradients reduce-scattered"}[stage]
    d_.defines("S", per_iteration, why)
    d_.concludes(f"perf.zero.stage{stage}.sent")
    sent = get(f"perf.zero.stage{stage}.sent").dimensioned
    d_.defines("S(m+1) − S(m)", sent.subs(m, m + 1) - sent, "what one more micro-batch adds")
    d_.equals("per micro-batch", {1: sp.Integer(0), 2: collective, 3: 3 * collective}[stage],
              {1: "ZeRO-1 communicates once per iteration, whatever m is",
               2: "one more reduce-scatter: the traffic grows with m",
               3: "two more all-gathers and a reduce-scatter: the traffic grows with m"}[stage], aside=True)
    return d_


def pipeline_uneven() -> Derivation:
    d_ = Derivation("perf.pipeline.uneven", "Pipeline time over uneven stages: the slowest sets the pace", (NARAYANAN,))
    d_.defines("T_pipe", (m - 1) * T_slow + T_stages,
               "the first micro-batch crosses every stage, forward and back (ΣT_i); in the steady 1F1B state the slowest "
               "stage finishes one micro-batch per T_max, so the other m − 1 add one T_max each")
    d_.concludes("perf.pipeline.uneven")
    d_.defines("T_pipe^even", (m - 1) * T_slow + p * T_slow, "equal stages: every stage takes T_max, so ΣT_i = p·T_max")
    d_.equals("(m + p − 1)·T_max", (m + p - 1) * T_slow,
              "perf.pipeline's m + (p − 1)/v slots at v = 1: the two formulas agree where both apply", of="T_pipe^even",
              aside=True)
    return d_


def optimizer(sharded: bool) -> Derivation:
    formula_id = "perf.optimizer.sharded" if sharded else "perf.optimizer"
    d_ = Derivation(formula_id, "Adam's step through HBM", (ZERO,))
    share = d_.defines("Ψ_rank", P / (t * p * (d if sharded else 1)),
                       "the rank's parameters: Ψ/(t·p)" + (", and a 1/d ZeRO shard of them" if sharded else ""))
    moved = d_.defines("bytes", 15 * q_bf16 * share, "30 bytes per parameter: fp32 weight, momentum, variance and the gradient "
                       "read (16), three written back (12), the 16-bit copy written (2)")
    d_.defines("T_opt", sp.Mul(moved, sp.Pow(W_mem * eta_mem, -1, evaluate=False), evaluate=False),
               "memory-bound (a few FLOPs per byte): the bytes at the sustained HBM bandwidth")
    d_.concludes(formula_id)
    return d_


DERIVATIONS = (
    gemm_time, gemm_efficiency, tp_layer, tp_backward, layer_parts, layer_forward, layer_backward, logits, p2p, accumulate_fp32, stage,
    pipeline, pipeline_uneven, dp_allreduce,
    lambda: window("forward"), lambda: window("backward"),
    *(lambda stage=stage: zero_exposed(stage) for stage in (0, 1, 2, 3)),
    *(lambda stage=stage: zero_sent(stage) for stage in (1, 2, 3)),
    lambda: optimizer(False), lambda: optimizer(True),
)
