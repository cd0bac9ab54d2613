"""The sizing page: pick a model, a GPU and a layout; read whether it fits and how long it trains.

At the top, the report of ``llm-formulas estimate`` (formulas.reports.estimate traced with symbols and printed
to JavaScript by ``render.printers.jscodegen.report_javascript``): a verdict with the memory per GPU, a
stacked bar of the memory (weights, gradients, optimizer states, activations; weights and KV cache when
decoding) against the GPU's memory, the step split into compute, bubble and exposed communication,
training time, GPU-hours, tokens/s per GPU, MFU and HFU, and the largest micro-batch that fits, under the framework
the selector names (``estimate --framework``: one traced report per framework of ``PAGE_FRAMEWORKS``, its bytes, its
recompute and the micro-batches said beside the verdict; a layout preset opens on the framework, ZeRO stage and
recompute its published run used, refused in ``Framework.lacks``'s words where a setting is not offered). Below it the
serving view (``llm-formulas serve``'s report traced, render/printers/serving_js.py): for a batch and a request of the
model on the GPU and the layout's t·p, the memory per GPU beside the KV wall (the largest batch, the longest context,
never beyond the model's window: what memory alone would hold is said beside it; a layout the training half refuses
is flagged there),
TTFT, TPOT, end-to-end latency, tokens/s, what bounds each phase, and $ and J per output token. A layout
that breaks one of estimate's rules says which (``LAYOUT_RULES`` in the page, tested against
``formulas.reports.estimate.layout_violation``). Below, folded, every formula of the catalogue with one input per
symbol (symbol-table order, documented defaults). n = t·p·d and m = B/(b·d) follow the layout; Ψ may be
derived from the model's shape with ``params.decoder.total`` (or ``params.total``). The page reads and
writes its state in the URL (``?model=...&gpu=...&layout=...&name=value&zero=1&units=GiB``, and the serving view's
``batch``, ``input``, ``output``, ``weights`` and ``kv``, named as serve's options), so a link sets every input; each
figure carries its full-precision value in ``data-value``. The serving view refuses what ``serve`` refuses, in its
words and its order (render/cli/serve_rules.py), its own inputs read under the command line's grammar and bounds.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

import sympy as sp

from llm_formulas.formulas.vocabulary.bounds import BOUND_UNITS, COUNT_BOUNDS, LAYER_COUNTS, MAX_HFU, MAX_LAYERS, MAX_SIZE
from llm_formulas.formulas.reports.serving_report import KV_DTYPES, WEIGHT_DTYPES
from llm_formulas.formulas.vocabulary.symbols import X, quantity, table_order
from llm_formulas.render.cli.inputs import counts
from llm_formulas.render.cli.estimate_command import DEFAULTS as ESTIMATE_DEFAULTS
from llm_formulas.render.documents.defaults import GPUS, LAYOUTS, MODELS, default, literal
from llm_formulas.render.printers.jscodegen import SETTINGS, javascript, report_javascript
from llm_formulas.render.printers.serving_js import serving_javascript
from llm_formulas.render.documents.reference import anchor, topic_of, topic_title
from llm_formulas.render.documents.templating import render

# Ψ from the model's shape: the general decoder count when it exists, else the classic GPT one
DERIVED = {"P": ("params.decoder.total", "params.total")}
# the inputs shown beside the verdict, by group; every other input sits in the folded catalogue
SIZING_GROUPS = (
    ("Model shape", ("h", "a", "g", "d_head", "d_ff", "l", "V", "E", "k")),
    ("GPU", ("X", "M_gpu", "W_mem", "W_link")),
    ("Layout", ("t", "p", "d", "b", "B", "v", "s")),
    ("Training", ("D", "U", "r")),
)
GPU_NAMES = ("X", "W_mem", "W_link", "M_gpu")  # the GPU's figures: page fields, filled by the GPU presets
FOLLOWS_LAYOUT = {"n": "t·p·d", "m": "B/(b·d)"}  # read-only: what the layout implies
# inputs typed in the unit a datasheet prints (312 TFLOP/s, 80 GB, 2039 GB/s), not in base units, when their default
# is at least one such unit; decimal, as the command line's GB (counts keep their k/M/B/T suffixes instead: D = 300B)
TYPED_IN = {"FLOP/second": ("TFLOP/s", 10**12), "byte": ("GB", 10**9), "byte/second": ("GB/s", 10**9)}


SUFFIXES = ((10**12, "T"), (10**9, "B"), (10**6, "M"))  # the page's and the command line's count suffixes


def typed_literal(value: object, unit: str, scale: int) -> str:
    """A default as a person types it: 312 (TFLOP/s) for 312e12 FLOP/s, 300B for 300e9 tokens; exact, or the
    plain decimal literal when no shorter form is exact (the page's ``typed`` does the same for presets)."""
    if scale != 1:
        return literal(sp.Rational(value) / scale)
    if unit in ("token", "parameter"):
        for size, suffix in SUFFIXES:
            if sp.Rational(value) >= size and sp.Rational(value) % size == 0:
                return f"{sp.Rational(value) / size}{suffix}"
    return literal(value)


@dataclass(frozen=True)
class InputField:
    name: str
    meaning: str
    unit: str
    value: str
    integer: bool
    maximum: str
    zero_allowed: bool
    typed_unit: str = ""  # the unit the field is typed in, when not the base unit
    scale: int = 1  # base units per typed unit
    minimum: str = ""
    count: bool = False  # a k/M/B/T suffix is allowed (render.cli.inputs.counts)


def input_field(symbol: sp.Symbol, value: str | None = None) -> InputField:
    """The field of ``symbol``: its assumptions and bounds as the page's checks read them, holding ``value`` (default:
    the documented default, typed in the field's unit)."""
    entry = quantity(symbol)
    typed_unit, scale = TYPED_IN.get(str(entry.unit), ("", 1))
    if value is not None or default(symbol).value < scale:  # a small size (q = 2 bytes per value) stays in its base unit
        typed_unit, scale = "", 1
    return InputField(
        entry.name,
        entry.meaning,
        str(entry.unit),
        typed_literal(default(symbol).value, str(entry.unit), scale) if value is None else value,
        entry.is_integer,
        "" if entry.maximum is None else str(entry.maximum),
        not symbol.is_positive,
        typed_unit,
        scale,
        "" if entry.minimum is None else str(entry.minimum),
        counts(entry),
    )


def page_bounds() -> dict:
    """formulas/vocabulary/bounds.py for the page's script: each count's bound and what it counts, the model's sizes and layer
    counts, the peak."""
    return {"counts": {name: [bound, BOUND_UNITS[name]] for name, bound in COUNT_BOUNDS.items()}, "size": MAX_SIZE,
            "layers": MAX_LAYERS, "layerCounts": list(LAYER_COUNTS), "hfu": MAX_HFU}


def report_inputs(names: tuple[str, ...]) -> list[str]:
    """The inputs the sizing report reads and the page validates: the traced report's, less the settings, with the
    global batch B for m = B/(b·d), which follows the layout."""
    return sorted((set(names) - set(SETTINGS) - set(FOLLOWS_LAYOUT)) | {"B"})


SERVING_DEFAULTS = {"b": "64", "s_in": "2000", "s_out": "500"}  # the serving view's batch and request (a chat turn)
SERVING_OPTIONS = (("b", "batch", "--batch"), ("s_in", "input", "--input"), ("s_out", "output", "--output"))
"""The serving view's own inputs: the symbol, its key in the page's URL, the option of ``serve`` that reads it (its
messages name the option, as the command line's do)."""
SERVING_CHOICES = (("weights", WEIGHT_DTYPES), ("kv", KV_DTYPES))  # the selects, by URL key (serve's options)
DTYPE_REFERENCE_GPU = "h100-sxm"  # a dtype's bytes and constants do not depend on the GPU: any with FP8 reads them


def serving_tables(serving_inputs: tuple[str, ...], gpu_names: tuple[str, ...]) -> dict:
    """What the serving view reads besides the page's fields, each from the code ``serve`` runs: per GPU preset the node
    its NVLink joins (formulas.data.gpus.NODE_SIZE), whether it has FP8 tensor cores, its rental price and board power, and
    per weight dtype the peak ``serve`` takes (formulas.reports.serving_report.base_values: FP16 where it differs from BF16,
    as on the RTX 4090; FP8 for FP8 weights) over the page's X (the BF16 peak); per dtype its bytes and the fitted
    constants (formulas/data/serving_calibration.py); per model preset its context window (max_position_embeddings); the
    words of each refusal (render/cli/serve_rules.py, formulas.reports.serving_report.NO_FP8); which page fields it reads."""
    from llm_formulas.formulas.data import gpus
    from llm_formulas.formulas.data.hf_config import context_window
    from llm_formulas.formulas.data.presets import names, preset
    from llm_formulas.formulas.reports.serving_report import FP8_ROLES, NO_FP8, ServeInputs, base_values, unsupported
    from llm_formulas.render.cli.serve_rules import TEMPLATES

    def number(value: object) -> float | None:
        return None if value is None else float(value)

    def peak(gpu: gpus.GPU, dtype: str) -> float | None:
        if unsupported(gpu, dtype, "bf16") is not None:
            return None
        return float(sp.Rational(base_values(ServeInputs({}, gpu, weights=dtype), 1, 1)["X"]) / gpu.values()[X])

    reference = gpus.PRESETS[DTYPE_REFERENCE_GPU]
    titles = {entry.name for entry in MODELS}
    return {
        "gpus": {gpu.name: {"node": gpus.NODE_SIZE[key], "fp8": gpu.fp8 is not None, "rent": number(gpu.rent),
                            "tdp": number(gpu.tdp), "peak": {dtype: peak(gpu, dtype) for dtype in WEIGHT_DTYPES}}
                 for key, gpu in gpus.PRESETS.items()},
        "weights": {dtype: {"bytes": float(base_values(ServeInputs({}, reference, weights=dtype), 1, 1)["q_w"]),
                            "constants": {name: float(value) for name, value in ServeInputs({}, reference, weights=dtype).fitted.values().items()}}
                    for dtype in WEIGHT_DTYPES},
        "kv": {dtype: float(base_values(ServeInputs({}, reference, kv=dtype), 1, 1)["q_kv"]) for dtype in KV_DTYPES},
        "models": {preset(name).title: {"window": context_window(preset(name).config)} for name in names()
                   if preset(name).title in titles},
        "templates": TEMPLATES | {"fp8": NO_FP8},
        "fp8Roles": FP8_ROLES,
        "reads": {"model": [name for name in serving_inputs if name in _model_names()],
                  "gpu": [name for name in gpu_names if name in serving_inputs]},
    }


PAGE_FRAMEWORKS = (("default", "Megatron Core"), ("megatron-lm-2021", "Megatron-LM 2021"), ("deepspeed-pipe", "DeepSpeed pipeline"))
"""The frameworks the page prices (``estimate --framework``): the default and those its layout presets ran on; each is
one traced report (seconds of the build each), so the list stays short."""


def framework_tables() -> dict:
    """Per page framework: what it holds in words (as ``estimate`` says it on its ``prices:`` line) and, for every
    combination of the page's settings, the feature it lacks in ``estimate``'s words (``Framework.lacks``), keyed
    ``zero|recompute|sp|v>1|p>1|t>1`` with 0/1 for the last four."""
    from itertools import product

    from llm_formulas.formulas.reports.estimate import RECOMPUTE_MODES
    from llm_formulas.formulas.data.frameworks import framework

    tables = {}
    for key, label in PAGE_FRAMEWORKS:
        chosen = framework(key)
        lacks = {}
        for zero, mode, sp_on, v, p, t in product(range(4), RECOMPUTE_MODES, (0, 1), (0, 1), (0, 1), (0, 1)):
            missing = chosen.lacks(zero, mode, bool(sp_on), 1 + v, 1 + p, 1 + t)
            if missing is not None:
                lacks[f"{zero}|{mode}|{sp_on}|{v}|{p}|{t}"] = missing
        tables[key] = {"label": label, "holds": chosen.holds.words(), "lacks": lacks}
    return tables


def framework_reports() -> str:
    """The sizing report traced once per page framework, ``estimate_report_0``, ``estimate_report_1``, …, and
    ``REPORTS``, the framework's key to its function."""
    sources = [report_javascript(_model_names(), GPU_NAMES, _framework(key), f"estimate_report_{i}").source
               for i, (key, _) in enumerate(PAGE_FRAMEWORKS)]
    table = ", ".join(f"{json.dumps(key)}: estimate_report_{i}" for i, (key, _) in enumerate(PAGE_FRAMEWORKS))
    return "".join(sources) + f"const REPORTS = {{{table}}};\n"


def _framework(key: str) -> object:
    from llm_formulas.formulas.data.frameworks import framework

    return framework(key)


def presets() -> dict:
    def table(entries):
        return {e.name: {"values": e.values, "source": e.source} | ({"settings": dict(e.settings)} if e.settings else {})
                for e in entries}

    return {"models": table(MODELS), "gpus": table(GPUS), "layouts": table(LAYOUTS)}


def _model_names() -> tuple[str, ...]:
    """Every architecture value some preset sets (sizes and switches): the report's model inputs."""
    from llm_formulas.formulas.reports.estimate import model_values
    from llm_formulas.formulas.data.presets import names, preset

    return tuple(sorted(set().union(*(model_values(preset(name).architecture.values) for name in names()))))


def calculator_page() -> tuple[str, tuple[str, ...]]:
    """The page's HTML and the formulas the JavaScript printer had to leave out."""
    script = javascript()
    symbols = sorted({s for arguments in script.inputs.values() for s in arguments}, key=table_order)
    fields = {quantity(symbol).name: input_field(symbol) for symbol in symbols}
    groups: dict[str, list[dict]] = {}
    for formula in script.formulas:
        row = {"id": formula.id, "meaning": formula.meaning, "unit": str(formula.unit), "anchor": anchor(formula.id)}
        groups.setdefault(topic_of(formula.id), []).append(row)
    present = {f.id for f in script.formulas}
    derived = {name: next(fid for fid in ids if fid in present) for name, ids in DERIVED.items() if present & set(ids)}
    report = report_javascript(_model_names(), GPU_NAMES)  # the inputs every framework's report reads
    serving = serving_javascript(_model_names())
    settings = set(SETTINGS)
    missing = [name for name in report.inputs if name not in fields and name not in settings]
    if missing:
        raise ValueError(f"the sizing report needs inputs the page lacks: {', '.join(missing)}")
    sizing = [(title, [fields[name] for name in names if name in fields]) for title, names in SIZING_GROUPS]
    shown = {field.name for _, group in sizing for field in group}
    html = render(
        "calculator.html",
        sizing=sizing,
        fields=[field for name, field in fields.items() if name not in shown],
        follows=FOLLOWS_LAYOUT,
        groups=[(topic_title(topic), formulas) for topic, formulas in groups.items()],
        formula_count=len(script.formulas),
        formulas_js=script.source,
        report_js=framework_reports(),
        frameworks=PAGE_FRAMEWORKS,
        frameworks_json=json.dumps(framework_tables(), sort_keys=True, ensure_ascii=False).replace("</", "<\\/"),
        presets=presets(),
        presets_json=json.dumps(presets(), sort_keys=True, ensure_ascii=False).replace("</", "<\\/"),
        derived_json=json.dumps(derived, sort_keys=True),
        derived=derived,
        bounds_json=json.dumps(page_bounds(), sort_keys=True),
        model_json=json.dumps([name for name in _model_names() if name in fields]),  # a value no field holds (a buffer's
        # switch no page formula reads) the page neither reads nor bounds
        report_inputs_json=json.dumps(report_inputs(report.inputs)),
        network_default=ESTIMATE_DEFAULTS["network"],
        serving_js=serving.source,
        serving_json=json.dumps(serving_tables(serving.inputs, GPU_NAMES), sort_keys=True, ensure_ascii=False).replace("</", "<\\/"),
        serving_fields=[(input_field(quantity(name).symbol, SERVING_DEFAULTS[name]), key, option) for name, key, option in SERVING_OPTIONS],
        serving_choices=SERVING_CHOICES,
    )
    return html, script.skipped
