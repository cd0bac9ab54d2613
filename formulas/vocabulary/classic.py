"""What the foundation's classic formulas assume of a model, and the general formula that describes any other.

The classic forms (000 §3.1–3.2; Korthikanti et al. 2022) count the GPT block: multi-head attention (g = a) with
heads of h/a, a 4h GELU MLP of two matrices, every bias, two LayerNorms, a learned table of s positions, a tied
head, one expert (``CLASSIC``; every switch at its classic value, formulas/vocabulary/symbols.py). The proofs
params.decoder.classic and flops.decoder.classic show each equal to its general formula at these values.

A model that breaks an assumption (Llama: gated, untied, no position table, no biases) is not described by the
classic form, whatever its sizes: ``violated`` finds the assumptions the given values break, and the evaluation
refuses naming the general formula (``GENERAL``), which reads the model's structure.
"""

from __future__ import annotations

import sympy as sp

from llm_formulas.formulas.vocabulary.catalogue import get
from llm_formulas.formulas.vocabulary.symbols import E, a, d_emb, d_ff, d_head, g, gated, h, k, n_pos, s, switch_defaults

__all__ = ["CLASSIC", "GENERAL", "KORTHIKANTI_BLOCK", "assumptions", "violated"]

# The classic GPT of the foundation (000 §3.1–3.2): its shapes, and every switch at its classic value
CLASSIC: dict[sp.Symbol, sp.Expr] = {g: a, d_head: h / a, d_ff: 4 * h, d_emb: h, n_pos: s, E: sp.Integer(1), k: sp.Integer(1),
                                     **switch_defaults()}

# Korthikanti's block, what the activation counts read: MHA, h/a per head, a 4h GELU MLP (the rest does not matter)
KORTHIKANTI_BLOCK: dict[sp.Symbol, sp.Expr] = {g: a, d_head: h / a, d_ff: 4 * h, gated: sp.Integer(0)}

# classic formula → (the general formula that describes every model, what the classic one assumes)
GENERAL: dict[str, tuple[str, dict[sp.Symbol, sp.Expr]]] = {
    "params.layer.attention": ("params.decoder.attention", CLASSIC),
    "params.layer.mlp": ("params.decoder.mlp", CLASSIC),
    "params.layer.norms": ("params.decoder.norms", CLASSIC),
    "params.layer": ("params.decoder.layer", CLASSIC),
    "params.total": ("params.decoder.total", CLASSIC),
    "params.narayanan": ("params.decoder.total", CLASSIC),
    "params.approx": ("params.decoder.total", CLASSIC),
    "flops.logits": ("flops.decoder.logits", CLASSIC),
    "flops.forward": ("flops.decoder.forward", CLASSIC),
    "flops.backward": ("flops.decoder.backward", CLASSIC),
    "flops.training": ("flops.decoder.training", CLASSIC),
    "memory.activations.layer": ("memory.activations.layer.gated", KORTHIKANTI_BLOCK),
}


def assumptions(formula_id: str) -> dict[sp.Symbol, sp.Expr]:
    """What the formula assumes of a model's structure (symbol → its value there), each a symbol its general formula
    reads (a chunk length of a layer kind the count has not is no assumption); empty for a general formula."""
    if formula_id not in GENERAL:
        return {}
    general, assumed = GENERAL[formula_id]
    read = set(get(general).inputs)
    return {symbol: value for symbol, value in assumed.items() if symbol in read}


def violated(formula_id: str, values: dict[sp.Symbol, sp.Rational]) -> list[str]:
    """The assumptions of ``formula_id`` that ``values`` break, as ``name = value (assumes name = expected)``; an
    assumption whose symbols have no value is not judged."""
    broken = []
    for symbol, assumed in assumptions(formula_id).items():
        if symbol not in values:
            continue
        expected = assumed.xreplace(values)
        if not expected.free_symbols and values[symbol] != expected:
            broken.append(f"{symbol.name} = {values[symbol]} (it assumes {symbol.name} = {assumed})")
    return broken
