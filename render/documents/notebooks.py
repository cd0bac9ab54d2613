"""Teaching notebooks (nbformat v4), generated from the catalogue.

One notebook per topic (the first component of the formula ids) and one per
source article (000, 001, 002, 004). A topic notebook alternates, for each
formula, the derivation in Markdown with LaTeX and a code cell that rebuilds
it with the toolkit (the derivation's steps are checked, the formula is
evaluated at its worked example); an article notebook re-derives the
article's worked examples and shows its slips. Each ends with exercises whose
answers a cell checks with ``assert``.

Cell ids come from the cell's position and text, so regenerating writes the
same bytes; ``nbformat.validate`` runs on every notebook before it is written.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Callable

import nbformat
import sympy as sp
from nbformat.notebooknode import NotebookNode

from derivations.catalogue import all_derivations, derivation_of
from derivations.engine import Step
from formulas.catalogue import Formula, all_formulas, get
from formulas.examples import WorkedExample, examples_for
from render.documents.defaults import default
from render.printers.escape import md_text
from render.printers.latex import formula_latex, step_latex
from render.documents.reference import ARTICLES, examples_by_article, topic_of, topic_title
from derivations.proof import valued

SETUP = """\
import math
import pathlib
import sys

# Use the checkout this notebook lives in (notebooks/ or build/notebooks/), else the installed package.
here = pathlib.Path.cwd().resolve()
root = next((p for p in (here, *here.parents) if (p / "formulas" / "catalogue.py").is_file()), None)
if root is not None and str(root) not in sys.path:
    sys.path.insert(0, str(root))

import sympy as sp

from derivations.catalogue import derivation_of
from derivations.testing import assert_approximation, assert_identity
from formulas.catalogue import get
from formulas.examples import all_examples
from formulas.symbols import quantity


def show_check(formula_id):
    \"\"\"Check the derivation of a formula step by step, and print the outcome.\"\"\"
    outcomes = derivation_of(formula_id).check()
    for outcome in outcomes:
        print(f"{outcome.index}. {outcome.claim:<12} {'proved' if outcome.ok else 'FAILED'} [{outcome.method}] {outcome.label}")
    assert all(outcome.ok for outcome in outcomes), formula_id


def evaluate(formula_id, **values):
    \"\"\"The formula evaluated exactly at the given inputs (names as in the symbol table).\"\"\"
    point = {quantity(name).symbol: sp.Rational(value) for name, value in values.items()}
    return get(formula_id).value_expr.subs(point)
"""


class _Builder:
    """Collects cells; each gets an id derived from its position and text."""

    def __init__(self) -> None:
        self.cells: list[NotebookNode] = []

    def markdown(self, text: str) -> None:
        self._add(nbformat.v4.new_markdown_cell(text.strip("\n")))

    def code(self, text: str) -> None:
        self._add(nbformat.v4.new_code_cell(text.strip("\n")))

    def _add(self, cell: NotebookNode) -> None:
        digest = hashlib.sha256(f"{len(self.cells)}\0{cell.cell_type}\0{cell.source}".encode()).hexdigest()[:12]
        cell["id"] = f"c{len(self.cells):03d}-{digest}"
        self.cells.append(cell)

    def notebook(self) -> NotebookNode:
        nb = nbformat.v4.new_notebook(cells=self.cells)
        nb.metadata = {
            "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
            "language_info": {"name": "python"},
        }
        nbformat.validate(nb)
        return nb


def _values_literal(values: dict[sp.Symbol, sp.Rational]) -> str:
    return ", ".join(f'{symbol.name}="{value}"' for symbol, value in values.items())


def _arithmetic(formula: Formula, values: dict[sp.Symbol, sp.Rational]) -> str:
    """The formula written out as Python arithmetic with the numbers in place of the names."""
    numbers = {symbol: sp.Symbol(f"({value})" if not value.is_integer else str(value)) for symbol, value in values.items()}
    return sp.pycode(valued(formula.expr).xreplace(numbers), fully_qualified_modules=True)


def _example_values(formula: Formula) -> tuple[dict[sp.Symbol, sp.Rational], str]:
    examples = examples_for(formula.id)
    if examples:
        return examples[0].values, f"case {examples[0].case} ({examples[0].title})"
    return {s: default(s).value for s in formula.inputs}, "the documented default values"


def _step_markdown(number: int, step: Step) -> str:
    claim = f"*{step.claim}*" + (f", when {md_text(step.condition)}" if step.condition else "")
    return f"{number}. {claim}: {md_text(step.why)}\n\n   $$ {step_latex(step, get)} $$"


def _formula_cells(nb: _Builder, formula: Formula) -> None:
    derivation = derivation_of(formula.id)
    lines = [f"## `{formula.id}`", "", f"{md_text(formula.meaning)}. Unit: {md_text(str(formula.unit))}.", "", f"$$ {formula_latex(formula)} $$", ""]
    if formula.conditions:
        lines += ["Valid when: " + "; ".join(md_text(c.text) for c in formula.conditions) + ".", ""]
    lines += ["Sources: " + "; ".join(md_text(str(s)) for s in formula.sources) + ".", ""]
    if derivation is not None:
        lines += [f"**Derivation: {md_text(derivation.title)}**", ""]
        lines += [_step_markdown(number, step) for number, step in enumerate(derivation.steps, start=1)]
    nb.markdown("\n".join(lines))
    values, where = _example_values(formula)
    code = [f"# check every step of the derivation, then evaluate at {where}", f'show_check("{formula.id}")']
    code.append(f'value = evaluate("{formula.id}", {_values_literal(values)})')
    code.append(f'print("{formula.id} =", value, "=", f"{{float(value):.6g}}", "{formula.unit}")')
    nb.code("\n".join(code))


def _arithmetic_exercise(nb: _Builder, number: int, formula: Formula, values: dict[sp.Symbol, sp.Rational], where: str) -> None:
    given = ", ".join(f"{s.name} = {v}" for s, v in values.items())
    nb.markdown(
        f"### Exercise {number}\n\nEvaluate `{formula.id}` ({md_text(formula.meaning)}) for {md_text(where)}: "
        f"{md_text(given)}. Write the arithmetic out yourself in `answer`; the next cell checks it against the toolkit."
    )
    nb.code(f"answer = {_arithmetic(formula, values)}  # a solution: replace it with yours")
    nb.code(
        f'expected = evaluate("{formula.id}", {_values_literal(values)})\n'
        "assert abs(answer - float(expected)) <= 1e-9 * abs(float(expected)), (answer, expected)\n"
        'print("correct:", answer)'
    )


def _proof_exercise(nb: _Builder, number: int, formula_id: str, step: Step) -> None:
    verb = "equals" if step.claim == "equals" else "approximates, dropping the stated terms under its condition,"
    nb.markdown(
        f"### Exercise {number}\n\nIn the derivation of `{formula_id}`, show that step `{md_text(step.reference)}` {verb} "
        f"step `{md_text(step.label)}`: $ {step_latex(step, get)} $. Prove it with the toolkit's assertion helpers."
    )
    lines = [
        f'derivation = derivation_of("{formula_id}")',
        f"step = derivation.steps[{derivation_of(formula_id).steps.index(step)}]  # {step.label}",
        "earlier = derivation.earlier(step).expression()",
    ]
    if step.claim == "equals":
        lines.append("assert_identity(earlier, step.expression())")
    else:
        lines.append("assert_approximation(earlier, step.expression(), dropped=step.dropped, condition=step.regimes)")
    lines.append('print("proved")')
    nb.code("\n".join(lines))


def _provable_step(formulas: list[Formula]) -> tuple[str, Step] | None:
    for formula in formulas:
        derivation = derivation_of(formula.id)
        for step in derivation.steps if derivation else []:
            if step.claim in ("equals", "approximates"):
                return formula.id, step
    return None


def topic_notebook(topic: str, formulas: list[Formula]) -> NotebookNode:
    nb = _Builder()
    nb.markdown(
        f"# {topic_title(topic)}\n\nThe {len(formulas)} formulas of the `{topic}` topic: each derivation in words and LaTeX, "
        "then a cell that rebuilds it with the toolkit (every step checked) and evaluates it at a worked example. "
        "Exercises at the end. Generated by `llm-formulas build`; regenerate rather than edit."
    )
    nb.code(SETUP)
    for formula in formulas:
        _formula_cells(nb, formula)
    nb.markdown("# Exercises")
    chosen = [f for f in formulas if examples_for(f.id)][:1] + [formulas[-1]]
    number = 0
    for formula in dict.fromkeys(chosen):
        number += 1
        values, where = _example_values(formula)
        _arithmetic_exercise(nb, number, formula, values, where)
    provable = _provable_step(formulas)
    if provable:
        number += 1
        _proof_exercise(nb, number, *provable)
    return nb.notebook()


def _example_cells(nb: _Builder, example: WorkedExample) -> None:
    formula = get(example.formula_id)
    lines = [
        f"## {example.case}: {md_text(example.title)}",
        "",
        f"Source: {md_text(str(example.source))}. Formula `{formula.id}`:",
        "",
        f"$$ {formula_latex(formula)} $$",
        "",
        "Inputs: " + ", ".join(f"{md_text(s.name)} = {v}" for s, v in example.values.items()) + ".",
        "",
        f"The article: {md_text(example.claimed_text)}.",
    ]
    if example.slip:
        lines += ["", f"**Slip:** {md_text(example.slip)}."]
    nb.markdown("\n".join(lines))
    code = [f'example = next(e for e in all_examples() if e.case == "{example.case}")', "exact = example.exact()"]
    code.append('print("exact:", exact, "=", f"{example.scaled():.6g}", example.scale_name or "' + str(formula.unit) + '")')
    if example.claimed is not None:
        code.append('print("article:", example.claimed_text, "; article / exact =", f"{float(example.claimed / exact):.4f}")')
    nb.code("\n".join(code))


def _refutations(article: str) -> list[tuple[str, Step]]:
    return [
        (derivation.id, step)
        for derivation in all_derivations()
        for step in derivation.steps
        if step.claim == "refutes" and step.source is not None and step.source.ref.startswith(article)
    ]


def article_notebook(article: str, examples: list[WorkedExample]) -> NotebookNode:
    nb = _Builder()
    nb.markdown(
        f"# Article {article}: {md_text(ARTICLES.get(article, ''))}\n\nIts worked examples, re-derived with the toolkit "
        f"(exact arithmetic beside the article's figure), and the places where it slipped. Generated by `llm-formulas build`."
    )
    nb.code(SETUP)
    if not examples:
        nb.markdown("No worked example of this article is registered in the catalogue yet.")
    for example in examples:
        _example_cells(nb, example)
    refutations = _refutations(article)
    if refutations:
        nb.markdown("# Slips the derivations refute")
    for derivation_id, step in refutations:
        nb.markdown(f"`{derivation_id}`, {md_text(str(step.source))}: {md_text(step.why)}\n\n$$ {step_latex(step, get)} $$")
        nb.code(
            f'derivation = derivation_of("{derivation_id}")\n'
            f'outcome = next(o for o in derivation.check() if o.label == "{step.label}")\n'
            'assert outcome.ok, outcome.describe()\nprint(outcome.describe())'
        )
    nb.markdown("# Exercises")
    number = 0
    for example in examples[:2]:
        number += 1
        _arithmetic_exercise(nb, number, get(example.formula_id), example.values, f"case {example.case}")
    cited = [f for f in all_formulas() if any(source.ref.startswith(article) for source in f.sources)]
    if number == 0 and cited:
        values, where = _example_values(cited[0])
        _arithmetic_exercise(nb, 1, cited[0], values, where)
    return nb.notebook()


def notebooks() -> dict[str, NotebookNode]:
    """Every notebook, by file name: ``<topic>.ipynb``, ``article_<nnn>.ipynb`` and the lessons (render/documents/lessons.py)."""
    by_topic: dict[str, list[Formula]] = {}
    for formula in all_formulas():
        by_topic.setdefault(topic_of(formula.id), []).append(formula)
    result = {f"{topic}.ipynb": topic_notebook(topic, formulas) for topic, formulas in by_topic.items()}
    for article, examples in examples_by_article().items():
        result[f"article_{article}.ipynb"] = article_notebook(article, examples)
    from render.documents.lessons import LESSONS  # lessons build on this module's cells

    return result | {name: make() for name, make in LESSONS.items()}


def notebook_text(nb: NotebookNode) -> str:
    return nbformat.writes(nb, version=4) + "\n"


def write_notebooks(directory: Path, write: Callable[[Path, bytes], Path]) -> list[Path]:
    """Every notebook, each file through ``write(path, data)``."""
    return [write(directory / name, notebook_text(nb).encode("utf-8")) for name, nb in notebooks().items()]
