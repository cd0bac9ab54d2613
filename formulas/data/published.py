"""The published figures ``llm-formulas validate`` reproduces: one JSON file per paper.

Each row of ``formulas/data/published/figures/*.json`` names where a figure is printed
(paper, table, figure or equation), the configuration, the catalogue formula
and its inputs, and the printed value. Its precision is the one printed: the
last digit of the printed string (``1.88`` → 0.01, ``3.14e23`` → 1e21).
Inputs the paper itself measured and printed (a rate, an iteration time, a
token count) are ``measured``: they carry their printed precision too.
A row whose figure follows a paper's own convention names the formula as the
paper printed it and the derivation that proves the difference (``explained``).
Each file lists the sources that confirmed its rows against the paper's text
(``confirmed_by``: a section or table of the paper, or a repository, path and
commit), each for all rows or for the rows whose id starts with one of its
``rows`` prefixes; a row no source confirmed says so (``unverified``).
Numbers are read exactly (``Fraction``), never evaluated as code.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from decimal import Decimal
from fractions import Fraction
from functools import cache
from importlib import resources

import sympy as sp

Rounding = str  # "round" (to the nearest printed digit), "truncate" (digits cut off) or "ceiling" (rounded up)
ROUNDINGS = ("round", "truncate", "ceiling")


def exact(text: str | int) -> sp.Rational:
    """A number of the table, read exactly: ``"1.1"``, ``"1/100"``, ``"3.1428e+23"``, ``400``."""
    value = Fraction(str(text))
    return sp.Rational(value.numerator, value.denominator)


def last_digit(text: str) -> sp.Rational:
    """The unit of the last printed digit: ``"1.88"`` → 1/100, ``"8.64e19"`` → 10^17, ``"2664"`` → 1."""
    exponent = Decimal(text).as_tuple().exponent
    return sp.Integer(10) ** exponent


@dataclass(frozen=True)
class Measured:
    """An input the paper printed from a measurement, with the precision it was printed to."""

    name: str
    value: sp.Rational
    step: sp.Rational


@dataclass(frozen=True)
class Explanation:
    """A paper's convention: its formula as printed, the inputs it used, and the proof of the difference."""

    formula: str
    inputs: tuple[tuple[str, sp.Rational], ...]
    derivation: str
    cause: str


@dataclass(frozen=True)
class PublishedRow:
    """One printed figure and how the catalogue computes it."""

    id: str
    paper: str
    url: str
    where: str
    configuration: str
    formula: str
    inputs: tuple[tuple[str, sp.Rational], ...]
    measured: tuple[Measured, ...]
    printed_text: str
    scale: sp.Rational
    unit: str
    rounding: Rounding
    explanation: Explanation | None
    note: str
    confirmed_by: tuple[str, ...] = ()
    unverified: str = ""  # why no source confirmed the row (empty when one did)

    @property
    def printed(self) -> sp.Rational:
        return exact(self.printed_text)

    @property
    def step(self) -> sp.Rational:
        return last_digit(self.printed_text)


def _measured(name: str, spec: str | dict) -> Measured:
    if isinstance(spec, dict):
        return Measured(name, exact(spec["value"]), exact(spec["step"]))
    return Measured(name, exact(spec), last_digit(str(spec)))


def _inputs(mapping: dict) -> tuple[tuple[str, sp.Rational], ...]:
    return tuple((name, exact(value)) for name, value in mapping.items())


def _confirmations(raw_id: str, sources: list) -> tuple[str, ...]:
    """The sources of a file that cover one row: those for every row, and those whose prefixes match its id."""
    found = []
    for entry in sources:
        prefixes = entry.get("rows")
        if prefixes is None or any(raw_id.startswith(prefix) for prefix in prefixes):
            found.append(entry["source"])
    return tuple(found)


def _row(paper: str, url: str, raw: dict, sources: list = ()) -> PublishedRow:
    explained = raw.get("explained")
    explanation = None
    if explained:
        explanation = Explanation(explained["formula"], _inputs(explained.get("inputs", {})), explained["derivation"], explained["cause"])
    rounding = raw.get("rounding", "round")
    if rounding not in ROUNDINGS:
        raise ValueError(f"{raw['id']}: rounding must be one of {', '.join(ROUNDINGS)}, not {rounding!r}")
    unverified = raw.get("unverified", "")
    confirmed = () if unverified else _confirmations(raw["id"], list(sources))
    if not unverified and not confirmed:
        raise ValueError(f"{raw['id']}: no source of its file confirms it and it is not marked unverified")
    return PublishedRow(
        id=raw["id"],
        paper=paper,
        url=url,
        where=raw["where"],
        configuration=raw["configuration"],
        formula=raw["formula"],
        inputs=_inputs(raw.get("inputs", {})),
        measured=tuple(_measured(name, spec) for name, spec in raw.get("measured", {}).items()),
        printed_text=str(raw["printed"]),
        scale=exact(raw.get("scale", 1)),
        unit=raw["unit"],
        rounding=rounding,
        explanation=explanation,
        note=raw.get("note", ""),
        confirmed_by=confirmed,
        unverified=unverified,
    )


@cache
def published_rows() -> tuple[PublishedRow, ...]:
    """Every row of every paper's file, papers in file-name order."""
    folder = resources.files("llm_formulas.formulas.data") / "published" / "figures"
    rows: list[PublishedRow] = []
    for entry in sorted(folder.iterdir(), key=lambda item: item.name):
        if not entry.name.endswith(".json"):
            continue
        document = json.loads(entry.read_text(encoding="utf-8"))
        rows.extend(_row(document["paper"], document["url"], raw, document["confirmed_by"]) for raw in document["rows"])
    ids = [row.id for row in rows]
    if len(set(ids)) != len(ids):
        raise ValueError(f"published row ids used twice: {sorted({i for i in ids if ids.count(i) > 1})}")
    return tuple(rows)
