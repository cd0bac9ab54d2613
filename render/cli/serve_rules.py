"""What ``serve`` refuses in a request or a layout, in words: one template per rule, stated once.

The command line fills them (``refusal``, called by render/cli/serve_command.py); the sizing page's serving view fills
the same templates, written into its script as JSON (``TEMPLATES``, render/documents/calculator.py), so a state the
page refuses reads as the line ``serve`` prints. The rules, in the order ``serve`` applies them after reading its
numbers: the output has at least 2 tokens (the first comes from the prefill, TPOT needs a decoding step); t divides
the attention heads and p the layers (Megatron's split, DESIGN.md); experts spread over e GPUs only on an MoE model, e
dividing t and the experts; prompt + output within the config's ``max_position_embeddings``; the network positive.
A model with DeepSeek sparse attention is priced at its indexer's top-k (formulas/reports/serving_report.py).
"""

from __future__ import annotations

OUTPUT_TOO_SHORT = "--output must be at least 2 tokens: the first comes from the prefill, TPOT needs a decoding step"
TP_HEADS = "--tp {t}: {label} has {a} attention heads, not a multiple of {t}"
PP_LAYERS = "--pp {p}: {label} has {l} layers, not a multiple of {p} stages"
EP_DENSE = "--ep {e}: {label} is dense (no mixture-of-experts layer to spread over GPUs)"
EP_SPLIT = "--ep {e}: experts spread over e of a stage's t GPUs, so e must divide --tp {t} and the {E} experts"
WINDOW = ("--input {s_in} + --output {s_out} = {total} tokens exceeds {label}'s context window of {window} "
          "(max_position_embeddings)")
NETWORK_NOT_POSITIVE = "--network must be positive, got {text}"

TEMPLATES = {"output": OUTPUT_TOO_SHORT, "tp": TP_HEADS, "pp": PP_LAYERS, "window": WINDOW, "network": NETWORK_NOT_POSITIVE}
"""The templates the page's serving view fills (it has no --ep)."""


def refusal(values: dict, label: str, t: int, p: int, e: int, s_in: int, s_out: int, window: int | None) -> str | None:
    """The first rule a layout or a request breaks for the model (architecture ``values``, named ``label``), or None."""
    if values["a"] % t:
        return TP_HEADS.format(t=t, label=label, a=values["a"])
    if values["l"] % p:
        return PP_LAYERS.format(p=p, label=label, l=values["l"])
    if e > 1:
        if values["l_moe"] == 0:
            return EP_DENSE.format(e=e, label=label)
        if t % e or values["E"] % e:
            return EP_SPLIT.format(e=e, t=t, E=values["E"])
    if window is not None and s_in + s_out > window:
        return WINDOW.format(s_in=s_in, s_out=s_out, total=s_in + s_out, label=label, window=window)
    return None
