"""The user guide: the hand-written chapters of ``render/documents/guide/`` and a generated API chapter.

``build`` writes it as ``guide.md`` (for GitHub and terminals) and ``guide.html`` (one self-contained page with a
table of contents, the reference's style). The chapters come in ``CHAPTERS`` order, then any other chapter file
in name order (a new feature's manual is a new file); the API chapter is generated from ``llm_formulas.__all__``:
each public name's signature and docstring, so it cannot drift from the code. The examples in the chapters are
run by the tests (tests/test_guide.py), as the README's are.
"""

from __future__ import annotations

import inspect
import re
from dataclasses import dataclass
from pathlib import Path

GUIDE = Path(__file__).parent / "guide"
CHAPTERS = ("commands", "rejected-inputs", "library")  # first, in this order; then the others; then the API; layout last
LAST = ("layout",)


@dataclass(frozen=True)
class Chapter:
    """One chapter: its file stem (the HTML anchor), its title (the first heading) and its Markdown."""

    name: str
    title: str
    markdown: str


def chapter_files() -> list[Path]:
    """The hand-written chapters in guide order."""
    files = {path.stem: path for path in GUIDE.glob("*.md")}
    middle = sorted(set(files) - set(CHAPTERS) - set(LAST))
    return [files[name] for name in (*CHAPTERS, *middle, *LAST) if name in files]


def _chapter(name: str, text: str) -> Chapter:
    heading = re.match(r"# (.+)\n", text)
    if heading is None:
        raise ValueError(f"guide chapter {name}.md must start with a '# Title' line")
    return Chapter(name, heading.group(1).strip(), text.rstrip() + "\n")


def chapters() -> list[Chapter]:
    """Every chapter, the generated API chapter before the layout."""
    written = [_chapter(path.stem, path.read_text(encoding="utf-8")) for path in chapter_files()]
    api = _chapter("api", api_markdown())
    tail = [c for c in written if c.name in LAST]
    return [c for c in written if c.name not in LAST] + [api] + tail


def api_markdown() -> str:
    """The API chapter: every name of ``llm_formulas.__all__`` with its signature and docstring; a class's public
    methods below it."""
    import llm_formulas

    lines = ["# API", "", "Every public name of `llm_formulas` (`import llm_formulas as lf`), as its docstring states it.",
             f"This is version {llm_formulas.__version__}.", ""]
    for name in sorted(n for n in llm_formulas.__all__ if n != "__version__"):
        value = getattr(llm_formulas, name)
        lines += _entry(f"lf.{name}", value, level=2)
        if inspect.isclass(value) and not issubclass(value, BaseException):
            for method_name, method in inspect.getmembers(value, predicate=inspect.isfunction):
                if method_name.startswith("_") or method.__qualname__.split(".")[0] != value.__name__:
                    continue
                lines += _entry(f"lf.{name}.{method_name}", method, level=3)
    return "\n".join(lines).rstrip() + "\n"


def _entry(title: str, value: object, level: int) -> list[str]:
    doc = inspect.getdoc(value) or "(no docstring)"
    lines = [f"{'#' * level} `{title}`", ""]
    if callable(value):
        try:
            signature = str(inspect.signature(value, eval_str=True))
        except (TypeError, ValueError, NameError):  # an annotation only a type checker can resolve: print it as written
            try:
                signature = str(inspect.signature(value)).replace("'", "")
            except (TypeError, ValueError):
                signature = ""
        if signature:
            signature = re.sub(r"\b(?:[a-z_][a-z0-9_]*\.)+(?=[A-Z])", "", signature)  # Formula, not its module path
            lines += ["```text", f"{title.split('.')[-1]}{signature}", "```", ""]
    return lines + [doc, ""]


def guide_markdown() -> str:
    """The whole guide as one Markdown document."""
    contents = ["# llm-formulas: the user guide", ""] + [f"- [{c.title}](#{c.name})" for c in chapters()] + [""]
    body = [f'<a id="{c.name}"></a>\n\n' + c.markdown for c in chapters()]
    return "\n".join(contents) + "\n" + "\n".join(body)


def guide_html() -> str:
    """The guide as one self-contained HTML page (Markdown rendered by markdown-it, CommonMark with tables)."""
    from markdown_it import MarkdownIt

    from llm_formulas.render.documents.templating import render

    parser = MarkdownIt("commonmark", {"html": False}).enable("table")
    sections = [{"name": c.name, "title": c.title, "html": parser.render(c.markdown)} for c in chapters()]
    return render("guide.html", sections=sections)
