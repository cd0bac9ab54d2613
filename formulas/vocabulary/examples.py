"""Worked examples of the source articles (SOURCES.md cases S1–S20).

Each case is a formula, the inputs the article used, and the article's
printed figure. ``exact()`` evaluates the formula; tests set the exact value
beside the article's, the reference and the notebooks print both, and an
article that slipped is shown as such (``slip`` says how).
"""

from __future__ import annotations

from dataclasses import dataclass

import sympy as sp

from llm_formulas.formulas.vocabulary.catalogue import Source, caller_module, get, topic_rank
from llm_formulas.formulas.vocabulary.symbols import quantity


@dataclass(frozen=True)
class WorkedExample:
    """One case of SOURCES.md: a formula, the article's inputs, and the figure the article printed."""

    case: str
    title: str
    source: Source
    formula_id: str
    inputs: tuple[tuple[str, sp.Rational], ...]
    claimed: sp.Rational | None
    claimed_text: str
    scale: sp.Rational = sp.Integer(1)
    scale_name: str = ""
    slip: str = ""
    convention: str = ""  # not a slip: the source counts another quantity, and this says which

    @property
    def values(self) -> dict[sp.Symbol, sp.Rational]:
        return {quantity(name).symbol: value for name, value in self.inputs}

    def exact(self) -> sp.Rational:
        """The formula evaluated exactly at the article's inputs."""
        return get(self.formula_id).expr.subs(self.values)

    def scaled(self) -> float:
        """The exact value in the article's display unit (``scale_name``)."""
        return float(self.exact() / self.scale)


_EXAMPLES: list[tuple[str, WorkedExample]] = []  # (registering module, example)


def worked_example(
    case: str,
    title: str,
    source: Source,
    formula_id: str,
    inputs: dict[str, int | str | sp.Rational],
    *,
    claimed: int | str | sp.Rational | None,
    claimed_text: str,
    scale: int | sp.Rational = 1,
    scale_name: str = "",
    slip: str = "",
    convention: str = "",
) -> WorkedExample:
    """Register a case; numbers given as strings ("0.0005") are read exactly."""
    example = WorkedExample(
        case=case,
        title=title,
        source=source,
        formula_id=formula_id,
        inputs=tuple((name, sp.Rational(value)) for name, value in inputs.items()),
        claimed=None if claimed is None else sp.Rational(claimed),
        claimed_text=claimed_text,
        scale=sp.Rational(scale),
        scale_name=scale_name,
        slip=slip,
        convention=convention,
    )
    _EXAMPLES.append((caller_module(), example))
    return example


def all_examples() -> list[WorkedExample]:
    from llm_formulas.formulas.vocabulary.catalogue import load_topics

    load_topics()
    return [example for module, example in sorted(_EXAMPLES, key=lambda entry: topic_rank(entry[0]))]


def examples_for(formula_id: str) -> list[WorkedExample]:
    return [e for e in all_examples() if e.formula_id == formula_id]


def example(case: str) -> WorkedExample:
    """The worked example with this case id (``S19``)."""
    for candidate in all_examples():
        if candidate.case == case:
            return candidate
    raise KeyError(f"no worked example {case!r}")
