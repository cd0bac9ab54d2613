"""The one number grammar of the command line, and how input is quoted back.

    number   := sign? mantissa exponent? suffix? ( "/" mantissa exponent? suffix? )?
    mantissa := digits ( "." digits? )? | "." digits
    digits   := one or more of the ASCII digits 0-9 (no underscores, no other scripts)
    exponent := ( "e" | "E" ) sign? digits          (the value lies within 10⁻¹⁰⁰ … 10¹⁰⁰, or is 0)
    suffix   := "k" | "M" | "B" | "T"               (×10³, 10⁶, 10⁹, 10¹², exact; counts only)

At most one slash; nothing longer than 100 characters is parsed at all. The
value is an exact Fraction (``0.35`` is 7/20, ``7B`` is 7·10⁹), never a float,
and nothing typed is ever evaluated as code.

Error lines quote at most 80 characters of what was typed, with control and
other non-printable characters escaped, so that a hostile argument can neither
flood the terminal nor move its cursor; ``error_line`` escapes every line the
command line prints on stderr, whatever produced it (argparse's words included).

Imports nothing heavy: ``--help`` and argument errors never load SymPy.
"""

from __future__ import annotations

import re
from fractions import Fraction

from llm_formulas.formulas.vocabulary.errors import InputError


MAX_LENGTH = 100  # characters; a longer "number" is refused before any parsing
MAX_EXPONENT = 100  # 1e100 is far beyond any size, rate or count of this field
QUOTE_LENGTH = 80
_SMALLEST, _LARGEST = Fraction(1, 10**MAX_EXPONENT), Fraction(10**MAX_EXPONENT)
SUFFIXES = {"k": 10**3, "M": 10**6, "B": 10**9, "T": 10**12}

_PART = re.compile(r"(?P<sign>[+-]?)(?P<mantissa>[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE](?P<exponent>[+-]?[0-9]+))?(?P<suffix>[kMBT]?)", re.ASCII)


def printable(text: str, limit: int = QUOTE_LENGTH) -> str:
    """``text`` cut to ``limit`` characters with control and other non-printable characters escaped."""
    shown = text if len(text) <= limit else text[:limit] + "…"
    return "".join(ch if ch.isprintable() else ch.encode("unicode_escape").decode("ascii") for ch in shown)


def quote(text: str, limit: int = QUOTE_LENGTH) -> str:
    """``text`` for an error line: printable(text) in quotes."""
    return "'" + printable(text, limit).replace("'", "\\'") + "'"


MAX_LINE = 500  # characters of one error line: a message quotes at most QUOTE_LENGTH of each thing typed


def error_line(message: str) -> str:
    """The line the command line prints for ``message``: every control character escaped (nothing typed can move the
    cursor or start a second line), at most MAX_LINE characters."""
    return printable(message, MAX_LINE)


def _part(text: str, whole: str, what: str, suffix_allowed: bool) -> Fraction:
    match = _PART.fullmatch(text)
    if not match:
        raise InputError(f"{what}: {quote(whole)} is not a number")
    exponent = int(match["exponent"] or 0)
    if abs(exponent) > MAX_EXPONENT:
        raise InputError(f"{what}: {quote(whole)} is out of range")
    if match["suffix"] and not suffix_allowed:
        raise InputError(f"{what}: a k/M/B/T suffix is for counts, not for {what} ({quote(whole)})")
    mantissa = Fraction(match["mantissa"])
    value = mantissa * Fraction(10) ** exponent * SUFFIXES.get(match["suffix"], 1)
    if value != 0 and not _SMALLEST <= abs(value) <= _LARGEST:
        raise InputError(f"{what}: {quote(whole)} is out of range")
    return -value if match["sign"] == "-" else value


def parse_fraction(text: str, what: str = "value", *, suffix_allowed: bool = False) -> Fraction:
    """The exact value of ``text`` under the grammar above, or InputError naming ``what``."""
    if len(text) > MAX_LENGTH:
        raise InputError(f"{what}: a number of {len(text)} characters is not a number (at most {MAX_LENGTH})")
    raw = text.strip()
    top, slash, bottom = raw.partition("/")
    if "/" in bottom:
        raise InputError(f"{what}: {quote(text)} has more than one '/' (write a single fraction such as 1/6)")
    numerator = _part(top, text, what, suffix_allowed)
    if not slash:
        return numerator
    denominator = _part(bottom, text, what, suffix_allowed)
    if denominator == 0:
        raise InputError(f"{what}: division by zero in {quote(text)}")
    value = numerator / denominator
    if value != 0 and not _SMALLEST <= abs(value) <= _LARGEST:
        raise InputError(f"{what}: {quote(text)} is out of range")
    return value
