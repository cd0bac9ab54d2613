"""The LaTeX handout: pdflatex (CI installs texlive) compiles reference.tex, and the escaping holds."""

from __future__ import annotations

import os
import shutil

import pytest

from build_session import built
from render.documents.build import compile_pdf
from render.printers.escape import tex_math, tex_text

pytestmark = pytest.mark.skipif((shutil.which("pdflatex") is None) and not os.environ.get("CI"), reason="needs pdflatex (CI installs texlive)")


def test_reference_pdf_is_built():
    listed = {row["path"] for row in built().printed["files"]}
    assert "reference.pdf" in listed
    pdf = (built().out / "reference.pdf").read_bytes()
    assert pdf.startswith(b"%PDF-") and pdf.rstrip().endswith(b"%%EOF")


def test_pdflatex_compiles_reference_tex_to_the_same_bytes():
    tex = (built().out / "reference.tex").read_text()
    assert compile_pdf(tex) == (built().out / "reference.pdf").read_bytes()


HOSTILE = "50% & $x_1$ {y} # ~ ^ \\ < > | Ψ² ≪ 6h — §3.1 → ×2 · ε ≈ 1 — ᵀ ∝ ≠ 中"


def test_escaped_text_and_math_compile():
    document = (
        "\\documentclass{article}\\usepackage[T1]{fontenc}\\usepackage[utf8]{inputenc}\\usepackage{amsmath,amssymb}"
        "\\begin{document}" + tex_text(HOSTILE) + "\n\n$" + tex_math("Ψ_{attn} ≈ 12lh² · ε") + "$\\end{document}\n"
    )
    assert compile_pdf(document).startswith(b"%PDF-")


def test_compile_failure_names_the_error():
    with pytest.raises(RuntimeError, match="pdflatex failed: ! Undefined control sequence"):
        compile_pdf("\\documentclass{article}\\begin{document}\\nosuchcommand\\end{document}\n")
