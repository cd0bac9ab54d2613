"""Proofs of formulas/topics/framework_memory.py: states at a framework's bytes, a stage's parameters, the activations outside
the layers, transformers' blocks.

The states are summed part by part and reduce exactly to memory.zero.* (16 bytes) and Megatron's distributed optimizer
(q_G = 4). A stage's parameters are the mean layer's TP-split and replicated parts; at t = t_E = e = p = 1 the first
stage and its experts are the whole model and its MTP modules, exactly. The embedding, output-layer and transformers
forms are tensor inventories (what tests/test_framework_memory.py measures with PyTorch's saved-tensor hooks) whose
per-token statistics the printed forms drop; transformers' sdpa layer is proved to be the decoder's flash form without
dropout plus its eager RMSNorms' extra 8h.
"""

from __future__ import annotations

import sympy as sp

from llm_formulas.derivations.vocabulary.engine import Derivation
from llm_formulas.derivations.topics.memory import FP32, HALF, INDEX, MASK, Stored, exact_bytes
from llm_formulas.formulas.topics import framework_memory as fm
from llm_formulas.formulas.vocabulary.catalogue import Source, get
from llm_formulas.formulas.vocabulary.symbols import (
    P, P_unit, V, a, b, b_ssm, c_byte, d, d_emb, d_ff, d_head, d_vh, drop, e, g, gated, glu_fused, h, l, l_gdn, l_lru,
    l_mamba, l_noattn, l_nomlp, l_ssd, mla, n_mtp, p, piped, q_bf16, q_fp32, q_g, q_o, q_p, s, t, t_e, tied, u_param,
    x_attn,
)

BYTES_16 = {q_p: q_bf16, q_g: q_bf16, q_o: 3 * q_fp32}  # mixed-precision Adam with 16-bit gradients: 2 + 2 + 12


# --- model states -----------------------------------------------------------------------------------------


def states(stage: int) -> Derivation:
    target = "memory.states" + ("" if stage == 0 else f".stage{stage}")
    dv = Derivation(target, f"Model states at a framework's bytes, ZeRO stage {stage}", (fm.ZERO, fm.MEGATRON_STATES))
    parts = []
    for width, first, what in ((q_p, 3, "weights"), (q_g, 2, "gradients"), (q_o, 1, "optimizer states")):
        split = stage >= first
        parts.append(dv.defines(f"M_{what.split()[0]}", width * P / (d if split else 1),
                                f"{what}: " + ("partitioned over the d replicas" if split else "whole on every replica")))
    total = dv.defines("M_states", sp.Add(*parts), "the three parts")
    dv.concludes(target)
    zero = "memory.zero" + ("" if stage == 0 else f".stage{stage}")
    dv.defines("M(16 bytes)", total.xreplace(BYTES_16).xreplace({P: P / (t * p)}),
               "q_W = q_G = 2, q_O = 12 at the Ψ/(t·p) parameters of a model-parallel rank")
    dv.equals("M(16 bytes)", get(zero).dimensioned, f"exactly {zero}")
    if stage == 1:
        dv.defines("M(fp32 grads)", total.xreplace({**BYTES_16, q_g: q_fp32}).xreplace({P: P / (t * p)}),
                   "Megatron Core in bf16: fp32 main gradients (q_G = 4), whole on every replica")
        dv.equals("M(fp32 grads)", get("memory.distributed_optimizer").part,
                  "exactly Megatron's distributed optimizer, 6 + 12/d bytes per parameter")
    return dv


def _defined(target: str, title: str, label: str, expr: sp.Expr, why: str, sources) -> Derivation:
    dv = Derivation(target, title, sources)
    dv.defines(label, expr, why)
    dv.concludes(target)
    return dv


def step_fp32() -> Derivation:
    return _defined("memory.deepspeed.step_fp32_grads", "DeepSpeed's step casts the gradient partition to fp32", "M_step",
                    q_fp32 * P / d, "the rank's 1/d partition, 4 bytes per value, while the 16-bit partition is still held",
                    (fm.DEEPSPEED_STEP,))


def zero3_gathered() -> Derivation:
    return _defined("memory.zero3.gathered", "ZeRO-3's gathered module, as DeepSpeed's estimator prices it", "M_live",
                    2 * q_bf16 * P_unit, "the largest module's 16-bit weights (2 bytes) and 16-bit gradients (2 bytes)",
                    (fm.DEEPSPEED_LIVE,))


def fsdp_gathered() -> Derivation:
    unit = P_unit
    dv = Derivation("memory.fsdp.gathered", "FSDP's gathered units at the backward's peak", (fm.FSDP,))
    current = dv.defines("M_current", q_bf16 * unit, "the current unit's parameters all-gathered in bf16")
    ahead = dv.defines("M_prefetch", q_bf16 * unit, "BACKWARD_PRE: the next unit's, gathered while this one runs")
    grads = dv.defines("M_grads", q_bf16 * unit, "the current unit's unsharded bf16 gradients before the reduce-scatter")
    dv.defines("M_gathered", current + ahead + grads, "held together")
    dv.concludes("memory.fsdp.gathered")
    return dv


def ddp_fp32_buckets() -> Derivation:
    return _defined("memory.ddp.buckets.fp32", "DDP's buckets for fp32 gradients", "M_buckets", q_fp32 * P,
                    "each gradient copied into its all-reduce bucket (gradient_as_bucket_view off): 4 bytes beside the 4 of "
                    "the gradient itself", (Source("pytorch-ddp", "gradient_as_bucket_view=False"),))


def weight_casts() -> Derivation:
    dv = Derivation("memory.amp.weight_casts", "Autocast's bf16 copies of the Linear weights", (fm.AUTOCAST,))
    layers = dv.defines("Ψ_linear,layers", l * (get("params.decoder.attention").part + get("params.decoder.mlp").part
                                                - fm.ATTENTION_NORMS * u_param),
                        "each layer's projections and MLP are nn.Linear; its norms (q/k norms, sinks too) run in fp32: no cast")
    head = dv.defines("Ψ_head", V * d_emb * u_param, "lm_head is an nn.Linear (a tied one casts the shared table); the "
                      "embedding lookup is no autocast op")
    casts = dv.defines("M_casts", q_bf16 * (layers + head), "one bf16 copy of each, saved by its Linear for the backward")
    dv.concludes("memory.amp.weight_casts")
    dense = {fm.l_moe: 0, l_mamba: 0, l_ssd: 0, l_lru: 0, l_gdn: 0, l_noattn: 0, l_nomlp: 0, x_attn: 0}
    dv.defines("M_casts(Ψ)", q_bf16 * (get("params.decoder.total").dimensioned - get("params.decoder.embeddings").dimensioned
                                       - l * (get("params.decoder.norms").dimensioned + fm.ATTENTION_NORMS * u_param)
                                       - get("params.decoder.final_norm").dimensioned
                                       - get("params.decoder.head").dimensioned + V * d_emb * u_param).xreplace(dense),
               "the same from the model's count: Ψ less the embeddings and the norms, with the head's table once, for "
               "a decoder of attention-and-MLP layers without cross-attention (the formula's condition)")
    dv.equals("M_casts(Ψ)", casts, "for such a dense model", aside=True)
    return dv


# --- a stage's parameters -------------------------------------------------------------------------------------


def replicated(kind: str) -> Derivation:
    target = "params.decoder.replicated" + ("" if kind == "dense" else ".moe")
    dv = Derivation(target, f"What tensor parallelism replicates in a {kind} layer", (fm.DUPLICATED, fm.ESTIMATOR, fm.CROSS_LAYER))
    norms = dv.defines("Ψ_norms", get("params.decoder.norms").part, "TENorm builds each norm over the full h")
    biases = dv.defines("Ψ_bias", ((1 - mla) * fm.b_o * h + fm.b_mlp * h * (1 if kind == "dense" else fm.moe_lat)) * u_param,
                        "a row-parallel layer adds its bias after the all-reduce: the output projection's (and fc2's, or "
                        "a latent MoE's fc2_latent_proj's) whole on every rank")
    qk = dv.defines("Ψ_qk", fm.qk_norm * 2 * d_head * u_param, "q and k norms of d_head, shared by the heads")
    latent = dv.defines("Ψ_latent", fm.latent_projections * u_param,
                        "MLA's query and key/value down projections and latent norms: duplicated, not split")
    cross = dv.defines("Ψ_cross", x_attn * (fm.b_o * h + fm.norm) * u_param,
                       "a cross-attention's pre_cross_attn_layernorm of the full h and its row-parallel output bias")
    parts = [norms, biases, qk, latent, cross]
    if kind == "moe":
        parts.append(dv.defines("Ψ_router", get("params.decoder.router").part + fm.sh_gate * h * u_param,
                                "the router's E×h weight (fp32, tagged sequence-parallel) and the shared-expert gate"))
    dv.defines("Ψ_rep", sp.Add(*parts), "together")
    dv.concludes(target)
    return dv


def attention_whole() -> Derivation:
    dv = Derivation("params.decoder.attention.whole", "What tensor parallelism keeps whole of an attention block",
                    (fm.DUPLICATED, fm.ESTIMATOR))
    bias = dv.defines("Ψ_bias,O", (1 - mla) * fm.b_o * h * u_param, "the output projection is row-parallel: its bias is "
                      "added after the all-reduce, whole on every rank (MLA's o_proj has none in DeepSeek's checkpoints)")
    qk = dv.defines("Ψ_qk", fm.qk_norm * 2 * d_head * u_param, "q and k norms of d_head, shared by the heads")
    latent = dv.defines("Ψ_latent", fm.latent_projections * u_param,
                        "MLA's query and key/value down projections and latent norms: duplicated, not split")
    dv.defines("Ψ_attn^whole", bias + qk + latent, "together")
    dv.concludes("params.decoder.attention.whole")
    return dv


def replicated_mixers() -> Derivation:
    dv = Derivation("params.recurrent.replicated", "What tensor parallelism keeps whole of the recurrent mixers",
                    (fm.MIXER_TP,))
    ssd = dv.defines("Ψ_SSD,rep", l_ssd * b_ssm * h * u_param,
                     "Mamba-2: in_proj, the convolution, dt_bias, A_log, D and the gated norm are split by heads and "
                     "groups; only a row-parallel out_proj's bias stays whole (Megatron Core builds none)")
    gdn = dv.defines("Ψ_GDN,rep", l_gdn * d_vh * u_param,
                     "gated delta-net: out_norm is one value head's RMSNorm (value_head_dim), shared by the heads")
    whole = dv.defines("Ψ_S6 + Ψ_LRU", l_mamba * get("params.recurrent.mamba").part
                       + l_lru * get("params.recurrent.rglru").part,
                       "Mamba (S6) and RG-LRU mixers: no framework splits them; whole at t = 1 (the condition)")
    dv.defines("Ψ_rep^mix", ssd + gdn + whole, "together")
    dv.concludes("params.recurrent.replicated")
    return dv


def stage_layers() -> Derivation:
    dv = Derivation("params.stage.layers", "A stage's l/p layers on one GPU", tuple(fm.STAGE_SOURCES))
    dv.defines("Ψ_layers^¬E", fm.layer_parts, "the l layers' parameters as params.decoder.total counts them, the routed "
               "experts aside")
    dv.concludes("params.decoder.layers.unrouted")
    dv.defines("Ψ_whole^l", fm.whole_layers, "what TP keeps whole in each: norms, row-parallel biases, latent projections, "
               "q/k norms, routers and gates, the mixers' unsplit parts")
    dv.concludes("params.stage.whole")
    split = dv.defines("Ψ_split", fm.split_layers / (p * t), "the l/p mean layers' projections and vocabulary, 1/t each")
    whole = dv.defines("Ψ_whole", fm.whole_layers / p, "what the l/p layers keep whole on every TP rank")
    dv.defines("Ψ_layers", split + whole, "together")
    dv.concludes("params.stage.layers")
    classic = {l_mamba: 0, l_ssd: 0, l_lru: 0, l_gdn: 0, l_noattn: 0, l_nomlp: 0}
    dv.defines("Ψ_whole (attention layers)", whole.xreplace(classic),
               "in a decoder whose every layer has attention and an MLP (or the experts)")
    dv.equals("Ψ_whole (attention layers)", ((l - fm.l_moe) * get("params.decoder.replicated").part
                                             + fm.l_moe * get("params.decoder.replicated.moe").part) / p,
              "l/p layers' share of the dense and the MoE layers' replicated parameters", aside=True)
    return dv


def stage_layer_experts() -> Derivation:
    return _defined("params.stage.layers.experts", "A stage's experts on one GPU", "Ψ_E,layers",
                    fm.l_moe * fm.experts_of_layer / p / (t_e * e),
                    "the stage's l_moe/p MoE layers' E experts each, spread over t_E·e ranks (expert TP and EP)",
                    tuple(fm.STAGE_SOURCES))


def mtp_experts() -> Derivation:
    return _defined("params.stage.mtp.experts", "The MTP modules' experts on one GPU", "Ψ_E,MTP",
                    n_mtp * fm.experts_of_layer / (t_e * e), "each MTP module's MoE layer's E experts, over t_E·e ranks",
                    tuple(fm.STAGE_SOURCES))


def _stage(target: str, title: str, last: bool) -> Derivation:
    dv = Derivation(target, title, tuple(fm.STAGE_SOURCES))
    layers_part = dv.defines("Ψ_layers", get("params.stage.layers").part, "the stage's l/p layers")
    if last:
        ends = dv.defines("Ψ_ends", (tied * fm.token_embedding + get("params.decoder.head").part) / t
                          + get("params.decoder.final_norm").part + fm.mtp_dense
                          + n_mtp * (1 - tied) * fm.token_embedding / t,
                          "the head's 1/t (a tied model's copy of the embedding), the final norm, the MTP modules and, "
                          "untied, the embedding the MTP stage builds for its shifted tokens")
    else:
        ends = dv.defines("Ψ_ends", fm.token_embedding / t + fm.embedding_extras
                          + (1 - piped) * (get("params.decoder.head").part / t
                                           + get("params.decoder.final_norm").part + fm.mtp_dense),
                          "the vocabulary-parallel embedding's 1/t and the position table; at p = 1 the last stage's too")
    dv.defines("Ψ_GPU", layers_part + ends, "the stage's parameters on one GPU")
    dv.concludes(target)
    return dv


def first_stage() -> Derivation:
    dv = _stage("params.stage.first", "The first stage's GPU: l/p layers and the embedding", last=False)
    one_gpu = {t: 1, t_e: 1, e: 1, p: 1, piped: 0}
    dv.defines("Ψ_GPU + Ψ_GPU,E (one GPU)", sp.Add(dv.step("Ψ_GPU").expr,
                                                  get("params.stage.layers.experts").dimensioned
                                                  + get("params.stage.mtp.experts").dimensioned).xreplace(one_gpu),
               "at t = t_E = e = p = 1, with the experts of every MoE layer and MTP module")
    dv.equals("Ψ_GPU + Ψ_GPU,E (one GPU)", get("params.decoder.total").part + get("params.decoder.mtp").part,
              "the whole model as transformers counts it, and its MTP modules")
    return dv


def last_stage() -> Derivation:
    return _stage("params.stage.last", "The last stage's GPU: l/p layers, the head and the MTP modules", last=True)


# --- activations outside the layers ---------------------------------------------------------------------


def head_tensors(sequence_parallel: bool) -> list[Stored]:
    """What Megatron's output layer and vocabulary-parallel cross-entropy keep per rank (tests/head_block.py)."""
    rows = s * b / (t if sequence_parallel else 1)
    return [
        Stored("norm in", rows * h, HALF, "the final norm's input"),
        Stored("norm mean, rstd", 2 * rows, HALF, "its statistics"),
        Stored("head in", rows * h, HALF, "the column-parallel head's input (its s/t shard under SP, gathered again in backward)"),
        Stored("softmax", s * b * V / t, FP32, "exp_logits: the logits cast to fp32, the softmax computed in place"),
        Stored("target mask", s * b, MASK, "which targets fall outside this rank's V/t"),
        Stored("masked target", s * b, INDEX, "the targets shifted into this rank's range (int64)"),
    ]


def logits(sequence_parallel: bool) -> Derivation:
    target = "memory.activations.logits" + ("_sp" if sequence_parallel else "")
    dv = Derivation(target, "The output layer and the loss" + (" with SP" if sequence_parallel else ""),
                    (fm.CROSS_ENTROPY, fm.ESTIMATOR))
    _without_statistics(dv, head_tensors(sequence_parallel), ("norm mean, rstd",), "A_logits")
    dv.concludes(target)
    return dv


def _without_statistics(dv: Derivation, tensors: list[Stored], statistics: tuple[str, ...], label: str) -> sp.Expr:
    """Each stored tensor, their sum, and the sum less the per-token statistics (what the printed forms keep)."""
    for tensor in tensors:
        dv.defines(tensor.label, tensor.bytes, tensor.why)
    exact = dv.defines("A_exact", exact_bytes(tensors), "every stored tensor", parts=tuple(x.label for x in tensors))
    dropped = dv.defines("−A_stats", -exact_bytes([x for x in tensors if x.label in statistics]),
                         "less the per-token statistics the forms drop (a mean or rstd per row)")
    return dv.defines(label, sp.Add(exact, dropped), "the tensors the form counts", parts=("A_exact", "−A_stats"))


def embedding(sequence_parallel: bool) -> Derivation:
    target = "memory.activations.embedding" + ("_sp" if sequence_parallel else "")
    dv = Derivation(target, "The token embedding" + (" with SP" if sequence_parallel else ""), (fm.ESTIMATOR,))
    ids = dv.defines("A_ids", s * b * INDEX, "the lookup keeps the int64 token ids for its backward")
    mask = dv.defines("A_mask", drop * s * b * h / (t if sequence_parallel else 1) * MASK,
                      "the embedding dropout's 1-byte mask" + (" on the rank's s/t tokens" if sequence_parallel else ""))
    dv.defines("A_emb", ids + mask, "together")
    dv.concludes(target)
    return dv


# --- transformers' blocks ----------------------------------------------------------------------------------


def transformers_tensors(core: str, amp: bool) -> list[Stored]:
    """transformers' Llama-family layer: what its eager RMSNorm, attention and MLP save (bf16, or under autocast)."""
    x = s * b * h
    norm_out = FP32 if amp else HALF

    def norm(name: str) -> list[Stored]:
        return [Stored(f"{name} in", x, FP32, "hidden_states.to(float32): the pow and the multiply keep it"),
                Stored(f"{name} rstd", s * b, FP32, "rsqrt(variance + eps), one per token"),
                Stored(f"{name} normalised", x, norm_out, "the normalised value, kept by the weight's multiply"
                       + (" (fp32 under autocast)" if amp else " (cast to bf16)"))]

    def inputs(name: str, count: sp.Expr) -> list[Stored]:
        if amp:
            return [Stored(f"{name} casts", count * x, HALF, "each nn.Linear casts the fp32 normalised value to bf16 itself")]
        return [Stored(f"{name} in", x, HALF, "the weighted output: the projections' shared input")]

    heads, kv = s * b * a * d_head, s * b * g * d_head
    attention = {
        "eager": [Stored("Q", heads, HALF, "the rotated query (the rotary multiply keeps only cos and sin)"),
                  Stored("K repeated", heads, HALF, "repeat_kv copies K to a heads"),
                  Stored("softmax fp32", a * s**2 * b, FP32, "softmax(dtype=float32) keeps its output"),
                  Stored("scores bf16", a * s**2 * b, HALF, "its bf16 copy, the left input of scores·V"),
                  Stored("V repeated", heads, HALF, "repeat_kv copies V to a heads"),
                  Stored("attn out", heads, HALF, "the transposed output made contiguous: o_proj's input")],
        "sdpa": [Stored("Q", heads, HALF, "the flash kernel's query"),
                 Stored("K", kv, HALF, "g heads (enable_gqa)"),
                 Stored("V", kv, HALF, "g heads"),
                 Stored("log-sum-exp", a * s * b, FP32, "one fp32 statistic per head and token"),
                 Stored("attn out", heads, HALF, "the kernel's output, also o_proj's input")],
    }[core]
    inner = s * b * d_ff
    mlp = [Stored("act in", inner, HALF, "gate_proj's output (fc1's ungated), the activation's input"),
           Stored("act out", gated * inner, HALF, "gated: the SiLU's output"),
           Stored("up", gated * inner, HALF, "gated: up_proj's output"),
           Stored("fc2 in", inner, HALF, "down_proj's input: the product (the activation's output ungated)")]
    return [*norm("LN₁"), *inputs("QKV", 3), *attention, *norm("LN₂"), *inputs("MLP", 1 + gated), *mlp]


HF_STATISTICS = ("LN₁ rstd", "LN₂ rstd")


def transformers_layer(core: str, amp: bool) -> Derivation:
    target = f"memory.activations.layer.{'amp' if amp else 'transformers'}.{core}"
    dv = Derivation(target, f"transformers' Llama layer{' under autocast' if amp else ''}, {core} attention",
                    (fm.TRANSFORMERS,) + ((fm.AUTOCAST,) if amp else ()))
    printed = _hf_printed(core, amp)
    counted = _without_statistics(dv, transformers_tensors(core, amp), HF_STATISTICS, "A")
    dv.equals("A", printed, "per token: the norms, the Linear inputs, the attention's and the MLP's tensors")
    dv.concludes(target)
    if core == "sdpa" and not amp:
        dv.defines("A − A_dec^flash", sp.Add(printed, -get("memory.activations.layer.decoder.flash").dimensioned.xreplace(
            {t: 1, drop: 0, glu_fused: 0, mla: 0}), evaluate=False),
            "against the decoder's flash form of the same block at t = 1, without dropout, unfused SwiGLU")
        dv.equals("A − A_dec^flash", 8 * s * b * h * c_byte,
                  "only the eager RMSNorms differ: each keeps its fp32 input and its normalised value besides the "
                  "input and output a fused norm keeps, 4h more per norm", aside=True)
    return dv


def _hf_printed(core: str, amp: bool) -> sp.Expr:
    whole = fm.AMP_WHOLE if amp else 16 * h
    attention = 8 * a * d_head if core == "eager" else 4 * d_head * (a + g)
    scores = 6 * a * s**2 * b if core == "eager" else 4 * a * s * b
    return (s * b * (whole + attention + fm.HF_MLP) + scores) * c_byte


def amp_full() -> Derivation:
    return _defined("memory.activations.layer.amp.full_recompute", "Gradient checkpointing under autocast", "A_full",
                    s * b * h * FP32, "the checkpoint keeps the layer's input: the fp32 residual stream (the embedding is "
                    "no autocast op)", (fm.TRANSFORMERS, fm.AUTOCAST))


def hf_logits(amp: bool) -> Derivation:
    target = "memory.activations.logits." + ("amp" if amp else "transformers")
    dv = Derivation(target, "transformers' final norm, head and loss" + (" under autocast" if amp else ""),
                    (fm.TRANSFORMERS,) + ((fm.AUTOCAST,) if amp else ()))
    x = s * b * h
    tensors = [Stored("norm in", x, FP32, "the final RMSNorm's fp32 input"),
               Stored("norm rstd", s * b, FP32, "its rstd"),
               Stored("norm normalised", x, FP32 if amp else HALF, "its normalised value"),
               Stored("head in", x, HALF, "lm_head's input (its own bf16 cast under autocast)"),
               Stored("log-softmax", s * b * V, FP32, "cross_entropy on logits.float(): log_softmax keeps its fp32 output"),
               Stored("targets", s * b, INDEX, "nll_loss keeps the shifted int64 labels")]
    _without_statistics(dv, tensors, ("norm rstd",), "A_logits")
    dv.concludes(target)
    return dv


DERIVATIONS = (
    *(lambda stage=stage: states(stage) for stage in range(4)),
    step_fp32,
    zero3_gathered,
    fsdp_gathered,
    ddp_fp32_buckets,
    weight_casts,
    lambda: replicated("dense"),
    lambda: replicated("moe"),
    attention_whole,
    replicated_mixers,
    stage_layers,
    stage_layer_experts,
    mtp_experts,
    first_stage,
    last_stage,
    lambda: logits(False),
    lambda: logits(True),
    lambda: embedding(False),
    lambda: embedding(True),
    *(lambda core=core, amp=amp: transformers_layer(core, amp) for core in ("eager", "sdpa") for amp in (False, True)),
    amp_full,
    lambda: hf_logits(False),
    lambda: hf_logits(True),
)
