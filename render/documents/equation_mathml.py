"""An equation as display MathML set over lines that fit the reference site's column.

Chromium lays MathML out without breaking lines, so ``display_mathml`` breaks it: an equation wider than ``LINE``
characters becomes a table of lines, broken between the terms of its sums, each line after the first starting with
its sign; a product too wide for a line opens its widest sum, ``2bs·(`` its terms over lines ``)``.
"""

from __future__ import annotations

import re

import sympy as sp

from llm_formulas.derivations.vocabulary.proof import valued
from llm_formulas.formulas.vocabulary.latex import abbreviated
from llm_formulas.render.printers import mathml as mm

LINE = 64  # characters of an equation's line: a longer sum is broken before a + onto the next line


def width(mathml: str) -> int:
    """About how many characters wide a piece of MathML prints: its text, an entity one character."""
    return len(re.sub(r"&[^;]+;", "x", re.sub(r"<[^>]+>", "", mathml)))


def chunks(expr: sp.Expr) -> list[str]:
    """An expression as MathML pieces a line may break between (see the module's docstring)."""
    if isinstance(expr, sp.Add):
        found = []
        for position, term in enumerate(expr.as_ordered_terms()):
            negative = term.could_extract_minus_sign()
            inner = chunks(-term if negative else term)
            sign = "−" if negative else ("+" if position else "")
            found += [(mm.relation(sign) if sign else "") + inner[0], *inner[1:]]
        return found
    whole = mm.expr_mathml(expr)
    sums = [factor for factor in sp.Mul.make_args(expr) if isinstance(factor, sp.Add)]
    if width(whole) <= LINE or not sums:
        return [whole]
    widest = max(sums, key=lambda factor: width(mm.expr_mathml(factor)))
    rest = expr / widest
    inner = chunks(widest)
    opened = (mm.expr_mathml(rest) + mm.relation("·") if rest != 1 else "") + mm.relation("(")
    if len(inner) == 1:
        return [opened + inner[0] + mm.relation(")")]
    return [opened + inner[0], *inner[1:-1], inner[-1] + mm.relation(")")]


def display_mathml(lhs_latex: str, expr: sp.Expr, tex: str) -> str:
    """``lhs = expr`` as a display ``<math>`` (parts by their symbols, derived counts by name), over lines when it is
    wider than LINE; ``tex`` rides along as its LaTeX annotation."""
    lhs = mm.fragment_mathml(lhs_latex)
    whole = mm.expr_mathml(expr)
    lines: list[list[str]] = [[]]
    if width(whole) > LINE:
        for chunk in chunks(abbreviated(valued(expr))):
            if lines[-1] and width("".join(lines[-1])) + width(chunk) > LINE:
                lines.append([])
            lines[-1].append(chunk)
    if len(lines) == 1:
        return mm.math_block(lhs, mm.relation("="), whole, tex=tex)
    rows = "".join(f'<mtr><mtd class="lhs">{lhs + mm.relation("=") if number == 0 else ""}</mtd><mtd class="rhs">'
                   f'<mrow>{"".join(line)}</mrow></mtd></mtr>' for number, line in enumerate(lines))
    return mm.math_block(f"<mtable>{rows}</mtable>", tex=tex)
