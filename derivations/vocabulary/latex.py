"""LaTeX of derivation steps: each step a displayed line, printed from the expression the engine checks."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

import sympy as sp

from llm_formulas.derivations.vocabulary.proof import valued
from llm_formulas.formulas.vocabulary.latex import formula_latex, latex

if TYPE_CHECKING:
    from llm_formulas.derivations.vocabulary.engine import Outcome, Step

__all__ = ["label_latex", "step_latex", "derivation_latex", "verdict_latex"]

_GREEK = {"Ψ": r"\Psi", "Σ": r"\Sigma", "ε": r"\varepsilon"}


def label_latex(label: str) -> str:
    """A step label such as ``Ψ_attn`` or ``F_fwd/(bs)`` as LaTeX."""
    text = label
    for char, command in _GREEK.items():
        text = text.replace(char, command + " ")
    text = re.sub(
        r"_([A-Za-z][A-Za-z_]*(?:\^[A-Za-z]+)?)",
        lambda m: "_{" + m.group(1).replace("_", r"\_").replace("^", "}^{") + "}",
        text,
    )
    text = text.replace("²", "^2")
    return text.strip()


_RELATION = {"defines": ":=", "equals": "=", "solves": "=", "concludes": "=", "approximates": r"\approx"}


def step_latex(step: Step, formula_lookup) -> str:
    """One derivation step as a displayed line."""
    if step.claim == "refutes":
        return rf"\text{{claimed: }} {latex(step.expr)} \neq {latex(step.correct)}"
    if step.claim == "concludes":
        text = formula_latex(formula_lookup(step.formula_id)).replace(" = ", r" \equiv ", 1)
        if step.where:
            bindings = ", ".join(f"{latex(symbol)} = {latex(value)}" for symbol, value in step.where.items())
            text += rf"\quad\text{{with }} {bindings}"
        return text
    if step.claim == "bounds":
        relation = r"\le" if step.direction == "upper" else r"\ge"
        return rf"{label_latex(step.reference)} {relation} {latex(step.displayed)}"
    text = f"{label_latex(step.label)} {_RELATION[step.claim]} {latex(step.displayed)}"
    if step.claim == "approximates":
        text += rf"\quad\left(\text{{relative error }} {latex(step.error)}\right)"
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
