"""Each family's own form (issue 31 item 2): the general formulas at a family's switches, short, proved, and equal to
transformers' count at a published checkpoint.

Oracles: the Llama and GPT forms as their papers write them (typed below by hand, not by the code under test);
transformers 5.24's parameter counts, committed in tests/checkpoint_counts.json for the published config.json files of
tests/checkpoints, or built here on the meta device where the preset has no committed twin.
"""

import json
from pathlib import Path

import pytest
import sympy as sp

from llm_formulas.derivations.data.family_forms import (
    DERIVATIONS,
    FORMULAS,
    FamilyForm,
    UnknownFamily,
    checkpoint,
    families_with_forms,
    family_form,
    family_forms,
)
from llm_formulas.formulas.vocabulary.catalogue import get
from llm_formulas.formulas.data.hf_config import read_config
from llm_formulas.formulas.vocabulary.latex import READABLE_LATEX
from llm_formulas.formulas.vocabulary.symbols import V, a, d_ff, d_head, g, h, l, n_pos, quantity

HERE = Path(__file__).parent
COUNTS = json.loads((HERE / "checkpoint_counts.json").read_text())["checkpoints"]
# each form's preset and the committed published config.json it is the shape of (None: built on the meta device here)
TWINS = {
    "gpt3-175b": None,
    "llama2-7b": None,
    "mixtral-8x7b": "mistralai--Mixtral-8x7B-v0.1",
    "qwen3-32b": "Qwen--Qwen3-32B",
    "qwen3-235b-a22b": "Qwen--Qwen3-235B-A22B",
    "gemma3-27b": None,
    "deepseek-v3": "deepseek-ai--DeepSeek-V3",
    "gpt-oss-120b": "openai--gpt-oss-120b",
    "qwen3-next-80b-a3b": "Qwen--Qwen3-Next-80B-A3B-Instruct",
    "nemotron-h-56b": "nvidia--Nemotron-H-56B-Base-8K",
}
LISTED = ["gpt2", "llama", "mixtral", "qwen3", "qwen3_moe", "gemma3_text", "deepseek_v3", "gpt_oss", "qwen3_next", "nemotron_h"]


def test_the_issue_s_families_have_forms_for_every_formula():
    assert set(LISTED) <= set(families_with_forms())
    for family in families_with_forms():
        forms = family_forms(family)
        assert [form.formula_id for form in forms] == list(FORMULAS)
        assert all(isinstance(form, FamilyForm) and form.family == family for form in forms)


def test_llama_parameters_are_the_papers_closed_form():
    # Touvron et al. 2023 (Llama 2) §2.2 / the Llama block: embedding and an untied head 2Vh; per layer W_Q and W_O
    # (h×h each, a·d_head = h), W_K and W_V (h × g·d_head each), a SwiGLU MLP of three h×d_ff matrices, two RMSNorms
    # of h; a final RMSNorm h.
    want = 2 * V * h + l * (2 * h**2 + 2 * h * g * d_head + 3 * h * d_ff + 2 * h) + h
    form = family_form("llama", "params.decoder.total")
    assert sp.expand(form.form - want) == 0
    assert form.form.free_symbols == {V, h, g, d_head, l, d_ff}  # no switch, no recurrent or MoE term
    assert "sigma" not in form.latex and "l_{moe}" not in form.latex and "GDN" not in form.latex


def test_gpt_parameters_are_the_foundation_s_form():
    # 000 §3.1: l(12h² + 13h) + Vh + (positions)·h + 2h, a tied head, LayerNorms with biases, d_ff = 4h
    want = l * (12 * h**2 + 13 * h) + V * h + n_pos * h + 2 * h
    assert sp.expand(family_form("gpt2", "params.decoder.total").form - want) == 0


def test_llama_kv_cache_is_2_l_g_d_head_bytes_per_token():
    # K and V, g heads of d_head, in each of l layers, q bytes per value, per token of context (Pope et al. 2022 §2)
    q = quantity("q").symbol
    form = family_form("llama", "memory.kv_cache.decoder")
    assert form.per_token and sp.expand(form.form - 2 * l * g * d_head * q) == 0
    assert form.value == 2 * 32 * 32 * 128 * 2  # Llama-2 7B in bf16: 512 KiB per token


def test_llama_training_flops_per_token_are_6_params_and_the_attention_term():
    # Kaplan et al. 2020 Table 1 / Narayanan et al. 2021: forward 2 FLOPs per weight of the matrices and 2·2·l·s·h
    # for QKᵀ and scores·V over the full s×s square (a·d_head = h); the backward twice the forward: ×3 in all
    s = quantity("s").symbol
    matrices = 2 * h**2 + 2 * h * g * d_head + 3 * h * d_ff  # per layer: W_Q, W_O, W_K, W_V, a gated MLP
    want = 6 * (V * h + l * matrices) + 3 * 4 * l * h * s  # the head V×h; the embedding lookup is no GEMM
    form = family_form("llama", "flops.decoder.training")
    assert form.per_token and sp.expand(form.form - want) == 0


def test_mla_caches_the_latent_and_the_rope_key():
    # DeepSeek-V2 §2.1.3: (d_c + d_h^R)·l elements per token, here r_KV + d_rope
    form = family_form("deepseek_v3", "memory.kv_cache.decoder")
    q, r_kv, d_rope = (quantity(name).symbol for name in ("q", "r_kv", "d_rope"))
    assert sp.expand(form.form - q * l * (r_kv + d_rope)) == 0
    assert form.value == 61 * (512 + 64) * 2  # 61 layers, the 512-wide latent and the 64-wide rope key, bf16: 70,272 B


def test_every_family_form_fits_the_length_budget():
    assert READABLE_LATEX <= 400  # the issue's one look
    for family in families_with_forms():
        for form in family_forms(family):
            assert len(form.latex) <= READABLE_LATEX, (family, form.formula_id, len(form.latex))


def test_every_family_form_is_proved_by_check():
    proved = {}
    for make in DERIVATIONS:
        derivation = make()
        outcomes = derivation.check()
        assert outcomes and all(outcome.ok for outcome in outcomes), [o.describe() for o in outcomes if not o.ok]
        proved[derivation.id] = derivation
    for family in families_with_forms():
        for form in family_forms(family):
            assert form.derivation_id in proved


def test_check_refuses_a_wrong_family_form():
    # the proof has teeth: a form with one term changed fails the equality step
    make = next(make for make in DERIVATIONS if make.__name__ == "family_form_llama_params_decoder_total")
    derivation = make()
    derivation.steps[-1].expr = derivation.steps[-1].expr + h
    assert not derivation.check()[-1].ok


def meta_count(config: dict) -> int:
    import torch
    import transformers

    settings = {key: value for key, value in config.items() if key != "model_type"}
    hf = transformers.AutoConfig.for_model(config["model_type"], **settings)
    with torch.device("meta"):
        model = transformers.AutoModelForCausalLM.from_config(hf)
    return sum(p.numel() for p in model.parameters())


@pytest.mark.parametrize("family", LISTED)
def test_the_parameter_form_at_its_checkpoint_is_transformers_count(family):
    form = family_form(family, "params.decoder.total")
    config = checkpoint(form.checkpoint).config
    twin = TWINS[form.checkpoint]
    if twin is None:
        want = meta_count(config)
    else:
        published = json.loads((HERE / "checkpoints" / f"{twin}.json").read_text())
        assert read_config(published).values == read_config(config).values  # the preset is that checkpoint's shape
        want = COUNTS[twin.replace("--", "/")]["text"]
    assert form.value == want


@pytest.mark.parametrize("family", LISTED)
def test_every_form_at_its_checkpoint_is_the_general_formula_there(family):
    for form in family_forms(family):
        architecture = checkpoint(form.checkpoint).architecture
        if form.per_token:  # the formula for b = 1 sequence of s = 2,048 tokens, over its 2,048 tokens
            whole = architecture.evaluate(get(form.formula_id).dimensioned, **{**form.inputs, "b": 1, "s": 2048})
            assert form.value == sp.Rational(whole, 2048)
        else:
            assert form.value == architecture.evaluate(get(form.formula_id).dimensioned, **form.inputs)


def test_unknown_family_or_formula_names_the_choices():
    with pytest.raises(UnknownFamily, match="families with forms: gpt2, llama"):
        family_form("bert", "params.decoder.total")
    with pytest.raises(UnknownFamily, match="formulas with family forms: params.decoder.total"):
        family_form("llama", "params.total")
    with pytest.raises(ValueError):  # the project's bad-input type is a ValueError
        family_forms("nope")


def test_check_runs_the_family_forms():
    from llm_formulas.derivations.reports.catalogue import factories

    assert set(DERIVATIONS) <= set(factories())  # the whole-catalogue check builds and proves them


def run(capsys, *argv):
    from llm_formulas.render.cli.main import main

    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_show_family_prints_the_form_and_the_checkpoint_value(capsys):
    code, out, err = run(capsys, "show", "params.decoder.total", "--family", "llama")
    assert code == 0 and err == ""
    assert "6,738,415,616" in out  # Llama-2 7B as transformers counts it (meta-llama/Llama-2-7b-hf)
    assert "σ" not in out and "sigma" not in out and "l_moe" not in out
    code, out, _ = run(capsys, "show", "params.decoder.total", "--family", "llama", "--json")
    doc = json.loads(out)
    assert code == 0 and doc["family"] == "llama" and doc["value"] == 6738415616 and doc["checkpoint"] == "llama2-7b"
    assert doc["latex"] == family_form("llama", "params.decoder.total").latex and doc["switches"]["gated"] == 1
    code, out, _ = run(capsys, "show", "memory.kv_cache.decoder", "--family", "llama", "--latex")
    assert code == 0 and "2 d_{head} g l q" in out and "per token" in out


@pytest.mark.parametrize("argv, named", [
    (("show", "params.decoder.total", "--family", "bert"), "gpt2, llama"),
    (("show", "params.total", "--family", "llama"), "params.decoder.total, flops.decoder.training"),
])
def test_show_family_refuses_in_one_line_naming_the_choices(capsys, argv, named):
    code, out, err = run(capsys, *argv)
    assert code == 2 and out == "" and err.count("\n") == 1 and named in err and "Traceback" not in err


def test_a_relation_the_checkpoint_breaks_is_refused():
    from llm_formulas.derivations.data.family_forms import _Declared, relations

    # Qwen3-32B: 64 query heads of 128 are 8,192 wide, the model 5,120 (its config.json): a·d_head = h is false there
    with pytest.raises(ValueError, match="a·d_head = h does not hold at qwen3-32b"):
        relations(_Declared("qwen3", "qwen3-32b", ("a·d_head = h",)), checkpoint("qwen3-32b").architecture)


def test_grouping_writes_replaced_parts_as_l_minus_the_kinds_and_never_changes_the_value():
    from llm_formulas.derivations.data.family_forms import grouped

    l_ssd, l_gdn, l_noattn = (quantity(name).symbol for name in ("l_ssd", "l_gdn", "l_noattn"))
    # attention (h²) replaced by a mixer (d_ff·h) in l_ssd layers and dropped in l_noattn layers: both remove h²
    expanded = sp.expand(l * (h**2 + h) + l_ssd * (d_ff * h - h**2) - l_noattn * h**2)
    want = l * h + (l - l_ssd - l_noattn) * h**2 + l_ssd * d_ff * h
    assert grouped(expanded) == want
    # two kinds removing overlapping but different terms cannot be grouped apart: left as collected, still equal
    overlapping = sp.expand(l * (h**2 + h) - l_ssd * h**2 - l_gdn * (h**2 + h))
    assert sp.expand(grouped(overlapping) - overlapping) == 0
    assert not any(isinstance(arg, sp.Add) and l_ssd in arg.free_symbols and l in arg.free_symbols
                   for term in sp.Add.make_args(grouped(overlapping)) for arg in sp.Mul.make_args(term))


def test_a_hybrid_names_its_recurrent_mixer_by_the_catalogue_part_and_check_proves_the_naming():
    form = family_form("qwen3_next", "flops.decoder.training")
    gdn = get("flops.recurrent.gdn")
    assert form.parts == ("flops.recurrent.gdn",) and r"\frac{3 F_{GDN} l_{GDN}}{b s}" in form.latex  # forward + backward: 3×
    assert sp.expand(form.composed.xreplace({gdn.part: gdn.expr}) - form.form) == 0
    make = next(make for make in DERIVATIONS if make.__name__ == "family_form_qwen3_next_flops_decoder_training")
    derivation = make()
    assert derivation.steps[-1].label.endswith("by parts") and all(outcome.ok for outcome in derivation.check())
    # the named part is wrong by one forward (2× instead of 3×): the by-parts step fails
    derivation.steps[-1].expr = derivation.steps[-1].expr - derivation.step(r"F_{GDN}").expr * quantity("l_gdn").symbol
    assert not derivation.check()[-1].ok
