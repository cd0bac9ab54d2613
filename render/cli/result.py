"""What a command returns: the JSON document of the contract and the text for people, from one value."""

from __future__ import annotations

import math
from dataclasses import dataclass

from llm_formulas.render.cli.numbers import InputError


@dataclass(frozen=True)
class Result:
    doc: object
    text: str
    code: int = 0


def number_json(value: object) -> int | float:
    """Integers stay exact; other values become floats at the edge (never inf or nan)."""
    if isinstance(value, int) or getattr(value, "is_Integer", False):
        return int(value)  # type: ignore[arg-type]
    number = float(value)  # type: ignore[arg-type]
    if not math.isfinite(number):
        raise InputError(f"a result ({str(value)[:40]}) is beyond floating-point range: check the inputs' magnitudes")
    return number
