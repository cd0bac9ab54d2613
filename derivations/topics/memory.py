"""Proofs of the memory formulas (000 §3.4; 001; 002; Korthikanti et al. 2022; ZeRO).

Model states are summed copy by copy; each ZeRO stage divides some of them by d.
Activations are built tensor by tensor from what a Megatron-style layer saves for
backward (``stored_tensors``: a label, a count of values and the bytes per value,
16-bit 2, bool dropout mask 1, fp32 4); the exact sum, LayerNorm statistics
included, is what tests/megatron_block.py measures with PyTorch, and Korthikanti's
printed forms are proved to be its approximations (relative error → 0 as h → ∞).
``general_tensors`` does the same for any block (GQA heads of d_head, a gated or ungated
MLP of width d_ff); its four TP forms are proved to reduce exactly to the classic ones.
``decoder_tensors`` adds multi-head latent attention (mla = 1: the latents, per-head Q/K/V after the
up projections) and, with ``mlp="moe"``, a top-k mixture of experts (router, dispatched copies, k
experts' MLPs per token, shared experts): what tests/moe_block.py measures. Its forms reduce exactly to
the general ones at mla = 0, and the MoE layer's to the dense layer's at E = k = 1, d_moe = d_ff, no
shared expert, the routing tensors removed.
001's s·b·h·l·(10 + 24/t) is shown to be the selective, tensor-parallel case, 002's
LLaMA-7B formula is reproduced and refuted, and 001's "5 GB per prompt" KV cache too.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Literal

import sympy as sp

from llm_formulas.derivations.vocabulary.engine import Derivation
from llm_formulas.derivations.vocabulary.proof import much_greater, valued
from llm_formulas.formulas.vocabulary.catalogue import get
from llm_formulas.formulas.vocabulary.classic import KORTHIKANTI_BLOCK
from llm_formulas.formulas.topics.memory import (BILIBILI, DEEPSEEK_MLA, DEEPSEEK_MOE, DEEPSPEED_BF16, ESTIMATE_002, FLASH, HF_MOE, KORTHIKANTI,
                             LI, MEGATRON_MOE, MIXTRAL, NARAYANAN, TORCH_DDP, ZERO, ZERO_OFFLOAD)
from llm_formulas.formulas.vocabulary.symbols import (E, M_gpu, P, a, b, c_byte, d, d_ff, d_head, d_lat, d_moe, d_nope, d_rope, d_sh, d_v, drop, g, gated,
                              glu_fused, h, k, l, mla, moe_lat, p, q, q_bf16, q_fp32, q_lora, r_kv, r_q, s, sh_gate, t, t_e, v)

HALF, MASK, FP32, INDEX = 2 * c_byte, c_byte, 4 * c_byte, 8 * c_byte  # INDEX: an int64 index, as torch returns them
Core = Literal["eager", "selective", "flash"]


@dataclass(frozen=True)
class Stored:
    """One tensor a layer keeps for backward: how many values, how many bytes each."""

    label: str
    values: sp.Expr
    width: sp.Expr
    why: str

    @property
    def bytes(self) -> sp.Expr:
        return self.values * self.width


def stored_tensors(core: Core = "eager", tp: sp.Expr = t, sequence_parallel: bool = False) -> list[Stored]:
    """The unique storages a Megatron-style layer saves, per tensor-parallel rank.

    Split tensors (heads, MLP width) are divided by ``tp``; the norms' inputs and
    statistics, the GEMM inputs after a norm and the two residual dropout masks
    are whole on every rank unless sequence parallelism splits them along s.
    """
    x = s * b * h
    whole = tp if sequence_parallel else 1
    attention_core = {
        "eager": [
            Stored("Q, K", 2 * x / tp, HALF, "inputs of the QKᵀ batched GEMM (views of the QKV output)"),
            Stored("softmax out", a * s**2 * b / tp, HALF, "softmax's backward needs its output"),
            Stored("attn dropout mask", a * s**2 * b / tp, MASK, "dropout on the scores keeps a boolean mask"),
            Stored("dropped scores", a * s**2 * b / tp, HALF, "left input of scores·V"),
            Stored("V", x / tp, HALF, "right input of scores·V (a view of the same QKV output)"),
        ],
        "selective": [
            Stored("Q, K, V", 3 * x / tp, HALF, "the checkpointed core attention keeps only its inputs and recomputes the rest"),
        ],
        "flash": [
            Stored("Q, K, V", 3 * x / tp, HALF, "the flash kernel keeps its inputs"),
            Stored("log-sum-exp", a * s * b / tp, FP32, "one fp32 softmax statistic per head and token replaces the s×s scores"),
        ],
    }[core]
    projection_why = "input of the output projection" + (" (also the flash kernel's saved output)" if core == "flash" else "")
    return [
        Stored("LN₁ in", x / whole, HALF, "LayerNorm's backward needs its input"),
        Stored("LN₁ mean, rstd", 2 * s * b / whole, HALF, "and one mean and one rstd per row (16-bit as PyTorch saves them on the CPU)"),
        Stored("QKV in", x / whole, HALF, "input of the QKV GEMM (the norm's output)"),
        *attention_core,
        Stored("proj in", x / tp, HALF, projection_why),
        Stored("attn out mask", x / whole, MASK, "dropout after the projection"),
        Stored("LN₂ in", x / whole, HALF, "second LayerNorm's input"),
        Stored("LN₂ mean, rstd", 2 * s * b / whole, HALF, "its statistics"),
        Stored("fc1 in", x / whole, HALF, "input of the MLP up-projection"),
        Stored("GELU in", 4 * x / tp, HALF, "GELU's backward needs its input"),
        Stored("fc2 in", 4 * x / tp, HALF, "input of the down-projection (GELU's output)"),
        Stored("MLP out mask", x / whole, MASK, "dropout after the MLP"),
    ]


def gated_tensors() -> list[Stored]:
    """A layer with a heads of d_head, g KV heads and a gated (SwiGLU) MLP, no TP."""
    x = s * b * h
    return [
        Stored("LN₁ in", x, HALF, "LayerNorm's input"),
        Stored("LN₁ mean, rstd", 2 * s * b, HALF, "its statistics"),
        Stored("QKV in", x, HALF, "input of the QKV GEMM"),
        Stored("Q", s * b * a * d_head, HALF, "a heads of d_head"),
        Stored("K", s * b * g * d_head, HALF, "g KV heads"),
        Stored("softmax out", a * s**2 * b, HALF, "softmax output"),
        Stored("attn dropout mask", a * s**2 * b, MASK, "boolean mask"),
        Stored("dropped scores", a * s**2 * b, HALF, "left input of scores·V"),
        Stored("V", s * b * g * d_head, HALF, "right input of scores·V"),
        Stored("proj in", s * b * a * d_head, HALF, "input of the output projection"),
        Stored("attn out mask", x, MASK, "dropout after the projection"),
        Stored("LN₂ in", x, HALF, "second LayerNorm's input"),
        Stored("LN₂ mean, rstd", 2 * s * b, HALF, "its statistics"),
        Stored("fc1 in", x, HALF, "input of the gate and up projections"),
        Stored("gate", s * b * d_ff, HALF, "input of the SiLU"),
        Stored("SiLU out", s * b * d_ff, HALF, "left factor of the gating product"),
        Stored("up", s * b * d_ff, HALF, "right factor of the gating product"),
        Stored("fc2 in", s * b * d_ff, HALF, "the product, input of the down-projection"),
        Stored("MLP out mask", x, MASK, "dropout after the MLP"),
    ]


def general_tensors(core: Literal["eager", "selective", "flash"] = "eager", tp: sp.Expr = t, sequence_parallel: bool = False) -> list[Stored]:
    """``stored_tensors`` for any block, per tensor-parallel rank: a heads and g KV heads of d_head, an MLP of
    width d_ff, gated (gated = 1: SwiGLU's three matrices) or not. K and V are stored at g heads (read in place)."""
    x = s * b * h
    whole = tp if sequence_parallel else 1
    q_values, kv_values, inner = s * b * a * d_head / tp, s * b * g * d_head / tp, s * b * d_ff / tp
    attention_core = {
        "eager": [
            Stored("Q", q_values, HALF, "left input of QKᵀ: a/t heads of d_head"),
            Stored("K", kv_values, HALF, "right input of QKᵀ: g/t KV heads, shared by a/g query heads each"),
            Stored("softmax out", a * s**2 * b / tp, HALF, "softmax's backward needs its output"),
            Stored("attn dropout mask", a * s**2 * b / tp, MASK, "dropout on the scores keeps a boolean mask"),
            Stored("dropped scores", a * s**2 * b / tp, HALF, "left input of scores·V"),
            Stored("V", kv_values, HALF, "right input of scores·V: g/t KV heads"),
        ],
        "selective": [
            Stored("Q, K, V", q_values + 2 * kv_values, HALF, "the checkpointed core attention keeps only its inputs"),
        ],
        "flash": [
            Stored("Q, K, V", q_values + 2 * kv_values, HALF, "the flash kernel keeps its inputs"),
            Stored("log-sum-exp", a * s * b / tp, FP32, "one fp32 softmax statistic per head and token replaces the s×s scores"),
        ],
    }[core]
    return [
        Stored("LN₁ in", x / whole, HALF, "the norm's backward needs its input"),
        Stored("LN₁ mean, rstd", 2 * s * b / whole, HALF, "and its per-row statistics"),
        Stored("QKV in", x / whole, HALF, "input of the Q, K, V GEMMs (the norm's output)"),
        *attention_core,
        Stored("proj in", q_values, HALF, "input of the output projection: a/t heads of d_head"),
        Stored("attn out mask", x / whole, MASK, "dropout after the projection"),
        Stored("LN₂ in", x / whole, HALF, "second norm's input"),
        Stored("LN₂ mean, rstd", 2 * s * b / whole, HALF, "its statistics"),
        Stored("fc1 in", x / whole, HALF, "input of the MLP's up (and gate) projection"),
        Stored("act in", inner, HALF, "the activation's backward needs its input (GELU's, or the gate's for SiLU)"),
        Stored("act out", gated * inner, HALF, "gated: the SiLU's output, left factor of the gating product"),
        Stored("up", gated * inner, HALF, "gated: the up projection, right factor of the gating product"),
        Stored("fc2 in", inner, HALF, "input of the down-projection (GELU's output, or the gating product)"),
        Stored("MLP out mask", x / whole, MASK, "dropout after the MLP"),
    ]


def exact_bytes(tensors: list[Stored]) -> sp.Expr:
    """The bytes of a tensor inventory (what the tests compare to PyTorch)."""
    return sp.Add(*(tensor.bytes for tensor in tensors))


def _named(tensors: list[Stored], *labels: str) -> list[Stored]:
    return [tensor for tensor in tensors if tensor.label in labels]


# --- model states ------------------------------------------------------------------


def model_states() -> Derivation:
    dv = Derivation("memory.model_states", "Mixed-precision Adam: 16 bytes per parameter", (BILIBILI, ZERO))
    dv.defines(
        "M_states",
        q_bf16 * P + q_bf16 * P + q_fp32 * P + q_fp32 * P + q_fp32 * P,
        "16-bit weights for the passes, 16-bit gradients, and fp32 master weights, momentum and variance for the update",
    )
    dv.concludes("memory.model_states")
    return dv


def _states_variant(target: str, title: str, parts: list[tuple[sp.Expr, str]], sources) -> Derivation:
    dv = Derivation(target, title, sources)
    dv.defines("M_states", sp.Add(*(expr for expr, _ in parts)) * P, "; ".join(why for _, why in parts))
    dv.concludes(target)
    return dv


def model_states_fp32_grads() -> Derivation:
    return _states_variant(
        "memory.model_states.fp32_grads",
        "fp32 gradients: 18 bytes per parameter",
        [(q_bf16, "16-bit weights"), (q_fp32, "fp32 gradients"), (3 * q_fp32, "fp32 master, momentum, variance")],
        (BILIBILI,),
    )


def model_states_grad_buffers() -> Derivation:
    return _states_variant(
        "memory.model_states.grad_buffers",
        "16-bit gradients and an fp32 buffer: 20 bytes per parameter",
        [(q_bf16, "16-bit weights"), (q_bf16, "16-bit gradients"), (q_fp32, "an fp32 gradient accumulation buffer"),
         (3 * q_fp32, "fp32 master, momentum, variance")],
        (BILIBILI,),
    )


def ddp_buckets() -> Derivation:
    return _states_variant(
        "memory.ddp.buckets",
        "PyTorch DDP's buckets: a second 16-bit copy of the gradients",
        [(q_bf16, "the gradient copied into its all-reduce bucket, beside the gradient itself")],
        (TORCH_DDP,),
    )


def bf16_fp32_grads() -> Derivation:
    return _states_variant(
        "memory.bf16.fp32_grads",
        "DeepSpeed's bf16 optimizer: fp32 gradients beside the 16-bit ones",
        [(q_fp32, "an fp32 gradient per parameter, the whole buffer on every data-parallel rank")],
        (DEEPSPEED_BF16,),
    )


def model_states_sgd() -> Derivation:
    return _states_variant(
        "memory.model_states.sgd_momentum",
        "SGD with momentum: 12 bytes per parameter",
        [(q_bf16, "16-bit weights"), (q_bf16, "16-bit gradients"), (2 * q_fp32, "fp32 master weights and momentum")],
        (ZERO,),
    )


def optimizer_adam() -> Derivation:
    return _states_variant(
        "memory.optimizer.adam",
        "Adam's fp32 states",
        [(q_fp32, "fp32 master weights"), (q_fp32, "momentum exp_avg"), (q_fp32, "variance exp_avg_sq")],
        (ZERO,),
    )


def inference_weights() -> Derivation:
    return _states_variant("memory.model_states.inference", "Inference: 16-bit weights only", [(q_bf16, "one 16-bit copy")], (BILIBILI,))


def inference_int8() -> Derivation:
    return _states_variant("memory.model_states.inference.int8", "int8 weights", [(q_bf16 / 2, "8 of 16 bits")], (BILIBILI,))


def inference_int4() -> Derivation:
    return _states_variant("memory.model_states.inference.int4", "int4 weights", [(q_bf16 / 4, "4 of 16 bits")], (BILIBILI,))


# --- ZeRO ----------------------------------------------------------------------------


def _zero(stage: int) -> Derivation:
    target = "memory.zero" if stage == 0 else f"memory.zero.stage{stage}"
    dv = Derivation(target, f"ZeRO stage {stage} per GPU under 3D parallelism", (ZERO, BILIBILI))
    rank = dv.defines("Ψ/(tp)", P / (t * p), "tensor and pipeline parallelism leave each model-parallel rank Ψ/(t·p) parameters")
    shares = [(3 * q_fp32, 1, "optimizer states"), (q_bf16, 2, "gradients"), (q_bf16, 3, "weights")]
    for width, partitioned_from, what in shares:
        split = stage >= partitioned_from
        dv.defines(f"M_{what.split()[0]}", width * rank / (d if split else 1),
                   f"{what}: " + ("partitioned over the d replicas" if split else "replicated on every data-parallel rank"))
    dv.defines("M_ZeRO", sp.Add(*(width * rank / (d if stage >= k else 1) for width, k, _ in shares)), "the three shares")
    dv.concludes(target)
    return dv


def zero_offload_gpu() -> Derivation:
    dv = Derivation("memory.zero.offload.gpu", "ZeRO-Offload keeps the 16-bit weights on the GPU", (ZERO_OFFLOAD,))
    dv.defines("M_GPU", q_bf16 * P / (t * p), "forward and backward run on the GPU from the 16-bit weights; gradients are sent to the CPU as they are made")
    dv.concludes("memory.zero.offload.gpu")
    return dv


def zero_offload_cpu() -> Derivation:
    dv = Derivation("memory.zero.offload.cpu", "ZeRO-Offload moves gradients and Adam to the CPU", (ZERO_OFFLOAD,))
    dv.defines("M_CPU", (q_bf16 + 3 * q_fp32) * P / (t * p * d), "each replica's CPU keeps its 1/d share of the 16-bit gradients and fp32 Adam states and runs the update")
    dv.concludes("memory.zero.offload.cpu")
    return dv


# --- activations -----------------------------------------------------------------------


def layer_exact() -> Derivation:
    dv = Derivation("memory.activations.layer.exact", "One layer's stored tensors, one by one", (KORTHIKANTI,))
    tensors = stored_tensors("eager", tp=sp.Integer(1))
    for tensor in tensors:
        dv.defines(tensor.label, tensor.bytes, tensor.why)
    groups = [
        ("A_attn", ("QKV in", "Q, K", "softmax out", "attn dropout mask", "dropped scores", "V", "proj in", "attn out mask"),
         (11 * s * b * h + 5 * a * s**2 * b) * c_byte, "the attention block's tensors", "Korthikanti's 11sbh + 5as²b"),
        ("A_mlp", ("fc1 in", "GELU in", "fc2 in", "MLP out mask"), 19 * s * b * h * c_byte, "the MLP's tensors", "Korthikanti's 19sbh"),
        ("A_norm", ("LN₁ in", "LN₁ mean, rstd", "LN₂ in", "LN₂ mean, rstd"), (4 * s * b * h + 8 * s * b) * c_byte,
         "the norms' inputs and statistics", "4sbh, plus 8sb of statistics"),
    ]
    for label, members, printed, what, printed_why in groups:
        dv.defines(label, exact_bytes(_named(tensors, *members)), what, parts=members)
        dv.equals(label, printed, printed_why)
    dv.defines("A_layer", exact_bytes(tensors), "the sum of the unique storages saved for backward: attention + MLP + norms",
               parts=tuple(label for label, *_ in groups))
    dv.equals(
        "A_layer",
        (34 * s * b * h + 5 * a * s**2 * b + 8 * s * b) * c_byte,
        "11 + 19 + 4 = 34 sbh, the 5as²b scores, 8sb of statistics",
    )
    dv.concludes("memory.activations.layer.exact")
    return dv


def _korthikanti(target: str, title: str, tensors: list[Stored], printed: sp.Expr, why: str, sources=(KORTHIKANTI,)) -> Derivation:
    """exact → the printed form: the dropped part is the LayerNorm statistics, written out from the inventory."""
    dv = Derivation(target, title, sources)
    dv.defines("A_exact", exact_bytes(tensors), "the stored tensors (memory.activations.layer.exact's inventory, for this layout)")
    dv.approximates(
        "A",
        printed,
        why + "; the LayerNorm statistics (O(sb)) are dropped",
        condition=much_greater(h, 1),
        dropped=exact_bytes(_named(tensors, "LN₁ mean, rstd", "LN₂ mean, rstd")),
    )
    dv.concludes(target)
    return dv


def layer() -> Derivation:
    return _korthikanti(
        "memory.activations.layer",
        "Korthikanti's 34sbh + 5as²b",
        stored_tensors("eager", tp=sp.Integer(1)),
        (34 * s * b * h + 5 * a * s**2 * b) * c_byte,
        "attention 11sbh + 5as²b, MLP 19sbh, norms 4sbh",
        (KORTHIKANTI, BILIBILI),
    )


def layer_tp() -> Derivation:
    dv = _korthikanti(
        "memory.activations.layer.tp",
        "Tensor parallel: sbh(10 + 24/t + 5as/(ht))",
        stored_tensors("eager"),
        s * b * h * (10 + 24 / t + 5 * a * s / (h * t)) * c_byte,
        "heads and MLP width split over t (24sbh + 5as²b), norms, their outputs and two masks whole (10sbh)",
        (KORTHIKANTI, BILIBILI),
    )
    norms = _named(stored_tensors("eager"), "LN₁ in", "LN₂ in")
    dv.refutes(
        "000: norms 4bsht",
        4 * b * s * h * t * c_byte,
        "000 §3.4.2.1 prints the norms' activations under TP as 4bsht bytes; every rank keeps the whole inputs "
        "of both LayerNorms (tensor parallelism does not split them), 4bsh per GPU",
        correct=exact_bytes(norms),
        source=BILIBILI,
    )
    return dv


def layer_tp_sp() -> Derivation:
    return _korthikanti(
        "memory.activations.layer.tp_sp",
        "Tensor + sequence parallel: sbh(34 + 5as/h)/t",
        stored_tensors("eager", sequence_parallel=True),
        s * b * h * (34 + 5 * a * s / h) / t * c_byte,
        "sequence parallelism splits the 10sbh replicated part along s",
    )


def layer_selective() -> Derivation:
    return _korthikanti(
        "memory.activations.layer.selective",
        "Selective recompute with TP: sbh(10 + 24/t)",
        stored_tensors("selective"),
        s * b * h * (10 + 24 / t) * c_byte,
        "the core attention is recomputed: its 5as²b/t go, its inputs Q, K, V stay (the same 6sbh/t as before)",
        (KORTHIKANTI, LI),
    )


def layer_selective_sp() -> Derivation:
    return _korthikanti(
        "memory.activations.layer.selective_sp",
        "Selective recompute with TP + SP: 34sbh/t",
        stored_tensors("selective", sequence_parallel=True),
        34 * s * b * h / t * c_byte,
        "every remaining tensor is split t ways",
    )


def layer_flash() -> Derivation:
    return _korthikanti(
        "memory.activations.layer.flash",
        "FlashAttention: no s² terms",
        stored_tensors("flash"),
        (s * b * h * (10 + 24 / t) + 4 * a * s * b / t) * c_byte,
        "the kernel recomputes the scores tile by tile from Q, K, V and the log-sum-exp",
        (FLASH, KORTHIKANTI),
    )


def layer_gated() -> Derivation:
    return _korthikanti(
        "memory.activations.layer.gated",
        "GQA heads and a gated MLP",
        gated_tensors(),
        (s * b * (10 * h + 4 * d_head * (a + g) + 8 * d_ff) + 5 * a * s**2 * b) * c_byte,
        "Q and the projection input are a·d_head wide, K and V g·d_head; the gated MLP keeps four d_ff-wide tensors",
    )


def _general(target: str, classic: str, title: str, tensors: list[Stored], printed: sp.Expr, why: str) -> Derivation:
    """The general inventory → its printed form, then the classic values → the classic formula, exactly."""
    dv = _korthikanti(target, title, tensors, printed, why)
    dv.defines("A_classic", printed.subs(KORTHIKANTI_BLOCK), "the classic block: g = a, d_head = h/a, d_ff = 4h, gated = 0")
    dv.equals("A_classic", get(classic).dimensioned, f"exactly {classic}: 4(h/a)(a + a) + 4·4h = 24h per sb")
    return dv


def layer_general_tp() -> Derivation:
    return _general(
        "memory.activations.layer.general.tp", "memory.activations.layer.tp", "Tensor parallel, any block",
        general_tensors("eager"),
        (5 * a * s**2 * b / t + s * b * (10 * h + ((4 + 4 * gated) * d_ff + 4 * d_head * (a + g)) / t)) * c_byte,
        "Q and proj in a·d_head/t, K and V g·d_head/t, the MLP (2 + 2·gated)·d_ff/t, the s² terms a/t heads; norms, "
        "their outputs and two masks whole (10sbh)",
    )


def layer_general_tp_sp() -> Derivation:
    return _general(
        "memory.activations.layer.general.tp_sp", "memory.activations.layer.tp_sp", "Tensor + sequence parallel, any block",
        general_tensors("eager", sequence_parallel=True),
        (5 * a * s**2 * b + s * b * (10 * h + (4 + 4 * gated) * d_ff + 4 * d_head * (a + g))) / t * c_byte,
        "sequence parallelism splits the 10sbh replicated part along s",
    )


def layer_general_selective() -> Derivation:
    return _general(
        "memory.activations.layer.general.selective", "memory.activations.layer.selective", "Selective recompute, any block",
        general_tensors("selective"),
        s * b * (10 * h + ((4 + 4 * gated) * d_ff + 4 * d_head * (a + g)) / t) * c_byte,
        "the core attention's s² tensors are recomputed; Q, K, V stay",
    )


def layer_general_selective_sp() -> Derivation:
    return _general(
        "memory.activations.layer.general.selective_sp", "memory.activations.layer.selective_sp",
        "Selective recompute with TP + SP, any block",
        general_tensors("selective", sequence_parallel=True),
        s * b * (10 * h + (4 + 4 * gated) * d_ff + 4 * d_head * (a + g)) / t * c_byte,
        "every remaining tensor is split t ways",
    )


def layer_general_flash() -> Derivation:
    return _general(
        "memory.activations.layer.general.flash", "memory.activations.layer.flash", "FlashAttention, any block",
        general_tensors("flash"),
        (4 * a * s * b / t + s * b * (10 * h + ((4 + 4 * gated) * d_ff + 4 * d_head * (a + g)) / t)) * c_byte,
        "the kernel recomputes the scores from Q, K, V and the log-sum-exp: no s² terms",
    )


def layer_general_flash_sp() -> Derivation:
    return _korthikanti(
        "memory.activations.layer.general.flash_sp", "FlashAttention with TP + SP, any block",
        general_tensors("flash", sequence_parallel=True),
        (4 * a * s * b + s * b * (10 * h + (4 + 4 * gated) * d_ff + 4 * d_head * (a + g))) / t * c_byte,
        "every remaining tensor is split t ways",
        (FLASH, KORTHIKANTI),
    )


# --- multi-head latent attention and mixtures of experts ------------------------------------

GQA_ONLY = ("Q", "K", "V", "Q, K, V", "proj in")  # general_tensors' head tensors, which MLA replaces
DENSE_MLP = ("fc1 in", "act in", "act out", "up", "fc2 in")  # general_tensors' MLP tensors, which a MoE layer replaces
STATISTICS = ("LN₁ mean, rstd", "LN₂ mean, rstd", "q latent mean, rstd", "kv latent mean, rstd", "router normalizer",
              "shared gate")  # one value (or two) per token: the O(sb) part the printed forms drop
ROUTING = ("router scores", "top-k indices", "top-k values", "dispatch order", "token index", "expert in", "expert product",
           "routing weights")  # what routing adds to a dense MLP: gone with one expert, no router, no permutation
ONE_EXPERT = {E: 1, k: 1, d_moe: d_ff, d_sh: 0, sh_gate: 0, moe_lat: 0}  # one expert of the dense width, none shared, no latent
DROPOUT = ("attn dropout mask", "dropped scores", "attn out mask", "MLP out mask")  # gone without dropout (σ_drop = 0)
CLASSIC_RUN = (mla, drop, glu_fused), (0, 1, 0)  # GQA attention, dropout, an unfused SwiGLU: the general block


def mla_tensors(core: Core, tp: sp.Expr, whole: sp.Expr) -> tuple[list[Stored], list[Stored]]:
    """Multi-head latent attention's tensors (each times mla): the latent path (whole on a rank, or its s/t tokens
    under SP) and the heads' tensors (a/t heads); transformers' DeepseekV3Attention, Megatron-Core's MLA."""
    heads, d_qk = s * b * a / tp, d_nope + d_rope
    latent = [
        Stored("q latent", mla * q_lora * s * b * r_q / whole, HALF, "the query down-projection's output h → r_Q, its norm's input"),
        Stored("q latent mean, rstd", mla * q_lora * 2 * s * b / whole, HALF, "that norm's statistics"),
        Stored("q latent normed", mla * q_lora * s * b * r_q / whole, HALF, "input of the query up-projection r_Q → a·d_qk"),
        Stored("kv latent, rope key", mla * s * b * (r_kv + d_rope) / whole, HALF,
               "the joint down-projection's output h → r_KV + d_rope: its latent part, a view, is the norm's input"),
        Stored("kv latent mean, rstd", mla * 2 * s * b / whole, HALF, "that norm's statistics"),
        Stored("kv latent normed", mla * s * b * r_kv / whole, HALF, "input of the key/value up-projection r_KV → a·(d_nope + d_v)"),
    ]
    q_values, k_values, v_values = heads * d_qk, heads * d_qk, heads * (d_nope + d_v)
    core_tensors = {
        "eager": [
            Stored("Q (MLA)", mla * q_values, HALF, "left input of QKᵀ: a/t heads of d_nope + d_rope (the rotary part concatenated)"),
            Stored("K (MLA)", mla * k_values, HALF, "right input of QKᵀ: a/t heads, the shared rotary key copied into each"),
            Stored("V (MLA)", mla * v_values, HALF, "right input of scores·V: a view of the up projection's a/t·(d_nope + d_v) output, kept whole"),
        ],
        "selective": [Stored("Q, K, V (MLA)", mla * (q_values + k_values + v_values), HALF, "the checkpointed core attention's inputs")],
        "flash": [Stored("Q, K, V (MLA)", mla * (q_values + k_values + v_values), HALF, "the flash kernel's inputs")],
    }[core]
    return latent, core_tensors + [Stored("proj in (MLA)", mla * heads * d_v, HALF, "input of the output projection: a/t heads of d_v")]


def moe_tensors(tp: sp.Expr, whole: sp.Expr, sequence_parallel: bool = False) -> list[Stored]:
    """A top-k MoE MLP's tensors per rank (tests/moe_block.py, after Megatron-Core's MoELayer): the router on the rank's
    tokens (bs, or bs/t under SP), the bs·k dispatched copies (whole: all-gathered over the t ranks under SP; t_E/t of
    them when the experts' tensor parallelism t_E is narrower), each copy's expert MLP at d_moe/t_E, the shared experts
    at d_sh/t. σ_GLU = 1 (Megatron Core's weighted_bias_swiglu_impl) keeps neither the SiLU's output nor the product."""
    tokens, copies = s * b / whole, s * b * k * (t_e / tp if sequence_parallel else 1)
    width = t_e if sequence_parallel else tp
    return [
        Stored("router in", s * b * h / whole, HALF, "the second norm's output: input of the router GEMM and of the shared experts"),
        Stored("router scores", tokens * E, FP32, "the fp32 softmax over the E experts, saved as its output"),
        Stored("top-k indices", tokens * k, INDEX, "top-k keeps the int64 indices of the k experts it picks"),
        Stored("top-k values", tokens * k, FP32, "renormalising the k weights to sum 1: the division keeps the values"),
        Stored("router normalizer", tokens, FP32, "and their sum, one per token"),
        Stored("dispatch order", tokens * k, INDEX, "the copies sorted by expert (argsort): the weights' gather keeps the order"),
        Stored("token index", tokens * k, INDEX, "the token each copy comes from: kept by the tokens' gather and the scatter back"),
        Stored("expert in", copies * (h + moe_lat * (d_lat - h)), HALF,
               "the dispatched copies, the experts' GEMM input (all-gathered over t under SP), d_lat wide in a latent MoE"),
        Stored("expert act in", copies * (1 + gated) * d_moe / width, HALF, "fc1's output: the activation's input (gated: and the up projection)"),
        Stored("expert act out", gated * (1 - glu_fused) * copies * d_moe / width, HALF,
               "gated, unfused: the SiLU's output, left factor of the gating product"),
        Stored("expert product", (1 - gated * glu_fused) * copies * d_moe / width, HALF,
               "the activation's output (gated: the product), kept by the routing weight's multiply unless fused"),
        Stored("routing weights", copies, FP32, "each copy's fp32 weight, kept by the same multiply (or the fused kernel)"),
        Stored("expert fc2 in", copies * d_moe / width, HALF, "the weighted product, input of the down projection"),
        Stored("latent up in", moe_lat * s * b * d_lat / whole, HALF,
               "a latent MoE's combined expert outputs, input of fc2_latent_proj (fc1_latent_proj reads the router's input)"),
        Stored("shared act in", s * b * (1 + gated) * d_sh / tp, HALF, "the shared experts' fc1 output (gated: gate and up)"),
        Stored("shared act out", gated * (1 - glu_fused) * s * b * d_sh / tp, HALF, "gated, unfused: the SiLU's output"),
        Stored("shared fc2 in", s * b * d_sh / tp, HALF, "the shared experts' down-projection input"),
        Stored("shared gate", sh_gate * tokens, HALF, "Qwen2-MoE's sigmoid gate h → 1, its output"),
        Stored("shared out", sh_gate * s * b * h / whole, HALF, "the shared experts' output, kept by the gate's multiply"),
    ]


def decoder_tensors(core: Core = "eager", tp: sp.Expr = t, sequence_parallel: bool = False,
                    mlp: Literal["dense", "moe"] = "dense") -> list[Stored]:
    """``general_tensors`` of any decoder layer per rank: its head tensors times (1 − mla), multi-head latent
    attention's times mla (``mla_tensors``), and with ``mlp="moe"`` the dense MLP's replaced by ``moe_tensors``."""
    whole = tp if sequence_parallel else 1
    latent, heads = mla_tensors(core, tp, whole)
    tensors: list[Stored] = []
    for tensor in general_tensors(core, tp, sequence_parallel):
        if tensor.label in GQA_ONLY:
            tensor = replace(tensor, values=(1 - mla) * tensor.values)
        if tensor.label in DROPOUT:
            tensor = replace(tensor, values=drop * tensor.values)
        if tensor.label == "act out":
            tensor = replace(tensor, values=(1 - glu_fused) * tensor.values)
        if mlp == "moe" and tensor.label in DENSE_MLP:
            continue
        tensors.append(tensor)
        if tensor.label == "QKV in":
            tensors += latent
        elif tensor.label == "proj in":
            tensors += heads
        elif tensor.label == "LN₂ mean, rstd" and mlp == "moe":
            tensors += moe_tensors(tp, whole, sequence_parallel)
    return tensors


def _decoder_printed(mode: str, whole: sp.Expr, split: sp.Expr, copies: sp.Expr) -> sp.Expr:
    """A layer's closed form per GPU from its bytes per token: ``whole`` (split along s under SP), ``split`` (t ways),
    ``copies`` (whole on every rank), and the core's s² or log-sum-exp terms."""
    sequence_parallel = mode.endswith("_sp")
    per_token = (copies * t_e / t + (whole + split) / t) if sequence_parallel else copies + whole + split / t
    core = {"tp": (2 + 3 * drop) * a * s**2 * b / t, "selective": 0, "flash": 4 * a * s * b / t}[mode.removesuffix("_sp")]
    return (s * b * per_token + core) * c_byte


CORES: dict[str, Core] = {"tp": "eager", "selective": "selective", "flash": "flash"}
ATTENTION_WHOLE = (4 + drop) * h + mla * (4 * q_lora * r_q + 4 * r_kv + 2 * d_rope)  # LN₁ in, QKV in, the mask; MLA's latents
MLP_WHOLE = (4 + drop) * h  # LN₂ in, fc1 in, the mask after the MLP
GLU = 4 + 4 * gated - 2 * gated * glu_fused  # the MLP's bytes per unit of width: gate input, SiLU output (unfused), up, product
ATTENTION_HEADS = (1 - mla) * 4 * d_head * (a + g) + mla * 2 * a * (3 * d_nope + 2 * d_rope + 2 * d_v)  # Q, K, V, proj in


def _stats_dropped(target: str, title: str, tensors: list[Stored], printed: sp.Expr, why: str, sources) -> Derivation:
    """exact → printed, dropping the per-token statistics (the norms', the router's sum, the shared gate's value)."""
    dv = Derivation(target, title, sources)
    dv.defines("A_exact", exact_bytes(tensors), "the stored tensors, one by one (what tests/moe_block.py measures)")
    dv.approximates("A", printed, why + "; the per-token statistics (O(sb): norms' mean and rstd, the router's sum, the "
                    "shared gate's value) are dropped", condition=much_greater(h, 1),
                    dropped=exact_bytes(_named(tensors, *STATISTICS)))
    dv.concludes(target)
    return dv


def layer_decoder(mode: str) -> Derivation:
    target = f"memory.activations.layer.decoder.{mode}"
    sequence_parallel = mode.endswith("_sp")
    printed = _decoder_printed(mode, ATTENTION_WHOLE + MLP_WHOLE, ATTENTION_HEADS + GLU * d_ff, sp.Integer(0))
    dv = _stats_dropped(target, f"Any dense decoder layer, GQA or latent attention ({mode})",
                        decoder_tensors(CORES[mode.removesuffix("_sp")], sequence_parallel=sequence_parallel), printed,
                        "attention: LN₁ in, its output, the mask (5h per token) and MLA's latents whole, the heads' tensors "
                        "split; the dense MLP as memory.activations.layer.general.*",
                        (KORTHIKANTI, DEEPSEEK_MLA, HF_MOE) + ((FLASH,) if mode.startswith("flash") else ()))
    dv.defines("A(classic run)", sp.Subs(printed, *CLASSIC_RUN),
               "GQA attention (no latent), with dropout, an unfused SwiGLU: the general block's tensors")
    general = f"memory.activations.layer.general.{mode}"
    dv.equals("A(classic run)", get(general).dimensioned, f"exactly {general}")
    return dv


def layer_decoder_moe(mode: str) -> Derivation:
    target = f"memory.activations.layer.decoder.moe.{mode}"
    sequence_parallel = mode.endswith("_sp")
    printed = _decoder_printed(mode, ATTENTION_WHOLE + MLP_WHOLE + 4 * E + 28 * k + 2 * sh_gate * h + 2 * moe_lat * d_lat,
                               ATTENTION_HEADS + 2 * k * (3 + 2 * gated - 2 * gated * glu_fused) * d_moe + GLU * d_sh,
                               2 * k * (h + moe_lat * (d_lat - h)) + 4 * k)
    tensors = decoder_tensors(CORES[mode.removesuffix("_sp")], sequence_parallel=sequence_parallel, mlp="moe")
    dv = _stats_dropped(target, f"A mixture-of-experts layer ({mode})", tensors, printed,
                        "the router's fp32 scores (4E), int64 indices, order and token index (24k) and fp32 top-k values (4k) "
                        "on the rank's tokens; k copies of 2h + 4 bytes whole; 2(3 + 2σ_gated)·d_moe/t per copy; the shared "
                        "experts as a dense MLP of d_sh",
                        (KORTHIKANTI, MEGATRON_MOE, HF_MOE, MIXTRAL, DEEPSEEK_MOE) + ((FLASH,) if mode.startswith("flash") else ()))
    route = dv.defines("A_route", exact_bytes(_named(tensors, *ROUTING)),
                       "what routing adds: the scores, indices, top-k values, the dispatched copies, the weights and the "
                       "products their multiply keeps" + (" (the router's on the rank's s/t tokens)" if sequence_parallel else ""))
    rest = dv.defines("A − A_route", sp.Add(printed, -route, evaluate=False), "the layer without them")
    dv.defines("(A − A_route)(E = k = 1)", sp.Subs(rest, tuple(ONE_EXPERT), tuple(ONE_EXPERT.values())),
               "one expert of width d_ff taking every token, no shared expert: the dense MLP")
    dense = f"memory.activations.layer.decoder.{mode}"
    dv.equals("(A − A_route)(E = k = 1)", get(dense).dimensioned, f"exactly {dense}")
    return dv


def token_bytes() -> Derivation:
    """A layer's activation bytes per token, grouped by how tensor parallelism holds them (the groups of
    ``_decoder_printed``)."""
    dv = Derivation("memory.activations.token.decoder.whole", "A layer's bytes per token, by how TP holds them",
                    (KORTHIKANTI, DEEPSEEK_MLA, MEGATRON_MOE, HF_MOE))
    router = 4 * E + 28 * k + 2 * sh_gate * h
    groups = [
        ("decoder.whole", ATTENTION_WHOLE + MLP_WHOLE, "LN₁ in, the QKV input, the masks; MLA's latents; LN₂ in, fc1 in"),
        ("decoder.split", ATTENTION_HEADS + GLU * d_ff, "the heads' Q, K, V and projection input; the MLP's d_ff-wide tensors"),
        ("moe.whole", ATTENTION_WHOLE + MLP_WHOLE + router + 2 * moe_lat * d_lat, "the dense layer's whole tensors and the "
         "router's: fp32 scores (4E), int64 indices, order and token index (24k), fp32 top-k values (4k), the gated shared "
         "output (2h); a latent MoE's fc2_latent_proj input (2·d_lat)"),
        ("moe.split", ATTENTION_HEADS + 2 * k * (3 + 2 * gated - 2 * gated * glu_fused) * d_moe + GLU * d_sh,
         "the heads; 2(3 + 2σ_gated − 2σ_gated·σ_GLU)·d_moe per copy; the shared experts as a dense MLP of d_sh"),
        ("moe.copies", 2 * k * (h + moe_lat * (d_lat - h)) + 4 * k,
         "k dispatched copies of 2h bytes (2·d_lat in a latent MoE) and their fp32 weights"),
    ]
    for name, per_token, why in groups:
        dv.defines(f"a_{name}", per_token * c_byte, why)
        dv.concludes(f"memory.activations.token.{name}")
    return dv


DECODER_MODES = ("tp", "tp_sp", "selective", "selective_sp", "flash", "flash_sp")


def layer_full() -> Derivation:
    dv = Derivation("memory.activations.layer.full_recompute", "Full recompute keeps the layer's input", (KORTHIKANTI, BILIBILI))
    dv.defines("A_full", s * b * h * HALF, "the checkpoint saves the layer's 16-bit input; backward reruns the forward from it")
    dv.concludes("memory.activations.layer.full_recompute")
    return dv


def layer_full_sp() -> Derivation:
    dv = Derivation("memory.activations.layer.full_recompute_sp", "Full recompute with sequence parallelism", (KORTHIKANTI,))
    dv.defines(
        "A_full^SP",
        (s / t) * b * h * HALF,
        "outside the tensor-parallel regions sequence parallelism splits the sequence over the t ranks, so each keeps "
        "only its s/t positions of the layer's 16-bit input",
    )
    dv.concludes("memory.activations.layer.full_recompute_sp")
    return dv


def first_stage() -> Derivation:
    dv = Derivation("memory.activations.1f1b", "1F1B: the first stage holds p micro-batches", (KORTHIKANTI, BILIBILI))
    per_layer = get("memory.activations.layer.tp").part
    dv.defines("A_stage", p * (l / p) * per_layer, "1F1B starts p micro-batches before the first backward; each stage has l/p layers")
    dv.equals("A_stage", l * per_layer, "p·(l/p) = l: the first stage holds l layers' worth, whatever p is")
    dv.concludes("memory.activations.1f1b")
    return dv


def first_stage_interleaved() -> Derivation:
    dv = Derivation("memory.activations.1f1b.interleaved", "Interleaved 1F1B holds 1 + (p−1)/(pv) times more", (KORTHIKANTI, NARAYANAN))
    per_layer = get("memory.activations.layer.tp").part
    warm = dv.defines("n_warm", 2 * (p - 1) + (v - 1) * p, "Megatron's warm-up on rank 0: (p − 1)·2 + (v − 1)·p chunk forwards")
    chunks = dv.defines("n_flight", sp.Add(warm, 1, evaluate=False), "plus the forward of the first steady-state step: chunks in flight")
    dv.defines("A_stage", chunks * (l / (p * v)) * per_layer, "each chunk holds l/(p·v) layers of one micro-batch")
    dv.equals("A_stage", l * per_layer * (1 + (p - 1) / (p * v)), "(pv + p − 1)/(pv) = 1 + (p − 1)/(pv)")
    dv.concludes("memory.activations.1f1b.interleaved")
    return dv


def selective_001() -> Derivation:
    dv = Derivation("memory.activations.selective_001", "001's s·b·h·l·(10 + 24/t) is selective recompute with TP", (LI, KORTHIKANTI))
    dv.defines("A_model", l * get("memory.activations.layer.selective").part, "l layers, each under selective recompute and t-way tensor parallelism")
    dv.concludes("memory.activations.selective_001")
    return dv


def llama_002() -> Derivation:
    dv = Derivation("memory.activations.llama_002", "002's LLaMA-7B formula, as printed", (ESTIMATE_002,))
    dv.defines(
        "A_002",
        l * (14 * b * s * h + 4 * b * s * d_ff + 8 * a * b * s * h + 5 * a * b * s**2) * c_byte,
        "32 × (14·32·2048·4096 + 4·32·2048·11008 + 8·32·32·2048·4096 + 5·32·32·2048·2048), read term by term",
    )
    dv.concludes("memory.activations.llama_002")
    counted = l * get("memory.activations.layer.gated").dimensioned.subs({g: a, d_head: h / a})
    dv.refutes(
        "S18: 8·a·b·s·h",
        get("memory.activations.llama_002").part,
        "no tensor of the layer has a·b·s·h values (that would be a copies of the hidden state); the tensor count "
        "of a gated layer without GQA is sb(18h + 8d_ff) + 5as²b",
        correct=counted,
        source=ESTIMATE_002,
    )
    return dv


def training_selective() -> Derivation:
    dv = Derivation("memory.training.selective", "001's training memory", (LI,))
    dv.defines("M_train", get("memory.model_states").part + get("memory.activations.selective_001").part,
               "weights 2Ψ, gradients 2Ψ, Adam 12Ψ, and the forward state under selective recompute")
    dv.concludes("memory.training.selective")
    return dv


# --- KV cache ---------------------------------------------------------------------------

LLAMA2_70B = {l: 80, d_head: 128, s: 4096, q: 2}


def kv_per_token() -> Derivation:
    dv = Derivation("memory.kv_cache.per_token", "K and V of one token", (LI,))
    one = dv.defines("K_layer", g * d_head * q, "one layer's key for one token: g KV heads of d_head values")
    dv.defines("KV_token", 2 * l * one, "a key and a value, in each of l layers")
    dv.concludes("memory.kv_cache.per_token")
    return dv


def kv_per_sequence() -> Derivation:
    dv = Derivation("memory.kv_cache.per_sequence", "One sequence's KV cache", (LI,))
    per_sequence = dv.defines("KV_seq", s * get("memory.kv_cache.per_token").part, "every token of the sequence is cached")
    dv.concludes("memory.kv_cache.per_sequence")
    without_gqa = per_sequence.subs({**LLAMA2_70B, g: 64})
    dv.refutes(
        "001: 5 GB per prompt",
        5 * 2**30,
        "001's own figures (80 GB for b = 8 at 4096 tokens) give 10 GiB per prompt without GQA",
        correct=without_gqa,
        source=LI,
        unit="byte",
        binary=True,
    )
    dv.defines("KV_70B", per_sequence.subs({**LLAMA2_70B, g: 8}), "the real LLaMA-2 70B has g = 8 KV heads")
    dv.equals("KV_70B", sp.Rational(5, 4) * 2**30, "1.25 GiB per 4096-token sequence", aside=True)
    return dv


def kv_cache() -> Derivation:
    dv = Derivation("memory.kv_cache", "The KV cache of a batch", (LI,))
    cache = dv.defines("KV", b * get("memory.kv_cache.per_sequence").part, "b sequences, never merged")
    dv.concludes("memory.kv_cache")
    dv.refutes(
        "S12: 80 GB",
        sp.Integer(80 * 10**9),
        "001's 2 × 80 × 8192 × 4096 × 8 × 2 bytes are 80 GiB (2³⁰ bytes each), 85.9 GB: its 'GB' are GiB",
        correct=cache.subs({**LLAMA2_70B, g: 64, b: 8}),
        source=LI,
        unit="byte",
    )
    return dv


def inference() -> Derivation:
    dv = Derivation("memory.inference", "What inference holds", (LI,))
    dv.defines(
        "M_infer",
        get("memory.model_states.inference").part + get("memory.kv_cache").part + b * s * h * q,
        "the weights, the KV cache, and the current layer's [b, s, h] activations (0.5 GB at b = 8, s = 4096, h = 8192)",
    )
    dv.concludes("memory.inference")
    return dv


# --- per GPU ----------------------------------------------------------------------------


def per_gpu() -> Derivation:
    dv = Derivation("memory.per_gpu", "The first pipeline stage's GPU", (BILIBILI, KORTHIKANTI))
    dv.defines("M", get("memory.zero").part + get("memory.activations.1f1b").part, "model states of its Ψ/(t·p) parameters, and l layers' worth of activations")
    dv.concludes("memory.per_gpu")
    return dv


def headroom() -> Derivation:
    dv = Derivation("memory.per_gpu.headroom", "Does it fit?", (BILIBILI,))
    dv.defines("M_free", M_gpu - get("memory.per_gpu").part, "capacity minus need; the layout fits when it is ≥ 0")
    dv.concludes("memory.per_gpu.headroom")
    return dv


def max_micro_batch() -> Derivation:
    dv = Derivation("memory.max_micro_batch", "The largest micro-batch that fits", (BILIBILI, KORTHIKANTI))
    need = get("memory.per_gpu").dimensioned
    beta = sp.Dummy("beta", positive=True)  # b relaxed to a real number for solving
    root = sp.solve(sp.Eq(need.subs(b, beta), M_gpu), beta)
    (solution,) = root
    dv.defines("b*", solution, "memory.per_gpu is linear in b: solve memory.per_gpu = M_GPU for b")
    activations_per_sequence = get("memory.activations.1f1b").dimensioned / b
    dv.equals("b*", (M_gpu - get("memory.zero").part) / activations_per_sequence, "the capacity left beside the model states, per sequence of activations")
    dv.defines("b_max", sp.floor((M_gpu - get("memory.zero").part) / activations_per_sequence), "micro-batches are whole: round down")
    dv.concludes("memory.max_micro_batch")
    return dv


DERIVATIONS = (
    model_states,
    model_states_fp32_grads,
    model_states_grad_buffers,
    ddp_buckets,
    bf16_fp32_grads,
    model_states_sgd,
    optimizer_adam,
    inference_weights,
    inference_int8,
    inference_int4,
    *(lambda stage=stage: _zero(stage) for stage in range(4)),
    zero_offload_gpu,
    zero_offload_cpu,
    layer_exact,
    layer,
    layer_tp,
    layer_tp_sp,
    layer_selective,
    layer_selective_sp,
    layer_flash,
    layer_gated,
    layer_general_tp,
    layer_general_tp_sp,
    layer_general_flash,
    layer_general_flash_sp,
    token_bytes,
    layer_general_selective,
    layer_general_selective_sp,
    *(lambda mode=mode: layer_decoder(mode) for mode in DECODER_MODES),
    *(lambda mode=mode: layer_decoder_moe(mode) for mode in DECODER_MODES),
    layer_full,
    layer_full_sp,
    first_stage,
    first_stage_interleaved,
    selective_001,
    llama_002,
    training_selective,
    kv_per_token,
    kv_per_sequence,
    kv_cache,
    inference,
    per_gpu,
    headroom,
    max_micro_batch,
)
