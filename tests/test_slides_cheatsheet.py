"""The build's cheat sheet (PDF and HTML) and its slide decks, read back: the PDF's pages and text (poppler), the HTML
pages in a real headless Chromium (the decks' slides laid out, fitted, their equations MathML, their pictures drawn)."""

from __future__ import annotations

import json
import re
import shutil
import subprocess

import nbformat
import pytest

from build_session import built, scratch
from llm_formulas.render.documents.cheatsheet import SECTIONS, conditions_of
from llm_formulas.render.documents.notebooks import LESSONS
from llm_formulas.render.documents.slides import deck, title_of
from test_html_browser import CHROMIUM, _probe, chromium
from test_notebooks import COMMITTED

POPPLER = shutil.which("pdftotext") and shutil.which("pdfinfo")
needs_poppler = pytest.mark.skipif(not POPPLER, reason="needs poppler-utils (CI installs it)")
needs_chromium = pytest.mark.skipif(CHROMIUM is None, reason="needs a Chromium (CI installs Debian's chromium)")


def _pages(pdf) -> int:
    info = subprocess.run(["pdfinfo", str(pdf)], capture_output=True, text=True, check=True).stdout
    return int(re.search(r"^Pages:\s+(\d+)", info, flags=re.M).group(1))


@needs_poppler
def test_the_cheat_sheet_is_six_to_eight_pages_of_every_formula_with_its_condition_and_example():
    pdf = built().out / "cheatsheet.pdf"
    assert 6 <= _pages(pdf) <= 8
    text = subprocess.run(["pdftotext", "-layout", str(pdf), "-"], capture_output=True, text=True, check=True).stdout
    flat = re.sub(r"\s+", " ", text)
    for _, rows in SECTIONS:
        for formula_id, title, _, _ in rows:
            assert formula_id in flat, formula_id
    conditioned = sum(1 for _, rows in SECTIONS for formula_id, *_ in rows if conditions_of(formula_id))
    assert flat.count("Holds when:") == conditioned > 20 and flat.count("At GPT-3 175B:") >= 20
    assert "one layer: 34sbh" in flat
    assert "Symbols" in flat and not re.search(r"\\[a-z]+\{", flat)  # no TeX source leaked into the text


@needs_chromium
def test_the_cheat_sheet_html_shows_mathml_and_the_picture():
    page = (built().out / "cheatsheet.html").read_text(encoding="utf-8")
    probe = PROBE.replace("slides", "entries").replace('"section.slide"', '"div.entry"')
    path = scratch("cheatsheet") / "cheatsheet.html"
    path.write_text(page.replace("</body>", probe + "</body>"), encoding="utf-8")
    seen = _probe(chromium(path.as_uri(), "--dump-dom"))
    assert seen["entries"] == sum(len(rows) for _, rows in SECTIONS)
    assert seen["maths"] >= seen["entries"] and seen["laidOut"] == seen["maths"]
    assert seen["images"] == 1 and seen["loaded"] == 1
    assert not re.search(r"\\[A-Za-z]+", seen["text"])


PROBE = """
<script>
window.addEventListener("load", function () {
  if (window.fitAll) window.fitAll();
  var slides = Array.prototype.slice.call(document.querySelectorAll("section.slide"));
  var maths = Array.prototype.slice.call(document.querySelectorAll("math"));
  var images = Array.prototype.slice.call(document.querySelectorAll("img"));
  var probe = document.createElement("pre");
  probe.id = "probe";
  probe.textContent = JSON.stringify({
    slides: slides.length, text: document.body.innerText,
    scales: slides.map(function (s) { return parseFloat(s.dataset.scale || "1"); }),
    maths: maths.length,
    laidOut: maths.filter(function (m) { var r = m.getBoundingClientRect(); return r.width > 0 && r.height > 0; }).length,
    images: images.length, loaded: images.filter(function (i) { return i.naturalWidth > 0; }).length});
  document.documentElement.appendChild(probe);
});
</script>
"""


def _open_deck(html: str, name: str) -> dict:
    path = scratch("slides") / f"{name}.html"
    path.write_text(html.replace("</body>", PROBE + "</body>"), encoding="utf-8")
    return _probe(chromium(path.as_uri(), "--dump-dom", "--window-size=1100,800"))


def test_build_writes_a_deck_per_lesson():
    out = built().out
    assert {p.stem for p in (out / "slides").glob("*.html")} == set(LESSONS)
    assert {f"slides/{lesson}.html" for lesson in LESSONS} <= {row["path"] for row in json.loads(
        (out / "manifest.json").read_text())["files"]}


@needs_chromium
def test_a_built_deck_opens_in_chromium_and_every_slide_fits():
    # the build of the test run (--no-execute) takes the committed executed lessons: its decks show their outputs
    seen = _open_deck((built().out / "slides" / "memory.html").read_text(encoding="utf-8"), "memory-built")
    assert seen["slides"] >= 8 and min(seen["scales"]) >= 0.45
    assert "Memory: will Llama-2 70B fit" in seen["text"]


@needs_chromium
def test_a_deck_of_an_executed_lesson_shows_its_equations_and_pictures():
    nb = nbformat.read(COMMITTED / "comms.ipynb", as_version=4)
    seen = _open_deck(deck(nb, title_of(nb)), "comms-executed")
    assert seen["images"] >= 3 and seen["loaded"] == seen["images"]  # the ring, the TP sharding, the bandwidth
    assert seen["maths"] >= 10 and seen["laidOut"] == seen["maths"]
    assert not re.search(r"\\(frac|left|text|color)\b", seen["text"])  # equations drawn, not their TeX
    assert min(seen["scales"]) >= 0.4  # every slide fitted, none shrunk past reading
    assert "mathcolor=\"green\"" in deck(nb, title_of(nb))  # the proof verdicts, in colour
