"""A small dimension algebra for the quantities of large-model systems.

A unit is a vector of integer or rational exponents over the base units
parameter, token, sequence, layer, byte, FLOP, second, GPU, joule (energy), gram
(of CO₂-equivalent) and dollar. Shape symbols (hidden size, heads, sequence length as
a tensor dimension) are pure numbers; a formula that counts parameters, FLOPs, layers,
sequences or GPUs states it with a unit mark (``u_param``, ``u_flop``, ... in
formulas/vocabulary/symbols.py), so that a pure number is left only for a true ratio.
Bytes are decimal (GB = 1e9) unless a name says GiB.

Units are parsed from a tiny grammar (``FLOP/(parameter*token)``,
``byte/second``, ``1``) by hand: nothing is ever passed to ``eval`` or ``sympify``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from fractions import Fraction

__all__ = ["BASE_UNITS", "DIMENSIONLESS", "Unit", "UnitSyntaxError", "as_unit"]

BASE_UNITS: tuple[str, ...] = (
    "parameter",
    "token",
    "sequence",
    "layer",
    "byte",
    "FLOP",
    "second",
    "GPU",
    "joule",
    "gram",
    "dollar",
)


class UnitSyntaxError(ValueError):
    """A unit string that the grammar does not accept."""


@dataclass(frozen=True)
class Unit:
    """A product of base units raised to rational powers."""

    exponents: tuple[tuple[str, Fraction], ...] = ()

    @staticmethod
    def of(mapping: dict[str, Fraction | int]) -> "Unit":
        cleaned = {k: Fraction(v) for k, v in mapping.items() if Fraction(v) != 0}
        for name in cleaned:
            if name not in BASE_UNITS:
                raise UnitSyntaxError(f"unknown base unit {name!r}; known: {', '.join(BASE_UNITS)}")
        return Unit(tuple(sorted(cleaned.items(), key=lambda kv: BASE_UNITS.index(kv[0]))))

    @property
    def as_dict(self) -> dict[str, Fraction]:
        return dict(self.exponents)

    @property
    def is_dimensionless(self) -> bool:
        return not self.exponents

    @property
    def is_single_base(self) -> bool:
        """True for a plain base unit such as ``byte`` (what a count may be declared as)."""
        return len(self.exponents) == 1 and self.exponents[0][1] == 1

    def __mul__(self, other: "Unit") -> "Unit":
        merged = self.as_dict
        for name, power in other.exponents:
            merged[name] = merged.get(name, Fraction(0)) + power
        return Unit.of(merged)

    def __truediv__(self, other: "Unit") -> "Unit":
        return self * other ** -1

    def __pow__(self, power: Fraction | int) -> "Unit":
        return Unit.of({k: v * Fraction(power) for k, v in self.exponents})

    def __str__(self) -> str:
        if not self.exponents:
            return "1"

        def factor(name: str, power: Fraction) -> str:
            return name if power == 1 else f"{name}^{power}"

        num = [factor(k, v) for k, v in self.exponents if v > 0]
        den = [factor(k, -v) for k, v in self.exponents if v < 0]
        top = "*".join(num) if num else "1"
        if not den:
            return top
        bottom = den[0] if len(den) == 1 else "(" + "*".join(den) + ")"
        return f"{top}/{bottom}"


DIMENSIONLESS = Unit()

_TOKEN = re.compile(r"\s*(?:(?P<name>[A-Za-z]+)(?:\^(?P<power>-?\d+(?:/\d+)?))?|(?P<one>1)|(?P<op>[*/()·]))")


def parse_unit(text: str) -> Unit:
    """Parse ``a*b/(c*d^2)`` style unit strings; ``1`` is dimensionless."""
    tokens: list[tuple[str, str]] = []
    pos = 0
    text = text.strip()
    while pos < len(text):
        match = _TOKEN.match(text, pos)
        if not match or match.end() == pos:
            raise UnitSyntaxError(f"cannot read unit {text!r} at position {pos}")
        if match.group("name"):
            name = match.group("name")
            if name not in BASE_UNITS:
                raise UnitSyntaxError(f"unknown base unit {name!r} in {text!r}; known: {', '.join(BASE_UNITS)}")
            tokens.append(("unit", name + "^" + (match.group("power") or "1")))
        elif match.group("one"):
            tokens.append(("unit", ""))
        else:
            tokens.append(("op", match.group("op")))
        pos = match.end()
    result, rest = _parse_product(tokens, text)
    if rest:
        raise UnitSyntaxError(f"unexpected {rest[0][1]!r} in unit {text!r}")
    return result


def _parse_factor(tokens: list[tuple[str, str]], text: str) -> tuple[Unit, list[tuple[str, str]]]:
    if not tokens:
        raise UnitSyntaxError(f"unit {text!r} ends too early")
    kind, value = tokens[0]
    if kind == "unit":
        if not value:
            return DIMENSIONLESS, tokens[1:]
        name, power = value.split("^")
        return Unit.of({name: Fraction(power)}), tokens[1:]
    if value == "(":
        inner, rest = _parse_product(tokens[1:], text)
        if not rest or rest[0][1] != ")":
            raise UnitSyntaxError(f"unbalanced parenthesis in unit {text!r}")
        return inner, rest[1:]
    raise UnitSyntaxError(f"unexpected {value!r} in unit {text!r}")


def _parse_product(tokens: list[tuple[str, str]], text: str) -> tuple[Unit, list[tuple[str, str]]]:
    result, rest = _parse_factor(tokens, text)
    while rest and rest[0][1] in ("*", "·", "/"):
        op = rest[0][1]
        factor, rest = _parse_factor(rest[1:], text)
        result = result / factor if op == "/" else result * factor
    return result, rest


def as_unit(unit: Unit | str) -> Unit:
    """Accept a Unit or its string form."""
    return unit if isinstance(unit, Unit) else parse_unit(unit)
