"""What the sizing page must show for a URL state, by the command line's own rules (not the page's copy of them).

``expected(query)`` reads the query as the page does (URLSearchParams: the first value of each key), starts from
the page's fields as the template wrote them, the chosen presets and the URL's values, and applies estimate's
rules in the order the page reports them: a setting no option holds, an input outside the number grammar
(render.cli.numbers), its symbol's assumptions (render.cli.inputs.check_value) or its bound (formulas.vocabulary.bounds),
the network; the model's rules (formulas.vocabulary.bounds.model_violation); the global batch a multiple of b·d, the
GPU count's bound, formulas.reports.estimate.layout_violation; then the report itself through the generated NumPy code
(float64, as the page's JavaScript): a figure beyond floating-point range, an HFU above the peak, and whether
it fits. Where float64 arithmetic in another order could tip the answer (a total within 10⁻⁹ of the memory,
figures near overflow, an HFU within 10⁻¹² of 1), ``either`` says so.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from functools import cache
from html.parser import HTMLParser
from urllib.parse import parse_qsl

import numpy as np

from build_session import calculator

from llm_formulas.render.documents.calculator import PAGE_FRAMEWORKS

SELECTS = {"framework": tuple(key for key, _ in PAGE_FRAMEWORKS), "zero": ("0", "1", "2", "3"), "recompute": ("none", "selective", "full"), "units": ("GB", "GiB")}
FLAGS = ("sp", "flash", "derive-P")
LAYOUT_NAMES = ("t", "p", "d", "b", "B", "v", "s")
GPU_NAMES = ("X", "M_gpu", "W_mem", "W_link")


@dataclass(frozen=True)
class Expected:
    verdict: str  # "fits", "does not fit", "invalid input", "invalid layout"
    total: float | None = None  # memory per GPU when the report is shown
    either: tuple[str, ...] = ()  # other verdicts float64 in another order may give


class _Fields(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.fields: dict[str, dict[str, str]] = {}

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "input" and "data-symbol" in attrs:
            self.fields.setdefault(attrs["data-symbol"], attrs)


@cache
def page_fields() -> dict[str, dict[str, str]]:
    """Each input field of the built page: its typed value as the template wrote it and its scale (GB, TFLOP/s)."""
    parser = _Fields()
    parser.feed(calculator().read_text())
    return parser.fields


@cache
def report_inputs() -> tuple[str, ...]:
    """The inputs the page says its report reads (``REPORT_INPUTS``; tests/test_sizing_page_inputs.py checks them
    against the traced report's own)."""
    return _page_list("REPORT_INPUTS")


@cache
def _presets() -> dict:
    from llm_formulas.render.documents.calculator import presets

    return presets()


@cache
def model_names() -> tuple[str, ...]:
    """The architecture values the page says it reads and bounds (``MODEL``: those of the presets' values it has a
    field for)."""
    return _page_list("MODEL")


def _page_list(constant: str) -> tuple[str, ...]:
    """A list of names the page's script declares as ``const NAME = [...]``."""
    import json
    import re

    page = calculator().read_text()
    return tuple(json.loads(re.search(rf"const {constant} = (\[.*?\]);", page)[1]))


def _typed(value: str, scale: int) -> Fraction:
    return Fraction(value) / scale


def _first(query: str) -> dict[str, str]:
    given: dict[str, str] = {}
    for key, value in parse_qsl(query, keep_blank_values=True):
        given.setdefault(key, value)
    return given


def _value(name: str, text: str, scale: int) -> Fraction:
    """The exact value the command line reads for ``name`` typed as ``text`` in the field's unit; InputError if none."""
    from llm_formulas.formulas.vocabulary.bounds import bound_violation
    from llm_formulas.formulas.vocabulary.symbols import quantity
    from llm_formulas.render.cli.inputs import check_value, counts
    from llm_formulas.render.cli.numbers import InputError, parse_fraction
    import sympy as sp

    entry = quantity(name)
    typed = parse_fraction(text, name, suffix_allowed=counts(entry)) * scale
    check_value(entry, sp.Rational(typed.numerator, typed.denominator))
    beyond = bound_violation(name, int(typed)) if typed.denominator == 1 else None
    if beyond is not None:
        raise InputError(beyond)
    return typed


def expected(query: str) -> Expected:
    from llm_formulas.formulas.vocabulary.bounds import bound_violation, model_violation
    from llm_formulas.formulas.reports.estimate import RECOMPUTE_MODES, Layout, layout_violation
    from llm_formulas.formulas.data.frameworks import framework
    from llm_formulas.render.cli.numbers import InputError, parse_fraction

    given = _first(query)
    presets = _presets()
    for kind in ("model", "gpu", "layout"):
        if kind in given and given[kind] not in presets[kind + "s"]:
            return Expected("invalid input")
    for key, options in SELECTS.items():
        if key in given and given[key] not in options:
            return Expected("invalid input")
    for key in FLAGS:
        if key in given and given[key] not in ("0", "1"):
            return Expected("invalid input")
    fields = page_fields()
    texts = {name: attrs["value"] for name, attrs in fields.items()}
    scales = {name: int(attrs.get("data-scale") or 1) for name, attrs in fields.items()}
    for kind in ("model", "gpu", "layout"):
        chosen = presets[kind + "s"][given.get(kind, next(iter(presets[kind + "s"])))]
        for name, value in chosen["values"].items():
            if name in texts:
                texts[name] = str(_typed(value, scales[name]))  # exactly the preset's value in the field's unit
    texts |= {name: value for name, value in given.items() if name in texts and name not in ("n", "m")}
    values: dict[str, Fraction] = {}
    for name in model_names():  # the model's values that are numbers at all (the rules below see those)
        try:
            values[name] = _value(name, texts[name], scales[name])
        except InputError:
            pass
    try:
        for name in report_inputs():  # every one the report reads must be
            values[name] = _value(name, texts[name], scales[name])
        network = parse_fraction(given.get("network", "25"), "network")
    except InputError:
        return Expected("invalid input")
    if network <= 0:
        return Expected("invalid input")
    model = {name: int(values[name]) for name in model_names() if name in values}
    if model_violation(model) is not None:
        return Expected("invalid input")
    t, p, d, b, B, v, s = (int(values[name]) for name in LAYOUT_NAMES)
    if B % (b * d):
        return Expected("invalid layout")
    if bound_violation("n", t * p * d) is not None:
        return Expected("invalid layout")
    # a setting the URL leaves out is the layout preset's (the run's framework, ZeRO and recompute), else the page's
    chosen_layout = presets["layouts"][given.get("layout", next(iter(presets["layouts"])))]
    settings = {"framework": "default", "zero": "0", "recompute": "selective"} | chosen_layout.get("settings", {})
    zero, recompute = int(given.get("zero", settings["zero"])), given.get("recompute", settings["recompute"])
    framework_key = given.get("framework", settings["framework"])
    parallel, flash = given.get("sp") == "1", given.get("flash") == "1"
    layout = Layout(n=t * p * d, t=t, p=p, d=d, b=b, m=B // (b * d), s=s, v=v, zero=zero, recompute=recompute,
                    sequence_parallel=parallel, attention="flash" if flash else "eager")
    if layout_violation(layout, model) is not None:
        return Expected("invalid layout")
    chosen = framework(framework_key)
    if chosen.lacks(zero, recompute, parallel, v, p, t) is not None:
        return Expected("invalid layout")
    return _report(layout, model, values, float(network) * 1e9, RECOMPUTE_MODES.index(recompute), chosen)


def _report(layout, model: dict[str, int], values: dict[str, Fraction], network: float, mode: int, chosen=None) -> Expected:
    """The report in float64 through the generated NumPy code, judged as the page judges its own."""
    from dataclasses import replace

    from llm_formulas.formulas.reports.estimate import Inputs, estimate
    from llm_formulas.render.numeric.evaluator import NUMPY_OPS, numeric, numeric_inputs

    inputs = Inputs(model=model, gpu={name: float(values[name]) for name in GPU_NAMES}, network=network,
                    tokens=float(values["D"]), utilization=float(values["U"]), overlap=float(values["r"]), framework=chosen)
    arrays = replace(layout, zero=np.array([layout.zero]), recompute=np.array([mode]),
                     sequence_parallel=np.array([layout.sequence_parallel]),
                     attention=np.array([1 if layout.attention == "flash" else 0]))
    with np.errstate(all="ignore"):
        report = estimate(arrays, numeric_inputs(inputs), numeric, NUMPY_OPS)
    numbers = [float(np.ravel(x)[0]) for x in _numbers(report)]
    largest = max(abs(x) for x in numbers if np.isfinite(x)) if any(np.isfinite(numbers)) else np.inf
    finite = all(np.isfinite(numbers))
    total, capacity = float(np.ravel(report["memory"]["total"])[0]), float(values["M_gpu"])
    fits = "fits" if total <= capacity else "does not fit"
    if not finite or largest > 1e290:  # near or beyond overflow: the page's order of operations may tip it
        return Expected("invalid input", either=("fits", "does not fit")) if finite else Expected("invalid input", either=(fits,))
    hfu = float(np.ravel(report["time"]["hfu"])[0])
    tie = abs(total - capacity) <= 1e-9 * capacity
    either = (("does not fit" if fits == "fits" else "fits"),) if tie else ()
    if hfu > 1 + 1e-12:
        return Expected("invalid input")
    if hfu > 1 - 1e-12:
        return Expected(fits, total, either + ("invalid input",))
    return Expected(fits, total, either)


def _numbers(section: dict):
    for value in section.values():
        if isinstance(value, dict):
            yield from _numbers(value)
        elif not isinstance(value, (bool, str)) and np.issubdtype(np.asarray(value).dtype, np.number):
            yield value
