"""Expert and context parallelism, and the distributed optimizer as the ZeRO stage it is.

Layout: n = t·p·c·d GPUs. Context parallelism splits every sequence into c chunks of s/c tokens
(c divides s); expert parallelism spreads each MoE layer's E experts over e GPUs (e divides E)
taken from the data-parallel ranks (e divides d), as Megatron-LM and DeepSpeed-MoE lay them out.
Dense weights are replicated over the c·d ranks of a model-parallel position and reduced over all
of them; expert weights are replicated over c·d/e ranks only.

Expert parallelism (Lepikhin et al. 2020, GShard; Rajbhandari et al. 2022, DeepSpeed-MoE):
  weights per GPU   (Ψ − Ψ_E)/(t·p) + Ψ_E/(t·p·e);
  ZeRO, per GPU     the dense states partitioned over c·d ranks, the experts' over c·d/e;
  all-to-all        per MoE layer and micro-batch: dispatch and combine in the forward pass, their
                    gradients in the backward pass, 4 all-to-alls of the rank's b·(s/c)·k routed token
                    copies of h values: 4·(e−1)/e·b·s·k·h·q/c bytes sent (÷t under sequence parallelism).
Context parallelism (Liu et al. 2023, Ring Attention; Megatron-LM context parallelism):
  activations       per layer as the selective-recompute inventory of s/c tokens (the attention core
                    is a fused flash kernel: Q, K, V, its output and an fp32 log-sum-exp, no s² tensor);
  ring K/V          forward: c−1 steps passing this rank's K and V chunk (2·b·(s/c)·g·d_head/t values);
                    backward: K, V again and their gradients dK, dV: 3× the forward, per layer
                    6·(c−1)·b·s·g·d_head·q/(c·t) bytes sent per GPU per micro-batch.
Distributed optimizer (Megatron-LM docs, "Distributed Optimizer"): bf16 parameters and fp32 main
gradients whole on every rank, fp32 master weights and Adam moments sharded over d: 6 + 12/d bytes per
parameter, which is ZeRO stage 1 of the 18-byte (fp32-gradient) mixed-precision recipe.
"""

from __future__ import annotations

import sympy as sp

from llm_formulas.formulas.vocabulary.catalogue import Condition, Source, divides, formula
from llm_formulas.formulas.topics.memory import SHARDED
from llm_formulas.formulas.vocabulary.symbols import (
    E,
    P,
    P_exp,
    a,
    b,
    c,
    c_byte,
    d,
    d_head,
    e,
    g,
    h,
    k,
    l,
    l_moe,
    p,
    q,
    q_bf16,
    q_fp32,
    q_w,
    s,
    t,
)
from llm_formulas.formulas.topics import architecture as arch
from llm_formulas.formulas.topics import memory as mem
from llm_formulas.formulas.topics import comms as com

GSHARD = Source("lepikhin2020", "§2.2, §3.2 (experts sharded over devices, AllToAll dispatch and combine)")
DEEPSPEED_MOE = Source("rajbhandari2022", "§4.1, §5 (expert parallelism within the data-parallel group, all-to-all per MoE layer)")
MEGATRON_MOE = Source("megatron-moe", "--expert-model-parallel-size; the all-to-all token dispatcher; expert data parallelism")
RING = Source("liu2023", "§3, Algorithm 1 (K/V blocks passed around a ring of hosts, c−1 steps)")
MEGATRON_CP = Source("megatron-cp", "the sequence split over CP ranks; K/V all-gathered in forward and again in backward, their "
                     "gradients reduce-scattered, each run as ring point-to-point steps; each GPU stores only its chunk's "
                     "activations; gradients reduced over the DP×CP ranks")
DISTRIBUTED_OPTIMIZER = Source("megatron-distopt", "bytes per parameter: bf16 param, fp32 grads 18 → 6 + 12/d; fp16/fp16 20 → 4 + 16/d")
ZERO = mem.ZERO

EXPERTS_IN_MODEL = Condition("the experts are part of the model: Ψ_E ≤ Ψ", sp.LessThan(P_exp, P))
EXPERTS_SPLIT = [divides(e, E), divides(e, d), EXPERTS_IN_MODEL]
CONTEXT_SPLIT = [divides(c, s)]
BALANCED = Condition("balanced routing: each of the e ranks receives 1/e of a rank's routed tokens (dropless, capacity factor 1)")
FLASH_CORE = Condition("the attention core is a fused (flash) kernel, as Megatron's context parallelism requires")

# --- expert parallelism: parameters and states per GPU ---------------------------------

experts = formula(
    "params.ep.experts",
    l_moe * E * arch.expert.part,
    "parameter",
    "parameters of the routed experts: E experts of width d_moe in each of the l_moe MoE layers (0 when dense)",
    sources=[arch.TRANSFORMERS, DEEPSPEED_MOE],
    related=["params.decoder.expert", "params.decoder.total"],
    symbol_latex=r"\Psi_E",
)
params_per_gpu = formula(
    "params.per_gpu.ep",
    (P - P_exp) / (t * p) + P_exp / (t * p * e),
    "parameter",
    "parameters one GPU holds: the dense ones split t·p ways, the experts t·p·e ways",
    sources=[GSHARD, MEGATRON_MOE],
    conditions=EXPERTS_SPLIT,
    related=["params.ep.experts"],
    symbol_latex=r"\Psi_{GPU}",
)

ZERO_BASE = {0: mem.zero, 1: mem.zero_stage1, 2: mem.zero_stage2, 3: mem.zero_stage3}


def _dense_and_experts(expr):
    """A per-GPU ZeRO formula applied to the dense part over c·d replicas and to the experts over c·d/e."""
    return expr.subs({P: P - P_exp, d: c * d}, simultaneous=True) + expr.subs({P: P_exp / e, d: c * d / e}, simultaneous=True)


zero_ep = {
    stage: formula(
        "memory.zero.ep_cp" + ("" if stage == 0 else f".stage{stage}"),
        _dense_and_experts(base.dimensioned),
        "byte",
        f"model states per GPU, ZeRO stage {stage}, with expert and context parallelism: the dense Ψ − Ψ_E over t·p "
        "ranks partitioned across c·d replicas, the experts' Ψ_E over t·p·e ranks across c·d/e",
        sources=[ZERO, DEEPSPEED_MOE, MEGATRON_CP],
        conditions=[SHARDED, *EXPERTS_SPLIT],
        related=[base.id, "params.per_gpu.ep"],
        symbol_latex=rf"M_{{ZeRO\text{{-}}{stage}}}^{{EP,CP}}",
        notes="Reduces to the 3D formula at e = c = 1. The partitioned parts are the same for dense and expert "
        "weights: each GPU holds 1/(t·p·c·d) of every partitioned state whatever e is.",
    )
    for stage, base in ZERO_BASE.items()
}

# --- expert parallelism: traffic ----------------------------------------------------------

ROUTED = b * s * k * h * q / c  # the bytes of a rank's routed token copies: b·s/c tokens, k copies each

ep_per_layer = formula(
    "comms.ep.per_layer",
    4 * (e - 1) / e * ROUTED,
    "byte",
    "bytes each GPU sends in one MoE layer per micro-batch: all-to-all dispatch and combine forward, and their "
    "gradients backward, of the b·(s/c)·k routed token copies",
    sources=[GSHARD, DEEPSPEED_MOE, MEGATRON_MOE, com.TABLE5],
    conditions=[*EXPERTS_SPLIT, BALANCED],
    related=["comms.collective.alltoall"],
    symbol_latex=r"V_{EP}^{layer}",
    notes="Without sequence parallelism every tensor-parallel rank dispatches the same tokens. A capacity factor "
    "above 1 pads the dispatch buffers and multiplies these bytes by it.",
)
ep_per_layer_sp = formula(
    "comms.ep.per_layer.sp",
    ep_per_layer.part / t,
    "byte",
    "as comms.ep.per_layer with sequence parallelism: each tensor-parallel rank dispatches its s/(c·t) tokens",
    sources=[MEGATRON_MOE, GSHARD],
    conditions=[*EXPERTS_SPLIT, BALANCED, divides(t, s)],
    related=["comms.ep.per_layer"],
    symbol_latex=r"V_{EP,SP}^{layer}",
)
ep_per_microbatch = formula(
    "comms.ep.per_microbatch",
    l_moe / p * ep_per_layer.part,
    "byte",
    "EP bytes each GPU sends per micro-batch: its pipeline stage's share l_moe/p of the MoE layers",
    sources=[MEGATRON_MOE],
    conditions=[*EXPERTS_SPLIT, BALANCED, divides(p, l_moe)],
    related=["comms.ep.per_layer"],
    symbol_latex=r"V_{EP}",
)
ep_per_microbatch_sp = formula(
    "comms.ep.per_microbatch.sp",
    l_moe / p * ep_per_layer_sp.part,
    "byte",
    "EP bytes each GPU sends per micro-batch with sequence parallelism",
    sources=[MEGATRON_MOE],
    conditions=[*EXPERTS_SPLIT, BALANCED, divides(p, l_moe)],
    related=["comms.ep.per_layer.sp"],
    symbol_latex=r"V_{EP,SP}",
)
dp_sent = formula(
    "comms.dp.ep_cp.sent_per_iteration",
    2 * (c * d - 1) / (c * d) * q_w * (P - P_exp) / (t * p) + 2 * (c * d / e - 1) / (c * d / e) * q_w * P_exp / (t * p * e),
    "byte",
    "bytes each GPU sends for the gradient all-reduce per iteration: dense gradients over the c·d replicas, "
    "expert gradients over the c·d/e ranks that hold the same experts",
    sources=[com.TABLE4, DEEPSPEED_MOE, MEGATRON_CP],
    conditions=EXPERTS_SPLIT,
    related=["comms.dp.sent_per_iteration"],
    symbol_latex=r"V_{DP}^{EP,CP}",
)
zero3_sent = formula(
    "comms.zero.stage3.ep_cp.sent",
    3 * (c * d - 1) / (c * d) * q_w * (P - P_exp) / (t * p) + 3 * (c * d / e - 1) / (c * d / e) * q_w * P_exp / (t * p * e),
    "byte",
    "bytes each GPU sends for ZeRO-3 per iteration with expert and context parallelism: two all-gathers and a "
    "reduce-scatter, dense over c·d ranks, experts over c·d/e",
    sources=[ZERO, DEEPSPEED_MOE],
    conditions=EXPERTS_SPLIT,
    related=["comms.zero.stage3.sent"],
    symbol_latex=r"V_{ZeRO3}^{EP,CP}",
)

# --- context parallelism -------------------------------------------------------------------

LSE = 4 * a * s * b / t * c_byte  # fp32 log-sum-exp per head and token, the flash kernel's softmax statistic

cp_layer = formula(
    "memory.activations.layer.cp",
    mem.layer_general_selective.at(s=s / c) + LSE.subs(s, s / c),
    "byte",
    "activations of one layer per GPU with context and tensor parallelism: s/c tokens, a flash attention core "
    "(Q, K, V, output, fp32 log-sum-exp), no s² tensor",
    sources=[MEGATRON_CP, RING, mem.KORTHIKANTI, mem.FLASH],
    conditions=[*CONTEXT_SPLIT, FLASH_CORE, mem.MEGATRON_TP],
    related=["memory.activations.layer.general.selective", "memory.activations.layer.flash"],
    symbol_latex=r"A_{layer}^{CP}",
    notes="Ring attention computes the s/c queries against one K/V chunk at a time and keeps no score matrix; "
    "the K/V chunks of other ranks are received again in the backward pass, not stored.",
)
cp_layer_sp = formula(
    "memory.activations.layer.cp_sp",
    mem.layer_general_selective_sp.at(s=s / c) + LSE.subs(s, s / c),
    "byte",
    "activations of one layer per GPU with context, tensor and sequence parallelism (flash attention core)",
    sources=[MEGATRON_CP, RING, mem.KORTHIKANTI],
    conditions=[*CONTEXT_SPLIT, FLASH_CORE, mem.MEGATRON_TP],
    related=["memory.activations.layer.cp", "memory.activations.layer.general.selective_sp"],
    symbol_latex=r"A_{layer}^{CP,SP}",
)
cp_full = formula(
    "memory.activations.layer.cp.full_recompute",
    mem.layer_full.at(s=s / c),
    "byte",
    "activations of one layer with context parallelism and full recompute: the 16-bit input of s/c tokens",
    sources=[MEGATRON_CP, mem.KORTHIKANTI],
    conditions=CONTEXT_SPLIT,
    related=["memory.activations.layer.full_recompute"],
    symbol_latex=r"A_{layer}^{CP,full}",
)
cp_full_sp = formula(
    "memory.activations.layer.cp.full_recompute_sp",
    mem.layer_full_sp.at(s=s / c),
    "byte",
    "activations of one layer with context and sequence parallelism and full recompute",
    sources=[MEGATRON_CP, mem.KORTHIKANTI],
    conditions=CONTEXT_SPLIT,
    related=["memory.activations.layer.full_recompute_sp"],
    symbol_latex=r"A_{layer}^{CP,full,SP}",
)
KV_CHUNK = 2 * b * (s / c) * g * d_head / t * q  # this rank's K and V chunk, its g/t KV heads

cp_per_layer = formula(
    "comms.cp.per_layer",
    3 * (c - 1) * KV_CHUNK,
    "byte",
    "ring-attention bytes each GPU sends per layer and micro-batch: c−1 K/V chunks forward; K/V and dK/dV backward",
    sources=[RING, MEGATRON_CP],
    conditions=[*CONTEXT_SPLIT, divides(t, g)],
    related=["comms.collective.sendrecv"],
    symbol_latex=r"V_{CP}^{layer}",
    notes="Megatron's load balancing gives each rank two chunks of s/(2c) tokens (so 2c divides s); the bytes per "
    "step are the same.",
)
cp_per_microbatch = formula(
    "comms.cp.per_microbatch",
    l / p * cp_per_layer.part,
    "byte",
    "ring-attention bytes each GPU sends per micro-batch for its pipeline stage's l/p layers",
    sources=[RING, MEGATRON_CP],
    conditions=[*CONTEXT_SPLIT, divides(p, l)],
    related=["comms.cp.per_layer"],
    symbol_latex=r"V_{CP}",
)

# --- the distributed optimizer ---------------------------------------------------------------

distributed_optimizer = formula(
    "memory.distributed_optimizer",
    ((q_bf16 + q_fp32) * P + 3 * q_fp32 * P / d) / (t * p),
    "byte",
    "Megatron's distributed optimizer per GPU: bf16 weights and fp32 main gradients whole, fp32 master weights and "
    "Adam moments sharded over d: (6 + 12/d)·Ψ/(t·p), ZeRO stage 1 of the fp32-gradient recipe",
    sources=[DISTRIBUTED_OPTIMIZER, ZERO],
    conditions=[SHARDED],
    related=["memory.zero.stage1", "memory.model_states.fp32_grads"],
    symbol_latex=r"M_{dist\,opt}",
    notes="The gradients are reduce-scattered and the parameters all-gathered: the bytes of one all-reduce "
    "(comms.zero.stage1). Megatron's fp16/fp16 row, 4 + 16/d, also shards an fp32 copy of the gradients.",
)
