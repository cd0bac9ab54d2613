"""Where a formula sits in the reference site and how another page links to it: its topic's page, its id as anchor."""

from __future__ import annotations

from dataclasses import dataclass

from llm_formulas.formulas.vocabulary.catalogue import Formula
from llm_formulas.render.documents.reference import short_title, topic_of
from llm_formulas.render.printers import mathml as mm


def page_of(formula_id: str) -> str:
    """The page a formula sits on: its topic's."""
    return f"{topic_of(formula_id)}.html"


def href(formula_id: str) -> str:
    """A link to a formula from any page of the site: its page and its id as the anchor."""
    return f"{page_of(formula_id)}#{formula_id}"


def lhs_latex(formula: Formula) -> str:
    """The formula's own symbol in LaTeX (its id set upright where it has none)."""
    return formula.symbol_latex or r"\mathrm{" + formula.id + "}"


@dataclass(frozen=True)
class FormulaLink:
    """A formula named from another one: its id, its symbol as MathML, its short title, and where it is."""

    id: str
    symbol: str
    title: str
    href: str


def link(formula: Formula) -> FormulaLink:
    return FormulaLink(formula.id, mm.fragment_mathml(lhs_latex(formula)), short_title(formula.meaning), href(formula.id))
