"""Proof primitives: exact equality, vanishing error, sign, and difference.

Equality climbs a ladder of exact manipulations (expand, cancel, together,
simplify); it is proved only when one of them reduces the difference to 0.
Evaluation at random exact rational points can only *refute* (a point where
the sides differ is a counterexample) or *corroborate*; it never proves.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

import sympy as sp

from llm_formulas.formulas.vocabulary.expressions import as_expression, as_sympy
from llm_formulas.formulas.vocabulary.symbols import constant_values, is_declared, quantity, resolve

__all__ = ["Regime", "Verdict", "much_greater", "much_less", "prove_equal", "prove_negligible", "prove_nonnegative",
           "prove_vanishes", "valued"]

def _numerator(difference: sp.Basic) -> sp.Basic:
    """The numerator of the difference over one common denominator, expanded: it is 0 exactly when the difference
    is 0 as a rational function. Far cheaper than expanding a quotient of sums (a solved-for unknown put back: 0.4 s
    where ``expand`` takes 8 s and ``cancel`` 14 s)."""
    return sp.expand(sp.fraction(sp.together(difference))[0])


_QUICK = (("common denominator", _numerator), ("expand", sp.expand), ("doit", lambda e: sp.expand(e.doit())))
_SLOW = (
    ("cancel", sp.cancel),
    ("together", lambda e: sp.cancel(sp.together(e))),
    ("simplify", sp.simplify),
)


@dataclass(frozen=True)
class Verdict:
    """A proof attempt's result: ok, the method that decided it, and details (a counterexample, a limit)."""

    ok: bool
    method: str
    detail: str = ""


def valued(expr: sp.Basic, values: dict[sp.Symbol | str, sp.Basic] | None = None) -> sp.Basic:
    """``expr`` with the unit-carrying constants (and ``values``, if given) put in.

    ``values`` may name symbols by string (``{"h": 768}``); an unknown name raises with the nearest names.
    Constants are plain symbols, so ``xreplace`` replaces them structurally: exact,
    and an order of magnitude faster than ``subs`` (rendering calls this thousands of times).
    """
    given = {resolve(key) if isinstance(key, str) else key: as_expression(value) for key, value in (values or {}).items()}
    return as_expression(expr).xreplace(constant_values() | given)


def prove_equal(lhs: sp.Basic, rhs: sp.Basic) -> Verdict:
    """Prove lhs == rhs by exact symbolic manipulation: expand first; then, before the costly rational-function
    steps and ``simplify``, random exact points that can only refute (a false claim is shown false in
    milliseconds instead of failing ``simplify`` for seconds); a point never proves anything."""
    difference = valued(lhs) - valued(rhs)
    for method, step in _QUICK:
        if step(difference) == 0:
            return Verdict(True, method)
    counterexample = find_counterexample(difference)
    if counterexample is not None:
        point, value = counterexample
        return Verdict(False, "counterexample", f"at {point} the sides differ by {value}")
    for method, step in _SLOW:
        if step(difference) == 0:
            return Verdict(True, method)
    return Verdict(False, "unproved", "no counterexample at random rational points, but no exact proof either")


def random_point(symbols, rng: random.Random) -> dict[sp.Symbol, sp.Rational]:
    """An exact point that respects each symbol's assumptions (integers stay integers)."""
    point = {}
    for symbol in sorted(symbols, key=lambda x: x.name):
        lowest = 1 if symbol.is_positive else 0
        highest = _maximum(symbol) or 97
        if symbol.is_integer:
            point[symbol] = sp.Integer(rng.randint(lowest, highest))
        elif highest < 97:
            point[symbol] = sp.Rational(rng.randint(1, 97 * highest), 97)
        else:
            point[symbol] = sp.Rational(rng.randint(1, 997), rng.randint(1, 97))
    return point


def _maximum(symbol: sp.Symbol) -> int | None:
    return int(quantity(symbol).maximum) if is_declared(symbol.name) and quantity(symbol).maximum is not None else None


def find_counterexample(difference: sp.Basic, tries: int = 24, seed: int = 2024):
    """A point where ``difference`` is exactly nonzero, if one turns up."""
    rng = random.Random(seed)
    for _ in range(tries):
        point = random_point(difference.free_symbols, rng)
        value = difference.xreplace(point)  # every symbol given a number: xreplace evaluates as subs does, far faster
        if value.is_number and value.is_finite and value != 0:  # 1/0 or 0/0 at the point refutes nothing
            return point, value
    return None


def prove_vanishes(error: sp.Basic, limits: tuple[tuple[sp.Symbol, sp.Basic], ...]) -> Verdict:
    """Prove that ``error`` tends to 0 when the limits are taken in order."""
    expr = valued(error)
    for symbol, point in limits:
        expr = sp.limit(expr, symbol, point)
    if expr == 0:
        described = ", then ".join(f"{s} → {p}" for s, p in limits)
        return Verdict(True, "limit", f"error → 0 as {described}")
    return Verdict(False, "limit", f"error tends to {expr}, not 0")


@dataclass(frozen=True)
class Regime:
    """A symbolic condition ``small ≪ large``: it holds in the limit small/large → 0.

    ``much_less(s, 6*h)`` is the condition s ≪ 6h; the engine derives the limit
    s/(6h) → 0 from it and checks that any limits a step states are this one's.
    """

    small: sp.Basic
    large: sp.Basic
    greater: bool = False  # written large ≫ small

    @property
    def ratio(self) -> sp.Basic:
        return valued(self.small / self.large)

    def __str__(self) -> str:
        if self.greater:
            return f"{_plain(self.large)} ≫ {_plain(self.small)}"
        return f"{_plain(self.small)} ≪ {_plain(self.large)}"

    def symbol_limit(self, taken: set[sp.Symbol]) -> tuple[sp.Symbol, sp.Basic]:
        """One symbol limit that makes the ratio vanish: a symbol of the large side → ∞
        (or, when the large side is a number, one of the small side → 0)."""
        large, small = valued(self.large), valued(self.small)
        for symbol in sorted(large.free_symbols - small.free_symbols, key=lambda x: x.name):
            if symbol not in taken and sp.limit(self.ratio, symbol, sp.oo) == 0:
                return symbol, sp.oo
        for symbol in sorted(small.free_symbols - large.free_symbols, key=lambda x: x.name):
            if symbol not in taken and sp.limit(self.ratio, symbol, 0, "+") == 0:
                return symbol, sp.Integer(0)
        raise ValueError(f"no single symbol's limit makes {self} hold")


def _plain(expr: sp.Basic) -> str:
    """A short human form: 12*h**2*l → 12h²l."""
    return sp.sstr(expr).replace("**2", "²").replace("**3", "³").replace("*", "")


def much_less(small: sp.Basic, large: sp.Basic) -> Regime:
    """The condition small ≪ large (``much_less(s, 6*h)`` for s ≪ 6h)."""
    return Regime(as_expression(small), as_expression(large))


def much_greater(large: sp.Basic, small: sp.Basic) -> Regime:
    """The condition large ≫ small (``much_greater(h, 1)`` for h ≫ 1)."""
    return Regime(as_expression(small), as_expression(large), greater=True)


def condition_limits(regimes: tuple[Regime, ...]) -> tuple[tuple[sp.Symbol, sp.Basic], ...]:
    """Symbol limits, one per regime, under which every regime holds (for display and notebooks)."""
    taken: set[sp.Symbol] = set()
    limits = []
    for regime in regimes:
        ratio = regime.ratio
        for symbol, point in limits:
            ratio = sp.limit(ratio, symbol, point)
        if ratio == 0:  # an earlier regime's limit already makes this one hold (s ≪ 6h's h → ∞ gives h ≫ 1)
            continue
        symbol, point = regime.symbol_limit(taken)
        taken.add(symbol)
        limits.append((symbol, point))
    return tuple(limits)


def limits_match(regimes: tuple[Regime, ...], limits: tuple[tuple[sp.Symbol, sp.Basic], ...]) -> Verdict:
    """The stated limits must make each regime's ratio vanish, and only use the condition's symbols."""
    described = ", then ".join(f"{s} → {p}" for s, p in limits)
    condition = " and ".join(str(r) for r in regimes)
    symbols = set().union(*(r.ratio.free_symbols for r in regimes)) if regimes else set()
    for symbol, _ in limits:
        if symbol not in symbols:
            return Verdict(False, "condition", f"the stated limit {symbol} → ∞/0 is not the condition's: {symbol} does not appear in {condition}")
    for regime in regimes:
        ratio = regime.ratio
        for symbol, point in limits:
            ratio = sp.limit(ratio, symbol, point)
        if ratio != 0:
            return Verdict(False, "condition", f"the stated limits ({described}) are not the condition's: they leave {regime} at ratio {ratio}, not 0")
    return Verdict(True, "condition")


def prove_negligible(dropped: sp.Basic, kept: sp.Basic, regimes: tuple[Regime, ...]) -> Verdict:
    """Prove dropped/kept → 0 when every regime's ratio → 0 together.

    Each regime small ≪ large becomes small = ε·large, solved for one symbol of its
    own; then the limit ε → 0⁺ is taken, the other symbols held fixed.
    """
    epsilon = sp.Dummy("epsilon", positive=True)
    expr = sp.cancel(valued(dropped) / valued(kept))
    taken: set[sp.Symbol] = set()
    for regime in regimes:
        ratio = regime.ratio
        # the side the condition is about (s in s ≪ 6h, M in M ≫ ridge) is scaled; the other side held fixed
        subject, other = (regime.large, regime.small) if regime.greater else (regime.small, regime.large)
        candidates = sorted(valued(subject).free_symbols - taken, key=lambda x: x.name) or sorted(
            valued(other).free_symbols - taken, key=lambda x: x.name
        )
        scaled = None
        for symbol in candidates:
            stand_in = sp.Dummy(symbol.name, positive=True)
            solutions = [x for x in sp.solve(sp.Eq(ratio.subs(symbol, stand_in), epsilon), stand_in) if x.is_positive is not False]
            if len(solutions) == 1:
                scaled = (symbol, solutions[0])
                break
        if scaled is None:
            return Verdict(False, "limit", f"cannot express the condition {regime} as a vanishing ratio")
        taken.add(scaled[0])
        expr = expr.subs(scaled[0], scaled[1])
    value = sp.limit(expr, epsilon, 0, "+")
    condition = " and ".join(str(r) for r in regimes)
    if value == 0:
        return Verdict(True, "limit", f"dropped/kept → 0 as {condition}")
    return Verdict(False, "limit", f"dropped/kept tends to {value}, not 0, as {condition}")


def changed_kept_terms(exact: sp.Basic, approx: sp.Basic) -> list[tuple[sp.Basic, sp.Basic, sp.Basic]]:
    """Terms an approximation keeps from the exact form but with another coefficient.

    Both sides are expanded into terms coefficient·monomial; a monomial present on
    both sides must carry the same coefficient: an approximation drops (or adds)
    whole terms, it does not change the ones it keeps. Returns (monomial, exact
    coefficient, approximate coefficient) for each that differs.
    """

    def terms(expr: sp.Basic) -> dict[sp.Basic, sp.Basic]:
        collected: dict[sp.Basic, sp.Basic] = {}
        for term in sp.Add.make_args(sp.expand(valued(expr))):
            coefficient, monomial = term.as_coeff_Mul()
            collected[monomial] = collected.get(monomial, 0) + coefficient
        return collected

    exact_terms, approx_terms = terms(exact), terms(approx)
    return [
        (monomial, exact_terms[monomial], approx_terms[monomial])
        for monomial in exact_terms.keys() & approx_terms.keys()
        if monomial != 1 and exact_terms[monomial] != approx_terms[monomial]
    ]


def built_from(part: sp.Basic, whole: sp.Basic) -> bool:
    """True when ``whole`` contains ``part``: as a sub-expression, as a subset of a sum's
    or product's terms, or as a sum scaled by a number (SymPy distributes 2·(x + y))."""
    part, whole = as_sympy(part), as_sympy(whole)
    if part.is_Number or not part.free_symbols:
        return False
    if whole == part or whole.has(part):
        return True
    for node in sp.preorder_traversal(whole):
        if type(node) is type(part) and isinstance(part, (sp.Add, sp.Mul)) and _sub_multiset(part.args, node.args):
            return True
        if isinstance(part, sp.Add) and isinstance(node, sp.Add) and _scaled_terms(part, node):
            return True
    return False


def _sub_multiset(small: tuple, large: tuple) -> bool:
    pool = list(large)
    for item in small:
        if item not in pool:
            return False
        pool.remove(item)
    return True


def _scaled_terms(part: sp.Add, node: sp.Add) -> bool:
    first = part.args[0]
    symbols = first.free_symbols
    for candidate in node.args:
        if candidate.free_symbols != symbols:  # then their ratio is no number: spare the cancel
            continue
        factor = sp.cancel(candidate / first)
        if factor.is_Number and factor != 0 and factor != 1:
            if _sub_multiset(tuple(sp.expand(factor * term) for term in part.args), tuple(sp.expand(x) for x in node.args)):
                return True
    return False


def prove_nonnegative(expr: sp.Basic) -> Verdict:
    """Prove expr ≥ 0 for positive symbols: by assumptions, or as a ratio of
    polynomials whose coefficients are all non-negative."""
    expr = valued(expr)
    if sp.simplify(expr) == 0 or expr.is_nonnegative:
        return Verdict(True, "assumptions")
    numerator, denominator = sp.fraction(sp.cancel(sp.together(expr)))
    if _all_coefficients_nonnegative(numerator) and _all_coefficients_nonnegative(denominator):
        return Verdict(True, "positive coefficients")
    if _all_coefficients_nonnegative(-numerator) and _all_coefficients_nonnegative(-denominator):
        return Verdict(True, "positive coefficients")
    counterexample = find_counterexample(sp.Min(expr, 0))
    if counterexample is not None:
        point, value = counterexample
        return Verdict(False, "counterexample", f"at {point} it is {expr.subs(point)}")
    return Verdict(False, "unproved", "could not show the difference is non-negative")


def _all_coefficients_nonnegative(polynomial: sp.Basic) -> bool:
    polynomial = sp.expand(polynomial)
    if polynomial.is_number:
        return bool(polynomial >= 0)
    if not all(symbol.is_positive for symbol in polynomial.free_symbols):
        return False
    try:
        coefficients = sp.Poly(polynomial, *sorted(polynomial.free_symbols, key=lambda x: x.name)).coeffs()
    except sp.PolynomialError:
        return False
    return all(c >= 0 for c in coefficients)
