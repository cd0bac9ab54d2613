"""The other calculators, as their own code computes them, and ``compare``: each peer formula of the catalogue against
the peer's own output, each difference a proved claim, and the figures compare puts beside them equal to estimate's.

The peers' own outputs below were produced by running their code on these inputs (copies outside this project):
Megatron-LM's ``compute_weight_and_optimizer_memory``, ``compute_activation_memory`` and
``compute_activation_memory_without_sp`` at NVIDIA/Megatron-LM d98e8a64 (num_microbatches = 64, its args as named per
case), llm-analysis's ``LLMAnalysis.training`` at cli99/llm-analysis d841e40a (its defaults: flash attention, sp = t,
no recompute, batch 1, ZeRO 0).
"""

import json

import pytest

from llm_formulas.derivations.reports.catalogue import derivation_of
from llm_formulas.formulas.reports.estimate import model_values
from llm_formulas.formulas.data.presets import preset
from helpers import cli_json, run, value

# Megatron's own figures, bytes: (weights+optimizer, with --use-distributed-optimizer, activations SP+selective,
# activations by its other branch); the layout (t, p, d, e) and V as its args had them (GPT-3's vocabulary padded to 51200)
MEGATRON = {
    "gpt3-175b": ((8, 8, 2, 1), 51200, (50_348_611_584, 33_565_741_056, 10_292_838_400, 33_188_826_316.8)),
    "llama2-70b": ((8, 4, 2, 1), 32000, (39_099_469_824, 26_066_313_216, 10_754_211_840, 36_782_505_984)),
    "mixtral-8x7b": ((4, 4, 8, 8), 32000, (8_447_477_760, 7_219_158_528, 4_311_777_280, None)),
    "deepseek-v3": ((8, 1, 8, 8), 129280, (227_840_947_200, 204_065_323_776, 6_615_470_080, None)),
}
SEQ = {"gpt3-175b": 2048, "llama2-70b": 4096, "mixtral-8x7b": 4096, "deepseek-v3": 4096}


def _sizes(model: str, V: int, t: int, p: int, d: int, e: int) -> dict:
    sizes = model_values(preset(model).architecture.values) | dict(V=V, t=t, p=p, d=d, e=e, t_e=t, piped=int(p > 1), b=1,
                                                                   s=SEQ[model])
    return {name: number for name, number in sizes.items()}


@pytest.mark.parametrize("model", MEGATRON)
def test_megatron_formulas_equal_megatrons_own_figures(model):
    (t, p, d, e), V, figures = MEGATRON[model]
    sizes = _sizes(model, V, t, p, d, e)
    ids = ("peers.megatron.states", "peers.megatron.states.distributed_optimizer", "peers.megatron.activations",
           "peers.megatron.activations.without_sp")
    for formula_id, figure in zip(ids, figures):
        if figure is not None:
            assert float(value(formula_id, **sizes)) == pytest.approx(figure, rel=1e-12), formula_id


def test_llm_analysis_formulas_equal_its_own_figures():
    # GPT-3 as llm-analysis's ModelConfig(num_layers=96, n_head=96, hidden_dim=12288, vocab_size=51200, ffn_embed_dim=49152)
    # at tp 8, pp 8, dp 2, s 2048: activation_memory_per_gpu and num_flops_total_per_micro_batch of its training()
    activations, flops = 12_445_548_544, 2_204_555_173_429_248
    sizes = _sizes("gpt3-175b", 51200, 8, 8, 2, 1)
    assert value("peers.llm_analysis.activations", **sizes) == activations
    assert value("peers.llm_analysis.flops", **sizes) == flops


@pytest.mark.parametrize("formula_id", ["peers.megatron.states", "peers.megatron.activations", "peers.deepspeed.zero2",
                                        "peers.llm_analysis.activations", "peers.transformer_math.states"])
def test_each_peer_differs_by_named_terms_and_the_claim_is_proved(formula_id):
    derivation = derivation_of(formula_id)
    outcomes = derivation.check()
    assert outcomes and all(o.ok for o in outcomes), [o.describe() for o in outcomes if not o.ok]
    terms = [step for step in derivation.steps if step.label.startswith("Δ ")]
    assert terms and all(step.why for step in terms)
    assert any(o.claim == "equals" and derivation.steps[o.index - 1].label == "ours − peer" for o in outcomes)


REALISTIC = {  # the four models at the layouts tests/test_framework_memory.py prices
    "gpt3-175b": ["--gpu", "h100-sxm", "--tp", "8", "--pp", "8", "--dp", "2", "--global-batch", "64", "--seq", "2048"],
    "llama2-70b": ["--gpu", "a100-80gb", "--tp", "8", "--pp", "4", "--dp", "2", "--global-batch", "32", "--seq", "4096"],
    "mixtral-8x7b": ["--gpu", "h100-sxm", "--tp", "4", "--pp", "4", "--dp", "8", "--ep", "8", "--global-batch", "256",
                     "--seq", "4096"],
    "deepseek-v3": ["--gpu", "h800", "--tp", "8", "--dp", "8", "--ep", "8", "--global-batch", "64", "--seq", "4096"],
}


@pytest.mark.parametrize("model", REALISTIC)
def test_compare_runs_for_every_peer_and_every_difference_is_explained(capsys, model):
    flags = [*REALISTIC[model], "--sequence-parallel", "--zero", "1", "--mfu", "0.4"]
    doc = cli_json(capsys, "compare", "--model", model, *flags)
    peers = {row["peer"] for row in doc["rows"]} | {item["peer"] for item in doc["skipped"]}
    assert peers == {"megatron", "deepspeed", "llm-analysis", "transformer-math"}
    assert {row["peer"] for row in doc["rows"]} >= {"megatron", "deepspeed"}  # they express every model
    for row in doc["rows"]:
        explained = row["peer_value"] + sum(term["value"] for term in row["terms"])
        assert explained == pytest.approx(row["ours"], rel=1e-9, abs=1e-6), row["claim"]
        assert row["measured"] >= row["ours"]
    estimate = cli_json(capsys, "estimate", "--model", model, *flags)
    states = next(row for row in doc["rows"] if row["claim"] == "peers.megatron.states.distributed_optimizer")
    assert states["ours"] == pytest.approx(estimate["memory"]["first_stage"]["model_states"], rel=1e-12)
    activations = next(row for row in doc["rows"] if row["claim"] == "peers.megatron.activations")
    assert activations["ours"] == pytest.approx(estimate["memory"]["first_stage"]["activations"], rel=1e-12)
    flops = next(row for row in doc["rows"] if row["claim"] == "peers.megatron.flops")
    assert flops["ours"] == pytest.approx(estimate["flops"]["training"], rel=1e-12)


def test_compare_figures_at_each_peers_own_setting_are_estimates(capsys):
    flags = ["--model", "llama2-70b", *REALISTIC["llama2-70b"], "--mfu", "0.4"]
    rows = {row["claim"]: row for row in cli_json(capsys, "compare", *flags, "--sequence-parallel", "--zero", "1")["rows"]}
    flash = cli_json(capsys, "estimate", *flags, "--sequence-parallel", "--recompute", "none", "--attention", "flash")
    assert rows["peers.llm_analysis.activations"]["ours"] == pytest.approx(flash["memory"]["first_stage"]["activations"], rel=1e-12)
    assert rows["peers.llm_analysis.kv_cache"]["ours"] == pytest.approx(flash["inference"]["kv_cache_per_gpu"], rel=1e-12)
    plain = cli_json(capsys, "estimate", *flags, "--recompute", "selective")
    without_sp = {row["claim"]: row for row in cli_json(capsys, "compare", *flags, "--zero", "1")["rows"]}
    for claim in ("peers.megatron.activations.without_sp", "peers.transformer_math.activations"):
        assert without_sp[claim]["ours"] == pytest.approx(plain["memory"]["first_stage"]["activations"], rel=1e-12)


def test_deepspeeds_zero2_estimator_is_its_steps_peak(capsys):
    # the estimator's 2Ψ + 18Ψ/N is what DeepSpeed's ZeRO-2 holds while its step casts the gradient partition to fp32
    # (stage_1_and_2.py L1891-1917): estimate --framework deepspeed's optimizer step at the GPU's parameters
    doc = cli_json(capsys, "estimate", "--model", "llama2-7b", "--gpu", "a100-80gb", "--dp", "8", "--global-batch", "8",
                   "--seq", "4096", "--framework", "deepspeed", "--zero", "2", "--mfu", "0.4")
    held = doc["params"]["per_gpu"]
    assert doc["memory"]["optimizer_step"] == pytest.approx(float(value("peers.deepspeed.zero2", P=held, d=8)), rel=1e-12)


@pytest.mark.parametrize("argv, message", [
    (["--model", "mixtral-8x7b", "--peer", "transformer-math"], "cannot express this model's activations: mixture-of-experts"),
    (["--model", "deepseek-v3", "--peer", "llm-analysis"], "multi-head latent attention"),
    (["--model", "llama2-7b", "--cp", "2"], "without context parallelism"),
    (["--model", "llama2-7b", "--pp", "4", "--micro-batches", "2"], "m ≥ p"),
    (["--model", "llama2-7b", "--peer", "nobody"], "invalid choice"),
])
def test_compare_refuses_what_a_peer_cannot_express_in_one_line(capsys, argv, message):
    code, out, err = run(capsys, "compare", *argv, "--gpu", "a100-80gb", "--seq", "4096", "--mfu", "0.4")
    assert code == 2 and out == "" and err.count("\n") == 1 and message in err, err


def test_compare_text_names_each_term(capsys):
    code, out, _ = run(capsys, "compare", "--model", "gpt3-175b", *REALISTIC["gpt3-175b"], "--sequence-parallel", "--zero", "1",
                       "--mfu", "0.4", "--peer", "megatron")
    assert code == 0 and "position table" in out and "rebuilt layer" in out and "causal square" in out
    assert json.loads(run(capsys, "compare", "--model", "gpt3-175b", *REALISTIC["gpt3-175b"], "--json", "--peer", "megatron",
                          "--mfu", "0.4")[1])["rows"]
