"""The Derivation engine: an ordered list of claimed steps, each one checked.

Claims:
- ``defines``: introduces a quantity from its parts (nothing to prove);
- ``equals``: the new expression equals an earlier step (proved exactly);
- ``solves``: the new expression solves an earlier one = target for an unknown
  (proved by substituting it back);
- ``approximates``: earlier = new + dropped, proved exactly, with the dropped
  part written out and dropped/new shown to vanish under a symbolic condition
  (``much_less(s, 6*h)``: s/(6h) → 0);
- ``bounds``: the new expression is an upper (or lower) bound of an earlier one;
- ``refutes``: a source's figure differs from the correct one (a slip, shown);
- ``concludes``: the last expression equals a catalogue formula, which ties
  the stated result (``formulas``) to its proof (``derivations``).

A step is printed as written: catalogue parts by name, earlier steps it repeats by their labels (``cited``), and
one still longer than a person reads in one look in named pieces, definitions set just before it
(``derivations.vocabulary.step_pieces``); what each step proves is its expression, whatever it prints.

``Derivation.check()`` returns outcomes; a failure names the derivation and
the step and shows both sides. Soundness rules, checked before the claims:
- no circular proof: a derivation may not read (``formulas.vocabulary.catalogue.get``) the
  entry it concludes before it concludes it; reads are traced while it is built;
- no dead step: every ``defines``, ``equals`` and ``solves`` step must feed a
  result (a conclusion, an approximation, a bound, a refutation, or a cross-check
  against another catalogue entry): its expression appears in a later step's,
  or a later step makes its claim about it;
- an approximation's dropped part may not be built from the exact or the
  approximate side (``(exact − printed)/printed`` makes any approximation exact);
- an approximation's condition is symbolic, and limits it states must be the
  condition's.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

import sympy as sp

from llm_formulas.derivations.vocabulary.proof import (
    Regime,
    Verdict,
    built_from,
    changed_kept_terms,
    limits_match,
    prove_equal,
    prove_negligible,
    prove_nonnegative,
    valued,
)
from llm_formulas.derivations.vocabulary.proof_cache import cached_verdict
from llm_formulas.formulas.vocabulary import scope
from llm_formulas.formulas.vocabulary.catalogue import Source, lookup, take_reads, within
from llm_formulas.formulas.vocabulary.dimensions import DimensionError, units_of
from llm_formulas.formulas.vocabulary.expressions import ExpressionError, as_expression
from llm_formulas.formulas.vocabulary.parts import expand_parts
from llm_formulas.derivations.vocabulary.steps import Outcome, Step, cited
from llm_formulas.formulas.vocabulary.symbols import resolve

__all__ = ["Derivation", "building"]


def building() -> None:
    """Start building a derivation afresh: forget the catalogue reads made so far in this thread (``check`` calls
    it before every builder, so that one builder's reads are not another's)."""
    take_reads()



RESULTS = ("concludes", "approximates", "bounds", "refutes")


@dataclass
class Derivation:
    """Build with the claim methods, in the order the argument runs."""

    id: str
    title: str
    sources: tuple[Source, ...] = ()
    steps: list[Step] = field(default_factory=list)

    def __post_init__(self) -> None:
        # Catalogue reads of this thread made before this derivation existed (since the last one took its reads):
        # ``expr = get(id).expr`` first and ``Derivation(...)`` after must not hide a circular proof.
        self._prior_reads = frozenset(take_reads())
        self.catalogue = scope.active()  # a user's catalogue, whose symbols and formulas its steps use

    def _add(self, step: Step, written: object = None) -> sp.Basic | None:
        """Append ``step``; its expression is returned (read from the string, when one was given). ``written`` is the
        expression as the author gave it: printed with its parts named and the earlier steps it holds cited by label."""
        from llm_formulas.derivations.vocabulary.step_pieces import in_pieces

        step.reads = tuple(dict.fromkeys(take_reads()))
        if written is not None:
            step.shown = cited(as_expression(written), self.steps)
        self.steps.extend(in_pieces(step, self.steps))  # a step too long to read in one look: its pieces first
        self.steps.append(step)
        return step.expr

    def _repr_latex_(self) -> str:
        """Jupyter shows the derivation as aligned numbered steps."""
        from llm_formulas.derivations.vocabulary.latex import derivation_latex

        return f"$${derivation_latex(self)}$$"

    # --- building -------------------------------------------------------------
    def defines(self, label: str, expr: sp.Basic, why: str, *, parts: tuple[str, ...] = ()) -> sp.Basic:
        """Introduce a quantity; with ``parts`` it is the sum of those earlier steps (proved)."""
        indices = tuple(self._reference(part)["reference_index"] for part in parts)
        return self._add(Step("defines", label, _expression(expr), why, parts=indices), expr)

    def equals(self, label: str, expr: sp.Basic, why: str, *, of: str | None = None, aside: bool = False) -> sp.Basic:
        """``expr`` equals the step ``of``; ``aside=True`` marks an identity proved for its own sake
        (a result, shown as such), not a step toward the conclusion."""
        return self._add(Step("equals", label, _expression(expr), why, **self._reference(of), aside=aside), expr)

    def solves(self, label: str, expr: sp.Basic, why: str, *, unknown: sp.Symbol | str, target: sp.Basic,
               of: str | None = None) -> sp.Basic:
        """``expr`` is the value of ``unknown`` (a symbol, or its name) at which the step ``of`` equals ``target``."""
        return self._add(Step("solves", label, _expression(expr), why, **self._reference(of),
                              unknown=_symbol(unknown), target=_expression(target)), expr)

    def approximates(
        self,
        label: str,
        expr: sp.Basic,
        why: str,
        *,
        condition: Regime | tuple[Regime, ...] | str,
        dropped: sp.Basic | None = None,
        error: sp.Basic | None = None,
        limits: tuple[tuple[sp.Symbol, sp.Basic], ...] = (),
        of: str | None = None,
    ) -> sp.Basic:
        """``of`` = expr + dropped exactly, and dropped/expr → 0 under ``condition``.

        ``condition`` is symbolic: ``much_less(s, 6*h)`` or a tuple of them. The
        dropped part is written out (``error``, a relative error, means dropped =
        expr·error). ``limits``, if stated, must be the condition's.
        """
        written, expr = expr, _expression(expr)
        if dropped is None and error is not None:
            dropped = expr * _expression(error)
        regimes = (condition,) if isinstance(condition, Regime) else condition if isinstance(condition, tuple) else ()
        if not all(isinstance(regime, Regime) for regime in regimes):
            raise ExpressionError(f"{self.id}: a condition is much_less(...) or much_greater(...), or a tuple of them")
        return self._add(
            Step(
                "approximates",
                label,
                expr,
                why,
                **self._reference(of),
                condition=" and ".join(str(r) for r in regimes) if regimes else str(condition),
                regimes=regimes,
                dropped=None if dropped is None else _expression(dropped),
                stated_limits=tuple((_symbol(symbol), _expression(value)) for symbol, value in limits),
            ),
            written,
        )

    def bounds(
        self, label: str, expr: sp.Basic, why: str, *, direction: Literal["upper", "lower"], of: str | None = None
    ) -> sp.Basic:
        return self._add(Step("bounds", label, _expression(expr), why, **self._reference(of), direction=direction), expr)

    def refutes(
        self, label: str, claimed: sp.Basic, why: str, *, correct: sp.Basic, source: Source, unit: str = "", binary: bool = False
    ) -> None:
        """The source's figure ``claimed`` differs from ``correct`` (both in ``unit``, when they are numbers)."""
        self._add(Step("refutes", label, _expression(claimed), why, correct=_expression(correct), source=source,
                       unit=unit, binary=binary))

    def concludes(
        self,
        formula_id: str,
        why: str = "the catalogue's closed form",
        *,
        of: str | None = None,
        where: dict | None = None,
    ) -> None:
        """The formula (with ``where`` substituted into it) equals the step ``of``."""
        bindings = {resolve(name): _expression(value) for name, value in (where or {}).items()}  # "gated" or gated
        self._add(Step("concludes", formula_id, None, why, **self._reference(of), formula_id=formula_id, where=bindings))

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

    @property
    def reads(self) -> set[str]:
        """Every catalogue entry read while the derivation was built."""
        return {formula_id for step in self.steps for formula_id in step.reads}

    # --- checking -------------------------------------------------------------
    def check(self) -> list[Outcome]:
        unsound = self.soundness()
        return [
            self._outcome(index, step, unsound[index]) if index in unsound else self._check_step(index, step)
            for index, step in enumerate(self.steps, start=1)
        ]

    def soundness(self) -> dict[int, Verdict]:
        """Steps (1-based) that break a soundness rule, each with the reason."""
        found: dict[int, Verdict] = {}
        for index, step in enumerate(self.steps, start=1):
            if step.claim == "concludes":
                verdict = self._circularity(index, step)
                if verdict is not None:
                    found[index] = verdict
            elif step.claim == "approximates":
                verdict = self._approximation_soundness(step)
                if verdict is not None:
                    found[index] = verdict
            if index not in found:
                verdict = self._unit_soundness(step)
                if verdict is not None:
                    found[index] = verdict
        live = self._live()
        for index, step in enumerate(self.steps, start=1):
            if step.claim in ("defines", "equals", "solves") and index not in live and index not in found:
                found[index] = Verdict(
                    False,
                    "dead step",
                    f"no later step uses {step.label!r} (its expression appears in none, no claim is made about it): "
                    "a step must feed a conclusion, approximation, bound or cross-check (build the later step from it, "
                    "sum it with parts=, solve for it with solves(), or mark an identity proved for its own sake aside=True)",
                )
        return found

    def _circularity(self, index: int, step: Step) -> Verdict | None:
        """A conclusion may not rest on the entry it concludes. Two ways to read it back are caught:
        a read while this derivation was being built (traced per step), and an entry read before the derivation
        was created whose own expression a definition then holds (the same SymPy object: the value flowed in).
        A read before creation that no step uses (printing the entry, testing it) is no circularity."""
        for reader_index, reader in enumerate(self.steps[: index - 1], start=1):
            if step.formula_id in reader.reads:
                return Verdict(False, "circular", f"step {reader_index} ({reader.label}) read the catalogue entry "
                               f"{step.formula_id!r} that this step concludes: a derivation must build its result, "
                               "not read it back")
        if step.formula_id in self._prior_reads:
            try:
                entry = lookup(step.formula_id)
            except Exception:
                return None
            # the catalogue's expressions are objects of their own (catalogue.distinct): held is where they came
            # from, not their value, so the same expression typed by hand is no circularity
            held = {id(e) for e in (entry.expr, entry.dimensioned) if not e.is_Atom}
            for reader_index, reader in enumerate(self.steps[: index - 1], start=1):
                if reader.claim == "defines" and not reader.parts and reader.expr is not None and any(
                        id(node) in held for node in sp.preorder_traversal(reader.expr)):
                    return Verdict(False, "circular", f"step {reader_index} ({reader.label}) holds the catalogue's own "
                                   f"expression for {step.formula_id!r}, read before this derivation was created, that "
                                   "this step concludes: a derivation must build its result, not read it back")
        return None

    def _unit_soundness(self, step: Step) -> Verdict | None:
        """Units: every expression of a step has one unit, and the two sides of a claim, where both state a unit
        (a unit mark, a constant, a symbol with a unit), state the same one; a bare count is taken as unstated."""
        with within(self.catalogue):
            try:
                for part in (step.expr, step.dropped, step.correct, step.target):
                    if part is not None:
                        units_of(part)
                sides = self.identities(step) if step.claim != "bounds" else (self.earlier(step).expression(), step.expr)
                if sides is None:
                    return None
                left, right = (units_of(side) for side in sides)
            except DimensionError as error:
                return Verdict(False, "units", str(error))
            except Exception:  # a step that cannot be built (an unknown id) fails as a claim, with its error
                return None
        if not left.is_dimensionless and not right.is_dimensionless and left != right:
            return Verdict(False, "units", f"the left side is in {left}, the right side in {right}")
        return None

    def _approximation_soundness(self, step: Step) -> Verdict | None:
        if not step.regimes:
            return Verdict(
                False,
                "condition",
                f"the condition {step.condition!r} is words only: state it symbolically, e.g. condition=much_less(s, 6*h) "
                "for s ≪ 6h, so that the engine derives its limit",
            )
        if step.dropped is None:
            return Verdict(False, "dropped", "an approximation must write out what it drops: dropped=<the terms left out>")
        earlier = self.earlier(step)
        sides = [("the exact side", earlier.expr)] if earlier.expr is not None else []
        for name, side in sides + [("the approximate side", step.expr)]:
            substantial = side is not None and (isinstance(side, sp.Add) or len(valued(side).free_symbols) >= 2)
            if substantial and built_from(side, step.dropped):
                return Verdict(
                    False,
                    "error by construction",
                    f"the dropped part is built from {name} ({sp.sstr(side)[:60]}): exact = approximate + dropped then holds "
                    "whatever the approximation is; write the dropped terms out",
                )
        changed = changed_kept_terms(earlier.expression(), step.expr) if earlier.claim != "concludes" else []
        if changed:
            monomial, was, now = changed[0]
            return Verdict(
                False,
                "changed kept term",
                f"the approximation keeps {sp.sstr(monomial)} from the exact side but changes its coefficient "
                f"({was} → {now}): an approximation drops whole terms, it does not alter the ones it keeps",
            )
        if step.stated_limits:
            verdict = limits_match(step.regimes, step.stated_limits)
            if not verdict.ok:
                return verdict
        return None

    def _feeds(self, earlier_index: int, later: Step) -> bool:
        """Whether the step at ``earlier_index`` (0-based) is used by ``later``."""
        if later.reference_index == earlier_index or earlier_index in later.parts or earlier_index in later.pieces:
            return True
        earlier = self.steps[earlier_index]
        if earlier.expr is None:
            return False
        return any(part is not None and built_from(earlier.expr, part) for part in (later.expr, later.dropped, later.correct, later.target))

    def _live(self) -> set[int]:
        """Steps (1-based) that feed a result, directly or through other steps."""
        live: set[int] = set()
        work = [i for i, s in enumerate(self.steps) if s.claim in RESULTS or self._cross_check(s)]
        while work:
            index = work.pop()
            if index + 1 in live:
                continue
            live.add(index + 1)
            work.extend(i for i in range(index) if i + 1 not in live and self._feeds(i, self.steps[index]))
        return live

    def _cross_check(self, step: Step) -> bool:
        """An ``equals`` step that brings in another catalogue entry ties two stated results: a result itself."""
        established = set(self.established)
        return step.claim == "equals" and (step.aside or bool(set(step.reads) - established))

    def _check_step(self, index: int, step: Step) -> Outcome:
        try:
            with within(self.catalogue):
                verdict, lhs, rhs = cached_verdict(lambda: self._proved_content(step), lambda: self._verdict(step))
        except Exception as error:  # a step that cannot even be evaluated has failed
            verdict, lhs, rhs = Verdict(False, "error", f"{type(error).__name__}: {error}"), "", ""
        difference = ""
        if not verdict.ok and lhs and rhs and step.claim in ("equals", "concludes", "solves", "approximates"):
            sides = self.identities(step)
            if sides is not None:
                difference = sp.sstr(sp.expand(valued(sides[0]) - valued(sides[1])))
        return self._outcome(index, step, verdict, lhs, rhs, difference)

    def _outcome(self, index: int, step: Step, verdict: Verdict, lhs: str = "", rhs: str = "", difference: str = "") -> Outcome:
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
            difference=difference,
        )

    def identities(self, step: Step) -> tuple[sp.Basic, sp.Basic] | None:
        """The two sides a step claims are exactly equal (None for claims without one)."""
        if step.claim in ("equals", "concludes"):
            return self.earlier(step).expression(), step.expression()
        if step.claim == "solves":
            return self.earlier(step).expression().subs(step.unknown, step.expr), step.target
        if step.claim == "approximates" and step.dropped is not None:
            return self.earlier(step).expression(), step.expr + step.dropped
        return None

    def _proved_content(self, step: Step) -> tuple | None:
        """Everything a step's verdict depends on (the key of a kept proof, ``proof_cache``); None for a bare
        definition, which proves nothing."""
        if step.claim == "defines":
            return ("sum of parts", step.expr, *(self.steps[i].expr for i in step.parts)) if step.parts else None
        if step.claim == "refutes":
            return ("refutes", step.expr, step.correct, str(step.source))
        if step.claim == "approximates":
            regimes = tuple(value for r in step.regimes for value in (r.small, r.large, r.greater))
            return ("approximates", *self.identities(step), step.expr, step.dropped, step.condition, *regimes)
        if step.claim == "bounds":
            return ("bounds", step.direction, self.earlier(step).expression(), step.expr)
        return (step.claim, *self.identities(step))

    def _verdict(self, step: Step) -> tuple[Verdict, str, str]:
        if step.claim == "defines" and step.parts:
            total = sp.Add(*(self.steps[i].expr for i in step.parts))
            verdict = prove_equal(step.expr, total)
            if not verdict.ok:
                names = " + ".join(self.steps[i].label for i in step.parts)
                return Verdict(False, verdict.method, f"{step.label} is not the sum of its parts {names}: {verdict.detail}"), sp.sstr(step.expr), sp.sstr(total)
            return Verdict(True, f"sum of parts, {verdict.method}"), "", ""
        if step.claim == "defines":
            return Verdict(True, "definition"), "", ""
        if step.claim == "refutes":
            return _refutation(step)
        lhs, rhs = self.identities(step) or (self.earlier(step).expression(), step.expression())
        verdict = self._claim_verdict(step, lhs, rhs)
        if verdict.ok:  # the two sides are printed only where a reader needs them: beside a failure
            return verdict, "", ""
        return verdict, sp.sstr(valued(lhs)), sp.sstr(valued(rhs))

    def _claim_verdict(self, step: Step, lhs: sp.Basic, rhs: sp.Basic) -> Verdict:
        if step.claim in ("equals", "concludes", "solves"):
            return prove_equal(lhs, rhs)
        if step.claim == "approximates":
            identity = prove_equal(lhs, rhs)
            if not identity.ok:
                return Verdict(False, identity.method, f"{step.reference} ≠ {step.label} + dropped: {identity.detail}")
            negligible = prove_negligible(step.dropped, step.expr, step.regimes)
            return Verdict(negligible.ok, f"exact, {negligible.method}", negligible.detail)
        if step.claim == "bounds":
            gap = rhs - lhs if step.direction == "upper" else lhs - rhs
            return prove_nonnegative(gap)
        raise ValueError(f"unknown claim {step.claim!r}")


def _expression(value: object) -> sp.Basic:
    """A step's expression as the engine proves it: read (a string by the project's grammar) and every named
    catalogue part spelled out (formulas.vocabulary.parts), so a composed form and its expansion are the same claim."""
    return expand_parts(as_expression(value))


def _symbol(name_or_symbol: sp.Symbol | str) -> sp.Symbol:
    """An unknown or a limit's variable: the catalogue's symbol of that name, or the symbol given."""
    if isinstance(name_or_symbol, str):
        return resolve(name_or_symbol)
    if not isinstance(name_or_symbol, sp.Symbol):
        raise ExpressionError(f"expected a symbol or its name, got {type(name_or_symbol).__name__}")
    return name_or_symbol


def _refutation(step: Step) -> tuple[Verdict, str, str]:
    claimed, correct = valued(step.expr), valued(step.correct)
    if claimed.is_number != correct.is_number:  # a figure against an expression: an input left unset, not a slip
        return (Verdict(False, "refutation", "one side is a figure, the other still an expression: give its values"),
                sp.sstr(claimed), sp.sstr(correct))
    same = prove_equal(claimed, correct)
    if same.method != "counterexample":
        return Verdict(False, "refutation", "no point shows the source's figure wrong"), sp.sstr(claimed), sp.sstr(correct)
    ratio = sp.simplify(claimed / correct)
    return Verdict(True, "refutation", f"{step.source}: claimed/correct = {ratio}"), sp.sstr(claimed), sp.sstr(correct)
