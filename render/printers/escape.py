"""Escaping text and math for Markdown (GitHub) and LaTeX (pdflatex).

Markdown: text escapes every character GitHub could read as markup (``_``,
``*``, ``$``, ``|`` ...); math is written as ``$$`` blocks on their own lines
and inline as ``$`...`$``, which GitHub never parses as Markdown, and a ``|``
in math becomes ``\\vert`` so that tables survive.
LaTeX: text escapes the ten special characters and maps the Unicode the
catalogue writes (Ψ, ², ≪, ×, →, —, ...) to LaTeX; a character with no mapping
becomes its Unicode name, so pdflatex never meets a byte it cannot typeset.
"""

from __future__ import annotations

import re
import unicodedata

_MD_SPECIAL = re.compile(r"([\\`*_\[\]<>|#$~])")


def md_text(text: str) -> str:
    return _MD_SPECIAL.sub(r"\\\1", str(text))


def md_math(latex: str) -> str:
    return latex.replace("|", r"\vert ").replace("$", r"\$")


def md_inline(latex: str) -> str:
    return "$`" + md_math(latex) + "`$"


def md_display(latex: str) -> str:
    return "\n$$\n" + md_math(latex) + "\n$$\n"


_TEX_SPECIAL = {
    "\\": r"\textbackslash{}",
    "{": r"\{",
    "}": r"\}",
    "$": r"\$",
    "&": r"\&",
    "#": r"\#",
    "^": r"\^{}",
    "_": r"\_",
    "%": r"\%",
    "~": r"\textasciitilde{}",
    "<": r"\textless{}",
    ">": r"\textgreater{}",
    "|": r"\textbar{}",
}

# Unicode symbols as math-mode LaTeX (used in text inside $...$, and in math as is).
_MATH_SYMBOLS = {
    "×": r"\times", "·": r"\cdot", "≪": r"\ll", "≫": r"\gg", "≈": r"\approx", "≠": r"\neq",
    "≤": r"\le", "≥": r"\ge", "→": r"\to", "←": r"\leftarrow", "⇒": r"\Rightarrow", "∝": r"\propto",
    "∞": r"\infty", "∑": r"\sum", "√": r"\surd", "±": r"\pm", "−": "-", "≡": r"\equiv", "∼": r"\sim",
    "′": r"'", "∈": r"\in", "⌈": r"\lceil", "⌉": r"\rceil", "⌊": r"\lfloor", "⌋": r"\rfloor", "ᵀ": r"^{T}",
    "ϵ": r"\epsilon", "ε": r"\varepsilon", "µ": r"\mu", "∂": r"\partial", "∣": r"\mid", "…": r"\ldots",
    "÷": r"\div", "∀": r"\forall", "∃": r"\exists", "⊆": r"\subseteq", "∩": r"\cap", "∪": r"\cup", "≅": r"\cong",
    "≲": r"\lesssim", "≳": r"\gtrsim", "↔": r"\leftrightarrow", "⟹": r"\implies", "∘": r"\circ",
}
_TEXT_SYMBOLS = {
    "—": "---", "–": "--", "‘": "`", "’": "'", "“": "``", "”": "''", "…": r"\ldots{}", "é": r"\'e", " ": "~",
    "°": r"\textdegree{}", "€": "EUR", "§": r"\S{}", "¶": r"\P{}", "Ł": r"\L{}", "ł": r"\l{}",
}


def _greek(char: str) -> str | None:
    name = unicodedata.name(char, "")
    match = re.fullmatch(r"GREEK (SMALL|CAPITAL) LETTER (\w+)", name)
    if not match:
        return None
    letter = match.group(2).lower().replace("lamda", "lambda")
    if match.group(1) == "CAPITAL":
        letter = letter.capitalize()
        if letter in {"Alpha", "Beta", "Epsilon", "Zeta", "Eta", "Iota", "Kappa", "Mu", "Nu", "Omicron", "Rho", "Tau", "Chi"}:
            return unicodedata.normalize("NFKD", unicodedata.lookup(f"LATIN CAPITAL LETTER {letter[0]}"))
    return "\\" + letter


def _math_char(char: str) -> str | None:
    """A non-ASCII character as math-mode LaTeX, or None."""
    if char in _MATH_SYMBOLS:
        return _MATH_SYMBOLS[char]
    greek = _greek(char)
    if greek:
        return greek
    decomposition = unicodedata.decomposition(char)
    if decomposition.startswith(("<super>", "<sub>")):
        kind, code = decomposition.split()
        inner = chr(int(code, 16))
        return ("^{" if kind == "<super>" else "_{") + (inner if inner.isascii() else _math_char(inner) or "") + "}"
    return None


def _fallback(char: str) -> str:
    plain = unicodedata.normalize("NFKD", char).encode("ascii", "ignore").decode()
    if plain.strip():
        return plain
    return r"\textsc{[" + unicodedata.name(char, f"U+{ord(char):04X}").lower() + "]}"


def tex_text(text: str) -> str:
    """Text for pdflatex: specials escaped, Unicode mapped."""
    out = []
    for char in str(text):
        if char in _TEX_SPECIAL:
            out.append(_TEX_SPECIAL[char])
        elif char.isascii():
            out.append(char)
        elif char in _TEXT_SYMBOLS:
            out.append(_TEXT_SYMBOLS[char])
        else:
            math = _math_char(char)
            out.append(f"${math}$" if math else _fallback(char))
    return "".join(out)


def tex_math(latex: str) -> str:
    """LaTeX math whose non-ASCII characters (from step labels and names) become commands."""
    out = []
    for char in latex:
        if char.isascii():
            out.append(char)
            continue
        math = _math_char(char)
        out.append(f"{{{math}}}" if math else r"\text{" + _fallback(char) + "}")
    return "".join(out)
