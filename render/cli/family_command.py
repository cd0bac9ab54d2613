"""``show ID --family FAMILY``: a formula at one family's switches (derivations/data/family_forms.py), its checkpoint's value.

An unknown family, or a formula without a family form, is bad input: one line naming the choices, exit 2.
"""

from __future__ import annotations

from llm_formulas.render.cli.result import Result, number_json


def show_family(formula_id: str, family: str, as_latex: bool) -> Result:
    import sympy as sp

    from llm_formulas.derivations.data.family_forms import family_form

    form = family_form(family, formula_id)
    inputs = ", ".join(f"{name} = {value}" for name, value in form.inputs.items())
    doc = {
        "id": form.formula_id, "family": form.family, "title": form.family_title, "latex": form.latex,
        "expression": sp.sstr(form.form), "switches": form.switches, "relations": list(form.relations), "parts": list(form.parts),
        "checkpoint": form.checkpoint, "checkpoint_title": form.checkpoint_title, "inputs": form.inputs,
        "value": number_json(form.value), "per_token": form.per_token, "derivation": form.derivation_id,
    }
    body = form.latex if as_latex else sp.pretty(form.form, use_unicode=True)
    per = " per token (over the b·s tokens it counts)" if form.per_token else ""
    lines = [f"{form.formula_id}{per} for {form.family_title} ({form.family})", "", body, "",
             "at the switches " + ", ".join(f"{name} = {value}" for name, value in form.switches.items() if value != 0)
             + " (the others 0)"]
    if form.relations:
        lines.append("with " + ", ".join(form.relations))
    if form.parts:
        lines.append("parts named: " + ", ".join(form.parts))
    shown = f"{form.value:,}" if isinstance(form.value, int) else f"{float(form.value):,.1f} (exactly {form.value})"
    lines.append(f"{form.checkpoint_title} ({form.checkpoint}){' at ' + inputs if inputs else ''}: {shown}")
    lines.append(f"proved in check: {form.derivation_id}")
    return Result(doc, "\n".join(lines))
