"""What a lesson notebook calls: derivations shown step by step with their proof verdicts,
real models' numbers put through a formula, the sources' figures beside ours, slips with
their refutation, pictures, and exercises checked by ``render.documents.exercises``.

A notebook starts with ``from llm_formulas.render.documents.lesson import *``. Every number a learner
reads goes through ``render.printers.human`` (GB, TFLOP, days, GiB where the source
speaks binary); each ``Value`` keeps its exact Rational, one attribute away
(``value.exact``). Equations are printed from the catalogue's own expressions
(``formulas.vocabulary.latex``, ``derivations.vocabulary.latex``), never typed into the notebook.
"""

from __future__ import annotations

from dataclasses import dataclass

import sympy as sp
from IPython.display import Image, Markdown, Math, display

from llm_formulas.derivations.reports.catalogue import all_derivations, derivation_of
from llm_formulas.derivations.vocabulary.engine import Derivation
from llm_formulas.derivations.vocabulary.steps import Outcome, Step
from llm_formulas.derivations.vocabulary.proof import valued
from llm_formulas.formulas.reports import estimate as _estimate
from llm_formulas.formulas.vocabulary.parts import parts_of
from llm_formulas.formulas.vocabulary.catalogue import get, lookup, within
from llm_formulas.formulas.vocabulary.examples import example as _example
from llm_formulas.formulas.data.gpus import gpu as _gpu
from llm_formulas.formulas.data.presets import preset
from llm_formulas.formulas.vocabulary.symbols import latex_names
from llm_formulas.formulas.vocabulary.units import Unit
from llm_formulas.render.documents import lesson_plots
from llm_formulas.render.documents.exercise_kit import rational
from llm_formulas.render.documents.exercises import check, exercise
from llm_formulas.render.printers.human import exact as _exact_text
from llm_formulas.render.printers.human import human
from llm_formulas.formulas.vocabulary.latex import formula_latex, latex
from llm_formulas.derivations.vocabulary.latex import step_latex, verdict_latex

SHARPNESS = 2  # the pictures' pixels a side per pixel shown in the notebook: sharp at a slide's width (retina=True)

__all__ = ["model", "gpu", "derive", "formula", "evaluate", "put", "source_figure", "refutation", "picture",
           "exercise", "check", "note", "slips", "show", "Value"]


@dataclass(frozen=True)
class Value:
    """An exact value with its unit; it prints in human units, ``.exact`` gives every digit."""

    value: sp.Rational
    unit: Unit
    binary: bool = False

    @property
    def exact(self) -> str:
        return f"{_exact_text(self.value)} {self.unit}"

    def __float__(self) -> float:
        return float(self.value)

    def __str__(self) -> str:
        return human(self.value, self.unit, binary=self.binary)

    __repr__ = __str__


def model(name: str) -> dict[str, int]:
    """A named model's sizes by symbol name (``h``, ``a``, ``g``, ``l``, ...) and its exact parameter count ``P``."""
    values = _estimate.model_values(preset(name).architecture.values)
    values["P"] = int(_estimate.exact("params.decoder.total", **values))
    return values


def gpu(key: str) -> dict[str, sp.Rational]:
    """A GPU preset's X (dense bf16 FLOP/s), W_mem, W_link (both directions) and M_gpu, by symbol name."""
    return _gpu(key).inputs()


def evaluate(formula_id: str, *, binary: bool = False, **values: object) -> Value:
    """The catalogue formula evaluated exactly at ``values`` (extra names are ignored)."""
    return Value(rational(_estimate.exact(formula_id, **values)), get(formula_id).unit, binary)


def _derivation(derivation_id: str) -> Derivation:
    """A derivation by its id (most share their formula's id; a few, such as a reduction proof, have their own)."""
    found = next((d for d in all_derivations() if d.id == derivation_id), None)
    if found is None:
        raise KeyError(f"no derivation {derivation_id!r}")
    return found


def slips(article: str) -> None:
    """Every step of the engine that refutes a figure of this article (000, 001, 002, 004), with its verdict."""
    found = [(d, i) for d in all_derivations() for i, step in enumerate(d.steps)
             if step.claim == "refutes" and (step.label.startswith(f"{article}:")
                                             or (step.source is not None and f"({article})" in str(step.source)))]
    if not found:
        display(Markdown("The engine refutes no figure of this source."))
    else:
        display(Markdown(f"The engine refutes **{len(found)}** figure{'s' if len(found) > 1 else ''} of this source:"))
    for derivation, index in found:
        refutation(derivation.id, derivation.steps[index].label)


def derive(derivation: str | Derivation, *, only: tuple[str, ...] = ()) -> None:
    """Show a derivation (the catalogue's, by id, or one of the reader's own), each step as an equation with its
    proof verdict beside it.

    ``only`` keeps the steps with these labels (a long derivation shown in part)."""
    derivation = derivation if isinstance(derivation, Derivation) else _derivation(derivation)
    with within(derivation.catalogue):  # a reader's own derivation reads their catalogue
        _show_derivation(derivation, only)


def _show_derivation(derivation: Derivation, only: tuple[str, ...]) -> None:
    outcomes = derivation.check()
    display(Markdown(f"**Derivation `{derivation.id}`: {derivation.title}** ({sum(o.ok for o in outcomes)} of "
                     f"{len(outcomes)} steps checked)"))
    kept = _with_pieces(derivation, [i for i, step in enumerate(derivation.steps) if step.label in only]) if only else None
    for index, (outcome, step) in enumerate(zip(outcomes, derivation.steps)):
        if kept is not None and index not in kept:
            continue
        display(Markdown(f"{outcome.index}. *{step.claim}*: {step.why}" + (f" (when {step.condition})" if step.condition else "")))
        display(Math(step_latex(step, lookup) + r"\qquad " + verdict_latex(outcome, step)))


def _with_pieces(derivation: Derivation, chosen: list[int]) -> set[int]:
    """The chosen steps and the named pieces they are shown with (derivations.vocabulary.step_pieces), theirs too."""
    kept, work = set(), list(chosen)
    while work:
        index = work.pop()
        if index not in kept:
            kept.add(index)
            work += derivation.steps[index].pieces
    return kept


def formula(formula_id: str) -> None:
    """Show a catalogue formula, its unit and the verdict of the derivation that establishes it."""
    entry = get(formula_id)
    derivation = derivation_of(formula_id)
    if derivation is None:
        verdict = r"\text{stated}"
    else:
        outcomes = derivation.check()
        ok = all(o.ok for o in outcomes)
        verdict = (r"\color{green}{\checkmark\ \text{" + f"derived in {len(outcomes)} checked steps" + "}}") if ok \
            else r"\color{red}{\text{derivation fails}}"
    display(Markdown(f"`{formula_id}`: {entry.meaning} [{entry.unit}]"))
    display(Math(formula_latex(entry) + r"\qquad " + verdict))


def _number_latex(value: sp.Rational) -> str:
    if value.is_Integer:
        return f"{int(value):,}".replace(",", "{,}")
    return sp.latex(value)


def put(formula_id: str, *, binary: bool = False, label: str = "", **values: object) -> Value:
    """Put numbers through a formula: the formula, the numbers in place of the symbols, the result in human units.

    Returns the exact ``Value`` (``.exact`` for every digit)."""
    entry = get(formula_id)
    result = evaluate(formula_id, binary=binary, **values)
    parts = _part_values(entry.composed, values)
    expr = entry.expr if parts is None else entry.composed  # a part taken at an expression is spelled out instead
    numbers = {}  # each input, and each named part, becomes its own placeholder symbol, printed as its number
    printed = dict(latex_names())
    given = {symbol: rational(values[symbol.name]) for symbol in expr.free_symbols if symbol.name in values}
    for symbol, number in {**given, **(parts or {})}.items():
        placeholder = sp.Symbol(f"value_{symbol.name}")
        numbers[symbol] = placeholder
        printed[placeholder] = _number_latex(number) if number.is_Integer else r"\left(" + _number_latex(number) + r"\right)"
    lhs = entry.symbol_latex or r"\mathrm{" + formula_id.replace("_", r"\_") + "}"
    substituted = sp.latex(expr.xreplace(numbers), symbol_names=printed, mul_symbol="dot")
    shown = human(result.value, result.unit, binary=binary).replace(" ", r"\ ")
    display(Markdown(f"{label or entry.meaning}:"))
    display(Math(rf"{lhs} = {latex(expr)} = {substituted} \approx \mathbf{{{shown}}}"))
    return result


def _part_values(composed: sp.Basic, values: dict[str, object]) -> dict[sp.Symbol, sp.Rational] | None:
    """Each part a composed formula names, evaluated at ``values`` (a part taken at given values, at those); None
    when a part is taken at an expression, which has no number of its own."""
    found = {}
    for part in parts_of(composed):
        at = {symbol.name: value for symbol, value in getattr(part, "values", ())}
        if not all(value.is_number for value in at.values()):
            return None
        found[part] = rational(_estimate.exact(part.formula.id, **{**values, **at}))
    return found


def source_figure(case: str, *, binary: bool | None = None) -> None:
    """A worked example of the sources: the source's figure beside the exact value, and their ratio."""
    case_ = _example(case)
    entry = get(case_.formula_id)
    exact_value = rational(case_.exact())
    binary = "GiB" in case_.scale_name or "Ti" in case_.scale_name if binary is None else binary
    ours = human(exact_value, entry.unit, binary=binary)
    lines = [f"**{case}**: {case_.title}.", "", f"- the source prints: {case_.claimed_text}",
             f"- the catalogue's `{entry.id}` at the source's inputs: **{ours}**"]
    if case_.claimed is not None:
        ratio = float(case_.claimed / exact_value)
        agreement = "agrees to 3 digits" if abs(ratio - 1) < 5e-3 else f"source / exact = {ratio:.4g}" + (
            "" if case_.slip else " (another accounting: see below)" if case_.convention else " (the source rounds)")
        lines.append(f"- {agreement}")
    if case_.slip:
        lines.append(f"- slip: {case_.slip}")
    if case_.convention:
        lines.append(f"- not a slip, a convention: {case_.convention}")
    display(Markdown("\n".join(lines)))


def refutation(derivation_id: str, label: str) -> None:
    """Show a ``refutes`` step: the source's figure, the correct one, and the engine's verdict."""
    derivation = _derivation(derivation_id)
    outcomes = derivation.check()
    index = next(i for i, step in enumerate(derivation.steps) if step.label == label and step.claim == "refutes")
    step, outcome = derivation.steps[index], outcomes[index]
    display(Markdown(f"*refutes* ({step.label}): {step.why}"))
    claimed, correct = valued(step.expr), valued(step.correct)
    if step.unit and claimed.is_Rational and correct.is_Rational:  # two figures: in human units, exact on request
        figures = [human(value, step.unit, binary=step.binary) for value in (claimed, correct)]
        verdict = "slip refuted" if outcome.ok else "NOT REFUTED"
        display(Markdown(f"the source: **{figures[0]}**; correct: **{figures[1]}**; source / correct = "
                         f"{float(claimed / correct):.4g} ({verdict}, exactly {_exact_text(claimed)} against {_exact_text(correct)} {step.unit})"))
    else:
        display(Math(step_latex(step, lookup) + r"\qquad " + verdict_latex(outcome, step)))


def picture(name: str, **options: object) -> None:
    """Draw one of the lesson pictures (``render.documents.lesson_plots``) and show it."""
    display(Image(data=lesson_plots.png(name, SHARPNESS, **options), retina=True))


def show(figure) -> None:
    """Show a matplotlib figure drawn in a cell, as a PNG with fixed metadata (the same figure, the same bytes)."""
    import matplotlib.pyplot as plt

    display(Image(data=lesson_plots.figure_png(figure, SHARPNESS), retina=True))
    plt.close(figure)


def note(text: str) -> None:
    """A computed sentence (numbers already in human units)."""
    display(Markdown(text))
