"""The LaTeX handout: pdflatex (CI installs texlive) compiles reference.tex, and the escaping holds."""

from __future__ import annotations

import os
import re
import shutil
import subprocess

import pytest

from build_session import built
from llm_formulas.render.documents.build import compile_pdf

pytestmark = pytest.mark.skipif((shutil.which("pdflatex") is None) and not os.environ.get("CI"), reason="needs pdflatex (CI installs texlive)")


def test_reference_pdf_is_built():
    listed = {row["path"] for row in built().printed["files"]}
    assert "reference.pdf" in listed
    pdf = (built().out / "reference.pdf").read_bytes()
    assert pdf.startswith(b"%PDF-") and pdf.rstrip().endswith(b"%%EOF")


def test_pdflatex_compiles_reference_tex_to_the_same_bytes():
    tex = (built().out / "reference.tex").read_text()
    figures = {f"plots/{path.name}": path.read_bytes() for path in (built().out / "plots").glob("*.pdf")}
    assert figures and all(name in tex for name in figures)  # the plots are figures of the handout
    figures |= {f"titles/{path.name}": path.read_bytes() for path in (built().out / "titles").glob("*.pdf")}  # CJK titles
    assert compile_pdf(tex, figures) == (built().out / "reference.pdf").read_bytes()


def _pages() -> list[str]:
    """The text of each page of reference.pdf (poppler's pdftotext; pages end with a form feed)."""
    run = subprocess.run(["pdftotext", "-layout", "-enc", "UTF-8", str(built().out / "reference.pdf"), "-"], capture_output=True, text=True, check=True)
    return run.stdout.split("\f")[:-1]


def _heading_lines(page: str) -> set[str]:
    """Each line of a page without spaces, and each line joined to the next (a long heading wraps once)."""
    lines = [re.sub(r"\s+", "", line) for line in page.splitlines()]
    return set(lines) | {first + second for first, second in zip(lines, lines[1:])}


def _opens_with(line: str, heading: str) -> bool:
    """The line starts with the heading's number and holds its title's letters in order: poppler puts a superscript
    (QKᵀ's T) on the heading's line or on a line of its own, and the contents drop it."""
    number = re.match(r"\d+(?:\.\d+)?", heading).group(0)
    if not line.startswith(number) or line[len(number): len(number) + 1] in ("", ".", *"0123456789"):  # 1.1, not 1.10
        return False
    rest = iter(line[len(number): len(heading) + 4])
    return all(character in rest for character in heading[len(number):])


CONTENTS_LINE = re.compile(r"^(\d+(?:\.\d+)?)\s+(\S.*?)[\s.]*\s(\d+)$")


def test_contents_point_at_the_pages_their_headings_sit_on():
    pages = _pages()
    start = next(i for i, page in enumerate(pages) if "Contents" in [line.strip() for line in page.splitlines()])
    entries, index = [], start
    while not entries or any(CONTENTS_LINE.match(line.strip()) for line in pages[index].splitlines()):
        pending = ""  # a long entry wraps: its first lines carry no page number
        for line in pages[index].splitlines():
            text = (pending + " " + line.strip()).strip() if pending else line.strip()
            match = CONTENTS_LINE.match(text)
            if match:
                entries.append(match.groups())
                pending = ""
            elif re.match(r"^\d+\.\d+\s+\S", text):
                pending = text
        index += 1
    assert len(entries) > 100  # every formula has a subsection
    for number, title, printed in entries:
        title = re.sub(r"\s*\([a-z0-9_.\s]+\)$", "", title)  # the id beside the title, in the contents only
        # compared without spaces (a wrapped entry joins where it broke), on the number and the title's first words
        heading = re.sub(r"\s+", "", number + title)[:24]
        # a heading line holds the number and title alone (a contents line ends with its page number)
        found = [i + 1 for i, page in enumerate(pages)  # after the contents, which name every heading too
                 if i >= index and any(_opens_with(line, heading) for line in _heading_lines(page))]
        assert found, f"no page holds the heading {number} {title}"
        # page numbers start at 1 on the title page, so the printed number is the physical page
        assert found[0] == int(printed), f"contents say {number} {title} is on page {printed}; it is on page {found[0]}"


def test_pdf_links_out_to_the_cited_papers():
    # hyperref makes the References' arXiv ids links (poppler lists them); contents and citations link inside
    run = subprocess.run(["pdfinfo", "-url", str(built().out / "reference.pdf")], capture_output=True, text=True, check=True)
    assert "https://arxiv.org/abs/2104.04473" in run.stdout  # Narayanan et al. 2021
    tex = (built().out / "reference.tex").read_text()
    assert r"\usepackage[hidelinks" in tex and r"\hyperlink{ref-narayanan2021}" in tex
