"""The handbook a person prints (issue 31 item 5): statements, composed forms, family forms and worked examples in at
most about 250 pages, whole titles in its contents, a chapter per topic (mixture of experts and serving among
them), and no page whose text runs into the page number; the derivations in the second volume, reference.pdf.

Read from the run's one build (tests/build_session.py), with poppler's pdfinfo and pdftotext as the readers.
"""

from __future__ import annotations

import re
import subprocess

import pytest

import llm_formulas as lf
from build_session import built
from llm_formulas.render.documents.reference import anchor, heading, topic_of

A4_HEIGHT, BOTTOM_MARGIN = 841.89, 56.69  # points: both volumes' paper and 2 cm margin (templates/handbook.tex, reference.tex)


def _handbook() -> tuple:
    pdf = built().out / "handbook.pdf"
    assert pdf.exists(), "the build wrote no handbook.pdf"
    return pdf, (built().out / "handbook.tex").read_text(encoding="utf-8")


def _pages(pdf) -> int:
    info = subprocess.run(["pdfinfo", str(pdf)], capture_output=True, text=True, check=True, timeout=120).stdout
    return int(re.search(r"Pages:\s+(\d+)", info).group(1))


def test_the_handbook_is_a_book_people_print_and_the_derivations_a_second_volume():
    pdf, _ = _handbook()
    assert _pages(pdf) <= 250
    assert _pages(built().out / "reference.pdf") > _pages(pdf)  # the derivations, step by step, live there


def test_its_contents_hold_whole_titles_and_a_chapter_per_topic():
    _, tex = _handbook()
    sections = re.findall(r"\\section\{([^}]*)\}", tex)
    assert "Mixture of experts" in sections and "Serving" in sections and "Symbols" in sections
    assert any(title.startswith("Families") for title in sections)
    topics = {topic_of(f.id) for f in lf.search("")}
    assert len([s for s in sections if s not in ("Symbols", "References") and not s.startswith("Families")]) == len(topics)
    for formula_id in ("params.quantized.kept", "params.decoder.total", "serving.time.e2e"):
        title = heading(lf.get(formula_id).meaning)  # the meaning's first clause, whole
        printed = re.search(r"\\subsection\{(.*)\}\\label\{f:" + anchor(formula_id) + r"\}", tex).group(1)
        assert all(word in printed for word in re.findall(r"[A-Za-z0-9-]{2,}", title)), (title, printed)


def test_a_composed_formula_names_its_parts_with_their_sections():
    _, tex = _handbook()
    entry = tex[tex.index(r"\label{f:params-decoder-total}"):]
    entry = entry[:entry.index(r"\subsection")]
    assert r"\Psi_{emb}" in entry and r"\ref{f:params-decoder-embeddings}" in entry


@pytest.mark.parametrize("volume", ["handbook.pdf", "reference.pdf"])
def test_no_page_runs_into_its_page_number(volume):
    # reference.pdf, the derivations: a step broken over more lines than a page holds ran into the page number
    # (page 61 of the build before its long steps were shown in named pieces, issue 31)
    pdf = built().out / volume
    words = subprocess.run(["pdftotext", "-bbox", str(pdf), "-"], capture_output=True, text=True, check=True,
                           timeout=300).stdout
    crowded = []
    for page_number, page in enumerate(re.split(r"<page ", words)[1:], start=1):
        boxes = [(float(y_min), float(y_max), word.strip()) for y_min, y_max, word
                 in re.findall(r'yMin="([\d.]+)" xMax="[\d.]+" yMax="([\d.]+)">([^<]*)</word>', page)]
        footer = max((box for box in boxes if box[2] == str(page_number)), default=None)
        assert footer is not None and footer[0] > A4_HEIGHT - BOTTOM_MARGIN, f"page {page_number} prints no page number"
        crowded += [(page_number, word) for y_min, y_max, word in boxes if (y_min, y_max, word) != footer
                    and y_max > footer[0] - 2]  # anything reaching down to the page number's line
    assert not crowded, f"text running into the page number: {crowded[:10]}"
