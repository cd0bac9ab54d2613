"""Reading an expression a user typed, by a grammar of the project's own, never through ``eval`` or ``sympify``.

    expression := term ( ( "+" | "-" ) term )*
    term       := unary ( ( "*" | "/" ) unary )*
    unary      := ( "+" | "-" ) unary | power
    power      := atom ( ( "^" | "**" ) unary )?        (right-associative: -h**2 is -(h²), 2**-1 is 1/2)
    atom       := number | name | function "(" expression ( "," expression )* ")" | "(" expression ")"
    number     := digits ( "." digits? )? | "." digits, then ( "e" | "E" ) sign? digits optionally
    name       := a symbol of the catalogue's table (the active user catalogue's first), resolved by ``resolve``
    function   := Max | Min | ceiling | floor | log | sqrt | exp | Mod   (the functions the catalogue's formulas use)

Numbers are exact Rationals (``0.35`` is 7/20, ``1e9`` is 10⁹); ``−``, ``×`` and ``·`` read as ``-``, ``*``, ``*``.
Anything else (an attribute, a subscript, a string, a keyword, an unknown function) is refused with one line naming
it: ``ExpressionError``; an unknown name raises ``UnknownSymbol`` with the nearest names. Inputs are bounded: at
most 10,000 characters, 100 levels of parentheses, exponents of at most 100 digits' worth of ten, and a number
raised to a number may not exceed 100,000 bits, so that nothing typed can hang the reader.

``as_expression`` is what every public function that takes an expression calls: a string is read by this grammar,
a SymPy object is kept, a Python number becomes a SymPy number. ``as_sympy`` is the same for internal values and
refuses a string (code that received one should have read it with ``as_expression`` at its public edge).
"""

from __future__ import annotations

import numbers
import re
from fractions import Fraction

import sympy as sp

from llm_formulas.formulas.vocabulary.symbols import resolve

__all__ = ["ExpressionError", "as_expression", "as_sympy", "parse_expression"]


class ExpressionError(ValueError):
    """A string that is not an expression of the grammar above, or a value that is not an expression at all."""


MAX_LENGTH = 10_000  # characters of one expression
MAX_DEPTH = 100  # nested parentheses, calls and unary signs
MAX_EXPONENT = 100  # of a number's "e" part
MAX_BITS = 100_000  # of a number raised to a number

# name → (function, fewest arguments, most arguments)
FUNCTIONS = {
    "Max": (sp.Max, 1, None),
    "Min": (sp.Min, 1, None),
    "ceiling": (sp.ceiling, 1, 1),
    "floor": (sp.floor, 1, 1),
    "log": (sp.log, 1, 2),
    "sqrt": (sp.sqrt, 1, 1),
    "exp": (sp.exp, 1, 1),
    "Mod": (sp.Mod, 2, 2),
}

_TOKEN = re.compile(
    r"\s*(?:(?P<number>(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?)"
    r"|(?P<name>[A-Za-z_][A-Za-z0-9_]*)|(?P<op>\*\*|[-+*/^(),]))",
    re.ASCII,
)
_SPELLINGS = str.maketrans({"−": "-", "×": "*", "·": "*"})


def _shown(text: str) -> str:
    return repr(text if len(text) <= 60 else text[:60] + "…")


def _tokens(text: str) -> list[tuple[str, str, int]]:
    tokens, position = [], 0
    while position < len(text):
        if text[position:].strip() == "":
            break
        match = _TOKEN.match(text, position)
        if match is None:
            start = len(text) - len(text[position:].lstrip())
            raise ExpressionError(f"{_shown(text)} is not an expression: unexpected {text[start]!r} at character "
                                  f"{start + 1} (only numbers, the catalogue's symbols, + - * / ^, parentheses and "
                                  f"{', '.join(FUNCTIONS)} are read)")
        kind = match.lastgroup
        tokens.append((kind, match[kind], match.start(kind)))
        position = match.end()
    return tokens


class _Reader:
    """A recursive-descent reader over the tokens of one expression."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.tokens = _tokens(text)
        self.at = 0
        self.depth = 0

    def fail(self, why: str) -> ExpressionError:
        return ExpressionError(f"{_shown(self.text)} is not an expression: {why}")

    def peek(self) -> str | None:
        return self.tokens[self.at][1] if self.at < len(self.tokens) else None

    def take(self, expected: str | None = None) -> tuple[str, str, int]:
        if self.at >= len(self.tokens):
            raise self.fail("it ends too early" if expected is None else f"{expected!r} expected at its end")
        token = self.tokens[self.at]
        if expected is not None and token[1] != expected:
            raise self.fail(f"{expected!r} expected at character {token[2] + 1}, found {token[1]!r}")
        self.at += 1
        return token

    def whole(self) -> sp.Expr:
        if not self.tokens:
            raise self.fail("it is empty")
        value = self.expression()
        if self.at < len(self.tokens):
            kind, token, where = self.tokens[self.at]
            raise self.fail(f"unexpected {token!r} at character {where + 1}")
        return value

    def expression(self) -> sp.Expr:
        value = self.term()
        while self.peek() in ("+", "-"):
            value = value + self.term() if self.take()[1] == "+" else value - self.term()
        return value

    def term(self) -> sp.Expr:
        value = self.unary()
        while self.peek() in ("*", "/"):
            operator = self.take()[1]
            right = self.unary()
            if operator == "/" and right == 0:
                raise self.fail("division by zero")
            value = value * right if operator == "*" else value / right
        return value

    def nested(self) -> None:
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise self.fail(f"more than {MAX_DEPTH} levels of nesting")

    def unary(self) -> sp.Expr:
        if self.peek() in ("+", "-"):
            self.nested()
            sign = self.take()[1]
            value = self.unary()
            self.depth -= 1
            return -value if sign == "-" else value
        return self.power()

    def power(self) -> sp.Expr:
        base = self.atom()
        if self.peek() not in ("^", "**"):
            return base
        self.take()
        self.nested()
        exponent = self.unary()
        self.depth -= 1
        if base.is_Rational and exponent.is_Rational:
            bits = abs(int(base.p)).bit_length() + int(base.q).bit_length()
            if bits * abs(exponent) > MAX_BITS:
                raise self.fail(f"{base}^{exponent} is too large a number")
        return base**exponent

    def atom(self) -> sp.Expr:
        kind, token, where = self.take()
        if kind == "number":
            return _number(token, self)
        if token == "(":
            self.nested()
            value = self.expression()
            self.take(")")
            self.depth -= 1
            return value
        if kind == "name":
            if self.peek() == "(":
                return self.call(token, where)
            return resolve(token)
        raise self.fail(f"unexpected {token!r} at character {where + 1}")

    def call(self, name: str, where: int) -> sp.Expr:
        if name not in FUNCTIONS:
            raise self.fail(f"unknown function {name!r} at character {where + 1} (known: {', '.join(FUNCTIONS)})")
        function, fewest, most = FUNCTIONS[name]
        self.take("(")
        self.nested()
        arguments = [self.expression()]
        while self.peek() == ",":
            self.take()
            arguments.append(self.expression())
        self.take(")")
        self.depth -= 1
        if len(arguments) < fewest or (most is not None and len(arguments) > most):
            count = str(fewest) if most == fewest else f"{fewest} or more" if most is None else f"{fewest} to {most}"
            raise self.fail(f"{name} takes {count} arguments, got {len(arguments)}")
        return function(*arguments)


def _number(token: str, reader: _Reader) -> sp.Rational:
    mantissa, _, exponent = token.lower().partition("e")
    if exponent and abs(int(exponent)) > MAX_EXPONENT:
        raise reader.fail(f"{token} is out of range (an exponent of at most {MAX_EXPONENT})")
    value = Fraction(mantissa) * Fraction(10) ** int(exponent or 0)
    return sp.Rational(value.numerator, value.denominator)


def parse_expression(text: str) -> sp.Expr:
    """The SymPy expression ``text`` states under the grammar above, its names the catalogue's symbols."""
    if len(text) > MAX_LENGTH:
        raise ExpressionError(f"an expression of {len(text)} characters is too long (at most {MAX_LENGTH})")
    return _Reader(text.translate(_SPELLINGS)).whole()


def as_sympy(value: object) -> sp.Basic:
    """A SymPy object as it is, a Python (or NumPy) number as a SymPy number: exact for integers and fractions, a
    Float for a float. A string, a boolean and anything else are refused: nothing here reads text."""
    if isinstance(value, sp.Basic):
        return value
    if isinstance(value, bool) or isinstance(value, str):
        raise ExpressionError(f"expected a SymPy expression or a number, got {type(value).__name__} {_shown(str(value))}")
    if isinstance(value, numbers.Integral):
        return sp.Integer(int(value))
    if isinstance(value, numbers.Rational):
        return sp.Rational(int(value.numerator), int(value.denominator))
    if isinstance(value, numbers.Real):
        return sp.Float(float(value))
    raise ExpressionError(f"expected a SymPy expression or a number, got {type(value).__name__}")


def as_expression(value: object) -> sp.Basic:
    """What a public function makes of an expression it is given: a string read by ``parse_expression``, anything
    else by ``as_sympy``."""
    return parse_expression(value) if isinstance(value, str) else as_sympy(value)
