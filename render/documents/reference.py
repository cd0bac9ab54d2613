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

import re
from dataclasses import dataclass

import sympy as sp

from llm_formulas.derivations.reports.catalogue import Report, all_derivations, check_all, derivation_of
from llm_formulas.derivations.vocabulary.steps import Outcome, Step
from llm_formulas.formulas.vocabulary.catalogue import Formula, all_formulas, get
from llm_formulas.formulas.vocabulary.examples import WorkedExample, all_examples, examples_for
from llm_formulas.formulas.vocabulary.symbols import Quantity, all_quantities, quantity
from llm_formulas.render.printers import mathml as mm
from llm_formulas.render.documents.defaults import GENERIC, GPUS, LAYOUTS, MODELS, default
from llm_formulas.render.documents.equation_lines import WIDTH, block, broken
from llm_formulas.formulas.vocabulary.latex import formula_latex, latex
from llm_formulas.derivations.vocabulary.latex import concluded, error_shown, label_latex, step_latex
from llm_formulas.derivations.vocabulary.proof import valued
from llm_formulas.formulas.vocabulary.bibliography import Source, Work, cited, work
from llm_formulas.render.printers.human import exact as exact_text
from llm_formulas.render.printers.human import human
from llm_formulas.render.documents.plots import Plot

TOPIC_TITLES = {
    "params": "Parameters",
    "flops": "FLOPs",
    "memory": "Memory",
    "comms": "Communication",
    "cluster": "Cluster sizing",
    "inference": "Inference",
    "architecture": "Architectures",
    "perf": "Performance model: the predicted step time",
    "moe": "Mixture of experts",
    "peers": "Where the calculators disagree",  # formulas/topics/peers.py: each peer's formula and the proved terms of its difference
}

ARTICLES = {key: f"{work(key).short}: {work(key).title_en}" for key in ("000", "001", "002", "004")}


# a mixture of experts' own formulas, gathered into a topic of their own from wherever their ids put them (a peer's
# and ZeRO's sharding under EP stay with their own)
MOE = re.compile(r"(^|\.)(moe|expert|experts|router|shared_experts|ep|experts_touched|active|alltoall)(\.|$)")


def topic_of(formula_id: str) -> str:
    topic = formula_id.split(".", 1)[0]
    if topic != "peers" and not formula_id.startswith("memory.zero.") and MOE.search(formula_id):
        return "moe"
    return topic


def topic_title(topic: str) -> str:
    return TOPIC_TITLES.get(topic, topic.replace("_", " ").capitalize())


def anchor(formula_id: str) -> str:
    return formula_id.replace(".", "-").replace("_", "-")


@dataclass(frozen=True)
class Citation:
    """A short citation ("Narayanan et al. 2021", "§5.1") linked to its entry of the References."""

    label: str
    where: str
    anchor: str

    @property
    def text(self) -> str:
        return f"{self.label}, {self.where}" if self.where else self.label


def citation(source: Source) -> Citation:
    return Citation(source.work.short, source.where, source.work.anchor)


@dataclass(frozen=True)
class WorkView:
    """One entry of the References section."""

    key: str
    anchor: str
    kind: str
    short: str
    authors: str
    title: str
    title_en: str
    venue: str
    date: str
    arxiv: str
    authors_latin: str  # for pdflatex, which has no CJK fonts here: "郁晨 (Yu Chen)" becomes "Yu Chen"
    url: str = ""
    title_image: str = ""  # the original title set as a picture (a CJK font for pdflatex), relative to the .tex
    stop: str = "."  # the full stop after the authors ("et al." has its own)


_CJK_WITH_LATIN = re.compile(r"[\u3000-\u303f\u4e00-\u9fff\uff00-\uffef]+\s*\(([^)]*)\)")


def work_view(entry: Work) -> WorkView:
    latin = _CJK_WITH_LATIN.sub(r"\1", entry.authors)
    image = f"titles/{entry.key}.pdf" if _CJK.search(entry.title) and title_pictures() else ""
    return WorkView(entry.key, entry.anchor, entry.kind, entry.short, entry.authors, entry.title, entry.title_en,
                    entry.venue, entry.date, entry.arxiv, latin, entry.url, image, "" if latin.endswith(".") else ".")


_CJK = re.compile(r"[\u3000-\u303f\u4e00-\u9fff\uff00-\uffef]")


def title_pictures() -> dict[str, bytes]:
    """The original titles in Chinese set as small PDF pictures for pdflatex (``titles/<key>.pdf``), drawn with a CJK font
    of the system; empty when there is none (the PDF then gives the English title alone)."""
    from llm_formulas.formulas.vocabulary.bibliography import WORKS
    from llm_formulas.render.documents.title_pictures import title_pdf

    pictures = {}
    for key, entry in WORKS.items():
        if _CJK.search(entry.title):
            data = title_pdf(entry.title)
            if data is None:
                return {}
            pictures[f"titles/{key}.pdf"] = data
    return pictures


@dataclass(frozen=True)
class SymbolRow:
    name: str
    latex: str
    mathml: str
    meaning: str
    unit: str
    source: Citation
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
    latex_print: str = ""  # the same equation broken over lines for the PDF (render.documents.equation_lines)


@dataclass(frozen=True)
class InputValue:
    name: str
    latex: str
    mathml: str
    value: str
    source: str
    exact: str = ""


@dataclass(frozen=True)
class ExampleView:
    case: str
    title: str
    source: Citation | None
    inputs: tuple[InputValue, ...]
    value: str  # in human units
    exact: str  # the exact value, with its unit
    unit: str
    claimed: str
    scaled: str
    slip: str
    documented: bool
    conditions_hold: bool
    convention: str = ""


@dataclass(frozen=True)
class Erratum:
    """A refuted figure of a source: what it printed, the correct figure, their ratio, and the proof."""

    formula_id: str
    anchor: str
    label: str
    source: Citation
    what: str
    latex: str
    mathml: str
    claimed: str
    correct: str
    ratio: str
    claimed_exact: str
    correct_exact: str
    derivation: str
    ok: bool
    claimed_tex: str = ""  # the figures as LaTeX math (text in human units for a number)
    correct_tex: str = ""
    ratio_tex: str = ""
    long: bool = False  # an expression too long for a table cell: printed in the row below
    latex_print: str = ""  # the step broken over lines for the PDF (render.documents.equation_lines)
    claimed_print: str = ""  # the row below's figures, each broken over lines
    correct_print: str = ""
    ratio_print: str = ""


@dataclass(frozen=True)
class PlotView:
    """A plot shown beside the formula it illustrates."""

    name: str
    caption: str
    svg: str  # inline, for HTML
    pdf: str  # the file LaTeX includes, relative to the document
    image: str  # the file Markdown links, relative to the document


def plot_view(plot: Plot) -> PlotView:
    return PlotView(plot.name, plot.caption, plot.inline_svg(), f"plots/{plot.name}.pdf", f"plots/{plot.name}.svg")


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
    sources: tuple[Citation, ...]
    related: tuple[tuple[str, str], ...]
    notes: str
    examples: tuple[ExampleView, ...]
    errata: tuple[Erratum, ...]
    plots: tuple[PlotView, ...] = ()
    title: str = ""  # a short readable title for the contents: the meaning up to its first colon or bracket
    latex_print: str = ""  # the equation broken over lines for the PDF
    no_example: str = ""  # why a formula has no worked example (its inputs have no real value documented)
    parts: tuple[tuple[str, str], ...] = ()  # the formulas it names, (their symbol's LaTeX, their anchor)
    heading: str = ""  # a whole title for a printed contents: the meaning's first clause, never cut


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
    bibliography: tuple[WorkView, ...]
    unproved: tuple[str, ...] = ()  # the derivations with a step ``check`` did not prove


def symbol_row(entry: Quantity) -> SymbolRow:
    value = "" if entry.value is None else str(entry.value)
    return SymbolRow(entry.name, entry.latex, mm.fragment_mathml(entry.latex), entry.meaning, str(entry.unit), citation(entry.source), value)


def human_value(value: sp.Basic, unit: str, binary: bool = False) -> str:
    """A number in the unit a person reads (``4.51 EFLOP``, ``10 GiB`` when ``binary``); anything else as SymPy prints it."""
    value = sp.nsimplify(value) if value.is_Float else value
    if value.is_number and value.is_real:
        number = value if value.is_Rational else float(value)
        head, per, rest = unit.partition("/")
        if per and head in ("FLOP", "byte") and rest != "second":  # FLOP/token, byte/parameter: the prefix on the numerator
            return human(number, head, binary=binary) + "/" + rest
        return human(number, unit, binary=binary)
    return sp.sstr(value)


def _short(value: sp.Basic, unit: str = "1", binary: bool = False) -> str:
    """A figure for a table cell: human units, or a short expression; a long one is left to the derivation's display."""
    text = human_value(value, unit, binary)
    return text if len(text) <= 24 else "(an expression: see the derivation)"


def _figure_tex(value: sp.Basic, unit: str, binary: bool) -> str:
    """A refuted or correct figure as LaTeX math: a number in human units as text, an expression typeset."""
    from llm_formulas.formulas.vocabulary.latex import latex
    from llm_formulas.render.printers.escape import tex_text

    if value.is_number and value.is_real:
        return r"\text{" + tex_text(human_value(value, unit, binary)) + "}"
    return latex(value)


def short_title(meaning: str, most: int = 72) -> str:
    """A formula's meaning cut to a title for the contents: up to its first colon, semicolon or bracket, at most
    ``most`` characters, at a word."""
    head = re.split(r"[:;(]", meaning, maxsplit=1)[0].strip().rstrip(",")
    if len(head) > most:
        head = head[:most].rsplit(" ", 1)[0] + " …"
    return head[:1].upper() + head[1:]


def heading(meaning: str) -> str:
    """A formula's meaning up to its first colon or semicolon, whole: the handbook's contents print titles uncut."""
    head = re.split(r"[:;]", meaning, maxsplit=1)[0].strip().rstrip(",")
    return head[:1].upper() + head[1:]


def _print_latex(lhs: str, relation: str, expr: sp.Basic, short: str) -> str:
    return short if len(short) <= WIDTH + 10 else broken(lhs, relation, expr)


def step_print(step: Step, tex: str) -> str:
    """A step's display for print: its LaTeX when it fits a line, else broken over lines from its expression."""
    if len(tex) <= WIDTH + 10:
        return tex
    if step.claim == "refutes":
        return (r"\begin{gathered}\text{claimed: }" + block(step.expr) + r" \\ \neq " + block(step.correct_displayed)
                + r"\end{gathered}")
    if step.claim == "bounds":
        return broken(label_latex(step.reference), r"\le" if step.direction == "upper" else r"\ge", step.displayed)
    if step.claim == "concludes":
        target = get(step.formula_id)
        lhs = target.symbol_latex or r"\mathrm{" + target.id.replace("_", r"\_") + "}"
        return broken(lhs, r"\equiv", concluded(step, get)) if not step.where else tex
    relation = {"defines": ":=", "equals": "=", "solves": "=", "approximates": r"\approx"}[step.claim]
    text = broken(label_latex(step.label), relation, step.displayed)
    if step.claim == "approximates":
        error = broken(r"\text{relative error}", "", error_shown(step))
        return r"\begin{gathered}" + text + r" \\ " + error + r"\end{gathered}"
    return text


def exact_value(value: sp.Basic, unit: str) -> str:
    """The exact value with its unit (``4,510,752,044,998,459,392 FLOP``)."""
    if value.is_Rational:
        return exact_text(value) + ("" if unit == "1" else f" {unit}")
    return sp.sstr(value)


def formula_mathml(formula: Formula) -> str:
    lhs = formula.symbol_latex or r"\mathrm{" + formula.id + "}"
    return mm.math_block(mm.fragment_mathml(lhs), mm.relation("="), mm.expr_mathml(formula.composed), tex=formula_latex(formula))


def step_mathml(step: Step, tex: str = "") -> str:
    """One derivation step as MathML, laid out as ``derivations.vocabulary.latex.step_latex`` lays out its LaTeX (``tex``)."""
    if step.claim == "refutes":
        return mm.math_block(mm.text("claimed: "), mm.expr_mathml(step.expr), mm.relation("≠"), mm.expr_mathml(step.correct_displayed),
                             tex=tex)
    if step.claim == "concludes":
        target = get(step.formula_id)
        parts = [mm.fragment_mathml(target.symbol_latex or r"\mathrm{" + target.id + "}"), mm.relation("≡"),
                 mm.expr_mathml(concluded(step, get))]
        if step.where:
            parts.append(mm.text("  with "))
            for position, (symbol, value) in enumerate(step.where.items()):
                if position:
                    parts.append(mm.relation(","))
                parts += [mm.expr_mathml(symbol), mm.relation("="), mm.expr_mathml(value)]
        return mm.math_block(*parts, tex=tex)
    if step.claim == "bounds":
        return mm.math_block(
            mm.fragment_mathml(label_latex(step.reference)), mm.relation("≤" if step.direction == "upper" else "≥"), mm.expr_mathml(step.displayed),
            tex=tex,
        )
    relation = {"defines": ":=", "equals": "=", "solves": "=", "approximates": "≈"}[step.claim]
    parts = [mm.fragment_mathml(label_latex(step.label)), mm.relation(relation), mm.expr_mathml(step.displayed)]
    if step.claim == "approximates":
        parts += [mm.text("  (relative error "), mm.expr_mathml(error_shown(step)), mm.text(")")]
    return mm.math_block(*parts, tex=tex)


def _input_values(values: dict[sp.Symbol, sp.Basic], sources: dict[sp.Symbol, str]) -> tuple[InputValue, ...]:
    rows = []
    for symbol, value in values.items():
        entry = quantity(symbol)
        unit = str(entry.unit)
        rows.append(InputValue(entry.name, entry.latex, mm.fragment_mathml(entry.latex), human_value(value, unit), sources.get(symbol, ""),
                               exact_value(value, unit)))
    return tuple(rows)


def _conditions_hold(formula: Formula, values: dict[sp.Symbol, sp.Basic]) -> bool:
    return all(c.holds(values) is not False for c in formula.conditions)


def example_view(example: WorkedExample) -> ExampleView:
    formula = get(example.formula_id)
    exact = example.exact()
    scaled = f"{float(exact / example.scale):.6g} {example.scale_name} in the article's unit" if example.scale_name else ""
    return ExampleView(
        case=example.case,
        title=example.title,
        source=citation(example.source),
        inputs=_input_values(example.values, {}),
        value=human_value(exact, str(formula.unit)),
        exact=exact_value(exact, str(formula.unit)),
        unit=str(formula.unit),
        claimed=example.claimed_text,
        scaled=scaled,
        slip=example.slip,
        documented=True,
        conditions_hold=_conditions_hold(formula, example.values),
        convention=example.convention,
    )


def placeholder_inputs(inputs: list[sp.Symbol]) -> list[str]:
    """The inputs whose only default is a generic placeholder (no real model, GPU or run documents them)."""
    return [quantity(symbol).latex for symbol in inputs if default(symbol).source == GENERIC]


def default_example(formula: Formula, inputs: list[sp.Symbol]) -> ExampleView:
    defaults = [default(symbol) for symbol in inputs]
    values = {d.symbol: d.value for d in defaults}
    exact = valued(formula.expr, values)
    return ExampleView(
        case="",
        title="at the documented default values" + (", every switch at its classic value" if formula.defaults else ""),
        source=None,
        inputs=_input_values({symbol: value for symbol, value in values.items() if symbol not in formula.defaults},
                             {d.symbol: d.source for d in defaults}),
        value=human_value(exact, str(formula.unit)),
        exact=exact_value(exact, str(formula.unit)),
        unit=str(formula.unit),
        claimed="",
        scaled="",
        slip="",
        documented=False,
        conditions_hold=_conditions_hold(formula, values),
    )


def errata_of(formula: Formula, derivation_id: str, steps: list[Step], outcomes: dict[tuple[str, int], Outcome]) -> tuple[Erratum, ...]:
    """The derivation's refutations: each source's figure beside the correct one, in human units."""
    found = []
    for number, step in enumerate(steps, start=1):
        if step.claim != "refutes":
            continue
        tex = step_latex(step, get)
        claimed, correct = valued(step.expr), valued(step.correct)
        unit = step.unit or "1"
        ratio = sp.simplify(claimed / correct)
        ratio_text = f"{float(ratio):.4g}" if ratio.is_number else _short(ratio)
        outcome = outcomes.get((derivation_id, number))
        claimed_tex, correct_tex = (_figure_tex(value, unit, step.binary) for value in (claimed, correct))
        ratio_tex = r"\text{" + ratio_text + "}" if ratio.is_number else _figure_tex(ratio, "1", False)

        def printed(value: sp.Basic, value_tex: str) -> str:  # a figure as it is, an expression broken over lines
            return value_tex if value.is_number else block(value)

        # a correct figure shown in named pieces (derivations.vocabulary.step_pieces) is printed so, its ratio as claimed/correct
        shown = correct if step.correct_shown is None else valued(step.correct_shown)
        shown_ratio = ratio if shown is correct or ratio.is_number else sp.Mul(claimed, sp.Pow(shown, -1), evaluate=False)

        found.append(
            Erratum(
                formula.id, anchor(formula.id), step.label, citation(step.source), step.why, tex, step_mathml(step, tex),
                claimed=_short(claimed, unit, step.binary), correct=_short(correct, unit, step.binary), ratio=ratio_text,
                claimed_exact=exact_value(claimed, unit), correct_exact=exact_value(correct, unit),
                derivation=derivation_id, ok=bool(outcome and outcome.ok),
                claimed_tex=claimed_tex, correct_tex=correct_tex, long=max(len(claimed_tex), len(correct_tex)) > 40,
                ratio_tex=ratio_tex, latex_print=step_print(step, tex), claimed_print=printed(claimed, claimed_tex),
                correct_print=printed(shown, correct_tex), ratio_print=printed(shown_ratio, ratio_tex),
            )
        )
    return tuple(found)


def formula_view(formula: Formula, outcomes: dict[tuple[str, int], Outcome], plots: tuple[PlotView, ...] = ()) -> FormulaView:
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
                latex_print=step_print(step, tex),
            )
        )
    inputs = formula.inputs
    placeholders = placeholder_inputs(inputs)
    published = tuple(example_view(e) for e in examples_for(formula.id))
    examples = published or (() if placeholders else (default_example(formula, inputs),))
    no_example = "" if examples else ("no real model, GPU or run documents a value of " + ", ".join(f"${p}$" for p in placeholders))
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
        sources=tuple(citation(s) for s in formula.sources),
        related=tuple((r, anchor(r)) for r in formula.related),
        notes=formula.notes,
        examples=examples,
        errata=errata_of(formula, derivation.id, steps, outcomes) if derivation else (),
        plots=plots,
        title=short_title(formula.meaning),
        latex_print=_print_latex(formula.symbol_latex or r"\mathrm{" + formula.id.replace("_", r"\_") + "}", "=",
                                 formula.composed, formula_latex(formula)),
        parts=tuple((latex(get(part).part), anchor(part)) for part in formula.parts),
        heading=heading(formula.meaning),
        no_example=no_example,
    )


def build_reference(plots: list[Plot] = (), report: Report | None = None) -> Reference:
    """The page model, from the catalogue's check (``report``, proved here when not given); each of ``plots`` is shown
    beside the formula it illustrates."""
    report = check_all() if report is None else report
    outcomes = {(o.derivation, o.index): o for o in report.outcomes}
    illustrating: dict[str, list[PlotView]] = {}
    for plot in plots:
        illustrating.setdefault(plot.formula_id, []).append(plot_view(plot))
    grouped: dict[str, list[FormulaView]] = {}
    for formula in all_formulas():
        view = formula_view(formula, outcomes, tuple(illustrating.get(formula.id, ())))
        grouped.setdefault(topic_of(formula.id), []).append(view)
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
        bibliography=tuple(work_view(w) for w in cited(_every_source())),
        unproved=tuple(sorted({outcome.derivation for outcome in report.failed})),
    )


def _every_source() -> list[Source]:
    """Every source the reference cites: formulas, symbols, worked examples, refutations."""
    sources = [s for f in all_formulas() for s in f.sources]
    sources += [q.source for q in all_quantities()]
    sources += [e.source for e in all_examples()]
    sources += [step.source for d in all_derivations() for step in d.steps if step.source is not None]
    return sources


def article_of(example: WorkedExample) -> str:
    """The seed article number (``000``...) an example comes from, or ``""``."""
    return example.source.work.seed


def examples_by_article() -> dict[str, list[WorkedExample]]:
    grouped: dict[str, list[WorkedExample]] = {key: [] for key in ARTICLES}
    for example in all_examples():
        article = article_of(example)
        if article:
            grouped.setdefault(article, []).append(example)
    return grouped

