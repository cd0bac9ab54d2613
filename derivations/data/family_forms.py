"""Each family's own form: the general formulas at a family's structural switches, simplified, proved, evaluated.

The general decoder formulas (formulas/topics/architecture.py, formulas/topics/serving.py) carry a switch for every variant: σ for
biases and norms, l_moe, l_win and the recurrent layer counts. A family fixes them. Its values are read, never
typed, from a published checkpoint's config.json (a preset of formulas/data/models, through formulas/data/hf_config.py):

- a 0/1 switch takes the checkpoint's value (Llama: σ_gated = 1, σ_β = 0, σ_tied = 0, no biases);
- a count switch takes 0 where the checkpoint has none, l where every layer has it (Mixtral: l_moe = l), and its
  classic value where it has that (n_norm = 2); a count the family reads from its config (DeepSeek-V3's 58 of 61
  MoE layers, Gemma-3's sliding layers) stays a symbol;
- the relations the family's form states (Llama: a·d_head = h, the width its attention splits into heads) are
  checked at the checkpoint before they are used.

The training FLOPs and the KV cache, which the catalogue counts for b sequences of s tokens, are shown per token
(over b·s: Llama's 6Vh + 6l(3h·d_ff + 2h·g·d_head + 2h² + 2hs), its cache 2l·g·d_head·q); the decoding step's
reads as they are. The result is expanded and grouped by layer counts (a layer kind that replaces part of a layer,
such as a recurrent mixer in place of attention, is written (l − l_X)·part + l_X·its own; a hybrid's mixer is named by
its catalogue formula, Ψ_GDN), and ``check`` proves it equal to the general form at those switches (one derivation
per family and formula, ``families.<model_type>.<formula id>``). Each form is evaluated at its checkpoint: the
parameter count is transformers' own (tests/test_family_forms.py compares).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from fractions import Fraction
from functools import cache
from typing import Callable
from pathlib import Path

import sympy as sp

from llm_formulas.derivations.vocabulary.engine import Derivation
from llm_formulas.derivations.data.families import fixed_switches
from llm_formulas.formulas.topics.architecture import TRANSFORMERS
from llm_formulas.formulas.data.blocks import short
from llm_formulas.formulas.vocabulary.catalogue import Source, get
from llm_formulas.formulas.vocabulary.errors import InputError
from llm_formulas.formulas.data.families import FAMILIES
from llm_formulas.formulas.data.hf_config import Architecture
from llm_formulas.formulas.vocabulary.latex import latex
from llm_formulas.formulas.data.presets import Preset, preset
from llm_formulas.formulas.vocabulary.symbols import a, constant_values, d_emb, d_ff, d_head, g, h, l, l_gdn, l_lru, l_mamba, l_ssd, quantity

__all__ = ["FORMULAS", "FamilyForm", "UnknownFamily", "checkpoint", "families_with_forms", "family_form", "family_forms"]

FORMULAS: tuple[str, ...] = (
    "params.decoder.total",  # parameters
    "flops.decoder.training",  # training FLOPs of one step of b sequences of s tokens: shown per token, ÷ b·s
    "memory.kv_cache.decoder",  # the KV cache of b sequences of s tokens: shown per token, ÷ b·s
    "serving.decode.kv_read",  # cache bytes one decoding step reads
    "serving.decode.weights_read",  # weight bytes one decoding step reads
)
PER_TOKEN = frozenset({"flops.decoder.training", "memory.kv_cache.decoder"})  # formulas of b·s tokens, shown per token

# the relations a family's form may state, each checked at its checkpoint before it is used (applied in this order)
RELATIONS: dict[str, tuple[sp.Symbol, sp.Expr]] = {
    "d_emb = h": (d_emb, h),  # the embedding is as wide as the model (all but OPT-350m)
    "d_ff = 4h": (d_ff, 4 * h),  # GPT-2's n_inner left out
    "g = a": (g, a),  # multi-head attention: every query head has its own key/value head
    "a·d_head = h": (a, h / d_head),  # the heads split the width (head_dim left to its default h/a)
}

# one decoding step or one training step at a stated example: one sequence of 2,048 tokens (GPT-3's whole window),
# 16-bit values; E_hit is the checkpoint's k (one token reaches k experts)
EXAMPLE = {"b": 1, "s": 2048, "s_ctx": 2048, "q": 2, "q_kv": 2, "q_w": 2}
SCALES = frozenset(quantity(name).symbol for name in EXAMPLE)  # factors a layer's terms share, taken out of the sum


@dataclass(frozen=True)
class _Declared:
    model_type: str
    checkpoint: str  # a published config.json's shape: a preset of formulas/data/models, or one of family_checkpoints/
    relations: tuple[str, ...] = ("d_emb = h",)


DECLARED = (
    _Declared("gpt2", "gpt3-175b", ("d_emb = h", "d_ff = 4h", "g = a", "a·d_head = h")),
    _Declared("llama", "llama2-7b", ("d_emb = h", "a·d_head = h")),
    _Declared("mixtral", "mixtral-8x7b", ("d_emb = h", "a·d_head = h")),
    _Declared("qwen3", "qwen3-32b"),
    _Declared("qwen3_moe", "qwen3-235b-a22b"),
    _Declared("gemma3_text", "gemma3-27b"),
    _Declared("deepseek_v3", "deepseek-v3"),
    _Declared("gpt_oss", "gpt-oss-120b"),
    _Declared("qwen3_next", "qwen3-next-80b-a3b"),
    _Declared("nemotron_h", "nemotron-h-56b"),
)
_BY_TYPE = {declared.model_type: declared for declared in DECLARED}
# published config.json shapes of the families that have no preset of formulas/data/models (the same format)
CHECKPOINTS_DIR = Path(__file__).with_name("family_checkpoints")


def checkpoint(name: str) -> Preset:
    """A form's checkpoint: a preset, or one of family_checkpoints/ (a published config.json with its source)."""
    own = CHECKPOINTS_DIR / f"{name}.json"
    if not own.exists():
        return preset(name)
    entry = json.loads(own.read_text(encoding="utf-8"))
    return Preset(entry["name"], entry["title"], entry["source"], entry["config"])


class UnknownFamily(InputError):
    """A family without forms, or a formula without a family form: the message names the choices."""


@dataclass(frozen=True)
class FamilyForm:
    """One formula at one family's switches: its closed form, the form's LaTeX, and its value at a checkpoint."""

    family: str  # the model_type (formulas/data/families.py)
    family_title: str
    formula_id: str
    form: sp.Expr  # the closed form, unit marks as 1 (what computes)
    composed: sp.Expr  # the same with a hybrid's recurrent mixer named by its catalogue part (what prints)
    latex: str
    switches: dict[str, int | str]  # switch or size → the value the family fixes (a number, or l)
    relations: tuple[str, ...]  # the relations of sizes the form states, each true at the checkpoint
    checkpoint: str  # the preset (formulas/data/models/<name>.json, or family_checkpoints/) it is evaluated at
    checkpoint_title: str
    inputs: dict[str, int]  # the example's inputs beside the checkpoint's (b, s, bytes per value)
    value: int | Fraction  # the form at the checkpoint and those inputs, exact
    per_token: bool  # the formula over its b·s tokens (training FLOPs and the KV cache per token)
    derivation_id: str  # the derivation ``check`` proves it in
    parts: tuple[str, ...] = ()  # catalogue formulas the LaTeX names instead of writing them out (a recurrent mixer)


def families_with_forms() -> tuple[str, ...]:
    """The model_types that have their own forms, in the order the reference lists them."""
    return tuple(declared.model_type for declared in DECLARED)


def family_forms(family: str) -> list[FamilyForm]:
    """Every form of ``family`` (a model_type such as ``llama``), one per formula of ``FORMULAS``."""
    return [family_form(family, formula_id) for formula_id in FORMULAS]


def family_form(family: str, formula_id: str) -> FamilyForm:
    """The form of ``formula_id`` for ``family``; UnknownFamily names the choices otherwise."""
    if family not in _BY_TYPE:
        raise UnknownFamily(f"no family form for {short(family)}; families with forms: {', '.join(families_with_forms())}")
    if formula_id not in FORMULAS:
        raise UnknownFamily(f"no family form of {short(formula_id)}; formulas with family forms: {', '.join(FORMULAS)}")
    return _built(family, formula_id)


@cache
def _built(family: str, formula_id: str) -> FamilyForm:
    declared = _BY_TYPE[family]
    shape = checkpoint(declared.checkpoint)
    architecture = shape.architecture
    switches = fixed_values(architecture)
    form = specialized(general(formula_id).xreplace(constant_values()), switches, relations(declared, architecture))
    rest, named = named_parts(form, switches, dimensioned=False)
    composed = rest + sp.Add(*(factor * get(part).part for part, factor in named))
    inputs = {name: value for name, value in {**EXAMPLE, "E_hit": architecture.values[quantity("k").symbol]}.items()
              if quantity(name).symbol in form.free_symbols}
    return FamilyForm(
        family, FAMILIES[family].title, formula_id, form, composed, latex(composed),
        {symbol.name: (int(value) if value.is_Integer else str(value)) for symbol, value in switches.items()},
        declared.relations, declared.checkpoint, shape.title, inputs, exact_value(architecture, form, inputs),
        formula_id in PER_TOKEN, f"families.{family}.{formula_id}", tuple(part for part, _ in named),
    )


def general(formula_id: str) -> sp.Expr:
    """The catalogue's general formula as a family form states it: per token where it counts b·s tokens."""
    expr = get(formula_id).dimensioned
    return expr / (quantity("b").symbol * quantity("s").symbol) if formula_id in PER_TOKEN else expr


def exact_value(architecture: Architecture, form: sp.Expr, inputs: dict[str, int]) -> int | Fraction:
    """The form at the checkpoint and the example's inputs: a whole number, or an exact fraction (a windowed cache's
    min(s, W − 1)/s per token)."""
    given = {**architecture.values, **{quantity(name).symbol: value for name, value in inputs.items()}}
    value = form.xreplace(given)
    if not value.is_Rational:
        raise ValueError(f"{architecture.model_type}: the form has no value at its checkpoint ({value})")
    return int(value) if value.is_Integer else Fraction(int(value.p), int(value.q))


# the per-layer catalogue formulas of the recurrent mixers, which a hybrid's form names rather than writes out
MIXERS = {"mamba": l_mamba, "mamba2": l_ssd, "rglru": l_lru, "gdn": l_gdn}  # each mixer and its layer count
MIXER_PARTS = {f"{kind}.{mixer}": count for mixer, count in MIXERS.items()
               for kind in ("params.recurrent", "flops.recurrent", "memory.state")}


def named_parts(form: sp.Expr, switches: dict[sp.Symbol, sp.Expr], *, dimensioned: bool = True
                ) -> tuple[sp.Expr, list[tuple[str, sp.Expr]]]:
    """``form`` as rest + Σ factor·part: each term that is a layer count times a multiple of a recurrent mixer's
    catalogue formula (at the same switches; the multiple a number and the example's scales, as 3 for a training
    step's forward and backward) is named by that formula."""
    counts = layer_counts(form)  # only the mixers the form has are read (a derivation reads what it uses)
    parts = {part: (get(part).dimensioned if dimensioned else get(part).expr).xreplace(switches)
             for part, count in MIXER_PARTS.items() if count in counts}
    rest, named = [], []
    for term in sp.Add.make_args(form):
        found = next(((part, ratio * count) for count in layer_counts(term) for part, expr in parts.items()
                      # a multiple of the part holds its symbols and no other (the count and the scales aside)
                      if term.free_symbols - SCALES - {count} == expr.free_symbols - SCALES
                      and (ratio := sp.cancel(term / (count * expr))).free_symbols <= SCALES), None)
        if found:
            named.append(found)
        else:
            rest.append(term)
    return sp.Add(*rest), named


def fixed_values(architecture: Architecture) -> dict[sp.Symbol, sp.Expr]:
    """The switches the checkpoint fixes: every 0/1 switch; a count switch that is 0, all l layers, its classic value,
    or one the family's declaration fixes (Nemotron-H's one norm per layer). A switch is a symbol that may be 0
    (formulas/vocabulary/symbols.py ``switch``); sizes are positive."""
    layers = architecture.values[l]
    declared_fixed = fixed_switches(architecture.family) if architecture.family is not None else {}
    found: dict[sp.Symbol, sp.Expr] = {}
    for symbol, value in architecture.values.items():
        if symbol.is_positive:
            continue
        declared = quantity(symbol)
        if declared.maximum == 1 or value == 0 or value == declared.default or symbol.name in declared_fixed:
            found[symbol] = sp.Integer(value)
        elif symbol.name.startswith("l_") and value == layers:
            found[symbol] = l
    return found


def relations(declared: _Declared, architecture: Architecture) -> list[tuple[sp.Symbol, sp.Expr]]:
    """The form's relations of sizes, each checked at the checkpoint (a ValueError names one that does not hold)."""
    values = architecture.values
    used = []
    for name in declared.relations:
        symbol, value = RELATIONS[name]
        if value.xreplace(values) != values[symbol]:
            raise ValueError(f"{declared.model_type}: {name} does not hold at {declared.checkpoint}")
        used.append((symbol, value))
    return used


def at_switches(expr: sp.Expr, switches: dict[sp.Symbol, sp.Expr], sizes: list[tuple[sp.Symbol, sp.Expr]]) -> sp.Expr:
    """``expr`` at the switches, the relations of sizes applied in order (g = a before a·d_head = h)."""
    expr = expr.xreplace(switches)
    for symbol, value in sizes:
        expr = expr.xreplace({symbol: value})
    return expr


def specialized(expr: sp.Expr, switches: dict[sp.Symbol, sp.Expr], sizes: list[tuple[sp.Symbol, sp.Expr]]) -> sp.Expr:
    """``expr`` at the switches and relations, expanded and grouped by layer counts: the family's own form."""
    return grouped(sp.expand(at_switches(expr, switches, sizes)))


def grouped(expanded: sp.Expr) -> sp.Expr:
    """An expression linear in the layer counts, grouped by them: E₀ + l·A + Σ l_X·B_X. Where B_X removes terms of A
    (a layer kind that replaces attention or the MLP: B_X = own_X − R_X with R_X among A's terms), it is written
    (l − Σ l_X)·R + l·(A − R) + Σ l_X·own_X, with the kinds that remove the same terms together."""
    counts = sorted(layer_counts(expanded), key=lambda symbol: symbol.name)
    coefficients = sp.collect(expanded, [l, *counts], evaluate=False)
    per_layer = set(sp.Add.make_args(coefficients.get(l, sp.Integer(0))))
    removed: dict[frozenset, list[sp.Symbol]] = {}
    own: dict[sp.Symbol, sp.Expr] = {}
    for count in counts:
        terms = sp.Add.make_args(coefficients.get(count, sp.Integer(0)))
        taken = frozenset(-term for term in terms if -term in per_layer)
        removed.setdefault(taken, []).append(count)
        own[count] = sp.Add(*(term for term in terms if -term not in taken))
    overlapping = [group for group in removed if group and any(group & other for other in removed if other is not group)]
    if overlapping:  # two kinds take part of the same terms: left as they are
        return sp.Add(*(symbol * coefficient for symbol, coefficient in coefficients.items()))
    replaced = set().union(*removed)
    result = coefficients.get(sp.Integer(1), sp.Integer(0)) + l * scaled(sp.Add(*(per_layer - replaced)))
    for taken, kinds in removed.items():
        if taken:
            result += (l - sp.Add(*kinds)) * scaled(sp.Add(*taken))
    return result + sp.Add(*(count * scaled(own[count]) for count in counts))


def layer_counts(expr: sp.Expr) -> set[sp.Symbol]:
    """The layer-count switches in ``expr`` (l_moe, l_win, l_GDN, ...): symbols named l_… that may be 0."""
    return {symbol for symbol in expr.free_symbols if symbol.name.startswith("l_") and not symbol.is_positive}


def scaled(coefficient: sp.Expr) -> sp.Expr:
    """A layer's coefficient with its whole-number factor and the example's scales (b, s, bytes per value) taken out
    of the sum: 12bsh + 18bsd_ff is 6bs(2h + 3d_ff)."""
    factored = sp.factor_terms(coefficient)
    outside = [factor for factor in sp.Mul.make_args(factored) if factor.is_Number or factor in SCALES]
    inside = sp.expand(sp.Mul(*(factor for factor in sp.Mul.make_args(factored) if not (factor.is_Number or factor in SCALES))))
    # a number alone before a sum would be multiplied into it (6(3h + 2g) → 18h + 12g): kept apart unevaluated
    return sp.Mul(*outside, inside, evaluate=not (len(outside) == 1 and outside[0].is_Number and inside.is_Add))


def proof(family: str, formula_id: str) -> Callable[[], Derivation]:
    """The derivation that proves one family form: the general formula at the family's switches (step 1) equals the
    family's own form (step 2), and, for a hybrid, that form with its mixer named by the catalogue part (the last)."""

    def make() -> Derivation:
        form = family_form(family, formula_id)
        declared = _BY_TYPE[family]
        architecture = checkpoint(declared.checkpoint).architecture
        switches, sizes = fixed_values(architecture), relations(declared, architecture)
        d = Derivation(form.derivation_id, f"{form.family_title}: {formula_id} at its switches",
                       (TRANSFORMERS, Source("transformers", f"the {family} config of {form.checkpoint_title}")))
        fixed = ", ".join(f"{name} = {value}" for name, value in form.switches.items() if value != 0)
        per = " per token (over b·s)" if form.per_token else ""
        d.defines(f"{formula_id}|{family}", at_switches(general(formula_id), switches, sizes),
                  f"{formula_id}{per} at the switches {family} fixes ({fixed}, the others 0)"
                  + (f" and its relations {', '.join(form.relations)}" if form.relations else ""))
        own = d.equals(f"{formula_id}[{family}]", specialized(general(formula_id), switches, sizes),
                       f"{form.family_title}'s own form: expanded, grouped by layer counts", aside=True)
        if form.parts:
            rest, named = named_parts(own, switches)
            for part, _ in named:
                d.defines(get(part).symbol_latex, get(part).dimensioned.xreplace(switches), f"{part}, one mixer, at the same switches")
            by_parts = rest + sp.Add(*(sp.Mul(factor, d.step(get(part).symbol_latex).expr, evaluate=False) for part, factor in named))
            d.equals(f"{formula_id}[{family}] by parts", by_parts, "the recurrent layers' terms named by their catalogue formulas",
                     of=f"{formula_id}|{family}", aside=True)
        return d

    make.__name__ = f"family_form_{family}_{formula_id.replace('.', '_')}"
    return make


DERIVATIONS = tuple(proof(declared.model_type, formula_id) for declared in DECLARED for formula_id in FORMULAS)
