"""The cheat sheet: the formulas a practitioner uses daily, each with its condition and a worked example on a
real model, printed from the catalogue's own expressions (``cheatsheet.pdf`` and ``cheatsheet.html``).

``cheatsheet()`` returns the page model the two templates lay out: sections of entries, each
a catalogue formula (its LaTeX and MathML printed from the same expression as the reference's),
the conditions under which it holds (the formula's own and those of its derivation's
approximations), and the formula evaluated exactly at a named real model, GPU and layout, in
human units. The example inputs are the published ones: GPT-3 175B in Megatron's layout
(Narayanan et al. 2021, Table 1: t = 8, p = 8, d = 16, B = 1536, s = 2048) on A100s,
Llama-2-70B for what grouped-query attention changes, Mixtral 8x7B for mixture of experts,
the H100 for decoding. One small picture: the first pipeline stage's memory against the
micro-batch.
"""

from __future__ import annotations

from dataclasses import dataclass

from llm_formulas.derivations.reports.catalogue import derivation_of
from llm_formulas.formulas.reports import estimate
from llm_formulas.formulas.vocabulary.catalogue import get
from llm_formulas.formulas.data.gpus import gpu
from llm_formulas.formulas.vocabulary.latex import formula_latex
from llm_formulas.render.documents.exercise_kit import model as _model
from llm_formulas.render.documents.exercise_kit import rational
from llm_formulas.render.printers.human import exact as exact_text



GPT3 = _model("gpt3-175b") | {"t": 8, "p": 8, "d": 16, "n": 1024, "B": 1536, "b": 1, "s": 2048, "m": 96, "v": 2,
                              "q": 2, "q_w": 2, "D": 300 * 10**9, "U": "2/5", "tau": 30 * 86400, "x_msg": 10**9}
A100 = gpu("a100-80gb").inputs()
LLAMA = _model("llama2-70b") | {"b": 8, "s": 4096, "q": 2}
MIXTRAL = _model("mixtral-8x7b") | {"t": 2, "p": 1, "e": 8, "d": 32, "c": 1, "b": 1, "s": 4096, "q": 2}
H100 = gpu("h100-sxm").inputs() | {"q_w": 2}
LONG = LLAMA | {"t": 8, "c": 8, "b": 1, "s": 131072}
CONTEXTS = {  # key: (what the example is called at each entry, the whole configuration, said once, the values)
    "gpt3": ("GPT-3 175B", "GPT-3 175B in Megatron's layout t = 8, p = 8, d = 16 (1024 A100s), B = 1536 sequences, "
             "micro-batch b = 1, s = 2048, m = 96, v = 2, D = 300B tokens, U = 0.4, a 1 GB all-reduce buffer", GPT3 | A100),
    "llama": ("Llama-2-70B", "Llama-2-70B (80 layers, g = 8 KV heads of 128) with 8 sequences of 4096 tokens in 16 bits",
              LLAMA),
    "h100": ("Llama-2-70B on an H100", "Llama-2-70B's weights on one H100 SXM (989 TFLOP/s, 3.35 TB/s) in 16 bits, batch 1; "
             "its 138 GB of weights do not fit one H100's 80 GB, so read these as the rates of the GPUs that hold them "
             "(at least two; the handout prices eight)",
             _model("llama2-70b") | H100 | {"n": 1, "b": 1}),
    "mixtral": ("Mixtral 8x7B", "Mixtral 8x7B with t = 2, e = 8, d = 32, b = 1, s = 4096", MIXTRAL),
    "long": ("Llama-2-70B at 128k", "Llama-2-70B with t = 8, context parallelism c = 8, one sequence of 131072 tokens", LONG),
}

# (section, [(formula id, what it is called, the context it is evaluated in, what to take from it)])
SECTIONS: tuple[tuple[str, tuple[tuple[str, str, str, str], ...]], ...] = (
    ("FLOPs", (
        ("flops.training.approx", "training: 6ΨD", "gpt3", "forward 2Ψ, backward 4Ψ per token; D = 300B tokens here, the whole run"),
        ("flops.training.recompute.approx", "with full recompute: 8ΨD", "gpt3", "the forward runs twice"),
        ("flops.inference.per_token", "inference: 2Ψ per token", "gpt3", "one forward pass; the KV cache saves recomputing K, V"),
        ("flops.megatron", "Megatron's Eq. 3 (full recompute, exact)", "gpt3", "the attention s/6h and logits V/16lh kept"),
    )),
    ("Model states", (
        ("memory.model_states", "mixed-precision Adam: 16Ψ", "gpt3", "2 + 2 bytes of bf16 weight and gradient, 12 of fp32 Adam"),
        ("memory.model_states.fp32_grads", "fp32 gradients: 18Ψ", "gpt3", ""),
        ("memory.model_states.grad_buffers", "an fp32 gradient buffer besides: 20Ψ", "gpt3", "BLOOM's count (004)"),
        ("memory.fp8.model_states", "FP8 training: 18Ψ", "gpt3", "FP8 copies beside the bf16 weights: more state, not less"),
        ("memory.model_states.inference", "serving weights: 2Ψ", "gpt3", "int8: Ψ, int4: Ψ/2, before scales"),
        ("memory.zero", "per GPU, 3D parallel, ZeRO 0", "gpt3", "tensor and pipeline parallelism split the states"),
        ("memory.zero.stage1", "ZeRO-1: Adam partitioned over d", "gpt3", ""),
        ("memory.zero.stage2", "ZeRO-2: and the gradients", "gpt3", ""),
        ("memory.zero.stage3", "ZeRO-3: and the weights", "gpt3", "traffic 1.5× that of plain DP (below)"),
    )),
    ("Activations (Korthikanti et al. 2022)", (
        ("memory.activations.layer", "one layer: 34sbh + 5as²b", "gpt3", "16-bit values, 1-byte dropout masks, no TP"),
        ("memory.activations.layer.tp", "tensor parallel", "gpt3", "norms and dropouts stay whole on each rank"),
        ("memory.activations.layer.tp_sp", "tensor + sequence parallel", "gpt3", "everything divided by t"),
        ("memory.activations.layer.selective", "selective recompute, TP", "gpt3", "the s² scores recomputed, not stored"),
        ("memory.activations.layer.selective_sp", "selective recompute, TP + SP", "gpt3", ""),
        ("memory.activations.layer.full_recompute", "full recompute", "gpt3", "only the layer's input kept"),
        ("memory.activations.layer.flash", "a flash-attention core", "gpt3", "no s² term: Q, K, V, output and a log-sum-exp"),
        ("memory.activations.1f1b", "the first pipeline stage under 1F1B", "gpt3", "p micro-batches of l/p layers: l layers' worth"),
        ("memory.activations.layer.cp_sp", "with context parallelism c", "long", "each GPU holds s/c of the tokens"),
    )),
    ("KV cache", (
        ("memory.kv_cache", "the decoding cache, with GQA", "llama", "g KV heads, not a: GQA divides the cache by a/g"),
        ("memory.kv_cache.per_token", "per token, every layer", "llama", ""),
    )),
    ("Pipeline", (
        ("cluster.bubble", "the 1F1B bubble", "gpt3", "idle over busy time; m micro-batches per replica"),
        ("cluster.bubble.interleaved", "interleaved, v chunks per GPU", "gpt3", "v times the point-to-point traffic"),
    )),
    ("Decoding: roofline and balance batch", (
        ("inference.balance_batch", "the balance batch", "h100", "memory-bound below it, compute-bound above"),
        ("inference.latency.memory_bound", "a step, memory-bound", "h100", "every weight read once per step"),
        ("inference.latency.compute_bound", "a step, compute-bound", "h100", "at b = 1 here: far below the memory time"),
    )),
    ("Traffic per GPU", (
        ("comms.collective.allreduce", "ring all-reduce of x bytes over n", "gpt3", "reduce-scatter, then all-gather: 2(n − 1) steps"),
        ("comms.tp.sent_per_microbatch", "tensor parallel, per micro-batch", "gpt3", "4 all-reduces of b·s·h per layer, blocking"),
        ("comms.pp.per_microbatch", "pipeline, per micro-batch and boundary", "gpt3", "activations forward, gradients back"),
        ("comms.dp.sent_per_iteration", "data parallel, per iteration", "gpt3", "the gradients of the GPU's share, once"),
        ("comms.zero.stage3.sent", "ZeRO-3, per iteration", "gpt3", "two all-gathers of weights and a reduce-scatter"),
        ("comms.ep.per_layer", "expert parallel all-to-all, per layer", "mixtral", "dispatch and combine, forward and backward"),
        ("comms.cp.per_layer", "context parallel (ring attention), per layer", "long", "K and V chunks around the ring"),
    )),
    ("Time and utilization", (
        ("cluster.training_time", "training time", "gpt3", "6ΨD over what the n GPUs deliver at U"),
        ("cluster.gpus_for_deadline", "GPUs for a deadline τ", "gpt3", "τ = 30 days here"),
        ("cluster.mfu", "model FLOPs utilization", "gpt3", "6ΨD over n·X·τ, whatever the run recomputes"),
    )),
)


@dataclass(frozen=True)
class Entry:
    formula_id: str
    title: str
    latex: str
    mathml: str
    unit: str
    conditions: tuple[str, ...]
    example: str  # the context, in words
    value: str  # the formula at it, in human units
    exact: str
    note: str


@dataclass(frozen=True)
class Section:
    title: str
    entries: tuple[Entry, ...]


def conditions_of(formula_id: str) -> tuple[str, ...]:
    """The formula's conditions and those of its derivation's approximations, each once."""
    derivation = derivation_of(formula_id)
    found = [c.text for c in get(formula_id).conditions]
    found += [step.condition for step in (derivation.steps if derivation else ()) if step.condition]
    return tuple(dict.fromkeys(found))


def _mathml(formula_id: str) -> str:
    from llm_formulas.render.documents.reference import formula_mathml

    return formula_mathml(get(formula_id))


def entry(formula_id: str, title: str, context: str, note: str) -> Entry:
    words, _, values = CONTEXTS[context]
    formula = get(formula_id)
    value = rational(estimate.exact(formula_id, **values))
    binary = formula_id.startswith("memory.kv_cache")
    unit = str(formula.unit)
    from llm_formulas.render.documents.reference import human_value

    return Entry(formula_id, title, formula_latex(formula), _mathml(formula_id), unit, conditions_of(formula_id), words,
                 human_value(value, unit, binary), f"{exact_text(value)} {unit}" if value.is_Rational else "",
                 note[:1].upper() + note[1:])


PLOT = ("memory_vs_micro_batch", {"model": "gpt3-175b", "gpu_key": "a100-80gb", "t": 8, "p": 8, "s": 2048})
PLOT_CAPTION = ("GPT-3 175B on A100 80 GB, t = 8, p = 8, s = 2048: the first pipeline stage's memory, "
                "16Ψ/(t·p) + l × a layer's activations, against the micro-batch, for each recompute mode")


@dataclass(frozen=True)
class Sheet:
    sections: tuple[Section, ...]
    symbols: tuple[tuple[object, object], ...]  # the symbols the entries use, two to a row
    contexts: tuple[tuple[str, str], ...]
    plot: str  # the PNG's file name, beside the .tex
    plot_png: str  # the same PNG, base64, for the HTML
    plot_caption: str


def cheatsheet() -> Sheet:
    """The sheet: its sections, the symbols they use and the picture."""
    import base64

    from llm_formulas.formulas.vocabulary.symbols import quantity
    from llm_formulas.render.documents import lesson_plots
    from llm_formulas.render.documents.reference import symbol_row

    sections = tuple(Section(title, tuple(entry(*row) for row in rows)) for title, rows in SECTIONS)
    used = sorted({symbol.name for e in (e for s in sections for e in s.entries)
                   for symbol in get(e.formula_id).expr.free_symbols}, key=lambda name: (name.lower(), name))
    rows = [symbol_row(quantity(name)) for name in used]
    pairs = tuple((rows[i], rows[i + 1] if i + 1 < len(rows) else None) for i in range(0, len(rows), 2))
    png = lesson_plots.png(PLOT[0], **PLOT[1])
    return Sheet(sections, pairs, tuple((words, whole) for words, whole, _ in CONTEXTS.values()), "cheatsheet-plot.png",
                 base64.b64encode(png).decode("ascii"), PLOT_CAPTION)


