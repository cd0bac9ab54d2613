"""Parameter counts of the classic GPT decoder (000 §3.1; Narayanan et al. 2021 §5.1).

Per layer: attention 4h² + 4h (Q, K, V, O weights and biases), MLP 8h² + 5h
(h→4h→h with biases), two LayerNorms 4h: 12h² + 13h. The model adds token
embeddings Vh, a learned position table sh (s = its length) and a final
LayerNorm 2h; the output head is tied to the embeddings.
"""

from __future__ import annotations

from llm_formulas.formulas.vocabulary.catalogue import Source, formula
from llm_formulas.formulas.vocabulary.symbols import V, h, l, s, u_param

BILIBILI = Source("000", "§3.1")
NARAYANAN = Source("narayanan2021", "§5.1, parameter count")

attention = formula(
    "params.layer.attention",
    (4 * h**2 + 4 * h) * u_param,
    "parameter",
    "parameters of one attention block: Q, K, V, O weights (h×h) and biases",
    sources=[BILIBILI],
    symbol_latex=r"\Psi_{attn}",
)
mlp = formula(
    "params.layer.mlp",
    (8 * h**2 + 5 * h) * u_param,
    "parameter",
    "parameters of one MLP: h→4h and 4h→h weights with biases",
    sources=[BILIBILI],
    symbol_latex=r"\Psi_{mlp}",
)
norms = formula(
    "params.layer.norms",
    4 * h * u_param,
    "parameter",
    "parameters of a layer's two LayerNorms (scale and shift)",
    sources=[BILIBILI],
    symbol_latex=r"\Psi_{norm}",
)
layer = formula(
    "params.layer",
    (12 * h**2 + 13 * h) * u_param,
    "parameter",
    "parameters of one transformer layer",
    sources=[BILIBILI, NARAYANAN],
    related=["params.layer.attention", "params.layer.mlp", "params.layer.norms"],
    symbol_latex=r"\Psi_{layer}",
)
total = formula(
    "params.total",
    (l * (12 * h**2 + 13 * h) + V * h + s * h + 2 * h) * u_param,
    "parameter",
    "parameters of a GPT model: layers, token embeddings, learned positions (s = table length), final LayerNorm; head tied",
    sources=[BILIBILI, NARAYANAN],
    related=["params.layer", "params.narayanan", "params.approx"],
    symbol_latex=r"\Psi",
)
narayanan = formula(
    "params.narayanan",
    12 * l * h**2 * (1 + 13 / (12 * h) + (V + s) / (12 * l * h)) * u_param,
    "parameter",
    "Narayanan et al.'s parameter count: params.total without the final LayerNorm",
    sources=[NARAYANAN],
    related=["params.total"],
    symbol_latex=r"\Psi_{Narayanan}",
)
approx = formula(
    "params.approx",
    12 * l * h**2 * u_param,
    "parameter",
    "the leading term: 12 l h² parameters",
    sources=[BILIBILI, NARAYANAN],
    related=["params.total"],
    symbol_latex=r"\Psi \approx",
)
