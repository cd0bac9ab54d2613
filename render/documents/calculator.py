"""The sizing page: pick a model, a GPU and a layout; read whether it fits and how long it trains.

At the top, the report of ``llm-formulas estimate`` (formulas.estimate traced with symbols and printed
to JavaScript by ``render.printers.jscodegen.report_javascript``): a verdict with the memory per GPU, a
stacked bar of the memory (weights, gradients, optimizer states, activations; weights and KV cache when
decoding) against the GPU's memory, the step split into compute, bubble and exposed communication,
training time, GPU-hours, tokens/s per GPU, MFU and HFU, and the largest micro-batch that fits. Below it the
serving view (``llm-formulas serve``'s report traced, render/printers/serving_js.py): for a batch and a request of the
model on the GPU and the layout's t·p, the memory per GPU beside the KV wall (the largest batch, the longest context),
TTFT, TPOT, end-to-end latency, tokens/s, what bounds each phase, and $ and J per output token. A layout
that breaks one of estimate's rules says which (``LAYOUT_RULES`` in the page, tested against
``formulas.estimate.layout_violation``). Below, folded, every formula of the catalogue with one input per
symbol (symbol-table order, documented defaults). n = t·p·d and m = B/(b·d) follow the layout; Ψ may be
derived from the model's shape with ``params.decoder.total`` (or ``params.total``). The page reads and
writes its state in the URL (``?model=...&gpu=...&layout=...&name=value&zero=1&units=GiB``), so a link
sets every input; each figure carries its full-precision value in ``data-value``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

import sympy as sp

from llm_formulas.formulas.bounds import BOUND_UNITS, COUNT_BOUNDS, LAYER_COUNTS, MAX_HFU, MAX_LAYERS, MAX_SIZE
from llm_formulas.formulas.symbols import quantity, table_order
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


def page_bounds() -> dict:
    """formulas/bounds.py for the page's script: each count's bound and what it counts, the model's sizes and layer
    counts, the peak."""
    return {"counts": {name: [bound, BOUND_UNITS[name]] for name, bound in COUNT_BOUNDS.items()}, "size": MAX_SIZE,
            "layers": MAX_LAYERS, "layerCounts": list(LAYER_COUNTS), "hfu": MAX_HFU}


def report_inputs(names: tuple[str, ...]) -> list[str]:
    """The inputs the sizing report reads and the page validates: the traced report's, less the settings, with the
    global batch B for m = B/(b·d), which follows the layout."""
    return sorted((set(names) - set(SETTINGS) - set(FOLLOWS_LAYOUT)) | {"B"})


SERVING_DEFAULTS = {"b": "64", "s_in": "2000", "s_out": "500"}  # the serving view's batch and request (a chat turn)


def serving_tables() -> dict:
    """What the serving view reads besides the page's inputs: each GPU preset's FP8 peak (None: no FP8 tensor cores),
    rental price and board power; the dtypes' bytes and compute precision; the fitted constants
    (formulas/serving_calibration.py, render/printers/serving_js.py traces the report they enter)."""
    from llm_formulas.formulas import gpus
    from llm_formulas.formulas.serving_calibration import constants
    from llm_formulas.formulas.serving_report import KV_BYTES, WEIGHT_DTYPES, compute_precision, weight_bytes

    def number(value: object) -> float | None:
        return None if value is None else float(value)

    return {
        "gpus": {gpu.name: {"bf16": float(gpu.bf16), "fp8": number(gpu.fp8), "rent": number(gpu.rent), "tdp": number(gpu.tdp)}
                 for gpu in gpus.PRESETS.values()},
        "weights": {dtype: {"bytes": float(weight_bytes(dtype)), "precision": "8" if compute_precision(dtype) == "fp8" else "16"}
                    for dtype in WEIGHT_DTYPES},
        "kv": {dtype: float(size) for dtype, size in KV_BYTES.items()},
        "constants": {precision: {name: float(value) for name, value in constants(precision).values().items()}
                      for precision in ("16", "8")},
    }


def presets() -> dict:
    def table(entries):
        return {e.name: {"values": e.values, "source": e.source} for e in entries}

    return {"models": table(MODELS), "gpus": table(GPUS), "layouts": table(LAYOUTS)}


def _model_names() -> tuple[str, ...]:
    """Every architecture value some preset sets (sizes and switches): the report's model inputs."""
    from llm_formulas.formulas.estimate import model_values
    from llm_formulas.formulas.presets import names, preset

    return tuple(sorted(set().union(*(model_values(preset(name).architecture.values) for name in names()))))


def calculator_page() -> tuple[str, tuple[str, ...]]:
    """The page's HTML and the formulas the JavaScript printer had to leave out."""
    script = javascript()
    symbols = sorted({s for arguments in script.inputs.values() for s in arguments}, key=table_order)
    fields = {}
    for symbol in symbols:
        entry = quantity(symbol)
        typed_unit, scale = TYPED_IN.get(str(entry.unit), ("", 1))
        if default(symbol).value < scale:  # a small size (q = 2 bytes per value) stays in its base unit
            typed_unit, scale = "", 1
        fields[entry.name] = InputField(
            entry.name,
            entry.meaning,
            str(entry.unit),
            typed_literal(default(symbol).value, str(entry.unit), scale),
            entry.is_integer,
            "" if entry.maximum is None else str(entry.maximum),
            not symbol.is_positive,
            typed_unit,
            scale,
            "" if entry.minimum is None else str(entry.minimum),
            counts(entry),
        )
    groups: dict[str, list[dict]] = {}
    for formula in script.formulas:
        row = {"id": formula.id, "meaning": formula.meaning, "unit": str(formula.unit), "anchor": anchor(formula.id)}
        groups.setdefault(topic_of(formula.id), []).append(row)
    present = {f.id for f in script.formulas}
    derived = {name: next(fid for fid in ids if fid in present) for name, ids in DERIVED.items() if present & set(ids)}
    report = report_javascript(_model_names(), ("X", "W_mem", "W_link", "M_gpu"))
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
        report_js=report.source,
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
        serving_json=json.dumps(serving_tables(), sort_keys=True, ensure_ascii=False).replace("</", "<\\/"),
        serving_defaults=SERVING_DEFAULTS,
    )
    return html, script.skipped
