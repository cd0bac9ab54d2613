"""The Formula catalogue: every stated result, by a stable dotted id.

A Formula is an expression with a declared unit, a meaning, validity
conditions and sources. Topic modules (``formulas/topics/params.py`` ...) register
their formulas on import; ``all_formulas()`` imports every topic first.
An id once published keeps its meaning.
"""

from __future__ import annotations

import contextlib
import functools
import importlib
import sys
import threading
from dataclasses import dataclass, field
from functools import cached_property
from typing import Callable, Iterable, Iterator

import sympy as sp

from llm_formulas.formulas.vocabulary.bibliography import Source  # noqa: F401 - formulas cite through the catalogue
from llm_formulas.formulas.vocabulary import scope
from llm_formulas.formulas.vocabulary.expressions import ExpressionError, as_expression, as_sympy
from llm_formulas.formulas.vocabulary.parts import Part, PartAt, expand_parts, parts_of
from llm_formulas.formulas.vocabulary.numbers import exact_number
from llm_formulas.formulas.vocabulary.symbols import (constant_values, did_you_mean, quantity, resolve, switch_defaults,
                                                      table_order)
from llm_formulas.formulas.vocabulary.units import Unit, as_unit

__all__ = ["TOPICS", "Catalogue", "Condition", "Formula", "UnknownFormula", "all_formulas", "at_most", "divides",
           "formula", "get", "lookup", "search"]

TOPICS: tuple[str, ...] = ("params", "flops", "memory", "comms", "cluster", "inference", "architecture", "recurrent", "towers", "weights", "performance", "kernels",
                          "parallelism", "precision",
                          "utilization", "conventions", "energy", "cost", "reliability", "pipeline", "optimizations", "serving",
                          "framework_memory", "peers")


class UnknownFormula(KeyError):
    """An id that the catalogue does not hold."""

    def __str__(self) -> str:
        return str(self.args[0])


@dataclass(frozen=True)
class Condition:
    """A validity condition: words, and when it can be tested, a SymPy predicate."""

    text: str
    predicate: sp.Basic | None = None

    def __post_init__(self) -> None:
        if self.predicate is not None and not isinstance(self.predicate, sp.logic.boolalg.Boolean):
            raise ExpressionError(f"a condition's predicate is a SymPy relation (sympy.Le(W, s), divides(t, a)), "
                                  f"not {type(self.predicate).__name__}")
        if self.predicate is not None:  # a part in a predicate is tested by its expansion
            object.__setattr__(self, "predicate", expand_parts(self.predicate))

    def holds(self, values: dict[sp.Symbol, sp.Basic]) -> bool | None:
        """True/False when every symbol of the predicate has a value, else None."""
        if self.predicate is None:
            return None
        test = self.predicate.xreplace(constant_values())
        if not test.free_symbols <= set(values):
            return None
        return bool(test.subs(values))


def divides(divisor: sp.Basic, dividend: sp.Basic) -> Condition:
    """The condition ``divisor | dividend`` (``t divides a``); either may be a string of formulas.vocabulary.expressions."""
    divisor, dividend = as_expression(divisor), as_expression(dividend)
    return Condition(f"{divisor} divides {dividend}", sp.Eq(sp.Mod(dividend, divisor), 0))


def at_most(smaller: sp.Basic, larger: sp.Basic) -> Condition:
    """The condition ``smaller ≤ larger`` (``W ≤ s``); either may be a string of formulas.vocabulary.expressions."""
    smaller, larger = as_expression(smaller), as_expression(larger)
    return Condition(f"{smaller} ≤ {larger}", sp.Le(smaller, larger))


def layer_kinds(expr: sp.Basic) -> list[Condition]:
    """What every formula that counts layers of several kinds assumes: they are parts of the l layers. The layers
    without attention (recurrent mixers, or none) are some of the l, and the windowed ones among the rest; the
    layers without an MLP and the MoE layers are some of the l. A formula inherits each whose symbols it holds."""
    from llm_formulas.formulas.vocabulary.symbols import l, l_gdn, l_lru, l_mamba, l_moe, l_noattn, l_nomlp, l_ssd, l_win

    symbols = as_sympy(expr).free_symbols
    if l not in symbols or not symbols & {l_mamba, l_ssd, l_lru, l_gdn, l_noattn, l_nomlp}:
        return []
    without_attention = l_mamba + l_ssd + l_lru + l_gdn + l_noattn
    kinds = [at_most(without_attention, l)]
    if l_win in symbols:
        kinds.append(at_most(without_attention + l_win, l))
    if l_nomlp in symbols:
        kinds.append(at_most(l_moe + l_nomlp, l))
    return [kind for kind in kinds if kind.predicate.free_symbols & symbols - {l, l_moe, l_win}]


@dataclass(frozen=True)
class Formula:
    """A stated result: its expression, declared unit, meaning, conditions, sources.

    ``expr`` is plain SymPy, free of units: constants are their values and unit marks are 1, so
    ``expr.subs(h, 768)`` is a number or an expression in the other inputs. The unit is the separate
    attribute ``unit``. ``dimensioned`` is the same expression with its unit marks (``u_param``, ``c_flop``,
    ...) and constants kept as symbols: what dimensional analysis reads. ``composed`` is the formula as
    written, its catalogue parts named (``Ψ_emb + l·Ψ_layer + Ψ_head``, formulas.vocabulary.parts): what it prints;
    ``dimensioned`` is that with every part expanded, so ``expr`` (= ``expanded``) is what it computes.
    """

    id: str
    dimensioned: sp.Expr
    unit: Unit
    meaning: str
    sources: tuple[Source, ...]
    conditions: tuple[Condition, ...] = ()
    related: tuple[str, ...] = ()
    symbol_latex: str = ""
    notes: str = ""
    catalogue: "Catalogue | None" = field(default=None, compare=False, repr=False)  # None: the built-in one
    composed: sp.Expr | None = None  # None: the formula names no part, composed is dimensioned

    def __post_init__(self) -> None:
        if self.composed is None:
            object.__setattr__(self, "composed", self.dimensioned)
        object.__setattr__(self, "dimensioned", distinct(expand_parts(self.dimensioned)))

    @cached_property
    def part(self) -> Part:
        """This formula as one named term of another (``embeddings.part + l * layer.part``)."""
        return Part(self)

    def at(self, **values: object) -> PartAt:
        """This formula at given values of some inputs, as a named term of another (``logits.at(s=1)``)."""
        return PartAt(self, {resolve(name): as_expression(value) for name, value in values.items()})

    @property
    def parts(self) -> tuple[str, ...]:
        """The ids of the catalogue formulas this one names directly."""
        return tuple(dict.fromkeys(part.formula.id for part in parts_of(self.composed)))

    @property
    def expanded(self) -> sp.Expr:
        """Every part spelled out: the expression the formula computes (``expr``)."""
        return self.expr

    @cached_property
    def expr(self) -> sp.Expr:
        """The expression without units: unit-carrying constants replaced by their values."""
        return distinct(self.dimensioned.xreplace(constant_values()))

    @cached_property
    def inputs(self) -> list[sp.Symbol]:
        """Every symbol of the expression, in the order of the symbol table (switches included)."""
        with within(self.catalogue):
            return sorted(self.expr.free_symbols, key=table_order)

    @cached_property
    def defaults(self) -> dict[sp.Symbol, sp.Integer]:
        """The structural switches of this formula with their classic values, used when a caller leaves them out.

        A switch whose classic value would make the formula vanish has none here: the formula is about what the
        switch turns on (``params.decoder.cross_attention`` keeps x_attn; the classic model has no cross-attention).
        """
        classic, chosen = switch_defaults(), {}
        for symbol in self.inputs:
            if symbol in classic and not vanishes(self.expr.xreplace({**chosen, symbol: classic[symbol]})):
                chosen[symbol] = classic[symbol]
        return chosen

    @cached_property
    def required(self) -> list[sp.Symbol]:
        """The inputs a caller must give when every switch keeps its classic value (``mla`` = 0 drops d_rope)."""
        with within(self.catalogue):
            return sorted(self.expr.xreplace(self.defaults).free_symbols, key=table_order)

    def __repr__(self) -> str:
        return f"Formula({self.id!r}: {sp.sstr(self.expr)} [{self.unit}])"

    def _repr_latex_(self) -> str:
        """Jupyter shows the formula as an equation."""
        from llm_formulas.formulas.vocabulary.latex import formula_latex

        with within(self.catalogue):
            return f"$${formula_latex(self)}$$"


def vanishes(expr: sp.Basic) -> bool:
    """Whether ``expr`` is identically zero. A nonzero exact value at one point of its inputs (2/3, 7/4, 14/5, …:
    distinct fractions, no integer among them) proves it is not, at a fraction of the cost of expanding a formula of
    hundreds of terms; a zero or undefined value there is settled by expanding."""
    point = {symbol: number + sp.Rational(number + 2, number + 3) for number, symbol in
             enumerate(sorted(expr.free_symbols, key=sp.default_sort_key))}
    value = expr.xreplace(point)
    if value.is_Rational and value != 0:
        return False
    return sp.expand(expr) == 0


def distinct(expr: sp.Basic) -> sp.Basic:
    """An object equal to ``expr`` that SymPy's cache never hands out: the same expression typed by hand is another
    object, so the derivation engine can tell a catalogue entry's own expression (read back) from one built anew.
    A symbol or a number is its own and only object."""
    if not isinstance(expr, sp.Basic) or expr.is_Atom:
        return expr
    clone = object.__new__(type(expr))
    for klass in type(expr).__mro__:
        for slot in getattr(klass, "__slots__", ()):
            if hasattr(expr, slot):
                object.__setattr__(clone, slot, getattr(expr, slot))
    if hasattr(expr, "__dict__"):
        clone.__dict__.update(expr.__dict__)
    return clone


def within(owner: "Catalogue | None") -> contextlib.AbstractContextManager:
    """Activate a formula's own catalogue (a user's) for a lookup; the built-in formulas need nothing."""
    return owner if owner is not None else contextlib.nullcontext()


class Catalogue:
    """A scope of formulas, symbols, sources and model presets that a user owns.

    The built-in catalogue (this module's tables) holds the project's formulas. A user makes their own,
    ``Catalogue("acme")``, and registers into it with its methods or, inside ``with catalogue:``, with the
    module functions (``formula``, ``get``); lookups search it, then its ``parent`` (by default the built-in one).
    Two catalogues never see each other's entries, and the built-in one never sees a user's.
    Registering an identical formula again is a no-op (a notebook cell run twice); a different formula under an
    id already taken is refused unless ``replace=True``.
    """

    def __init__(self, name: str, *, parent: "Catalogue | None" = None) -> None:
        self.name = name
        self.parent = parent
        self.formulas: dict[str, Formula] = {}
        self.symbols: dict[str, object] = {}  # name → formulas.vocabulary.symbols.Quantity
        self.works: dict[str, object] = {}  # key → formulas.vocabulary.bibliography.Work
        self.presets: dict[str, dict] = {}  # model name → values by symbol name
        self.derivations: list[Callable[[], object]] = []  # what ``llm-formulas check --module`` proves
        self._tokens: list = []

    def __repr__(self) -> str:
        return f"Catalogue({self.name!r}, {len(self.formulas)} formulas)"

    # --- scope ------------------------------------------------------------------
    def __enter__(self) -> "Catalogue":
        self._tokens.append(scope.enter(self))
        return self

    def __exit__(self, *exc: object) -> None:
        scope.leave(self._tokens.pop())

    # --- formulas ---------------------------------------------------------------
    def formula(self, id: str, expr: sp.Expr, unit: Unit | str, meaning: str, *, sources: Iterable[Source],
                conditions: Iterable[Condition] = (), related: Iterable[str] = (), symbol_latex: str = "",
                notes: str = "", replace: bool = False, composed: sp.Expr | None = None) -> Formula:
        """Register a formula here; its unit is checked against its expression at once (``formula`` for ``composed``)."""
        with self:
            return _register(self, id, expr, unit, meaning, sources=sources, conditions=conditions, related=related,
                             symbol_latex=symbol_latex, notes=notes, replace=replace, composed=composed)

    def get(self, id: str) -> Formula:
        """The formula ``id``: this catalogue's, else its parent's, else the built-in one."""
        with self:
            return get(id)

    def __contains__(self, id: str) -> bool:
        try:
            self.get(id)
        except UnknownFormula:
            return False
        return True

    def __iter__(self) -> Iterator[Formula]:
        """This catalogue's own formulas, in the order they were registered."""
        return iter(list(self.formulas.values()))

    def __len__(self) -> int:
        return len(self.formulas)

    # --- symbols, sources, models, derivations -------------------------------------
    def symbol(self, name: str, latex: str, meaning: str, unit: Unit | str, *, integer: bool, source: Source,
               maximum: int | None = None, minimum: int | None = None) -> sp.Symbol:
        """Declare a symbol of this catalogue (a positive SymPy symbol); a built-in name is refused if different."""
        from llm_formulas.formulas.vocabulary.symbols import declare_in

        if not (name.isascii() and name.isidentifier()):
            raise ExpressionError(f"a symbol's name is a plain identifier (letters, digits, _), not {name[:60]!r}")
        return declare_in(self, name, latex, meaning, unit, integer=integer, source=source, maximum=maximum,
                          minimum=minimum)

    def source(self, key: str, *, authors: str, title: str, date: str, venue: str = "", short: str = "",
               kind: str = "paper", title_en: str = "", arxiv: str = "", url: str = "") -> object:
        """Add a work to this catalogue's bibliography; ``Source(key, where)`` then cites it here."""
        from llm_formulas.formulas.vocabulary.bibliography import add_work

        return add_work(self, key, kind=kind, short=short, authors=authors, title=title, venue=venue, date=date,
                        title_en=title_en, arxiv=arxiv, url=url)

    def cite(self, key: str, where: str = "") -> Source:
        """``Source(key, where)`` for a work of this catalogue (or a built-in one)."""
        with self:
            return Source(key, where)

    def model(self, name: str, values: dict[str, object]) -> dict[str, object]:
        """A named model: its values by symbol name, each checked against the symbol table and made exact."""
        with self:
            resolved = {resolve(symbol).name: exact_number(value) for symbol, value in values.items()}
        if name in self.presets and self.presets[name] != resolved:
            raise ValueError(f"model {name!r} is already registered in {self.name!r} with other values")
        self.presets[name] = resolved
        return resolved

    def derivation(self, make: Callable[[], object]) -> Callable[[], object]:
        """Decorator: ``make()`` builds a Derivation of this catalogue (it runs with the catalogue active, so its
        symbols and formulas are found wherever it is called); ``llm-formulas check --module`` proves it."""

        @functools.wraps(make)
        def in_catalogue() -> object:
            with self:
                return make()

        self.derivations.append(in_catalogue)
        return in_catalogue

    # --- reading ------------------------------------------------------------------
    def search(self, text: str) -> list[Formula]:
        """Formulas whose id or meaning contains every word of ``text`` (case-insensitive): own first, then built-in."""
        with self:
            return search(text)


_BUILTIN_FORMULAS: dict[str, Formula] = {}
_ORIGIN: dict[str, str] = {}  # built-in formula id → the module that registered it


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
    replace: bool = False,
    composed: sp.Expr | None = None,
) -> Formula:
    """Create and register a formula in the active catalogue (the built-in one unless a user's is entered).

    ``expr`` may name other formulas (``embeddings.part + l * layer.part``): it is printed so and computed with
    each part spelled out. ``composed`` is for a formula computed in another arrangement than it is read
    (``sp.expand(Ψ − Ψ_q)``, so that terms cancel exactly): it is printed, and ``check`` proves it equal to ``expr``.
    The declared unit is checked against the expression's at once (a FLOP count declared in bytes is refused).
    """
    return _register(scope.active(), id, expr, unit, meaning, sources=sources, conditions=conditions, related=related,
                     symbol_latex=symbol_latex, notes=notes, replace=replace, composed=composed)


def _with_layer_kinds(conditions: tuple[Condition, ...], expr: sp.Expr) -> tuple[Condition, ...]:
    """The conditions given, then those of ``layer_kinds`` not among them."""
    stated = {condition.predicate for condition in conditions}
    return conditions + tuple(kind for kind in layer_kinds(expr) if kind.predicate not in stated)


def _register(owner: Catalogue | None, id: str, expr: sp.Expr, unit: Unit | str, meaning: str, *,
              sources: Iterable[Source], conditions: Iterable[Condition], related: Iterable[str], symbol_latex: str,
              notes: str, replace: bool, composed: sp.Expr | None = None) -> Formula:
    from llm_formulas.formulas.vocabulary.dimensions import check_declared_unit

    expr = as_expression(expr)  # a string is read by the project's grammar, never evaluated
    conditions = tuple(conditions)
    for condition in conditions:
        if not isinstance(condition, Condition):
            raise ExpressionError(f"formula {id!r}: a condition is a Condition (divides(t, a), at_most(W, s)), "
                                  f"not {type(condition).__name__}")
    for symbol in expr.free_symbols - set(parts_of(expr)):
        quantity(symbol)  # every symbol must come from the table (or the user catalogue's own)
    entry = Formula(
        id=id,
        dimensioned=expr,
        composed=expr if composed is None else as_expression(composed),
        unit=as_unit(unit),
        meaning=meaning,
        sources=tuple(sources),
        conditions=_with_layer_kinds(conditions, expand_parts(expr)),
        related=tuple(related),
        symbol_latex=symbol_latex,
        notes=notes,
        catalogue=owner,
    )
    check_declared_unit(entry.dimensioned, entry.unit)  # DimensionError names both units
    table = _BUILTIN_FORMULAS if owner is None else owner.formulas
    existing = table.get(id)
    if owner is not None and is_builtin(id):
        raise ValueError(f"formula id {id!r} is a built-in formula: choose another id for your own")
    if existing is not None and not replace:
        if existing == entry:
            return existing  # the same formula again: a cell run twice, a module imported twice
        raise ValueError(f"formula id {id!r} registered twice with different contents (replace=True to redefine it)")
    table[id] = entry
    if owner is None:
        _ORIGIN[id] = caller_module(3)
    return entry


# the first part of every built-in id (tests/test_library.py checks it against the loaded catalogue): a user's id
# under one of them is looked up among the built-in formulas before it is taken, whether its topic is loaded or not
BUILTIN_PREFIXES = frozenset({"cluster", "comms", "conventions", "cost", "energy", "flops", "inference", "memory",
                              "optimizations", "params", "peers", "perf", "pipeline", "reliability", "serving",
                              "utilization"})


def is_builtin(id: str) -> bool:
    """Whether ``id`` is a built-in formula's, loading only what may hold it."""
    if id in _BUILTIN_FORMULAS or id.split(".")[0] not in BUILTIN_PREFIXES:
        return id in _BUILTIN_FORMULAS
    try:
        _builtin(id)
    except UnknownFormula:
        return False
    return True


def caller_module(depth: int = 2) -> str:
    """The module that called the registering function (its topic fixes the catalogue order)."""
    return sys._getframe(depth).f_globals.get("__name__", "")


def origin_topic(formula_id: str) -> str:
    """The topic whose module registered the built-in ``formula_id`` (``architecture`` for params.decoder.total)."""
    _builtin(formula_id)
    return _ORIGIN[formula_id].rpartition(".")[2]


def topic_rank(module: str) -> int:
    """Position of ``formulas.<topic>`` in TOPICS: listings follow it, whatever was imported first."""
    topic = module.rpartition(".")[2]
    return TOPICS.index(topic) if topic in TOPICS else len(TOPICS)


def load_topics() -> None:
    for topic in TOPICS:
        _load(topic)


def _load(topic: str) -> None:
    """Import a built-in topic module; its formulas register in the built-in catalogue whatever is active."""
    token = scope.enter(None)
    try:
        importlib.import_module(f"llm_formulas.formulas.topics.{topic}")
    finally:
        scope.leave(token)


_READS = threading.local()  # the catalogue ids read (``get``) in this thread since a derivation last took them


def take_reads() -> list[str]:
    """The ids read since the last call, in order (the derivation engine attributes them to the step it adds)."""
    reads = getattr(_READS, "ids", [])
    _READS.ids = []
    return reads


# where an id's second part says its formula lives, when not in the topic its first part names
# (params.decoder.total is the general decoder's, formulas/topics/architecture.py; memory.fp8.* the precision module's)
HOMES = {"decoder": "architecture", "kv_cache": "architecture", "lora": "precision", "qlora": "precision",
         "fp8": "precision", "int8": "precision", "quantized": "precision", "ep": "parallelism", "cp": "parallelism",
         "per_gpu": "parallelism", "distributed_optimizer": "parallelism", "zero": "parallelism", "dp": "parallelism",
         "recurrent": "recurrent", "state": "recurrent", "vision": "towers", "weights": "weights",
         "op": "kernels"}


# the topics an id is searched in when neither its own nor HOMES' holds it, the costly one last: the fine-tuning
# formulas take 0.4 s to build, and a training report never needs them (tests/test_cli.py)
SEARCH_ORDER = tuple(sorted(TOPICS, key=lambda topic: topic == "precision"))


def get(id: str) -> Formula:
    """The formula ``id``: the active user catalogues first, then the built-in one, loading its own topic first
    (``eval params.total`` builds one topic, not seven), then the module its second part points at, then the
    others one at a time until it is found. An unknown id raises UnknownFormula with the nearest ids.

    The read is logged for the derivation engine: a derivation may not read the entry it concludes.
    """
    entry = lookup(id)
    if not hasattr(_READS, "ids"):
        _READS.ids = []
    _READS.ids.append(id)
    return entry


def lookup(id: str) -> Formula:
    """``get`` without logging the read: for the engine checking a conclusion, which must not count as a read."""
    entry = next((user.formulas[id] for user in scope.chain() if id in user.formulas), None)
    return _builtin(id) if entry is None else entry


def _builtin(id: str) -> Formula:
    parts = id.split(".")
    for topic in (parts[0], HOMES.get(parts[1] if len(parts) > 1 else ""), *SEARCH_ORDER):
        if id in _BUILTIN_FORMULAS:
            break
        if topic in TOPICS:
            _load(topic)
    try:
        return _BUILTIN_FORMULAS[id]
    except KeyError:
        known = list(_BUILTIN_FORMULAS) + [i for user in scope.chain() for i in user.formulas]
        raise UnknownFormula(f"unknown formula id {id!r}{did_you_mean(id, known)} (see 'llm-formulas list')") from None


def search(text: str) -> list[Formula]:
    """Formulas whose id or meaning holds every word of ``text`` (case-insensitive): the active user catalogues'
    first, then the built-in ones in catalogue order."""
    words = text.lower().split()
    candidates = [f for user in scope.chain() for f in user.formulas.values()] + all_formulas()
    return [f for f in candidates if all(w in f"{f.id} {f.meaning}".lower() for w in words)]


def all_formulas() -> list[Formula]:
    """Every built-in formula, topic by topic in TOPICS order, each topic in its module's order."""
    load_topics()
    return sorted(_BUILTIN_FORMULAS.values(), key=lambda f: topic_rank(_ORIGIN.get(f.id, "")))


def catalogue() -> dict[str, Formula]:
    """The live mapping of built-in formulas (tests may swap an entry to see ``check`` fail)."""
    load_topics()
    return _BUILTIN_FORMULAS
