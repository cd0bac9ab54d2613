"""Presentation MathML, printed from the same expressions as the LaTeX.

Expressions go through SymPy's presentation printer (which Chromium renders
natively, no script needed), with each symbol shown under its registered
LaTeX name. Names and step labels are small LaTeX fragments (``\\Psi_{attn}``,
``F_{train}^{rc}``, ``\\Psi \\approx``); ``fragment_mathml`` reads that subset
(letters, digits, Greek and relation commands, ``\\text{}``/``\\mathrm{}``,
sub- and superscripts, ``\\frac``, ``\\sqrt``, and the lessons' verdicts:
``\\color{green}{\\checkmark ...}``, ``\\qquad``) and never lets a backslash through.
"""

from __future__ import annotations

import html
import re
import unicodedata
from functools import cache

import sympy as sp
from sympy.printing.mathml import MathMLPresentationPrinter

from llm_formulas.formulas.vocabulary.latex import abbreviated, latex
from llm_formulas.formulas.vocabulary.symbols import DERIVED_COUNTS, is_declared, quantity
from llm_formulas.derivations.vocabulary.proof import valued

_GREEK_NAMES = (
    "alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi omicron pi rho sigma tau "
    "upsilon phi chi psi omega"
).split()
_COMMANDS: dict[str, str] = {}
for _name in _GREEK_NAMES:
    _unicode_name = _name.upper().replace("LAMBDA", "LAMDA")
    _COMMANDS[_name] = unicodedata.lookup(f"GREEK SMALL LETTER {_unicode_name}")
    _COMMANDS[_name.capitalize()] = unicodedata.lookup(f"GREEK CAPITAL LETTER {_unicode_name}")
_COMMANDS.update(
    {
        "varepsilon": "ε", "epsilon": "ϵ", "varphi": "φ", "ell": "ℓ",
        "approx": "≈", "cdot": "·", "times": "×", "le": "≤", "leq": "≤", "ge": "≥", "geq": "≥",
        "ll": "≪", "gg": "≫", "neq": "≠", "ne": "≠", "equiv": "≡", "infty": "∞", "to": "→",
        "prime": "′", "ldots": "…", "dots": "…", "sim": "∼", "propto": "∝", "in": "∈", "mid": "∣",
        "lceil": "⌈", "rceil": "⌉", "lfloor": "⌊", "rfloor": "⌋", "sum": "∑", "prod": "∏",
        "partial": "∂", "nabla": "∇", "pm": "±", "checkmark": "✓", "varnothing": "∅",
    }
)
_OPERATORS = set("+-−=≈·×≤≥≪≫≠≡→′…∼∝∈∣⌈⌉⌊⌋∑∏±/()[],:;<>|!✓")
_SPACING = {",", ";", ":", "!", " ", "left", "right", "displaystyle", "big", "Big"}
_TEXT_COMMANDS = {"text", "mathrm", "operatorname", "textrm", "mathit", "mathbf", "textit", "textbf", "mathsf"}


def _escape(text: str) -> str:
    return html.escape(text, quote=False)


class _Reader:
    """A cursor over a LaTeX fragment."""

    def __init__(self, source: str) -> None:
        self.source = source
        self.at = 0

    def done(self) -> bool:
        return self.at >= len(self.source)

    def peek(self) -> str:
        return self.source[self.at] if not self.done() else ""

    def group(self) -> str:
        """The raw text of a braced group or of one token."""
        self.skip_spaces()
        if self.peek() == "{":
            depth, start = 0, self.at
            while not self.done():
                char = self.source[self.at]
                depth += char == "{"
                depth -= char == "}"
                self.at += 1
                if depth == 0:
                    return self.source[start + 1 : self.at - 1]
            return self.source[start + 1 :]
        if self.peek() == "\\":
            return self.command_token()
        char = self.peek()
        self.at += 1
        return char

    def command_token(self) -> str:
        match = re.compile(r"\\([A-Za-z]+|.)").match(self.source, self.at)
        if not match:
            self.at += 1
            return ""
        self.at = match.end()
        return "\\" + match.group(1)

    def skip_spaces(self) -> None:
        while self.peek() == " ":
            self.at += 1


def plain_text(fragment: str) -> str:
    """A LaTeX fragment as plain Unicode text (``\\Psi_{attn}`` → ``Ψ_attn``)."""
    reader, out = _Reader(fragment), []
    while not reader.done():
        char = reader.peek()
        if char == "\\":
            name = reader.command_token()[1:]
            if name in _TEXT_COMMANDS:
                out.append(plain_text(reader.group()))
            elif name in ("quad", "qquad"):
                out.append(" ")
            elif name not in _SPACING:
                out.append(_COMMANDS.get(name, name))
        elif char in "{}":
            reader.at += 1
        else:
            out.append(char)
            reader.at += 1
    return "".join(out)


def _atoms(fragment: str, *, text_runs: bool) -> list[str]:
    """MathML atoms of a fragment; ``text_runs`` keeps a letter run as one identifier."""
    reader, atoms = _Reader(fragment), []
    while not reader.done():
        char = reader.peek()
        if char == " ":
            reader.at += 1
            continue
        if char in "_^":
            reader.at += 1
            script = _row(_atoms(reader.group(), text_runs=True))
            base = atoms.pop() if atoms else "<mrow></mrow>"
            if char == "^" and base.startswith("<msub>") and base.count("<msub>") == 1:
                inner = base[len("<msub>") : -len("</msub>")]
                atoms.append(f"<msubsup>{inner}{script}</msubsup>")
            else:
                tag = "msub" if char == "_" else "msup"
                atoms.append(f"<{tag}>{base}{script}</{tag}>")
            continue
        if char == "\\":
            name = reader.command_token()[1:]
            if name in _TEXT_COMMANDS:
                atoms.append(f"<mtext>{_escape(plain_text(reader.group()))}</mtext>")
            elif name == "color":  # \color{green}{...}: the lessons' proof verdicts
                colour = re.sub(r"[^A-Za-z]", "", reader.group())
                atoms.append(f'<mstyle mathcolor="{colour}">{_row(_atoms(reader.group(), text_runs=text_runs))}</mstyle>')
            elif name == "sqrt":
                atoms.append(f"<msqrt>{_row(_atoms(reader.group(), text_runs=False))}</msqrt>")
            elif name in ("quad", "qquad"):
                atoms.append(f'<mspace width="{1 if name == "quad" else 2}em"></mspace>')
            elif name == "frac":
                top, bottom = reader.group(), reader.group()
                atoms.append(f"<mfrac>{_row(_atoms(top, text_runs=False))}{_row(_atoms(bottom, text_runs=False))}</mfrac>")
            elif name in _SPACING:
                continue
            else:
                symbol = _COMMANDS.get(name, name)
                tag = "mo" if symbol in _OPERATORS else "mi"
                atoms.append(f"<{tag}>{_escape(symbol)}</{tag}>")
            continue
        if char == "{":
            atoms.append(_row(_atoms(reader.group(), text_runs=text_runs)))
            continue
        if char == "}":
            reader.at += 1
            continue
        if char in "0123456789.":
            match = re.compile(r"[0-9.]+").match(fragment, reader.at)
            reader.at = match.end()
            atoms.append(f"<mn>{match.group(0)}</mn>")
            continue
        if text_runs and re.match(r"[^\W\d_]", char):
            match = re.compile(r"[^\W\d_]+").match(fragment, reader.at)
            reader.at = match.end()
            atoms.append(f"<mi>{_escape(match.group(0))}</mi>")
            continue
        reader.at += 1
        char = {"-": "−", "²": "²"}.get(char, char)
        tag = "mo" if char in _OPERATORS else "mi"
        atoms.append(f"<{tag}>{_escape(char)}</{tag}>")
    return atoms


def _row(atoms: list[str]) -> str:
    return atoms[0] if len(atoms) == 1 else "<mrow>" + "".join(atoms) + "</mrow>"


def fragment_mathml(fragment: str) -> str:
    """A name or label written in LaTeX (``\\Psi_{attn}``) as presentation MathML."""
    return _row(_atoms(fragment, text_runs=False))


@cache
def _symbol_node(name: str):
    """The symbol table's name of ``name`` as a parsed MathML node (parsed once: rendering prints symbols by the
    ten thousand)."""
    from xml.dom.minidom import parseString

    markup = f'<math xmlns="http://www.w3.org/1998/Math/MathML">{fragment_mathml(quantity(name).latex)}</math>'
    return parseString(markup).documentElement.firstChild


_DERIVED = {symbol.name for _, symbol, _, _ in DERIVED_COUNTS}


@cache
def _fragment_node(fragment: str):
    """A LaTeX name (a part's ``\\Psi_{emb}``, a step's label) as a parsed MathML node."""
    from xml.dom.minidom import parseString

    markup = f'<math xmlns="http://www.w3.org/1998/Math/MathML">{fragment_mathml(fragment)}</math>'
    return parseString(markup).documentElement.firstChild


class _Printer(MathMLPresentationPrinter):
    """SymPy's presentation printer with the symbol table's names."""

    def _print_Symbol(self, sym: sp.Symbol, style: str = "plain"):  # noqa: N802 - SymPy's hook name
        if is_declared(sym.name):
            return _symbol_node(sym.name).cloneNode(True)  # a node sits in one place of one tree: a copy each time
        if hasattr(sym, "_latex") or sym.name in _DERIVED:  # a named part, a cited step, a derived count
            return _fragment_node(latex(sym)).cloneNode(True)
        return super()._print_Symbol(sym, style)

    _print_Dummy = _print_Symbol


def expr_mathml(expr: sp.Basic) -> str:
    """An expression (constants replaced by their values, derived counts by their names) as presentation MathML."""
    return _Printer().doprint(abbreviated(valued(expr)))


def math_block(*parts: str, tex: str = "") -> str:
    """A display ``<math>`` of the parts; ``tex`` rides along as its (unrendered) LaTeX annotation."""
    row = f'<mrow>{"".join(parts)}</mrow>'
    if tex:
        row = f'<semantics>{row}<annotation encoding="application/x-tex">{_escape(tex)}</annotation></semantics>'
    return f'<math display="block">{row}</math>'


def relation(symbol: str) -> str:
    return f"<mo>{_escape(symbol)}</mo>"


def text(words: str) -> str:
    return f"<mtext>{_escape(words)}</mtext>"
