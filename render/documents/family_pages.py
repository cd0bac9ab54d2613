"""The reference site's page per model family: the general formulas at the family's switches, each proved and evaluated.

From ``derivations.data.family_forms``: for each family with forms (GPT-2/GPT-3, Llama, Mixtral, Qwen3 dense and MoE,
Gemma 3, DeepSeek-V3, gpt-oss, Qwen3-Next, Nemotron-H), the switches it fixes, the relations of sizes its forms state,
and per formula (parameters, training FLOPs and KV cache per token, a decoding step's cache and weight reads) the
closed form, a link to the general formula it specializes, the derivation ``check`` proves it in (its id is the
form's anchor: ``family-llama.html#families.llama.params.decoder.total``) and its value at a published checkpoint.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

import sympy as sp

from llm_formulas.derivations.reports.catalogue import all_derivations
from llm_formulas.derivations.data.family_forms import FamilyForm, families_with_forms, family_forms
from llm_formulas.formulas.vocabulary.catalogue import get
from llm_formulas.formulas.vocabulary.parts import plain_symbol
from llm_formulas.render.documents.equation_mathml import display_mathml
from llm_formulas.render.documents.reference import exact_value, human_value, short_title
from llm_formulas.render.documents.site_links import FormulaLink, lhs_latex, link
from llm_formulas.render.documents.site_search import models_named, symbol_names, terms

PER_TOKEN = r" / (b\,s)"  # the left side of a form the catalogue counts for b sequences of s tokens, shown per token


def page_name(family: str) -> str:
    return f"family-{family}.html"


def page_names() -> tuple[str, ...]:
    """The family pages, known before anything is rendered."""
    return tuple(page_name(family) for family in families_with_forms())


@dataclass(frozen=True)
class FormView:
    id: str  # the derivation that proves it, its anchor
    general: FormulaLink
    per_token: bool
    display: str  # presentation MathML of ``symbol = form``
    parts: tuple[FormulaLink, ...]
    value: str  # at the checkpoint, in the unit a person reads
    exact: str
    inputs: str  # the example's inputs beside the checkpoint's ("s = 2048, q = 2")
    proved: bool


@dataclass(frozen=True)
class FamilyPage:
    family: str  # the model_type
    title: str
    checkpoint: str
    checkpoint_title: str
    switches: str  # the switches the family sets to something other than 0
    relations: tuple[str, ...]
    forms: tuple[FormView, ...]

    @property
    def page(self) -> str:
        return page_name(self.family)


def form_view(form: FamilyForm, proved: bool) -> FormView:
    general = get(form.formula_id)
    lhs = lhs_latex(general) + (PER_TOKEN if form.per_token else "")
    unit = str(general.unit) + ("/token" if form.per_token else "")
    value = sp.Rational(form.value.numerator, form.value.denominator) if isinstance(form.value, Fraction) else sp.Integer(form.value)
    return FormView(form.derivation_id, link(general), form.per_token, display_mathml(lhs, form.composed, f"{lhs} = {form.latex}"),
                    tuple(link(get(part)) for part in form.parts), human_value(value, unit), exact_value(value, unit),
                    ", ".join(f"{name} = {number}" for name, number in form.inputs.items()), proved)


def family_pages(unproved: tuple[str, ...]) -> tuple[FamilyPage, ...]:
    """A page per family with forms; a form is proved when its derivation is checked and no step of it failed."""
    checked = {derivation.id for derivation in all_derivations()}
    pages = []
    for family in families_with_forms():
        forms = family_forms(family)
        first = forms[0]
        switches = ", ".join(f"{name} = {value}" for name, value in first.switches.items() if value != 0)
        views = tuple(form_view(form, form.derivation_id in checked and form.derivation_id not in unproved) for form in forms)
        pages.append(FamilyPage(family, first.family_title, first.checkpoint, first.checkpoint_title, switches,
                                first.relations, views))
    return tuple(pages)


def family_entries(pages: tuple[FamilyPage, ...]) -> list[dict]:
    """The family forms in the search index: found by the family's and the checkpoint's names, and by their terms."""
    entries = []
    for page in pages:
        for form, view in zip(family_forms(page.family), page.forms):
            general = get(form.formula_id)
            own = plain_symbol(lhs_latex(general))
            named = f"{page.title} {page.checkpoint_title}"
            entries.append({
                "id": view.id, "href": f"{page.page}#{view.id}", "title": f"{short_title(general.meaning)}: {page.title}",
                "meaning": f"{general.meaning}, for {page.title}", "symbol": own,
                "symbols": sorted(symbol_names(form.form.free_symbols) | {own}), "text": sp.sstr(form.form),
                "terms": terms(form.form), "about": f"{page.family} {named}", "models": models_named(named),
            })
    return entries
