"""Uneven pipeline stages: BLOOM-176B's published layout runs through estimate, checked by hand."""

import json

import pytest
import sympy as sp

from llm_formulas.formulas.reports.estimate import Inputs, Layout, estimate, model_values
from llm_formulas.formulas.data.gpus import gpu
from llm_formulas.formulas.data.presets import preset
from helpers import cli_json, run, value

BLOOM_STAGES = (5, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 5)  # 004; BigScience 2022 §3.4


def bloom_report(stages=BLOOM_STAGES, embedding=(0, 11)):
    model = model_values(preset("bloom-176b").architecture.values)
    layout = Layout(n=384, t=4, p=12, d=8, b=2, m=128, s=2048, zero=1, recompute="full",
                    stages=stages, embedding_stages=embedding)
    inputs = Inputs(model=model, gpu=gpu("a100-80gb").inputs(), network=25 * 10**9, tokens=366 * 10**9,
                    utilization=sp.Rational(1, 2), overlap=sp.Rational(1, 2))
    return estimate(layout, inputs)


def test_bloom_first_stage_and_slowest_stage_by_hand():
    report = bloom_report()
    stages = report["pipeline"]
    # a BLOOM block: 12h² + 13h = 12·14336² + 13·14336 = 2,466,437,120 parameters; the first stage
    # holds 5 of them and the 250880 × 14336 = 3,596,615,680 embedding
    assert stages["first_stage_params"] == 5 * 2_466_437_120 + 3_596_615_680
    # the logits are 2bshV / (24bsh² + 4bs²h) = V/(12h + 2s) = 250880/176128 layer-forwards, on stage 12
    logits = sp.Rational(250880, 12 * 14336 + 2 * 2048)
    assert stages["stage_work"][-1] == 5 + logits and stages["slowest_stage"] == 12
    assert stages["step_factor"] == 12 * (5 + logits) / (70 + logits)
    # 1F1B: (m + p − 1) slots of the slowest stage against m balanced ones
    bubble = sp.Rational(12 * (128 + 11), 128) * (5 + logits) / (70 + logits) - 1
    time = report["time"]
    assert time["bubble"] == bubble
    assert time["step_seconds"] == time["compute_seconds"] * (1 + bubble) + time["exposed_comm_seconds"]
    # the first stage keeps p = 12 micro-batches of its 5 layers' inputs (full recompute: 2sbh bytes per layer, s = 2048,
    # b = 2, h = 14336, replicated across the TP group) and of the embedding's int64 token ids; while the backward
    # rebuilds one layer it holds that layer's tensors as Megatron Core keeps them without dropout (BLOOM trained with
    # none): the norms', QKV and MLP inputs 8h whole; Q, K, V, the projection input 2h each and the 4h GELU's input
    # and output 2·4h each over t = 4; the softmax output, 2 bytes for each of the a/t = 28 heads' s² scores
    s, b, h, a, t = 2048, 2, 14336, 112, 4
    rebuilt = s * b * (8 * h + (8 * h + 16 * h) // t) + 2 * (a // t) * s * s * b - 2 * s * b * h
    assert report["memory"]["first_stage"]["activations"] == 12 * (5 * 2 * s * b * h + 8 * s * b) + rebuilt


def test_balanced_stages_give_back_the_even_report():
    model = model_values(preset("llama2-7b").architecture.values)
    even = Layout(n=4, t=1, p=4, d=1, b=1, m=8, s=2048)
    explicit = Layout(n=4, t=1, p=4, d=1, b=1, m=8, s=2048, stages=(8, 8, 8, 8), embedding_stages=(0, 3))
    bare = Layout(n=4, t=1, p=4, d=1, b=1, m=8, s=2048, stages=(8, 8, 8, 8))
    inputs = Inputs(model=model, gpu=gpu("a100-80gb").inputs(), network=25 * 10**9, tokens=None,
                    utilization=sp.Rational(1, 2), overlap=sp.Rational(1, 2))
    a, b = estimate(even, inputs), estimate(explicit, inputs)
    for end in ("first_stage", "last_stage"):
        assert a["memory"][end] == b["memory"][end]
    # without the embedding on stage 1, its states are those of 8 blocks alone: Ψ_layer·8·18 bytes (Megatron Core)
    assert estimate(bare, inputs)["memory"]["first_stage"]["model_states"] == 8 * value("params.decoder.layer", **model) * 18
    # the logits make the last stage the slowest even when the blocks are balanced
    assert b["pipeline"]["slowest_stage"] == 4 and b["time"]["bubble"] > a["time"]["bubble"]


def test_bloom_layout_through_the_command_line(capsys):
    doc = cli_json(capsys, "estimate", "--model", "bloom-176b", "--gpu", "a100-80gb", "--tp", "4", "--pp", "12", "--dp", "8",
                   "--zero", "1", "--recompute", "full", "--stages", ",".join(map(str, BLOOM_STAGES)),
                   "--embedding-stages", "first,last", "--micro-batch", "2", "--global-batch", "2048", "--seq", "2048",
                   "--tokens", "366e9")
    assert doc["layout"]["stages"] == list(BLOOM_STAGES) and doc["layout"]["embedding_stages"] == [1, 12]
    assert doc["pipeline"]["first_stage_params"] == 15_928_801_280
    assert doc["memory"]["fits"] is True


def test_the_bloom_layout_preset_is_the_published_layout(capsys):
    # BigScience 2022 §3.4: TP 4 × PP 12 × DP 8 = 384 GPUs, ZeRO 1, micro-batch 2, global batch 2048
    explicit = cli_json(capsys, "estimate", "--model", "bloom-176b", "--gpu", "a100-80gb", "--tp", "4", "--pp", "12", "--dp", "8",
                        "--zero", "1", "--recompute", "full", "--stages", ",".join(map(str, BLOOM_STAGES)),
                        "--embedding-stages", "first,last", "--micro-batch", "2", "--global-batch", "2048", "--seq", "2048",
                        "--tokens", "366e9")
    preset = cli_json(capsys, "estimate", "--model", "bloom-176b", "--gpu", "a100-80gb", "--seq", "2048", "--layout", "bloom-176b")
    assert preset == explicit
    assert preset["layout"]["n"] == 384 and preset["layout"]["B"] == 2048


def test_an_moe_first_stage_holds_its_share_of_the_experts():
    # Mixtral-8x7B (32 layers, all MoE, untied 32000 × 4096 embedding and head) over stages 7, 8, 8, 9 with the
    # embedding on the first: it holds 7/32 of the layers' parameters (experts included) and the embedding. ZeRO 0,
    # t = 1, e = 2: 18 bytes per dense parameter, the experts halved (memory.zero.ep_cp at p = 1), by hand
    model = model_values(preset("mixtral-8x7b").architecture.values)
    layout = Layout(n=4, t=1, p=4, d=1, b=1, m=8, s=4096, zero=0, recompute="full", stages=(7, 8, 8, 9),
                    embedding_stages=(0,), e=1)
    inputs = Inputs(model=model, gpu=gpu("h100-sxm").inputs(), network=25 * 10**9, tokens=None,
                    utilization=sp.Rational(2, 5), overlap=sp.Rational(1, 2))
    report = estimate(layout, inputs)
    total, experts, embedding = report["params"]["total"], report["params"]["experts"], 32000 * 4096
    first = sp.Rational(7, 32) * (total - 2 * embedding) + embedding
    assert report["pipeline"]["first_stage_params"] == first
    # its GPU's states: the same layers (the final norm is the last stage's), 18 bytes per parameter (Megatron Core)
    first_gpu = sp.Rational(7, 32) * (total - 2 * embedding - 4096) + embedding
    assert report["memory"]["first_stage"]["model_states"] == 18 * first_gpu
    spread = estimate(Layout(n=8, t=1, p=4, d=2, b=1, m=8, s=4096, zero=0, recompute="full", stages=(7, 8, 8, 9),
                             embedding_stages=(0,), e=2), inputs)
    share = sp.Rational(7, 32) * experts  # the first stage's experts, of which each of the e = 2 ranks holds half
    assert spread["memory"]["first_stage"]["model_states"] == 18 * (first_gpu - share) + 18 * share / 2 > 0


# --- a hybrid model's stages: every layer kind params.decoder.total counts ------------------------------------------

HYBRIDS = ["jamba", "nemotron_h", "mamba", "falcon_mamba", "mamba2", "recurrent_gemma", "qwen3_next"]
ONE_GPU = dict(t=1, t_e=1, e=1, p=1, piped=0)


def _held(architecture, ids, **at) -> int:
    from llm_formulas.formulas.vocabulary.catalogue import get

    return architecture.evaluate(sp.Add(*(get(x).dimensioned for x in ids)), **at)


@pytest.mark.parametrize("family", HYBRIDS)
def test_a_hybrid_models_stages_hold_its_parameters(tmp_path, capsys, family):
    from family_cases import config_json
    from llm_formulas.formulas.data.hf_config import read_config

    config = config_json(family, 0)
    path = tmp_path / "config.json"
    path.write_text(json.dumps(config))
    counted = cli_json(capsys, "params", "--hf-config", str(path))  # the model's own count, the path params takes
    architecture = read_config(config)
    experts = ("params.stage.layers.experts", "params.stage.mtp.experts")
    # one GPU (t = p = e = 1): the first stage is the whole model
    assert _held(architecture, ("params.stage.first", *experts), **ONE_GPU) == counted["total"]
    # two stages: every layer on one of them, the embedding on the first, the head and final norm on the last; a tied
    # head is Megatron Core's copy of the embedding on the last stage (V·h more)
    two = dict(ONE_GPU, p=2, piped=1)
    both = _held(architecture, ("params.stage.first", "params.stage.last", *experts, experts[0]), **two)
    tied = counted["keys_read"].get("tie_word_embeddings", counted["defaults"].get("tie_word_embeddings"))
    copy = config["vocab_size"] * config["hidden_size"] if tied else 0
    assert both == counted["total"] + copy


def test_qwen3_next_keeps_its_norms_router_and_delta_net_norms_whole_under_tp():
    # Ψ(t) = Ψ_split/t + Ψ_whole, so 2·Ψ(2) − Ψ(1) is what every TP rank keeps whole. Qwen3-Next-80B-A3B's config
    # (h = 2048, 48 layers, 12 of them attention with q/k norms of d_head = 256, 36 gated delta-nets of value heads
    # d_V = 128, 512 experts and a shared-expert gate in every layer): two RMSNorms per layer, the q/k norms, the
    # routers (E×h), the shared-expert gates (h), GatedDeltaNet's out_norm of one value head (Megatron Core builds it
    # over value_head_dim) and the final norm
    architecture = preset("qwen3-next-80b-a3b").architecture
    whole = 48 * 2 * 2048 + 12 * 2 * 256 + 48 * 512 * 2048 + 48 * 2048 + 36 * 128 + 2048
    held = [_held(architecture, ("params.stage.first",), **dict(ONE_GPU, t=t)) for t in (1, 2)]
    assert 2 * held[1] - held[0] == whole


@pytest.mark.parametrize("command", ["estimate", "plan", "compare"])
def test_the_report_refuses_layers_it_does_not_price(capsys, command):
    layout = ("--gpus", "64", "--global-batch", "512") if command == "plan" else ("--dp", "8")
    code, out, err = run(capsys, command, "--model", "qwen3-next-80b-a3b", "--gpu", "h100-sxm", "--seq", "4096",
                         "--mfu", "0.3", *layout)
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1
    assert "36 gated delta-net layers and an attention output gate" in err
