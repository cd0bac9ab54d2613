"""Issue 32, item 1: the decks the README's build writes, as a presenter uses them, in a real headless Chromium.

Every deck of the session build (``build --no-execute``, which takes the committed executed lessons) is opened at
1280 × 720 and at 1920 × 1080 in one page of frames: every slide lies inside the window and everything it holds
inside the slide (nothing cut), every picture the lesson shows is drawn on a slide at most of the slide's width,
every equation it shows is laid out inside its slide; each deck opens on a title slide, numbers its slides, has
buttons to page through them and speaker notes holding the lesson's prose.
"""

from __future__ import annotations

import json
import re

import nbformat
import pytest

from build_session import built, scratch
from llm_formulas.render.documents.notebooks import LESSONS
from test_html_browser import CHROMIUM, chromium

needs_chromium = pytest.mark.skipif(CHROMIUM is None, reason="needs a Chromium (CI installs Debian's chromium)")
SIZES = ((1280, 720), (1920, 1080))

HARNESS = """<!DOCTYPE html><html><head><meta charset="utf-8"><style>body { margin: 0 } iframe { border: 0; display: block }
</style></head><body>FRAMES<pre id="probe"></pre>
<script>
window.addEventListener("load", function () {
  function inside(r, box) {
    return r.left >= box.left - 1 && r.right <= box.right + 1 && r.top >= box.top - 1 && r.bottom <= box.bottom + 1;
  }
  var decks = {};
  Array.prototype.forEach.call(document.querySelectorAll("iframe"), function (frame) {
    var win = frame.contentWindow, doc = frame.contentDocument;
    win.fitAll();
    var view = {left: 0, top: 0, right: win.innerWidth, bottom: win.innerHeight};
    var slides = Array.prototype.slice.call(doc.querySelectorAll("section.slide"));
    decks[frame.dataset.name] = {
      window: [win.innerWidth, win.innerHeight],
      slides: slides.map(function (s) {
        var box = s.getBoundingClientRect();
        var parts = Array.prototype.slice.call(s.querySelectorAll("h1, h2, .body > *, img, math, nav"));
        var images = Array.prototype.slice.call(s.querySelectorAll("img"));
        var maths = Array.prototype.slice.call(s.querySelectorAll("math"));
        return {
          inWindow: inside(box, view), width: box.width,
          cut: parts.filter(function (p) { var r = p.getBoundingClientRect(); return r.width > 0 && !inside(r, box); })
                    .map(function (p) { return p.tagName + ": " + (p.textContent || "").slice(0, 60); }),
          images: images.map(function (i) { var r = i.getBoundingClientRect();
                                            return {loaded: i.naturalWidth > 0, width: r.width, height: r.height}; }),
          maths: maths.map(function (m) { var r = m.getBoundingClientRect(); return r.width > 0 && r.height > 0; }),
          mathPixels: maths.map(function (m) {  // the type size an equation is drawn at, on the window
            return parseFloat(win.getComputedStyle(m).fontSize) * parseFloat(s.dataset.scale) * box.width / 1280; }),
          title: (s.querySelector("h1, h2") || {textContent: ""}).textContent,
          notes: (s.querySelector("aside.notes") || {textContent: ""}).textContent.length,
          number: (s.querySelector(".number") || {textContent: ""}).textContent,
          buttons: Array.prototype.map.call(s.querySelectorAll("nav button"), function (b) { return b.dataset.go; }),
          opening: s.classList.contains("title")};
      })};
  });
  document.getElementById("probe").textContent = JSON.stringify(decks);
});
</script></body></html>"""


def _shown(name: str) -> tuple[int, int]:
    """The pictures and equations the executed lesson shows (outputs of the cells the deck presents)."""
    nb = nbformat.read(built().out / "notebooks" / f"{name}.ipynb", as_version=4)
    outputs = [output for cell in nb.cells if cell.cell_type == "code"
               and cell.metadata.get("slideshow", {}).get("slide_type") != "skip" for output in cell.outputs]
    return (sum("image/png" in output.get("data", {}) for output in outputs),
            sum("text/latex" in output.get("data", {}) and "image/png" not in output.get("data", {}) for output in outputs))


@pytest.fixture(scope="module")
def opened() -> dict[tuple[int, int], dict]:
    """Every deck at both window sizes, laid out and fitted by its own script, probed in one Chromium per size."""
    folder = scratch("decks")
    seen = {}
    for width, height in SIZES:
        frames = "".join(f'<iframe data-name="{name}" src="{(built().out / "slides" / f"{name}.html").as_uri()}" '
                         f'width="{width}" height="{height}"></iframe>' for name in LESSONS)
        page = folder / f"harness-{width}.html"
        page.write_text(HARNESS.replace("FRAMES", frames), encoding="utf-8")
        dom = chromium(page.as_uri(), "--allow-file-access-from-files", "--dump-dom", "--window-size=1000,800")
        match = re.search(r'<pre id="probe">(.*?)</pre>', dom, flags=re.S)
        assert match and match.group(1), "the probe did not run"
        text = match.group(1).replace("&lt;", "<").replace("&gt;", ">").replace("&quot;", '"').replace("&amp;", "&")
        seen[(width, height)] = json.loads(text)
    return seen


@needs_chromium
@pytest.mark.parametrize("size", SIZES, ids=lambda size: f"{size[0]}x{size[1]}")
def test_every_slide_of_every_deck_fits_its_window_and_cuts_nothing(opened, size):
    decks = opened[size]
    assert set(decks) == set(LESSONS)
    for name, deck in decks.items():
        assert deck["window"] == list(size), name
        for number, slide in enumerate(deck["slides"], start=1):
            assert slide["inWindow"], f"{name} slide {number} leaves the {size} window"
            assert slide["cut"] == [], f"{name} slide {number} cuts {slide['cut'][:3]}"


@needs_chromium
@pytest.mark.parametrize("size", SIZES, ids=lambda size: f"{size[0]}x{size[1]}")
def test_every_picture_and_equation_of_a_lesson_is_drawn_on_a_slide(opened, size):
    # issue 32: the README's build wrote decks with 0 images and 0 equations (notebooks without outputs)
    for name, deck in opened[size].items():
        pictures, equations = _shown(name)
        images = [image for slide in deck["slides"] for image in slide["images"]]
        maths = [laid for slide in deck["slides"] for laid in slide["maths"]]
        assert len(images) == pictures and all(image["loaded"] for image in images), name
        assert len(maths) >= equations and all(maths), name
        for number, slide in enumerate(deck["slides"], start=1):
            for image in slide["images"]:  # a figure is a slide's picture, not a thumbnail beside the prose
                assert image["width"] >= 0.6 * slide["width"] or image["height"] >= 0.6 * slide["width"] * 9 / 16, \
                    f"{name} slide {number}: a picture {image['width']:.0f} px wide on a {slide['width']:.0f} px slide"
    assert sum(_shown(name)[0] for name in LESSONS) >= 24 and sum(_shown(name)[1] for name in LESSONS) >= 100


@needs_chromium
def test_each_deck_opens_on_its_title_numbers_its_slides_and_has_navigation_and_notes(opened):
    for name, deck in opened[SIZES[0]].items():
        slides = deck["slides"]
        assert slides[0]["opening"] and not any(slide["opening"] for slide in slides[1:]), name
        nb = nbformat.read(built().out / "notebooks" / f"{name}.ipynb", as_version=4)
        assert slides[0]["title"] in nb.cells[0].source, name
        assert [slide["number"] for slide in slides] == [f"{k} / {len(slides)}" for k in range(1, len(slides) + 1)], name
        assert all(slide["buttons"] == ["back", "next", "notes"] for slide in slides), name
        # the prose is the speaker's: most of the lesson's paragraphs are in the notes, not on the slides
        assert sum(slide["notes"] for slide in slides) > 2000, name
        assert all(slide["title"].strip() for slide in slides), name


@needs_chromium
def test_every_equation_is_drawn_large_enough_to_read(opened):
    # 12 slides of 8 decks were set under 14 px (issue 31): long derivation steps, now shown in named pieces, each
    # equation set over lines cut at its top-level signs, and a slide holding what fits without shrinking past 0.6
    small = [(name, number) for name, deck in opened[SIZES[0]].items()
             for number, slide in enumerate(deck["slides"], start=1) if any(px < 14 for px in slide["mathPixels"])]
    assert small == []
