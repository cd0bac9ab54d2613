"""The Derivation engine: an ordered list of claimed steps, each one checked.

Claims:
- ``defines``: introduces a quantity from its parts (nothing to prove);
- ``equals``: the new expression equals an earlier step (proved exactly);
- ``approximates``: earlier = new·(1 + error), proved exactly, with the error
  shown to vanish in a stated limit and the condition said in words;
- ``bounds``: the new expression is an upper (or lower) bound of an earlier one;
- ``refutes``: a source's figure differs from the correct one (a slip, shown);
- ``concludes``: the last expression equals a catalogue formula, which ties
  the stated result (``formulas``) to its proof (``derivations``).

``Derivation.check()`` returns outcomes; a failure names the derivation and
the step and shows both sides.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

import sympy as sp

from derivations.proof import Verdict, prove_equal, prove_nonnegative, prove_vanishes, valued
from formulas.catalogue import Source, get

Claim = Literal["defines", "equals", "approximates", "bounds", "refutes", "concludes"]


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
    error: sp.Basic | None = None
    limits: tuple[tuple[sp.Symbol, sp.Basic], ...] = ()
    direction: Literal["upper", "lower"] = "upper"
    correct: sp.Basic | None = None
    source: Source | None = None
    formula_id: str | None = None
    where: dict = field(default_factory=dict)
    unit: str = ""  # a refutation's unit, for printing its two figures
    binary: bool = False  # print them in binary prefixes (GiB), as the source speaks

    def expression(self) -> sp.Basic:
        """The step's expression; a conclusion reads the catalogue when checked."""
        if self.claim == "concludes":
            return get(self.formula_id).expr.subs(self.where)
        return self.expr


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

    @property
    def where(self) -> str:
        return f"{self.derivation} step {self.index} ({self.label})"

    def describe(self) -> str:
        text = f"{self.where}: {self.claim} {'proved' if self.ok else 'FAILED'} [{self.method}]"
        if not self.ok:
            text += f"\n    left:  {self.lhs}\n    right: {self.rhs}"
        if self.detail:
            text += f"\n    {self.detail}"
        return text


@dataclass
class Derivation:
    """Build with the claim methods, in the order the argument runs."""

    id: str
    title: str
    sources: tuple[Source, ...] = ()
    steps: list[Step] = field(default_factory=list)

    # --- building -------------------------------------------------------------
    def defines(self, label: str, expr: sp.Basic, why: str) -> sp.Basic:
        self.steps.append(Step("defines", label, sp.sympify(expr), why))
        return expr

    def equals(self, label: str, expr: sp.Basic, why: str, *, of: str | None = None) -> sp.Basic:
        self.steps.append(Step("equals", label, sp.sympify(expr), why, **self._reference(of)))
        return expr

    def approximates(
        self,
        label: str,
        expr: sp.Basic,
        why: str,
        *,
        condition: str,
        error: sp.Basic,
        limits: tuple[tuple[sp.Symbol, sp.Basic], ...],
        of: str | None = None,
    ) -> sp.Basic:
        """``of`` = expr · (1 + error) exactly, and error → 0 under ``limits``."""
        self.steps.append(
            Step(
                "approximates",
                label,
                sp.sympify(expr),
                why,
                **self._reference(of),
                condition=condition,
                error=sp.sympify(error),
                limits=tuple(limits),
            )
        )
        return expr

    def bounds(
        self, label: str, expr: sp.Basic, why: str, *, direction: Literal["upper", "lower"], of: str | None = None
    ) -> sp.Basic:
        self.steps.append(Step("bounds", label, sp.sympify(expr), why, **self._reference(of), direction=direction))
        return expr

    def refutes(
        self, label: str, claimed: sp.Basic, why: str, *, correct: sp.Basic, source: Source, unit: str = "", binary: bool = False
    ) -> None:
        """The source's figure ``claimed`` differs from ``correct`` (both in ``unit``, when they are numbers)."""
        self.steps.append(
            Step("refutes", label, sp.sympify(claimed), why, correct=sp.sympify(correct), source=source, unit=unit, binary=binary)
        )

    def concludes(
        self,
        formula_id: str,
        why: str = "the catalogue's closed form",
        *,
        of: str | None = None,
        where: dict | None = None,
    ) -> None:
        """The formula (with ``where`` substituted into it) equals the step ``of``."""
        self.steps.append(
            Step("concludes", formula_id, None, why, **self._reference(of), formula_id=formula_id, where=dict(where or {}))
        )

    def _reference(self, label: str | None) -> dict:
        """The earlier step a new claim is about: the last one (not a refutation), or the last named ``label``."""
        for index in range(len(self.steps) - 1, -1, -1):
            candidate = self.steps[index]
            if (label is None and candidate.claim != "refutes") or candidate.label == label:
                return {"reference": candidate.label, "reference_index": index}
        if label is None:
            raise ValueError(f"{self.id}: the first step must define something")
        raise ValueError(f"{self.id}: no earlier step named {label!r}")

    def earlier(self, step: Step) -> Step:
        """The step that ``step`` makes its claim about."""
        return self.steps[step.reference_index]

    def step(self, label: str) -> Step:
        for candidate in reversed(self.steps):
            if candidate.label == label:
                return candidate
        raise KeyError(f"{self.id}: no step named {label!r}")

    @property
    def established(self) -> list[str]:
        return [s.formula_id for s in self.steps if s.claim == "concludes"]

    # --- checking -------------------------------------------------------------
    def check(self) -> list[Outcome]:
        return [self._check_step(index, step) for index, step in enumerate(self.steps, start=1)]

    def _check_step(self, index: int, step: Step) -> Outcome:
        try:
            verdict, lhs, rhs = self._verdict(step)
        except Exception as error:  # a step that cannot even be evaluated has failed
            verdict, lhs, rhs = Verdict(False, "error", f"{type(error).__name__}: {error}"), "", ""
        return Outcome(
            derivation=self.id,
            index=index,
            label=step.label,
            claim=step.claim,
            why=step.why,
            ok=verdict.ok,
            method=verdict.method,
            detail=verdict.detail,
            lhs=lhs,
            rhs=rhs,
        )

    def _verdict(self, step: Step) -> tuple[Verdict, str, str]:
        if step.claim == "defines":
            return Verdict(True, "definition"), step.label, sp.sstr(step.expr)
        if step.claim == "refutes":
            return _refutation(step)
        earlier = self.earlier(step).expression()
        new = step.expression()
        lhs, rhs = sp.sstr(earlier), sp.sstr(new)
        if step.claim in ("equals", "concludes"):
            return prove_equal(earlier, new), lhs, rhs
        if step.claim == "approximates":
            identity = prove_equal(earlier, new * (1 + step.error))
            if not identity.ok:
                return Verdict(False, identity.method, f"{step.reference} ≠ {step.label}·(1 + error): {identity.detail}"), lhs, rhs + f" · (1 + {step.error})"
            vanishing = prove_vanishes(step.error, step.limits)
            return Verdict(vanishing.ok, f"exact error, {vanishing.method}", vanishing.detail), lhs, rhs
        if step.claim == "bounds":
            gap = new - earlier if step.direction == "upper" else earlier - new
            return prove_nonnegative(gap), lhs, rhs
        raise ValueError(f"unknown claim {step.claim!r}")


def _refutation(step: Step) -> tuple[Verdict, str, str]:
    claimed, correct = valued(step.expr), valued(step.correct)
    same = prove_equal(claimed, correct)
    if same.method != "counterexample":
        return Verdict(False, "refutation", "no point shows the source's figure wrong"), sp.sstr(claimed), sp.sstr(correct)
    ratio = sp.simplify(claimed / correct)
    return Verdict(True, "refutation", f"{step.source}: claimed/correct = {ratio}"), sp.sstr(claimed), sp.sstr(correct)
