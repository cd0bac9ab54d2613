"""The reference site's search index: per formula (and per family form) what a reader may type to find it.

Each entry holds an id, the page and anchor, a title and meaning, the formula's own symbol and its inputs' (by name
and as printed: ``d_ff``, ``Ψ_emb``), its form as plain text, the terms of its expansion as ``coefficient:symbol
names`` (so that ``12lh`` finds 12·l·h²), what its notes and derivation say, and the model names all of these
mention. ``search.js`` reads it in the page as ``window.SEARCH_INDEX``.
"""

from __future__ import annotations

import json
import re
from functools import cache
from typing import TYPE_CHECKING

import sympy as sp

from llm_formulas.derivations.vocabulary.proof import valued
from llm_formulas.formulas.vocabulary.catalogue import get
from llm_formulas.formulas.vocabulary.latex import abbreviated
from llm_formulas.formulas.vocabulary.parts import plain_symbol
from llm_formulas.formulas.vocabulary.symbols import quantity
from llm_formulas.render.documents.site_links import href, lhs_latex

if TYPE_CHECKING:
    from llm_formulas.render.documents.reference import FormulaView

MOST_TERMS = 64  # an expansion of more terms is left out of the index's terms (its id, meaning and symbols remain)


def terms(expr: sp.Expr) -> list[str]:
    """The terms of an expression's expansion as ``coefficient:symbol names`` (``12*h**2*l`` is ``12:h l``), for a
    search of a monomial by its factors in any order (``12lh``); none for an expansion of more than MOST_TERMS terms."""
    expr = valued(expr)
    if sp.count_ops(expr) > MOST_TERMS:
        return []
    added = sp.Add.make_args(sp.expand(expr))
    if len(added) > MOST_TERMS:
        return []
    found = []
    for term in added:
        coefficient, rest = term.as_coeff_Mul()
        names = sorted(s.name for s in rest.free_symbols)
        if names and coefficient.is_Rational:
            found.append(f"{coefficient}:{' '.join(names)}")
    return found


@cache
def model_names() -> tuple[str, ...]:
    """The names the presets' models go by (``Mixtral``, ``Llama``, ``DeepSeek``): each title's leading word."""
    from llm_formulas.formulas.data.presets import names, preset

    found: dict[str, str] = {}
    for name in names():
        word = re.match(r"[A-Za-z]+", preset(name).title)
        if word and len(word[0]) > 2:
            found.setdefault(word[0].lower(), word[0])
    return tuple(found.values())


def models_named(text: str) -> list[str]:
    """The model names ``text`` mentions, as whole words."""
    return [name for name in model_names() if re.search(rf"\b{re.escape(name)}", text, flags=re.IGNORECASE)]


def symbol_names(symbols: set[sp.Symbol]) -> set[str]:
    """Each symbol by its name and as printed (``d_ff``; ``Ψ_emb``)."""
    return {name for s in symbols for name in (s.name, plain_symbol(quantity(s).latex))}


def formula_entry(view: "FormulaView") -> dict:
    """One formula in the search index (see the module's docstring)."""
    formula = get(view.id)
    own = plain_symbol(lhs_latex(formula))
    symbols = sorted(symbol_names(set(formula.inputs)) | {own})
    about = " ".join([formula.notes, view.derivation_title, *(step.why for step in view.steps)])
    examples = " ".join(text for example in view.examples for text in (example.title, *(i.source for i in example.inputs)))
    return {"id": formula.id, "href": href(formula.id), "title": view.title, "meaning": formula.meaning, "symbol": own,
            "symbols": symbols, "text": sp.sstr(abbreviated(valued(formula.composed))), "terms": terms(formula.expr),
            "about": about, "models": models_named(" ".join([formula.meaning, about, examples]))}


def search_index(entries: list[dict]) -> str:
    """The search's index as a script that sets ``window.SEARCH_INDEX`` (a page opened from disk may not fetch JSON)."""
    return "window.SEARCH_INDEX = " + json.dumps(entries, ensure_ascii=False, separators=(",", ":")) + ";\n"


