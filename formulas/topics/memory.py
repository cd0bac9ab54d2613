"""Memory of training and inference: model states, ZeRO, activations, KV cache.

Model states (000 §3.4; Rajbhandari et al. 2019): mixed-precision Adam keeps a
16-bit weight and gradient and fp32 master weight, momentum and variance:
2 + 2 + 12 = 16 bytes per parameter (18 with fp32 gradients, 20 with a 16-bit
gradient and an fp32 gradient buffer); ZeRO stage 1/2/3 leave 4Ψ + 12Ψ/d,
2Ψ + 14Ψ/d, 16Ψ/d per GPU, with Ψ → Ψ/(t·p) under 3D parallelism.
Activations per layer (Korthikanti et al. 2022): 34sbh + 5as²b bytes, built
tensor by tensor in ``derivations/topics/memory.py`` and measured with PyTorch; then
tensor/sequence parallel, selective and full recompute, FlashAttention, GQA and
gated MLPs, 1F1B; multi-head latent attention (its latents, per-head Q/K/V after the up
projections) and mixture-of-experts layers (the router's scores and indices, k dispatched
copies per token, k expert MLPs of width d_moe, shared experts), measured with the reference
blocks of tests/moe_block.py (``memory.activations.layer.decoder.*``). KV cache (001):
2·l·g·d_head·s·b·q.
"""

from __future__ import annotations

import sympy as sp

from llm_formulas.formulas.vocabulary.catalogue import Condition, Source, divides, formula
from llm_formulas.formulas.vocabulary.examples import worked_example
from llm_formulas.formulas.vocabulary.symbols import (
    E,
    M_gpu,
    P,
    a,
    b,
    c_byte,
    d,
    d_ff,
    d_head,
    d_lat,
    d_moe,
    d_nope,
    d_rope,
    d_sh,
    d_v,
    drop,
    g,
    gated,
    glu_fused,
    h,
    k,
    l,
    mla,
    moe_lat,
    p,
    q,
    q_lora,
    r_kv,
    r_q,
    sh_gate,
    q_bf16,
    q_fp32,
    q_int4,
    q_int8,
    s,
    t,
    t_e,
    v,
    u_seq,
)

BILIBILI = Source("000", "§3.4.2, Tables 6–9")
LI = Source("001", "training memory; KV cache")
ESTIMATE_002 = Source("002", "§3, LLaMA-7B activations")
SLIDES = Source("004", "storage analysis (3525 GB)")
KORTHIKANTI = Source("korthikanti2022", "§4, Table 2")
ZERO = Source("rajbhandari2020", "§5, Figure 1")
TORCH_DDP = Source("pytorch-ddp", "gradient_as_bucket_view=False: the buckets are a second copy of the gradients")
DEEPSPEED_BF16 = Source("deepspeed-pipe", "bf16_optimizer.py (#1801): fp32_groups_gradients_flat, zeros_like the 16-bit flat "
                        "parameters in float32, not partitioned by ZeRO-1")
ZERO_OFFLOAD = Source("ren2021", "§3")
FLASH = Source("dao2022", "§3.1 (softmax statistics instead of the s×s matrix)")
NARAYANAN = Source("narayanan2021", "§2.2.2 (interleaved 1F1B)")
MEGATRON_MOE = Source("megatron-moe", "MoELayer: TopKRouter, the all-to-all token dispatcher (permute, TP all-gather), "
                      "GroupedMLP's activation_func_with_probs, shared experts")
HF_MOE = Source("transformers", "models/mixtral, models/deepseek_v3: TopKRouter (softmax or sigmoid scores, top-k, "
                "renormalised), SparseMoeBlock, DeepseekV3Attention")
MIXTRAL = Source("jiang2024", "§2.1 (top-2 of 8 experts, softmax over the top-k logits)")
DEEPSEEK_MLA = Source("deepseek2024v2", "§2.1 (MLA: latents c_Q, c_KV, the shared rotary key, per-head up-projections)")
DEEPSEEK_MOE = Source("deepseek2024v3", "§2.1.2 (1 shared + 256 routed experts, 8 active; first 3 layers dense)")

MEGATRON = (
    "Describes Megatron-LM's GPT layer in 16-bit precision: LayerNorm, fused QKV GEMM, QKᵀ, softmax, "
    "attention dropout, scores·V, output projection, dropout, LayerNorm, 4h GELU MLP, dropout; dropout "
    "masks stored as 1-byte booleans (Megatron's fused kernel, torch.native_dropout), the GELU saving "
    "its input. Measured here with tests/megatron_block.py. An eager Hugging Face GPT-2 block saves "
    "≈1.5× as much (60sbh + 6as²b, measured): its dropouts multiply by 16-bit masks (2 bytes per element, "
    "+2sbh + as²b), and its tanh-GELU (gelu_new) runs as pow/tanh/mul ops that save four [s, b, 4h] "
    "tensors instead of one (+24sbh); the ratio (60 + 6as/h)/(34 + 5as/h) runs from 1.76 (as/h → 0) "
    "to 1.2 (as/h → ∞), is 1.5 at as/h = 6 and 1.37 at GPT-2 small's s = 1024, h = 768, a = 12."
)
LN_STATS = (
    "The exact count adds LayerNorm's per-row mean and rstd (2 per norm, s·b values each, 16-bit as "
    "PyTorch saves them on the CPU; CUDA kernels keep them in fp32, 16sb in all); Korthikanti's form "
    "drops these O(sb) terms."
)
MEGATRON_TP = divides(t, a)  # Megatron-LM tensor parallelism splits whole heads

# --- model states ------------------------------------------------------------------

model_states = formula(
    "memory.model_states",
    (q_bf16 + q_bf16 + 3 * q_fp32) * P,
    "byte",
    "model states of mixed-precision Adam: 16-bit weights and gradients, fp32 master weights, momentum, variance (16Ψ)",
    sources=[BILIBILI, ZERO, LI],
    symbol_latex=r"M_{states}",
)
model_states_fp32_grads = formula(
    "memory.model_states.fp32_grads",
    (q_bf16 + q_fp32 + 3 * q_fp32) * P,
    "byte",
    "model states when gradients are kept in fp32 (18Ψ)",
    sources=[BILIBILI],
    related=["memory.model_states"],
    symbol_latex=r"M_{states}^{fp32\,grad}",
)
model_states_grad_buffers = formula(
    "memory.model_states.grad_buffers",
    (q_bf16 + q_bf16 + q_fp32 + 3 * q_fp32) * P,
    "byte",
    "model states with 16-bit gradients plus an fp32 gradient buffer (20Ψ; 004's BLOOM-176B figure)",
    sources=[BILIBILI, SLIDES],
    related=["memory.model_states"],
    symbol_latex=r"M_{states}^{buffers}",
)
ddp_buckets = formula(
    "memory.ddp.buckets",
    q_bf16 * P,
    "byte",
    "PyTorch DDP's all-reduce buckets beside the 16-bit gradients (gradient_as_bucket_view off, its default): one more "
    "16-bit copy of every gradient, allocated with the DDP module and kept for the whole run (2Ψ)",
    sources=[TORCH_DDP],
    related=["memory.model_states", "memory.model_states.grad_buffers"],
    symbol_latex=r"M_{DDP}^{buckets}",
)
bf16_fp32_grads = formula(
    "memory.bf16.fp32_grads",
    q_fp32 * P,
    "byte",
    "DeepSpeed's BF16_Optimizer: an fp32 gradient for every parameter the GPU holds, into which each micro-batch's 16-bit "
    "gradients are added, kept all run long and not partitioned by ZeRO-1 (4Ψ)",
    sources=[DEEPSPEED_BF16],
    related=["memory.model_states", "memory.ddp.buckets"],
    symbol_latex=r"M_{bf16}^{fp32\,grad}",
)
model_states_sgd = formula(
    "memory.model_states.sgd_momentum",
    (q_bf16 + q_bf16 + 2 * q_fp32) * P,
    "byte",
    "model states of mixed-precision SGD with momentum: fp32 master weights and momentum (12Ψ)",
    sources=[ZERO],
    related=["memory.model_states"],
    symbol_latex=r"M_{states}^{SGD}",
)
optimizer_adam = formula(
    "memory.optimizer.adam",
    3 * q_fp32 * P,
    "byte",
    "Adam's fp32 part: master weights, momentum (exp_avg) and variance (exp_avg_sq), 12Ψ",
    sources=[ZERO, BILIBILI],
    related=["memory.model_states"],
    symbol_latex=r"M_{Adam}",
    notes="torch.optim.AdamW also keeps one scalar 'step' tensor per parameter tensor (not per parameter).",
)
inference_weights = formula(
    "memory.model_states.inference",
    q_bf16 * P,
    "byte",
    "inference weights in 16 bits (2Ψ)",
    sources=[BILIBILI, LI],
    symbol_latex=r"M_{weights}",
)
inference_int8 = formula(
    "memory.model_states.inference.int8",
    q_int8 * P,
    "byte",
    "inference weights quantized to int8 (Ψ bytes; scales and zero points not counted)",
    sources=[BILIBILI],
    related=["memory.model_states.inference"],
    symbol_latex=r"M_{weights}^{int8}",
)
inference_int4 = formula(
    "memory.model_states.inference.int4",
    q_int4 * P,
    "byte",
    "inference weights quantized to int4 (Ψ/2 bytes; scales and zero points not counted)",
    sources=[BILIBILI],
    related=["memory.model_states.inference"],
    symbol_latex=r"M_{weights}^{int4}",
)

# --- ZeRO under 3D parallelism (per GPU) ------------------------------------------

SHARDED = Condition("each of the t·p model-parallel ranks holds Ψ/(t·p) parameters; ZeRO partitions over the d data-parallel replicas")

zero = formula(
    "memory.zero",
    (q_bf16 + q_bf16 + 3 * q_fp32) * P / (t * p),
    "byte",
    "model states per GPU under 3D parallelism without ZeRO (stage 0): 16Ψ/(t·p)",
    sources=[BILIBILI, ZERO],
    conditions=[SHARDED],
    related=["memory.model_states", "memory.zero.stage1", "memory.zero.stage2", "memory.zero.stage3"],
    symbol_latex=r"M_{ZeRO\text{-}0}",
)
zero_stage1 = formula(
    "memory.zero.stage1",
    ((q_bf16 + q_bf16) * P + 3 * q_fp32 * P / d) / (t * p),
    "byte",
    "ZeRO stage 1 per GPU (optimizer states partitioned): (4Ψ + 12Ψ/d)/(t·p)",
    sources=[BILIBILI, ZERO],
    conditions=[SHARDED],
    related=["memory.zero"],
    symbol_latex=r"M_{ZeRO\text{-}1}",
)
zero_stage2 = formula(
    "memory.zero.stage2",
    (q_bf16 * P + (q_bf16 + 3 * q_fp32) * P / d) / (t * p),
    "byte",
    "ZeRO stage 2 per GPU (optimizer states and gradients partitioned): (2Ψ + 14Ψ/d)/(t·p)",
    sources=[BILIBILI, ZERO],
    conditions=[SHARDED],
    related=["memory.zero"],
    symbol_latex=r"M_{ZeRO\text{-}2}",
)
zero_stage3 = formula(
    "memory.zero.stage3",
    (q_bf16 + q_bf16 + 3 * q_fp32) * P / (t * p * d),
    "byte",
    "ZeRO stage 3 per GPU (weights too): 16Ψ/(t·p·d)",
    sources=[BILIBILI, ZERO],
    conditions=[SHARDED],
    related=["memory.zero"],
    symbol_latex=r"M_{ZeRO\text{-}3}",
)
zero_offload_gpu = formula(
    "memory.zero.offload.gpu",
    q_bf16 * P / (t * p),
    "byte",
    "ZeRO-Offload, GPU side: only the 16-bit weights stay (2Ψ/(t·p)); gradients stream to the CPU",
    sources=[ZERO_OFFLOAD],
    conditions=[SHARDED],
    related=["memory.zero.stage2", "memory.zero.offload.cpu"],
    symbol_latex=r"M_{offload}^{GPU}",
)
zero_offload_cpu = formula(
    "memory.zero.offload.cpu",
    (q_bf16 + 3 * q_fp32) * P / (t * p * d),
    "byte",
    "ZeRO-Offload, CPU memory per GPU: its 1/d share of the 16-bit gradients and the fp32 Adam states (14Ψ/(t·p·d))",
    sources=[ZERO_OFFLOAD],
    conditions=[SHARDED],
    related=["memory.zero.offload.gpu"],
    symbol_latex=r"M_{offload}^{CPU}",
)

# --- activations of one layer (bytes, per GPU) ----------------------------------------

layer = formula(
    "memory.activations.layer",
    (34 * s * b * h + 5 * a * s**2 * b) * c_byte,
    "byte",
    "activations one layer stores for backward: attention 11sbh + 5as²b, MLP 19sbh, norms 4sbh",
    sources=[KORTHIKANTI, BILIBILI],
    symbol_latex=r"A_{layer}",
    notes=MEGATRON,
)
layer_exact = formula(
    "memory.activations.layer.exact",
    (34 * s * b * h + 5 * a * s**2 * b + 8 * s * b) * c_byte,
    "byte",
    "activations of one layer, every stored tensor counted (LayerNorm statistics included)",
    sources=[KORTHIKANTI],
    related=["memory.activations.layer"],
    symbol_latex=r"A_{layer}^{exact}",
    notes=MEGATRON + " " + LN_STATS,
)
layer_tp = formula(
    "memory.activations.layer.tp",
    s * b * h * (10 + 24 / t + 5 * a * s / (h * t)) * c_byte,
    "byte",
    "activations of one layer per GPU with tensor parallelism (norms, dropout masks and inputs replicated)",
    sources=[KORTHIKANTI, BILIBILI],
    conditions=[MEGATRON_TP],
    related=["memory.activations.layer"],
    symbol_latex=r"A_{layer}^{TP}",
    notes=MEGATRON + " Tensor parallel ranks split heads and the MLP width; LayerNorms, their inputs and two dropout masks stay whole (10sbh).",
)
layer_tp_sp = formula(
    "memory.activations.layer.tp_sp",
    s * b * h * (34 + 5 * a * s / h) / t * c_byte,
    "byte",
    "activations of one layer per GPU with tensor and sequence parallelism",
    sources=[KORTHIKANTI],
    conditions=[MEGATRON_TP],
    related=["memory.activations.layer.tp"],
    symbol_latex=r"A_{layer}^{TP+SP}",
    notes=MEGATRON + " Sequence parallelism splits the norm and dropout regions along s, so every term is divided by t.",
)
layer_selective = formula(
    "memory.activations.layer.selective",
    s * b * h * (10 + 24 / t) * c_byte,
    "byte",
    "activations of one layer per GPU, tensor parallel, selective recompute (QKᵀ, softmax, dropout, ·V recomputed)",
    sources=[KORTHIKANTI, LI],
    conditions=[MEGATRON_TP],
    related=["memory.activations.layer.tp"],
    symbol_latex=r"A_{layer}^{sel}",
    notes=MEGATRON + " Selective recompute checkpoints the core attention: only its inputs Q, K, V are kept, the 5as²b of scores, softmax and mask go.",
)
layer_selective_sp = formula(
    "memory.activations.layer.selective_sp",
    34 * s * b * h / t * c_byte,
    "byte",
    "activations of one layer per GPU with tensor + sequence parallelism and selective recompute",
    sources=[KORTHIKANTI],
    conditions=[MEGATRON_TP],
    related=["memory.activations.layer.tp_sp", "memory.activations.layer.selective"],
    symbol_latex=r"A_{layer}^{SP,sel}",
    notes=MEGATRON,
)
layer_full = formula(
    "memory.activations.layer.full_recompute",
    2 * s * b * h * c_byte,
    "byte",
    "activations of one layer with full recompute: only its 16-bit input",
    sources=[KORTHIKANTI, BILIBILI],
    related=["memory.activations.layer"],
    symbol_latex=r"A_{layer}^{full}",
    notes=MEGATRON + " Without sequence parallelism the input is replicated over the t ranks (2sbh); with it, 2sbh/t.",
)
layer_full_sp = formula(
    "memory.activations.layer.full_recompute_sp",
    2 * s * b * h * c_byte / t,
    "byte",
    "activations of one layer with full recompute and sequence parallelism: this rank's s/t slice of the 16-bit input",
    sources=[KORTHIKANTI],
    conditions=[divides(t, s)],
    related=["memory.activations.layer.full_recompute", "memory.activations.layer.tp_sp"],
    symbol_latex=r"A_{layer}^{full,SP}",
    notes=MEGATRON,
)
layer_flash = formula(
    "memory.activations.layer.flash",
    (s * b * h * (10 + 24 / t) + 4 * a * s * b / t) * c_byte,
    "byte",
    "activations of one layer per GPU with FlashAttention: no s² terms, an fp32 log-sum-exp per head and token",
    sources=[FLASH, KORTHIKANTI],
    conditions=[MEGATRON_TP],
    related=["memory.activations.layer.selective"],
    symbol_latex=r"A_{layer}^{flash}",
    notes=MEGATRON + " The attention core is PyTorch's scaled_dot_product_attention (flash kernel, no attention dropout): it "
    "keeps Q, K, V, its output and the fp32 log-sum-exp (4as b/t bytes) and recomputes the scores in backward.",
)
layer_gated = formula(
    "memory.activations.layer.gated",
    (s * b * (10 * h + 4 * d_head * (a + g) + 8 * d_ff) + 5 * a * s**2 * b) * c_byte,
    "byte",
    "activations of one layer with a heads and g KV heads of d_head, and a gated (SwiGLU) MLP of width d_ff",
    sources=[KORTHIKANTI],
    related=["memory.activations.layer"],
    symbol_latex=r"A_{layer}^{GQA,gated}",
    notes=MEGATRON + " Generalised: Q is a·d_head wide, K and V g·d_head each; the gated MLP keeps the gate's input, "
    "the activation's output, the up projection and their product (four [s, b, d_ff] tensors). "
    "K and V at g heads assume a kernel that reads the shared KV heads in place (FlashAttention, grouped GEMMs); "
    "Megatron's unfused path repeat-interleaves K and V to a heads first and stores those copies (g → a in the K, V terms).",
)

GENERAL = (
    " Generalised to any block: a heads and g KV heads of d_head (Q and the projection input a·d_head/t wide, "
    "K and V g·d_head/t each), an MLP of width d_ff, gated or not (a gated MLP keeps the gate's input, the "
    "activation's output, the up projection and their product, four d_ff/t-wide tensors; an ungated one the "
    "activation's input and output, two). The s² terms are the a/t heads' scores, softmax and mask; masks are "
    "1-byte, values 16-bit, as Megatron's classic block. K and V at g heads assume a kernel that reads the shared "
    "KV heads in place (grouped GEMMs, as tests/megatron_block.py does); an unfused path that repeat-interleaves "
    "K and V to a heads first stores those copies (g → a in the K, V terms). Llama-style models train without "
    "dropout: the two 1-byte masks (2sbh) and the attention mask and its dropped copy (3as²b/t) are then an "
    "upper bound; RMSNorm keeps no mean, a statistic this form drops anyway. With g = a, d_head = h/a, "
    "d_ff = 4h, gated = 0 each reduces to Korthikanti's classic form."
)
GENERAL_TP = [MEGATRON_TP, divides(t, g)]
GENERAL_SPLIT = 4 * d_head * (a + g) + 4 * (1 + gated) * d_ff  # per sb: Q, K, V, proj in; the MLP's d_ff-wide tensors

layer_general_tp = formula(
    "memory.activations.layer.general.tp",
    (s * b * (10 * h + GENERAL_SPLIT / t) + 5 * a * s**2 * b / t) * c_byte,
    "byte",
    "activations of one layer per GPU with tensor parallelism, for GQA heads of d_head and a (gated) MLP of width d_ff",
    sources=[KORTHIKANTI],
    conditions=GENERAL_TP,
    related=["memory.activations.layer.tp", "memory.activations.layer.gated"],
    symbol_latex=r"A_{layer}^{TP,gen}",
    notes=MEGATRON + GENERAL,
)
layer_general_tp_sp = formula(
    "memory.activations.layer.general.tp_sp",
    (s * b * (10 * h + GENERAL_SPLIT) + 5 * a * s**2 * b) / t * c_byte,
    "byte",
    "activations of one layer per GPU with tensor and sequence parallelism, for any block (GQA, d_head, gated MLP)",
    sources=[KORTHIKANTI],
    conditions=GENERAL_TP,
    related=["memory.activations.layer.tp_sp", "memory.activations.layer.general.tp"],
    symbol_latex=r"A_{layer}^{TP+SP,gen}",
    notes=MEGATRON + GENERAL + " Sequence parallelism splits the norm and dropout regions along s.",
)
layer_general_selective = formula(
    "memory.activations.layer.general.selective",
    s * b * (10 * h + GENERAL_SPLIT / t) * c_byte,
    "byte",
    "activations of one layer per GPU, tensor parallel, selective recompute, for any block (GQA, d_head, gated MLP)",
    sources=[KORTHIKANTI],
    conditions=GENERAL_TP,
    related=["memory.activations.layer.selective", "memory.activations.layer.general.tp"],
    symbol_latex=r"A_{layer}^{sel,gen}",
    notes=MEGATRON + GENERAL + " Selective recompute keeps the core attention's inputs Q, K, V and drops its s² tensors.",
)
layer_general_selective_sp = formula(
    "memory.activations.layer.general.selective_sp",
    s * b * (10 * h + GENERAL_SPLIT) / t * c_byte,
    "byte",
    "activations of one layer per GPU, tensor + sequence parallel, selective recompute, for any block",
    sources=[KORTHIKANTI],
    conditions=GENERAL_TP,
    related=["memory.activations.layer.selective_sp", "memory.activations.layer.general.selective"],
    symbol_latex=r"A_{layer}^{SP,sel,gen}",
    notes=MEGATRON + GENERAL,
)

LSE = 4 * a * s * b  # FlashAttention's fp32 log-sum-exp: one 4-byte statistic per head and token (Dao et al. 2022, §3.1)
layer_general_flash = formula(
    "memory.activations.layer.general.flash",
    (s * b * (10 * h + GENERAL_SPLIT / t) + LSE / t) * c_byte,
    "byte",
    "activations of one layer per GPU, tensor parallel, FlashAttention, for any block (GQA, d_head, gated MLP)",
    sources=[FLASH, KORTHIKANTI],
    conditions=GENERAL_TP,
    related=["memory.activations.layer.flash", "memory.activations.layer.general.selective"],
    symbol_latex=r"A_{layer}^{flash,gen}",
    notes=MEGATRON + GENERAL + " The flash kernel keeps Q, K, V, its output and the fp32 log-sum-exp and recomputes the "
    "scores tile by tile in backward: selective recompute's tensors plus 4as·b/t bytes.",
)
layer_general_flash_sp = formula(
    "memory.activations.layer.general.flash_sp",
    (s * b * (10 * h + GENERAL_SPLIT) + LSE) / t * c_byte,
    "byte",
    "activations of one layer per GPU, tensor + sequence parallel, FlashAttention, for any block",
    sources=[FLASH, KORTHIKANTI],
    conditions=GENERAL_TP,
    related=["memory.activations.layer.general.flash", "memory.activations.layer.general.selective_sp"],
    symbol_latex=r"A_{layer}^{flash,SP,gen}",
    notes=MEGATRON + GENERAL + " Sequence parallelism splits the norm and dropout regions along s.",
)

# --- activations of today's layers: multi-head latent attention, mixtures of experts ------------

DECODER = (
    " The general decoder's layer (formulas/topics/architecture.py): attention of GQA heads of d_head (mla = 0, the "
    "general forms' tensors) or multi-head latent attention (mla = 1, DeepSeek-V2/V3): the down projections' outputs "
    "h → r_Q (q_lora = 1) and h → r_KV + d_rope, each saved as its norm's input, the normed latents as the up "
    "projections' inputs (the down projections replicated on the t ranks, the latents on the rank's s/t tokens under "
    "sequence parallelism), Q and K of a/t heads of d_nope + d_rope (the rotary part applied by a kernel that keeps no "
    "activation), V a view of the a/t·(d_nope + d_v) up-projection output, which it keeps whole (a kernel that copies "
    "V out keeps a·d_v/t), and the output projection's a·d_v/t input. The latent norms' statistics, like the "
    "LayerNorms', are dropped. transformers' DeepseekV3Attention keeps the same tensors, less the rotary products its "
    "unfused rotate_half saves, and in eager attention an fp32 copy of the scores' softmax; its FlashAttention-2 path "
    "pads V to d_nope + d_rope (+a·(d_nope + d_rope − d_v)/t twice: V and the kernel's output). With mla = 0 each "
    "reduces exactly to memory.activations.layer.general.*. Two switches say how the framework runs the block: "
    "σ_drop = 0 (no dropout, as Llama, Mixtral and DeepSeek train) removes the two 1-byte residual masks and, in the "
    "eager core, the scores' mask and dropped copy (dropout with p = 0 returns its input and saves nothing: the "
    "softmax output is the scores·V input); σ_GLU = 1 (Megatron Core's fused bias_swiglu_impl) keeps the gate-and-up "
    "output and the product but not the SiLU's output (6·d_ff instead of 8·d_ff bytes per token, gated). At "
    "σ_drop = 1, σ_GLU = 0 each form is the classic block's."
)
MOE = (
    " A mixture-of-experts layer: the attention as memory.activations.layer.decoder.*, then a router h → E whose "
    "input is the second norm's output (also the shared experts' input), an fp32 softmax over the E experts (saves "
    "its [bs, E] output; DeepSeek-V3's sigmoid scores and Megatron-Core's load-balancing softmax are the same size), "
    "top-k (its int64 indices), the k weights renormalised (the division keeps the k fp32 values; its per-token sum is "
    "dropped with the norms' statistics); the bs·k (token, expert) copies sorted by expert (two int64 indices of bs·k: "
    "the sort order and the token each copy comes from), gathered into a new [bs·k, h] buffer, the experts' GEMM "
    "input; each copy through its expert's MLP of width d_moe/t with the dense block's tensors (gated: the up-and-gate "
    "output 2·d_moe/t, the SiLU's output d_moe/t; ungated: GELU's input), then the routing weight multiplies the "
    "activation's output before the down projection, as Megatron-Core's activation_func_with_probs: that multiply "
    "saves the product (d_moe/t) and the fp32 weight, the down projection its weighted input (d_moe/t): "
    "2(3 + 2σ_gated)·d_moe/t + 4 bytes per copy besides its 2h; the outputs are scattered back to their tokens "
    "(only the index is kept). Shared experts are one dense MLP of width d_sh/t on every token; Qwen2-MoE's sigmoid "
    "gate h → 1 keeps the shared output (2h per token; the gate value is dropped with the statistics). Expert "
    "parallelism over e ranks does not change a rank's bytes under balanced routing: it receives as many copies "
    "(bs·k) as it sends. Without sequence parallelism every tensor-parallel rank routes all bs tokens; with it the "
    "router runs on the rank's s/t tokens and the copies are all-gathered over the t ranks before the experts (the "
    "all-to-all dispatcher of Megatron-Core, which requires sequence parallelism with TP), so the copies' 2h + 4 "
    "bytes stay whole. Megatron-Core's fused permute keeps an int32 map instead of the int64 indices (a few bytes "
    "per copy); transformers' Mixtral and DeepseekV3 weight each expert's h-wide output instead (2h rather than "
    "2d_moe/t bytes per copy for what the multiply saves) and loop over the experts, saving each one's gathered rows "
    "instead of one permuted buffer (the same bytes); a load-balancing loss over all E logits reads the scores "
    "already kept. With E = k = 1, d_moe = d_ff, no shared expert and the routing tensors removed it reduces exactly to "
    "memory.activations.layer.decoder.*. Megatron Core's fused path (σ_GLU = 1: weighted_bias_swiglu_impl, "
    "megatron/core/transformer/moe/experts.py) keeps an expert's fc1 output and its fp32 weight only, not the SiLU "
    "output and the product: 2(3 + 2σ_gated − 2σ_gated·σ_GLU)·d_moe/t bytes per copy. Under sequence parallelism with "
    "expert tensor parallelism t_E < t (--expert-tensor-parallel-size) the t/t_E ranks of one group route different "
    "tokens to experts of width d_moe/t_E: a rank holds t_E/t of the copies' 2h + 4 bytes, the experts' bytes unchanged. "
    "A latent MoE (σ_lat = 1, Nemotron-3-Super) projects the router's input h → d_lat before the dispatch (nothing new "
    "saved) and the combined outputs d_lat → h after (2·d_lat bytes per token): its copies are 2·d_lat + 4 bytes."
)
MOE_TP = [MEGATRON_TP, divides(t, g), divides(t, d_moe), divides(t, d_sh), Condition("t_E divides t"),
          Condition("without sequence parallelism t_E = t (Megatron Core's MoE dispatcher needs SP for TP > 1)")]

d_qk = d_nope + d_rope  # an MLA query/key head
# bytes per token, 16-bit values (2 bytes), 1-byte masks, fp32 (4) and int64 (8) where stated:
MLA_LATENT = 4 * q_lora * r_q + 4 * r_kv + 2 * d_rope  # the latents before and after their norms, the rope key with c_KV
MLA_HEADS = 2 * a * (2 * d_qk + d_nope + 2 * d_v)  # Q, K (d_qk each), V's whole up-projection (d_nope + d_v), proj in (d_v)
ATTENTION_SPLIT = (1 - mla) * 4 * d_head * (a + g) + mla * MLA_HEADS  # the heads' tensors, split t ways
GLU = 4 + 4 * gated - 2 * gated * glu_fused  # bytes per unit of MLP width: an unfused SwiGLU keeps 4 tensors, a fused one 3
DENSE_MLP_SPLIT = GLU * d_ff  # the dense MLP's d_ff-wide tensors
MOE_ROUTER = 4 * E + 28 * k + 2 * sh_gate * h  # fp32 scores, int64 indices and order and token index, fp32 top-k values; the gated shared output
MOE_LATENT = 2 * moe_lat * d_lat  # a latent MoE's combined outputs, fc2_latent_proj's input (Nemotron-3-Super)
MOE_COPIES = 2 * k * (h + moe_lat * (d_lat - h)) + 4 * k  # the dispatched copies (d_lat wide in a latent MoE) and their fp32 weights, whole on every tensor-parallel rank
MOE_SPLIT = 2 * k * (3 + 2 * gated - 2 * gated * glu_fused) * d_moe + GLU * d_sh  # the experts' and shared experts' inner tensors
DECODER_WHOLE = (8 + 2 * drop) * h + mla * MLA_LATENT  # per token, whole on every rank unless sequence parallelism splits it
SCORES = (2 + 3 * drop) * a * s**2 * b  # eager core: the softmax output, with dropout its mask and the dropped scores


def _token_bytes(prefix: str, title: str, whole, split, copies) -> tuple:
    """The bytes per token of one layer kind, by how tensor parallelism holds them: ``whole`` on every rank (split
    along s under SP), ``split`` t ways, ``copies`` (the dispatched expert copies) whole on every rank without SP."""
    kinds = {"whole": (whole, "kept whole on every TP rank (split along s under sequence parallelism)", "whole"),
             "split": (split, "split t ways by tensor parallelism (the heads' and the MLP's inner tensors)", "split"),
             "copies": (copies, "of the k dispatched expert copies and their fp32 weights, whole on every TP rank without "
                        "sequence parallelism", "copies")}
    return tuple(
        formula(f"{prefix}.{kind}", bytes_ * c_byte, "byte", f"activation bytes per token of one {title}, {words}",
                sources=[KORTHIKANTI, MEGATRON_MOE, HF_MOE, DEEPSEEK_MLA], conditions=[], related=[f"{prefix}.{other}"
                for other in kinds if other != kind and kinds[other][0] != 0],
                symbol_latex=rf"a_{{{symbol}}}^{{{'moe' if copies != 0 else 'dec'}}}", notes=MEGATRON).part
        if bytes_ != 0 else sp.Integer(0)
        for kind, (bytes_, words, symbol) in kinds.items()
    )


def _decoder_forms(prefix: str, token_bytes: tuple, title: str, notes: str, related: str, conditions) -> dict:
    """The six per-GPU forms (eager, selective, flash; without and with sequence parallelism) of one layer kind from
    its ``token_bytes`` (``_token_bytes``: whole over t ranks, split along s by SP; split t ways; copies whole on every
    rank without SP, every rank routing all tokens, and t_E/t of them with it, the t/t_E ranks of one
    expert-tensor-parallel group dispatching different tokens)."""
    whole, split, copies = token_bytes
    scores = SCORES / t * c_byte
    shared = copies * t_e / t
    flash = LSE / t * c_byte
    forms = {
        "tp": (s * b * (whole + copies + split / t) + scores, "tensor parallel"),
        "tp_sp": (s * b * (shared + (whole + split) / t) + scores, "tensor + sequence parallel"),
        "selective": (s * b * (whole + copies + split / t), "tensor parallel, selective recompute"),
        "selective_sp": (s * b * (shared + (whole + split) / t), "tensor + sequence parallel, selective recompute"),
        "flash": (s * b * (whole + copies + split / t) + flash, "tensor parallel, FlashAttention"),
        "flash_sp": (s * b * (shared + (whole + split) / t) + flash, "tensor + sequence parallel, FlashAttention"),
    }
    return {
        mode: formula(
            f"{prefix}.{mode}",
            expr,
            "byte",
            f"activations of one {title} per GPU, {words}",
            sources=[KORTHIKANTI, MEGATRON_MOE, HF_MOE, DEEPSEEK_MLA, *([MIXTRAL, DEEPSEEK_MOE] if copies != 0 else [])]
            + ([FLASH] if mode.startswith("flash") else []),
            conditions=conditions,
            related=[f"{related}.{mode}"],
            symbol_latex=rf"A_{{{'moe' if copies != 0 else 'dec'}}}^{{{mode.replace('_', ',')}}}",
            notes=MEGATRON + notes,
        )
        for mode, (expr, words) in forms.items()
    }


DENSE_TITLE = "dense decoder layer (GQA or multi-head latent attention, a dense MLP of width d_ff)"
MOE_TITLE = "mixture-of-experts layer (GQA or MLA attention; E experts of width d_moe, k per token; shared experts of d_sh)"
layer_decoder = _decoder_forms(
    "memory.activations.layer.decoder",
    _token_bytes("memory.activations.token.decoder", DENSE_TITLE, DECODER_WHOLE, ATTENTION_SPLIT + DENSE_MLP_SPLIT,
                 sp.Integer(0)),
    DENSE_TITLE, DECODER, "memory.activations.layer.general", GENERAL_TP,
)
layer_moe = _decoder_forms(
    "memory.activations.layer.decoder.moe",
    _token_bytes("memory.activations.token.moe", MOE_TITLE, DECODER_WHOLE + MOE_ROUTER + MOE_LATENT, ATTENTION_SPLIT + MOE_SPLIT,
                 MOE_COPIES),
    MOE_TITLE, DECODER + MOE, "memory.activations.layer.decoder", MOE_TP,
)

# --- whole model ---------------------------------------------------------------------

first_stage = formula(
    "memory.activations.1f1b",
    l * layer_tp.part,
    "byte",
    "activations on the first pipeline stage under 1F1B: p micro-batches of l/p layers, l layers' worth",
    sources=[KORTHIKANTI, BILIBILI],
    conditions=[MEGATRON_TP, divides(p, l)],
    related=["memory.activations.layer.tp"],
    symbol_latex=r"A_{1F1B}",
    notes=MEGATRON,
)
first_stage_interleaved = formula(
    "memory.activations.1f1b.interleaved",
    l * layer_tp.part * (1 + (p - 1) / (p * v)),
    "byte",
    "activations on the first pipeline stage under interleaved 1F1B with v model chunks per GPU",
    sources=[KORTHIKANTI, NARAYANAN],
    conditions=[MEGATRON_TP, divides(p * v, l)],
    related=["memory.activations.1f1b"],
    symbol_latex=r"A_{1F1B}^{interleaved}",
    notes=MEGATRON,
)
selective_001 = formula(
    "memory.activations.selective_001",
    s * b * h * l * (10 + 24 / t) * c_byte,
    "byte",
    "001's forward state of the whole model: s·b·h·l·(10 + 24/t) bytes (selective recompute, tensor parallel)",
    sources=[LI, KORTHIKANTI],
    conditions=[MEGATRON_TP],
    related=["memory.activations.layer.selective"],
    symbol_latex=r"A_{001}",
    notes=MEGATRON,
)
llama_002 = formula(
    "memory.activations.llama_002",
    l * (14 * b * s * h + 4 * b * s * d_ff + 8 * a * b * s * h + 5 * a * b * s**2) * c_byte,
    "byte",
    "002's activation formula for LLaMA-7B, as printed",
    sources=[ESTIMATE_002],
    related=["memory.activations.layer.gated"],
    symbol_latex=r"A_{002}",
    notes="Reproduced as printed. Its 8·a·b·s·h term matches no stored tensor: no layer keeps a copies of the "
    "[b, s, h] hidden state; per-head tensors are [b, s, h/a] (Q, K, V) or [b, a, s, s] (scores). "
    "memory.activations.layer.gated gives the tensor-by-tensor count.",
)
training_selective = formula(
    "memory.training.selective",
    model_states.part + selective_001.part,
    "byte",
    "001's training memory: model states (16Ψ) plus the whole model's activations under selective recompute",
    sources=[LI],
    related=["memory.model_states", "memory.activations.selective_001"],
    symbol_latex=r"M_{train}",
)

# --- KV cache and inference ------------------------------------------------------------

kv_per_token = formula(
    "memory.kv_cache.per_token",
    2 * l * g * d_head * q,
    "byte",
    "KV cache per token of one sequence: K and V in every layer, g KV heads of d_head values",
    sources=[LI],
    symbol_latex=r"M_{KV}^{token}",
)
kv_per_sequence = formula(
    "memory.kv_cache.per_sequence",
    2 * l * g * d_head * s * q,
    "byte",
    "KV cache of one sequence of s tokens",
    sources=[LI],
    related=["memory.kv_cache.per_token"],
    symbol_latex=r"M_{KV}^{seq}",
)
kv_cache = formula(
    "memory.kv_cache",
    2 * l * g * d_head * s * b * q,
    "byte",
    "KV cache of b sequences of s tokens: 2·l·g·d_head·s·b·q (g = a without GQA)",
    sources=[LI],
    related=["memory.kv_cache.per_sequence"],
    symbol_latex=r"M_{KV}",
    notes="transformers' DynamicCache holds exactly these tensors: per layer a key and a value of shape [b, g, s, d_head].",
)
inference = formula(
    "memory.inference",
    q_bf16 * P + kv_cache.part + b * s * h * q,
    "byte",
    "inference footprint: 16-bit weights, the KV cache and the current layer's [b, s, h] activations",
    sources=[LI],
    related=["memory.model_states.inference", "memory.kv_cache"],
    symbol_latex=r"M_{infer}",
)

# --- per GPU ---------------------------------------------------------------------------

per_gpu = formula(
    "memory.per_gpu",
    zero.part + first_stage.part,
    "byte",
    "memory of the first pipeline stage's GPU: 16Ψ/(t·p) model states and l layers' worth of TP activations (1F1B)",
    sources=[BILIBILI, KORTHIKANTI],
    conditions=[SHARDED, MEGATRON_TP],
    related=["memory.zero", "memory.activations.1f1b"],
    symbol_latex=r"M_{GPU}^{need}",
    notes="No ZeRO, no recompute, no sequence parallelism; swap memory.zero.stage1..3 and the layer variants for other layouts.",
)
headroom = formula(
    "memory.per_gpu.headroom",
    M_gpu - per_gpu.part,
    "byte",
    "memory left on a GPU of capacity M_GPU: the layout fits when this is ≥ 0",
    sources=[BILIBILI],
    related=["memory.per_gpu"],
    symbol_latex=r"M_{free}",
)
max_micro_batch = formula(
    "memory.max_micro_batch",
    sp.floor((M_gpu - zero.part) / (first_stage.part / b)) * u_seq,
    "sequence",
    "the largest micro-batch whose activations fit beside the model states on the first pipeline stage",
    sources=[BILIBILI, KORTHIKANTI],
    conditions=[SHARDED, MEGATRON_TP, Condition("the model states fit: M_GPU > 16Ψ/(t·p)", sp.StrictGreaterThan(M_gpu, zero.dimensioned))],
    related=["memory.per_gpu"],
    symbol_latex=r"b_{max}",
)

# --- worked examples (SOURCES.md) ------------------------------------------------------

worked_example(
    "S7",
    "LLaMA-2 70B forward state, selective recompute, b=8, s=4096, no TP",
    Source("001", "training memory"),
    "memory.activations.selective_001",
    {"s": 4096, "b": 8, "h": 8192, "l": 80, "t": 1},
    claimed=730 * 10**9,
    claimed_text="4096 × 8 × 8192 × 80 × (10 + 24) byte = 730 GB",
    scale=10**9,
    scale_name="GB",
)
worked_example(
    "S8",
    "LLaMA-2 70B training memory: weights, gradients, Adam states, activations",
    Source("001", "training memory"),
    "memory.training.selective",
    {"P": 70 * 10**9, "s": 4096, "b": 8, "h": 8192, "l": 80, "t": 1},
    claimed=1850 * 10**9,
    claimed_text="140 + 140 + 840 + 730 = 1850 GB (≥ 24 80-GB GPUs, ≥ 78 RTX 4090)",
    scale=10**9,
    scale_name="GB",
)
worked_example(
    "S12",
    "KV cache of LLaMA-2 70B without GQA, b=8, 4096 tokens",
    Source("001", "KV cache"),
    "memory.kv_cache",
    {"l": 80, "g": 64, "d_head": 128, "s": 4096, "b": 8, "q": 2},
    claimed=80 * 2**30,
    claimed_text="2 (K, V) × 80 × 8192 × 4096 × 8 × 2B = 80 GB",
    scale=2**30,
    scale_name="GiB",
    slip="the article's 80 'GB' are GiB (2³⁰ bytes): 85.9 GB decimal",
)
worked_example(
    "S18",
    "LLaMA-7B activations by 002's formula, b=32, s=2048",
    Source("002", "§3"),
    "memory.activations.llama_002",
    {"l": 32, "b": 32, "s": 2048, "h": 4096, "d_ff": 11008, "a": 32},
    claimed="3.1e12",
    claimed_text="3.1e12 = 3100 GB",
    scale=10**12,
    scale_name="TB",
    slip="the arithmetic holds (3.0988e12), but the formula's 8·a·b·s·h term matches no stored tensor",
)
worked_example(
    "S20",
    "BLOOM-176B training state at 20 bytes per parameter",
    Source("004", "storage analysis"),
    "memory.model_states.grad_buffers",
    {"P": 176_247_271_424},
    claimed=3525 * 10**9,
    claimed_text="3525 GB, at least 45 80-GB GPUs",
    scale=10**9,
    scale_name="GB",
)
