"""The bounds every command shares: how deep a model, how large a cluster, a batch or a layout space may be,
and the physical bound no figure may cross.

No real model comes near these sizes; a larger value is a typo or an attack, and each bound keeps the work it
allows within seconds and a few hundred MB (measured in tests/test_bounds.py):

- a model has at most ``MAX_LAYERS`` layers (the deepest published ones have about 130: Megatron's 1T model 128):
  ``params`` and ``kv-cache`` list one entry per layer, the config readers one layer kind each; a size
  (hidden size, heads, vocabulary, experts, ...) is at most ``MAX_SIZE``;
- a pipeline has at most ``MAX_STAGES`` stages (a stage holds at least one layer), so ``--stages`` is refused
  by its length before a single entry is read;
- a layout has at most ``MAX_GPUS`` GPUs, each of its degrees too, a global batch at most ``MAX_SEQUENCES``
  sequences of at most ``MAX_TOKENS`` tokens (``COUNT_BOUNDS``, by symbol name: what ``parse_count`` applies to
  every count typed on the command line, in a sweep spec or on the sizing page);
- ``plan`` and ``sweep`` evaluate at most ``MAX_LAYOUTS`` layouts (with their settings) per case.

The physical bound: a GPU computes at most its peak, so the hardware FLOPs utilization (HFU: the model's FLOPs
and the recomputed ones, over the time at peak) is at most ``MAX_HFU`` = 1. An assumed MFU whose recomputation
would need more is refused (render.cli.estimate_command.peak_violation), never printed as a figure above 100 %.

The words of each rule are stated here once; the sizing page's copy of them is tested against these.
"""

from __future__ import annotations

MAX_SIZE = 2**31  # a hidden size, head count, vocabulary or expert count
MAX_LAYERS = 10_000
MAX_STAGES = MAX_LAYERS  # every stage holds at least one layer
MAX_GPUS = 10**7  # a cluster; every parallel degree too
MAX_SEQUENCES = 10**7  # a global batch, and so a micro-batch or a count of micro-batches
MAX_TOKENS = 10**9  # tokens in one sequence
MAX_LAYOUTS = 2_000_000  # layouts × settings one plan evaluates: about 2 s and 300 MB
MAX_HFU = 1  # a GPU computes at most its peak

COUNT_BOUNDS: dict[str, int] = {
    "n": MAX_GPUS, "t": MAX_GPUS, "p": MAX_STAGES, "d": MAX_GPUS, "c": MAX_GPUS, "e": MAX_GPUS,
    "v": MAX_LAYERS,
    "b": MAX_SEQUENCES, "m": MAX_SEQUENCES, "B": MAX_SEQUENCES,
    "s": MAX_TOKENS,
}
BOUND_UNITS = {"n": "GPUs", "t": "GPUs", "p": "pipeline stages", "d": "GPUs", "c": "GPUs", "e": "GPUs", "v": "layers",
               "b": "sequences", "m": "micro-batches", "B": "sequences", "s": "tokens"}  # what each bound counts


def _count(value: int) -> str:
    """A count as a rule quotes it: its digits below 10¹⁵, three significant digits beyond (1e+100)."""
    return f"{value:,}" if value < 10**15 else f"{value:.3g}"


def bound_violation(name: str, value: int) -> str | None:
    """Why the count ``value`` of the symbol ``name`` is beyond its bound (COUNT_BOUNDS), or None."""
    bound = COUNT_BOUNDS.get(name)
    if bound is None or value <= bound:
        return None
    return f"{name} = {_count(value)} is beyond the bound of {bound:,} {BOUND_UNITS[name]}"


def stages_violation(count: int) -> str | None:
    """Why a partition into ``count`` pipeline stages is refused before it is read, or None."""
    if count <= MAX_STAGES:
        return None
    return f"--stages lists {count:,} stages; a pipeline has at most {MAX_STAGES:,} (a stage holds a layer)"


# the architecture values that count layers (at most MAX_LAYERS); every other size is at most MAX_SIZE
LAYER_COUNTS = ("l", "l_moe", "l_win", "n_mtp")


def model_violation(model: dict[str, int]) -> str | None:
    """The first rule a model's values break, in words, or None: sizes within their bounds, the key/value heads
    dividing the attention heads, at most E experts per token, the MoE and windowed layers among the l layers."""
    for name, value in model.items():
        bound = MAX_LAYERS if name in LAYER_COUNTS else MAX_SIZE
        if value > bound:
            return f"the model's {name} = {_count(value)} is beyond the bound of {bound:,}"
    if model["a"] % model["g"]:
        return f"{model['a']} attention heads are not a multiple of {model['g']} key/value heads"
    if model["k"] > model["E"]:
        return f"more experts per token ({model['k']}) than experts ({model['E']})"
    for name, what in (("l_moe", "mixture-of-experts"), ("l_win", "windowed")):
        if model.get(name, 0) > model["l"]:
            return f"{model[name]} {what} layers of a model of {model['l']} layers"
    return None
