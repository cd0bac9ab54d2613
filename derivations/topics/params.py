"""Proofs of the classic parameter counts (000 §3.1; Narayanan et al. 2021 §5.1).

Each count is built from the shapes of the weights the block holds, then shown
equal to the catalogue's closed form; Narayanan's factored form and the 12lh²
rule are proved to be approximations with their exact relative error.
"""

from __future__ import annotations

import sympy as sp

from llm_formulas.derivations.vocabulary.engine import Derivation
from llm_formulas.derivations.vocabulary.proof import much_less
from llm_formulas.formulas.vocabulary.catalogue import get
from llm_formulas.formulas.topics.params import BILIBILI, NARAYANAN
from llm_formulas.formulas.vocabulary.symbols import V, a, h, l, s


def attention() -> Derivation:
    d = Derivation("params.layer.attention", "Attention parameters from the head shapes", (BILIBILI,))
    per_matrix = d.defines("Ψ_Q", a * h * (h / a), "a heads, each with a W_Q^i of shape (h, h/a)")
    d.equals("Ψ_Q", h**2, "the heads together make one h×h matrix")
    d.defines("Ψ_attn", 4 * per_matrix + 4 * h, "W_Q, W_K, W_V and the output W_O are h×h; each has an h bias")
    d.concludes("params.layer.attention")
    return d


def mlp() -> Derivation:
    d = Derivation("params.layer.mlp", "MLP parameters: h→4h→h with biases", (BILIBILI,))
    d.defines("Ψ_mlp", h * (4 * h) + 4 * h + (4 * h) * h + h, "W_1 is (h, 4h) with a 4h bias; W_2 is (4h, h) with an h bias")
    d.concludes("params.layer.mlp")
    return d


def norms() -> Derivation:
    d = Derivation("params.layer.norms", "LayerNorm parameters", (BILIBILI,))
    d.defines("Ψ_norm", 2 * (h + h), "two LayerNorms (before attention, before MLP), each a scale γ and a shift β of size h")
    d.concludes("params.layer.norms")
    return d


def layer() -> Derivation:
    d = Derivation("params.layer", "One transformer layer", (BILIBILI, NARAYANAN))
    parts = [get(i).dimensioned for i in ("params.layer.attention", "params.layer.mlp", "params.layer.norms")]
    d.defines("Ψ_layer", sum(parts), "attention + MLP + norms, each proved from its shapes")
    d.concludes("params.layer")
    return d


def total() -> Derivation:
    d = Derivation("params.total", "The whole GPT model", (BILIBILI, NARAYANAN))
    d.defines(
        "Ψ",
        l * get("params.layer").part + V * h + s * h + 2 * h,
        "l layers, a (V, h) token embedding, a learned (s, h) position table, a final LayerNorm; "
        "the output head reuses the embedding (tied)",
    )
    d.concludes("params.total")
    return d


def narayanan() -> Derivation:
    d = Derivation("params.narayanan", "Narayanan's factored count, and what it leaves out", (NARAYANAN,))
    exact = get("params.total").part
    d.defines("Ψ", exact, "the exact count (params.total)")
    form = 12 * l * h**2 * (1 + sp.Rational(13, 12) / h + (V + s) / (12 * l * h))
    d.approximates(
        "Ψ_Narayanan",
        form,
        "Narayanan et al. count the layers, embeddings and positions but not the final LayerNorm (2h)",
        condition=much_less(2 * h, 12 * l * h**2),
        dropped=2 * h,
    )
    d.concludes("params.narayanan")
    return d


def leading_term() -> Derivation:
    d = Derivation("params.approx", "The 12lh² rule and its error", (BILIBILI, NARAYANAN))
    d.defines("Ψ", get("params.total").part, "the exact count (params.total)")
    d.approximates(
        "12lh²",
        12 * l * h**2,
        "keep the layers' h² weights only",
        condition=(much_less(13, 12 * h), much_less(V + s + 2, 12 * l * h)),
        dropped=13 * l * h + V * h + s * h + 2 * h,
    )
    d.concludes("params.approx")
    return d


DERIVATIONS = (attention, mlp, norms, layer, total, narayanan, leading_term)
