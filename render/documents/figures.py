"""The numbers of a lesson's prose, rendered from the values the lesson computes: never typed.

A lesson names its one model and its one set of hardware figures at its top, computes every
figure its prose quotes, and writes the prose as a template whose ``{{name}}`` slots the
figures fill::

    F = Figures("memory", model="llama2-70b", gpu="a100-80gb", minutes=45, t=8, p=8, b=1, s=4096)
    F.value("states", "memory.model_states")              # a catalogue formula at the model's values
    F.value("shard", "memory.zero", d=1)                   # ... with the lesson's inputs (t, p) and more
    F.number("fits_full", largest_micro_batch(...))        # any number the lesson computes
    F.example("S7")                                        # a source's printed figure, in its words

    CELLS = [markdown(F.text("Ψ = {{P}}: the states take {{states}}, {{shard}} per GPU ..."))]

Figures the object already holds: the model's sizes by symbol name (``{{h}}``, ``{{l}}``,
``{{P}}``) and its title (``{{model}}``), the GPU's (``{{X}}``, ``{{W_mem}}``, ``{{W_link}}``,
``{{M_gpu}}``, ``{{gpu}}``), the lesson's inputs (``{{t}}``), and its duration (``{{minutes}}``).
A figure prints as the lesson helpers print values (``render.printers.human``: ``1.1 TB``,
``17.5 ms``, three significant digits), or in a named display unit, as a percentage, or with
every digit. ``F["states"]`` is the exact value, for computing further figures; code cells can
take their inputs from the same object: ``code(F.code("layout = dict(t={{t}}, p={{p}})"))`` writes each
value as Python reads it (``{{name:text}}`` writes its printed text, for a string the cell shows).

``F.text`` returns the rendered string, which remembers its template and its figures
(``.template``, ``.figures``). tests/test_lesson_figures.py reads them for every lesson: no
quantity is typed in prose (a number followed by a unit, or after ``=``, ``≈``, ``≤``, ``≥``,
outside a slot), every slot names a figure, every printed figure read back equals the value
it names to the digits it prints, every figure is quoted, and every ``model(...)``/``gpu(...)``
of the code cells is the one named at the top (or declared beside it, ``compare_models``).
A lesson adopts it by building its Markdown cells with ``F.text``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from fractions import Fraction

import sympy as sp

from llm_formulas.formulas.reports import estimate
from llm_formulas.formulas.vocabulary.catalogue import get
from llm_formulas.formulas.vocabulary.examples import example as worked_example
from llm_formulas.formulas.data.gpus import gpu as gpu_preset
from llm_formulas.formulas.data.layouts import LAYOUTS
from llm_formulas.formulas.data.presets import preset
from llm_formulas.formulas.vocabulary.symbols import switch_defaults
from llm_formulas.formulas.vocabulary.units import as_unit
from llm_formulas.render.documents.exercise_kit import model as model_sizes
from llm_formulas.render.documents.exercise_kit import rational as exact_rational
from llm_formulas.render.printers.human import convert, human, significant

PUBLISHED_UNITS = {"%": "1", "days": "second", "tCO2eq": "gram", "$M": "dollar", "ZFLOP": "FLOP", "FLOP": "FLOP",
                   "TiB": "byte", "GiB": "byte", "PFLOP/s": "FLOP/second", "billion": "parameter"}
SLOT = re.compile(r"\{\{\s*([A-Za-z_][A-Za-z0-9_.]*)(:text)?\s*\}\}")


@dataclass(frozen=True)
class Figure:
    """One figure of a lesson: its exact value and unit, and the text the prose prints."""

    name: str
    value: Fraction | None  # None for a source's words (an example's printed figure) and for names
    unit: str  # the value's unit ("byte", "1", "FLOP/second"); "" for words
    shown: str
    digits: int | None = 3  # significant digits printed; None: every digit


def as_fraction(value: object) -> Fraction:
    if isinstance(value, Fraction):
        return value
    if isinstance(value, (int, str)):  # a string is read exactly: "3.1428e23", "7/20"
        return Fraction(value)
    if type(value).__name__ == "ndarray" and value.shape == ():  # a 0-d array of the numeric path (numpy.where)
        value = value.item()
    if isinstance(value, float) or type(value).__name__ in ("float64", "float32"):  # a float of the numeric path
        return Fraction(repr(float(value)))
    rational = exact_rational(value)
    if not rational.is_Rational:  # an irrational value (Young's square root): its float, to the digits the prose prints
        return Fraction(repr(float(rational)))
    return Fraction(int(rational.p), int(rational.q))


def _integer_text(value: Fraction) -> str:
    """An input such as s = 4096 or V = 250880 as a person writes it: thousands separated from 10⁵ up."""
    number = int(value)
    return f"{number:,}" if abs(number) >= 100_000 else str(number)


def _rational(value: object) -> sp.Rational:
    exact = as_fraction(value)
    return sp.Rational(exact.numerator, exact.denominator)


class Rendered(str):
    """A rendered template: the text, with the template and the figures it came from."""

    template: str
    figures: "Figures"

    def __new__(cls, text: str, template: str, figures: "Figures") -> "Rendered":
        rendered = super().__new__(cls, text)
        rendered.template = template
        rendered.figures = figures
        return rendered


class Figures:
    """A lesson's figures: its model, its GPU, its inputs and everything it computes, by name."""

    def __init__(self, lesson: str, *, model: str | None = None, gpu: str | None = None, minutes: int,
                 layout: str | None = None, compare_models: tuple[str, ...] = (), compare_gpus: tuple[str, ...] = (),
                 **inputs: object) -> None:
        self.lesson = lesson
        self.model_key, self.gpu_key = model, gpu
        self.compare_models, self.compare_gpus = compare_models, compare_gpus
        self.figures: dict[str, Figure] = {}
        self.values: dict[str, object] = {}  # what formulas are evaluated at: the model's, the GPU's, the inputs
        self.quoted: set[str] = set()
        self._add(Figure("minutes", Fraction(60 * minutes), "second", f"{minutes} minutes", None))
        if model is not None:
            sizes = model_sizes(model)
            self.name("model", preset(model).title)
            for symbol, value in sizes.items():
                self._input(symbol, value, "parameter" if symbol == "P" else "1")
        if gpu is not None:
            entry = gpu_preset(gpu)
            self.name("gpu", entry.name)
            for symbol, value in entry.inputs().items():
                self._input(symbol, value, str(get_unit(symbol)))
        if layout is not None:  # a published layout (formulas.data.layouts): t, p, d, n, b, B and m = B/(b·d)
            entry = LAYOUTS[layout]
            shape = {"t": entry.tp, "p": entry.pp, "d": entry.dp, "n": entry.tp * entry.pp * entry.dp, "b": entry.micro_batch,
                     "B": entry.global_batch, "m": entry.global_batch // (entry.micro_batch * entry.dp)}
            inputs = shape | inputs
        for symbol, value in inputs.items():
            self._input(symbol, value, str(get_unit(symbol)))

    # --- defining figures ---------------------------------------------------------------------------

    def _add(self, figure: Figure) -> Fraction | None:
        if figure.name in self.figures:
            raise ValueError(f"lesson {self.lesson}: figure {figure.name!r} defined twice")
        self.figures[figure.name] = figure
        return figure.value

    def _input(self, symbol: str, value: object, unit: str) -> None:
        exact = as_fraction(value)
        self.values[symbol] = sp.Rational(exact.numerator, exact.denominator)
        if unit in ("1", "parameter", "sequence", "token", "layer", "GPU") and exact.denominator == 1:
            shown = (f"{int(exact):,}" if unit == "GPU" else _integer_text(exact)) if unit != "parameter" else human(exact, unit)
            self._add(Figure(symbol, exact, unit, shown, None if unit != "parameter" else 3))
        else:
            self._add(Figure(symbol, exact, unit, _show(exact, unit), 3))

    def model_values(self, key: str) -> dict[str, object]:
        """The sizes of a model the lesson compares with its own (named in ``compare_models``), with its ``P``."""
        if key not in self.compare_models and key != self.model_key:
            raise KeyError(f"lesson {self.lesson}: {key!r} is not among the models it names ({self.compare_models})")
        return model_sizes(key)

    def input(self, symbol: str, value: object) -> Fraction:
        """One more input the lesson derives from the others (m = B/(b·d)): a figure, and a value every formula sees."""
        self._input(symbol, value, str(get_unit(symbol)))
        return self[symbol]

    def literal(self, name: str, value: int) -> int:
        """A whole number as code writes it (``2000000000000``), for a code cell's inputs."""
        self._add(Figure(name, Fraction(value), "1", str(int(value)), None))
        return value

    def name(self, name: str, text: str) -> None:
        """A name the prose quotes (the model's title, the GPU's): words, not a number."""
        self._add(Figure(name, None, "", text, None))

    def compute(self, formula_id: str, *, times: object = 1, **values: object) -> Fraction:
        """A catalogue formula at the lesson's values and ``values``, exactly: a step towards a figure, not one."""
        exact = {name: _rational(value) for name, value in values.items()}
        classic = {switch.name: value for switch, value in switch_defaults().items()}  # a switch the lesson leaves unset
        return as_fraction(estimate.exact(formula_id, **(classic | self.values | exact)) * _rational(times))

    def value(self, name: str, formula_id: str, *, display: str = "", binary: bool = False, digits: int = 3,
              times: object = 1, percent: bool = False, **values: object) -> Fraction:
        """A catalogue formula at the lesson's values and ``values`` (times ``times``), exactly; printed in human units,
        in the display unit ``display``, or as a percentage."""
        exact = self.compute(formula_id, times=times, **values)
        return self.number(name, exact, unit=str(get(formula_id).unit), display=display, binary=binary, digits=digits,
                           percent=percent)

    def number(self, name: str, value: object, *, unit: str = "1", display: str = "", binary: bool = False,
               digits: int | None = 3, percent: bool = False) -> Fraction:
        """A number the lesson computed (in ``unit``), printed to ``digits`` significant digits (None: every digit)."""
        exact = as_fraction(value)
        if percent:
            shown = f"{significant(float(exact * 100), digits or 3)} %"
        elif display:
            shown = f"{_digits(float(convert(exact, unit, display)), digits)} {display}"
        elif digits is None:
            shown = f"{exact.numerator:,}" if exact.denominator == 1 else str(float(exact))
        else:
            shown = _show(exact, unit, binary, digits)
        return self._add(Figure(name, exact, unit, shown, digits))

    def example(self, case: str, name: str = "") -> None:
        """A source's printed figure, in the source's own words (``formulas.vocabulary.examples``): ``{{S7}}``."""
        self._add(Figure(name or case, None, "", worked_example(case).claimed_text, None))

    def claimed(self, name: str, case: str, percent: bool = False) -> Fraction:
        """A source's printed figure as a number, in the source's unit and digits (``34.8 PFLOP``, ``t ≤ 2.4``'s 2.4;
        ``percent``: a fraction the source printed as a percentage, ``40.5 %``)."""
        entry = worked_example(case)
        if entry.claimed is None:
            raise ValueError(f"case {case} prints no number")
        value = as_fraction(entry.claimed)
        if percent:
            text = f"{float(value * 100):g}"
            return self._add(Figure(name, value, "1", f"{text} %", len(text.replace(".", "").lstrip("0"))))
        scaled = f"{float(value / as_fraction(entry.scale)):g}"
        unit = str(get(entry.formula_id).unit)
        shown = f"{scaled} {entry.scale_name}".strip() if entry.scale_name or as_unit(unit).is_dimensionless else human(value, unit)
        digits = len(scaled.replace(".", "").replace("-", "").lstrip("0").rstrip("0")) if "." not in scaled else len(
            scaled.replace(".", "").lstrip("0"))
        return self._add(Figure(name, value, unit, shown, max(digits, 1)))

    def case(self, name: str, case: str, *, display: str = "", binary: bool = False, digits: int = 3) -> Fraction:
        """A source's worked example evaluated exactly: the catalogue's figure at the source's inputs."""
        entry = worked_example(case)
        return self.number(name, as_fraction(entry.exact()), unit=str(get(entry.formula_id).unit), display=display,
                           binary=binary, digits=digits)

    def published(self, name: str, row_id: str, measured: str = "", input: str = "") -> Fraction:
        """A paper's printed figure (``formulas/data/published``: its digits and unit, ``52 %``), or an input of that row:
        ``measured`` one the paper measured and printed (Megatron's 163 TFLOP/s per GPU), ``input`` one it states."""
        from llm_formulas.formulas.data.published import published_rows

        row = next(r for r in published_rows() if r.id == row_id)
        if measured or input:
            pairs = [(m.name, m.value) for m in row.measured] if measured else list(row.inputs)
            value = as_fraction(dict(pairs)[measured or input])
            if name == (measured or input):  # named after its symbol: an input every formula of the lesson sees
                return self.input(name, value)
            return self.number(name, value, unit=str(get_unit(measured or input)))
        value = as_fraction(sp.Rational(row.printed_text) * row.scale)
        base = PUBLISHED_UNITS.get(row.unit, row.unit)
        shown = f"${row.printed_text}M" if row.unit == "$M" else f"{row.printed_text} {row.unit}"
        digits = len(row.printed_text.replace(".", "").lstrip("0")) or 1
        return self._add(Figure(name, value, base, shown, digits))

    def source_input(self, name: str, case: str, symbol: str) -> Fraction:
        """An input a source's worked example used (``D`` of S10, ``X`` of S11c), as that source wrote it."""
        value = dict(worked_example(case).inputs)[symbol]
        if name == symbol:  # named after its symbol: an input every formula of the lesson sees
            return self.input(name, value)
        return self.number(name, value, unit=str(get_unit(symbol)))

    def refuted(self, name: str, derivation_id: str, label: str, *, display: str = "", digits: int = 3) -> None:
        """A figure a source printed and the engine refutes (``name``), and the correct one (``name_correct``)."""
        from llm_formulas.derivations.reports.catalogue import all_derivations
        from llm_formulas.derivations.vocabulary.proof import valued

        derivation = next(d for d in all_derivations() if d.id == derivation_id)
        step = next(step for step in derivation.steps if step.claim == "refutes" and step.label == label)
        for suffix, expr in (("", step.expr), ("_correct", step.correct)):
            self.number(name + suffix, as_fraction(valued(expr)), unit=step.unit or "1", display=display, binary=step.binary,
                        digits=digits)

    def words(self, name: str, text: str) -> None:
        """A computed verdict in words (``fits``/``does not fit``) the prose quotes."""
        self._add(Figure(name, None, "", text, None))

    def __getitem__(self, name: str) -> Fraction:
        value = self.figures[name].value
        if value is None:
            raise KeyError(f"figure {name!r} is words, not a number")
        return value

    def __contains__(self, name: str) -> bool:
        return name in self.figures

    # --- rendering ----------------------------------------------------------------------------------

    def text(self, template: str) -> Rendered:
        """The template with every ``{{name}}`` replaced by its figure's printed text."""

        def fill(match: re.Match) -> str:
            name = match.group(1)
            if name not in self.figures:
                raise KeyError(f"lesson {self.lesson}: the prose quotes {{{{{name}}}}}, which no figure defines")
            self.quoted.add(name)
            return self.figures[name].shown

        return Rendered(SLOT.sub(fill, template), template, self)

    def code(self, template: str) -> Rendered:
        """A code cell's template: each ``{{name}}`` becomes the figure's exact value as Python reads it (``8``,
        ``"2/5"``), ``{{name:text}}`` its printed text (for a string the cell prints); names and words as they are."""

        def fill(match: re.Match) -> str:
            name, as_text = match.group(1), match.group(2)
            if name not in self.figures:
                raise KeyError(f"lesson {self.lesson}: a code cell quotes {{{{{name}}}}}, which no figure defines")
            self.quoted.add(name)
            figure = self.figures[name]
            if as_text or figure.value is None:
                return figure.shown
            value = figure.value
            return str(value.numerator) if value.denominator == 1 else f'"{value.numerator}/{value.denominator}"'

        return Rendered(SLOT.sub(fill, template), template, self)


def get_unit(symbol: str):
    from llm_formulas.formulas.vocabulary.symbols import quantity

    return quantity(symbol).unit


def _digits(x: float, digits: int | None) -> str:
    return significant(x, digits) if digits else f"{x:,}"


COUNTS = (("T", 10**12), ("B", 10**9), ("M", 10**6), ("k", 10**3))


def _show(value: Fraction, unit: str, binary: bool = False, digits: int = 3) -> str:
    """A value in human units (three digits), a count (``68.98B parameters``) or a plain number to ``digits`` digits;
    a whole number below a million with every digit."""
    parsed = as_unit(unit)
    if parsed.is_dimensionless:
        if value.denominator == 1 and abs(value) < 10**6:
            return _integer_text(value)
        return significant(float(value), digits)
    if unit == "joule/second":
        return f"{significant(float(value), digits)} W"
    if unit == "token/second":
        return f"{significant(float(value), digits)} tokens/s"
    if parsed.is_single_base and parsed.exponents[0][0] in ("parameter", "token") and digits != 3:
        name = parsed.exponents[0][0] + "s"
        suffix, size = next(((s, n) for s, n in COUNTS if abs(value) >= n), ("", 1))
        return f"{significant(float(value / size), digits)}{suffix} {name}"
    return human(value, unit, binary=binary)
