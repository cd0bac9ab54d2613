"""Formulas a person can read (issue 31 item 1 and 3): a formula built from others names them as parts, its default
rendering stays within one look, and the expansion it computes is proved equal to the composed form; so does every
derivation step, a long one shown in named pieces that give back exactly what it proves.

Expected values are published, not read from the code: GPT-2 small has 124,439,808 parameters (Radford et al.
2019, the 124M model as Hugging Face counts it).
"""

from __future__ import annotations

import pytest
import sympy as sp

import llm_formulas as lf
from llm_formulas.derivations.reports.catalogue import all_derivations, composition_outcomes, derivation_of
from llm_formulas.derivations.vocabulary.engine import Derivation
from llm_formulas.derivations.vocabulary.steps import StepName
from llm_formulas.derivations.vocabulary.latex import step_latex
from llm_formulas.formulas.vocabulary.catalogue import get
from llm_formulas.formulas.vocabulary.latex import READABLE_LATEX, formula_latex, latex
from llm_formulas.formulas.vocabulary.parts import Part, expand_parts
from llm_formulas.formulas.vocabulary.symbols import V, h, l, s, u_param
from helpers import run

GPT2_SMALL = 124_439_808
GPT2 = {"h": 768, "l": 12, "a": 12, "g": 12, "d_head": 64, "d_ff": 3072, "V": 50257, "n_pos": 1024, "d_emb": 768}


def test_every_formula_reads_in_one_look():
    too_long = {f.id: len(latex(f.composed)) for f in lf.search("") if len(latex(f.composed)) > READABLE_LATEX}
    assert not too_long, f"over {READABLE_LATEX} characters of LaTeX, name their parts: {too_long}"


def test_every_derivation_step_reads_in_one_look():
    # what the reference, the lessons and the slides print of each step (issue 31 item 3: steps over the budget cite
    # earlier steps, name catalogue parts or are shown in named pieces)
    too_long = [(d.id, index, step.label, len(step_latex(step, get))) for d in all_derivations()
                for index, step in enumerate(d.steps, start=1) if len(step_latex(step, get)) > READABLE_LATEX]
    assert not too_long, f"{len(too_long)} steps over {READABLE_LATEX} characters of LaTeX: {too_long[:10]}"


def _long_sum():
    """Σ_{i=1..30} (i·h^i·s + a^i): written by hand, 60 terms, far over a look's worth of LaTeX."""
    return sum((i * h**i * s + sp.Symbol("a") ** i for i in range(1, 31)), sp.Integer(0))


def test_a_long_step_is_shown_in_named_pieces_that_give_back_what_it_proves():
    dv = Derivation("pieces.test", "a long sum")
    dv.defines("X", _long_sum(), "sixty terms")
    regrouped = s * sum((i * h**i for i in range(1, 31)), sp.Integer(0)) + sum(sp.Symbol("a") ** i for i in range(1, 31))
    dv.equals("X", regrouped, "s taken out of the h terms", aside=True)
    pieces = [step for step in dv.steps if step.piece]
    whole, again = [step for step in dv.steps if not step.piece]
    assert pieces and all(step.claim == "defines" and len(step_latex(step, get)) <= READABLE_LATEX for step in pieces)
    assert whole.expr == _long_sum()  # what the step proves is what was written
    assert len(step_latex(whole, get)) <= READABLE_LATEX and len(step_latex(again, get)) <= READABLE_LATEX
    names = {StepName(step.label): step.expr for step in dv.steps if step.piece}
    assert sp.expand(whole.shown.xreplace(names) - _long_sum()) == 0  # the line with its pieces put back
    assert all(outcome.ok for outcome in dv.check())


def test_a_wrong_long_step_still_fails_in_pieces():
    dv = Derivation("pieces.wrong", "a long sum, miscopied")
    dv.defines("X", _long_sum(), "sixty terms")
    dv.equals("X", _long_sum() + h, "one term too many", aside=True)
    outcomes = dv.check()
    assert not outcomes[-1].ok and outcomes[-1].label == "X"


def test_the_decoder_count_names_its_parts_and_spells_them_out_on_request():
    total = lf.get("params.decoder.total")
    assert {"params.decoder.embeddings", "params.decoder.attention", "params.decoder.mlp", "params.decoder.head",
            "params.decoder.expert"} <= set(total.parts)
    shown = formula_latex(total)
    assert r"\Psi_{emb}" in shown and r"\Psi_{head}" in shown and r"l_{attn}" in shown
    assert "d_{ff}" not in shown  # the MLP's width lives in Ψ_mlp, not in the sum
    assert "d_{ff}" in formula_latex(total, expanded=True)
    assert total.expanded == total.expr and not total.expr.atoms(Part)


def test_a_composed_formula_computes_what_the_paper_counts():
    # GPT-2 small through the composed Ψ = Ψ_emb + l·(Ψ_attn + Ψ_mlp + Ψ_norm) + Ψ_final + Ψ_head (tied head)
    assert lf.evaluate("params.decoder.total", GPT2) == GPT2_SMALL


def test_every_composed_form_is_proved_equal_to_what_it_computes():
    outcomes = composition_outcomes()
    assert len(outcomes) > 80  # the formulas that name parts: a catalogue that stopped composing would show here
    assert all(outcome.ok for outcome in outcomes), [o.label for o in outcomes if not o.ok]
    proved = {o.label for o in outcomes if o.method != "identical"}
    # written in another arrangement than computed, each needs a real proof
    assert {"params.quantized.kept", "serving.time.e2e", "serving.decode.params_read"} <= proved


def test_a_composed_form_that_is_not_the_expression_fails_its_check():
    mine = lf.Catalogue("composition-test")
    total, head = lf.get("params.decoder.total"), lf.get("params.decoder.head")
    wrong = mine.formula("mine.without_head", total.dimensioned - head.dimensioned, "parameter", "the count less the head",
                         sources=[], composed=total.part)  # says Ψ, computes Ψ − Ψ_head
    [outcome] = composition_outcomes([wrong])
    assert not outcome.ok


def test_a_part_at_values_prints_where_it_is_taken_and_expands_there():
    logits = lf.get("flops.decoder.logits")
    at_one = logits.at(s=1)
    assert r"\big|_{s = 1}" in latex(at_one)
    assert expand_parts(2 * at_one) == 2 * logits.dimensioned.xreplace({s: 1})


def test_own_formulas_compose_built_in_parts():
    mine = lf.Catalogue("composition-own")
    layer = mine.formula("mine.layer", 12 * h**2 * u_param, "parameter", "a layer, 12h²", sources=[])
    model = mine.formula("mine.model", l * layer.part + V * h * u_param, "parameter", "l layers and the embedding",
                         sources=[])
    assert model.parts == ("mine.layer",)
    assert sp.expand(model.expr - (12 * l * h**2 + V * h)) == 0
    assert lf.evaluate(model, {"l": 12, "h": 768, "V": 50257}) == 12 * 12 * 768**2 + 50257 * 768


def test_show_names_the_parts_and_expands_on_request(capsys):
    code, out, err = run(capsys, "show", "params.decoder.total")
    assert code == 0, err
    assert "Ψ_emb" in out and "parts (" in out and "params.decoder.embeddings" in out
    code, expanded, err = run(capsys, "show", "params.decoder.total", "--expanded")
    assert code == 0, err
    assert "Ψ_emb" not in expanded.split("inputs:")[0] and "d_ff" in expanded.split("inputs:")[0]


def test_a_lesson_showing_one_long_step_shows_the_pieces_it_names(monkeypatch):
    from llm_formulas.render.documents import lesson

    steps = derivation_of("serving.decode.params_read").steps
    step = next(step for step in steps if step.label == "the active parameters")
    assert step.pieces  # 2,739 characters of LaTeX before it was shown in pieces
    pieces = [piece for piece in steps if piece.piece and piece.label.startswith("the active parameters [")]
    shown = []
    monkeypatch.setattr(lesson, "display", shown.append)
    lesson.derive("serving.decode.params_read", only=("the active parameters",))
    equations = [item.data for item in shown if type(item).__name__ == "Math"]
    assert len(equations) == 1 + len(pieces)  # the step and each piece it names (and theirs), defined before it
    assert all(r"\text{active parameters}" not in text for text in equations[:-1])
