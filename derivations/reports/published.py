"""Published figures against the catalogue: reproduced, explained by a proved convention, or differing.

A row is **reproduced** when the catalogue's formula, at the row's inputs,
gives the printed figure at its printed precision: some value the formula
takes while every measured input ranges over its own printed precision
(the formulas are monotone in each, so the corners bound the range) rounds
(or truncates, or rounds up, as the row says the paper does) to the printed digits.
It is **explained** when it is not reproduced, the paper's own formula as
printed (``formulas/topics/conventions.py``) reproduces it, and the named derivation,
which states the exact difference and its cause, is proved.
Otherwise it **differs**, and ``validate`` exits 1.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import sympy as sp

from llm_formulas.derivations.reports.catalogue import all_derivations
from llm_formulas.formulas.vocabulary.catalogue import get
from llm_formulas.formulas.data.published import PublishedRow, published_rows
from llm_formulas.formulas.vocabulary.symbols import quantity


@dataclass(frozen=True)
class Evaluation:
    """A formula at a row's inputs: the value at the printed measurements, and its range over their precision."""

    formula: str
    value: sp.Rational
    low: sp.Rational
    high: sp.Rational


@dataclass(frozen=True)
class Verdict:
    """One row's outcome: ours beside the paper's, and the verdict."""

    row: PublishedRow
    ours: Evaluation
    paper: Evaluation | None  # the paper's convention, when the row names one
    verdict: str  # "reproduced", "explained" or "differs"

    @property
    def ok(self) -> bool:
        return self.verdict != "differs"

    @property
    def ours_scaled(self) -> sp.Rational:
        return self.ours.value / self.row.scale

    @property
    def difference(self) -> sp.Rational:
        """Ours minus the printed figure, in the printed unit."""
        return self.ours_scaled - self.row.printed


def evaluate(formula_id: str, inputs: dict[str, sp.Rational], measured: tuple = ()) -> Evaluation:
    """The formula exactly at ``inputs`` and the measured values; low/high over the measured values' precision."""
    expr = get(formula_id).expr
    fixed = {quantity(name).symbol: value for name, value in inputs.items()}
    missing = expr.free_symbols - set(fixed) - {quantity(m.name).symbol for m in measured}
    if missing:
        raise ValueError(f"{formula_id} needs {', '.join(sorted(s.name for s in missing))}")
    at = dict(fixed)
    at.update({quantity(m.name).symbol: m.value for m in measured})
    value = expr.xreplace(at)
    corners = []
    for signs in itertools.product((-1, 1), repeat=len(measured)):
        point = dict(fixed)
        point.update({quantity(m.name).symbol: m.value + sign * m.step / 2 for m, sign in zip(measured, signs)})
        corners.append(expr.xreplace(point))
    return Evaluation(formula_id, value, min(corners), max(corners))


def printed_interval(row: PublishedRow) -> tuple[sp.Rational, sp.Rational]:
    """The true values (in base units) that print as the row's figure."""
    printed, step = row.printed, row.step
    if row.rounding == "truncate":
        low, high = printed, printed + step
    elif row.rounding == "ceiling":
        low, high = printed - step, printed
    else:
        low, high = printed - step / 2, printed + step / 2
    return low * row.scale, high * row.scale


def agrees(evaluation: Evaluation, row: PublishedRow) -> bool:
    low, high = printed_interval(row)
    if row.rounding == "truncate":
        return evaluation.low < high and evaluation.high >= low
    if row.rounding == "ceiling":
        return evaluation.low <= high and evaluation.high > low
    return evaluation.low <= high and evaluation.high >= low


def _proved(derivation_id: str) -> bool:
    for derivation in all_derivations():
        if derivation.id == derivation_id:
            return all(outcome.ok for outcome in derivation.check())
    raise ValueError(f"no derivation {derivation_id!r}")


def judge(row: PublishedRow) -> Verdict:
    inputs = dict(row.inputs)
    ours = evaluate(row.formula, inputs, row.measured)
    if agrees(ours, row):
        return Verdict(row, ours, None, "reproduced")
    if row.explanation is None:
        return Verdict(row, ours, None, "differs")
    convention = row.explanation
    paper_inputs = {**inputs, **dict(convention.inputs)}
    needed = {s.name for s in get(convention.formula).expr.free_symbols}
    paper = evaluate(convention.formula, {k: v for k, v in paper_inputs.items() if k in needed},
                     tuple(m for m in row.measured if m.name in needed))
    explained = agrees(paper, row) and _proved(convention.derivation)
    return Verdict(row, ours, paper, "explained" if explained else "differs")


def validate() -> list[Verdict]:
    """Every published row, judged."""
    return [judge(row) for row in published_rows()]
