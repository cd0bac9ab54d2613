"""The lessons' exercises and the helper that checks a reader's answer.

An exercise is a question, the steps of its solution (each a catalogue formula at stated
inputs, read in a display unit: ``GB``, ``GiB``, ``days``, ...) and the **usual slips**
of that question, each computed the way the slip computes it: Llama-2-70B's cache with
every query head keeping K and V (forgot GQA), the stages' latencies summed, the bytes
divided by 10⁹ where GiB were asked, the optimizer states left out. The notebook shows only
the question (``exercise(id)``); the reader runs ``check(id, answer)``.

Reading the answer: a number (``1850``, ``1.85e3``, ``7/20``, ``70B``) or a number with a
unit (``"1850 GB"``, ``"1.25 GiB"``, ``"21 minutes"``, ``"12.3 %"``), converted into the
unit the question asks for. Anything else gets a sentence that says what to type, never a
traceback.

Right means within 1 %, or the correct value rounded to as many significant digits as
the reader typed (at least two): the lesson's own roundings (``t ≤ 11`` for 11.18, a bubble
of 0.12 for 63/512, a balance batch of 300 for 295) are right. A question that asks for an
exact count (``exact=True``: a parameter count) wants every digit.

On a wrong answer the helper says what happened, most specific first:

1. the reader passed values per step (``check(id, answer, states=1120)``): the first step
   that is off, and the slip of that step it matches;
2. the answer matches one of the exercise's usual slips: that slip is named, with a hint
   that does not give the answer away;
3. the answer is an intermediate step's value: go on with the next step;
4. the answer is off by a factor that usually means a unit slip (GB for GiB, 1000, 2, 8);
5. otherwise: the steps to pass, to find the one that differs.

The worked solution is printed only on request (``solution(id)``), never in the exercise cells.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from fractions import Fraction

from llm_formulas.render.cli.numbers import InputError, parse_fraction
from llm_formulas.render.documents import exercise_bank  # noqa: F401  (registers every exercise on import)
from llm_formulas.render.documents.exercise_kit import EXERCISES, Exercise, Slip, Step, as_fraction
from llm_formulas.render.printers.human import DISPLAY_UNITS, UnitMismatch, convert, exact, human, significant

TOLERANCE = Fraction(1, 100)
MINIMUM_DIGITS = 2  # an answer is read to at least two significant digits: "300" is 3.0 × 10², not 3 × 10²
GENERIC_SLIPS = (  # (ratio answer/correct, what it usually means, the answers' unit it can happen in: "" any), tried
    # after the exercise's own slips; a byte slip is named only for an answer in bytes (never for a time or a count)
    (Fraction(2**30, 10**9), "GB read as GiB or the reverse (2³⁰ against 10⁹ bytes)", "byte"),
    (Fraction(2**40, 10**12), "TB read as TiB or the reverse (2⁴⁰ against 10¹² bytes)", "byte"),
    (Fraction(1000), "a unit prefix off by one step", ""),
    (Fraction(2), "something counted twice or half: K and V, forward and backward, both link directions", ""),
    (Fraction(8), "bits for bytes or the reverse", "byte"),
    (Fraction(10), "a digit lost or added in the exponent", ""),
)


@dataclass
class Checked:
    """The helper's verdict: right or wrong (None: nothing to judge yet), the step that differs and the slip it matches."""

    exercise: str
    right: bool | None
    differs: str | None = None
    message: str = ""
    slip: str | None = None

    def _repr_markdown_(self) -> str:
        return self.message

    def __repr__(self) -> str:
        return self.message


def get_exercise(id: str) -> Exercise:
    try:
        return EXERCISES[id]
    except KeyError:
        raise KeyError(f"no exercise {id!r}; known: {', '.join(sorted(EXERCISES))}") from None


def all_exercises() -> list[Exercise]:
    return list(EXERCISES.values())


# --- reading an answer ------------------------------------------------------------------------------------

class Unreadable(ValueError):
    """An answer the helper cannot read; its message is the sentence the reader gets."""


@dataclass(frozen=True)
class Reading:
    """A typed answer: its number in the question's unit, and the digits the reader typed (their precision)."""

    value: Fraction
    digits: int | None  # significant digits typed; None for an exact value (an int or a Fraction given in code)
    unit: str = ""  # the unit the reader wrote, if any


_THOUSANDS = re.compile(r"^[+-]?\d{1,3}(,\d{3})+(\.\d*)?([eE][+-]?\d+)?$")


def _typed_digits(number: str) -> int:
    """Significant digits of a typed number: ``300`` has 1 (read as 2), ``0.120`` 3, ``1.85e3`` 3."""
    mantissa = re.split(r"[eE]", number.lstrip("+-"), maxsplit=1)[0].rstrip("kMBT")
    digits = mantissa.replace(".", "").lstrip("0")
    if "." not in mantissa:
        digits = digits.rstrip("0")
    return max(len(digits), 1)


WORD_COUNTS = {"thousand": "k", "million": "M", "billion": "B", "trillion": "T"}  # "5.3 million" as "5.3M"
UNIT_WORDS = {"bytes": "B", "byte": "B"}  # "1.07e10 bytes"


def _split(text: str) -> tuple[str, str]:
    """``"1850 GB"`` → ``("1850", "GB")``; ``"1850GB"`` and ``"12.3%"`` too; ``"70B"`` stays a count. What people type
    besides: ``"5.3 million"`` (a count in words), ``"2.8x"`` (a ratio), ``"1.07e10 bytes"``, ``"USD 5.3M"``."""
    text = text.strip().replace("\u202f", " ").replace("\u00a0", " ")
    text = re.sub(r"\s*\b(thousand|million|billion|trillion)\b", lambda word: WORD_COUNTS[word.group(1).lower()], text,
                  flags=re.IGNORECASE)
    if re.fullmatch(r"[^a-zA-Z]*[0-9.]\s*[x×]", text):  # a ratio typed with its sign
        text = text.rstrip("x×").strip()
    for currency in ("USD", "usd"):
        if text.startswith(currency) or text.endswith(currency):
            text = "$" + text.removeprefix(currency).removesuffix(currency).strip()
    if text.startswith("$"):
        return text[1:].strip(), "$"
    if text.endswith("%"):
        return text[:-1].strip(), "%"
    if " " in text:
        number, unit = text.split(None, 1)
        return number, UNIT_WORDS.get(unit.strip(), unit.strip())
    match = re.match(r"^([+-]?[0-9.,]+(?:[eE][+-]?[0-9]+)?)([A-Za-zµ/]{2,})$", text)
    if match and match.group(2) in DISPLAY_UNITS:
        return match.group(1), match.group(2)
    return text, ""


def read_answer(answer: object, unit: str, base_unit: str) -> Reading:
    """The reader's answer in the question's display ``unit`` (``""``: the formula's own ``base_unit``)."""
    if isinstance(answer, bool):
        raise Unreadable(f"{answer!r} is not a number: type the figure the question asks for.")
    if isinstance(answer, int):
        return Reading(Fraction(answer), _typed_digits(str(answer)))
    if isinstance(answer, Fraction) or (hasattr(answer, "is_Rational") and answer.is_Rational):
        return Reading(as_fraction(answer), None)  # an exact value: no rounding to forgive
    if isinstance(answer, float):
        if answer != answer or answer in (float("inf"), float("-inf")):
            raise Unreadable(f"{answer} is not a figure: type a finite number.")
        return Reading(Fraction(repr(answer)), _typed_digits(repr(answer)))
    if not isinstance(answer, str):
        raise Unreadable(f"an answer of type {type(answer).__name__} cannot be read: type a number such as 1850, "
                         f"or a number with its unit in quotes such as \"1850 GB\".")
    number, written = _split(answer)
    if _THOUSANDS.match(number):
        number = number.replace(",", "")
    try:
        value = parse_fraction(number, "answer", suffix_allowed=True)
    except InputError:
        raise Unreadable(f"{answer!r} is not a number the helper can read: type digits such as 1850, 1.85e3 or 7/20, "
                         f"optionally followed by a unit (\"1850 GB\", \"1.25 GiB\").") from None
    digits = _typed_digits(number) if "/" not in number else None
    if written in ("", unit):
        return Reading(value, digits, written)
    if written == "%":
        return Reading(value / 100, digits, written)
    if written == "$":
        if base_unit != "dollar":
            raise Unreadable(f"the question asks for {unit or base_unit}, not dollars.")
        return Reading(value, digits, written)
    if written not in DISPLAY_UNITS:
        raise Unreadable(f"{written!r} is not a unit the helper knows; the question asks for {unit or 'a plain number'} "
                         f"(units it reads: GB, GiB, MB, TFLOP, PFLOP, ms, s, minutes, hours, days, ...).")
    try:
        in_base = Fraction(convert(value * DISPLAY_UNITS[written][1], DISPLAY_UNITS[written][0], unit or _display_of(base_unit)))
    except UnitMismatch:
        raise Unreadable(f"the question asks for {unit or 'a plain number'}, and {answer!r} is another kind of quantity.") from None
    return Reading(in_base, digits, written)


def _display_of(base_unit: str) -> str:
    """The display unit that is the formula's own unit (byte → B, second → s); UnitMismatch if none."""
    for name, (unit, size) in DISPLAY_UNITS.items():
        if str(unit) == base_unit and size == 1:
            return name
    raise UnitMismatch(base_unit)


# --- judging -------------------------------------------------------------------------------------------

def _close(given: Reading, correct: Fraction, exactly: bool = False) -> bool:
    """Within 1 %, or equal to the correct value rounded to the digits the reader typed (at least two); ``exactly``:
    equal."""
    difference = abs(given.value - correct)
    if exactly:
        return difference == 0
    if difference <= TOLERANCE * abs(correct):
        return True
    if given.digits is None or given.value == 0:
        return False
    digits = max(given.digits, MINIMUM_DIGITS)
    magnitude = len(str(abs(given.value.numerator) // abs(given.value.denominator))) if abs(given.value) >= 1 else None
    exponent = (magnitude - 1) if magnitude is not None else -_leading_zeros(abs(given.value)) - 1
    half_unit = Fraction(10) ** (exponent - digits + 1) / 2
    return difference <= half_unit


def _leading_zeros(x: Fraction) -> int:
    """For 0 < x < 1: the zeros after the decimal point before the first significant digit (0.012 → 1)."""
    zeros = 0
    while x * 10 < 1:
        x *= 10
        zeros += 1
    return zeros


def _ratio(given: Fraction, correct: Fraction) -> float:
    return float(given) / float(correct) if correct else float("inf")


def _generic(ratio: float, base_unit: str) -> str | None:
    """The usual slip whose factor the ratio matches within the tolerance, among those that can happen in the answer's
    unit."""
    for factor, meaning, unit in GENERIC_SLIPS:
        if unit and not base_unit.startswith(unit):
            continue
        for candidate in (float(factor), 1 / float(factor)):
            if abs(ratio / candidate - 1) <= float(TOLERANCE):
                return meaning
    return None


def _matching(slips: list[Slip], step: Step, given: Reading) -> Slip | None:
    """The listed slip whose computed value the answer matches (the closest, if several do)."""
    found = [(abs(given.value - slip.value(step)), slip) for slip in slips if _close(given, slip.value(step))]
    return min(found, key=lambda pair: pair[0])[1] if found else None


def _slip_message(id: str, slip: Slip, where: str = "") -> str:
    return f"Exercise {id}: **wrong**{where}: that is what **{slip.name}** gives. {slip.hint[:1].upper()}{slip.hint[1:]}"


def _sentence(id: str, text: str) -> Checked:
    return Checked(id, None, message=f"Exercise {id}: {text}")


class _Question:
    def __init__(self, exercise: Exercise) -> None:
        self.exercise = exercise

    def _repr_markdown_(self) -> str:
        unit = self.exercise.answer.unit
        steps = ", ".join(f"`{s.key}`" for s in self.exercise.steps)
        return (f"**Exercise {self.exercise.id}.** {self.exercise.question}\n\n"
                f"Answer in **{unit or 'a plain number'}** (a number, or a number with its unit in quotes). "
                f"Steps you may also pass to `check` to find a slip: {steps}.")

    def __repr__(self) -> str:
        return self._repr_markdown_()


def exercise(id: str) -> _Question:
    """The question (what the notebook shows); the solution stays here."""
    return _Question(get_exercise(id))


def check(id: str, answer: object = None, **steps: object) -> Checked:
    """Check a typed answer (in the unit the question names, or with its own unit); on a wrong one, name the slip."""
    try:
        ex = get_exercise(id)
    except KeyError as error:
        return Checked(id, None, message=str(error.args[0]))
    unknown = set(steps) - {s.key for s in ex.steps}
    if unknown:
        return _sentence(id, f"it has no step {', '.join(sorted(unknown))}; its steps are {', '.join(s.key for s in ex.steps)}.")
    if answer is None:
        return _sentence(id, "no answer yet. Type yours in place of `None` and run the cell again.")
    try:
        given = read_answer(answer, ex.answer.unit, ex.answer.base_unit)
        passed = {key: read_answer(value, ex.step(key).unit, ex.step(key).base_unit) for key, value in steps.items()}
    except Unreadable as error:
        return _sentence(id, str(error))
    correct = ex.answer.shown()
    if ex.whole:  # how many fit: the largest whole number within the figure, and no other
        correct = Fraction(correct.numerator // correct.denominator)
    unit = ex.answer.unit
    if _close(given, correct, ex.exact or ex.whole):
        typed = f"{answer}" if given.unit or not unit else f"{answer} {unit}"
        note = f", that is {significant(float(given.value))} {unit}" if given.unit not in ("", unit, "%", "$") else ""
        return Checked(id, True, message=f"Exercise {id}: **right** ({typed}{note}).")
    for step in ex.steps:  # the first step the reader gave that is off
        if step.key in passed and not _close(passed[step.key], step.shown()):
            slip = _matching(ex.slips_of(step.key), step, passed[step.key])
            if slip:
                return Checked(id, False, step.key, _slip_message(id, slip, f" at step `{step.key}` ({step.what})"), slip.name)
            ratio = _ratio(passed[step.key].value, step.shown())
            generic = _generic(ratio, step.base_unit)
            return Checked(id, False, step.key, f"Exercise {id}: **wrong**. Step `{step.key}` ({step.what}) differs: yours is "
                           f"{ratio:.4g} × the correct value" + (f": {generic}" if generic else "") + ".")
    slip = _matching(ex.slips_of(ex.answer.key), ex.answer, given)
    if slip:
        return Checked(id, False, ex.answer.key, _slip_message(id, slip), slip.name)
    if passed and all(key in passed for key in (s.key for s in ex.steps[:-1])):
        return Checked(id, False, ex.answer.key, f"Exercise {id}: **wrong**. Every step you passed is right; the last one, "
                       f"`{ex.answer.key}` ({ex.answer.what}), differs: yours is {_ratio(given.value, correct):.4g} × the correct value.")
    for index, step in enumerate(ex.steps[:-1]):  # stopped early: the answer is an intermediate value
        if step.unit == unit and _close(given, step.shown()):
            following = ex.steps[index + 1]
            return Checked(id, False, following.key, f"Exercise {id}: **wrong**. That is the value of step `{step.key}` "
                           f"({step.what}); go on with `{following.key}` ({following.what}).")
    ratio = _ratio(given.value, correct)
    generic = _generic(ratio, ex.answer.base_unit)
    if generic:
        return Checked(id, False, ex.answer.key, f"Exercise {id}: **wrong**, by a factor of {ratio:.4g}: {generic}.")
    listing = "; ".join(f"`{s.key}`: {s.what} (in {s.unit or 'a plain number'})" for s in ex.steps)
    return Checked(id, False, None, f"Exercise {id}: **wrong**: not within {TOLERANCE * 100} % (yours / correct = {ratio:.4g}). Pass your value of each step to find "
                   f"the one that differs: {listing}.")


def solution(id: str) -> str:
    """The worked solution, step by step (printed only when the reader asks for it)."""
    ex = get_exercise(id)
    lines = [f"Solution of exercise {id}:"]
    for number, step in enumerate(ex.steps, start=1):
        value = step.exact()
        factor = "" if step.times == 1 else f" × {step.times}"
        lines.append(f"{number}. {step.what}: `{step.formula_id}`{factor} = {human(value, step.base_unit, binary='i' in step.unit)} "
                     f"(exact {exact(value)} {step.base_unit})")
    return "\n".join(lines)
