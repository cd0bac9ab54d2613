"""The reference PDF, fit to print, read back with poppler: no equation shrunk to a hairline, nothing past the page's
edge, contents with readable titles, worked examples only at documented real values, errata in typeset math and a
bibliography one can follow."""

from __future__ import annotations

import re
import shutil
import subprocess
from functools import cache
from html.parser import HTMLParser

import pytest

from build_session import built
from llm_formulas.derivations.reports.catalogue import Report
from llm_formulas.derivations.reports.check_record import committed_outcomes
from llm_formulas.formulas.vocabulary.bibliography import WORKS
from llm_formulas.formulas.vocabulary.catalogue import get
from llm_formulas.render.documents.reference import build_reference, placeholder_inputs
from llm_formulas.render.documents.title_pictures import cjk_font

pytestmark = pytest.mark.skipif(not shutil.which("pdftotext"), reason="needs poppler-utils (CI installs it)")
HAIRLINE = 3.0  # points: a 10 pt page's smallest type, a subscript's subscript at 5 pt, draws boxes of 3.3 pt and up
EDGE = 28.35  # points: 1 cm; the text block ends 2 cm from the paper's edge


class _Words(HTMLParser):
    """The words of ``pdftotext -bbox``, each with its page's width and its box."""

    def __init__(self) -> None:
        super().__init__()
        self.words, self.width, self.page = [], 0.0, 0
        self._open = None

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "page":
            self.page += 1
            self.width = float(attrs["width"])
        elif tag == "word":
            self._open = (self.page, self.width, float(attrs["xmin"]), float(attrs["xmax"]), float(attrs["ymin"]), float(attrs["ymax"]))

    def handle_data(self, data):
        if self._open is not None:
            self.words.append((*self._open, data))
            self._open = None


@cache
def words() -> list[tuple]:
    out = subprocess.run(["pdftotext", "-bbox", str(built().out / "reference.pdf"), "-"], capture_output=True, text=True,
                         check=True).stdout
    parser = _Words()
    parser.feed(out)
    return parser.words


@cache
def text() -> str:
    return subprocess.run(["pdftotext", "-layout", str(built().out / "reference.pdf"), "-"], capture_output=True, text=True,
                          check=True).stdout


def test_no_equation_is_shrunk_to_a_hairline():
    tiny = [(page, word) for page, _, _, _, top, bottom, word in words() if bottom - top < HAIRLINE and word.strip()]
    assert not tiny, f"{len(tiny)} words set below {HAIRLINE} pt, first on page {tiny[0][0]}: {tiny[:5]}"


def test_nothing_runs_past_the_edge_of_the_page():
    out = [(page, round(right - width, 1), word) for page, width, _, right, _, _, word in words() if right > width - EDGE]
    assert not out, f"{len(out)} words within 1 cm of the paper's edge or beyond: {out[:5]}"


def test_the_contents_read_as_titles_with_their_ids_beside():
    contents = text().split("Contents", 1)[1][:40000]
    assert "Parameters of one transformer layer (params.layer)" in re.sub(r"\s+", " ", contents)
    assert not re.search(r"\d+\.\d+[a-z]", contents)  # a number never runs into a title (14.10optimizations)


def test_a_worked_example_only_at_documented_real_values():
    # the page model's worked examples, not its proofs, are read here: the check is the committed one while it is fresh
    committed = committed_outcomes()
    for topic in build_reference(report=None if committed is None else Report.from_outcomes(committed)).topics:
        for view in topic.formulas:
            for example in view.examples:
                if not example.documented:  # a formula without a published case: evaluated at documented defaults only
                    assert not any(i.source.startswith("generic") for i in example.inputs), view.id
            if not view.examples:  # left out because an input has no documented real value: the reference says which
                assert view.no_example and placeholder_inputs(list(get(view.id).inputs)), view.id
    assert "generic value" not in text()
    assert not re.search(r"\b\d{3,}(,\d{3})* years\b", text())  # no "206 years" or "46,789 years" at placeholders


def test_errata_are_typeset_not_code():
    errata = text().split("Errata of the sources", 2)[-1].split("Symbols", 1)[0]
    assert not re.search(r"\w\*\w", errata)  # 6*P, 4*b*h*s*t
    assert "(an expression" not in errata


def test_the_bibliography_is_complete():
    references = re.sub(r"\s+", " ", text().rsplit("References", 1)[1])
    assert "et al.." not in references
    assert references.count("DeepSeek-V3 Technical Report") == 1
    for work in WORKS.values():
        if work.title_en:
            assert work.title_en.split(",")[0] in references, work.key
            if cjk_font():
                assert work.title.split("：")[0] in references, f"{work.key}: its original title"
        elif work.kind in ("paper", "software") or work.url:
            assert work.arxiv or work.url, f"{work.key} has neither an arXiv id nor an address"
    assert references.count("No address: the copy the project cites carries none.") <= 6  # the seeds and the news reports
