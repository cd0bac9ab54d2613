"""Memory as the frameworks hold it: the bytes a framework keeps per parameter, the parameters of one pipeline stage's
GPU, and the activations outside the layers (the embedding, the output layer and the loss), each read off the
framework's code and measured on a reference block (tests/test_framework_memory.py).

Model states per GPU (Rajbhandari et al. 2020, with the bytes a framework keeps): q_W bytes per weight, q_G per
gradient, q_O of optimizer state (12 = fp32 master, Adam's m and v; 8 when the weights are fp32 already); ZeRO
stage k partitions the last k of (weights, gradients, optimizer) over the d replicas:
    stage 0  (q_W + q_G + q_O)·Ψ        stage 1  (q_W + q_G)·Ψ + q_O·Ψ/d
    stage 2  q_W·Ψ + (q_G + q_O)·Ψ/d    stage 3  (q_W + q_G + q_O)·Ψ/d
Megatron Core keeps bf16 weights and fp32 main gradients (q_G = 4: --bf16 sets accumulate_allreduce_grads_in_fp32,
megatron/training/arguments.py L1204–1217 at d98e8a64): 18 bytes, and stage 1 is its distributed optimizer,
6 + 12/d (docs/user-guide/features/dist_optimizer.md). DeepSpeed's ZeRO keeps bf16 gradients (q_G = 2); its optimizer
step casts the rank's gradient partition to fp32 beside them (stage_1_and_2.py L1891–1902 at 38327e07). PyTorch FSDP
and the Hugging Face Trainer keep the model in fp32 (q_W = 4, q_G = 4, q_O = 8) and compute in bf16.

Parameters of a GPU (Megatron Core, megatron/training/theoretical_memory_usage.py L205–264 at d98e8a64 and the
modules it counts): tensor parallelism splits the projections and the vocabulary t ways but keeps whole on every rank
the norms, the row-parallel layers' biases, the q/k norms, the router and the shared-expert gate, and MLA's down
projections with their latent norms (Transformer Engine's spec builds them ``parallel_mode="duplicated"``,
megatron/core/transformer/multi_latent_attention.py L524–602, gpt_layer_specs.py L302–304); the routed experts are
split t_E·e ways. The first pipeline stage holds l/p layers and the token embedding (and at p = 1 the final norm, the
head and the multi-token-prediction modules); the last stage holds l/p layers, the head (or, tied, Megatron Core's copy
of the embedding, language_module.py L253–290), the final norm and the MTP modules. Layers are the model's mean layer
(l_moe/l of them MoE, l_SSD/l Mamba-2, ...: every layer kind params.decoder.total counts), as Megatron's own estimator
counts them. A recurrent mixer is split like the projections but for what Megatron Core's MambaMixer and GatedDeltaNet
keep whole (params.recurrent.replicated); a cross-attention keeps its norm and its output bias whole.
"""

from __future__ import annotations

from llm_formulas.formulas.vocabulary.catalogue import Condition, Source, divides, formula
from llm_formulas.formulas.topics import architecture as arch
from llm_formulas.formulas.topics import recurrent
from llm_formulas.formulas.vocabulary.symbols import (
    E,
    P,
    P_unit,
    V,
    a,
    b,
    b_mlp,
    b_o,
    b_ssm,
    c_byte,
    d,
    d_emb,
    d_ff,
    d_head,
    d_rope,
    d_vh,
    drop,
    e,
    gated,
    g,
    h,
    l,
    l_gdn,
    l_lru,
    l_mamba,
    l_moe,
    l_ssd,
    mla,
    moe_lat,
    n_mtp,
    p,
    piped,
    q_bf16,
    q_fp32,
    q_g,
    q_lora,
    q_o,
    q_p,
    qk_norm,
    qk_norm_full,
    r_kv,
    r_q,
    s,
    sh_gate,
    sink,
    t,
    t_e,
    tied,
    u_param,
    x_attn,
)

MEGATRON_STATES = Source("megatron-core", "megatron/training/arguments.py L1204–1217 (bf16: fp32 main grads), "
                         "param_and_grad_buffer.py (the whole grad and param buffers), distrib_optimizer.py L347–470")
DISTOPT = Source("megatron-distopt", "bytes per parameter: bf16 param, fp32 grads 18 → 6 + 12/d")
ESTIMATOR = Source("megatron-estimator", "theoretical_memory_usage.py L205–264: TP-sharded, replicated and expert "
                   "parameters of the most loaded shard")
DUPLICATED = Source("megatron-core", "multi_latent_attention.py L524–602 (linear_q_down_proj, linear_kv_down_proj "
                    "parallel_mode='duplicated'); moe/router.py L62–88 (the router's E×h weight on every rank); "
                    "extensions/transformer_engine.py L1048–1105 (TENorm of the full h)")
TIED_COPY = Source("megatron-core", "models/common/language_module/language_module.py L253–290 (a tied embedding's copy on "
                   "the last pipeline stage)")
CROSS_ENTROPY = Source("megatron-core", "tensor_parallel/cross_entropy.py L25, L181: the logits cast to fp32, "
                       "save_for_backward(exp_logits, target_mask, masked_target_1d)")
DEEPSPEED_STEP = Source("deepspeed-zero", "stage_1_and_2.py L1885–1921: single_grad_partition = flatten(...).to(fp32) "
                        "beside the bit16 partition during the step")
DEEPSPEED_LIVE = Source("deepspeed-zero", "stage3.py L3008–3044: largest_layer_memory = 4 · largest_layer_params")
FSDP = Source("pytorch-fsdp", "FULL_SHARD unshards before the forward and backward; BACKWARD_PRE holds the current and "
              "next parameters and the current gradients; MixedPrecision keeps the sharded parameters in full precision")
TRANSFORMERS = Source("transformers", "models/llama/modeling_llama.py: LlamaRMSNorm, LlamaMLP, eager_attention_forward "
                      "(repeat_kv, softmax in fp32), loss_utils.py ForCausalLMLoss (logits.float(), cross_entropy)")
AUTOCAST = Source("pytorch", "torch.autocast: each nn.Linear casts its weight and input to bf16 and saves the casts")
ZERO = Source("rajbhandari2020", "§5, Figure 1")
MIXER_TP = Source("megatron-core", "ssm/mamba_mixer.py at 00bebb45 (in_proj column-parallel; conv1d, dt_bias, A_log, D and "
                  "the gated norm over d_inner/t; assert not bias), ssm/gated_delta_net.py at 00caa53a (in_proj, conv1d, "
                  "dt_bias, A_log split; out_norm over value_head_dim)")
CROSS_LAYER = Source("megatron-core", "transformer/transformer_layer.py (pre_cross_attn_layernorm of the full h), "
                     "transformer/attention.py CrossAttention (linear_q, linear_kv column-parallel, linear_proj row-parallel)")

PARAMETERS = Condition("Ψ: the parameters of the group the GPU holds (the dense ones, or the experts'); d: the "
                       "replicas that partition them")
MEAN_LAYER = Condition("each stage holds l/p of the model's mean layer (l_moe/l of it MoE, each kind of mixer its share), "
                       "as Megatron's estimator counts")
WHOLE_MIXERS = Condition("t = 1 where the model has Mamba (S6) or RG-LRU layers: no framework splits them over TP ranks")

# --- model states at the bytes a framework keeps ---------------------------------------------------------

STATE_PARTS = ((q_p, 3), (q_g, 2), (q_o, 1))  # (bytes per parameter, the ZeRO stage from which ZeRO partitions them)


def _states(stage: int):
    return sum((width * P / d if stage >= first else width * P) for width, first in STATE_PARTS)


states = {
    stage: formula(
        "memory.states" + ("" if stage == 0 else f".stage{stage}"),
        _states(stage),
        "byte",
        f"model states of Ψ parameters at ZeRO stage {stage}, q_W bytes per weight, q_G per gradient and q_O of optimizer "
        "state" + ("" if stage == 0 else f", the last {stage} of them partitioned over the d replicas"),
        sources=[ZERO, MEGATRON_STATES, DISTOPT],
        conditions=[PARAMETERS],
        related=["memory.zero" + ("" if stage == 0 else f".stage{stage}"), "memory.distributed_optimizer"],
        symbol_latex=rf"M_{{states}}^{{{stage}}}",
        notes="At q_W = q_G = 2, q_O = 12 and Ψ = Ψ/(t·p) it is memory.zero.* (16 bytes); at q_G = 4 stage 1 is "
        "Megatron's distributed optimizer (6 + 12/d).",
    )
    for stage in range(4)
}
step_fp32 = formula(
    "memory.deepspeed.step_fp32_grads",
    q_fp32 * P / d,
    "byte",
    "DeepSpeed ZeRO's optimizer step: the rank's 1/d partition of the gradients cast to fp32 beside the 16-bit ones",
    sources=[DEEPSPEED_STEP],
    conditions=[PARAMETERS],
    related=["memory.states.stage2"],
    symbol_latex=r"M_{step}^{fp32}",
    notes="With one parameter group the cast covers the whole partition; ZeRO-3 casts one sub-group "
    "(sub_group_size, 1e9 elements) at a time, so there it holds while Ψ/d ≤ 1e9.",
)
zero3_gathered = formula(
    "memory.zero3.gathered",
    (q_bf16 + q_bf16) * P_unit,
    "byte",
    "ZeRO-3's gathered parameters as DeepSpeed's estimator prices them: the largest module's 16-bit weights and "
    "gradients, 4·Ψ_unit",
    sources=[DEEPSPEED_LIVE],
    symbol_latex=r"M_{gathered}^{ZeRO-3}",
    notes="The runtime bound is stage3_max_live_parameters (1e9 elements, 2 GB in bf16; config.py L208).",
)
fsdp_gathered = formula(
    "memory.fsdp.gathered",
    3 * q_bf16 * P_unit,
    "byte",
    "FSDP FULL_SHARD's gathered unit at the backward's peak: the current and the prefetched unit's bf16 parameters and "
    "the current unit's unsharded bf16 gradients, 6·Ψ_unit",
    sources=[FSDP],
    symbol_latex=r"M_{gathered}^{FSDP}",
)
ddp_fp32_buckets = formula(
    "memory.ddp.buckets.fp32",
    q_fp32 * P,
    "byte",
    "PyTorch DDP's buckets for fp32 gradients (Hugging Face Trainer through accelerate: gradient_as_bucket_view=False): a "
    "second fp32 copy of every gradient (4Ψ)",
    sources=[Source("pytorch-ddp", "gradient_as_bucket_view=False"),
             Source("accelerate", "DistributedDataParallelKwargs(gradient_as_bucket_view=False)")],
    related=["memory.ddp.buckets"],
    symbol_latex=r"M_{DDP}^{fp32}",
)
ATTENTION_LAYERS = Condition("a dense decoder whose every layer is attention and an MLP, without cross-attention "
                             "(l_MoE = l_S6 = l_SSD = l_LRU = l_GDN = l_noattn = l_noMLP = 0, σ_x = 0): the only one "
                             "measured under autocast, and the only one the transformers frameworks price")
ATTENTION_NORMS = qk_norm * 2 * d_head + qk_norm_full * (a + g) * d_head + sink * a  # no Linear: no cast
weight_casts = formula(
    "memory.amp.weight_casts",
    q_bf16 * (l * (arch.attention.part + arch.mlp.part - ATTENTION_NORMS * u_param) + V * d_emb * u_param),
    "byte",
    "autocast's bf16 copies of every nn.Linear weight of a dense model: the l layers' attention and MLP and the head "
    "(the embedding's and the norms' not), each saved for its layer's backward",
    sources=[AUTOCAST, Source("hf-memory-anatomy", "mixed precision keeps the model in fp32 and in 16-bit: 6 bytes")],
    conditions=[ATTENTION_LAYERS],
    symbol_latex=r"M_{AMP}^{casts}",
    notes="Measured on transformers' Llama under torch.autocast (tests/test_framework_memory.py): the casts are the "
    "non-parameter storages of the weights' shape. They live from the forward to each layer's backward, so they add to "
    "the peak but not to the step.",
)

# --- the parameters of one GPU: what tensor parallelism splits and what it replicates ----------------------

norm = arch.norm  # one norm: a scale, and a shift for LayerNorm
latent_projections = mla * (q_lora * (h * r_q + r_q) + h * (r_kv + d_rope) + r_kv)  # MLA's down projections and latent norms
attention_whole = (1 - mla) * b_o * h + qk_norm * 2 * d_head + latent_projections  # an attention block's, kept whole
kept_whole = formula(
    "params.decoder.attention.whole",
    attention_whole * u_param,
    "parameter",
    "what tensor parallelism keeps whole of one attention block: the row-parallel output projection's bias, the q and k "
    "norms of d_head, MLA's down projections and latent norms",
    sources=[DUPLICATED, ESTIMATOR],
    related=["params.decoder.attention", "params.decoder.replicated"],
    symbol_latex=r"\Psi_{attn}^{whole}",
)
cross_whole = x_attn * (b_o * h + norm)  # the cross-attention's output bias and its own norm
replicated_dense = formula(
    "params.decoder.replicated",
    arch.norms.part + (attention_whole + cross_whole + b_mlp * h) * u_param,
    "parameter",
    "the parameters of a dense layer that tensor parallelism keeps whole on every rank: norms, the row-parallel "
    "biases of the output projection and fc2, q/k norms, MLA's down projections and latent norms, a cross-attention's "
    "output bias and norm",
    sources=[DUPLICATED, ESTIMATOR, CROSS_LAYER],
    related=["params.decoder.layer"],
    symbol_latex=r"\Psi_{rep}",
)
replicated_moe = formula(
    "params.decoder.replicated.moe",
    arch.norms.part + (attention_whole + cross_whole + (sh_gate + moe_lat * b_mlp) * h) * u_param + arch.router.part,
    "parameter",
    "the parameters of a MoE layer kept whole on every TP rank: norms, the output projection's bias, q/k norms, MLA's "
    "down projections, a cross-attention's output bias and norm, the router, the shared-expert gate and a latent "
    "MoE's fc2_latent_proj bias (its two projections split like an MLP's)",
    sources=[DUPLICATED, ESTIMATOR, CROSS_LAYER],
    related=["params.decoder.layer.moe"],
    symbol_latex=r"\Psi_{rep}^{moe}",
)
mixers_whole = formula(
    "params.recurrent.replicated",
    (l_ssd * b_ssm * h + l_gdn * d_vh) * u_param
    + l_mamba * recurrent.mamba.part + l_lru * recurrent.rglru.part,
    "parameter",
    "the parameters of a model's recurrent mixers that tensor parallelism keeps whole on every rank: a Mamba-2 "
    "out_proj's bias, the gated delta-net's output norm of one head (d_V, shared by the heads); Mamba (S6) and RG-LRU "
    "mixers whole (no framework splits them)",
    sources=[MIXER_TP],
    conditions=[WHOLE_MIXERS],
    related=["params.recurrent.mamba2", "params.recurrent.gdn"],
    symbol_latex=r"\Psi_{rep}^{mix}",
    notes="Megatron Core's MambaMixer (megatron/core/ssm/mamba_mixer.py at 00bebb45) splits in_proj column-wise "
    "(z, x, B, C and Δ of n_SSD/t heads and n_grp/t groups), the convolution over x, B, C, dt_bias, A_log and D "
    "per head and the gated RMSNorm over d_ssm/t; it asserts bias=False, so σ_b = 0 there. Its GatedDeltaNet "
    "(gated_delta_net.py at 00caa53a) splits in_proj, the convolution, dt_bias and A_log per value head, and builds "
    "out_norm over value_head_dim: d_V whole on every rank. Each layer's own norm (fused into in_proj) is a norm "
    "of the full h, counted with the layer's norms.",
)
# what params.decoder.total counts in the layers, the routed experts aside; whole: what TP keeps on every rank (latent
# MoE projections split like an MLP's, the row-parallel fc2_latent_proj's bias whole)
layer_parts = (arch.l_attn * arch.attention.part + l * (arch.cross_attention.part + arch.norms.part)
               + l_mamba * recurrent.mamba.part + l_ssd * recurrent.mamba2.part
               + l_lru * recurrent.rglru.part + l_gdn * recurrent.gdn.part + arch.l_mlp * arch.mlp.part
               + l_moe * (arch.router.part + arch.shared_experts.part + arch.moe_latent.part))
whole_layers = (l * (arch.norms.part + cross_whole * u_param) + arch.l_attn * kept_whole.part
                + arch.l_mlp * b_mlp * h * u_param + l_moe * (arch.router.part + (sh_gate + moe_lat * b_mlp) * h * u_param)
                + mixers_whole.part)
split_layers = layer_parts - whole_layers
experts_of_layer = E * arch.expert.part
mtp_dense = n_mtp * (3 * norm * u_param + 2 * h * h * u_param / t
                     + (arch.layer_moe.part - experts_of_layer - replicated_moe.part) / t
                     + replicated_moe.part)
token_embedding = V * d_emb * u_param
embedding_extras = arch.embeddings.part - token_embedding  # position table, embedding norm, OPT's projections
MTP_EMBEDDING = Source("megatron-core", "models/gpt/gpt_model.py L166–181: the MTP stage builds a LanguageModelEmbedding; "
                       "transformer/multi_token_prediction.py L780 (eh_proj column-parallel), L1157–1247 (enorm, hnorm, "
                       "final_layernorm)")
STAGE_SOURCES = [ESTIMATOR, DUPLICATED, MIXER_TP, CROSS_LAYER, TIED_COPY, MTP_EMBEDDING,
                 Source("deepseek2024v3", "§2.2 (the MTP modules)")]
STAGE = [MEAN_LAYER, Condition("t_E divides t"), Condition("e divides E"), arch.MOE_LAYERS, arch.MIXERS, arch.CHANNELS,
         WHOLE_MIXERS,
         Condition("n_MTP ≤ 1: the MTP modules' stage builds one embedding of its own (gpt_model.py L173, untied models)")]

layers_unrouted = formula(
    "params.decoder.layers.unrouted",
    layer_parts,
    "parameter",
    "the parameters of the l layers but their routed experts: attention or a recurrent mixer, norms, dense MLPs, and in "
    "the MoE layers the router and the shared experts (what params.decoder.total counts in its layers, E·Ψ_expert aside)",
    sources=STAGE_SOURCES,
    conditions=[arch.MOE_LAYERS, arch.MIXERS],
    related=["params.decoder.total"],
    symbol_latex=r"\Psi_{layers}^{\neg E}",
)
layers_whole = formula(
    "params.stage.whole",
    whole_layers,
    "parameter",
    "what tensor parallelism keeps whole on every rank of the l layers: norms, the output and MLP-down biases, latent "
    "projections, q/k norms, routers and shared-expert gates, the recurrent mixers' unsplit parts",
    sources=STAGE_SOURCES,
    conditions=[arch.MOE_LAYERS, arch.MIXERS],
    related=["params.decoder.replicated", "params.decoder.replicated.moe", "params.recurrent.replicated"],
    symbol_latex=r"\Psi_{whole}",
)
stage_layers = formula(
    "params.stage.layers",
    ((layers_unrouted.part - layers_whole.part) / t + layers_whole.part) / p,
    "parameter",
    "parameters of a stage's l/p layers one GPU holds, the routed experts aside: their projections 1/t, what TP "
    "replicates whole",
    sources=STAGE_SOURCES,
    conditions=STAGE,
    related=["params.decoder.replicated", "params.decoder.replicated.moe", "params.recurrent.replicated"],
    symbol_latex=r"\Psi_{GPU}^{layers}",
)
stage_layer_experts = formula(
    "params.stage.layers.experts",
    l_moe * experts_of_layer / (p * t_e * e),
    "parameter",
    "routed-expert parameters of a stage's l/p layers one GPU holds: l_moe/p MoE layers' E experts over t_E·e ranks",
    sources=STAGE_SOURCES,
    conditions=STAGE,
    related=["params.ep.experts"],
    symbol_latex=r"\Psi_{GPU,E}^{layers}",
)
first_dense = formula(
    "params.stage.first",
    stage_layers.part + token_embedding / t + embedding_extras
    + (1 - piped) * (arch.head.part / t + arch.final_norm.part + mtp_dense),
    "parameter",
    "parameters one GPU of the first pipeline stage holds, the routed experts aside: l/p layers (their projections 1/t, "
    "what TP replicates whole), the token embedding's 1/t and the position table; at p = 1 also the head, the final "
    "norm and the MTP modules",
    sources=STAGE_SOURCES,
    conditions=STAGE,
    related=["params.per_gpu.ep", "params.decoder.replicated"],
    symbol_latex=r"\Psi_{GPU}^{first}",
)
last_dense = formula(
    "params.stage.last",
    stage_layers.part + (tied * token_embedding + arch.head.part) / t
    + arch.final_norm.part + mtp_dense + n_mtp * (1 - tied) * token_embedding / t,
    "parameter",
    "parameters one GPU of the last pipeline stage (p > 1) holds, the routed experts aside: l/p layers, the head's 1/t "
    "(tied: Megatron Core's copy of the embedding), the final norm and the MTP modules with their own embedding's 1/t",
    sources=STAGE_SOURCES,
    conditions=STAGE,
    related=["params.stage.first"],
    symbol_latex=r"\Psi_{GPU}^{last}",
)
mtp_experts = formula(
    "params.stage.mtp.experts",
    n_mtp * experts_of_layer / (t_e * e),
    "parameter",
    "routed-expert parameters of the MTP modules one GPU of the last stage holds (the only stage at p = 1): n_MTP MoE "
    "layers' E experts over t_E·e ranks",
    sources=STAGE_SOURCES,
    conditions=STAGE,
    related=["params.stage.layers.experts", "params.decoder.mtp"],
    symbol_latex=r"\Psi_{GPU,E}^{MTP}",
)


# --- activations outside the layers --------------------------------------------------------------------

MEGATRON_HEAD = ("Megatron's output layer and loss (every release since 2019; Megatron Core's "
                 "tensor_parallel/cross_entropy.py): the final norm's input and the column-parallel head's input (2h "
                 "each, the rank's s/t tokens under sequence parallelism), the logits cast to fp32 and turned into the "
                 "softmax in place, saved as exp_logits (4V/t), the target mask (1 byte) and the masked target (int64). "
                 "The bf16 logits are not kept. Measured with tests/head_block.py.")
logits = formula(
    "memory.activations.logits",
    s * b * (4 * h + 4 * V / t + 9) * c_byte,
    "byte",
    "activations of the output layer and the vocabulary-parallel cross-entropy per GPU of the last stage, one micro-batch",
    sources=[CROSS_ENTROPY, ESTIMATOR],
    conditions=[divides(t, V)],
    related=["memory.activations.layer.decoder.tp"],
    symbol_latex=r"A_{logits}",
    notes=MEGATRON_HEAD,
)
logits_sp = formula(
    "memory.activations.logits_sp",
    s * b * (4 * h / t + 4 * V / t + 9) * c_byte,
    "byte",
    "the output layer and loss with sequence parallelism: the norm's and the head's inputs on the rank's s/t tokens",
    sources=[CROSS_ENTROPY, ESTIMATOR],
    conditions=[divides(t, V), divides(t, s)],
    related=["memory.activations.logits"],
    symbol_latex=r"A_{logits}^{SP}",
    notes=MEGATRON_HEAD,
)
embedding = formula(
    "memory.activations.embedding",
    s * b * (8 + drop * h) * c_byte,
    "byte",
    "activations of the token embedding on the first stage, one micro-batch: the int64 token ids the lookup keeps, and "
    "with dropout its 1-byte mask",
    sources=[ESTIMATOR, Source("megatron-core", "tensor_parallel/layers.py VocabParallelEmbedding (masked_input)")],
    symbol_latex=r"A_{emb}",
)
embedding_sp = formula(
    "memory.activations.embedding_sp",
    s * b * (8 + drop * h / t) * c_byte,
    "byte",
    "the token embedding with sequence parallelism: the ids whole, the dropout mask on the rank's s/t tokens",
    sources=[ESTIMATOR],
    conditions=[divides(t, s)],
    related=["memory.activations.embedding"],
    symbol_latex=r"A_{emb}^{SP}",
)

# --- transformers' own blocks (Hugging Face Trainer, FSDP around transformers' modules) ------------------

LLAMA_FAMILY = Condition("a transformers decoder of the Llama family: RMSNorm, rotary positions, no dropout, one GPU (t = 1)")
HF_NOTES = ("transformers' eager LlamaRMSNorm keeps its input in fp32 (4h), the normalised value (2h in bf16) and the "
            "weighted output (2h, the projections' input) and an fp32 rstd (a statistic, dropped here as in every form); "
            "the rotary multiply keeps only its cos/sin tables (shared by the layers); eager attention repeats K and V to a "
            "heads (repeat_kv) and keeps the fp32 softmax and its bf16 copy (6·a·s² bytes per sequence and head); sdpa "
            "(PyTorch's flash kernel, enable_gqa) keeps Q, K, V at g heads, the output and an fp32 log-sum-exp. Measured "
            "byte for byte on transformers 5.24 (tests/test_framework_memory.py).")
AMP_NOTES = (" Under torch.autocast (the Trainer's bf16 mixed precision on an fp32 model) the residual stream stays fp32, "
             "each norm keeps its fp32 input and fp32 normalised value (8h), and every nn.Linear casts its input to bf16 "
             "on its own: Q, K, V three casts, the MLP's up (and gate) one (or two), 2h each.")


def _hf(id_: str, expr, meaning: str, notes: str, latex: str, related=()):
    return formula(id_, expr * c_byte, "byte", meaning, sources=[TRANSFORMERS, AUTOCAST], conditions=[LLAMA_FAMILY],
                   related=list(related), symbol_latex=latex, notes=notes)


HF_MLP = 4 * (1 + gated) * d_ff  # gate (or fc1) output, SiLU output, up, product: unfused, in bf16
hf_eager = _hf("memory.activations.layer.transformers.eager", s * b * (16 * h + 8 * a * d_head + HF_MLP) + 6 * a * s**2 * b,
               "activations of one transformers Llama-family layer in bf16, eager attention", HF_NOTES,
               r"A_{HF}^{eager}", ["memory.activations.layer.general.tp"])
hf_sdpa = _hf("memory.activations.layer.transformers.sdpa", s * b * (16 * h + 4 * d_head * (a + g) + HF_MLP) + 4 * a * s * b,
              "activations of one transformers Llama-family layer in bf16, sdpa (flash) attention", HF_NOTES,
              r"A_{HF}^{sdpa}", ["memory.activations.layer.general.flash"])
AMP_WHOLE = 16 * h + 2 * (4 + gated) * h  # fp32 norm inputs and normalised values; the Linear layers' bf16 input casts
amp_eager = _hf("memory.activations.layer.amp.eager", s * b * (AMP_WHOLE + 8 * a * d_head + HF_MLP) + 6 * a * s**2 * b,
                "activations of one transformers Llama-family layer under bf16 autocast, eager attention",
                HF_NOTES + AMP_NOTES, r"A_{AMP}^{eager}", ["memory.activations.layer.transformers.eager"])
amp_sdpa = _hf("memory.activations.layer.amp.sdpa", s * b * (AMP_WHOLE + 4 * d_head * (a + g) + HF_MLP) + 4 * a * s * b,
               "activations of one transformers Llama-family layer under bf16 autocast, sdpa (flash) attention",
               HF_NOTES + AMP_NOTES, r"A_{AMP}^{sdpa}", ["memory.activations.layer.transformers.sdpa"])
amp_full = _hf("memory.activations.layer.amp.full_recompute", 4 * s * b * h,
               "a transformers layer under autocast with gradient checkpointing: only its fp32 input", AMP_NOTES,
               r"A_{AMP}^{full}", ["memory.activations.layer.full_recompute"])
hf_logits = _hf("memory.activations.logits.transformers", s * b * (8 * h + 4 * V + 8),
                "transformers' final norm, head and loss in bf16, one micro-batch: the norm (6h), the head's input (2h), "
                "the fp32 log-softmax of the upcast logits (4V) and the int64 targets", HF_NOTES,
                r"A_{HF}^{logits}", ["memory.activations.logits"])
amp_logits = _hf("memory.activations.logits.amp", s * b * (10 * h + 4 * V + 8),
                 "transformers' final norm, head and loss under autocast: the fp32 norm (8h), the head's bf16 input cast "
                 "(2h), the fp32 log-softmax (4V) and the targets", HF_NOTES + AMP_NOTES,
                 r"A_{AMP}^{logits}", ["memory.activations.logits.transformers"])
