"""An exercise as data: its question, the steps of its solution, its usual slips, and the registry the bank fills.

render/documents/exercise_bank.py registers every exercise here; render/documents/exercises.py reads a reader's answer
and checks it against them (the bank below the checker, so neither imports the other back).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction

import sympy as sp

from llm_formulas.formulas.reports import estimate
from llm_formulas.formulas.vocabulary.catalogue import get
from llm_formulas.formulas.data.gpus import gpu as gpu_preset
from llm_formulas.formulas.data.presets import preset
from llm_formulas.render.printers.human import convert


def model(name: str) -> dict[str, int]:
    """A named model's sizes by symbol name and its exact parameter count ``P`` (``params.decoder.total``)."""
    values = estimate.model_values(preset(name).architecture.values)
    values["P"] = int(estimate.exact("params.decoder.total", **values))
    return values


def gpu(key: str) -> dict[str, sp.Rational]:
    """A GPU preset's X (dense bf16 FLOP/s), W_mem, W_link (both directions), M_gpu, by symbol name."""
    return gpu_preset(key).inputs()


def rational(value: object) -> sp.Rational:
    """``value`` as an exact SymPy Rational. Never ``nsimplify`` a Rational: SymPy 1.14 turns some into surds
    (``nsimplify(Rational(1455, 2))`` is a product of fractional powers)."""
    if isinstance(value, sp.Rational):
        return value
    if isinstance(value, (int, Fraction)):
        return sp.Rational(value)
    return sp.nsimplify(value)  # a float or a string of one: read as the shortest rational


def as_fraction(value: sp.Basic) -> Fraction:
    """``value`` as an exact Python Fraction."""
    value = rational(value)
    return Fraction(int(value.p), int(value.q))


@dataclass(frozen=True)
class Step:
    """One step of a solution: a keyword, what it computes, the formula and its inputs, the unit it is read in."""

    key: str
    what: str
    formula_id: str
    values: dict[str, object]
    unit: str = ""  # a display unit of render.printers.human.DISPLAY_UNITS; "" reads the value as it is
    times: object = 1  # a factor the step applies to the formula (l layers of a per-layer formula)

    @property
    def base_unit(self) -> str:
        return str(get(self.formula_id).unit)

    def exact(self) -> sp.Rational:
        return rational(estimate.exact(self.formula_id, **self.values) * rational(self.times))

    def shown(self) -> Fraction:
        """The step's value in its display unit, as the reader would type it."""
        number = as_fraction(self.exact())
        return Fraction(convert(number, self.base_unit, self.unit)) if self.unit else number


@dataclass(frozen=True)
class Slip:
    """A usual slip of one step (the answer's unless ``step`` names another), computed as the slip computes it.

    The slipped value is the step's formula (or ``formula_id``, the one the slip uses instead: 16Ψ where the slides
    count 20Ψ) at changed ``values`` (forgot GQA: ``g = a``), times ``times``
    (summed the 8 stages: ``times=8``), plus the other formulas in ``plus`` (each a ``Step``, its ``times``
    carrying a sign: forgot the optimizer states is the total minus ``memory.optimizer.adam``), and, when
    ``read_as`` names a unit, the right quantity written in that unit where the step's was asked (GB for GiB)."""

    name: str
    hint: str
    values: dict[str, object] = field(default_factory=dict)
    times: object = 1
    plus: tuple[Step, ...] = ()
    read_as: str = ""
    step: str = ""
    formula_id: str = ""

    def value(self, step: Step) -> Fraction:
        changed = Step(step.key, step.what, self.formula_id or step.formula_id, step.values | self.values, step.unit,
                       rational(step.times) * rational(self.times))
        total = changed.exact() + sum((extra.exact() for extra in self.plus), sp.Integer(0))
        number = as_fraction(total)
        unit = self.read_as or step.unit
        return Fraction(convert(number, step.base_unit, unit)) if unit else number


@dataclass(frozen=True)
class Exercise:
    id: str
    question: str
    steps: tuple[Step, ...]
    slips: tuple[Slip, ...] = ()
    exact: bool = False  # the question asks for the exact figure (a parameter count): no rounding is forgiven
    whole: bool = False  # the question asks how many fit: the figure rounded down, exactly (one more does not fit)

    @property
    def answer(self) -> Step:
        return self.steps[-1]

    def step(self, key: str) -> Step:
        return next(s for s in self.steps if s.key == key)

    def slips_of(self, key: str) -> list[Slip]:
        return [slip for slip in self.slips if (slip.step or self.answer.key) == key]


EXERCISES: dict[str, Exercise] = {}


def register(id: str, question: str, *steps: Step, slips: tuple[Slip, ...] = (), exact: bool = False,
             whole: bool = False) -> Exercise:
    if id in EXERCISES:
        raise ValueError(f"exercise {id!r} registered twice")
    exercise_ = Exercise(id, question, tuple(steps), tuple(slips), exact, whole)
    keys = {s.key for s in steps}
    stray = [slip.name for slip in slips if slip.step and slip.step not in keys]
    if stray:
        raise ValueError(f"exercise {id!r}: slips {stray} name no step of it")
    EXERCISES[id] = exercise_
    return exercise_
