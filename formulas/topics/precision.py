"""Precision and fine-tuning memory: FP8 training, LoRA and QLoRA.

FP8 training, the stated recipe (NVIDIA Transformer Engine with Megatron-LM, ``--fp8-format hybrid``;
Micikevicius et al. 2022): the GEMMs run in FP8, E4M3 for weights and activations, E5M2 for gradients.
  - master weights, Adam momentum and variance: fp32 (12 bytes per parameter), as in bf16 training;
  - the model's weights: bf16 (2), and their gradients bf16 (2);
  - an FP8 copy of every weight for the forward GEMM and an FP8 transposed copy for the backward
    (Hopper's FP8 GEMMs take only the "TN" layout; Blackwell's MXFP8 keeps row- and column-wise copies):
    1 + 1 bytes, cached across the micro-batches of a step: 18 bytes per parameter instead of 16;
  - activations: each GEMM's input is saved for the weight gradient in FP8 (1 byte instead of 2): the
    QKV input, the output projection's input, the MLP's input and the down projection's input; every other
    saved tensor (norm inputs, Q, K, V of the attention core, the MLP's activations) stays 16-bit.
  DeepSeek-V3 (DeepSeek-AI 2024, §3.3) caches the same GEMM inputs in FP8 and keeps fp32 master weights and
  gradients; it further stores Adam's moments in bf16, which this recipe does not.
LoRA (Hu et al. 2021): a frozen W (d_out×d_in) gains B·A with A r×d_in and B d_out×r: r·(d_in + d_out)
trainable parameters per target matrix. PEFT keeps the adapters in fp32 (autocast_adapter_dtype, the
default): 4 bytes of weight, 4 of gradient, 8 of Adam moments, 16 per adapter parameter; the frozen base
has no gradient and no optimizer state.
QLoRA (Dettmers et al. 2023, §3): the base's linear weights in 4-bit NormalFloat, one fp32 absmax per block
of 64 weights (32/64 = 0.5 bits per weight); double quantization stores those constants in 8 bits with one
fp32 constant per 256 of them (8/64 + 32/(64·256) = 0.127 bits). LLM.int8() (Dettmers et al. 2022) keeps one
fp32 scale per row of d_in weights. Embeddings, norms and the output head stay 16-bit (Ψ_16).
"""

from __future__ import annotations

import sympy as sp

from llm_formulas.formulas.topics import architecture as arch
from llm_formulas.formulas.topics import memory as mem
from llm_formulas.formulas.vocabulary.catalogue import Condition, Source, formula
from llm_formulas.formulas.topics.parallelism import EXPERTS_SPLIT
from llm_formulas.formulas.vocabulary.symbols import (
    a,
    b,
    B_q,
    B_q2,
    c,
    c_byte,
    constant_values,
    d,
    d_ff,
    d_head,
    d_in,
    d_lat,
    d_moe,
    d_out,
    d_sh,
    E,
    e,
    g,
    gated,
    h,
    l,
    l_moe,
    lora_down,
    lora_gate,
    lora_k,
    lora_o,
    lora_q,
    lora_up,
    lora_v,
    mla,
    moe_lat,
    P,
    p,
    P_exp,
    P_keep,
    P_lora,
    q_base,
    q_bf16,
    q_fp32,
    q_fp8,
    q_int4,
    q_int8,
    r_lora,
    s,
    t,
    u_flop,
    u_param,
)

MICIKEVICIUS = Source("micikevicius2022", "§3 (E4M3 for weights and activations, E5M2 for gradients; 1 byte each)")
TRANSFORMER_ENGINE = Source("transformer-engine", "FP8 GEMMs with delayed scaling; weights cast to FP8 once per step and cached "
                            "with their transposes; the FP8 input of each Linear saved for backward")
DEEPSEEK_V3 = Source("deepseek2024", "§3.3 FP8 training: FP8 GEMM inputs cached for backward; fp32 master weights and "
                     "gradients; bf16 Adam moments")
HU = Source("hu2021", "§4.1 (ΔW = BA, B d×r, A r×k)")
PEFT = Source("peft", "LoraConfig (target_modules, r), LoraModel; adapters kept in fp32 (autocast_adapter_dtype=True)")
QLORA = Source("dettmers2023", "§3: NF4, blocksize 64, double quantization 0.5 → 0.127 bits per parameter")
INT8 = Source("dettmers2022", "§3.1 vector-wise quantization: one scale per row")
BNB = Source("transformers", "integrations/bitsandbytes.py: replace_with_bnb_linear, lm_head skipped")

# --- FP8 ------------------------------------------------------------------------------

fp8_states = formula(
    "memory.fp8.model_states",
    (q_bf16 + 2 * q_fp8 + q_bf16 + 3 * q_fp32) * P,
    "byte",
    "model states of FP8 training: bf16 weights, an FP8 copy and an FP8 transposed copy, bf16 gradients, fp32 master "
    "weights and Adam moments (18Ψ)",
    sources=[TRANSFORMER_ENGINE, MICIKEVICIUS, mem.ZERO],
    related=["memory.model_states"],
    symbol_latex=r"M_{states}^{FP8}",
    notes="The FP8 copies are of the GEMM weights; the embedding and the output head stay bf16, so 2Ψ bytes of copies "
    "is an upper bound by 2·(V·h + V·h) bytes.",
)
fp8_copies = formula(
    "memory.fp8.weight_copies",
    2 * q_fp8 * ((P - P_exp) / (t * p) + P_exp / (t * p * e)),
    "byte",
    "per GPU, the FP8 weight and its transpose for the weights the GPU holds (ZeRO stage 0–2: weights whole)",
    sources=[TRANSFORMER_ENGINE, MICIKEVICIUS],
    conditions=EXPERTS_SPLIT,
    related=["memory.fp8.model_states", "params.per_gpu.ep"],
    symbol_latex=r"M_{FP8\,copies}",
)
fp8_copies_zero3 = formula(
    "memory.fp8.weight_copies.zero3",
    2 * q_fp8 * P / (t * p * c * d),
    "byte",
    "per GPU under ZeRO-3: the FP8 copies of the GPU's 1/(t·p·c·d) shard of the weights (gathered copies are transient)",
    sources=[TRANSFORMER_ENGINE, mem.ZERO],
    related=["memory.fp8.weight_copies"],
    symbol_latex=r"M_{FP8\,copies}^{ZeRO3}",
)
FP8_SAVED = Condition("the inputs of the QKV, output, MLP-up (and gate) and MLP-down GEMMs are saved in FP8; all else 16-bit")

fp8_saving = formula(
    "memory.fp8.activations.saving",
    s * b * (2 * h + (a * d_head + d_ff) / t) * c_byte,
    "byte",
    "activation bytes of one layer per GPU that FP8 saves under tensor parallelism: one byte per value of the four "
    "GEMM inputs (the QKV and MLP inputs h each, whole; the projection input a·d_head/t and the down projection's "
    "input d_ff/t)",
    sources=[TRANSFORMER_ENGINE, DEEPSEEK_V3],
    conditions=[FP8_SAVED, mem.MEGATRON_TP],
    related=["memory.activations.layer.general.tp", "memory.activations.layer.general.selective"],
    symbol_latex=r"\Delta A_{FP8}",
    notes="Subtract from the no-recompute or selective-recompute layer; a fully recomputed layer keeps only its input, "
    "saved 16-bit.",
)
fp8_saving_sp = formula(
    "memory.fp8.activations.saving_sp",
    s * b * (2 * h + a * d_head + d_ff) / t * c_byte,
    "byte",
    "activation bytes of one layer per GPU that FP8 saves under tensor and sequence parallelism",
    sources=[TRANSFORMER_ENGINE, DEEPSEEK_V3],
    conditions=[FP8_SAVED, mem.MEGATRON_TP],
    related=["memory.fp8.activations.saving"],
    symbol_latex=r"\Delta A_{FP8}^{SP}",
)

# --- LoRA ---------------------------------------------------------------------------------

lora_matrix = formula(
    "params.lora.matrix",
    r_lora * (d_in + d_out) * u_param,
    "parameter",
    "LoRA adapter of one d_out×d_in weight: A (r×d_in) and B (d_out×r)",
    sources=[HU, PEFT],
    symbol_latex=r"\Psi_{LoRA}^{matrix}",
)
TARGETS = (  # switch, d_in, d_out: the projections of a Llama-style layer (PEFT's module names)
    (lora_q, h, a * d_head),
    (lora_k, h, g * d_head),
    (lora_v, h, g * d_head),
    (lora_o, a * d_head, h),
    (lora_gate, h, d_ff),
    (lora_up, h, d_ff),
    (lora_down, d_ff, h),
)
LORA_LAYER = sum(switch * r_lora * (width_in + width_out) for switch, width_in, width_out in TARGETS)  # the count, without its unit
lora_layer = formula(
    "params.lora.layer",
    LORA_LAYER * u_param,
    "parameter",
    "LoRA parameters of one layer: r·(d_in + d_out) for each targeted projection (q, k, v, o, gate, up, down)",
    sources=[HU, PEFT],
    related=["params.lora.matrix"],
    symbol_latex=r"\Psi_{LoRA}^{layer}",
)
lora_total = formula(
    "params.lora.total",
    l * lora_layer.part,
    "parameter",
    "trainable LoRA parameters of the model: the targeted projections of every layer",
    sources=[HU, PEFT],
    related=["params.lora.layer"],
    symbol_latex=r"\Psi_{LoRA}",
)
lora_states = formula(
    "memory.lora.adapter_states",
    (q_fp32 + q_fp32 + 2 * q_fp32) * P_lora,
    "byte",
    "the adapters' states: fp32 weights (their own master copy), fp32 gradients, Adam momentum and variance (16Ψ_LoRA)",
    sources=[PEFT, HU, mem.ZERO],
    related=["params.lora.total", "memory.model_states"],
    symbol_latex=r"M_{LoRA}",
)
KEPT_IN_MODEL = Condition("the 16-bit part is part of the model: Ψ_16 ≤ Ψ", sp.LessThan(P_keep, P))

frozen = formula(
    "memory.lora.frozen_base",
    q_base * (P - P_keep) + q_bf16 * P_keep,
    "byte",
    "the frozen base: its linear weights at q_base bytes (constants included), embeddings, norms and head in 16 bits; "
    "no gradient, no optimizer state",
    sources=[HU, QLORA],
    conditions=[KEPT_IN_MODEL],
    related=["memory.model_states.inference"],
    symbol_latex=r"M_{base}",
)
lora_training = formula(
    "memory.lora.states",
    frozen.part + lora_states.part,
    "byte",
    "model states of LoRA/QLoRA fine-tuning: the frozen base and the adapters with their gradients and Adam states",
    sources=[HU, QLORA, PEFT],
    conditions=[KEPT_IN_MODEL],
    related=["memory.lora.frozen_base", "memory.lora.adapter_states"],
    symbol_latex=r"M_{states}^{LoRA}",
)
lora_activations = formula(
    "memory.lora.activations.layer",
    4 * s * b * r_lora * (lora_q + lora_k + lora_v + lora_o + lora_gate + lora_up + lora_down) * c_byte,
    "byte",
    "the adapters' own activations of one layer: each adapter saves its r-wide fp32 product x·A for B's gradient "
    "(its input x is the frozen projection's, already stored)",
    sources=[HU, PEFT],
    conditions=[Condition("lora_dropout = 0 (PEFT's nn.Identity: no dropped copy of x)")],
    related=["params.lora.layer"],
    symbol_latex=r"A_{LoRA}^{layer}",
)
nf4 = formula(
    "memory.qlora.bytes_per_weight",
    q_int4 + q_int8 / B_q + q_fp32 / (B_q * B_q2),
    "byte/parameter",
    "bytes per 4-bit NormalFloat weight with double quantization: half a byte, an 8-bit constant per B_q weights, an "
    "fp32 constant per B_q·B_q2 weights",
    sources=[QLORA],
    related=["memory.qlora.bytes_per_weight.single", "memory.lora.frozen_base"],
    symbol_latex=r"q_{NF4}^{DQ}",
)
nf4_single = formula(
    "memory.qlora.bytes_per_weight.single",
    q_int4 + q_fp32 / B_q,
    "byte/parameter",
    "bytes per 4-bit NormalFloat weight without double quantization: an fp32 absmax per B_q weights",
    sources=[QLORA],
    related=["memory.qlora.bytes_per_weight"],
    symbol_latex=r"q_{NF4}",
)
int8 = formula(
    "memory.int8.bytes_per_weight",
    q_int8 + q_fp32 / d_in,
    "byte/parameter",
    "bytes per LLM.int8() weight: one byte, and an fp32 scale per row of d_in weights",
    sources=[INT8],
    related=["memory.model_states.inference.int8"],
    symbol_latex=r"q_{int8}",
)

# --- what a quantizer converts, per GPU states, and the FLOPs of LoRA training ----------------------

ATTENTION_WEIGHTS = 2 * h * a * d_head + 2 * h * g * d_head  # W_Q, W_O (h×a·d_head) and W_K, W_V (h×g·d_head)
d_ff_any = d_in  # a stand-in width, replaced by d_ff, d_moe or d_sh
MLP_WEIGHTS = (2 + gated) * h * d_ff_any  # up (and gate) and down matrices

quantized = formula(
    "params.quantized.linear",
    (l * ATTENTION_WEIGHTS + (l - l_moe) * MLP_WEIGHTS.subs(d_ff_any, d_ff)
     + l_moe * (E * MLP_WEIGHTS.subs({d_ff_any: d_moe, h: arch.EXPERT_WIDTH}) + h * E + MLP_WEIGHTS.subs(d_ff_any, d_sh)
                + moe_lat * 2 * h * d_lat)) * u_param,
    "parameter",
    "the weights a quantizer converts: every projection matrix of the l layers (Q, K, V, O; dense MLPs; routed and "
    "shared experts, routers and latent projections of the l_moe MoE layers); bitsandbytes replaces their nn.Linear, while biases, norms, "
    "embeddings and the output head stay 16-bit",
    sources=[QLORA, BNB],
    related=["params.decoder.attention", "params.decoder.mlp"],
    symbol_latex=r"\Psi_{q}",
)
kept = formula(
    "params.quantized.kept",
    sp.expand(arch.total.dimensioned - quantized.dimensioned),  # expanded: the projection matrices cancel symbolically, not in floats
    "parameter",
    "the parameters that stay 16-bit when the base is quantized (Ψ_16): everything but the layers' projection matrices",
    sources=[QLORA],
    conditions=list(arch.total.conditions),  # the decoder's layer counts: the MoE and hybrid layers are some of the l
    related=["params.quantized.linear", "params.decoder.total"],
    symbol_latex=r"\Psi_{16}",
    composed=arch.total.part - quantized.part,
)
lora_per_gpu = formula(
    "memory.lora.states.per_gpu",
    lora_training.part / (t * p),
    "byte",
    "LoRA/QLoRA model states per GPU: the frozen base and the adapters split over t·p model-parallel ranks, "
    "replicated over the data-parallel ones",
    sources=[HU, QLORA],
    conditions=[mem.SHARDED, KEPT_IN_MODEL],
    related=["memory.lora.states"],
    symbol_latex=r"M_{GPU}^{LoRA}",
)
NO_MLA = Condition("no latent attention (mla = 0): the adapters sit on q_proj, k_proj, v_proj, o_proj", sp.Eq(mla, 0))

adapters_forward = formula(
    "flops.lora.adapters.forward",
    2 * b * s * l * LORA_LAYER * u_flop,
    "FLOP",
    "forward FLOPs of the adapters: x·A and (x·A)·B, 2 per adapter parameter per token",
    sources=[HU],
    related=["params.lora.total"],
    symbol_latex=r"F_{LoRA}",
)
lora_forward = formula(
    "flops.lora.forward",
    arch.forward.part + adapters_forward.part,
    "FLOP",
    "forward FLOPs of LoRA fine-tuning: the base model's and the adapters'",
    sources=[HU, arch.FLOP_COUNTER],
    conditions=[*arch.forward.conditions, NO_MLA],
    related=["flops.decoder.forward", "flops.lora.adapters.forward"],
    symbol_latex=r"F_{fwd}^{LoRA}",
)
lora_backward = formula(
    "flops.lora.backward",
    arch.forward.at(dsa=0) + l * arch.scores.at(dsa=0) + 2 * adapters_forward.part,  # no MLA, so no DSA indexer
    "FLOP",
    "backward FLOPs of LoRA fine-tuning: the input gradient of every frozen GEMM (no weight gradient), both gradients "
    "of QKᵀ and scores·V, and both gradients of each adapter matrix",
    sources=[HU, arch.FLOP_COUNTER],
    conditions=[*arch.forward.conditions, NO_MLA],
    related=["flops.decoder.backward", "flops.lora.forward"],
    symbol_latex=r"F_{bwd}^{LoRA}",
    notes="Exact (FlopCounterMode on PEFT models) when the embedding's output requires grad, as PEFT's "
    "prepare_model_for_kbit_training and gradient checkpointing arrange (enable_input_require_grads); otherwise "
    "autograd skips the input gradients of layer 0's GEMMs that read the frozen input, and this is an upper bound.",
)

# --- LoRA targets of the families the count models ------------------------------------------

MODULES = {"q_proj": lora_q, "k_proj": lora_k, "v_proj": lora_v, "o_proj": lora_o,
           "gate_proj": lora_gate, "up_proj": lora_up, "down_proj": lora_down}
ATTENTION = ("q_proj", "k_proj", "v_proj", "o_proj")
LORA_FAMILIES = {  # model_type → the PEFT target_modules names its layers hold as nn.Linear (transformers 5.24)
    **{family: tuple(MODULES) for family in ("llama", "mistral", "qwen2", "qwen3", "gemma", "gemma2", "gemma3_text", "olmo2")},
    "mixtral": ATTENTION,  # the experts are one fused module of 3-D weights, not nn.Linear
}
QLORA_BLOCKS = {B_q: 64, B_q2: 256}  # Dettmers et al. 2023 §3
BASE_BITS = (16, 8, 4)


class LoraError(ValueError):
    """A LoRA setting the architecture cannot take; the message names it."""


def lora_inputs(model_type: str, model: dict[str, int], rank: int, targets: tuple[str, ...], base_bits: int) -> dict[str, object]:
    """The values of r_lora, the lora_* switches and q_base for ``estimate``, or LoraError."""
    known = LORA_FAMILIES.get(model_type)
    if known is None:
        raise LoraError(f"LoRA targets of {model_type} are not modelled (families: {', '.join(sorted(LORA_FAMILIES))})")
    for target in targets:
        if target not in known:
            raise LoraError(f"LoRA target {target!r} is not a projection of {model_type} (its targets: {', '.join(known)})")
    if not targets:
        raise LoraError("--lora-targets names no module")
    if base_bits not in BASE_BITS:
        raise LoraError(f"the frozen base is 16, 8 or 4 bits, got {base_bits}")
    if base_bits < 16 and model.get("l_moe"):
        raise LoraError(f"a quantized base of a mixture-of-experts model ({model_type}) is not modelled")
    bytes_per_weight = {
        16: q_bf16,
        8: int8.dimensioned.subs(d_in, h),  # one fp32 scale per row of h weights: an upper bound (down_proj's rows hold d_ff)
        4: nf4.dimensioned.subs(QLORA_BLOCKS),
    }[base_bits]
    values = {switch.name: int(name in targets) for name, switch in MODULES.items()}
    q = bytes_per_weight.xreplace(constant_values()).subs(h, model["h"])
    return values | {"r_lora": rank, "q_base": q}
