"""Proofs of the FLOP counts (000 §3.2, 001, 002; Narayanan et al. 2021 §5.1).

Every count is a sum of GEMMs priced by ``flops.gemm``; the factored forms,
the 3×/4× training multiples, Megatron's formula, the 6ΨD and 2Ψ rules (as
approximations with their exact error) follow, and 000's "6 FLOPs per
parameter per token for inference" is refuted.
"""

from __future__ import annotations

import sympy as sp

from llm_formulas.derivations.vocabulary.engine import Derivation
from llm_formulas.derivations.vocabulary.proof import much_greater, much_less
from llm_formulas.formulas.vocabulary.catalogue import Source, get
from llm_formulas.formulas.topics.flops import BILIBILI, KAPLAN, LI, NARAYANAN
from llm_formulas.formulas.vocabulary.symbols import B, D, K_inner, M_rows, N_cols, P, V, a, b, c_flop, c_token, h, l, s

LARGE_MODEL = (much_less(s, 6 * h), much_greater(h, 1))  # the attention scores and the 13 small vectors per layer


def gemm(rows: sp.Basic, inner: sp.Basic, cols: sp.Basic) -> sp.Basic:
    """FLOPs of an [rows, inner] × [inner, cols] product, priced by flops.gemm."""
    return get("flops.gemm").dimensioned.subs({M_rows: rows, K_inner: inner, N_cols: cols}, simultaneous=True)


def gemm_count() -> Derivation:
    d = Derivation("flops.gemm", "A matrix multiplication costs 2MKN", (BILIBILI,))
    d.defines("F_exact", M_rows * N_cols * (2 * K_inner - 1), "M·N outputs, each a dot product of K terms: K multiplies, K − 1 adds")
    d.approximates(
        "2MKN",
        2 * M_rows * K_inner * N_cols,
        "the convention (and PyTorch's FLOP counter) counts a multiply and an add per term; with a bias the adds are exactly K",
        condition=much_greater(K_inner, 1),
        dropped=-M_rows * N_cols,
    )
    d.concludes("flops.gemm")
    return d


def layer_forward() -> Derivation:
    d = Derivation("flops.layer.forward", "Forward FLOPs of one layer, GEMM by GEMM", (BILIBILI, NARAYANAN))
    qkv = d.defines("F_QKV", gemm(b * s, h, 3 * h), "[bs, h] × [h, 3h] makes Q, K and V")
    scores = d.defines("F_QK", a * b * gemm(s, h / a, s), "per sequence and head, [s, h/a] × [h/a, s] gives the scores")
    mix = d.defines("F_SV", a * b * gemm(s, s, h / a), "per sequence and head, [s, s] × [s, h/a] mixes the values")
    out = d.defines("F_O", gemm(b * s, h, h), "the output projection [bs, h] × [h, h]")
    up = d.defines("F_up", gemm(b * s, h, 4 * h), "MLP up-projection [bs, h] × [h, 4h]")
    down = d.defines("F_down", gemm(b * s, 4 * h, h), "MLP down-projection [bs, 4h] × [4h, h]")
    d.defines("F_layer", qkv + scores + mix + out + up + down, parts=("F_QKV", "F_QK", "F_SV", "F_O", "F_up", "F_down"), why="the six GEMMs of the block (norms, softmax, GELU are O(bsh), not counted)")
    d.equals("F_layer", 24 * b * s * h**2 + 4 * b * s**2 * h, "collect: 6 + 2 + 8 + 8 = 24 bsh², 2 + 2 = 4 bs²h")
    d.concludes("flops.layer.forward")
    return d


def logits() -> Derivation:
    d = Derivation("flops.logits", "The output head", (BILIBILI,))
    d.defines("F_logits", gemm(b * s, h, V), "[bs, h] × [h, V]: every position gets a score per vocabulary entry")
    d.concludes("flops.logits")
    return d


def forward() -> Derivation:
    d = Derivation("flops.forward", "The forward pass, factored", (BILIBILI, NARAYANAN))
    d.defines("F_fwd", l * get("flops.layer.forward").part + get("flops.logits").part, "l layers and the logits")
    d.equals(
        "F_fwd",
        24 * b * s * l * h**2 * (1 + s / (6 * h) + V / (12 * l * h)),
        "factor out the GEMM term 24bslh²",
    )
    d.concludes("flops.forward")
    return d


def backward() -> Derivation:
    d = Derivation("flops.backward", "The backward pass is two forward GEMMs per GEMM", (BILIBILI, LI))
    forward_expr = get("flops.forward").part
    d.defines(
        "F_bwd",
        forward_expr + forward_expr,
        "for Y = XW the backward computes dX = dY·Wᵀ and dW = Xᵀ·dY, each as large as the forward product",
    )
    d.concludes("flops.backward")
    return d


def training() -> Derivation:
    d = Derivation("flops.training", "A training step: forward and backward", (BILIBILI, LI))
    d.defines("F_train", get("flops.forward").part + get("flops.backward").part, "one forward and one backward pass")
    d.concludes("flops.training")
    return d


def training_recompute() -> Derivation:
    d = Derivation("flops.training.recompute", "Full recompute runs the forward twice", (BILIBILI,))
    d.defines(
        "F_train^rc",
        get("flops.training").part + get("flops.forward").part,
        "the activations were dropped, so the backward repeats the forward first",
    )
    d.concludes("flops.training.recompute")
    return d


def per_token_rule(target: str, multiple: str, passes: int, title: str, sources: tuple[Source, ...]) -> Derivation:
    """F = passes·2ΨD, with Ψ = params.total and D = bs tokens, as an approximation."""
    d = Derivation(target, title, sources)
    exact_params = get("params.total").part
    d.defines(multiple, get(multiple).dimensioned, f"{passes} forward-sized passes over D = bs tokens")
    d.approximates(
        f"{2 * passes}ΨD",
        passes * c_flop * exact_params * b * s * c_token,
        "each weight is used once per token per pass, a multiply and an add: the logits GEMM exactly matches the "
        "embedding parameters, the attention scores are extra, the biases, norms and positions are not GEMM work",
        condition=LARGE_MODEL,
        dropped=2 * passes * b * s * h * (2 * s * l - 13 * l - s - 2),
    )
    d.concludes(target, where={P: exact_params, D: b * s * c_token})
    return d


def training_approx() -> Derivation:
    return per_token_rule("flops.training.approx", "flops.training", 3, "6ΨD", (BILIBILI, LI, KAPLAN))


def training_recompute_approx() -> Derivation:
    return per_token_rule("flops.training.recompute.approx", "flops.training.recompute", 4, "8ΨD", (BILIBILI,))


def megatron() -> Derivation:
    d = Derivation("flops.megatron", "Megatron's 96Bslh²(1 + s/6h + V/16lh)", (NARAYANAN,))
    per_layer = get("flops.layer.forward").dimensioned.subs(b, B)
    head = get("flops.logits").dimensioned.subs(b, B)
    d.defines(
        "F_Megatron",
        4 * l * per_layer + 3 * head,
        "full recompute: each layer runs forward twice and backward once (4×); the logits are not recomputed (3×)",
    )
    d.equals("F_Megatron", 96 * B * s * l * h**2 * (1 + s / (6 * h) + V / (16 * l * h)), "factor out 96Bslh²")
    d.concludes("flops.megatron")
    return d


def inference_per_token() -> Derivation:
    d = Derivation("flops.inference.per_token", "Inference: 2Ψ per token", (LI, BILIBILI))
    exact_params = get("params.total").part
    d.defines("F_fwd/(bs)", sp.cancel(get("flops.forward").dimensioned / (b * s * c_token)), "one forward pass, per token")
    d.approximates(
        "2Ψ",
        c_flop * exact_params,
        "a multiply and an add per weight per token",
        condition=LARGE_MODEL,
        dropped=2 * h * (2 * s * l - 13 * l - s - 2),
    )
    d.concludes("flops.inference.per_token", where={P: exact_params})
    d.refutes(
        "000: 6Ψ per token",
        3 * get("flops.inference.per_token").part,
        "000 §3.2 prints the inference cost as 6 FLOPs per parameter per token, the training figure: "
        "inference runs the forward only",
        correct=get("flops.inference.per_token").dimensioned,
        source=Source("000", "§3.2"),
    )
    return d


def recompute_from_scratch() -> Derivation:
    i = sp.Dummy("i", positive=True, integer=True)  # a summation index, not a quantity
    d = Derivation("flops.recompute.from_scratch", "Recomputing every layer from the input is quadratic in l", (LI,))
    d.defines("Σ", sp.Sum(i, (i, 1, l)), "layer i's backward re-runs the forward of layers 1..i")
    d.equals("Σ", l * (l + 1) / 2, "the arithmetic series")
    d.concludes("flops.recompute.from_scratch")
    return d


DERIVATIONS = (
    gemm_count,
    layer_forward,
    logits,
    forward,
    backward,
    training,
    training_recompute,
    training_approx,
    training_recompute_approx,
    megatron,
    inference_per_token,
    recompute_from_scratch,
)
