"""The page model of the formula reference: what every output format shows.

``build_reference()`` reads the catalogue, the derivations (with their check
outcomes), the symbol table and the worked examples, and returns plain
dataclasses holding, for each formula, its LaTeX and MathML (printed from the
same expression), its symbols, derivation steps, conditions, sources, a worked
example (the articles' when there is one, else the documented defaults of
``render.documents.defaults``) and the errata where a source slipped. Topics are the
first component of the ids, in catalogue order; the templates only lay out.
"""

from __future__ import annotations

from dataclasses import dataclass

import sympy as sp

from derivations.catalogue import all_derivations, check_all, derivation_of
from derivations.engine import Outcome, Step
from formulas.catalogue import Formula, all_formulas, get
from formulas.examples import WorkedExample, all_examples, examples_for
from formulas.symbols import Quantity, all_quantities, quantity
from render.printers import mathml as mm
from render.documents.defaults import GPUS, LAYOUTS, MODELS, default
from render.printers.latex import formula_latex, label_latex, step_latex
from derivations.proof import valued

TOPIC_TITLES = {
    "params": "Parameters",
    "flops": "FLOPs",
    "memory": "Memory",
    "comms": "Communication",
    "cluster": "Cluster sizing",
    "inference": "Inference",
    "architecture": "Architectures",
}

ARTICLES = {
    "000": "Bilibili infra team: what hardware large models need",
    "001": "Li Bojie: why A100 beats 4090 for training",
    "002": "A short training-resource estimate",
    "004": "Textbook slides (CAS, chapter 9): BLOOM-176B",
}


def topic_of(formula_id: str) -> str:
    return formula_id.split(".", 1)[0]


def topic_title(topic: str) -> str:
    return TOPIC_TITLES.get(topic, topic.replace("_", " ").capitalize())


def anchor(formula_id: str) -> str:
    return formula_id.replace(".", "-").replace("_", "-")


def number_text(value: sp.Basic) -> str:
    """An exact value for people: grouped digits, and a short scientific form when large."""
    if value.is_Integer:
        whole = int(value)
        text = f"{whole:,}"
        return text if abs(whole) < 10**6 else f"{text} ≈ {whole:.4g}"
    return f"{float(value):.6g}"


@dataclass(frozen=True)
class SymbolRow:
    name: str
    latex: str
    mathml: str
    meaning: str
    unit: str
    source: str
    value: str = ""


@dataclass(frozen=True)
class StepView:
    number: int
    claim: str
    why: str
    latex: str
    mathml: str
    ok: bool
    method: str
    detail: str
    condition: str


@dataclass(frozen=True)
class InputValue:
    name: str
    latex: str
    mathml: str
    value: str
    source: str


@dataclass(frozen=True)
class ExampleView:
    case: str
    title: str
    source: str
    inputs: tuple[InputValue, ...]
    value: str
    unit: str
    claimed: str
    scaled: str
    slip: str
    documented: bool
    conditions_hold: bool


@dataclass(frozen=True)
class Erratum:
    formula_id: str
    anchor: str
    source: str
    what: str
    latex: str
    mathml: str


@dataclass(frozen=True)
class FormulaView:
    id: str
    anchor: str
    meaning: str
    unit: str
    latex: str
    mathml: str
    plain: str
    symbols: tuple[SymbolRow, ...]
    derivation_title: str
    steps: tuple[StepView, ...]
    conditions: tuple[str, ...]
    sources: tuple[str, ...]
    related: tuple[tuple[str, str], ...]
    notes: str
    examples: tuple[ExampleView, ...]
    errata: tuple[Erratum, ...]


@dataclass(frozen=True)
class TopicView:
    name: str
    title: str
    formulas: tuple[FormulaView, ...]


@dataclass(frozen=True)
class Reference:
    topics: tuple[TopicView, ...]
    symbols: tuple[SymbolRow, ...]
    errata: tuple[Erratum, ...]
    derivations: int
    checks: int
    failed: int
    presets: tuple[tuple[str, str, str], ...]


def symbol_row(entry: Quantity) -> SymbolRow:
    value = "" if entry.value is None else str(entry.value)
    return SymbolRow(entry.name, entry.latex, mm.fragment_mathml(entry.latex), entry.meaning, str(entry.unit), entry.source, value)


def formula_mathml(formula: Formula) -> str:
    lhs = formula.symbol_latex or r"\mathrm{" + formula.id + "}"
    return mm.math_block(mm.fragment_mathml(lhs), mm.relation("="), mm.expr_mathml(formula.expr), tex=formula_latex(formula))


def step_mathml(step: Step, tex: str = "") -> str:
    """One derivation step as MathML, laid out as ``render.printers.latex.step_latex`` lays out its LaTeX (``tex``)."""
    if step.claim == "refutes":
        return mm.math_block(mm.text("claimed: "), mm.expr_mathml(step.expr), mm.relation("≠"), mm.expr_mathml(step.correct), tex=tex)
    if step.claim == "concludes":
        target = get(step.formula_id)
        parts = [mm.fragment_mathml(target.symbol_latex or r"\mathrm{" + target.id + "}"), mm.relation("≡"), mm.expr_mathml(target.expr)]
        if step.where:
            parts.append(mm.text("  with "))
            for position, (symbol, value) in enumerate(step.where.items()):
                if position:
                    parts.append(mm.relation(","))
                parts += [mm.expr_mathml(symbol), mm.relation("="), mm.expr_mathml(value)]
        return mm.math_block(*parts, tex=tex)
    if step.claim == "bounds":
        return mm.math_block(
            mm.fragment_mathml(label_latex(step.reference)), mm.relation("≤" if step.direction == "upper" else "≥"), mm.expr_mathml(step.expr),
            tex=tex,
        )
    relation = {"defines": ":=", "equals": "=", "solves": "=", "approximates": "≈"}[step.claim]
    parts = [mm.fragment_mathml(label_latex(step.label)), mm.relation(relation), mm.expr_mathml(step.expr)]
    if step.claim == "approximates":
        parts += [mm.text("  (relative error "), mm.expr_mathml(step.error), mm.text(")")]
    return mm.math_block(*parts, tex=tex)


def _input_values(values: dict[sp.Symbol, sp.Basic], sources: dict[sp.Symbol, str]) -> tuple[InputValue, ...]:
    rows = []
    for symbol, value in values.items():
        entry = quantity(symbol)
        rows.append(InputValue(entry.name, entry.latex, mm.fragment_mathml(entry.latex), number_text(value), sources.get(symbol, "")))
    return tuple(rows)


def _conditions_hold(formula: Formula, values: dict[sp.Symbol, sp.Basic]) -> bool:
    return all(c.holds(values) is not False for c in formula.conditions)


def example_view(example: WorkedExample) -> ExampleView:
    formula = get(example.formula_id)
    exact = example.exact()
    scaled = f"{float(exact / example.scale):.6g} {example.scale_name}" if example.scale_name else ""
    return ExampleView(
        case=example.case,
        title=example.title,
        source=str(example.source),
        inputs=_input_values(example.values, {}),
        value=number_text(exact),
        unit=str(formula.unit),
        claimed=example.claimed_text,
        scaled=scaled,
        slip=example.slip,
        documented=True,
        conditions_hold=_conditions_hold(formula, example.values),
    )


def default_example(formula: Formula, inputs: list[sp.Symbol]) -> ExampleView:
    defaults = [default(symbol) for symbol in inputs]
    values = {d.symbol: d.value for d in defaults}
    exact = valued(formula.expr, values)
    return ExampleView(
        case="",
        title="at the documented default values",
        source="",
        inputs=_input_values(values, {d.symbol: d.source for d in defaults}),
        value=number_text(exact),
        unit=str(formula.unit),
        claimed="",
        scaled="",
        slip="",
        documented=False,
        conditions_hold=_conditions_hold(formula, values),
    )


def errata_of(formula: Formula, steps: list[Step]) -> tuple[Erratum, ...]:
    found = []
    for step in steps:
        if step.claim == "refutes":
            tex = step_latex(step, get)
            found.append(Erratum(formula.id, anchor(formula.id), str(step.source), step.why, tex, step_mathml(step, tex)))
    for example in examples_for(formula.id):
        if example.slip:
            what = f"{example.case}: the article gives {example.claimed_text}; {example.slip}"
            found.append(Erratum(formula.id, anchor(formula.id), str(example.source), what, "", ""))
    return tuple(found)


def formula_view(formula: Formula, outcomes: dict[tuple[str, int], Outcome]) -> FormulaView:
    derivation = derivation_of(formula.id)
    steps = derivation.steps if derivation else []
    views = []
    for number, step in enumerate(steps, start=1):
        outcome = outcomes.get((derivation.id, number))
        tex = step_latex(step, get)
        views.append(
            StepView(
                number=number,
                claim=step.claim,
                why=step.why,
                latex=tex,
                mathml=step_mathml(step, tex),
                ok=bool(outcome and outcome.ok),
                method=outcome.method if outcome else "not checked",
                detail=outcome.detail if outcome else "",
                condition=step.condition,
            )
        )
    inputs = formula.inputs
    examples = tuple(example_view(e) for e in examples_for(formula.id)) or (default_example(formula, inputs),)
    return FormulaView(
        id=formula.id,
        anchor=anchor(formula.id),
        meaning=formula.meaning,
        unit=str(formula.unit),
        latex=formula_latex(formula),
        mathml=formula_mathml(formula),
        plain=sp.sstr(valued(formula.expr)),
        symbols=tuple(symbol_row(quantity(s)) for s in inputs),
        derivation_title=derivation.title if derivation else "",
        steps=tuple(views),
        conditions=tuple(c.text for c in formula.conditions),
        sources=tuple(str(s) for s in formula.sources),
        related=tuple((r, anchor(r)) for r in formula.related),
        notes=formula.notes,
        examples=examples,
        errata=errata_of(formula, steps),
    )


def build_reference() -> Reference:
    report = check_all()
    outcomes = {(o.derivation, o.index): o for o in report.outcomes}
    grouped: dict[str, list[FormulaView]] = {}
    for formula in all_formulas():
        grouped.setdefault(topic_of(formula.id), []).append(formula_view(formula, outcomes))
    topics = tuple(TopicView(name, topic_title(name), tuple(views)) for name, views in grouped.items())
    errata = tuple(e for topic in topics for f in topic.formulas for e in f.errata)
    return Reference(
        topics=topics,
        symbols=tuple(symbol_row(q) for q in all_quantities()),
        errata=errata,
        derivations=len(all_derivations()),
        checks=len(report.outcomes),
        failed=len(report.failed),
        presets=tuple((kind, p.name, p.source) for kind, p in (("model", MODELS[0]), ("GPU", GPUS[0]), ("layout", LAYOUTS[0]))),
    )


def article_of(example: WorkedExample) -> str:
    """The seed article number (``000``...) an example comes from, or ``""``."""
    ref = example.source.ref
    return ref[:3] if ref[:3].isdigit() else ""


def examples_by_article() -> dict[str, list[WorkedExample]]:
    grouped: dict[str, list[WorkedExample]] = {key: [] for key in ARTICLES}
    for example in all_examples():
        article = article_of(example)
        if article:
            grouped.setdefault(article, []).append(example)
    return grouped

