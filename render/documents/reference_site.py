"""The reference as a site: ``reference/index.html`` by topic, a page per topic, the sources, the symbols, and a search.

Built from the page model of ``render.documents.reference`` (``build_reference()``). Every formula sits at an anchor
that is its id (``params.html#params.decoder.total``) and shows its statement, its composed form (presentation
MathML, which Chromium lays out natively: no script, no network), its parts linked to their anchors on whichever
page, its conditions, its derivation steps, its sources (authors, title, year), the formulas that name it as a
part ("used by") and the lessons that name it. ``search-index.js`` holds, per formula, its id, meaning, symbols, plain-text form, the terms of its
expansion, what its notes and derivation say and the models these name; ``search.js`` searches it in the page.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import sympy as sp

from llm_formulas.derivations.proof import valued
from llm_formulas.formulas.catalogue import Formula, all_formulas, get
from llm_formulas.formulas.latex import abbreviated, formula_latex
from llm_formulas.formulas.parts import plain_symbol
from llm_formulas.formulas.symbols import quantity
from llm_formulas.render.documents.reference import FormulaView, Reference, TopicView, short_title, topic_of
from llm_formulas.render.documents.templating import TEMPLATES, render
from llm_formulas.render.documents.topic_questions import TOPIC_QUESTIONS
from llm_formulas.render.printers import mathml as mm

FOLDER = "reference"
STATIC = ("site.css", "search.js")  # copied from the templates as they are
INDEX_SCRIPT = "search-index.js"
PAGES = ("index.html", "sources.html", "symbols.html")
MOST_TERMS = 64  # an expansion of more terms is left out of the index's terms (its id, meaning and symbols remain)


def page_of(formula_id: str) -> str:
    """The page a formula sits on: its topic's."""
    return f"{topic_of(formula_id)}.html"


def href(formula_id: str) -> str:
    """A link to a formula from any page of the site: its page and its id as the anchor."""
    return f"{page_of(formula_id)}#{formula_id}"


def site_files() -> tuple[str, ...]:
    """Every file of the site, relative to ``reference/``, known before anything is rendered."""
    topics = dict.fromkeys(topic_of(f.id) for f in all_formulas())
    return PAGES + tuple(f"{topic}.html" for topic in topics) + STATIC + (INDEX_SCRIPT,)


@dataclass(frozen=True)
class FormulaLink:
    """A formula named from another one: its id, its symbol as MathML, its short title, and where it is."""

    id: str
    symbol: str
    title: str
    href: str


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


def _lhs(formula: Formula) -> str:
    return formula.symbol_latex or r"\mathrm{" + formula.id + "}"


def link(formula: Formula) -> FormulaLink:
    return FormulaLink(formula.id, mm.fragment_mathml(_lhs(formula)), short_title(formula.meaning), href(formula.id))


LINE = 64  # characters of an equation's line: a longer sum is broken before a + onto the next line


def _width(mathml: str) -> int:
    """About how many characters wide a piece of MathML prints: its text, an entity one character."""
    return len(re.sub(r"&[^;]+;", "x", re.sub(r"<[^>]+>", "", mathml)))


def _chunks(expr: sp.Expr) -> list[str]:
    """An expression as MathML pieces a line may break between: a sum's terms, each after the first with its sign;
    a product too wide for a line has its widest sum factor opened, ``2bs·(`` its terms ``)``."""
    if isinstance(expr, sp.Add):
        chunks = []
        for position, term in enumerate(expr.as_ordered_terms()):
            negative = term.could_extract_minus_sign()
            inner = _chunks(-term if negative else term)
            sign = "−" if negative else ("+" if position else "")
            chunks += [(mm.relation(sign) if sign else "") + inner[0], *inner[1:]]
        return chunks
    whole = mm.expr_mathml(expr)
    sums = [factor for factor in sp.Mul.make_args(expr) if isinstance(factor, sp.Add)]
    if _width(whole) <= LINE or not sums:
        return [whole]
    widest = max(sums, key=lambda factor: _width(mm.expr_mathml(factor)))
    rest = expr / widest
    inner = _chunks(widest)
    opened = (mm.expr_mathml(rest) + mm.relation("·") if rest != 1 else "") + mm.relation("(")
    if len(inner) == 1:
        return [opened + inner[0] + mm.relation(")")]
    return [opened + inner[0], *inner[1:-1], inner[-1] + mm.relation(")")]


def composed_mathml(formula: Formula) -> str:
    """``symbol = composed form`` as a display ``<math>``: its parts by their symbols, the derived counts by name;
    wider than LINE, it is set as a table of lines broken between the terms of its sums (``_chunks``)."""
    lhs, tex = mm.fragment_mathml(_lhs(formula)), formula_latex(formula)
    whole = mm.expr_mathml(formula.composed)
    if _width(whole) <= LINE:
        return mm.math_block(lhs, mm.relation("="), whole, tex=tex)
    lines: list[list[str]] = [[]]
    for chunk in _chunks(abbreviated(valued(formula.composed))):
        if lines[-1] and _width("".join(lines[-1])) + _width(chunk) > LINE:
            lines.append([])
        lines[-1].append(chunk)
    if len(lines) == 1:
        return mm.math_block(lhs, mm.relation("="), whole, tex=tex)
    rows = "".join(f'<mtr><mtd class="lhs">{lhs + mm.relation("=") if number == 0 else ""}</mtd><mtd class="rhs">'
                   f'<mrow>{"".join(line)}</mrow></mtd></mtr>' for number, line in enumerate(lines))
    return mm.math_block(f"<mtable>{rows}</mtable>", tex=tex)


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


def terms(formula: Formula) -> list[str]:
    """The terms of a formula's expansion as ``coefficient:symbol names`` (``12*h**2*l`` is ``12:h l``), for a search
    of a monomial by its factors in any order (``12lh``); none for an expansion of more than MOST_TERMS terms."""
    expr = valued(formula.expr)
    if sp.count_ops(expr) > MOST_TERMS:
        return []
    added = sp.Add.make_args(sp.expand(expr))
    if len(added) > MOST_TERMS:
        return []
    found = []
    for term in added:
        coefficient, rest = term.as_coeff_Mul()
        names = sorted(s.name for s in rest.free_symbols)
        if names and coefficient.is_Rational:
            found.append(f"{coefficient}:{' '.join(names)}")
    return found


@cache
def model_names() -> tuple[str, ...]:
    """The names the presets' models go by (``Mixtral``, ``Llama``, ``DeepSeek``): each title's leading word."""
    from llm_formulas.formulas.presets import names, preset

    found: dict[str, str] = {}
    for name in names():
        word = re.match(r"[A-Za-z]+", preset(name).title)
        if word and len(word[0]) > 2:
            found.setdefault(word[0].lower(), word[0])
    return tuple(found.values())


def models_named(text: str) -> list[str]:
    """The model names ``text`` mentions, as whole words."""
    return [name for name in model_names() if re.search(rf"\b{re.escape(name)}", text, flags=re.IGNORECASE)]


def index_entry(item: SiteFormula) -> dict:
    """One formula in the search index: its id, title and meaning; its own symbol and its inputs' by name and as
    printed; its composed form as text; the terms of its expansion; what its notes and derivation say; the models
    all of these name."""
    formula, view = get(item.view.id), item.view
    own = plain_symbol(_lhs(formula))
    symbols = sorted({name for s in formula.inputs for name in (s.name, plain_symbol(quantity(s).latex))} | {own})
    about = " ".join([formula.notes, view.derivation_title, *(step.why for step in view.steps)])
    examples = " ".join(text for example in view.examples for text in (example.title, *(i.source for i in example.inputs)))
    return {"id": formula.id, "href": href(formula.id), "title": view.title, "meaning": formula.meaning, "symbol": own,
            "symbols": symbols, "text": sp.sstr(abbreviated(valued(formula.composed))), "terms": terms(formula),
            "about": about, "models": models_named(" ".join([formula.meaning, about, examples]))}


def search_index(pages: tuple[SitePage, ...]) -> str:
    """The search's index as a script that sets ``window.SEARCH_INDEX`` (a page opened from disk may not fetch JSON)."""
    entries = [index_entry(item) for page in pages for item in page.formulas]
    return "window.SEARCH_INDEX = " + json.dumps(entries, ensure_ascii=False, separators=(",", ":")) + ";\n"


@cache
def _static(name: str) -> str:
    return (TEMPLATES / name).read_text(encoding="utf-8")


def site(reference: Reference) -> dict[str, str]:
    """Every file of the site by its path relative to ``reference/``."""
    pages = site_pages(reference)
    topics = [(page.topic.name, page.topic.title) for page in pages]
    files = {"index.html": render("site_index.html", pages=pages, ref=reference, topics=topics),
             "sources.html": render("site_sources.html", ref=reference, topics=topics),
             "symbols.html": render("site_symbols.html", ref=reference, topics=topics)}
    for page in pages:
        files[f"{page.topic.name}.html"] = render("site_topic.html", page=page, ref=reference, topics=topics)
    files |= {name: _static(name) for name in STATIC}
    files[INDEX_SCRIPT] = search_index(pages)
    return files
