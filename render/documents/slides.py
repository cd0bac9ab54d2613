"""Each lesson as a slide deck a presenter uses: one self-contained HTML file, readable offline in any browser.

The slides follow the notebook's own slide metadata (nbformat's ``slideshow.slide_type``, the
one nbconvert's reveal.js exporter and RISE read): ``slide`` starts a slide, ``subslide``
continues the section on a new slide, ``-`` stays on the current one, ``skip`` is left out.
``slide_types`` sets it on a lesson's cells when the notebook is assembled: a Markdown cell that
opens with a heading starts a slide, one without continues on a new slide when the current one
is already long, code cells stay with the prose before them and show their outputs (the set-up
cell is skipped), so a teacher can also present the notebook itself with RISE.

On a slide: the heading, then what the lesson's code shows (its equations, pictures, figures and computed
sentences) and the prose's lists and tables; the prose's paragraphs and the code go to the speaker notes (``S``
opens them in a window of their own, beside the slide's number, the time and the next slide's title). A slide
whose section has nothing to show but paragraphs shows its first. A cell that shows many equations continues
on further slides, and a picture gets a slide of its own once the slide holds more than a caption.

A deck is plain HTML: Markdown through markdown-it-py, the equations as presentation MathML
(``render.printers.mathml``; Chromium lays it out without a script), pictures as embedded
PNGs. Each slide is a 1280 × 720 canvas scaled to the window (nothing cut at 1280 × 720, 1920 × 1080 or
any other size); a few lines of script fit what it holds (an equation wider than the slide is set smaller,
then the whole content if it is still too tall), page through it (arrow keys, space, a click, the buttons
on screen) and print it a slide a page. Building twice writes the same bytes.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass, field

from nbformat.notebooknode import NotebookNode

from llm_formulas.render.printers.mathml import fragment_mathml

LONG_SLIDE = 1100  # characters of prose after which the next paragraph-only cell starts a new slide
PICTURE_ROOM = 500  # characters of prose beside which a picture still fits on the slide
EQUATIONS_PER_SLIDE = 4  # lines of equations a slide holds: a derivation showing more continues on the next slide
CAPTION = 400  # characters of HTML above which a text is no caption: a picture after it gets a slide of its own
LINE = 150  # characters of LaTeX an equation's line holds on a slide (about the slide's 1168 px at 30 px type)
ROOM = 900  # px of content a slide takes (estimated): its 570 px body scaled to no less than 0.6, equations at 18 px
WIDTH, HEIGHT = 1280, 720  # the canvas every slide is laid out on, then scaled to the window
STYLE = f"""
html, body {{ margin: 0; height: 100%; overflow: hidden; background: #222; font-family: "DejaVu Sans", sans-serif; }}
section.slide {{ box-sizing: border-box; width: {WIDTH}px; height: {HEIGHT}px; padding: 28px 56px 56px;
  background: white; overflow: hidden; display: none; flex-direction: column; position: absolute; left: 50%; top: 50%;
  transform-origin: center center; font-size: 28px; line-height: 1.3; }}
section.slide.current {{ display: flex; }}
section.slide > h1, section.slide > h2 {{ flex: none; margin: 0 0 14px; color: #1f4e79; font-size: 40px; line-height: 1.15; }}
section.slide.title {{ justify-content: center; }}
section.slide.title > h1 {{ font-size: 52px; color: #111; margin-bottom: 28px; }}
section.slide .body {{ flex: 1 1 auto; min-height: 0; display: flex; flex-direction: column; transform-origin: top left; }}
section.slide.title .body {{ flex: none; }}
section.slide .body > * {{ flex: none; }}
section.slide .body > .picture {{ flex: 1 1 auto; min-height: 0; display: flex; justify-content: center; }}
img {{ display: block; max-width: 100%; max-height: 100%; min-height: 0; object-fit: contain; margin: 0 auto; }}
blockquote {{ margin: 12px 0; padding: 6px 20px; border-left: 6px solid #1f4e79; color: #333; font-style: italic; }}
code {{ font-family: "DejaVu Sans Mono", monospace; font-size: 85%; background: #f0f0f0; padding: 0 4px; }}
pre {{ font-size: 18px; background: #f7f7f7; padding: 8px 12px; margin: 6px 0; white-space: pre-wrap; }}
p {{ margin: 6px 0; }} ul, ol {{ margin: 6px 0; }}
table {{ border-collapse: collapse; font-size: 22px; margin: 6px auto; }} td, th {{ border: 1px solid #bbb; padding: 3px 10px; }}
math[display="block"] {{ display: block; margin: 8px 0; font-size: 30px; }}
.lines > math[display="block"] {{ margin: 2px 0; }}
.lines > math.more {{ padding-left: 64px; }}
aside.notes {{ display: none; }}
nav {{ position: absolute; right: 18px; bottom: 10px; display: flex; gap: 10px; align-items: center; font-size: 20px;
  color: #777; }}
nav button {{ font-size: 20px; border: 1px solid #bbb; background: #fafafa; color: #333; border-radius: 4px;
  padding: 2px 12px; cursor: pointer; }}
@media print {{
  @page {{ size: {WIDTH}px {HEIGHT}px; margin: 0; }}
  html, body {{ height: auto; overflow: visible; background: white; }}
  section.slide {{ display: flex; position: relative; left: 0; top: 0; transform: none !important; page-break-after: always; }}
  nav button {{ display: none; }}
}}
"""
SCRIPT = """
(function () {
  var slides = Array.prototype.slice.call(document.querySelectorAll("section.slide"));
  var at = Math.max(0, Math.min(slides.length - 1, parseInt((location.hash || "#1").slice(1), 10) - 1 || 0));
  var started = Date.now(), speaker = null;
  function place(slide) {  // the 1280 x 720 canvas, centred and scaled to the window
    var scale = Math.min(window.innerWidth / WIDTH, window.innerHeight / HEIGHT);
    slide.style.transform = "translate(-50%, -50%) scale(" + scale + ")";
  }
  function fit(slide) {  // an equation wider than the slide set smaller; then the content scaled until it fits
    var body = slide.querySelector(".body");
    if (!body) { slide.dataset.scale = "1.000"; return; }
    body.style.transform = ""; body.style.width = ""; body.style.height = "";
    Array.prototype.forEach.call(body.querySelectorAll("math[display=block]"), function (m) {
      m.style.fontSize = "";
      var room = body.clientWidth, wide = m.scrollWidth;
      if (wide > room) m.style.fontSize = (30 * room / wide * 0.98).toFixed(1) + "px";
    });
    var roomH = body.clientHeight, roomW = body.clientWidth, height = body.scrollHeight, width = body.scrollWidth;
    var scale = Math.min(1, roomH / height, roomW / width);
    if (scale < 1) {
      body.style.transform = "scale(" + scale + ")";
      body.style.width = (roomW / scale) + "px"; body.style.height = (roomH / scale) + "px";
    }
    slide.dataset.scale = scale.toFixed(3);
  }
  function notes(k) {
    var aside = slides[k].querySelector("aside.notes");
    return aside ? aside.innerHTML : "";
  }
  function title(k) {
    var heading = k < slides.length ? slides[k].querySelector("h1, h2") : null;
    return heading ? heading.textContent : "(the end)";
  }
  function updateSpeaker() {
    if (!speaker || speaker.closed) return;
    var minutes = Math.floor((Date.now() - started) / 60000);
    speaker.document.body.innerHTML = "<p style='color:#555'>slide " + (at + 1) + " / " + slides.length + " \\u00b7 " +
      minutes + " min \\u00b7 next: " + title(at + 1).replace(/</g, "&lt;") + "</p><h2>" +
      title(at).replace(/</g, "&lt;") + "</h2>" + notes(at);
  }
  function openSpeaker() {
    speaker = window.open("", "llm-formulas-notes", "width=900,height=700");
    if (!speaker) return;
    speaker.document.title = "Speaker notes: " + document.title;
    speaker.document.body.style.cssText = "font: 20px/1.45 'DejaVu Sans', sans-serif; margin: 24px;";
    updateSpeaker();
  }
  function show(k) {
    at = Math.max(0, Math.min(slides.length - 1, k));
    slides.forEach(function (s, i) { s.classList.toggle("current", i === at); if (i === at) { place(s); fit(s); } });
    history.replaceState(null, "", "#" + (at + 1));
    updateSpeaker();
  }
  window.fitAll = function () {  // every slide laid out and fitted (printing, and the tests)
    slides.forEach(function (s) { s.classList.add("current"); place(s); fit(s); });
  };
  window.showSlide = function (k) { show(k); };
  window.addEventListener("beforeprint", window.fitAll);
  window.addEventListener("afterprint", function () { show(at); });
  window.addEventListener("resize", function () { show(at); });
  document.addEventListener("keydown", function (e) {
    if (["ArrowRight", "ArrowDown", "PageDown", " ", "Enter"].indexOf(e.key) >= 0) { show(at + 1); e.preventDefault(); }
    if (["ArrowLeft", "ArrowUp", "PageUp", "Backspace"].indexOf(e.key) >= 0) { show(at - 1); e.preventDefault(); }
    if (e.key === "Home") show(0);
    if (e.key === "End") show(slides.length - 1);
    if (e.key === "s" || e.key === "S") openSpeaker();
  });
  document.addEventListener("click", function (e) {
    var button = e.target.closest("button");
    if (button) {
      var go = button.dataset.go;
      if (go === "next") show(at + 1); else if (go === "back") show(at - 1); else if (go === "notes") openSpeaker();
      return;
    }
    if (!e.target.closest("a")) show(at + 1);
  });
  show(at);
})();
""".replace("WIDTH", str(WIDTH)).replace("HEIGHT", str(HEIGHT))


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


def _parser():
    from markdown_it import MarkdownIt

    return MarkdownIt("commonmark", {"html": False}).enable("table")


def _markdown(text: str) -> str:
    return _parser().render(text)


@dataclass
class _Block:
    """One top-level block of a Markdown cell: a heading, a paragraph or anything else (list, table, quote)."""

    kind: str  # "heading", "paragraph" or "other"
    html: str
    level: int = 0


def _blocks(source: str) -> list[_Block]:
    """A Markdown cell's top-level blocks, each rendered to HTML."""
    md = _parser()
    tokens = md.parse(source)
    blocks, start = [], 0
    for index, token in enumerate(tokens):
        if token.level == 0 and token.nesting <= 0 and index >= start:  # a top-level block ends here
            if token.nesting == 0 and token.type not in ("hr", "fence", "code_block", "html_block"):
                continue
            piece = tokens[start:index + 1]
            opening = piece[0].type
            kind = "heading" if opening == "heading_open" else "paragraph" if opening == "paragraph_open" else "other"
            level = int(piece[0].tag[1]) if kind == "heading" else 0
            blocks.append(_Block(kind, md.renderer.render(piece, md.options, {}), level))
            start = index + 1
    return blocks


def _latex(text: str) -> str:
    """A display equation of the lesson helpers (``$$...$$`` or bare LaTeX) as MathML: a long one over several lines,
    broken before its top-level signs, so that it is drawn as large as the others rather than shrunk to fit."""
    body = text.strip().strip("$").strip()
    lines = _lines(body)
    if len(lines) == 1:
        return f'<math display="block">{fragment_mathml(body)}</math>'
    more = ' class="more"'  # a line continuing the one above, set in
    shown = [f'<math display="block"{more if index else ""}>{fragment_mathml(line)}</math>' for index, line in enumerate(lines)]
    return '<div class="lines">' + "".join(shown) + "</div>"


def _lines(tex: str) -> list[str]:
    """``tex`` in lines of about ``LINE`` characters, cut before a +, −, = or ≈ or a space (\\quad) at its top level
    (outside braces and \\left … \\right); an environment's own lines are left as they are."""
    if r"\begin" in tex or len(tex) <= LINE:
        return [tex]
    starts = [0] + _cuts(tex) + [len(tex)]
    lines: list[str] = []
    for start, end in zip(starts, starts[1:]):
        piece = tex[start:end].strip()
        if lines and len(lines[-1]) + 1 + len(piece) <= LINE:
            lines[-1] += " " + piece
        elif piece:
            lines.append(piece)
    return [re.sub(r"^\\q?quad\s*", "", line) for line in lines]


def _cuts(tex: str) -> list[int]:
    """The places ``tex`` may be cut: before each top-level " + ", " - ", " = ", ``\\approx``, ``\\quad``, ``\\qquad``."""
    cuts, depth, index = [], 0, 0
    while index < len(tex):
        char = tex[index]
        if char == "\\":
            end = index + 1
            while end < len(tex) and tex[end].isalpha():
                end += 1
            command = tex[index:max(end, index + 2)]
            depth += {r"\left": 1, r"\right": -1}.get(command, 0)
            if depth == 0 and command in (r"\quad", r"\qquad", r"\approx"):
                cuts.append(index)
            index = max(end, index + 2)
            continue
        depth += {"{": 1, "}": -1}.get(char, 0)
        if depth == 0 and char in "+-=" and tex[index - 1:index] == " " and tex[index + 1:index + 2] == " ":
            cuts.append(index)
        index += 1
    return cuts


def _output(output: NotebookNode) -> tuple[str, str]:
    """An output as (kind, HTML): kind "picture", "equation" or "text"."""
    data = output.get("data", {})
    if "image/png" in data:
        source = "".join(data["image/png"]).strip()
        return "picture", f'<div class="picture"><img alt="figure" src="data:image/png;base64,{source}"></div>'
    if "text/latex" in data:
        return "equation", _latex("".join(data["text/latex"]))
    if "text/markdown" in data:
        return "text", _markdown("".join(data["text/markdown"]))
    if output.get("output_type") == "stream" and output.get("name") == "stdout":
        return "text", f"<pre>{html.escape(''.join(output['text']))}</pre>"
    if "text/plain" in data:
        return "text", f"<pre>{html.escape(''.join(data['text/plain']))}</pre>"
    return "text", ""


@dataclass
class _Slide:
    title: str  # the heading's HTML
    body: list[tuple[str, str]] = field(default_factory=list)  # (kind, HTML) of what it shows
    notes: list[str] = field(default_factory=list)
    opening: bool = False

    def height(self) -> int:
        """About how tall what the slide shows is laid out, in px (``_height``)."""
        return sum(_height(kind, shown) for kind, shown in self.body)

    def equations(self) -> int:
        """The lines of equations the slide shows (a long equation is set over several)."""
        return sum(shown.count("<math") for kind, shown in self.body if kind == "equation")


class _Deck:
    """The slides as they are assembled, cell by cell."""

    def __init__(self) -> None:
        self.slides: list[_Slide] = []
        self.heading = ""

    def start(self, title: str | None = None) -> _Slide:
        if title is not None:
            self.heading = title
        slide = _Slide(title if title is not None else self._continued())
        self.slides.append(slide)
        return slide

    def _continued(self) -> str:
        plain = re.sub(r"<[^>]+>", "", self.heading)
        return f"<h2>{html.escape(html.unescape(plain.strip()))} <small>(continued)</small></h2>" if plain else "<h2></h2>"

    @property
    def current(self) -> _Slide:
        """The slide being filled: never the title slide, which holds the title and the question alone."""
        return self.slides[-1] if self.slides and not self.slides[-1].opening else self.start()

    def prose(self, source: str, new_slide: bool) -> None:
        blocks = _blocks(source)
        if new_slide and not (blocks and blocks[0].kind == "heading"):
            self.start()
        for block in blocks:
            if block.kind == "heading":
                self.start(block.html.replace("<h3>", "<h2>").replace("</h3>", "</h2>")
                           if block.level > 2 else block.html.replace("<h1>", "<h2>").replace("</h1>", "</h2>"))
            elif block.kind == "paragraph":
                self.current.notes.append(block.html)
            else:
                self.current.body.append(("text", block.html))

    def outputs(self, cell: NotebookNode, new_slide: bool) -> None:
        if new_slide:
            self.start()
        self.current.notes.append(f"<pre>{html.escape(cell.source)}</pre>")
        shown_outputs = [(kind, shown) for kind, shown in map(_output, cell.get("outputs", [])) if shown]
        for index, (kind, shown) in enumerate(shown_outputs):
            following = shown_outputs[index + 1] if index + 1 < len(shown_outputs) else ("", "")
            # a caption is measured with the equation under it, so that the two stay on one slide
            captioned = kind == "text" and following[0] == "equation"
            lines = following[1].count("<math") if captioned else shown.count("<math")
            height = _height(kind, shown) + (_height(*following) if captioned else 0)
            if self._full(self.current, kind, lines) or (self.current.body and self.current.height() + height > ROOM):
                self.start()
            self.current.body.append((kind, shown))


    @staticmethod
    def _full(slide: _Slide, kind: str, lines: int = 0) -> bool:
        """No room for one more output of ``kind`` (``lines`` of equations): a picture is alone on its slide, or under one
        short caption; a derivation continues on the next slide past EQUATIONS_PER_SLIDE lines of equations (its caption
        moving with its equation)."""
        kinds = [shown for shown, _ in slide.body]
        if "picture" in kinds:
            return True
        if kind == "picture":
            return len(kinds) > 1 or "equation" in kinds or any(len(shown) > CAPTION for _, shown in slide.body)
        return slide.equations() > 0 and slide.equations() + max(lines, 1) > EQUATIONS_PER_SLIDE


def _height(kind: str, shown: str) -> int:
    """About how tall an output is laid out on a slide, in px: an equation's lines, a listing's, a table's rows, or a
    text's lines of about 70 characters."""
    if kind == "equation":
        return 64 * shown.count("<math")
    if kind == "picture":
        return 0
    if "<pre" in shown:
        return 24 * (shown.count("\n") + 1)
    if "<table" in shown:
        return 34 * shown.count("<tr")
    paragraphs = max(1, shown.count("<p") + shown.count("<li"))
    return 37 * (len(re.sub(r"<[^>]+>", "", shown)) // 70 + paragraphs) + 12 * paragraphs


def _opening(source: str) -> tuple[str, str]:
    """The first cell as the title slide (its heading and the question quoted under it) and the rest."""
    lines = source.splitlines()
    end = next((i for i, line in enumerate(lines) if i > 0 and line.strip() and not line.startswith((">", "#"))), len(lines))
    return "\n".join(lines[:end]), "\n".join(lines[end:])


def slides_of(nb: NotebookNode) -> list[_Slide]:
    """The lesson's slides: a title slide (the heading and the question), then a slide per section."""
    deck = _Deck()
    for index, cell in enumerate(nb.cells):
        kind = cell.get("metadata", {}).get("slideshow", {}).get("slide_type", "-")
        if kind == "skip":
            continue
        if index == 0 and cell.cell_type == "markdown":
            head, rest = _opening(cell.source)
            blocks = _blocks(head)
            title = deck.start(blocks[0].html if blocks and blocks[0].kind == "heading" else "<h1></h1>")
            title.opening = True
            title.body += [("text", block.html) for block in blocks[1:]]
            title.notes += [block.html for block in _blocks(rest) if block.kind == "paragraph"]
            others = [block for block in _blocks(rest) if block.kind != "paragraph"]
            if others:
                deck.prose(rest, new_slide=True)
                deck.slides[-1].notes.clear()
            continue
        new_slide = kind in ("slide", "subslide")
        if cell.cell_type == "markdown":
            deck.prose(cell.source, new_slide)
        else:
            deck.outputs(cell, new_slide)
    for slide in deck.slides:  # a section with nothing to show but paragraphs shows its first one
        if not slide.body and not slide.opening and slide.notes and not slide.notes[0].startswith("<pre>"):
            slide.body.append(("text", slide.notes[0]))
    return [slide for slide in deck.slides if slide.body or slide.opening or re.sub(r"<[^>]+>", "", slide.title).strip()]


def deck(nb: NotebookNode, title: str) -> str:
    """The lesson's slides as one HTML page (from the executed notebook: its outputs are what the slides show)."""
    slides = slides_of(nb)
    sections = []
    for number, slide in enumerate(slides, start=1):
        kinds = sorted({kind for kind, _ in slide.body})
        css = "slide title" if slide.opening else "slide"
        body = "".join(shown for _, shown in slide.body)
        notes = "".join(slide.notes)
        heading = slide.title.replace("<h2>", "<h1>").replace("</h2>", "</h1>") if slide.opening else slide.title
        sections.append(
            f'<section class="{css}" id="s{number}" data-shows="{" ".join(kinds)}">{heading}<div class="body">{body}</div>'
            f'<aside class="notes">{notes}</aside><nav><button data-go="back" title="previous (←)">◀</button>'
            f'<span class="number">{number} / {len(slides)}</span><button data-go="next" title="next (→)">▶</button>'
            f'<button data-go="notes" title="speaker notes (S)">notes</button></nav></section>')
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
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
