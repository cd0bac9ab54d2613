"""Proofs of the precision and fine-tuning formulas (formulas/topics/precision.py).

FP8: the recipe's copies summed and proved to be the bf16 recipe plus the two 1-byte weight copies; the
activation saving taken tensor by tensor from the general layer inventory (derivations.topics.memory.general_tensors):
the four GEMM inputs at 1 byte instead of 2. LoRA: A and B of each target, summed over the targets and layers.
QLoRA: the bits of the quantization constants, 0.5 per weight with one fp32 absmax per 64, and within
QLoRA's printed 0.127 with double quantization (exactly 0.126953125).
"""

from __future__ import annotations

import sympy as sp

from llm_formulas.derivations.vocabulary.engine import Derivation
from llm_formulas.derivations.topics.memory import HALF, general_tensors
from llm_formulas.formulas.vocabulary.catalogue import get
from llm_formulas.formulas.topics.precision import DEEPSEEK_V3, HU, INT8, MICIKEVICIUS, PEFT, QLORA, TARGETS, TRANSFORMER_ENGINE
from llm_formulas.formulas.vocabulary.symbols import (
    b,
    b_k,
    b_mlp,
    dsa,
    b_o,
    B_q,
    b_q,
    B_q2,
    b_v,
    c,
    c_byte,
    d,
    d_in,
    d_out,
    E,
    e,
    h,
    l,
    l_moe,
    mla,
    P,
    p,
    P_keep,
    P_lora,
    q_base,
    q_bf16,
    q_fp32,
    q_fp8,
    q_int4,
    q_int8,
    qk_norm,
    qk_norm_full,
    r_lora,
    s,
    sh_gate,
    sink,
    attn_gate,
    t,
    u_flop,
    u_param,
)

NO_BIASES = {b_q: 0, b_k: 0, b_v: 0, b_o: 0, b_mlp: 0}
GEMM_INPUTS = ("QKV in", "proj in", "fc1 in", "fc2 in")  # what a Linear saves for its weight gradient
BITS_PER_BYTE = 8


def fp8_states() -> Derivation:
    dv = Derivation("memory.fp8.model_states", "FP8 training keeps two more weight copies", (TRANSFORMER_ENGINE, MICIKEVICIUS))
    dv.defines(
        "M_FP8",
        q_bf16 * P + q_fp8 * P + q_fp8 * P + q_bf16 * P + 3 * q_fp32 * P,
        "bf16 weights; their FP8 cast (E4M3) for the forward GEMM and its FP8 transpose for the backward GEMM, cached "
        "for the step; bf16 gradients; fp32 master weights, momentum, variance",
    )
    dv.concludes("memory.fp8.model_states")
    dv.equals("M_states + 2Ψ", get("memory.model_states").part + 2 * q_fp8 * P, "the bf16 recipe's 16Ψ plus 2 bytes of FP8 copies")
    return dv


def fp8_copies() -> Derivation:
    dv = Derivation("memory.fp8.weight_copies", "FP8 copies of the weights a GPU holds", (TRANSFORMER_ENGINE,))
    copies = dv.defines("M_FP8 copies", 2 * q_fp8 * get("params.per_gpu.ep").part, "two 1-byte copies of each weight the GPU holds (params.per_gpu.ep)")
    dv.concludes("memory.fp8.weight_copies")
    dv.defines("at e = 1", copies.subs(e, 1), "without expert parallelism")
    dv.equals("2Ψ/(t·p)", 2 * q_fp8 * P / (t * p), "two bytes per parameter of the model-parallel rank", aside=True)
    return dv


def fp8_copies_zero3() -> Derivation:
    dv = Derivation("memory.fp8.weight_copies.zero3", "FP8 copies of a ZeRO-3 shard", (TRANSFORMER_ENGINE,))
    dv.defines("Ψ_shard", P / (t * p * c * d), "ZeRO-3 leaves each GPU 1/(c·d) of its model-parallel rank's weights")
    dv.defines("M", 2 * q_fp8 * P / (t * p * c * d), "its two FP8 copies")
    dv.concludes("memory.fp8.weight_copies.zero3")
    return dv


def _fp8_saving(target: str, sequence_parallel: bool) -> Derivation:
    dv = Derivation(target, "FP8 saves one byte per value of each GEMM input", (TRANSFORMER_ENGINE, DEEPSEEK_V3))
    for core in ("eager", "selective"):
        inputs = [x for x in general_tensors(core, sequence_parallel=sequence_parallel) if x.label in GEMM_INPUTS]
        assert [x.label for x in inputs] == list(GEMM_INPUTS) and all(x.width == HALF for x in inputs)
        bf16 = dv.defines(f"A_GEMM in ({core})", sp.Add(*(x.values * HALF for x in inputs)),
                          f"the four GEMM inputs of the {core} inventory, 16-bit: " + ", ".join(GEMM_INPUTS))
        fp8 = dv.defines(f"A_GEMM in FP8 ({core})", sp.Add(*(x.values * c_byte for x in inputs)), "the same values at one byte (E4M3)")
        dv.defines(f"ΔA ({core})", bf16 - fp8, "the saving")
        dv.concludes(target, "the same with or without selective recompute: both keep these inputs")
    return dv


def lora_matrix() -> Derivation:
    dv = Derivation("params.lora.matrix", "LoRA: ΔW = B·A", (HU,))
    down = dv.defines("Ψ_A", r_lora * d_in * u_param, "A maps the d_in inputs to r")
    up = dv.defines("Ψ_B", d_out * r_lora * u_param, "B maps r back to the d_out outputs (initialised to zero)")
    dv.defines("Ψ_LoRA^matrix", down + up, "both trained; W stays frozen")
    dv.concludes("params.lora.matrix")
    return dv


def lora_layer() -> Derivation:
    dv = Derivation("params.lora.layer", "LoRA on the targeted projections of a layer", (HU, PEFT))
    per_target = []
    for switch, width_in, width_out in TARGETS:
        per_target.append(dv.defines(f"{switch.name}·Ψ", switch * get("params.lora.matrix").dimensioned.subs({d_in: width_in, d_out: width_out}),
                                     f"{switch.name.removeprefix('lora_')} projection {width_in} → {width_out}, when targeted"))
    dv.defines("Ψ_LoRA^layer", sp.Add(*per_target), "the targeted projections")
    dv.concludes("params.lora.layer")
    return dv


def lora_total() -> Derivation:
    dv = Derivation("params.lora.total", "LoRA on every layer", (HU, PEFT))
    dv.defines("Ψ_LoRA", l * get("params.lora.layer").part, "PEFT matches target_modules in each of the l layers")
    dv.concludes("params.lora.total")
    return dv


def lora_states() -> Derivation:
    dv = Derivation("memory.lora.adapter_states", "Adapter states: 16 bytes per adapter parameter", (PEFT,))
    dv.defines("M_LoRA", q_fp32 * P_lora + q_fp32 * P_lora + 2 * q_fp32 * P_lora,
               "fp32 adapter weights (no separate master copy needed), fp32 gradients, Adam's two fp32 moments")
    dv.concludes("memory.lora.adapter_states")
    return dv


def frozen() -> Derivation:
    dv = Derivation("memory.lora.frozen_base", "The frozen base", (HU, QLORA))
    quantized = dv.defines("M_linear", q_base * (P - P_keep), "the layers' linear weights at q_base bytes each, constants included")
    kept = dv.defines("M_16", q_bf16 * P_keep, "embeddings, norms and the output head stay 16-bit")
    dv.defines("M_base", quantized + kept, "frozen: no gradient and no optimizer state")
    dv.concludes("memory.lora.frozen_base")
    return dv


def lora_training() -> Derivation:
    dv = Derivation("memory.lora.states", "LoRA model states", (HU, QLORA, PEFT))
    states = dv.defines("M", get("memory.lora.frozen_base").part + get("memory.lora.adapter_states").part, "the frozen base and the adapters")
    dv.concludes("memory.lora.states")
    dv.defines("M(q_base = 2, Ψ_16 = 0)", states.subs({q_base: q_bf16, P_keep: 0}), "LoRA on a bf16 base")
    dv.equals("2Ψ + 16Ψ_LoRA", q_bf16 * P + 4 * q_fp32 * P_lora, "the base's inference weights and 16 bytes per adapter parameter", aside=True)
    return dv


def lora_activations() -> Derivation:
    dv = Derivation("memory.lora.activations.layer", "The adapters' saved products", (HU, PEFT))
    terms = [dv.defines(f"x·A ({switch.name})", switch * s * b * r_lora * 4 * c_byte,
                        "B's weight gradient needs x·A: s·b tokens of r fp32 values") for switch, _, _ in TARGETS]
    dv.defines("A_LoRA", sp.Add(*terms), "each targeted projection")
    dv.concludes("memory.lora.activations.layer")
    return dv


def nf4() -> Derivation:
    dv = Derivation("memory.qlora.bytes_per_weight", "NF4 with double quantization", (QLORA,))
    dv.defines("q", q_int4 + q_int8 / B_q + q_fp32 / (B_q * B_q2),
               "4 bits per weight; one 8-bit constant per block of B_q weights; one fp32 constant per B_q2 of those")
    dv.concludes("memory.qlora.bytes_per_weight")
    dv.defines("bits of the constants", BITS_PER_BYTE * (q_int8 / B_q + q_fp32 / (B_q * B_q2)).subs({B_q: 64, B_q2: 256}),
                           "QLoRA's blocks: 64 weights, 256 constants: 8/64 + 32/(64·256) bits")
    dv.equals("0.126953125 bits", sp.Rational(126953125, 10**9), "exactly", of="bits of the constants", aside=True)
    dv.bounds("0.127 bits", sp.Rational(127, 1000), "QLoRA's printed 0.127 bits per parameter, rounded up", direction="upper", of="bits of the constants")
    return dv


def nf4_single() -> Derivation:
    dv = Derivation("memory.qlora.bytes_per_weight.single", "NF4 without double quantization", (QLORA,))
    dv.defines("q", q_int4 + q_fp32 / B_q, "4 bits per weight and one fp32 absmax per block of B_q weights")
    dv.concludes("memory.qlora.bytes_per_weight.single")
    dv.defines("bits of the constants", BITS_PER_BYTE * (q_fp32 / B_q).subs(B_q, 64), "QLoRA's blocks of 64: 32/64 bits")
    dv.equals("0.5 bits", sp.Rational(1, 2), "QLoRA's 0.5 bits per parameter", aside=True)
    return dv


def int8() -> Derivation:
    dv = Derivation("memory.int8.bytes_per_weight", "LLM.int8(): a scale per row", (INT8,))
    dv.defines("q", q_int8 + q_fp32 / d_in, "one byte per weight; each row of d_in weights shares an fp32 scale")
    dv.concludes("memory.int8.bytes_per_weight")
    return dv


def quantized() -> Derivation:
    dv = Derivation("params.quantized.linear", "The projection matrices a quantizer converts", (QLORA,))
    plain = {**NO_BIASES, mla: 0, qk_norm: 0, qk_norm_full: 0, sink: 0, attn_gate: 0}
    attention = dv.defines("Ψ_attn^W", get("params.decoder.attention").dimensioned.subs(plain),
                           "W_Q, W_K, W_V, W_O: the attention's parameters without biases, q/k norms or sinks (no MLA)")
    dense = dv.defines("Ψ_mlp^W", get("params.decoder.mlp").dimensioned.subs(NO_BIASES), "a dense MLP's two or three matrices")
    moe = dv.defines("Ψ_moe^W", E * get("params.decoder.expert").dimensioned.subs(NO_BIASES) + h * E * u_param
                     + get("params.decoder.shared_experts").dimensioned.subs(sh_gate, 0)
                     + get("params.decoder.moe_latent").dimensioned.subs(NO_BIASES),
                     "a MoE layer's E routed experts, its h×E router, its shared experts and any latent projections")
    dv.defines("Ψ_q", l * attention + (l - l_moe) * dense + l_moe * moe, "l attention blocks, l − l_moe dense MLPs, l_moe MoE MLPs")
    dv.concludes("params.quantized.linear")
    return dv


def kept() -> Derivation:
    dv = Derivation("params.quantized.kept", "What stays 16-bit", (QLORA,))
    dv.defines("Ψ_16", get("params.decoder.total").part - get("params.quantized.linear").part,
               "embeddings, norms, biases and the output head: the rest of the model")
    dv.concludes("params.quantized.kept")
    return dv


def lora_per_gpu() -> Derivation:
    dv = Derivation("memory.lora.states.per_gpu", "LoRA states per GPU", (HU, QLORA))
    dv.defines("M_GPU", get("memory.lora.states").part / (t * p), "tensor and pipeline parallelism split the frozen base and its adapters")
    dv.concludes("memory.lora.states.per_gpu")
    return dv


def adapters_forward() -> Derivation:
    dv = Derivation("flops.lora.adapters.forward", "Adapter GEMMs", (HU,))
    terms = [dv.defines(f"F ({switch.name})", switch * (2 * b * s * width_in * r_lora + 2 * b * s * r_lora * width_out) * u_flop,
                        "[bs, d_in]×[d_in, r], then [bs, r]×[r, d_out]: 2MKN each") for switch, width_in, width_out in TARGETS]
    dv.defines("F_LoRA", l * sp.Add(*terms), "every layer's targeted projections")
    dv.concludes("flops.lora.adapters.forward")
    return dv


def lora_forward() -> Derivation:
    dv = Derivation("flops.lora.forward", "LoRA forward", (HU,))
    dv.defines("F_fwd^LoRA", get("flops.decoder.forward").part + get("flops.lora.adapters.forward").part,
               "the frozen model's GEMMs as before, and the adapters beside them")
    dv.concludes("flops.lora.forward")
    return dv


def lora_backward() -> Derivation:
    dv = Derivation("flops.lora.backward", "LoRA backward: input gradients only for frozen weights", (HU,))
    full = dv.defines("F_bwd", get("flops.decoder.backward").dimensioned.xreplace({dsa: 0}),
                      "full training: each GEMM Y = XW needs dX = dY·Wᵀ and dW = Xᵀ·dY, each as costly as Y (no MLA, so no "
                      "DSA indexer)")
    weight_gradients = dv.defines(
        "F_dW",
        (get("flops.decoder.forward").dimensioned - l * get("flops.decoder.attention.scores").dimensioned).xreplace({dsa: 0}),
        "the weight gradients of the frozen GEMMs: one forward's worth of every GEMM with a weight (QKᵀ and scores·V have none)",
    )
    # kept unevaluated: the frozen backward is the full one less F_dW, and stays visibly so
    frozen_backward = dv.defines("F_bwd^frozen", sp.Add(full, sp.Mul(-1, weight_gradients, evaluate=False), evaluate=False),
                                 "a frozen weight needs no dW")
    dv.defines("F_bwd^LoRA", sp.Add(frozen_backward, 2 * get("flops.lora.adapters.forward").dimensioned, evaluate=False), "the adapters need both dX and dW")
    dv.concludes("flops.lora.backward", where={dsa: 0})  # the formula's condition: no MLA, so no DSA indexer
    return dv


DERIVATIONS = (
    fp8_states,
    fp8_copies,
    fp8_copies_zero3,
    lambda: _fp8_saving("memory.fp8.activations.saving", False),
    lambda: _fp8_saving("memory.fp8.activations.saving_sp", True),
    lora_matrix,
    lora_layer,
    lora_total,
    lora_states,
    frozen,
    lora_training,
    lora_activations,
    nf4,
    nf4_single,
    int8,
    quantized,
    kept,
    lora_per_gpu,
    adapters_forward,
    lora_forward,
    lora_backward,
)
