"""Numbers in the units people read: one formatter for every printer.

``human(value, unit)`` picks the unit a person would say: SI prefixes for FLOP,
FLOP/s and bytes (decimal, GB = 10⁹ B, unless ``binary=True``: GiB = 2³⁰ B),
count suffixes k/M/B/T for parameters and tokens, and for durations the largest
of µs, ms, s, minutes, hours, days, years that keeps the number at least 1;
energy in kWh/MWh/GWh, CO2-equivalent in g/kg/t, money as $ with k/M/B.
Three significant digits: ``84 ZFLOP``, ``1.25 GiB``, ``60.9 days``.

``DISPLAY_UNITS`` names every unit a user may ask for (``eval --unit GiB``)
with its base unit and its size in it; ``convert`` refuses a unit of another
dimension. The exact value is never lost: callers print it beside, or behind
a flag.

Imports nothing heavy (no SymPy): the command line loads it before any topic.
"""

from __future__ import annotations

import math
from fractions import Fraction

from llm_formulas.formulas.units import Unit, as_unit


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


def significant(x: float, digits: int = 3) -> str:
    """``x`` to ``digits`` significant digits, without exponent below 10⁶ and without trailing zeros."""
    if x == 0 or not math.isfinite(x):
        return "0" if x == 0 else str(x)
    if abs(x) >= 1000:
        if abs(x) >= 1e15:
            return f"{x:.{digits - 1}e}"
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


def duration(seconds: float) -> str:
    """``seconds`` as the size calls for: ``17.5 ms``, ``4.2 hours``, ``60.9 days`` (nothing at all: ``0 s``)."""
    if seconds == 0:
        return "0 s"
    x, name = _scaled(seconds, _DURATIONS)
    return f"{significant(x)} {name}"


def human(value: object, unit: Unit | str, *, binary: bool = False) -> str:
    """``value`` (a number in ``unit``) in the unit a person would read, three significant digits."""
    unit = as_unit(unit)
    x = float(_as_fraction_or_float(value))
    if unit == BYTE or unit == BYTE / SECOND:
        scaled, prefix = _scaled(x, _BINARY if binary else _DECIMAL)
        return f"{significant(scaled)} {prefix}B" + ("/s" if unit != BYTE else "")
    if unit == FLOP or unit == FLOP / SECOND:
        scaled, prefix = _scaled(x, _DECIMAL)
        return f"{significant(scaled)} {prefix}FLOP" + ("/s" if unit != FLOP else "")
    if unit == SECOND:
        return duration(x)
    if unit == JOULE:
        scaled, name = _scaled(x, _ENERGY)
        return f"{significant(scaled)} {name}"
    if unit == GRAM:
        scaled, name = _scaled(x, _MASS)
        return f"{significant(scaled)} {name} CO2e"
    if unit == DOLLAR:
        scaled, suffix = _scaled(x, _COUNT)
        return f"${significant(scaled)}{suffix}"
    if unit.is_dimensionless:
        if abs(x) >= 10**6:
            scaled, suffix = _scaled(x, _COUNT)
            return f"{significant(scaled)}{suffix}" if suffix else significant(x)
        return significant(x)
    if unit.is_single_base and unit.exponents[0][0] in ("parameter", "token", "sequence", "GPU"):
        name = unit.exponents[0][0]
        scaled, suffix = _scaled(x, _COUNT)
        plural = "" if abs(x) == 1 else "s"
        return f"{significant(scaled)}{suffix} {name}{plural}" if suffix else f"{significant(x)} {name}{plural}"
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
