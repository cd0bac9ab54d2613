"""Proofs of expert parallelism, context parallelism and the distributed optimizer (formulas/topics/parallelism.py).

Expert parallelism: the states are split share by share (dense over t·p ranks and c·d replicas, experts
over t·p·e ranks and c·d/e replicas), each ZeRO stage is proved to reduce to the 3D formula at e = c = 1,
and the partitioned part is proved independent of e (every GPU holds 1/(t·p·c·d) of each partitioned
state). The all-to-all traffic is four all-to-alls (comms.collective.alltoall) of the rank's routed
token copies. Context parallelism: activations are the flash-core inventory of s/c tokens, proved to be
exactly 1/c of the same layer without CP; the ring sends c−1 K/V chunks forward and twice that backward.
The distributed optimizer is proved equal to ZeRO stage 1 of the fp32-gradient recipe, and to Megatron's
printed 6 + 12/d and 18 bytes per parameter.
"""

from __future__ import annotations

import sympy as sp

from llm_formulas.derivations.topics.comms import collective
from llm_formulas.derivations.vocabulary.engine import Derivation
from llm_formulas.formulas.vocabulary.catalogue import get
from llm_formulas.formulas.topics.parallelism import (
    DEEPSPEED_MOE,
    DISTRIBUTED_OPTIMIZER,
    GSHARD,
    LSE,
    MEGATRON_CP,
    MEGATRON_MOE,
    RING,
    ZERO,
)
from llm_formulas.formulas.vocabulary.symbols import E, P, P_exp, b, c, d, d_head, e, g, h, k, l, l_moe, p, q, q_bf16, q_fp32, q_w, s, t

ZERO_IDS = {0: "memory.zero", 1: "memory.zero.stage1", 2: "memory.zero.stage2", 3: "memory.zero.stage3"}
SHARES = [(3 * q_fp32, 1, "optimizer states"), (q_bf16, 2, "gradients"), (q_bf16, 3, "weights")]  # width, first stage that partitions it


# --- expert parallelism ------------------------------------------------------------------


def experts() -> Derivation:
    dv = Derivation("params.ep.experts", "The routed experts' parameters", (DEEPSPEED_MOE,))
    layer = dv.defines("Ψ_E^layer", E * get("params.decoder.expert").part, "E routed experts of width d_moe in a MoE layer")
    dv.defines("Ψ_E", l_moe * layer, "every one of the l_moe MoE layers (none in a dense model); shared experts and router stay dense")
    dv.concludes("params.ep.experts")
    return dv


def params_per_gpu() -> Derivation:
    dv = Derivation("params.per_gpu.ep", "Parameters per GPU under expert parallelism", (GSHARD, MEGATRON_MOE))
    dense = dv.defines("Ψ_dense", (P - P_exp) / (t * p), "attention, norms, router, embeddings: split by tensor and pipeline parallelism")
    expert = dv.defines("Ψ_experts", P_exp / (t * p * e), "each of the e expert-parallel ranks holds E/e experts of its stage, each split t ways")
    held = dv.defines("Ψ_GPU", dense + expert, "the two shares")
    dv.concludes("params.per_gpu.ep", of="Ψ_GPU")
    dv.defines("Ψ_GPU(e = 1)", held.subs(e, 1), "without expert parallelism")
    dv.equals("Ψ/(t·p)", P / (t * p), "the 3D share: expert parallelism only moves the experts", aside=True)
    return dv


def zero_ep(stage: int) -> Derivation:
    target = "memory.zero.ep_cp" + ("" if stage == 0 else f".stage{stage}")
    dv = Derivation(target, f"ZeRO stage {stage} with expert and context parallelism", (ZERO, DEEPSPEED_MOE, MEGATRON_CP))
    parts = {
        "dense": ((P - P_exp) / (t * p), c * d, "the dense parameters of a model-parallel rank, replicated on the c·d data- and context-parallel ranks"),
        "experts": (P_exp / (t * p * e), c * d / e, "its experts, replicated only on the c·d/e ranks that hold the same E/e experts"),
    }
    total = 0
    for name, (held, replicas, why) in parts.items():
        dv.defines(f"Ψ_{name}", held, why)
        # Ψ_part · (bytes per parameter): each share of the part's parameters, written as a multiple of them
        share = held * sp.Add(*(width / (replicas if stage >= first else 1) for width, first, _ in SHARES))
        dv.defines(f"M_{name}", share, "optimizer states, gradients, weights: each partitioned over those replicas from its stage on")
        total += share
    dv.defines("M", total, "the two parts", parts=tuple(f"M_{name}" for name in parts))
    dv.concludes(target, of="M")
    dv.defines("M(e = c = 1)", total.subs({e: 1, c: 1}), "no expert or context parallelism")
    dv.equals("M_3D", get(ZERO_IDS[stage]).dimensioned, f"exactly {ZERO_IDS[stage]}")
    if stage >= 1:
        optimizer = 3 * q_fp32 * ((P - P_exp) / (t * p * c * d) + P_exp / (t * p * e) / (c * d / e))
        dv.defines("M_opt", optimizer, "the partitioned optimizer states of both parts")
        dv.equals("12Ψ/(t·p·c·d)", 3 * q_fp32 * P / (t * p * c * d), "independent of e: each GPU holds 1/(t·p·c·d) of every expert's states too",
                  aside=True)
    return dv


def ep_per_layer() -> Derivation:
    dv = Derivation("comms.ep.per_layer", "Four all-to-alls per MoE layer", (GSHARD, DEEPSPEED_MOE, MEGATRON_MOE))
    tokens = dv.defines("T", b * s / c, "the rank's tokens: b sequences of s/c tokens under context parallelism")
    routed = dv.defines("x", tokens * k * h * q, "each token is sent to its k experts: k copies of h values")
    one = dv.defines("V_a2a", collective("alltoall", routed, e), "one all-to-all over the e expert-parallel ranks: 1/e of the copies stay local")
    dv.defines("V_EP^layer", 4 * one, "forward: dispatch to the experts and combine back; backward: the gradients of both, the same bytes")
    dv.concludes("comms.ep.per_layer")
    return dv


def ep_per_layer_sp() -> Derivation:
    dv = Derivation("comms.ep.per_layer.sp", "Sequence parallelism splits the dispatched tokens", (MEGATRON_MOE,))
    dv.defines("V_EP,SP^layer", get("comms.ep.per_layer").dimensioned.subs(s, s / t), "each tensor-parallel rank dispatches its s/(c·t) tokens")
    dv.concludes("comms.ep.per_layer.sp")
    return dv


def ep_per_microbatch(suffix: str) -> Derivation:
    target = "comms.ep.per_microbatch" + suffix
    dv = Derivation(target, "The stage's MoE layers", (MEGATRON_MOE,))
    dv.defines("V_EP", l_moe / p * get("comms.ep.per_layer" + suffix).dimensioned, "the stage's l_moe/p MoE layers")
    dv.concludes(target)
    return dv


def _dense_and_expert_collectives(dv: Derivation, per_part) -> sp.Expr:
    dense = dv.defines("V_dense", per_part(q_w * (P - P_exp) / (t * p), c * d), "dense gradients of the rank's Ψ − Ψ_E, over its c·d replicas")
    expert = dv.defines("V_experts", per_part(q_w * P_exp / (t * p * e), c * d / e), "expert gradients of its Ψ_E/e, over the c·d/e ranks holding the same experts")
    return dense + expert


def dp_sent() -> Derivation:
    dv = Derivation("comms.dp.ep_cp.sent_per_iteration", "Gradient all-reduce with expert and context parallelism", (DEEPSPEED_MOE, MEGATRON_CP))
    total = _dense_and_expert_collectives(dv, lambda size, over: collective("allreduce", size, over))
    dv.defines("V_DP", total, "both all-reduces")
    dv.concludes("comms.dp.ep_cp.sent_per_iteration", of="V_DP")
    dv.defines("V_DP(e = c = 1)", total.subs({e: 1, c: 1}), "no expert or context parallelism")
    dv.equals("V_DP^3D", get("comms.dp.sent_per_iteration").part, "exactly comms.dp.sent_per_iteration")
    return dv


def zero3_sent() -> Derivation:
    dv = Derivation("comms.zero.stage3.ep_cp.sent", "ZeRO-3 traffic with expert and context parallelism", (ZERO, DEEPSPEED_MOE))
    per_part = lambda size, over: 2 * collective("allgather", size, over) + collective("reduce_scatter", size, over)  # noqa: E731
    total = _dense_and_expert_collectives(dv, per_part)
    dv.defines("V_ZeRO3", total, "parameters all-gathered for forward and for backward, gradients reduce-scattered, for each part")
    dv.concludes("comms.zero.stage3.ep_cp.sent", of="V_ZeRO3")
    dv.defines("V(e = c = 1)", total.subs({e: 1, c: 1}), "no expert or context parallelism")
    dv.equals("V_ZeRO3^3D", get("comms.zero.stage3.sent").part, "exactly comms.zero.stage3.sent")
    return dv


# --- context parallelism -------------------------------------------------------------------


def _cp_layer(target: str, base: str, why: str) -> Derivation:
    dv = Derivation(target, "Context parallelism: the flash-core layer of s/c tokens", (MEGATRON_CP, RING))
    core = dv.defines("A_flash", get(base).dimensioned + LSE, f"{why}, plus the flash kernel's fp32 log-sum-exp (4 bytes per head and token)")
    dv.defines("A_CP", core.subs(s, s / c), "every stored tensor holds the rank's s/c tokens; ring attention stores no s×s scores")
    dv.concludes(target)
    dv.equals("A_flash / c", core / c, "exactly 1/c of the same layer without context parallelism", of="A_CP", aside=True)
    return dv


def cp_layer() -> Derivation:
    return _cp_layer("memory.activations.layer.cp", "memory.activations.layer.general.selective",
                     "Q, K, V and every per-token tensor of the tensor-parallel layer (memory.activations.layer.general.selective)")


def cp_layer_sp() -> Derivation:
    return _cp_layer("memory.activations.layer.cp_sp", "memory.activations.layer.general.selective_sp",
                     "the same with sequence parallelism (memory.activations.layer.general.selective_sp)")


def _cp_full(target: str, base: str) -> Derivation:
    dv = Derivation(target, "Full recompute under context parallelism", (MEGATRON_CP,))
    dv.defines("A_CP,full", get(base).dimensioned.subs(s, s / c), "the checkpointed input holds s/c tokens")
    dv.concludes(target)
    dv.equals("A_full / c", get(base).dimensioned / c, f"{base} divided by c")
    return dv


def cp_per_layer() -> Derivation:
    dv = Derivation("comms.cp.per_layer", "Ring attention: K/V chunks around c ranks", (RING, MEGATRON_CP))
    chunk = dv.defines("x_KV", 2 * b * (s / c) * g * d_head / t * q, "this rank's K and V for its s/c tokens and g/t KV heads")
    forward = dv.defines("V_fwd", (c - 1) * collective("sendrecv", chunk, 2),
                         "c−1 steps: send the chunk held to the next rank while attending to it; after c−1 steps every rank has seen every chunk")
    backward = dv.defines("V_bwd", (c - 1) * collective("sendrecv", chunk, 2) + (c - 1) * collective("sendrecv", chunk, 2),
                          "backward passes K, V around again and the accumulating dK, dV with them")
    dv.defines("V_CP^layer", forward + backward, "forward and backward", parts=("V_fwd", "V_bwd"))
    dv.concludes("comms.cp.per_layer")
    return dv


def cp_per_microbatch() -> Derivation:
    dv = Derivation("comms.cp.per_microbatch", "The stage's layers", (RING,))
    dv.defines("V_CP", l / p * get("comms.cp.per_layer").part, "l/p layers per pipeline stage")
    dv.concludes("comms.cp.per_microbatch")
    return dv


# --- the distributed optimizer ---------------------------------------------------------------


def distributed_optimizer() -> Derivation:
    dv = Derivation("memory.distributed_optimizer", "Megatron's distributed optimizer is ZeRO stage 1", (DISTRIBUTED_OPTIMIZER, ZERO))
    rank = P / (t * p)
    dist = dv.defines(
        "M_dist",
        q_bf16 * rank + q_fp32 * rank + 3 * q_fp32 * rank / d,
        "bf16 weights and the fp32 main-gradient buffer stay whole on every data-parallel rank; the fp32 master weights, "
        "momentum and variance are sharded over d",
    )
    dv.concludes("memory.distributed_optimizer", of="M_dist")
    states = get("memory.model_states.fp32_grads").dimensioned / (t * p)
    adam = get("memory.optimizer.adam").dimensioned / (t * p)
    dv.defines("ZeRO-1(M_18)", states - adam + adam / d, "ZeRO stage 1 of the 18-byte recipe: only the optimizer states are partitioned")
    dv.equals("M_dist", dist, "the same bytes: the distributed optimizer is ZeRO-1", aside=True)
    dv.defines("M_ZeRO1 + fp32 grads", get("memory.zero.stage1").part + (q_fp32 - q_bf16) * rank,
               "ZeRO-1 of the 16-byte recipe, with the gradient kept in fp32 (2 more bytes per parameter)")
    dv.equals("M_dist", dist, "again the distributed optimizer", aside=True)
    dv.defines("Megatron's row", (3 + sp.Integer(6) / d) * q_bf16 * rank, "Megatron's table, bf16 parameters and fp32 gradients: 6 + 12/d bytes per parameter")
    dv.equals("M_dist", dist, "its closed form", aside=True)
    dv.defines("M_dist(d = 1)", dist.subs(d, 1), "a single replica")
    dv.equals("18Ψ/(t·p)", 9 * q_bf16 * rank, "Megatron's non-distributed column: 18 bytes per parameter", aside=True)
    return dv


DERIVATIONS = (
    experts,
    params_per_gpu,
    *(lambda stage=stage: zero_ep(stage) for stage in range(4)),
    ep_per_layer,
    ep_per_layer_sp,
    lambda: ep_per_microbatch(""),
    lambda: ep_per_microbatch(".sp"),
    dp_sent,
    zero3_sent,
    cp_layer,
    cp_layer_sp,
    lambda: _cp_full("memory.activations.layer.cp.full_recompute", "memory.activations.layer.full_recompute"),
    lambda: _cp_full("memory.activations.layer.cp.full_recompute_sp", "memory.activations.layer.full_recompute_sp"),
    cp_per_layer,
    cp_per_microbatch,
    distributed_optimizer,
)
