"""LaTeX of derivation steps: each step a displayed line, printed from the expression the engine checks."""

from __future__ import annotations

from itertools import islice

import sympy as sp

from llm_formulas.derivations.vocabulary.steps import Outcome, Step, StepName, label_latex
from llm_formulas.derivations.vocabulary.proof import valued
from llm_formulas.formulas.vocabulary.latex import READABLE_LATEX, formula_latex, latex

__all__ = ["concluded", "error_shown", "label_latex", "step_latex", "derivation_latex", "verdict_latex"]

LONG_KEPT = 40  # nodes: an approximation keeping more prints its relative error as dropped/kept, kept by its label

_RELATION = {"defines": ":=", "equals": "=", "solves": "=", "concludes": "=", "approximates": r"\approx"}


def error_shown(step: Step) -> sp.Basic:
    """An approximation's relative error as printed: the error, or where the kept part is long (the error's
    denominator), dropped/kept with the kept part named by the step's label: the same ratio, read in one look."""
    if sum(1 for _ in islice(sp.preorder_traversal(step.expr), LONG_KEPT + 1)) <= LONG_KEPT:
        return step.error
    return sp.Mul(step.dropped, sp.Pow(StepName(step.label), -1, evaluate=False), evaluate=False)


def concluded(step: Step, formula_lookup) -> sp.Basic:
    """What a conclusion prints its formula identical to: the formula's composed form, or where the line would be
    longer than a person reads in one look, the step it concludes from, by its label."""
    formula = formula_lookup(step.formula_id)
    if len(formula_latex(formula)) + len(_bindings(step)) + 6 <= READABLE_LATEX:
        return formula.composed
    return StepName(step.reference)


def _bindings(step: Step) -> str:
    if not step.where:
        return ""
    return r"\quad\text{with } " + ", ".join(f"{latex(symbol)} = {latex(value)}" for symbol, value in step.where.items())


def step_latex(step: Step, formula_lookup) -> str:
    """One derivation step as a displayed line."""
    if step.claim == "refutes":
        return rf"\text{{claimed: }} {latex(step.expr)} \neq {latex(step.correct_displayed)}"
    if step.claim == "concludes":
        formula = formula_lookup(step.formula_id)
        lhs = formula_latex(formula).split(" = ", 1)[0]
        return rf"{lhs} \equiv {latex(concluded(step, formula_lookup))}" + _bindings(step)
    if step.claim == "bounds":
        relation = r"\le" if step.direction == "upper" else r"\ge"
        return rf"{label_latex(step.reference)} {relation} {latex(step.displayed)}"
    text = f"{label_latex(step.label)} {_RELATION[step.claim]} {latex(step.displayed)}"
    if step.claim == "approximates":
        text += rf"\quad\left(\text{{relative error }} {latex(error_shown(step))}\right)"
    return text


def verdict_latex(outcome: Outcome, step: Step) -> str:
    """The engine's verdict on a step, to print beside it: a definition, proved (how), an approximation's
    vanishing error, a refuted slip, or NOT PROVED in red."""
    if step.claim == "defines" and outcome.ok:
        return r"\text{definition}"
    if not outcome.ok:
        return r"\color{red}{\text{NOT PROVED}}"
    if step.claim == "refutes":
        ratio = sp.simplify(valued(step.expr) / valued(step.correct))
        shown = f"{float(ratio):.4g}" if ratio.is_number else latex(ratio)
        return r"\color{red}{\text{slip refuted: claimed/correct} = " + shown + "}"
    if step.claim == "approximates":
        limits = r",\ ".join(f"{latex(symbol)} \\to {sp.latex(limit)}" for symbol, limit in step.limits)
        return r"\color{green}{\checkmark\ \text{exact error, vanishes as }" + limits + "}"
    return r"\color{green}{\checkmark\ \text{proved (" + outcome.method + ")}}"


def derivation_latex(derivation) -> str:
    """A whole derivation as one ``aligned`` block: its title, then its steps numbered as ``check`` numbers them,
    each with the engine's verdict beside it."""
    from llm_formulas.formulas.vocabulary.catalogue import lookup, within

    with within(derivation.catalogue):
        outcomes = derivation.check()
        lines = [rf"\text{{{index}.}}\quad & {step_latex(step, lookup)} \qquad {verdict_latex(outcome, step)}"
                 for index, (step, outcome) in enumerate(zip(derivation.steps, outcomes), 1)]
    title = derivation.title.replace("\\", "").replace("{", "").replace("}", "")
    return r"\begin{aligned}&\textbf{" + title + r"}\\ " + r" \\ ".join(lines) + r"\end{aligned}"
