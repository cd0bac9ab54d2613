"""Each family's declaration reduces to the classic form it names (formulas/data/families.py, ``reduces_to``).

A declaration fixes some structural switches (GPT-2's biases and LayerNorms, Llama's gated MLP) and reads the
others from config keys. Setting those config-read switches to the classic form's values (no optional biases,
q/k norms, experts, windows or recurrent layers) while keeping everything the declaration fixes, the general
count params.decoder.total must be the classic form itself: the foundation's GPT (params.total, 000 §3.1, at its
shapes g = a, d_head = h/a, d_ff = 4h and a table of s positions) or the Llama form written out below. A
declaration that fixes a switch against its form fails the proof; families whose fixed structure is neither form
say why (``why_not``) and are listed, unproved, in the guide's family table.
"""

from __future__ import annotations

import sympy as sp

from llm_formulas.derivations.vocabulary.engine import Derivation
from llm_formulas.formulas.topics.architecture import BILIBILI, TRANSFORMERS
from llm_formulas.formulas.data.blocks import Family, declared, fixed
from llm_formulas.formulas.vocabulary.catalogue import Source, get
from llm_formulas.formulas.data.families import FAMILIES
from llm_formulas.formulas.vocabulary.symbols import V, a, d_ff, d_head, g, h, l, quantity, s, switch_defaults, tied, u_param

LLAMA = Source("touvron2023b", "§2.2: pre-normalization with RMSNorm, SwiGLU, rotary embeddings, grouped-query attention")

# the Llama form: RMSNorm before attention and MLP, a gated MLP, g key/value heads of d_head, no biases
LLAMA_FORM = ((2 - tied) * V * h + l * (h * a * d_head + 2 * h * g * d_head + a * d_head * h + 3 * h * d_ff + 2 * h) + h) * u_param
SWITCHES_OFF = {name: 0 for name in ("qk_norm", "qk_norm_full", "sink", "attn_gate", "kv_expand", "x_attn", "mla", "l_moe", "l_win",
                                     "l_mamba", "l_ssd", "l_lru", "l_gdn", "l_noattn", "l_nomlp", "n_mtp", "emb_norm", "proj_emb",
                                     "head_bias", "o_pos", "router_bias", "sh_gate", "d_sh")}
REFERENCES = {
    # the classic GPT of the foundation: its shapes and every switch at its classic value
    "gpt": {**{quantity(sym).name: value for sym, value in switch_defaults().items()}, **SWITCHES_OFF,
            "g": a, "d_head": h / a, "d_ff": 4 * h, "d_emb": h, "n_pos": s, "E": 1, "k": 1},
    "llama": {**SWITCHES_OFF, "gated": 1, "b_q": 0, "b_k": 0, "b_v": 0, "b_o": 0, "b_mlp": 0, "norm_bias": 0, "n_norm": 2, "norm_final": 1,
              "pos_table": 0, "d_emb": h, "E": 1, "k": 1},
}


def fixed_switches(family: Family) -> dict[str, int]:
    """The values a declaration fixes whatever the config says (one spec, one symbol; b_k and b_v follow b_q)."""
    found = {name: fixed(spec) for name, spec in declared(family) if fixed(spec) is not None}
    if "b_q" in found:
        found["b_k"] = found["b_v"] = found["b_q"]
    if family.experts is None:
        found["l_moe"] = 0
    if family.attention.latent is not None:
        found["mla"] = 1
    return found


def _symbols(values: dict[str, object]) -> dict[sp.Symbol, object]:
    return {quantity(name).symbol: value for name, value in values.items()}


def reduction(family: Family):
    form = family.reduces_to

    def make() -> Derivation:
        d = Derivation(f"families.{family.model_type}", f"{family.title}: the declaration is the {form} form", (TRANSFORMERS, BILIBILI, LLAMA))
        own = fixed_switches(family)
        reduced = get("params.decoder.total").dimensioned.xreplace(_symbols({**REFERENCES[form], **own}))
        d.defines("Ψ|declared", reduced, f"params.decoder.total with the switches {family.model_type} fixes, the ones it reads "
                  "from its config at the form's values (no optional biases, q/k norms, experts or windows)")
        if form == "gpt":
            d.equals("Ψ_GPT", get("params.total").part, "the foundation's l(12h² + 13h) + Vh + sh + 2h")
        else:
            free = _symbols({name: value for name, value in own.items() if name == "tied"})
            d.equals("Ψ_Llama", LLAMA_FORM.xreplace(free), "(2 − σ_tied)Vh + l(2h·a·d_head + 2h·g·d_head + 3h·d_ff + 2h) + h: "
                     "embedding (and an untied head), attention, a gated MLP, two RMSNorms per layer and a final one", aside=True)
        return d

    make.__name__ = f"reduce_{family.model_type}"
    return make


DERIVATIONS = tuple(reduction(family) for family in FAMILIES.values() if family.reduces_to is not None)
