"""``llm-formulas families``: every model type the config reader knows (formulas/data/families.py, formulas/data/multimodal.py),
the transformers release its counts were checked against, and which commands price it.

params, flops, kv-cache and serve take every family (serve prices DeepSeek sparse attention at its indexer's top-k).
estimate's training report prices attention-and-MLP (or MoE)
decoder layers only (formulas/reports/estimate.py ``unpriced``): a family with recurrent mixers or layers without a mixer is
refused, as is a multimodal checkpoint (its vision tower); a family whose cross-attention or attention gate is a config
switch is priced unless the config sets it. Model types transformers builds that no declaration states exactly
(formulas/data/families.py REFUSED) are listed with the reason every command refuses them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable

from llm_formulas.render.cli.result import Result

if TYPE_CHECKING:
    from llm_formulas.formulas.data.blocks import Family

ALWAYS = ("params", "flops", "kv-cache", "serve")


def _estimate(family: Family) -> str:
    """'yes', 'no: why' or 'unless KEY' for estimate, from the family's declaration."""
    from llm_formulas.formulas.data.blocks import Flag

    if family.mixer is not None or family.kinds.single_block:
        return "no: recurrent or mixer-less layers"
    if "dsa" in family.extra:
        return "no: DeepSeek sparse attention (the training report's attention has no top-k selection)"
    switches = [(family.attention.cross, "cross-attention"), (family.attention.gate, "an attention output gate")]
    for spec, what in switches:
        if isinstance(spec, Flag):
            return f"unless {spec.name} (then {what})"
        if spec != 0:
            return f"no: {what}"
    return "yes"


def rows() -> list[dict]:
    """One row per model type, decoder families then multimodal checkpoints, each sorted by name."""
    from llm_formulas.formulas.data.families import CHECKED_AGAINST, FAMILIES, REFUSED
    from llm_formulas.formulas.data.multimodal import MULTIMODAL

    checked = f"transformers {CHECKED_AGAINST}"
    found = []
    for name in sorted(FAMILIES):
        estimate = _estimate(FAMILIES[name])
        commands = [*ALWAYS[:3], *(["estimate"] if not estimate.startswith("no") else []), "serve"]
        found.append({"model_type": name, "title": FAMILIES[name].title, "kind": "decoder", "checked_against": checked,
                      "commands": commands, "estimate": estimate})
    for name in sorted(MULTIMODAL):
        found.append({"model_type": name, "title": MULTIMODAL[name].title, "kind": "multimodal", "checked_against": checked,
                      "commands": list(ALWAYS), "estimate": "no: the vision tower (the report prices the language model only)"})
    for name in sorted(REFUSED):
        found.append({"model_type": name, "title": f"refused: {REFUSED[name]}", "kind": "refused", "checked_against": checked,
                      "commands": [], "estimate": "no: refused"})
    return found


def families() -> Result:
    table = rows()
    width = max(len(row["model_type"]) for row in table)
    lines = [f"{'model_type':<{width}}  checked against   commands                              title"]
    for row in table:
        commands = " ".join(row["commands"]) or "none"
        note = "" if row["estimate"] == "yes" or row["estimate"].startswith("no") else f" ({row['estimate']})"
        lines.append(f"{row['model_type']:<{width}}  {row['checked_against']:<16}  {commands + note:<36}  {row['title']}")
    return Result(table, "\n".join(lines))


def register(add_command: Callable[..., object]) -> None:
    add_command("families", "every model type a config.json may name, the transformers version its counts were checked "
                "against, and the commands that price it", lambda args: families())
