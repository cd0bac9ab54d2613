"""The other calculators' formulas, stated from their sources in this catalogue's symbols, as cited claims.

Each is what a peer computes, not what a framework holds: derivations/topics/peers.py proves, for each, the exact difference
from the measured form (formulas/topics/framework_memory.py, the decoder forms) and names its terms.

- Megatron-LM's estimator (NVIDIA/Megatron-LM megatron/training/theoretical_memory_usage.py at d98e8a64):
  ``compute_weight_and_optimizer_memory`` (L12–305): the most loaded shard's TP-sharded T (attention, MLPs, shared
  experts, one MTP block, the embedding; ÷ t), replicated R (norms, routers, the final norm ÷ p) and expert X parameters
  (÷ t_E·e), at 18 bytes, or 6 + 12/d with the distributed optimizer; ``compute_activation_memory`` (L308–379, taken
  with sequence parallelism and selective recompute): sbh(18 + 4·d_ff/h) per layer, l layers, the input ids (8sbp) and
  the embedding dropout (sbhp), at p = 1 the head and loss 4sbh(1 + V/h), all ÷ t; ``compute_activation_memory_without_sp``
  (L382–453, every other case): 1.05·(sbh(10 + 24/t)·l + 8sbp + sbhp + at p = 1 2(sbV/t + sbh)). Its FLOPs
  (megatron/training/training.py ``num_floating_point_operations``, L1009–1311): 6 FLOPs per token per GEMM parameter it
  counts, the s² core halved for the causal mask, the logits and one MTP head.
- DeepSpeed (microsoft/DeepSpeed at 38327e07): ``estimate_zero2_model_states_mem_needs`` (stage_1_and_2.py L2430–2447):
  2Ψ + 18Ψ/N; ``estimate_zero3_model_states_mem_needs`` (stage3.py L3008–3044): 4λ + 18Ψ/N, Ψ the parameters of the
  model object on a rank (the (t, p) shard under Megatron-DeepSpeed), N the GPUs that partition them (d), λ its
  largest module.
- llm-analysis (cli99/llm-analysis llm_analysis/analysis.py at d841e40a): activations per layer (L553–766, training,
  no recompute, flash attention, sp = t): the attention's input 2sbh/sp, Q, K, V and the projection input 4·2sbh/t, the
  flash kernel's output and an fp32 statistic (2sbh + 4asb)·2/t, a dropout mask sbh/sp; the MLP's input 2sbh/sp and
  its GELU and fc2 inputs 2·2·d_ff·sb/t (a MoE layer: the router's and the k copies' inputs); two fp32 layernorm
  inputs 4sbh/sp each; the whole model l layers (not l/p) of one micro-batch, the embedding 2sbh/t, the logits 2sbV/t,
  one more layernorm (L2103–2138); its KV cache 2bs·(h/a)·max(g/t, 1) values a layer (L886–919); its forward FLOPs
  (L921–1042) per layer 4bsh² + 4bsh²·g/a + 4bs²h + (6 | 4)·bsh·d_ff and the logits 2bshV, training 3× the forward.
- EleutherAI's Transformer Math 101 (Anthony, Biderman, Schoelkopf 2023): C = 6PD; activations per GPU sbhl(10 + 24/t)
  with selective recompute, + 5as/(ht) without, 2sbhl with full recompute (Korthikanti et al. without sequence
  parallelism); a 3D ZeRO-1 run's states 2Ψ/(p·t) weights + 12Ψ/N optimizer + 2Ψ/p gradients.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import sympy as sp

from llm_formulas.formulas.vocabulary.catalogue import Condition, Source, formula
from llm_formulas.formulas.vocabulary.symbols import (
    E, P, P_unit, V, a, b, c_byte, d, d_ff, d_head, d_moe, d_nope, d_rope, d_sh, d_v, e, g, gated, h, k, l, l_moe, mla,
    n_mtp, norm_bias, p, piped, q, q_lora, r_kv, r_q, s, sh_gate, t, t_e, tied, u_flop, u_param,
)

ESTIMATOR = "megatron-estimator"
DEEPSPEED = "deepspeed-zero"
LLM_ANALYSIS = "llm-analysis"
MATH = "anthony2023"

M_ONE = Condition("m ≥ p and no interleaving (v = 1): the estimator's min(1, m/p) and interleaving factors are 1")
WHOLE_STAGES = Condition("p divides l (the estimator divides the layers evenly, fractions allowed)")
MHA_HEADS = Condition("d_head = h/a (llm-analysis and Transformer Math size the heads from h)")
DENSE_ONLY = Condition("a dense model without multi-head latent attention")

# --- Megatron-LM's estimator, in its own groups (theoretical_memory_usage.py L59–137) ---------------------------------

NORM = 1 + norm_bias  # its norm_size: 1 for RMSNorm, 2 for LayerNorm
MLA_ATTENTION = (q_lora * r_q * (h + a * (d_nope + d_rope) + NORM) + (1 - q_lora) * h * a * (d_nope + d_rope)
                 + r_kv * (h + a * (d_nope + d_v) + NORM) + h * d_rope + a * d_v * h)  # L62–80
ATTENTION_COUNT = (1 - mla) * 2 * h * d_head * (a + g) + mla * MLA_ATTENTION  # L81–93: 2h²(1 + g/a)(q/h), q = a·d_head
attention = formula(
    "peers.megatron.attention",
    ATTENTION_COUNT * u_param,
    "parameter",
    "Megatron-LM's estimator: one layer's attention parameters, 2h·d_head·(a + g) (its 2h²(1 + g/a)), or MLA's from its "
    "ranks with their norms",
    sources=[Source(ESTIMATOR, "theoretical_memory_usage.py L62–93")],
    symbol_latex=r"\Psi_{attn}^{Megatron}",
)
ATTENTION = attention.part / u_param  # a count, as the estimator's groups add it
DENSE_MLP = (2 + gated) * h * d_ff  # L103: 2·h·d_ff·(3/2 if swiglu)
SHARED_MLP = (2 + gated) * h * d_sh  # L104
ROUTED = (2 + gated) * h * d_moe * E  # L110–112, per MoE layer
LAYER_NORMS = 2 * h * NORM  # L127
ROUTER = h * E + sh_gate * h  # L128–137 (no router bias: add_bias_linear off in MoE recipes)
SHARDED = ((ATTENTION + DENSE_MLP) * (l - l_moe) + (ATTENTION + SHARED_MLP) * l_moe) / p + n_mtp * (ATTENTION + SHARED_MLP) \
    + V * h + (1 - tied) * (1 - piped) * V * h  # L247–267: the most loaded shard's, ÷ t
REPLICATED = (LAYER_NORMS * (l - l_moe) + (LAYER_NORMS + ROUTER) * l_moe + NORM * h) / p + n_mtp * (LAYER_NORMS + ROUTER)
EXPERTS = (ROUTED * l_moe / p + n_mtp * ROUTED) / (t_e * e)
EXPERT_REPLICAS = t * d / (t_e * e)  # L205–212: world/(etp·ep·pp)

ESTIMATOR_GROUPS = Source(ESTIMATOR, "theoretical_memory_usage.py L59–267")
sharded = formula(
    "peers.megatron.params.sharded",
    SHARDED * u_param,
    "parameter",
    "Megatron-LM's estimator: the parameters its most loaded shard splits over the t TP ranks: l/p layers' attention and "
    "dense MLPs (shared experts in MoE layers), one MTP block, the embedding, at p = 1 an untied head",
    sources=[ESTIMATOR_GROUPS],
    symbol_latex=r"T_{Megatron}",
)
replicated = formula(
    "peers.megatron.params.replicated",
    REPLICATED * u_param,
    "parameter",
    "Megatron-LM's estimator: the parameters every TP rank of its most loaded shard holds whole: the layers' norms and "
    "routers, 1/p of the final norm, the MTP block's norms and router",
    sources=[ESTIMATOR_GROUPS],
    symbol_latex=r"R_{Megatron}",
)
experts = formula(
    "peers.megatron.params.experts",
    EXPERTS * u_param,
    "parameter",
    "Megatron-LM's estimator: the routed experts of its most loaded shard, over t_E·e ranks",
    sources=[ESTIMATOR_GROUPS],
    symbol_latex=r"X_{Megatron}",
)
megatron_params = formula(
    "peers.megatron.params",
    sharded.part / t + replicated.part + experts.part,
    "parameter",
    "Megatron-LM's estimator: the parameters of the most loaded shard (the first stage: l/p layers, one MTP block, the "
    "embedding; at p = 1 an untied head too)",
    sources=[Source(ESTIMATOR, "theoretical_memory_usage.py L59–267")],
    conditions=[WHOLE_STAGES],
    related=["params.stage.first"],
    symbol_latex=r"\Psi_{Megatron}",
)
megatron_states = formula(
    "peers.megatron.states",
    18 * c_byte * megatron_params.part / u_param,
    "byte",
    "Megatron-LM's estimator: weight and optimizer memory of the most loaded shard without the distributed optimizer, "
    "18 bytes per parameter (bf16 weight, fp32 main gradient, fp32 master weight, Adam's m and v)",
    sources=[Source(ESTIMATOR, "theoretical_memory_usage.py L293–303 (num_bytes_per_parameter)")],
    conditions=[WHOLE_STAGES],
    related=["peers.megatron.params", "memory.states"],
    symbol_latex=r"M_{Megatron}",
)
megatron_distopt = formula(
    "peers.megatron.states.distributed_optimizer",
    c_byte * ((6 + 12 / d) * (sharded.part / t + replicated.part) + (6 + 12 / EXPERT_REPLICAS) * experts.part) / u_param,
    "byte",
    "Megatron-LM's estimator with --use-distributed-optimizer: 6 + 12/d bytes per parameter, the experts' over their "
    "t·d/(t_E·e) expert-data-parallel replicas",
    sources=[Source(ESTIMATOR, "theoretical_memory_usage.py L205–212, L293–303")],
    conditions=[WHOLE_STAGES, Condition("c = 1: the estimator's data_parallel_size leaves context parallelism out")],
    related=["peers.megatron.states", "memory.distributed_optimizer"],
    symbol_latex=r"M_{Megatron}^{dist}",
)
megatron_activations = formula(
    "peers.megatron.activations",
    (s * b * h * (18 + 4 * d_ff / h) * l + 8 * s * b * p + s * b * h * p + (1 - piped) * 4 * s * b * h * (1 + V / h)) / t * c_byte,
    "byte",
    "Megatron-LM's estimator with sequence parallelism and selective recompute: the first stage's activations per GPU "
    "(Korthikanti et al. Table 2 at l layers, the input ids and embedding dropout of p micro-batches, at p = 1 the head "
    "and loss)",
    sources=[Source(ESTIMATOR, "theoretical_memory_usage.py L308–379"), Source("korthikanti2022", "Table 2")],
    conditions=[M_ONE, Condition("sequence parallelism and selective recompute (report_theoretical_memory L466–470)")],
    related=["memory.activations.layer.decoder.selective_sp"],
    symbol_latex=r"A_{Megatron}",
)
megatron_activations_without_sp = formula(
    "peers.megatron.activations.without_sp",
    sp.Rational(105, 100) * (s * b * h * (10 + 24 / t) * l + 8 * s * b * p + s * b * h * p
                             + (1 - piped) * 2 * (s * b * V / t + s * b * h)) * c_byte,
    "byte",
    "Megatron-LM's estimator in every other case (no sequence parallelism, or another recompute): Korthikanti's "
    "selective TP row at l layers, the ids and embedding dropout, at p = 1 the logits and final norm in 16 bits, +5 %",
    sources=[Source(ESTIMATOR, "theoretical_memory_usage.py L382–453")],
    conditions=[M_ONE],
    related=["memory.activations.layer.decoder.selective"],
    symbol_latex=r"A_{Megatron}^{no\,SP}",
)
CORE = (1 - mla) * 6 * a * d_head + mla * 3 * a * (d_nope + d_rope + d_v)  # per token pair: causal half of QKᵀ and ·V
FLOPS_SOURCE = Source(ESTIMATOR, "training.py L1009–1311 (transformer_flops)")
LINEAR_ATTENTION_COUNT = (1 - mla) * (h * (a * d_head + 2 * g * d_head) + a * d_head * h) \
    + mla * (q_lora * r_q * (h + a * (d_nope + d_rope) + 1) + (1 - q_lora) * h * a * (d_nope + d_rope)
             + r_kv * (h + a * (d_nope + d_v) + 1) + h * d_rope + a * d_v * h)
linear_attention = formula(
    "peers.megatron.attention.linear",
    LINEAR_ATTENTION_COUNT * u_param,
    "parameter",
    "the attention weights Megatron-LM's FLOP count multiplies per token: Q, K, V and O, or MLA's down and up "
    "projections with one weight per latent norm channel",
    sources=[FLOPS_SOURCE],
    related=["peers.megatron.attention"],
    symbol_latex=r"\Psi_{attn}^{F}",
)
LINEAR_ATTENTION = linear_attention.part / u_param  # a count, as the estimator multiplies it
flops_linear = formula(
    "peers.megatron.flops.linear",
    6 * b * s * ((2 + gated) * h * d_ff * (l - l_moe) + (2 + gated) * h * (d_moe * k + d_sh) * l_moe + LINEAR_ATTENTION * l
                 + n_mtp * (3 * h + 2 * h * h) + h * V * (n_mtp + 1)) * u_flop,
    "FLOP",
    "Megatron-LM's FLOPs of the weights for b sequences: 3 GEMMs (forward, wgrad, dgrad) of 2 FLOPs per multiply-add "
    "for the MLPs, the k routed and the shared experts, the attention projections, one MTP head and the logits",
    sources=[FLOPS_SOURCE],
    symbol_latex=r"F_{Megatron}^{lin}",
)
flops_core = formula(
    "peers.megatron.flops.core",
    b * s**2 * l * CORE * u_flop,
    "FLOP",
    "Megatron-LM's FLOPs of the attention core for b sequences: QKᵀ and scores·V over the s² square, halved for the "
    "causal mask, forward and backward",
    sources=[FLOPS_SOURCE],
    symbol_latex=r"F_{Megatron}^{core}",
)
megatron_flops = formula(
    "peers.megatron.flops",
    flops_linear.part + flops_core.part,
    "FLOP",
    "Megatron-LM's num_floating_point_operations for b sequences: 3 GEMMs (forward, wgrad, dgrad) of 2 FLOPs per "
    "multiply-add for the MLPs, the attention projections, one MTP head and the logits; the s² core halved for the causal mask",
    sources=[FLOPS_SOURCE],
    related=["flops.decoder.training"],
    symbol_latex=r"F_{Megatron}",
)

# --- DeepSpeed's ZeRO estimators ---------------------------------------------------------------------------------

deepspeed_zero2 = formula(
    "peers.deepspeed.zero2",
    (2 * P + 18 * P / d) * c_byte / u_param,
    "byte",
    "DeepSpeed's estimate_zero2_model_states_mem_needs without offload: 2Ψ + 18Ψ/N, the 16-bit parameters whole and "
    "'2 grads16 + 4 grads32 + 4 params32 + 8 optimizer states' partitioned over the N = d replicas",
    sources=[Source(DEEPSPEED, "stage_1_and_2.py L2430–2447")],
    conditions=[Condition("Ψ: the parameters of the model object on one rank (the GPU's (t, p) shard)")],
    related=["memory.states.stage2", "memory.deepspeed.step_fp32_grads"],
    symbol_latex=r"M_{DS}^{ZeRO-2}",
)
deepspeed_zero3 = formula(
    "peers.deepspeed.zero3",
    (4 * P_unit + 18 * P / d) * c_byte / u_param,
    "byte",
    "DeepSpeed's estimate_zero3_model_states_mem_needs without offload: 4λ for the largest module's gathered 16-bit weights "
    "and gradients, 18Ψ/N partitioned",
    sources=[Source(DEEPSPEED, "stage3.py L3008–3044")],
    conditions=[Condition("Ψ: the parameters of the model object on one rank; λ its largest module (P_unit)")],
    related=["memory.states.stage3", "memory.zero3.gathered"],
    symbol_latex=r"M_{DS}^{ZeRO-3}",
)

# --- llm-analysis ------------------------------------------------------------------------------------------------

LA_ATTENTION = 2 * h + 4 * 2 * h + (2 * h + 4 * a) * 2 + h  # input, Q/K/V/proj inputs, flash output and statistic, mask
LA_DENSE_MLP = 2 * h + 2 * 2 * d_ff  # the MLP's input; GELU's and fc2's inputs
LA_MOE_MLP = 2 * 2 * h + 2 * k * h * t + 2 * k * t + 2 * k * h + 2 * 2 * d_moe * k  # L701–712 (× t where not ÷ t)
LA_NORMS = 2 * 4 * h  # two fp32 layernorm inputs
LA_OUTSIDE = 2 * h + 2 * V + 4 * h  # the embedding's output, the logits, the last layernorm (L2128–2138, L758–766)
llm_analysis_activations = formula(
    "peers.llm_analysis.activations",
    (l * (LA_ATTENTION + LA_DENSE_MLP + LA_NORMS) + LA_OUTSIDE) * s * b / t * c_byte,
    "byte",
    "llm-analysis's training activations per GPU of a dense model, no recompute, flash attention, sp = t: l layers of "
    "one micro-batch, the embedding, the logits and the last layernorm",
    sources=[Source(LLM_ANALYSIS, "analysis.py L553–766 (per layer), L2103–2138 (the model)")],
    conditions=[DENSE_ONLY],
    related=["memory.activations.layer.decoder.flash_sp"],
    symbol_latex=r"A_{llm\text{-}analysis}",
)
llm_analysis_activations_moe = formula(
    "peers.llm_analysis.activations.moe",
    (l * (LA_ATTENTION + LA_MOE_MLP + LA_NORMS) + LA_OUTSIDE) * s * b / t * c_byte,
    "byte",
    "llm-analysis's training activations per GPU of a mixture of experts (every layer MoE, top-k, no shared expert): "
    "its MoE MLP keeps two h-wide inputs, the k copies' inputs (whole and 1/t) and their token indices",
    sources=[Source(LLM_ANALYSIS, "analysis.py L701–712 (the MoE MLP), L553–766, L2103–2138")],
    conditions=[Condition("every layer a mixture of experts without shared experts; no multi-head latent attention")],
    related=["memory.activations.layer.decoder.moe.flash_sp"],
    symbol_latex=r"A_{llm\text{-}analysis}^{MoE}",
)
llm_analysis_kv = formula(
    "peers.llm_analysis.kv_cache",
    2 * l / p * b * s * (h / a) * sp.Max(g / t, 1) * q,
    "byte",
    "llm-analysis's KV cache per GPU: for each of the stage's l/p layers K and V of h/a values for max(g/t, 1) heads, b "
    "sequences of s tokens",
    sources=[Source(LLM_ANALYSIS, "analysis.py L886–919")],
    conditions=[Condition("no multi-head latent attention"), MHA_HEADS],
    related=["memory.kv_cache"],
    symbol_latex=r"M_{KV}^{llm\text{-}analysis}",
)
llm_analysis_flops = formula(
    "peers.llm_analysis.flops",
    3 * (l * (4 * b * s * h * h + 4 * b * s * h * h * g / a + 4 * b * s**2 * h + (4 + 2 * gated) * b * s * h * d_ff)
         + 2 * b * s * h * V) * u_flop,
    "FLOP",
    "llm-analysis's training FLOPs for b sequences: 3× the forward (QKV and output projections, QKᵀ and ·V over the "
    "full square, the MLP, the logits)",
    sources=[Source(LLM_ANALYSIS, "analysis.py L921–1042, L2232–2249")],
    conditions=[DENSE_ONLY, MHA_HEADS],
    related=["flops.decoder.training"],
    symbol_latex=r"F_{llm\text{-}analysis}",
)

# --- EleutherAI's Transformer Math 101 ---------------------------------------------------------------------------

math_activations = formula(
    "peers.transformer_math.activations",
    s * b * h * l * (10 + 24 / t) * c_byte,
    "byte",
    "Transformer Math 101's activations per GPU with selective recompute: sbhL(10 + 24/t) (Korthikanti et al., "
    "no sequence parallelism)",
    sources=[Source(MATH, "Activations and Batch Size"), Source("korthikanti2022", "Table 2")],
    conditions=[DENSE_ONLY],
    related=["memory.activations.layer.selective", "peers.megatron.activations.without_sp"],
    symbol_latex=r"A_{TM101}",
)
math_states = formula(
    "peers.transformer_math.states",
    (2 * P / (p * t) + 12 * P / (t * p * d) + 2 * P / p) * c_byte / u_param,
    "byte",
    "Transformer Math 101's 3D-parallel ZeRO-1 states per GPU: model/(PP·TP) + optimizer/N + gradients/PP, 2, 12 and 2 "
    "bytes per parameter",
    sources=[Source(MATH, "3D Parallelism; Sharded Optimizers")],
    conditions=[DENSE_ONLY],
    related=["memory.states.stage1"],
    symbol_latex=r"M_{TM101}",
)
math_flops = formula(
    "peers.transformer_math.flops",
    6 * P * b * s * u_flop / u_param,
    "FLOP",
    "Transformer Math 101's compute for b sequences of s tokens: C = 6PD",
    sources=[Source(MATH, "Compute Requirements")],
    related=["flops.decoder.training"],
    symbol_latex=r"F_{TM101}",
)


# --- which claim compares which figure (read by ``llm-formulas compare``) ----------------------------------------

@dataclass(frozen=True)
class Claim:
    """One peer figure: its formula (concluded by a derivation of derivations/topics/peers.py whose "Δ …" steps are the terms),
    the setting the claim holds in, and what it cannot express."""

    peer: str
    quantity: str
    formula_id: str
    setting: str
    zero: tuple[int, ...] = (0, 1, 2, 3)  # the ZeRO stages of the layout it answers for
    sequence_parallel: bool | None = None  # the layout's SP it answers for (None: either)
    cannot: Callable[[dict[str, int]], str | None] = lambda model: None
    per_gpu_total: bool = False  # P is the whole model's count (else the first stage's GPU's)


def _no_latent(model: dict[str, int]) -> str | None:
    return "multi-head latent attention" if model.get("mla") else None


def _dense(model: dict[str, int]) -> str | None:
    if model.get("mla"):
        return "multi-head latent attention"
    return "mixture-of-experts layers" if model.get("l_moe") else None


def _llm_analysis_moe(model: dict[str, int]) -> str | None:
    if model.get("mla"):
        return "multi-head latent attention"
    if model.get("d_sh"):
        return "shared experts"
    if model.get("l_moe") and model["l_moe"] != model["l"]:
        return "dense layers among its MoE layers"
    return None


PEERS = {
    "megatron": "Megatron-LM's estimator (theoretical_memory_usage.py, num_floating_point_operations)",
    "deepspeed": "DeepSpeed's ZeRO estimators (estimate_zero2/3_model_states_mem_needs)",
    "llm-analysis": "llm-analysis (cli99/llm-analysis)",
    "transformer-math": "EleutherAI's Transformer Math 101",
}
CLAIMS = (
    Claim("megatron", "model states", "peers.megatron.states", "priced as Megatron Core, ZeRO 0", zero=(0,)),
    Claim("megatron", "model states", "peers.megatron.states.distributed_optimizer",
          "priced as Megatron Core, the distributed optimizer (ZeRO 1)", zero=(1,)),
    Claim("megatron", "activations", "peers.megatron.activations",
          "Megatron Core, sequence parallelism and selective recompute (the estimator's SP branch)", sequence_parallel=True),
    Claim("megatron", "activations", "peers.megatron.activations.without_sp",
          "Megatron Core, selective recompute without sequence parallelism (the estimator's other branch)",
          sequence_parallel=False),
    Claim("megatron", "FLOPs", "peers.megatron.flops", "one global batch, FlopCounterMode's count (the full s² square)"),
    Claim("deepspeed", "model states", "peers.deepspeed.zero2", "priced as DeepSpeed ZeRO-2 in bf16 at its backward",
          zero=(0, 1, 2)),
    Claim("deepspeed", "model states", "peers.deepspeed.zero3", "priced as DeepSpeed ZeRO-3 in bf16 at its backward",
          zero=(3,)),
    Claim("llm-analysis", "activations", "peers.llm_analysis.activations",
          "Megatron Core, no recompute, flash attention, sequence parallelism (llm-analysis's defaults)", cannot=_dense),
    Claim("llm-analysis", "activations", "peers.llm_analysis.activations.moe",
          "Megatron Core, no recompute, flash attention, sequence parallelism (llm-analysis's defaults)",
          cannot=_llm_analysis_moe),
    Claim("llm-analysis", "KV cache", "peers.llm_analysis.kv_cache", "one replica's stage, per GPU, b sequences of s tokens",
          cannot=_no_latent),
    Claim("llm-analysis", "FLOPs", "peers.llm_analysis.flops", "one global batch, FlopCounterMode's count", cannot=_dense),
    Claim("transformer-math", "activations", "peers.transformer_math.activations",
          "Megatron Core, selective recompute without sequence parallelism", cannot=_dense),
    Claim("transformer-math", "model states", "peers.transformer_math.states",
          "priced as Megatron Core, the distributed optimizer (ZeRO 1)", cannot=_dense, per_gpu_total=True),
    Claim("transformer-math", "FLOPs", "peers.transformer_math.flops", "one global batch (D = B·s)", cannot=_dense,
          per_gpu_total=True),
)
