"""Long steps shown in named pieces, each read in one look (issue 31: a step's line ≤ ``READABLE_LATEX`` characters).

A step whose line would print longer than ``formulas.vocabulary.latex.READABLE_LATEX`` is shown with its largest sub-expressions
(or runs of its terms) named: ``A [1] := …``, ``A [2] := …`` are definitions printed just before it, and the step
reads ``A := A [1] + A [2]``. What the step proves is unchanged, its expression is not touched: the pieces are made
from what it shows, and the step's shown form with its pieces (and the earlier steps it cites) put back must be its
expression exactly, or the step is left as it was. A piece is kept live by the step that names it (``Step.pieces``).
"""

from __future__ import annotations

from dataclasses import replace
from itertools import islice

import sympy as sp
from sympy.printing.latex import LatexPrinter

from llm_formulas.derivations.vocabulary.steps import CITED_CLAIMS, Step, StepName
from llm_formulas.derivations.vocabulary.latex import label_latex, step_latex
from llm_formulas.formulas.vocabulary.catalogue import lookup
from llm_formulas.formulas.vocabulary.latex import READABLE_LATEX, latex, symbol_names
from llm_formulas.formulas.vocabulary.parts import expand_parts

__all__ = ["in_pieces"]

SPLIT_CLAIMS = ("defines", "equals", "solves", "approximates", "bounds", "refutes")
_FEW_NODES = 50  # a step shown in fewer nodes prints well under READABLE_LATEX characters (the shortest over it: 59)
_MARGIN = 40  # characters either side of the budget within which a step's line is measured exactly
_INLINE = 40  # a term this short stays in the line rather than take a name


def in_pieces(step: Step, earlier: list[Step]) -> list[Step]:
    """The definitions ``step`` is to be shown with (to go before it, in order), its ``shown`` (a refutation's
    ``correct_shown``) and ``pieces`` set to name them; none when it already reads in one look, or when its pieces
    would not give back its expression."""
    field = "correct_shown" if step.claim == "refutes" else "shown"
    written, meant = (step.correct, step.correct) if step.claim == "refutes" else (step.shown, step.expr)
    if step.claim not in SPLIT_CLAIMS or written is None or not _larger_than(written, _FEW_NODES):
        return []
    printer = _RememberingPrinter()
    overhead = len(step_latex(replace(step, **{field: sp.Integer(0)}), lookup)) - 1  # the label, relation, error
    about = len(printer._print(written)) + overhead  # SymPy's LaTeX before the project's abbreviations
    if about < READABLE_LATEX - _MARGIN or (about < READABLE_LATEX + _MARGIN
                                           and len(step_latex(step, lookup)) <= READABLE_LATEX):
        return []
    cited = _cited_names(written, earlier)
    if not _same(_put_back(written, cited), meant):
        return []
    taken = sum(1 for earlier_step in earlier if earlier_step.label.startswith(f"{step.label} ["))
    namer = _Namer(step.label, len(earlier), cited, taken, printer)
    for share in (1, 0.8, 0.6, 0.4):
        namer.reset()
        shown = namer.fit(written, int((READABLE_LATEX - overhead) * share))
        if len(step_latex(replace(step, **{field: shown}), lookup)) <= READABLE_LATEX:
            break
    if not _same(_put_back(shown, namer.names), meant):
        return []
    setattr(step, field, shown)
    named = {name.name for name in shown.atoms(StepName)}
    step.pieces = tuple(len(earlier) + index for index, piece in enumerate(namer.pieces) if piece.label in named)
    return namer.pieces


class _RememberingPrinter(LatexPrinter):
    """SymPy's LaTeX printer remembering each sub-expression's LaTeX, so that every part of a long expression is
    measured at the cost of printing it once."""

    def __init__(self) -> None:
        super().__init__({"symbol_names": symbol_names()})
        self.printed: dict[sp.Basic, str] = {}

    def _print(self, expr: object, **options: object) -> str:
        if options or not isinstance(expr, sp.Basic):
            return super()._print(expr, **options)
        if expr not in self.printed:
            self.printed[expr] = super()._print(expr)
        return self.printed[expr]


def _larger_than(expr: sp.Basic, nodes: int) -> bool:
    return sum(1 for _ in islice(sp.preorder_traversal(expr), nodes + 1)) > nodes


def _cited_names(shown: sp.Basic, earlier: list[Step]) -> dict[StepName, sp.Basic]:
    """The earlier steps ``shown`` cites by label (``engine.cited``), each name with the expression it stands for."""
    labels = {name.name for name in shown.atoms(StepName)}
    found = {}
    for step in earlier:
        if step.label in labels and step.claim in CITED_CLAIMS and step.expr is not None:
            found[StepName(step.label)] = step.expr
    return found


def _put_back(shown: sp.Basic, names: dict[StepName, sp.Basic]) -> sp.Basic:
    """The expression ``shown`` stands for: each name replaced by what it names, each catalogue part spelled out."""
    return expand_parts(shown.xreplace(names))


def _same(left: sp.Basic, right: sp.Basic) -> bool:
    return left == right or sp.expand(left - right) == 0


class _Namer:
    """Makes the pieces of one step: ``fit`` shortens an expression to a length by naming its parts."""

    def __init__(self, label: str, start: int, cited: dict[StepName, sp.Basic], taken: int,
                 printer: _RememberingPrinter) -> None:
        self.label, self.start, self.cited, self.taken, self.printer = label, start, cited, taken, printer
        self.piece_width = READABLE_LATEX - len(label_latex(self._label(99))) - len(" := ")
        self.reset()


    def reset(self) -> None:
        self.pieces: list[Step] = []
        self.names: dict[StepName, sp.Basic] = dict(self.cited)
        self.named: dict[sp.Basic, StepName] = {}

    def _label(self, number: int) -> str:
        return f"{self.label} [{number}]"

    def width(self, expr: sp.Basic) -> int:
        """About what ``latex(expr)`` prints (the step's own line is measured exactly once its pieces are made)."""
        return len(self.printer._print(expr))

    def name(self, expr: sp.Basic) -> sp.Basic:
        """A piece for ``expr`` (itself fitted to a piece's width): its name, to stand in the line."""
        shown = self.fit(expr, self.piece_width)
        if shown in self.named:
            return self.named[shown]
        label = self._label(self.taken + len(self.pieces) + 1)
        name = StepName(label)
        nested = {piece.name for piece in shown.atoms(StepName)}
        self.pieces.append(Step(
            "defines", label, _put_back(shown, self.names), f"a piece of {self.label}, named to read it in one look",
            shown=shown, piece=True,
            pieces=tuple(self.start + index for index, piece in enumerate(self.pieces) if piece.label in nested),
        ))
        self.names[name] = self.pieces[-1].expr
        self.named[shown] = name
        return name

    def fit(self, expr: sp.Basic, limit: int) -> sp.Basic:
        """``expr`` printed within ``limit`` characters where it can be: its longest arguments fitted or named."""
        if self.width(expr) <= limit or not expr.args:
            return expr
        if expr.is_Add:
            return self._fit_sum(expr, limit)
        args, width = list(expr.args), self.width(expr)  # the width as the arguments shrink, estimated
        for index in sorted(range(len(args)), key=lambda i: -self.width(args[i])):
            excess = width - limit
            if excess <= 0:
                break
            if not args[index].args:
                continue
            room = self.width(args[index]) - excess
            shorter = self.fit(args[index], room) if room > _INLINE else args[index]
            shorter = shorter if self.width(shorter) <= room else self.name(shorter)
            width += self.width(shorter) - self.width(args[index])
            args[index] = shorter
        return expr.func(*args)

    def _fit_sum(self, expr: sp.Add, limit: int) -> sp.Basic:
        """A sum: its terms each fitted to a piece, then consecutive runs of them (in printed order) named."""
        terms = [self.fit(term, self.piece_width) for term in expr.as_ordered_terms()]
        runs: list[list[sp.Basic]] = [[]]
        run_width = 0  # estimated: the terms' widths and a " + " between them
        for term in terms:
            if runs[-1] and run_width + 3 + self.width(term) > self.piece_width:
                runs.append([])
                run_width = -3
            runs[-1].append(term)
            run_width += 3 + self.width(term)
        items = [run[0] if len(run) == 1 and self.width(run[0]) <= _INLINE else self.name(sp.Add(*run)) for run in runs]
        fitted = sp.Add(*items)
        if self.width(fitted) <= limit or len(items) == len(terms):
            return fitted
        return self.fit(fitted, limit)
