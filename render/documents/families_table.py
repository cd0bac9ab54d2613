"""The family tables of the user guide's chapter guide/families.md, generated from the declarations.

``python -m llm_formulas.render.documents.families_table`` rewrites the text between the chapter's markers;
tests/test_families_guide.py fails when the committed chapter differs from what the declarations say.
"""

from __future__ import annotations

import re
from pathlib import Path

from llm_formulas.formulas.data.blocks import Family, fixed
from llm_formulas.formulas.data.families import FAMILIES, NO_ATTENTION
from llm_formulas.formulas.data.multimodal import MULTIMODAL

CHAPTER = Path(__file__).with_name("guide") / "families.md"
BEGIN, END = "<!-- families: generated from formulas/data/families.py, do not edit -->", "<!-- families: end -->"


def _switch(spec, yes: str, no: str = "") -> str:
    value = fixed(spec)
    return yes if value else no if value == 0 else f"{yes} (config)"


def _row(family: Family) -> str:
    att, mlp, norms = family.attention, family.mlp, family.norms
    if att is NO_ATTENTION:
        attention = "none"
    else:
        attention = "MLA" if att.latent is not None else "GQA/MHA"
    extras = [] if att is NO_ATTENTION else [word for word in (_switch(att.qkv_bias, "QKV bias"), _switch(att.qk_norm, "q/k norm"), _switch(att.qk_norm_all, "q/k norm (all heads)"),
                                _switch(att.sinks, "sinks"), _switch(att.gate, "output gate"), _switch(att.kv_expand, "K/V expanded in cache"),
                                _switch(att.cross, "cross-attention")) if word]
    name = norms.kind or ("LayerNorm" if fixed(norms.layer_norm) else "RMSNorm")
    norm = f"{name} ×{fixed(norms.per_layer) or '(config)'}, {norms.placement}"
    channel = "none" if fixed(mlp.width) == 0 else f"{'gated' if fixed(mlp.gated) != 0 else 'plain'} MLP"
    channel += ", experts" if family.experts else ""
    layers = family.kinds.recurrent or ("windows" if family.kinds.pattern else "")
    head = {1: "tied", 0: "untied"}.get(fixed(family.embedding.tied), "tied (config)" if family.embedding.tied.default else "untied (config)")
    form = family.reduces_to or f"— ({family.why_not})"
    return (f"| `{family.model_type}` | {family.title} | {attention}{', ' + ', '.join(extras) if extras else ''} | {norm} | {channel} | "
            f"{layers} | {head} | {form} |")


def family_table() -> str:
    lines = ["| model_type | checkpoints | attention | norms | MLP | per-layer kinds | head | reduces to |",
             "|---|---|---|---|---|---|---|---|"]
    lines += [_row(family) for family in sorted(FAMILIES.values(), key=lambda f: f.model_type)]
    lines += ["", "| model_type | checkpoints | text model | vision tower |", "|---|---|---|---|"]
    lines += [f"| `{m.model_type}` | {m.title} | `{m.text_type}` | {m.tower.name} |" for m in MULTIMODAL.values()]
    return "\n".join(lines)


def refreshed(text: str) -> str:
    """The chapter with its generated part replaced."""
    pattern = re.compile(re.escape(BEGIN) + ".*?" + re.escape(END), flags=re.S)
    return pattern.sub(lambda _: f"{BEGIN}\n{family_table()}\n{END}", text)


if __name__ == "__main__":
    text = CHAPTER.read_text(encoding="utf-8")
    new = refreshed(text)
    CHAPTER.write_text(new, encoding="utf-8")
    print(f"{CHAPTER}: {'rewritten' if new != text else 'up to date'}")
