"""The reference as a site: ``reference/index.html`` by topic, a page per topic and per family, the sources, the
symbols, and a search.

Built from the page model of ``render.documents.reference`` (``build_reference()``). Every formula sits at an anchor
that is its id (``params.html#params.decoder.total``) and shows its statement, its composed form (presentation
MathML, which Chromium lays out natively: no script, no network), its parts linked to their anchors on whichever
page, its conditions, its derivation steps, its sources (authors, title, year), the formulas that name it as a
part ("used by") and the lessons that name it. The family pages are render.documents.family_pages';
``search-index.js`` (render.documents.site_search) is what ``search.js`` searches in the page.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from llm_formulas.formulas.vocabulary.catalogue import Formula, all_formulas, get
from llm_formulas.formulas.vocabulary.latex import formula_latex
from llm_formulas.render.documents.equation_mathml import display_mathml
from llm_formulas.render.documents.family_pages import family_entries, family_pages, page_names
from llm_formulas.render.documents.reference import FormulaView, Reference, TopicView, topic_of
from llm_formulas.render.documents.site_links import FormulaLink, lhs_latex, link
from llm_formulas.render.documents.site_search import formula_entry, search_index
from llm_formulas.render.documents.templating import TEMPLATES, render
from llm_formulas.render.documents.topic_questions import TOPIC_QUESTIONS

FOLDER = "reference"
STATIC = ("site.css", "search.js")  # copied from the templates as they are
INDEX_SCRIPT = "search-index.js"
PAGES = ("index.html", "sources.html", "symbols.html")


def site_files() -> tuple[str, ...]:
    """Every file of the site, relative to ``reference/``, known before anything is rendered."""
    topics = dict.fromkeys(topic_of(f.id) for f in all_formulas())
    return PAGES + tuple(f"{topic}.html" for topic in topics) + page_names() + STATIC + (INDEX_SCRIPT,)


@dataclass(frozen=True)
class SourceLine:
    """A source of a formula as a reader cites it: authors, title, year, the place, and the entry on sources.html."""

    authors: str
    title: str
    year: str
    where: str
    href: str


@dataclass(frozen=True)
class SiteFormula:
    view: FormulaView
    composed: str  # presentation MathML of ``symbol = composed form``
    parts: tuple[FormulaLink, ...]
    used_by: tuple[FormulaLink, ...]
    sources: tuple[SourceLine, ...]
    lessons: tuple[str, ...] = ()  # the lessons that name it (their slides: ../slides/<name>.html)


@dataclass(frozen=True)
class Question:
    text: str
    answer: FormulaLink


@dataclass(frozen=True)
class SitePage:
    topic: TopicView
    questions: tuple[Question, ...]
    formulas: tuple[SiteFormula, ...]


def composed_mathml(formula: Formula) -> str:
    """``symbol = composed form`` as a display ``<math>``, over lines when it is wide (render.documents.equation_mathml)."""
    return display_mathml(lhs_latex(formula), formula.composed, formula_latex(formula))


def used_by() -> dict[str, list[Formula]]:
    """For each formula, the formulas that name it as a direct part, in catalogue order."""
    users: dict[str, list[Formula]] = {}
    for formula in all_formulas():
        for part in formula.parts:
            users.setdefault(part, []).append(formula)
    return users


LESSON_ID = re.compile(r"[\"']([a-z_]+(?:\.[A-Za-z0-9_]+)+)[\"']")  # a quoted dotted name: a formula id, if the catalogue has it


def lessons_using() -> dict[str, list[str]]:
    """For each formula, the lessons whose source (render/documents/lessons/<name>.py) names its id, in the course's
    order; each is linked to its slides (``OUT/slides/<name>.html``)."""
    from llm_formulas.render.documents import lessons
    from llm_formulas.render.documents.notebooks import LESSONS

    ids = {formula.id for formula in all_formulas()}
    folder = Path(lessons.__file__).parent
    using: dict[str, list[str]] = {}
    for name in LESSONS:
        for formula_id in dict.fromkeys(LESSON_ID.findall((folder / f"{name}.py").read_text(encoding="utf-8"))):
            if formula_id in ids:
                using.setdefault(formula_id, []).append(name)
    return using


def source_lines(formula: Formula) -> tuple[SourceLine, ...]:
    return tuple(SourceLine(s.work.authors, s.work.title_en or s.work.title, s.work.date[:4], s.where,
                            f"sources.html#{s.work.anchor}") for s in formula.sources)


def site_pages(reference: Reference) -> tuple[SitePage, ...]:
    users, taught = used_by(), lessons_using()
    pages = []
    for topic in reference.topics:
        formulas = []
        for view in topic.formulas:
            formula = get(view.id)
            formulas.append(SiteFormula(view, composed_mathml(formula), tuple(link(get(p)) for p in formula.parts),
                                        tuple(link(user) for user in users.get(formula.id, ())), source_lines(formula),
                                        tuple(taught.get(formula.id, ()))))
        questions = tuple(Question(text, link(get(answer))) for text, answer in TOPIC_QUESTIONS.get(topic.name, ()))
        pages.append(SitePage(topic, questions, tuple(formulas)))
    return tuple(pages)


@cache
def _static(name: str) -> str:
    return (TEMPLATES / name).read_text(encoding="utf-8")


def site(reference: Reference) -> dict[str, str]:
    """Every file of the site by its path relative to ``reference/``."""
    pages, families = site_pages(reference), family_pages(reference.unproved)
    topics = [(page.topic.name, page.topic.title) for page in pages]
    files = {"index.html": render("site_index.html", pages=pages, families=families, ref=reference, topics=topics),
             "sources.html": render("site_sources.html", ref=reference, topics=topics),
             "symbols.html": render("site_symbols.html", ref=reference, topics=topics)}
    for page in pages:
        files[f"{page.topic.name}.html"] = render("site_topic.html", page=page, ref=reference, topics=topics)
    for family in families:
        files[family.page] = render("site_family.html", family=family, ref=reference, topics=topics)
    files |= {name: _static(name) for name in STATIC}
    entries = [formula_entry(item.view) for page in pages for item in page.formulas] + family_entries(families)
    files[INDEX_SCRIPT] = search_index(entries)
    return files
