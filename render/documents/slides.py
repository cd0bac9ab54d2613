"""Each lesson as a slide deck: one self-contained HTML file, readable offline in any browser.

The slides follow the notebook's own slide metadata (nbformat's ``slideshow.slide_type``, the
one nbconvert's reveal.js exporter and RISE read): ``slide`` starts a slide, ``subslide``
continues the section on a new slide, ``-`` stays on the current one, ``skip`` is left out.
``slide_types`` sets it on a lesson's cells when the notebook is assembled: a Markdown cell that
opens with a heading starts a slide, one without continues on a new slide when the current one
is already long, code cells stay with the prose before them and show their outputs (the set-up
cell is skipped), so a teacher can also present the notebook itself with RISE.

A deck is plain HTML: Markdown through markdown-it-py, the equations as presentation MathML
(``render.printers.mathml``; Chromium lays it out without a script), pictures as embedded
PNGs, code in a folded block. A few lines of script page through it (arrow keys, space, a
click); printed, each slide is one page. Building twice writes the same bytes.
"""

from __future__ import annotations

import html
import re

from nbformat.notebooknode import NotebookNode

from llm_formulas.render.printers.mathml import fragment_mathml

LONG_SLIDE = 1100  # characters of prose after which the next paragraph-only cell starts a new slide
PICTURE_ROOM = 500  # characters of prose beside which a picture still fits on the slide
STYLE = """
html, body { margin: 0; background: #f4f4f4; font-family: "DejaVu Sans", sans-serif; }
section.slide { box-sizing: border-box; width: 1024px; height: 720px; margin: 12px auto; padding: 36px 48px;
  background: white; box-shadow: 0 1px 4px #aaa; overflow: hidden; display: none; position: relative; font-size: 19px;
  line-height: 1.35; }
section.slide.current { display: block; }
section.slide .inner { transform-origin: top left; display: flow-root; }
section.slide.title h1 { margin-top: 160px; font-size: 36px; }
h1 { font-size: 30px; margin: 0 0 16px; } h2 { font-size: 26px; margin: 0 0 14px; color: #1f4e79; }
blockquote { margin: 12px 0; padding: 6px 16px; border-left: 4px solid #1f4e79; color: #333; font-style: italic; }
code { font-family: "DejaVu Sans Mono", monospace; font-size: 85%; background: #f0f0f0; padding: 0 3px; }
pre { font-size: 12px; background: #f7f7f7; padding: 6px 10px; overflow: hidden; white-space: pre-wrap; }
details summary { font-size: 12px; color: #777; cursor: pointer; }
img { display: block; max-width: 100%; max-height: 430px; margin: 6px auto; }
math[display="block"] { display: block; margin: 6px 0; font-size: 17px; overflow: hidden; }
.output { font-size: 16px; }
.number { position: absolute; bottom: 12px; right: 24px; font-size: 13px; color: #888; }
@media print {
  body { background: white; }
  section.slide { display: block; box-shadow: none; margin: 0 auto; page-break-after: always; }
}
"""
SCRIPT = """
(function () {
  var slides = Array.prototype.slice.call(document.querySelectorAll("section.slide"));
  var at = Math.max(0, Math.min(slides.length - 1, parseInt((location.hash || "#1").slice(1), 10) - 1 || 0));
  function fit(slide) {  // scale a slide's content down until it fits the slide
    var inner = slide.querySelector(".inner");
    inner.style.transform = ""; inner.style.width = "";
    var room = slide.clientHeight - 72, height = inner.scrollHeight;
    var scale = height > room ? room / height : 1;
    if (scale < 1) { inner.style.transform = "scale(" + scale + ")"; inner.style.width = (100 / scale) + "%"; }
    slide.dataset.scale = scale.toFixed(3);
  }
  function show(k) {
    at = Math.max(0, Math.min(slides.length - 1, k));
    slides.forEach(function (s, i) { s.classList.toggle("current", i === at); if (i === at) fit(s); });
    history.replaceState(null, "", "#" + (at + 1));
  }
  window.fitAll = function () {  // every slide laid out and fitted (printing, and the tests)
    slides.forEach(function (s) { s.classList.add("current"); fit(s); });
  };
  window.addEventListener("beforeprint", window.fitAll);
  document.addEventListener("keydown", function (e) {
    if (["ArrowRight", "PageDown", " ", "Enter"].indexOf(e.key) >= 0) { show(at + 1); e.preventDefault(); }
    if (["ArrowLeft", "PageUp", "Backspace"].indexOf(e.key) >= 0) { show(at - 1); e.preventDefault(); }
    if (e.key === "Home") show(0);
    if (e.key === "End") show(slides.length - 1);
  });
  document.addEventListener("click", function (e) { if (!e.target.closest("details, a")) show(at + 1); });
  show(at);
})();
"""


def _weight(kind: str, text: str) -> int:
    """About how much of a slide a cell fills, in characters of prose: a derivation or a picture fills most of one."""
    if kind == "markdown":
        return len(text)
    calls = re.findall(r"(?:^|\n)\s*(?:for .*\n\s+)?(\w+)\(", text)
    return 150 + sum({"derive": 700, "picture": 800, "show": 800, "source_figure": 220, "refutation": 200}.get(c, 80)
                     for c in calls)


def slide_types(cells: list[tuple[str, str]]) -> list[str]:
    """The slideshow type of each cell of a lesson (with its set-up cell at index 1)."""
    types, prose = [], 0
    for index, (kind, text) in enumerate(cells):
        if index == 1:  # the set-up cell: imports, nothing to present
            types.append("skip")
        elif kind == "code" and prose > PICTURE_ROOM and prose + _weight(kind, text) > LONG_SLIDE:
            types.append("subslide")  # a picture or a derivation gets a slide of its own when the slide is already full
            prose = _weight(kind, text)
        elif kind == "code":
            types.append("-")
            prose += _weight(kind, text)
        elif index == 0 or text.lstrip().startswith("#"):
            types.append("slide")
            prose = len(text)
        elif prose + len(text) > LONG_SLIDE:
            types.append("subslide")
            prose = len(text)
        else:
            types.append("-")
            prose += len(text)
    return types


def _markdown(text: str) -> str:
    from markdown_it import MarkdownIt

    return MarkdownIt("commonmark", {"html": False}).enable("table").render(text)


def _latex(text: str) -> str:
    """A display equation of the lesson helpers (``$$...$$`` or bare LaTeX) as MathML."""
    body = text.strip().strip("$").strip()
    return f'<math display="block">{fragment_mathml(body)}</math>'


def _output(output: NotebookNode) -> str:
    data = output.get("data", {})
    if "image/png" in data:
        return f'<img alt="picture" src="data:image/png;base64,{"".join(data["image/png"]).strip()}">'
    if "text/latex" in data:
        return _latex("".join(data["text/latex"]))
    if "text/markdown" in data:
        return _markdown("".join(data["text/markdown"]))
    if output.get("output_type") == "stream" and output.get("name") == "stdout":
        return f"<pre>{html.escape(''.join(output['text']))}</pre>"
    if "text/plain" in data:
        return f"<pre>{html.escape(''.join(data['text/plain']))}</pre>"
    return ""


def _cell(cell: NotebookNode) -> str:
    if cell.cell_type == "markdown":
        return _markdown(cell.source)
    code = f"<details><summary>code</summary><pre>{html.escape(cell.source)}</pre></details>"
    return code + "".join(f'<div class="output">{_output(o)}</div>' for o in cell.get("outputs", []))


def _blocks(source: str) -> list[str]:
    """A Markdown cell cut before each heading after its first line: each heading opens a slide of its own."""
    blocks, current = [], []
    for line in source.splitlines():
        if line.startswith("#") and current and any(text.strip() for text in current):
            blocks.append("\n".join(current))
            current = []
        current.append(line)
    return blocks + ["\n".join(current)]


def _opening(source: str) -> tuple[str, str]:
    """The first cell as the title slide (its heading and the question quoted under it) and the rest."""
    lines = source.splitlines()
    end = next((i for i, line in enumerate(lines) if i > 0 and line.strip() and not line.startswith((">", "#"))), len(lines))
    return "\n".join(lines[:end]), "\n".join(lines[end:])


def deck(nb: NotebookNode, title: str) -> str:
    """The lesson's slides as one HTML page; a deck of a notebook without outputs shows the prose and the code."""
    slides: list[list[str]] = []
    for index, cell in enumerate(nb.cells):
        kind = cell.get("metadata", {}).get("slideshow", {}).get("slide_type", "-")
        if kind == "skip":
            continue
        if index == 0 and cell.cell_type == "markdown":  # the title slide, then the introduction
            head, rest = _opening(cell.source)
            slides += [[_markdown(head)], [_markdown(rest)]] if rest.strip() else [[_markdown(head)]]
            continue
        if kind in ("slide", "subslide") or not slides:
            slides.append([])
        if cell.cell_type == "markdown":
            first, *others = _blocks(cell.source)
            slides[-1].append(_markdown(first))
            slides += [[_markdown(block)] for block in others]
        else:
            slides[-1].append(_cell(cell))
    sections = []
    for number, parts in enumerate(slides, start=1):
        css = "slide title" if number == 1 else "slide"
        sections.append(f'<section class="{css}" id="s{number}"><div class="inner">{"".join(parts)}</div>'
                        f'<div class="number">{number} / {len(slides)}</div></section>')
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<title>{html.escape(title)}</title><style>{STYLE}</style></head><body>\n"
            + "\n".join(sections) + f"\n<script>{SCRIPT}</script></body></html>\n")


def title_of(nb: NotebookNode) -> str:
    match = re.search(r"^#\s+(.+)$", nb.cells[0].source, flags=re.M)
    return match.group(1).strip() if match else "lesson"


def can_render() -> str | None:
    """None when markdown-it-py is at hand, else why the decks are left out."""
    try:
        import markdown_it  # noqa: F401
    except ImportError:
        return "markdown-it-py is not installed (pip install '.[notebooks]')"
    return None
