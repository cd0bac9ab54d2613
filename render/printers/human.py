"""Numbers in the units people read: one formatter for every printer.

``human(value, unit)`` picks the unit a person would say: SI prefixes for FLOP,
FLOP/s and bytes (decimal, GB = 10⁹ B, unless ``binary=True``: GiB = 2³⁰ B),
count suffixes k/M/B/T for parameters and tokens, and for durations the largest
of µs, ms, s, minutes, hours, days, years that keeps the number at least 1;
energy in kWh/MWh/GWh, CO2-equivalent in g/kg/t, money as $ with k/M/B.
Three significant digits: ``84 ZFLOP``, ``1.25 GiB``, ``60.9 days``. A number far
from 1 that no unit brings near it is written in exponent notation (``3.49e-80 s``,
``1.00e+30 B``, ``2.09e-4``), never as 80 zeros or a 100-digit integer.

``DISPLAY_UNITS`` names every unit a user may ask for (``eval --unit GiB``)
with its base unit and its size in it; ``convert`` refuses a unit of another
dimension. The exact value is never lost: callers print it beside, or behind
a flag.

Imports nothing heavy (no SymPy): the command line loads it before any topic.
"""

from __future__ import annotations

import math
from fractions import Fraction

from llm_formulas.formulas.vocabulary.units import Unit, as_unit


class UnitMismatch(ValueError):
    """A display unit of another dimension than the value's."""


def _unit(text: str) -> Unit:
    return as_unit(text)


_DECIMAL = [("", 1), ("k", 10**3), ("M", 10**6), ("G", 10**9), ("T", 10**12), ("P", 10**15), ("E", 10**18), ("Z", 10**21), ("Y", 10**24)]
_BINARY = [("", 1), ("Ki", 2**10), ("Mi", 2**20), ("Gi", 2**30), ("Ti", 2**40), ("Pi", 2**50), ("Ei", 2**60)]
_COUNT = [("", 1), ("k", 10**3), ("M", 10**6), ("B", 10**9), ("T", 10**12), ("Q", 10**15)]
_MINUTE, _HOUR, _DAY, _YEAR = 60, 3600, 86400, Fraction(36525 * 86400, 100)
_DURATIONS = [("ns", Fraction(1, 10**9)), ("µs", Fraction(1, 10**6)), ("ms", Fraction(1, 1000)), ("s", 1), ("minutes", _MINUTE), ("hours", _HOUR), ("days", _DAY), ("years", _YEAR)]

BYTE, FLOP, SECOND = _unit("byte"), _unit("FLOP"), _unit("second")
JOULE, GRAM, DOLLAR = _unit("joule"), _unit("gram"), _unit("dollar")
_ENERGY = [("J", 1), ("kWh", 3_600_000), ("MWh", 3_600_000_000), ("GWh", 3_600_000_000_000)]
_MASS = [("g", 1), ("kg", 10**3), ("t", 10**6), ("kt", 10**9), ("Mt", 10**12)]  # of CO2-equivalent


def _display_units() -> dict[str, tuple[Unit, Fraction]]:
    units: dict[str, tuple[Unit, Fraction]] = {}
    for prefix, size in _DECIMAL:
        units[f"{prefix}B"] = (BYTE, Fraction(size))
        units[f"{prefix}FLOP"] = (FLOP, Fraction(size))
        units[f"{prefix}FLOP/s"] = (FLOP / SECOND, Fraction(size))
        units[f"{prefix}B/s"] = (BYTE / SECOND, Fraction(size))
    for prefix, size in _BINARY[1:]:
        units[f"{prefix}B"] = (BYTE, Fraction(size))
        units[f"{prefix}B/s"] = (BYTE / SECOND, Fraction(size))
    for name, size in _DURATIONS:
        units[name] = (SECOND, Fraction(size))
    units.update({"us": units["µs"], "min": units["minutes"], "h": units["hours"], "hour": units["hours"], "day": units["days"], "year": units["years"]})
    units["byte"] = units["B"]
    units["second"] = units["s"]
    return units


DISPLAY_UNITS: dict[str, tuple[Unit, Fraction]] = _display_units()


def _as_fraction_or_float(value: object) -> Fraction | float:
    if isinstance(value, (int, Fraction)):
        return Fraction(value)
    if hasattr(value, "is_Rational") and value.is_Rational:  # a SymPy Rational, without importing SymPy
        return Fraction(int(value.p), int(value.q))
    return float(value)  # type: ignore[arg-type]


def _exponent_form(x: float, digits: int) -> str:
    """``1.23e+15``, ``3.49e-80``: ``digits`` significant digits, the exponent without leading zeros (as JavaScript's
    ``toExponential`` writes it, so that the sizing page prints the same)."""
    mantissa, exponent = f"{x:.{digits - 1}e}".split("e")
    return f"{mantissa}e{exponent[0]}{int(exponent[1:])}"


def _exact_exponent_form(x: Fraction, digits: int) -> str:
    """The exponent form of an exact value beyond floating-point range (10⁴⁰⁰, 10⁻⁴⁰⁰), computed exactly."""
    size = abs(x)
    exponent = len(str(size.numerator)) - len(str(size.denominator))
    while size >= Fraction(10) ** (exponent + 1):
        exponent += 1
    while size < Fraction(10) ** exponent:
        exponent -= 1
    mantissa = round(size / Fraction(10) ** exponent * 10 ** (digits - 1))
    if mantissa >= 10**digits:  # 9.995 rounds up to 10.0
        mantissa, exponent = mantissa // 10, exponent + 1
    text = str(mantissa)
    sign = "-" if x < 0 else ""
    return f"{sign}{text[0]}.{text[1:]}e{'+' if exponent >= 0 else '-'}{abs(exponent)}"


SMALL, LARGE = 1e-3, 1e15  # below and above these, exponent notation: never 80 zeros, never a 30-digit integer


def significant(x: float, digits: int = 3) -> str:
    """``x`` to ``digits`` significant digits without trailing zeros: ``0.35``, ``17.5``, ``4,096`` with thousands
    separators up to 10¹⁵, exponent notation beyond it and below 10⁻³ (``1.23e+18``, ``3.49e-80``). An exact value
    too large or too small for a float keeps its exponent (``1.00e+400``)."""
    if isinstance(x, Fraction) or getattr(x, "is_Rational", False):
        exact = _as_fraction_or_float(x)
        if exact != 0 and not 1e-300 < abs(exact) < 1e300:
            return _exact_exponent_form(exact, digits)
        x = float(exact)
    if x == 0 or not math.isfinite(x):
        return "0" if x == 0 else str(x)
    if abs(x) >= LARGE or abs(x) < SMALL:
        return _exponent_form(x, digits)
    if abs(x) >= 1000:
        return f"{round(x):,}"
    decimals = max(0, digits - 1 - math.floor(math.log10(abs(x))))
    text = f"{x:.{decimals}f}"
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return text


def _scaled(x: float, table: list[tuple[str, object]]) -> tuple[float, str]:
    """The largest entry of ``table`` that leaves ``|x| / size ≥ 1`` (the first if none)."""
    chosen = table[0]
    for name, size in table:
        if abs(x) >= float(size) * (1 - 1e-12):
            chosen = (name, size)
    return x / float(chosen[1]), chosen[0]


def _prefixed(x: float, table: list[tuple[str, object]]) -> tuple[str, str]:
    """``x`` in the table's largest unit that keeps it at least 1 (``1.25``, ``"G"``); beyond the table's last unit
    by ten thousand times or more, in exponent notation of the first (``1.00e+30``, ``""``): never ``1,000,000 YB``."""
    scaled, name = _scaled(x, table)
    if name == table[-1][0] and abs(scaled) >= 10_000:
        return _exponent_form(x, 3), table[0][0]
    return significant(scaled), name


def duration(seconds: float) -> str:
    """``seconds`` as the size calls for: ``17.5 ms``, ``4.2 hours``, ``60.9 days`` (nothing at all: ``0 s``); below a
    nanosecond in seconds (``3.49e-80 s``)."""
    if seconds == 0:
        return "0 s"
    if abs(seconds) < 1e-9:
        return f"{_exponent_form(seconds, 3)} s"
    x, name = _scaled(seconds, _DURATIONS)
    return f"{significant(x)} {name}"


def human(value: object, unit: Unit | str, *, binary: bool = False) -> str:
    """``value`` (a number in ``unit``) in the unit a person would read, three significant digits; far beyond the
    largest unit, or below the smallest, in exponent notation."""
    unit = as_unit(unit)
    number = _as_fraction_or_float(value)
    if isinstance(number, Fraction) and number != 0 and not 1e-300 < abs(number) < 1e300:  # beyond a float
        base = {BYTE: " B", BYTE / SECOND: " B/s", FLOP / SECOND: " FLOP/s", SECOND: " s"}.get(unit, f" {unit}")
        return significant(number) + ("" if unit.is_dimensionless else base)  # the exact exponent, in the base unit
    x = float(number)
    if unit == BYTE or unit == BYTE / SECOND:
        shown, prefix = _prefixed(x, _BINARY if binary else _DECIMAL)
        return f"{shown} {prefix}B" + ("/s" if unit != BYTE else "")
    if unit == FLOP or unit == FLOP / SECOND:
        shown, prefix = _prefixed(x, _DECIMAL)
        return f"{shown} {prefix}FLOP" + ("/s" if unit != FLOP else "")
    if unit == SECOND:
        return duration(x)
    if unit == JOULE:
        shown, name = _prefixed(x, _ENERGY)
        return f"{shown} {name}"
    if unit == GRAM:
        shown, name = _prefixed(x, _MASS)
        return f"{shown} {name} CO2e"
    if unit == DOLLAR:
        shown, suffix = _prefixed(x, _COUNT)
        return f"${shown}{suffix}"
    if unit.is_dimensionless:
        if abs(x) >= 10**6:
            shown, suffix = _prefixed(x, _COUNT)
            return f"{shown}{suffix}"
        return significant(x)
    if unit.is_single_base and unit.exponents[0][0] in ("parameter", "token", "sequence", "GPU"):
        name = unit.exponents[0][0]
        shown, suffix = _prefixed(x, _COUNT)
        plural = "" if abs(x) == 1 else "s"
        return f"{shown}{suffix} {name}{plural}"
    if unit.as_dict.get("second") == 1 and len(unit.exponents) == 2:  # GPU·second and the like
        other = [name for name, power in unit.exponents if name != "second"]
        if other and unit.as_dict[other[0]] == 1:
            return f"{duration(x).replace(' ', f' {other[0]}-', 1)}"
    return f"{significant(x)} {unit}"


def exact(value: object) -> str:
    """The exact value: an integer with thousands separators, or a fraction with its decimal."""
    number = _as_fraction_or_float(value)
    if isinstance(number, Fraction):
        if number.denominator == 1:
            return f"{number.numerator:,}"
        return f"{number.numerator}/{number.denominator} ≈ {float(number):.12g}"
    return f"{number:.12g}"


def convert(value: object, unit: Unit | str, target: str) -> Fraction | float:
    """``value`` (in ``unit``) expressed in the display unit ``target``; exact for exact input."""
    if target not in DISPLAY_UNITS:
        raise UnitMismatch(f"unknown unit; known: {', '.join(sorted(DISPLAY_UNITS))}")
    base, size = DISPLAY_UNITS[target]
    unit = as_unit(unit)
    if unit != base:
        raise UnitMismatch(f"cannot show a value in {unit} as {target} (a {base} unit)")
    number = _as_fraction_or_float(value)
    return number / size if isinstance(number, Fraction) else number / float(size)
