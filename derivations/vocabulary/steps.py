"""A derivation's steps as data: what each claims and needs to be checked, its verdict, and the label a later step
cites it by (``StepName``, printed by ``label_latex``).

The engine (derivations/vocabulary/engine.py) builds and checks them; the printers (``latex``, ``step_pieces``) read
them. Below both, so that neither imports the other back.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from functools import cached_property
from typing import Literal

import sympy as sp

from llm_formulas.derivations.vocabulary.proof import Regime, condition_limits, valued
from llm_formulas.formulas.vocabulary.catalogue import Source, lookup

__all__ = ["CITED_CLAIMS", "Claim", "Outcome", "Step", "StepName", "cited", "label_latex"]

Claim = Literal["defines", "equals", "solves", "approximates", "bounds", "refutes", "concludes"]


@dataclass
class Step:
    """One claimed step: its expression, the reason, and what the claim needs to be checked."""

    claim: Claim
    label: str
    expr: sp.Basic | None
    why: str
    reference: str | None = None  # the label of the earlier step, for display
    reference_index: int | None = None  # its position: labels may repeat (``F`` defined, then ``F`` rewritten)
    condition: str = ""
    regimes: tuple[Regime, ...] = ()
    dropped: sp.Basic | None = None
    stated_limits: tuple[tuple[sp.Symbol, sp.Basic], ...] = ()
    unknown: sp.Symbol | None = None
    target: sp.Basic | None = None
    reads: tuple[str, ...] = ()  # catalogue entries read while this step was built
    parts: tuple[int, ...] = ()  # a definition that sums earlier steps: their positions
    aside: bool = False  # an identity proved for its own sake
    direction: Literal["upper", "lower"] = "upper"
    correct: sp.Basic | None = None
    source: Source | None = None
    formula_id: str | None = None
    where: dict = field(default_factory=dict)
    unit: str = ""  # a refutation's unit, for printing its two figures
    binary: bool = False  # print them in binary prefixes (GiB), as the source speaks
    shown: sp.Basic | None = None  # the expression as printed: parts named, earlier steps cited by their labels
    pieces: tuple[int, ...] = ()  # positions of the named pieces ``shown`` holds (derivations.vocabulary.step_pieces)
    piece: bool = False  # a named piece of a long step, defined to print it in one look (derivations.vocabulary.step_pieces)
    correct_shown: sp.Basic | None = None  # a refutation's correct figure as printed, its pieces named

    def expression(self) -> sp.Basic:
        """The step's expression; a conclusion reads the catalogue when checked."""
        if self.claim == "concludes":
            return lookup(self.formula_id).dimensioned.subs(self.where)
        return self.expr

    @property
    def displayed(self) -> sp.Basic | None:
        """What a reader sees: the expression as written (parts named, earlier steps cited), else as proved."""
        return self.expr if self.shown is None else self.shown

    @property
    def correct_displayed(self) -> sp.Basic | None:
        """A refutation's correct figure as a reader sees it: its pieces named, else as checked."""
        return self.correct if self.correct_shown is None else self.correct_shown

    @cached_property
    def error(self) -> sp.Basic | None:
        """An approximation's exact relative error dropped/kept (for display)."""
        return None if self.dropped is None else sp.cancel(valued(self.dropped) / valued(self.expr))

    @property
    def limits(self) -> tuple[tuple[sp.Symbol, sp.Basic], ...]:
        """The limits an approximation holds in: the stated ones, or one per regime of its condition."""
        return self.stated_limits or (condition_limits(self.regimes) if self.regimes else ())


@dataclass(frozen=True)
class Outcome:
    """The checked result of one step: where it is, proved or not, how, and both sides when it failed."""

    derivation: str
    index: int
    label: str
    claim: str
    why: str
    ok: bool
    method: str
    detail: str = ""
    lhs: str = ""
    rhs: str = ""
    difference: str = ""  # left − right, expanded, beside a failure

    @property
    def where(self) -> str:
        return f"{self.derivation} step {self.index} ({self.label})"

    def describe(self) -> str:
        text = f"{self.where}: {self.claim} {'proved' if self.ok else 'FAILED'} [{self.method}]"
        if not self.ok and (self.lhs or self.rhs):
            text += f"\n    left:  {self.lhs}\n    right: {self.rhs}"
            if self.difference:
                text += f"\n    left − right: {self.difference}"
        if self.detail:
            text += f"\n    {self.detail}"
        return text


_GREEK = {"Ψ": r"\Psi", "Σ": r"\Sigma", "ε": r"\varepsilon"}


def label_latex(label: str) -> str:
    """A step label such as ``Ψ_attn`` or ``F_fwd/(bs)`` as LaTeX."""
    text, piece = label, re.fullmatch(r"(.*) \[(\d+)\]", label)
    if piece:  # a named piece of a long step (derivations.vocabulary.step_pieces): A [2] as A^(2)
        return "{" + label_latex(piece.group(1)) + "}^{(" + piece.group(2) + ")}"
    for char, command in _GREEK.items():
        text = text.replace(char, command + " ")
    text = re.sub(
        r"_([A-Za-z][A-Za-z_]*(?:\^[A-Za-z]+)?)",
        lambda m: "_{" + m.group(1).replace("_", r"\_").replace("^", "}^{") + "}",
        text,
    )
    text = text.replace("²", "^2")
    return text.strip()


class StepName(sp.Symbol):
    """An earlier step, cited by its label where a later one holds its expression (printing only)."""

    def _latex(self, printer: object) -> str:
        return label_latex(self.name)

    def sort_key(self, order: object = None) -> tuple:
        """Numbered pieces in a sum in their order: ``A [2]`` before ``A [10]``."""
        numbered = re.sub(r"\d+", lambda digits: digits.group().zfill(6), self.name)
        return self.class_key(), (1, (numbered,)), sp.S.One.sort_key(), sp.S.One


CITED_CLAIMS = ("defines", "equals", "solves", "approximates")


def cited(written: sp.Basic, earlier: list[Step]) -> sp.Basic:
    """``written`` with each proper sub-expression that is an earlier step's (of some size) named by that step's label:
    a step prints as "the parts of step 3", not their expansion again."""
    names = {}
    for step in earlier:
        if step.claim in CITED_CLAIMS and step.expr is not None and sp.count_ops(step.expr) > 3:
            names[step.expr] = StepName(step.label)
    if not names:
        return written
    sums = sorted((expr for expr in names if expr.is_Add), key=lambda expr: -len(expr.args))

    def cite_sums(node: sp.Add) -> sp.Basic:  # an Add flattens the sums it adds: find each earlier one among its terms
        terms = Counter(node.args)
        found = []
        for earlier_sum in sums:
            needed = Counter(earlier_sum.args)
            if earlier_sum != node and not needed - terms:
                terms -= needed
                found.append(names[earlier_sum])
        return sp.Add(*found, *terms.elements()) if found else node

    return written.xreplace(names).replace(lambda node: node.is_Add, cite_sums)
