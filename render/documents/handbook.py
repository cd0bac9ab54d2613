"""The handbook: the reference a person prints (issue 31 item 5).

Per topic, each formula's statement, its composed form (its parts named, each with the section that states it),
its conditions, sources and a worked example; then each family's own forms at a published checkpoint
(derivations/data/family_forms.py), the symbols and the references. The derivations, step by step, stay in the second
volume (reference.tex, reference.pdf), so the handbook stays a book of statements a person reads and prints.
"""

from __future__ import annotations

from dataclasses import dataclass

from llm_formulas.derivations.data.family_forms import EXAMPLE, families_with_forms, family_forms
from llm_formulas.formulas.vocabulary.catalogue import get
from llm_formulas.render.documents.reference import Reference, anchor
from llm_formulas.render.documents.templating import render
from llm_formulas.render.printers.human import human

__all__ = ["FamilyView", "handbook_tex"]


@dataclass(frozen=True)
class FamilyFormView:
    formula_id: str
    anchor: str
    latex: str
    value: str  # at the checkpoint, in a human unit
    per_token: bool


@dataclass(frozen=True)
class FamilyView:
    title: str
    checkpoint: str
    forms: tuple[FamilyFormView, ...]


def _unit(formula_id: str) -> str:
    unit = str(get(formula_id).unit)
    return "1" if unit == "parameter" else unit


def family_views() -> tuple[FamilyView, ...]:
    """Each family with forms: its checkpoint and each form, as the handbook prints them."""
    views = []
    for family in families_with_forms():
        forms = family_forms(family)
        views.append(FamilyView(
            forms[0].family_title, forms[0].checkpoint_title,
            tuple(FamilyFormView(form.formula_id, anchor(form.formula_id), form.latex,
                                 human(form.value, _unit(form.formula_id)), form.per_token) for form in forms),
        ))
    return tuple(views)


def handbook_tex(reference: Reference) -> str:
    """The handbook's LaTeX from the reference's page model."""
    example = ", ".join(f"{name} = {value}" for name, value in EXAMPLE.items())
    return render("handbook.tex", ref=reference, families=family_views(),
                  family_example=f"one sequence where a form needs one ({example})")
