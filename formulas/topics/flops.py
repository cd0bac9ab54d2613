"""FLOPs of the classic GPT decoder (000 §3.2, 001, 002; Narayanan et al. 2021 §5.1).

A [M,K]×[K,N] GEMM costs 2MKN FLOPs (a multiply and an add per term). One layer's
forward: QKV 6bsh², QKᵀ 2bs²h, scores·V 2bs²h, output 2bsh², MLP 16bsh²:
24bsh² + 4bs²h. Logits 2bshV. Backward is twice the forward; training three
times (four with full recompute). With Ψ ≈ 12lh² that is 6Ψ per token (8Ψ).
"""

from __future__ import annotations

from llm_formulas.formulas.vocabulary.catalogue import Condition, Source, formula
from llm_formulas.formulas.vocabulary.examples import worked_example
from llm_formulas.formulas.vocabulary.symbols import B, D, K_inner, M_rows, N_cols, P, V, b, c_flop, c_mac, h, l, s, u_flop, u_layer

BILIBILI = Source("000", "§3.2")
LI = Source("001", "training FLOPs: 6PD")
NARAYANAN = Source("narayanan2021", "§5.1, FLOPs per iteration")
SLIDES = Source("004", "computation analysis")
KAPLAN = Source("kaplan2020", "§2.1, C ≈ 6N per token")

LARGE_MODEL = Condition("s ≪ 6h and V ≪ 12lh (attention scores and logits are small beside the GEMMs)")

gemm = formula(
    "flops.gemm",
    c_mac * M_rows * K_inner * N_cols,
    "FLOP",
    "FLOPs of an [M,K]×[K,N] matrix multiplication",
    sources=[BILIBILI],
    symbol_latex=r"F_{GEMM}",
)
layer_forward = formula(
    "flops.layer.forward",
    (24 * b * s * h**2 + 4 * b * s**2 * h) * u_flop,
    "FLOP",
    "forward FLOPs of one layer: QKV, QKᵀ, scores·V, output projection, MLP",
    sources=[BILIBILI, NARAYANAN],
    related=["flops.gemm"],
    symbol_latex=r"F_{layer}",
)
logits = formula(
    "flops.logits",
    2 * b * s * h * V * u_flop,
    "FLOP",
    "forward FLOPs of the output head (logits over the vocabulary)",
    sources=[BILIBILI],
    symbol_latex=r"F_{logits}",
)
forward = formula(
    "flops.forward",
    24 * b * s * l * h**2 * (1 + s / (6 * h) + V / (12 * l * h)) * u_flop,
    "FLOP",
    "forward FLOPs of the whole model for b sequences of s tokens",
    sources=[BILIBILI, NARAYANAN],
    related=["flops.layer.forward", "flops.logits"],
    symbol_latex=r"F_{fwd}",
)
backward = formula(
    "flops.backward",
    2 * forward.part,
    "FLOP",
    "backward FLOPs: a gradient for each GEMM's input and one for its weight",
    sources=[BILIBILI, LI],
    related=["flops.forward"],
    symbol_latex=r"F_{bwd}",
)
training = formula(
    "flops.training",
    3 * forward.part,
    "FLOP",
    "training FLOPs of one step: forward + backward",
    sources=[BILIBILI, LI],
    related=["flops.forward", "flops.backward"],
    symbol_latex=r"F_{train}",
)
training_recompute = formula(
    "flops.training.recompute",
    4 * forward.part,
    "FLOP",
    "training FLOPs of one step with full activation recomputation (the forward runs twice)",
    sources=[BILIBILI],
    related=["flops.training"],
    symbol_latex=r"F_{train}^{recompute}",
)
training_approx = formula(
    "flops.training.approx",
    3 * c_flop * P * D,
    "FLOP",
    "training FLOPs for D tokens: 6ΨD",
    sources=[BILIBILI, LI, KAPLAN],
    conditions=[LARGE_MODEL],
    related=["flops.training", "params.approx"],
    symbol_latex=r"C",
)
training_recompute_approx = formula(
    "flops.training.recompute.approx",
    4 * c_flop * P * D,
    "FLOP",
    "training FLOPs for D tokens with full recomputation: 8ΨD",
    sources=[BILIBILI],
    conditions=[LARGE_MODEL],
    related=["flops.training.recompute", "params.approx"],
    symbol_latex=r"C_{recompute}",
)
megatron = formula(
    "flops.megatron",
    96 * B * s * l * h**2 * (1 + s / (6 * h) + V / (16 * l * h)) * u_flop,
    "FLOP",
    "Megatron's FLOPs per iteration of B sequences: full recompute, logits not recomputed",
    sources=[NARAYANAN],
    related=["flops.training.recompute", "flops.forward"],
    symbol_latex=r"F_{Megatron}",
)
inference_per_token = formula(
    "flops.inference.per_token",
    c_flop * P,
    "FLOP/token",
    "inference FLOPs per generated token: 2Ψ",
    sources=[LI, BILIBILI],
    conditions=[LARGE_MODEL],
    related=["flops.forward", "params.approx"],
    symbol_latex=r"F_{token}",
)
recompute_from_scratch = formula(
    "flops.recompute.from_scratch",
    l * (l + 1) / 2 * u_layer,
    "layer",
    "layer forward passes when each layer's backward recomputes the forward from the input (001's 3240 for l = 80)",
    sources=[LI],
    related=["flops.training.recompute"],
    symbol_latex=r"N_{fwd}",
)

# --- worked examples (SOURCES.md) ---------------------------------------------

worked_example(
    "S9",
    "Recomputing every layer from the input, 80 layers",
    Source("001", "full recompute"),
    "flops.recompute.from_scratch",
    {"l": 80},
    claimed=3240,
    claimed_text="3240 layer-forwards, 40× the 80 of one pass",
)
worked_example(
    "S10",
    "One ~1B-parameter layer of LLaMA-2 70B, b=8, s=4096",
    Source("001", "pipeline parallel cost"),
    "flops.training.approx",
    {"P": 10**9, "D": 8 * 4096},
    claimed=196 * 10**12,
    claimed_text="196 Tflops per step",
    scale=10**12,
    scale_name="TFLOP",
)
worked_example(
    "S19",
    "BLOOM-176B, one iteration of B=16 sequences of 2048 tokens",
    SLIDES,
    "flops.training",
    {"b": 16, "s": 2048, "l": 70, "h": 14336, "V": 250880},
    claimed="34.8e15",
    claimed_text="34.8 PFLOP per iteration",
    scale=10**15,
    scale_name="PFLOP",
    convention="the slides count three forward passes of the 70 blocks without the logits, 72·B·s·l·h²(1 + s/6h) "
    "= 34.750 PFLOP, printed as 34.8 (not 6ΨD, 34.65); the training step with the logits is 35.46 PFLOP",
)
