"""The Formula catalogue: every stated result, by a stable dotted id.

A Formula is an expression with a declared unit, a meaning, validity
conditions and sources. Topic modules (``formulas/params.py`` ...) register
their formulas on import; ``all_formulas()`` imports every topic first.
An id once published keeps its meaning.
"""

from __future__ import annotations

import importlib
import sys
from dataclasses import dataclass
from functools import cached_property
from typing import Callable, Iterable

import sympy as sp

from llm_formulas.formulas.bibliography import Source  # noqa: F401 - formulas cite through the catalogue
from llm_formulas.formulas.symbols import constant_values, quantity, table_order
from llm_formulas.formulas.units import Unit, as_unit

TOPICS: tuple[str, ...] = ("params", "flops", "memory", "comms", "cluster", "inference", "architecture", "performance",
                          "parallelism", "precision",
                          "utilization", "conventions", "energy", "cost", "reliability", "pipeline", "optimizations")


class UnknownFormula(KeyError):
    """An id that the catalogue does not hold."""

    def __str__(self) -> str:
        return str(self.args[0])


@dataclass(frozen=True)
class Condition:
    """A validity condition: words, and when it can be tested, a SymPy predicate."""

    text: str
    predicate: sp.Basic | None = None

    def holds(self, values: dict[sp.Symbol, sp.Basic]) -> bool | None:
        """True/False when every symbol of the predicate has a value, else None."""
        if self.predicate is None:
            return None
        test = self.predicate.xreplace(constant_values())
        if not test.free_symbols <= set(values):
            return None
        return bool(test.subs(values))


def divides(divisor: sp.Basic, dividend: sp.Basic) -> Condition:
    """The condition ``divisor | dividend`` (``t divides a``)."""
    return Condition(f"{divisor} divides {dividend}", sp.Eq(sp.Mod(dividend, divisor), 0))


def at_most(smaller: sp.Basic, larger: sp.Basic) -> Condition:
    """The condition ``smaller ≤ larger`` (``W ≤ s``)."""
    return Condition(f"{smaller} ≤ {larger}", sp.Le(smaller, larger))


@dataclass(frozen=True)
class Formula:
    """A stated result: expression (constants symbolic), declared unit, meaning, conditions, sources."""

    id: str
    expr: sp.Expr
    unit: Unit
    meaning: str
    sources: tuple[Source, ...]
    conditions: tuple[Condition, ...] = ()
    related: tuple[str, ...] = ()
    symbol_latex: str = ""
    notes: str = ""

    @cached_property
    def value_expr(self) -> sp.Expr:
        """The expression with unit-carrying constants replaced by their values."""
        return self.expr.xreplace(constant_values())

    @cached_property
    def inputs(self) -> list[sp.Symbol]:
        """The symbols a user must give, in the order of the symbol table."""
        return sorted(self.value_expr.free_symbols, key=table_order)


_CATALOGUE: dict[str, Formula] = {}
_ORIGIN: dict[str, str] = {}  # formula id → the module that registered it


def formula(
    id: str,
    expr: sp.Expr,
    unit: Unit | str,
    meaning: str,
    *,
    sources: Iterable[Source],
    conditions: Iterable[Condition] = (),
    related: Iterable[str] = (),
    symbol_latex: str = "",
    notes: str = "",
) -> Formula:
    """Create and register a formula; its id must be new."""
    if id in _CATALOGUE:
        raise ValueError(f"formula id {id!r} registered twice")
    for symbol in expr.free_symbols:
        quantity(symbol)  # every symbol must come from the table
    entry = Formula(
        id=id,
        expr=sp.sympify(expr),
        unit=as_unit(unit),
        meaning=meaning,
        sources=tuple(sources),
        conditions=tuple(conditions),
        related=tuple(related),
        symbol_latex=symbol_latex,
        notes=notes,
    )
    _CATALOGUE[id] = entry
    _ORIGIN[id] = caller_module()
    return entry


def caller_module(depth: int = 2) -> str:
    """The module that called the registering function (its topic fixes the catalogue order)."""
    return sys._getframe(depth).f_globals.get("__name__", "")


def origin_topic(formula_id: str) -> str:
    """The topic whose module registered ``formula_id`` (``architecture`` for params.decoder.total)."""
    get(formula_id)
    return _ORIGIN[formula_id].rpartition(".")[2]


def topic_rank(module: str) -> int:
    """Position of ``formulas.<topic>`` in TOPICS: listings follow it, whatever was imported first."""
    topic = module.rpartition(".")[2]
    return TOPICS.index(topic) if topic in TOPICS else len(TOPICS)


def load_topics() -> None:
    for topic in TOPICS:
        importlib.import_module(f"llm_formulas.formulas.{topic}")


_READ_OBSERVER: list[Callable[[str], None] | None] = [None]


def observe_reads(observer: Callable[[str], None] | None) -> Callable[[str], None] | None:
    """Call ``observer(id)`` on every later ``get``; returns the previous observer.

    The derivation engine uses it to see which entries a derivation reads while it
    is built (a derivation may not read the entry it concludes).
    """
    previous, _READ_OBSERVER[0] = _READ_OBSERVER[0], observer
    return previous


# where an id's second part says its formula lives, when not in the topic its first part names
# (params.decoder.total is the general decoder's, formulas/architecture.py; memory.fp8.* the precision module's)
HOMES = {"decoder": "architecture", "kv_cache": "architecture", "lora": "precision", "qlora": "precision",
         "fp8": "precision", "int8": "precision", "quantized": "precision", "ep": "parallelism", "cp": "parallelism",
         "per_gpu": "parallelism", "distributed_optimizer": "parallelism", "zero": "parallelism", "dp": "parallelism"}


def get(id: str) -> Formula:
    """The formula ``id``, loading its own topic first (``eval params.total`` builds one topic, not seven), then the
    module its second part points at, then the others one at a time until it is found."""
    parts = id.split(".")
    for topic in (parts[0], HOMES.get(parts[1] if len(parts) > 1 else ""), *TOPICS):
        if id in _CATALOGUE:
            break
        if topic in TOPICS:
            importlib.import_module(f"llm_formulas.formulas.{topic}")
    try:
        entry = _CATALOGUE[id]
    except KeyError:
        raise UnknownFormula(f"unknown formula id {id!r} (see 'llm-formulas list')") from None
    if _READ_OBSERVER[0] is not None:
        _READ_OBSERVER[0](id)
    return entry


def all_formulas() -> list[Formula]:
    """Every formula, topic by topic in TOPICS order, each topic in its module's order."""
    load_topics()
    return sorted(_CATALOGUE.values(), key=lambda f: topic_rank(_ORIGIN.get(f.id, "")))


def catalogue() -> dict[str, Formula]:
    """The live mapping (tests may swap an entry to see ``check`` fail)."""
    load_topics()
    return _CATALOGUE
