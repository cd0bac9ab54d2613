"""What a command returns: the JSON document of the contract and the text for people, from one value."""

from __future__ import annotations

import math
import sys
from dataclasses import dataclass

from llm_formulas.render.cli.numbers import InputError


@dataclass(frozen=True)
class Result:
    doc: object
    text: str
    code: int = 0


def number_json(value: object) -> int | float:
    """Integers stay exact; other values become floats at the edge. Either way a value beyond floating-point range
    (inf, nan, a count of 10⁴⁰⁰ GPUs) is refused: no reader of the JSON could hold it."""
    if isinstance(value, int) or getattr(value, "is_Integer", False):
        whole = int(value)  # type: ignore[arg-type]
        if abs(whole) > sys.float_info.max:
            raise _beyond_floating_point(value)
        return whole
    number = float(value)  # type: ignore[arg-type]
    if not math.isfinite(number):
        raise _beyond_floating_point(value)
    return number


def _beyond_floating_point(value: object) -> InputError:
    return InputError(f"a result ({str(value)[:40]}) is beyond floating-point range: check the inputs' magnitudes")
