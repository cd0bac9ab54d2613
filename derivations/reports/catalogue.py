"""Every derivation of every topic, and the whole-catalogue check.

``check_all()`` runs three kinds of checks and returns one report:
each step of each derivation; the declared unit of each formula
(dimensional analysis); and that every formula is concluded by a derivation.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from functools import cache
from types import ModuleType
from typing import Callable, Iterable

from llm_formulas.derivations.vocabulary.engine import Derivation, building
from llm_formulas.derivations.vocabulary.steps import Outcome
from llm_formulas.formulas.vocabulary.catalogue import TOPICS, Catalogue, Formula, UnknownFormula, all_formulas, lookup, origin_topic
from llm_formulas.formulas.vocabulary.dimensions import DimensionError, check_declared_unit
from llm_formulas.derivations.vocabulary.proof import Verdict, prove_equal
from llm_formulas.formulas.vocabulary.parts import expand_parts


# the modules that hold derivations, in the order check lists them: one per topic of formulas/topics, then the
# proofs about declared data (each family's reduction to its classic form, each family's own closed forms)
DERIVATION_MODULES: tuple[str, ...] = (*TOPICS, "data.families", "data.family_forms")


def _module(name: str) -> ModuleType:
    """``derivations.<name>``: ``params`` is the topic's, ``data.families`` says its sub-package."""
    return importlib.import_module(f"llm_formulas.derivations.{name if '.' in name else 'topics.' + name}")


def factories() -> list[Callable[[], Derivation]]:
    """The function that builds each derivation, module by module."""
    return [make for name in DERIVATION_MODULES for make in _module(name).DERIVATIONS]


def build(make: Callable[[], Derivation]) -> Derivation:
    """Build one derivation, its catalogue reads traced from a clean slate."""
    building()
    return make()


@cache
def topic_derivations(topic: str) -> tuple[Derivation, ...]:
    """The derivations of one module (a topic, ``derivations.topics.<topic>``, or ``data.families``), built once."""
    return tuple(build(make) for make in _module(topic).DERIVATIONS)


@cache
def all_derivations() -> tuple[Derivation, ...]:
    built: list[Derivation] = [derivation for name in DERIVATION_MODULES for derivation in topic_derivations(name)]
    ids = [d.id for d in built]
    duplicates = {i for i in ids if ids.count(i) > 1}
    if duplicates:
        raise ValueError(f"derivation ids used twice: {sorted(duplicates)}")
    return tuple(built)


def derivation_of(formula_id: str) -> Derivation | None:
    """The derivation that concludes a formula: looked for in its own topic first (``show`` builds one topic)."""
    for derivations in (lambda: topic_derivations(origin_topic(formula_id)), all_derivations):
        for derivation in derivations():
            if formula_id in derivation.established:
                return derivation
    return None


@dataclass(frozen=True)
class Report:
    """Every outcome of ``check_all``: derivation steps, units, coverage."""

    outcomes: tuple[Outcome, ...]

    @classmethod
    def from_outcomes(cls, kept: dict) -> Report:
        """The report a record keeps as plain data (``check_record``)."""
        return cls(tuple(Outcome(**outcome) for outcome in kept["outcomes"]))

    @property
    def failed(self) -> list[Outcome]:
        return [o for o in self.outcomes if not o.ok]

    @property
    def ok(self) -> bool:
        return not self.failed

    @property
    def derivations(self) -> int:
        return len({o.derivation for o in self.outcomes} - {"units", "composition", "coverage"})

    def as_json(self) -> dict:
        return {
            "derivations": self.derivations,
            "steps": len(self.outcomes),
            "failed": [
                {"where": o.where, "claim": o.claim, "method": o.method, "left": o.lhs, "right": o.rhs, "detail": o.detail}
                for o in self.failed
            ],
        }


def unit_outcomes(formulas: Iterable[Formula] | None = None) -> list[Outcome]:
    """The declared unit of each formula (every built-in one by default) against its expression's dimensions."""
    outcomes = []
    for index, formula in enumerate(all_formulas() if formulas is None else formulas, start=1):
        try:
            how = check_declared_unit(formula.dimensioned, formula.unit)
            outcomes.append(Outcome("units", index, formula.id, "unit", f"declared {formula.unit}", True, how))
        except DimensionError as error:
            outcomes.append(Outcome("units", index, formula.id, "unit", f"declared {formula.unit}", False, "dimensions", str(error)))
    return outcomes


def composition_outcomes(formulas: Iterable[Formula] | None = None) -> list[Outcome]:
    """Each formula that names parts (every built-in one by default): its composed form, each part spelled out,
    equals the expression it computes (identical when it was built so; otherwise proved by expansion)."""
    outcomes = []
    for index, formula in enumerate(all_formulas() if formulas is None else formulas, start=1):
        if formula.composed == formula.dimensioned:  # it names no part
            continue
        spelled = expand_parts(formula.composed)
        verdict = Verdict(True, "identical") if spelled == formula.dimensioned else prove_equal(spelled, formula.dimensioned)
        outcomes.append(Outcome("composition", index, formula.id, "composed form",
                                f"{', '.join(formula.parts)} spelled out is the expression computed", verdict.ok,
                                verdict.method, verdict.detail))
    return outcomes


def coverage_outcomes(formulas: Iterable[Formula] | None = None,
                      derivations: Iterable[Derivation] | None = None) -> list[Outcome]:
    """Each formula (every built-in one by default) concluded by one of the derivations (all by default)."""
    established = {fid for d in (all_derivations() if derivations is None else derivations) for fid in d.established}
    return [
        Outcome("coverage", index, f.id, "established", "every formula is concluded by a derivation", f.id in established, "lookup",
                "" if f.id in established else "no derivation concludes this formula")
        for index, f in enumerate(all_formulas() if formulas is None else formulas, start=1)
    ]


def derivations_for(formula_ids: Iterable[str]) -> list[Derivation]:
    """The derivations that conclude ``formula_ids``, and, transitively, those that conclude every built-in entry
    they read: a slice of the catalogue proved with what it rests on. Only the topics involved are built."""
    chosen: dict[str, Derivation] = {}
    seen: set[str] = set()
    work = list(formula_ids)[::-1]
    while work:
        formula_id = work.pop()
        if formula_id in seen:
            continue
        seen.add(formula_id)
        try:
            origin_topic(formula_id)  # loads its topic only; a user's entry is not the catalogue's to prove
        except UnknownFormula:
            continue
        derivation = derivation_of(formula_id)
        if derivation is not None and derivation.id not in chosen:
            chosen[derivation.id] = derivation
            work.extend(sorted(derivation.reads, reverse=True))
    return list(chosen.values())


def topic_formula_ids(topic: str) -> list[str]:
    """The ids of the built-in formulas a topic module registers (``formulas.<topic>``)."""
    if topic not in TOPICS:
        raise ValueError(f"unknown topic {topic!r} (topics: {', '.join(TOPICS)})")
    return [formula.id for formula in all_formulas() if origin_topic(formula.id) == topic]


def check_slice(formula_ids: Iterable[str]) -> Report:
    """``check ID...``: the derivations of ``formula_ids`` and of what they read, the units of every formula those
    derivations conclude, and that each requested formula is concluded."""
    requested = list(dict.fromkeys(formula_ids))
    derivations = derivations_for(requested)
    outcomes: list[Outcome] = [outcome for derivation in derivations for outcome in derivation.check()]
    concluded = list(dict.fromkeys([*requested, *(fid for d in derivations for fid in d.established)]))
    outcomes.extend(unit_outcomes(lookup(fid) for fid in concluded))
    outcomes.extend(composition_outcomes(lookup(fid) for fid in concluded))
    outcomes.extend(coverage_outcomes([lookup(fid) for fid in requested], derivations))
    return Report(tuple(outcomes))


def check_module(module: ModuleType) -> Report:
    """A user's module checked as ``check`` checks the catalogue: each ``Catalogue`` it holds (its formulas' units,
    its derivations' steps, units and soundness, every formula concluded by one of them), and the derivations its
    ``DERIVATIONS`` list builds, the way the project's own topic modules list theirs.

    A ``DERIVATIONS`` that is not a list of functions, or a function that returns no Derivation, is bad input
    (``ValueError``, one line); an exception raised while the user's function builds its derivation is a failed
    check, named with the user's file and line."""
    catalogues = [value for value in vars(module).values() if isinstance(value, Catalogue)]
    makers = _listed_makers(module)
    if not catalogues and not makers:
        raise ValueError(f"{module.__name__} holds no Catalogue and no DERIVATIONS list")
    outcomes: list[Outcome] = []
    read: set[str] = set()  # the built-in entries the user's derivations rest on: proved too, and nothing else
    for owner in catalogues:
        with owner:
            built = []
            for make in owner.derivations:
                derivation = _built_by_user(make, outcomes)
                if derivation is not None:
                    built.append(derivation)
                    outcomes.extend(derivation.check())
                    read |= derivation.reads - set(owner.formulas)
            established = {formula_id for derivation in built for formula_id in derivation.established}
            outcomes.extend(unit_outcomes(owner))
            for index, formula in enumerate(owner, start=1):
                concluded = formula.id in established
                outcomes.append(Outcome("coverage", index, formula.id, "established", "concluded by a derivation",
                                        concluded, "lookup", "" if concluded else
                                        f"no derivation of {owner.name!r} concludes this formula (register one with "
                                        "@catalogue.derivation)"))
    for make in makers:
        derivation = _built_by_user(make, outcomes)
        if derivation is not None:
            outcomes.extend(derivation.check())
            read |= derivation.reads
    for derivation in derivations_for(sorted(read)):
        outcomes.extend(derivation.check())
    return Report(tuple(outcomes))


def _listed_makers(module: ModuleType) -> list[Callable[[], Derivation]]:
    """The module's ``DERIVATIONS``: a list (or tuple) of functions, each building one Derivation."""
    listed = getattr(module, "DERIVATIONS", ())
    if not isinstance(listed, (list, tuple)):
        raise ValueError(f"{module.__name__}.DERIVATIONS must be a list of functions that build a Derivation, "
                         f"not a {type(listed).__name__}")
    for position, make in enumerate(listed):
        if not callable(make):
            raise ValueError(f"{module.__name__}.DERIVATIONS[{position}] is a {type(make).__name__}, not a function "
                             "that builds a Derivation")
    return list(listed)


def _built_by_user(make: Callable[[], object], outcomes: list[Outcome]) -> Derivation | None:
    """``make()`` built from a clean slate; an exception in it becomes a failed outcome at the user's file and line
    (appended to ``outcomes``), a result that is no Derivation is bad input."""
    name = getattr(make, "__qualname__", repr(make))
    try:
        derivation = build(make)
    except (Exception, SystemExit) as error:  # the user's code: whatever it raises is theirs to fix, where it arose
        where = _user_frame(error, make)
        outcomes.append(Outcome(name, 1, name, "builds", "the function builds its derivation", False, "error",
                                f"{where}: {type(error).__name__}: {str(error)[:200]}"))
        return None
    if not isinstance(derivation, Derivation):
        raise ValueError(f"{name} returned {type(derivation).__name__}, not a Derivation (end it with 'return d')")
    return derivation


def _user_frame(error: BaseException, make: Callable[[], object]) -> str:
    """``file:line`` of the deepest frame of the traceback outside this package and the installed libraries
    (the user's own code); the function's own definition when there is none."""
    import sysconfig
    import traceback
    from pathlib import Path

    ours = [Path(importlib.import_module(f"llm_formulas.{part}").__file__).resolve().parent
            for part in ("formulas", "derivations", "render")]
    libraries = {Path(sysconfig.get_paths()[key]).resolve() for key in ("stdlib", "purelib", "platlib")}
    for frame in reversed(traceback.extract_tb(error.__traceback__)):
        path = Path(frame.filename).resolve()
        if not any(path.is_relative_to(root) for root in [*ours, *libraries]):
            return f"{frame.filename}:{frame.lineno}"
    code = getattr(getattr(make, "__wrapped__", make), "__code__", None)
    return f"{code.co_filename}:{code.co_firstlineno}" if code else repr(make)


def check_all() -> Report:
    outcomes: list[Outcome] = []
    for derivation in all_derivations():
        outcomes.extend(derivation.check())
    outcomes.extend(unit_outcomes())
    outcomes.extend(composition_outcomes())
    outcomes.extend(coverage_outcomes())
    return Report(tuple(outcomes))
