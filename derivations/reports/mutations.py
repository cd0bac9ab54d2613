"""Mutation check: does every catalogue formula's statement matter to some proof?

For each formula the expression is changed one place at a time:
- every integer or rational coefficient n becomes n + 1;
- every numeric exponent e becomes e + 1;
- two symbols of the same unit are swapped;
- one term of a sum is dropped.
Each mutant replaces the catalogue entry, the derivations that conclude or read
it are rebuilt, and it is *killed* when its unit check fails, a derivation can
no longer be built, or one of their steps fails. A mutant that survives shows
a statement no proof pins: it needs a proof, or a note saying why the change is
equivalent.

Fast path: each identity step is first evaluated at a few random exact rational
points, which can only *refute* (a nonzero difference kills the mutant); the
full check (simplify, limits) runs only when no point refutes.
"""

from __future__ import annotations

import random
from contextlib import ExitStack
from dataclasses import dataclass, replace
from functools import cache, cached_property
from multiprocessing import get_context
from typing import Callable, Iterator

import sympy as sp

from llm_formulas.derivations.reports.catalogue import all_derivations, build, factories
from llm_formulas.derivations.vocabulary.engine import Derivation
from llm_formulas.derivations.vocabulary.proof import random_point, valued
from llm_formulas.formulas.vocabulary.catalogue import Formula, all_formulas, catalogue
from llm_formulas.formulas.vocabulary.dimensions import DimensionError, check_declared_unit
from llm_formulas.formulas.vocabulary.symbols import constant_values, quantity


@dataclass(frozen=True)
class Mutant:
    """One changed formula: which, how, and the changed expression.

    A swap of two symbols is made on first use (``base`` is then the original expression): rebuilding
    every expression for every pair of same-unit symbols is most of the cost of listing the mutants,
    and a sample or a worker process needs only its own."""

    formula_id: str
    change: str
    base: sp.Basic
    swap: tuple[sp.Symbol, sp.Symbol] | None = None

    @cached_property
    def expr(self) -> sp.Basic:
        if self.swap is None:
            return self.base
        first, second = self.swap
        return self.base.xreplace({first: second, second: first})


@dataclass(frozen=True)
class Verdict:
    """A mutant's fate: killed (and by which check) or survived."""

    mutant: Mutant
    killed_by: str | None

    @property
    def killed(self) -> bool:
        return self.killed_by is not None


@dataclass(frozen=True)
class MutationReport:
    verdicts: tuple[Verdict, ...]

    @property
    def survivors(self) -> list[Verdict]:
        return [v for v in self.verdicts if not v.killed]

    @property
    def killed(self) -> int:
        return sum(v.killed for v in self.verdicts)

    @property
    def rate(self) -> float:
        return self.killed / len(self.verdicts) if self.verdicts else 1.0

    def as_json(self) -> dict:
        return {
            "mutants": len(self.verdicts),
            "killed": self.killed,
            "survivors": [{"id": v.mutant.formula_id, "change": v.mutant.change, "mutant": sp.sstr(v.mutant.expr)} for v in self.survivors],
        }

    def text(self) -> str:
        lines = [f"survived: {v.mutant.formula_id}: {v.mutant.change}" for v in self.survivors]
        lines.append(f"{len(self.verdicts)} mutants, {self.killed} killed ({100 * self.rate:.1f} %), {len(self.survivors)} survived")
        return "\n".join(lines)


# --- making mutants ------------------------------------------------------------------


def _rebuilt(expr: sp.Basic, path: tuple[int, ...], new: sp.Basic) -> sp.Basic:
    """``expr`` with the node at ``path`` (argument indices from the root) replaced by ``new``."""
    if not path:
        return new
    args = list(expr.args)
    args[path[0]] = _rebuilt(args[path[0]], path[1:], new)
    return expr.func(*args)


def _nodes(expr: sp.Basic, path: tuple[int, ...] = ()) -> Iterator[tuple[tuple[int, ...], sp.Basic]]:
    yield path, expr
    for index, arg in enumerate(expr.args):
        yield from _nodes(arg, path + (index,))


def _is_condition(node: sp.Basic) -> bool:
    return isinstance(node, (sp.logic.boolalg.Boolean, sp.Tuple)) and not isinstance(node, sp.Expr)


@cache
def mutants_of(formula: Formula) -> list[Mutant]:
    """Every single-place change of the formula's expression that is not the same expression (a swap
    that leaves it unchanged, as of t and p in t·p, is found when it is tried)."""
    expr = formula.dimensioned
    found: dict[str, Mutant] = {}
    text = cache(sp.sstr)  # a node is printed once, however many of its children are changed

    def add(change: str, path: tuple[int, ...], node: sp.Basic) -> None:
        # a change SymPy's canonical form undoes is no mutant; a subtler equivalence is found only if it survives
        if change in found:
            return
        new = _safe(expr, path, node)
        if new is not None and new != expr:
            found[change] = Mutant(formula.id, change, new)

    for path, node in _nodes(expr):
        parent = _parent(expr, path)
        if _is_condition(node) or (parent is not None and _is_condition(parent)):
            continue
        if isinstance(node, sp.Pow) and node.exp.is_Rational:
            add(f"exponent {text(node)} → power {node.exp + 1}", path, sp.Pow(node.base, node.exp + 1))
        elif node.is_Rational and node not in (sp.S.One, sp.S.NegativeOne) and not (isinstance(parent, sp.Pow) and path[-1] == 1):
            add(f"coefficient {node} → {node + 1} in {text(parent)[:60]}", path, node + 1)
        if isinstance(node, sp.Add) and len(node.args) >= 2:
            for index, term in enumerate(node.args):
                rest = node.args[:index] + node.args[index + 1 :]
                add(f"drop term {text(term)} of {text(node)[:60]}", path, sp.Add(*rest))
    for first, second in swapped_pairs(expr):
        change = f"swap {first} and {second}"
        found.setdefault(change, Mutant(formula.id, change, expr, (first, second)))
    return list(found.values())


def swapped_pairs(expr: sp.Basic) -> list[tuple[sp.Symbol, sp.Symbol]]:
    """The symbol swaps worth trying: among the symbols of one unit, in name order, each with the next. Every symbol
    is swapped (with one or two neighbours), n − 1 swaps for n symbols instead of every n(n − 1)/2 pairs: a family
    formula with 70 dimensionless symbols made 2,415 swaps, 84 % of the catalogue's 49,959 mutants, each one
    rebuilding the same derivations to show what the chain shows already, that no proof lets two inputs trade places."""
    by_unit: dict[str, list[sp.Symbol]] = {}
    for symbol in sorted((s for s in expr.free_symbols if not quantity(s).is_constant), key=lambda s: s.name):
        by_unit.setdefault(str(quantity(symbol).unit), []).append(symbol)
    return [pair for symbols in by_unit.values() for pair in zip(symbols, symbols[1:])]


def _differs_at_a_point(difference: sp.Basic, rng: random.Random, tries: int = 2) -> bool:
    """True when ``difference`` is exactly nonzero at a random exact point (it never proves a zero). The unit-carrying
    constants go in with the point, in one rebuild of the expression (putting them in first rebuilds it twice, and a
    large Max re-sorts its arguments each time)."""
    constants = constant_values()
    variables = {symbol for symbol in difference.free_symbols if symbol not in constants}
    for _ in range(tries):
        try:
            value = difference.xreplace(random_point(variables, rng) | constants)
        except (TypeError, ValueError, ZeroDivisionError):
            continue
        if value.is_number and value.is_finite and value != 0:
            return True
    return False


def _parent(expr: sp.Basic, path: tuple[int, ...]) -> sp.Basic | None:
    if not path:
        return None
    node = expr
    for index in path[:-1]:
        node = node.args[index]
    return node


def _safe(expr: sp.Basic, path: tuple[int, ...], new: sp.Basic) -> sp.Basic | None:
    try:
        return _rebuilt(expr, path, new)
    except (TypeError, ValueError):
        return None


EQUIVALENT = "equivalent"  # the change does not change the formula: not a mutant at all


# --- killing them --------------------------------------------------------------------


def dependents() -> dict[str, list[tuple[Callable[[], Derivation], Derivation]]]:
    """For each formula id, the derivations (factory and built) that conclude it or read it."""
    found: dict[str, list] = {}
    for make, built in zip(factories(), all_derivations()):
        for formula_id in set(built.established) | built.reads:
            found.setdefault(formula_id, []).append((make, built))
    return found


def _refuted(derivation: Derivation, formula_id: str, rng: random.Random) -> str | None:
    """A step some random exact point shows false (only identities; never a proof).

    The steps that conclude or read the mutated formula are tried first.
    """
    steps = list(enumerate(derivation.steps, start=1))
    steps.sort(key=lambda pair: not (pair[1].formula_id == formula_id or formula_id in pair[1].reads))
    for index, step in steps:
        try:
            sides = derivation.identities(step)
            if sides is None:
                continue
            if _differs_at_a_point(sides[0] - sides[1], rng, tries=12):
                return f"{derivation.id} step {index} ({step.label})"
        except Exception:  # a side that cannot be evaluated is left to the full check
            continue
    return None


def kill(mutant: Mutant, readers: list[tuple[Callable[[], Derivation], Derivation]], rng: random.Random) -> str | None:
    """The check that kills the mutant, or None if it survives."""
    original = catalogue()[mutant.formula_id]
    if mutant.expr == original.dimensioned:
        return EQUIVALENT
    try:
        check_declared_unit(mutant.expr, original.unit)
    except DimensionError as error:
        return f"unit check ({error})"
    catalogue()[mutant.formula_id] = replace(original, dimensioned=mutant.expr)
    try:
        rebuilt = []
        # the derivations that conclude the formula first (they pin it): each rebuilt only when the ones before it
        # refuted nothing, so a mutant its own proof kills costs no rebuild of its many readers (family forms)
        for make, built in sorted(readers, key=lambda pair: mutant.formula_id not in pair[1].established):
            if mutant.formula_id in built.reads:
                try:
                    built = build(make)
                except Exception as error:  # a derivation that cannot be built any more
                    return f"{built.id} cannot be built ({type(error).__name__})"
            where = _refuted(built, mutant.formula_id, rng)
            if where:
                return where
            rebuilt.append(built)
        for derivation in rebuilt:
            failed = [o for o in derivation.check() if not o.ok]
            if failed:
                return failed[0].where
        if sp.expand(valued(mutant.expr) - valued(original.expr)) == 0:
            return EQUIVALENT
        return None
    finally:
        catalogue()[mutant.formula_id] = original


_READERS: dict = {}  # set before the worker processes fork: they inherit the built derivations


def _try(mutant: Mutant) -> Verdict:
    """One mutant's verdict; its random points depend on the mutant only, so any worker gives the same."""
    rng = random.Random(f"{mutant.formula_id}:{mutant.change}")
    return Verdict(mutant, kill(mutant, _READERS.get(mutant.formula_id, []), rng))


def chosen(sample: int | None = None, per_formula: int | None = None, seed: int = 17) -> list[Mutant]:
    """Every mutant of the catalogue; at most ``per_formula`` random ones of each formula (every formula keeps some);
    then a random ``sample`` of those. The same seed chooses the same mutants."""
    rng = random.Random(seed)
    mutants = []
    for formula in all_formulas():
        own = mutants_of(formula)
        mutants += rng.sample(own, per_formula) if per_formula is not None and per_formula < len(own) else own
    if sample is not None and sample < len(mutants):
        mutants = rng.sample(mutants, sample)
    return mutants


def run(
    sample: int | None = None, seed: int = 17, progress: Callable[[int, int], None] | None = None, workers: int = 1,
    per_formula: int | None = None,
) -> MutationReport:
    """Make and try the mutants ``chosen`` picks (all of them by default), on ``workers`` processes."""
    mutants = chosen(sample, per_formula, seed)
    _READERS.clear()
    _READERS.update(dependents())
    verdicts = []
    with ExitStack() as stack:
        if workers > 1:
            pool = stack.enter_context(get_context("fork").Pool(workers))
            tried = pool.imap(_try, mutants, chunksize=4)
        else:
            tried = map(_try, mutants)
        for index, verdict in enumerate(tried, start=1):
            verdicts.append(verdict)
            if progress:
                progress(index, len(mutants))
    return MutationReport(tuple(v for v in verdicts if v.killed_by != EQUIVALENT))
