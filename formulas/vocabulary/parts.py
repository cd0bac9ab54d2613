"""Named parts: a catalogue formula standing whole inside another, as the papers write it.

Ψ = Ψ_emb + l·(Ψ_attn + Ψ_mlp + Ψ_norms) + Ψ_head names its parts instead of spelling them out. A topic module
writes ``embeddings.part + l * layer.part + head.part``; the catalogue keeps that *composed* form for reading
and replaces each part by the part's own expression for computing (``expand_parts``), so what a formula
evaluates, generates as code and proves is exactly the expansion, while what it prints is the composition.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

import sympy as sp

if TYPE_CHECKING:
    from llm_formulas.formulas.vocabulary.catalogue import Formula

__all__ = ["Part", "PartAt", "expand_parts", "parts_of", "plain_symbol"]


class Part(sp.Symbol):
    """A symbol that is a whole catalogue formula: it prints as the formula's symbol (``\\Psi_{emb}``) and
    expands to the formula's expression. Its name is the formula's id, which no table symbol can take."""

    formula: "Formula"

    def __new__(cls, formula: "Formula") -> "Part":
        part = sp.Symbol.__xnew__(cls, formula.id)
        part.formula = formula
        return part

    def __getnewargs__(self) -> tuple:
        return (self.formula,)

    def _latex(self, printer: object) -> str:
        return self.formula.symbol_latex or r"\mathrm{" + self.name.replace("_", r"\_") + "}"

    def _sympystr(self, printer: object) -> str:
        return f"[{self.name}]"

    def _pretty(self, printer: object) -> object:
        from sympy.printing.pretty.stringpict import prettyForm

        return prettyForm(plain_symbol(self._latex(printer)))

    def expansion(self) -> sp.Basic:
        """The formula's own expression, every part of it already spelled out."""
        return self.formula.dimensioned


class PartAt(Part):
    """A catalogue formula at given values of some of its inputs (the logits at one new token, s = 1): it prints
    as ``F|_{s=1}`` and expands to the formula's expression with those values put in."""

    values: tuple[tuple[sp.Symbol, sp.Basic], ...]

    def __new__(cls, formula: "Formula", values: dict[sp.Symbol, sp.Basic]) -> "PartAt":
        ordered = tuple(sorted(values.items(), key=lambda item: item[0].name))
        name = formula.id + "|" + ",".join(f"{symbol.name}={sp.srepr(value)}" for symbol, value in ordered)
        part = sp.Symbol.__xnew__(cls, name)
        part.formula, part.values = formula, ordered
        return part

    def __getnewargs__(self) -> tuple:
        return (self.formula, dict(self.values))

    def _latex(self, printer: object) -> str:
        at = ", ".join(f"{printer._print(symbol)} = {printer._print(value)}" for symbol, value in self.values)
        return rf"{super()._latex(printer)}\big|_{{{at}}}"

    def _sympystr(self, printer: object) -> str:
        return f"[{self.formula.id} at {', '.join(f'{symbol}={value}' for symbol, value in self.values)}]"

    def expansion(self) -> sp.Basic:
        return self.formula.dimensioned.xreplace({symbol: expand_parts(value) for symbol, value in self.values})


def plain_symbol(latex: str) -> str:
    """``\\Psi_{emb}`` as a terminal prints it: ``Ψ_emb`` (Greek letters by name, braces and macros dropped)."""
    from sympy.printing.pretty.pretty_symbology import greek_unicode

    def letter(match: re.Match) -> str:
        return greek_unicode.get(match.group(1), "" if match.group(1) in ("mathrm", "left", "right", "text") else match.group(1))

    return re.sub(r"\\([A-Za-z]+)\s*", letter, latex).replace("{", "").replace("}", "").replace(" ", "")


def parts_of(expr: sp.Basic) -> list[Part]:
    """The parts an expression names directly (whole or at values), in a stable order."""
    return sorted((atom for atom in expr.atoms(Part)), key=lambda part: part.name)


def expand_parts(expr: sp.Basic) -> sp.Basic:
    """The expression with every part replaced by its formula's own (already expanded) expression."""
    return expr.xreplace({part: part.expansion() for part in parts_of(expr)})
