"""Long equations broken over lines for print, from the expression (never shrunk to a hairline).

``broken(lhs, relation, expr)`` is LaTeX for ``lhs relation expr`` as an ``aligned`` block whose
lines each hold at most ``WIDTH`` characters of LaTeX source (about the width of an A4 page at
10 pt). A sum is cut between its terms; a product whose long factor is a sum is printed as the
other factors times ``\\Bigl(`` the sum, cut between its terms, ``\\Bigr)``; a long fraction as
its numerator, cut, over its denominator; the arguments of ``max``, ``min`` and the step
functions one after another; an expression at substituted values as its body, cut, and the values.
A piece that cannot be cut (one long symbol name) stays whole.
Everything is printed by ``formulas.vocabulary.latex.latex``, as the short form of the same equation is.
"""

from __future__ import annotations

import sympy as sp

from functools import lru_cache

from llm_formulas.formulas.vocabulary.latex import latex as _latex
from llm_formulas.formulas.vocabulary.symbols import constant_values

WIDTH = 95
latex = lru_cache(maxsize=20000)(_latex)  # a long expression's sub-expressions are printed again at every level


def _sum(terms: list[sp.Basic]) -> list[str]:
    pieces: list[str] = []
    for index, term in enumerate(terms):
        negative = term.could_extract_minus_sign()
        inner = _pieces(-term if negative else term)
        operator = "-" if negative else ("+" if index else "")
        pieces += [f"{operator} {inner[0]}".strip()] + inner[1:]
    return pieces


def _pieces(expr: sp.Basic) -> list[str]:
    """``expr`` as a list of LaTeX pieces that, joined, read as the expression, each as short as the cuts allow."""
    text = latex(expr)
    if len(text) <= WIDTH:
        return [text]
    if expr.is_Add:
        return _sum(list(expr.as_ordered_terms()))
    if isinstance(expr, sp.Subs):  # an expression at substituted values: its body cut, then the bar and the values
        at = ", ".join(f"{latex(variable)} = {latex(value)}" for variable, value in zip(expr.variables, expr.point))
        return [r"\Bigl("] + _pieces(expr.expr) + [r"\Bigr)\Big|_{" + at + "}"]
    numerator, denominator = sp.fraction(expr)
    if denominator != 1:
        top = _pieces(numerator)
        top = top if len(top) == 1 and numerator.is_Atom else [r"\Bigl("] + top + [r"\Bigr)"]
        bottom = _pieces(denominator)
        bottom = bottom if len(bottom) == 1 and (denominator.is_Atom or denominator.is_Pow) else [r"\Bigl("] + bottom + [r"\Bigr)"]
        return top[:-1] + [top[-1] + r" \Big/ " + bottom[0]] + bottom[1:]
    if expr.is_Mul:  # short factors side by side; each long sum in \Bigl( \Bigr), cut between its terms
        pieces, short = [], ""
        for factor in expr.as_ordered_factors():
            text = latex(factor)
            if len(text) > WIDTH // 2:
                inner = _sum(list(factor.as_ordered_terms())) if factor.is_Add else _pieces(factor)
                opening, closing = (r"\Bigl(", r"\Bigr)") if factor.is_Add else ("", "")
                pieces += [short + (r"\cdot " if short else "") + opening] + inner + ([closing] if closing else [])
                short = ""
            else:
                short += (r"\left(" + text + r"\right)" if factor.is_Add else text) + " "
        return [piece for piece in pieces + ([short.strip()] if short else []) if piece]
    if expr.is_Pow and expr.exp > 0:
        inner = _pieces(expr.base)
        return [r"\Bigl("] + inner + [r"\Bigr)^{" + latex(expr.exp) + "}"]
    if isinstance(expr, (sp.Max, sp.Min)) or (expr.is_Function and expr.args):
        name = {sp.Max: r"\max", sp.Min: r"\min"}.get(type(expr), r"\operatorname{" + type(expr).__name__ + "}")
        pieces = [name + r"\Bigl("]
        for index, argument in enumerate(expr.args):
            inner = _pieces(argument)
            pieces += [("" if not index else ", ") + inner[0]] + inner[1:]
        return pieces + [r"\Bigr)"]
    return [text]


def lines(expr: sp.Basic, width: int = WIDTH) -> list[str]:
    """The expression's pieces packed greedily into lines of at most ``width`` characters."""
    packed: list[str] = []
    for piece in _pieces(expr.xreplace(constant_values())):  # a catalogue expression, never a user's string
        if packed and len(packed[-1]) + 1 + len(piece) <= width:
            packed[-1] += " " + piece
        else:
            packed.append(piece)
    return packed


def broken(lhs: str, relation: str, expr: sp.Basic, width: int = WIDTH) -> str:
    """``lhs relation expr``: one line when it fits, else an aligned block of lines that each fit."""
    body = lines(expr, width)
    if len(body) == 1 and len(lhs) + len(body[0]) <= width + 20:
        return f"{lhs} {relation} {body[0]}"
    if len(lhs) > width // 2:  # a long left side (a step's label) on a line of its own
        rows = [f"{lhs} {relation}{{}} &"] + [r"& \quad " + line for line in body]
    else:
        rows = [f"{lhs} {relation}{{}} & {body[0]}"] + [r"& \quad " + line for line in body[1:]]
    return r"\begin{aligned}" + r" \\ ".join(rows) + r"\end{aligned}"


def block(expr: sp.Basic, width: int = WIDTH) -> str:
    """The expression alone, as an aligned block of lines that each fit."""
    body = lines(expr, width)
    return body[0] if len(body) == 1 else r"\begin{aligned}& " + r" \\ & \quad ".join(body) + r"\end{aligned}"
