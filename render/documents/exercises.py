"""The lessons' exercises and the helper that checks a reader's answer.

An exercise is a question and the steps of its solution; each step is a catalogue
formula at stated inputs, read in a display unit (``GB``, ``GiB``, ``days``, ...). The
notebook shows only the question (``exercise(id)``); the reader types a number in the
unit the question names and runs ``check(id, answer)``. Right means within 1 % (the
three digits people carry). On a wrong answer the helper says which step differs: the
reader may pass a value per step (``check(id, answer, states=1120)``) and learns the
first one that is off and by what factor; without them, it recognises a stopped-early
answer (an intermediate step's value) and the usual slips (GB for GiB, a factor of
1000, 2 or 8), and otherwise lists the steps to pass. The worked solution is printed
only on request (``solution(id)``), never in the exercise cells.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction

import sympy as sp

from llm_formulas.formulas import estimate
from llm_formulas.formulas.catalogue import get
from llm_formulas.formulas.gpus import gpu as gpu_preset
from llm_formulas.formulas.presets import preset
from llm_formulas.render.printers.human import convert, exact, human

TOLERANCE = Fraction(1, 100)
SLIPS = (  # (ratio answer/correct, what it usually means)
    (Fraction(2**30, 10**9), "GB read as GiB or the reverse (2³⁰ against 10⁹ bytes)"),
    (Fraction(2**40, 10**12), "TB read as TiB or the reverse (2⁴⁰ against 10¹² bytes)"),
    (Fraction(1000), "a unit prefix off by one step"),
    (Fraction(2), "something counted twice or half: K and V, forward and backward, both link directions"),
    (Fraction(8), "bits for bytes or the reverse"),
    (Fraction(10), "a digit lost or added in the exponent"),
)


def model(name: str) -> dict[str, int]:
    """A named model's sizes by symbol name and its exact parameter count ``P`` (``params.decoder.total``)."""
    values = estimate.model_values(preset(name).architecture.values)
    values["P"] = int(estimate.exact("params.decoder.total", **values))
    return values


def gpu(key: str) -> dict[str, sp.Rational]:
    """A GPU preset's X (dense bf16 FLOP/s), W_mem, W_link (both directions), M_gpu, by symbol name."""
    return gpu_preset(key).inputs()


@dataclass(frozen=True)
class Step:
    """One step of a solution: a keyword, what it computes, the formula and its inputs, the unit it is read in."""

    key: str
    what: str
    formula_id: str
    values: dict[str, object]
    unit: str = ""  # a display unit of render.printers.human.DISPLAY_UNITS; "" reads the value as it is
    times: object = 1  # a factor the step applies to the formula (l layers of a per-layer formula)

    def exact(self) -> sp.Rational:
        return sp.nsimplify(estimate.exact(self.formula_id, **self.values) * sp.nsimplify(self.times))

    def shown(self) -> Fraction:
        """The step's value in its display unit, as the reader would type it."""
        value = self.exact()
        number = Fraction(int(value.p), int(value.q))
        return Fraction(convert(number, get(self.formula_id).unit, self.unit)) if self.unit else number


@dataclass(frozen=True)
class Exercise:
    id: str
    question: str
    steps: tuple[Step, ...]

    @property
    def answer(self) -> Step:
        return self.steps[-1]


@dataclass
class Checked:
    """The helper's verdict: right or wrong, and when wrong the step that differs (or the slip it looks like)."""

    exercise: str
    right: bool | None
    differs: str | None = None
    message: str = ""
    hints: list[str] = field(default_factory=list)

    def _repr_markdown_(self) -> str:
        return self.message

    def __repr__(self) -> str:
        return self.message


_EXERCISES: dict[str, Exercise] = {}


def register(id: str, question: str, *steps: Step) -> Exercise:
    if id in _EXERCISES:
        raise ValueError(f"exercise {id!r} registered twice")
    _EXERCISES[id] = Exercise(id, question, tuple(steps))
    return _EXERCISES[id]


def get_exercise(id: str) -> Exercise:
    _load()
    try:
        return _EXERCISES[id]
    except KeyError:
        raise KeyError(f"no exercise {id!r}; known: {', '.join(sorted(_EXERCISES))}") from None


def all_exercises() -> list[Exercise]:
    _load()
    return list(_EXERCISES.values())


def _load() -> None:
    from llm_formulas.render.documents import exercise_bank  # noqa: F401  (registers every exercise on import)


def _close(given: object, correct: Fraction) -> bool:
    given = Fraction(str(given)) if isinstance(given, float) else Fraction(given)
    if correct == 0:
        return given == 0
    return abs(given - correct) <= TOLERANCE * abs(correct)


def _ratio(given: object, correct: Fraction) -> float:
    return float(given) / float(correct) if correct else float("inf")


def _slip(ratio: float) -> str | None:
    for factor, meaning in SLIPS:
        for candidate in (float(factor), 1 / float(factor)):
            if abs(ratio / candidate - 1) <= float(TOLERANCE):
                return meaning
    return None


class _Question:
    def __init__(self, exercise: Exercise) -> None:
        self.exercise = exercise

    def _repr_markdown_(self) -> str:
        unit = self.exercise.answer.unit
        steps = ", ".join(f"`{s.key}`" for s in self.exercise.steps)
        return (f"**Exercise {self.exercise.id}.** {self.exercise.question}\n\n"
                f"Answer in **{unit or 'a plain number'}**. Steps you may also pass to `check` to find a slip: {steps}.")

    def __repr__(self) -> str:
        return self._repr_markdown_()


def exercise(id: str) -> _Question:
    """The question (what the notebook shows); the solution stays here."""
    return _Question(get_exercise(id))


def check(id: str, answer: object = None, **steps: object) -> Checked:
    """Check a typed answer (in the unit the question names); on a wrong one, say which step differs."""
    ex = get_exercise(id)
    unknown = set(steps) - {s.key for s in ex.steps}
    if unknown:
        raise KeyError(f"exercise {id} has no step {', '.join(sorted(unknown))}; its steps: {', '.join(s.key for s in ex.steps)}")
    if answer is None:
        return Checked(id, None, message=f"Exercise {id}: no answer yet. Type yours in place of `None` and run the cell again.")
    correct = ex.answer.shown()
    if _close(answer, correct):
        return Checked(id, True, message=f"Exercise {id}: **right** ({answer} {ex.answer.unit}).")
    for step in ex.steps:  # the first step the reader gave that is off
        if step.key in steps and not _close(steps[step.key], step.shown()):
            ratio = _ratio(steps[step.key], step.shown())
            slip = _slip(ratio)
            return Checked(id, False, step.key, f"Exercise {id}: **wrong**. Step `{step.key}` ({step.what}) differs: yours is "
                           f"{ratio:.4g} × the correct value" + (f": {slip}" if slip else "") + ".")
    if steps and all(key in steps for key in (s.key for s in ex.steps[:-1])):
        return Checked(id, False, ex.answer.key, f"Exercise {id}: **wrong**. Every step you passed is right; the last one, "
                       f"`{ex.answer.key}` ({ex.answer.what}), differs: yours is {_ratio(answer, correct):.4g} × the correct value.")
    for index, step in enumerate(ex.steps[:-1]):  # stopped early: the answer is an intermediate value
        if step.unit == ex.answer.unit and _close(answer, step.shown()):
            return Checked(id, False, ex.steps[index + 1].key, f"Exercise {id}: **wrong**. That is the value of step `{step.key}` "
                           f"({step.what}); go on with `{ex.steps[index + 1].key}` ({ex.steps[index + 1].what}).")
    ratio = _ratio(answer, correct)
    slip = _slip(ratio)
    if slip:
        return Checked(id, False, ex.answer.key, f"Exercise {id}: **wrong**, by a factor of {ratio:.4g}: {slip}.")
    listing = "; ".join(f"`{s.key}`: {s.what} (in {s.unit or 'a plain number'})" for s in ex.steps)
    return Checked(id, False, None, f"Exercise {id}: **wrong** (yours / correct = {ratio:.4g}). Pass your value of each step to find "
                   f"the one that differs: {listing}.")


def solution(id: str) -> str:
    """The worked solution, step by step (printed only when the reader asks for it)."""
    ex = get_exercise(id)
    lines = [f"Solution of exercise {id}:"]
    for number, step in enumerate(ex.steps, start=1):
        value = step.exact()
        unit = get(step.formula_id).unit
        factor = "" if step.times == 1 else f" × {step.times}"
        lines.append(f"{number}. {step.what}: `{step.formula_id}`{factor} = {human(value, unit, binary='i' in step.unit)} "
                     f"(exact {exact(value)} {unit})")
    return "\n".join(lines)
