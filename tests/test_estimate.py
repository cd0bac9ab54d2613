"""``llm-formulas estimate``: the report equals the catalogue's formulas evaluated one by one."""

import json
from fractions import Fraction

import pytest

from llm_formulas.formulas.data.serving_calibration import constants

from llm_formulas.render.cli.main import main
from helpers import cli_json


LLAMA2_70B = dict(h=8192, a=64, g=8, d_head=128, d_ff=28672, l=80, V=32000)  # Touvron et al. 2023 Table 1 / config.json
A100_80GB = dict(X=312 * 10**12, W_mem=2039 * 10**9, W_link=600 * 10**9, M_gpu=80 * 10**9)  # NVIDIA A100 datasheet


def test_llama2_70b_report_against_hand_arithmetic(capsys):
    # Every expectation below is the sources' arithmetic written out, not the catalogue's formulas.
    t, p, d, b, m, s, tokens = 8, 4, 2, 1, 16, 4096, 2 * 10**12
    h, a, g, d_head, d_ff, l = (LLAMA2_70B[k] for k in ("h", "a", "g", "d_head", "d_ff", "l"))
    n, B, U, r = t * p * d, b * m * d, Fraction(1, 2), Fraction(1, 2)
    report = cli_json(capsys, "estimate", "--model", "llama2-70b", "--gpu", "a100-80gb", "--tp", str(t), "--pp", str(p),
                      "--dp", str(d), "--micro-batches", str(m), "--seq", str(s), "--tokens", str(tokens), "--mfu", "0.5")
    V = LLAMA2_70B["V"]
    # Llama-2-70B's modules counted by hand: per layer Q and O (h × a·d_head each), K and V (h × g·d_head each, GQA),
    # the SwiGLU's gate, up and down (h × d_ff each), two RMSNorm scales (h each); then the untied embedding and
    # head (V × h each) and the final RMSNorm. Meta calls it "70B"; the same 68,976,648,192 is what transformers'
    # LlamaForCausalLM holds for this config (tests/test_model_commands.py counts a preset's numel on the meta device).
    per_layer = 2 * h * a * d_head + 2 * h * g * d_head + 3 * h * d_ff + 2 * h
    params = l * per_layer + 2 * V * h + h
    assert params == 80 * 855_654_400 + 524_288_000 + 8192 == 68_976_648_192
    assert report["params"]["total"] == params

    # forward FLOPs by hand, 2 per multiply-add of every matmul (what FlopCounterMode counts, PITFALLS.md): the
    # projections and the MLP over B·s tokens, QKᵀ and scores·V over the full s×s square for each of a query heads,
    # and the logits; backward is twice the forward (dX and dW each as large as the forward product)
    tokens_in_batch = B * s
    layer_matmuls = 2 * tokens_in_batch * per_layer - 2 * tokens_in_batch * 2 * h + 2 * 2 * B * a * s * s * d_head
    forward = l * layer_matmuls + 2 * tokens_in_batch * h * V
    assert report["flops"]["forward"] == forward and report["flops"]["training"] == 3 * forward
    selective = l * 4 * B * a * s**2 * d_head  # selective recompute re-runs QKᵀ and scores·V: 2 GEMMs of 2·s²·d_head per head
    assert report["flops"]["recomputed"] == selective

    # Megatron Core in bf16 (the default framework): bf16 weights, fp32 main gradients, fp32 master weights and Adam's
    # m, v, 2 + 4 + 12 = 18 bytes per parameter (megatron/training/theoretical_memory_usage.py L293-303 at d98e8a64;
    # docs/user-guide/features/dist_optimizer.md). The first of p stages holds l/p layers, their projections split t
    # ways and their two RMSNorm scales whole on every rank, and the vocabulary-parallel embedding's V·h/t (L247-264)
    first_stage = Fraction(l, p) * (Fraction(per_layer - 2 * h, t) + 2 * h) + Fraction(V * h, t)
    states = 18 * first_stage
    # Korthikanti et al. 2022 §4's count, tensor by tensor, for Llama-2's block as Megatron Core runs it on one of t
    # ranks under selective recompute, no dropout (p = 0 saves no mask), SwiGLU fused (bias_swiglu_impl keeps its
    # input only): whole on every rank, the two norms' inputs, the QKV input and the MLP input, 2 bytes · h each;
    # split t ways, Q (a·d_head) and K, V (g·d_head each, read in place by GQA), the output projection's input
    # (a·d_head), the gate-and-up output (2·d_ff) and the product (d_ff), 2 bytes each
    per_token = 8 * h + Fraction(2 * (a * d_head + 2 * g * d_head + a * d_head) + 2 * 3 * d_ff, t)
    assert per_token == 65536 + 26112  # 8·8192 + (2·(8192 + 2·1024 + 8192) + 6·28672)/8
    # 1F1B: min(p, m) micro-batches of l/p layers and of the embedding's int64 token ids (8 bytes a token), and the
    # one layer whose core the backward recomputes: its softmax output, a/t heads of s² 16-bit values
    activations = (s * b * per_token * Fraction(l, p) + 8 * s * b) * min(p, m) + Fraction(2 * a * s * s * b, t)
    assert report["memory"]["fits"] == (states + activations <= A100_80GB["M_gpu"])

    tp_bytes = 4 * Fraction(2 * (t - 1), t) * b * s * h * 2 * Fraction(l, p) * m  # 4 ring all-reduces of bsh per layer
    pp_bytes = 2 * b * s * h * 2 * m  # one activation forward and one gradient back per micro-batch (000 Table 4)
    dp_bytes = Fraction(2 * (d - 1), d) * 2 * Fraction(params, t * p)  # ring all-reduce of the 16-bit gradients
    assert report["comms"]["bytes"] == pytest.approx({"tp": float(tp_bytes), "pp": float(pp_bytes), "dp": float(dp_bytes),
                                                      "ep": 0, "cp": 0}, rel=1e-12)  # no expert or context parallelism
    # NVIDIA's 600 GB/s counts both directions; a ring sends at 300 GB/s while it receives at 300
    assert report["comms"]["seconds"]["tp"] == pytest.approx(float(tp_bytes / (A100_80GB["W_link"] / 2)), rel=1e-12)
    assert report["comms"]["seconds"]["dp"] == pytest.approx(float(dp_bytes / (25 * 10**9)), rel=1e-12)  # --network default

    assert report["time"]["bubble"] == pytest.approx(float(Fraction(p - 1, m)), rel=1e-12)  # GPipe/1F1B bubble
    compute = Fraction(3 * forward + selective) / (n * A100_80GB["X"] * U)
    assert report["time"]["compute_seconds"] == pytest.approx(float(compute), rel=1e-12)
    comm_seconds = tp_bytes / (A100_80GB["W_link"] // 2) + Fraction(pp_bytes + dp_bytes, 25 * 10**9)
    exposed = max(comm_seconds - r * compute, 0)  # communication hides under r of the compute, all of it together
    assert report["time"]["step_seconds"] == pytest.approx(float(compute * (1 + Fraction(p - 1, m)) + exposed), rel=1e-12)
    ideal_seconds = Fraction(6 * params * tokens) / (n * A100_80GB["X"] * U)  # 6ΨD / (nXU), 000 §3.5
    assert report["time"]["ideal_days"] == pytest.approx(float(ideal_seconds / 86400), rel=1e-12)

    kv = 2 * l * g * d_head * s * 2
    assert kv == 1_342_177_280  # 1.25 GiB: 2 × 80 layers × 8 KV heads × 128 × 4096 tokens × 2 bytes
    assert report["inference"]["kv_cache_per_sequence"] == kv
    # 001's sketch: every 16-bit weight read once per token; the p stages run one after the other, each over its t GPUs
    latency = p * Fraction(2 * params // p, t * A100_80GB["W_mem"])
    assert latency == pytest.approx(8.457e-3, rel=1e-4)  # 4 × the 2.11 ms the report printed when it divided by t·p
    assert report["inference"]["latency_memory_bound"] == pytest.approx(float(latency), rel=1e-12)
    # the serving model's token: p stages in series; each stage its l/p layers; the weights' 16-bit bytes read once,
    # the embedding at the b rows looked up only; the 1.25 GiB cache of each of the b sequences read too
    token, stage = report["inference"]["token_latency"], report["inference"]["stage_latency"]
    assert report["inference"]["weights_read_per_step"] == 2 * (params - 32000 * 8192 + b * 8192)
    assert report["inference"]["kv_read_per_step"] == b * kv
    assert token > float(latency) and token == pytest.approx(p * stage + (p - 1) * (b * 8192 * 2 / (25 * 10**9)
                                                                                   + float(constants("16").tau_ar)), rel=1e-12)
    assert report["inference"]["tokens_per_second"] == pytest.approx(p * b / token, rel=1e-12)  # p in flight

    step = Fraction(report["time"]["step_seconds"])
    # with --mfu the compute runs at U (HFU counts the recomputed FLOPs too); over the whole step the bubble and
    # any exposed communication lower what the GPUs achieve: training FLOPs / (n · X · step)
    assert report["time"]["mfu"] == 0.5
    assert report["time"]["hfu"] == pytest.approx(float(U * (3 * forward + selective) / (3 * forward)), rel=1e-12)
    assert report["time"]["step_mfu"] == pytest.approx(float(3 * forward / (step * n * A100_80GB["X"])), rel=1e-12)
    assert report["time"]["step_mfu"] < 0.5
    assert report["time"]["tokens_per_gpu_second"] == pytest.approx(float(B * s / (n * step)), rel=1e-12)
    assert report["time"]["gpu_hours"] == pytest.approx(float(n * report["time"]["iterations"] * step / 3600), rel=1e-12)
    assert report["memory"]["left"] == pytest.approx(80e9 - report["memory"]["total"], rel=1e-12)
    # activations are b times those of b = 1: the largest b fitting beside the states is ⌊(80 GB − states)/activations⌋
    assert report["memory"]["max_micro_batch"] == int((80e9 - report["memory"]["model_states"]) // report["memory"]["activations"])


def test_pipeline_inference_is_the_catalogues_stages_in_series(capsys):
    # inference.latency.pipeline: q_w·Ψ/W_mem whatever p is, the stages run in series (001); at t = 1 the report's
    # memory-bound latency is that formula, and p batches in flight multiply the tokens per second by p
    from llm_formulas.formulas.reports.estimate import exact
    for p in (1, 4):
        report = cli_json(capsys, "estimate", "--model", "llama2-70b", "--gpu", "a100-80gb", "--pp", str(p), "--seq", "4096",
                          "--micro-batches", "4")
        params = report["params"]["total"]
        pipeline = exact("inference.latency.pipeline", P=params, W_mem=A100_80GB["W_mem"], q_w=2)
        assert pipeline == Fraction(2 * params, A100_80GB["W_mem"])  # 138 GB at 2.039 TB/s: 67.7 ms
        assert report["inference"]["latency_memory_bound"] == pytest.approx(float(pipeline), rel=1e-12)
        assert report["inference"]["tokens_per_second"] == pytest.approx(p / report["inference"]["token_latency"], rel=1e-12)


def test_zero3_shards_the_parameters_a_gpu_holds(capsys):
    report = cli_json(capsys, "estimate", "--model", "llama2-7b", "--gpu", "a100-80gb", "--dp", "64", "--zero", "3",
                      "--global-batch", "512", "--seq", "4096")
    assert report["params"]["per_gpu_stored"] == pytest.approx(6_738_415_616 / 64, rel=1e-12)  # Llama-2-7B over d = 64


def test_flash_attention_drops_the_s2_terms(capsys):
    # Dao et al. 2022: the flash kernel keeps Q, K, V and an fp32 log-sum-exp per head and token instead of the
    # a·s² scores; per layer and token (t = 1, bytes), as Megatron Core runs Llama-2-7B (MHA, no dropout, SwiGLU fused:
    # bias_swiglu_impl keeps the gate-and-up output and the product, megatron/core/fusions/fused_bias_swiglu.py):
    # 8h + 4·d_head·(a + g) + 6·d_ff + 4·a
    h, a, d_head, d_ff, l, s, V = 4096, 32, 128, 11008, 32, 4096, 32000
    report = cli_json(capsys, "estimate", "--model", "llama2-7b", "--gpu", "a100-80gb", "--seq", str(s),
                      "--recompute", "none", "--attention", "flash")
    per_token = 8 * h + 4 * d_head * (a + a) + 2 * 3 * d_ff + 4 * a
    # one stage: also the token ids (int64) and the output layer and loss (the final norm's and the head's inputs,
    # the fp32 softmax over V, the target mask and int64 targets: megatron/core/tensor_parallel/cross_entropy.py L181)
    outside = 8 + 4 * h + 4 * V + 9
    assert report["memory"]["activations"] == (per_token * l + outside) * s
    eager = cli_json(capsys, "estimate", "--model", "llama2-7b", "--gpu", "a100-80gb", "--seq", str(s), "--recompute", "none")
    # eager keeps the softmax output (no dropout: it is scores·V's input), 2·a·s² per layer, not the log-sum-exp
    assert eager["memory"]["activations"] - report["memory"]["activations"] == (2 * a * s * s - 4 * a * s) * l


# 000 §4.1.2 (SOURCES.md S6): the article's three layouts, each in its two "typical" settings: (1) ZeRO-1, selective
# recompute, sequence parallel; (2) no ZeRO, no recompute. Its Table 10 was lost: each must produce a full report, and
# setting (1), the one the article recommends, must fit an 80 GB A100.
S6 = [  # h, a, l from LLaMA Table 2 and GPT-3 Table 2.1; d_ff: LLaMA's SwiGLU width (config.json), GPT-3's 4h GELU
    ("llama-13b", dict(tp=2, pp=1, dp=212, gb=1272, seq=4096, h=5120, a=40, l=40, d_ff=13824, gated=1, V=32000)),
    ("llama-65b", dict(tp=4, pp=4, dp=132, gb=2112, seq=2048, h=8192, a=64, l=80, d_ff=22016, gated=1, V=32000)),
    ("gpt3-175b", dict(tp=8, pp=8, dp=18, gb=1152, seq=2048, h=12288, a=96, l=96, d_ff=4 * 12288, gated=0, V=50257)),
]


SETTINGS = {
    "zero1-selective-sp": ["--zero", "1", "--recompute", "selective", "--sequence-parallel"],
    "no-zero-no-recompute": ["--zero", "0", "--recompute", "none"],
}


@pytest.mark.parametrize("setting", SETTINGS)
@pytest.mark.parametrize("model, layout", S6, ids=[name for name, _ in S6])
def test_s6_layouts_produce_full_reports(capsys, model, layout, setting):
    report = cli_json(capsys, "estimate", "--model", model, "--gpu", "a100-80gb", "--tp", str(layout["tp"]),
                      "--pp", str(layout["pp"]), "--dp", str(layout["dp"]), "--global-batch", str(layout["gb"]),
                      "--seq", str(layout["seq"]), *SETTINGS[setting])
    assert report["layout"]["n"] == layout["tp"] * layout["pp"] * layout["dp"]
    assert report["layout"]["B"] == layout["gb"]
    assert set(report) >= {"params", "flops", "memory", "comms", "time", "inference"}
    params, t, p, d, s, h, a, l = (report["params"]["total"], layout["tp"], layout["pp"], layout["dp"], layout["seq"],
                                   layout["h"], layout["a"], layout["l"])
    # Korthikanti et al. 2022 §4, per token, bytes: norms' inputs, QKV input, MLP input 2h each, two 1-byte masks:
    # 10h; Q, K, V and the projection input, h each (no GQA, d_head = h/a): 2·4h; the MLP's d_ff-wide tensors, two
    # for GELU (input, output), four for SwiGLU (gate, SiLU output, up, product): 2·(2 + 2·gated)·d_ff. GPT-3's
    # d_ff = 4h gives Korthikanti Table 2's 10h + 24h = 34h.
    gated, d_ff, V = layout["gated"], layout["d_ff"], layout["V"]
    drop = 1 - gated  # GPT-2's config trains with dropout 0.1, LLaMA's with none
    # Megatron Core (the default framework), per token, bytes: the norms' inputs, the QKV input, the MLP input 2h each,
    # with dropout its two 1-byte masks: (8 + 2·drop)h; Q, K, V and the projection input, h each (no GQA, d_head =
    # h/a): 2·4h; the MLP's d_ff-wide tensors, two for GELU (input, output), three for the fused SwiGLU (gate-and-up,
    # product): 2·(2 + gated)·d_ff. GPT-3's d_ff = 4h gives Korthikanti Table 2's 10h + 24h = 34h.
    whole, split = (8 + 2 * drop) * h, 2 * 4 * h + 2 * (2 + gated) * d_ff
    # the first stage's GPU: l/p layers, their projections (and column-parallel biases) 1/t, their norms (and the
    # row-parallel biases) whole, the embedding's V·h/t and GPT-2's learned position table whole; at p = 1 also the
    # head (tied: none), the final norm
    if gated:  # LLaMA: RMSNorm, no biases, untied head
        layer_split, layer_whole, embedding, ends = 4 * h * h + 3 * h * d_ff, 2 * h, Fraction(V * h, t), Fraction(V * h, t) + h
    else:  # GPT-3 as GPT-2: c_attn 3h² + 3h, c_proj h² (+ h whole), c_fc 4h² + 4h, its c_proj 4h² (+ h whole), 2 LayerNorms
        layer_split, layer_whole, embedding, ends = 12 * h * h + 7 * h, 2 * h + 4 * h, Fraction(V * h, t) + 2048 * h, 2 * h
    first_params = Fraction(l, p) * (Fraction(layer_split, t) + layer_whole) + embedding + (ends if p == 1 else 0)
    embedding_bytes = 8 + drop * Fraction(h, t if setting == "zero1-selective-sp" else 1)  # int64 ids, the dropout mask
    head_bytes = 4 * Fraction(h, t if setting == "zero1-selective-sp" else 1) + Fraction(4 * V, t) + 9  # at p = 1
    if setting == "zero1-selective-sp":
        states = (6 + Fraction(12, d)) * first_params  # the distributed optimizer: docs/user-guide/features/dist_optimizer.md
        per_layer = Fraction(s * (whole + split), t)  # selective recompute with sequence parallelism: all split t ways
        rebuilt = Fraction((2 + 3 * drop) * a * s * s, t)  # the core the backward recomputes, one layer: softmax (mask, dropped)
        assert report["memory"]["fits"] is True
    else:
        states = 18 * first_params  # bf16 weights, fp32 main gradients, fp32 master and Adam's m, v
        per_layer = s * (whole + Fraction(split, t)) + Fraction((2 + 3 * drop) * a * s * s, t)  # TP, no recompute
        rebuilt = 0
    activations = (per_layer * Fraction(l, p) + s * embedding_bytes) * min(p, layout["gb"] // d) + rebuilt \
        + (s * head_bytes if p == 1 else 0)
    assert report["memory"]["first_stage"]["model_states"] == pytest.approx(float(states), rel=1e-12)
    assert report["memory"]["first_stage"]["activations"] == pytest.approx(float(activations), rel=1e-12)
    # bytes each GPU sends per iteration, by hand: TP (or SP's reduce-scatter + all-gather, the same bytes) 4 ring
    # all-reduces of b·s·h 16-bit values per layer, 2(t − 1)/t of the buffer each, l/p layers, m micro-batches;
    # DP a ring all-reduce of this rank's 16-bit gradients (ZeRO-1 reduce-scatters and all-gathers: the same bytes)
    m = layout["gb"] // d
    tp_bytes = m * Fraction(l, p) * 4 * Fraction(2 * (t - 1), t) * s * h * 2
    dp_bytes = Fraction(2 * (d - 1), d) * 2 * Fraction(params, t * p)
    assert report["comms"]["bytes"]["tp"] == pytest.approx(float(tp_bytes), rel=1e-12)
    assert report["comms"]["bytes"]["dp"] == pytest.approx(float(dp_bytes), rel=1e-12)
    # 6ΨD on n GPUs at X·U, D = 20 tokens per parameter (Hoffmann et al. 2022), X = 312 TFLOP/s (A100), U the
    # utilization the report predicts (the performance model's; tests/test_prediction.py checks it)
    tokens = 20 * params
    ideal = 6 * report["params"]["active"] * tokens / (t * p * d * 312 * 10**12 * report["time"]["mfu"]) / 86400
    assert report["time"]["ideal_days"] == pytest.approx(ideal, rel=1e-12)
    assert report["time"]["iterations"] == -(-tokens // (layout["gb"] * s))  # ⌈D/(B·s)⌉


@pytest.mark.parametrize(
    "extra, rule",
    [
        (["--tp", "3"], "must divide the 64 attention heads"),
        (["--tp", "16"], "must divide the 8 key/value heads"),
        (["--pp", "3"], "must divide the 80 layers"),
        (["--tp", "8", "--gpus", "9"], "t·p·d must equal n"),
        (["--dp", "3", "--global-batch", "7"], "multiple of b·d"),
        (["--pp", "4", "--interleave", "2", "--micro-batches", "6"], "m a multiple of p"),
        (["--tp", "0"], "positive"),
        (["--tp", "two"], "not a number"),
        (["--mfu", "1.5"], "at most 1"),
        (["--gpu", "tpu-v5"], "unknown GPU"),
    ],
)
def test_invalid_layouts_name_the_rule(capsys, extra, rule):
    argv = ["estimate", "--model", "llama2-70b", "--seq", "4096"]
    if "--gpu" not in extra:
        argv += ["--gpu", "a100-80gb"]
    code = main(argv + extra)
    out, err = capsys.readouterr()
    assert code == 2 and out == "" and err.count("\n") == 1 and rule in err


def test_full_recompute_keeps_only_each_layers_input_and_reruns_the_layers(capsys):
    t, p, d, m, s, h, l, V, B = 8, 4, 2, 16, 4096, 8192, 80, 32000, 32
    report = cli_json(capsys, "estimate", "--model", "llama2-70b", "--gpu", "a100-80gb", "--tp", str(t), "--pp", str(p),
                      "--dp", str(d), "--micro-batches", str(m), "--seq", str(s), "--recompute", "full", "--sequence-parallel")
    # Korthikanti §5: full recompute keeps each layer's 16-bit input, 2sbh, split over t by sequence parallelism, and
    # the int64 token ids of each micro-batch in flight; during its backward one layer is rebuilt whole: the tensors
    # of selective recompute's inventory with the core's softmax output (no dropout, SwiGLU fused) less the input it
    # already counts
    a, g, d_head, d_ff = (LLAMA2_70B[k] for k in ("a", "g", "d_head", "d_ff"))
    layer = Fraction(s * (8 * h + 2 * (2 * a * d_head + 2 * g * d_head) + 6 * d_ff) + 2 * a * s * s, t)
    expected = (Fraction(2 * s * h, t) * Fraction(l, p) + 8 * s) * min(p, m) + layer - Fraction(2 * s * h, t)
    assert report["memory"]["first_stage"]["activations"] == pytest.approx(float(expected), rel=1e-12)
    # the layers' forward runs again, the logits (2·B·s·h·V) do not (Narayanan et al. 2021: 4× layers, 3× logits)
    assert report["flops"]["recomputed"] == report["flops"]["forward"] - 2 * B * s * h * V


MIXTRAL_8X7B = {  # mistralai/Mixtral-8x7B-v0.1 config.json
    "model_type": "mixtral", "hidden_size": 4096, "intermediate_size": 14336, "num_attention_heads": 32,
    "num_key_value_heads": 8, "num_hidden_layers": 32, "vocab_size": 32000, "num_local_experts": 8,
    "num_experts_per_tok": 2, "tie_word_embeddings": False, "max_position_embeddings": 32768,
}


def test_a_mixture_of_experts_computes_with_its_active_parameters(capsys, tmp_path):
    config = tmp_path / "config.json"
    config.write_text(json.dumps(MIXTRAL_8X7B))
    tokens, n, X, U = 10**12, 64, 312 * 10**12, Fraction(1, 2)
    report = cli_json(capsys, "estimate", "--hf-config", str(config), "--gpu", "a100-80gb", "--tp", "8", "--pp", "4",
                      "--dp", "2", "--seq", "4096", "--tokens", str(tokens), "--mfu", "0.5")
    total, active = 46_702_792_704, 12_879_925_248  # transformers' Mixtral-8x7B: all parameters, and a token's share
    assert (report["params"]["total"], report["params"]["active"]) == (total, active)
    assert report["time"]["ideal_days"] == pytest.approx(float(Fraction(6 * active * tokens) / (n * X * U) / 86400), rel=1e-12)
    # every expert's states are kept, 18 bytes each (Megatron Core): the first stage's 8 layers (projections and
    # experts 1/t, norms and the router whole) and the embedding's V·h/t
    h, d_ff, V, E = 4096, 14336, 32000, 8
    layer_split = 2 * h * 4096 + 2 * h * 1024 + E * 3 * h * d_ff
    first = 8 * (Fraction(layer_split, 8) + 2 * h + h * E) + Fraction(V * h, 8)
    assert report["memory"]["first_stage"]["model_states"] == pytest.approx(float(18 * first), rel=1e-12)


def test_iterations_are_whole(capsys):
    report = cli_json(capsys, "estimate", "--model", "llama2-7b", "--gpu", "a100-80gb", "--seq", "4096", "--tokens", "1")
    assert report["time"]["iterations"] == 1


def _llama2_70b_states_and_activations(capsys, *extra):
    t, p, d, s = 8, 4, 2, 4096
    return cli_json(capsys, "estimate", "--model", "llama2-70b", "--gpu", "a100-80gb", "--tp", str(t), "--pp", str(p),
                    "--dp", str(d), "--seq", str(s), "--tokens", str(10**12), *extra)


def test_fewer_micro_batches_than_stages_hold_only_m_in_flight(capsys):
    # 1F1B with m < p: the first stage starts all m micro-batches before its first backward, not p (Narayanan et al.
    # 2021 §2.2): m = 2 on p = 4 stages holds 2 micro-batches of l/p layers; m = 16 holds p = 4
    h, a, g, d_head, d_ff, l = (LLAMA2_70B[k] for k in ("h", "a", "g", "d_head", "d_ff", "l"))
    t, p, s = 8, 4, 4096
    per_token = 8 * h + Fraction(2 * (a * d_head + 2 * g * d_head + a * d_head) + 2 * 3 * d_ff, t)  # selective, TP
    rebuilt = Fraction(2 * a * s * s, t)  # the one layer's core (softmax output) recomputed in the backward
    for m, in_flight in ((2, 2), (3, 3), (16, 4)):
        report = _llama2_70b_states_and_activations(capsys, "--micro-batches", str(m), "--recompute", "selective")
        expected = s * (per_token * Fraction(l, p) + 8) * in_flight + rebuilt  # and each micro-batch's int64 token ids
        assert report["memory"]["first_stage"]["activations"] == pytest.approx(float(expected), rel=1e-12)


def test_zero_stages_traffic_by_hand(capsys):
    # Rajbhandari et al. 2020 §7: ZeRO-1 and ZeRO-2 reduce-scatter the gradients and all-gather the updated
    # parameters, the same 2Ψ as plain DP's all-reduce; ZeRO-3 all-gathers the parameters for the forward and again
    # for the backward and reduce-scatters the gradients: 3Ψ. Each ring moves (d − 1)/d of its buffer per GPU;
    # the buffer is this rank's Ψ/(t·p) parameters in 16 bits (2 bytes)
    t, p, d, params = 8, 4, 2, 68_976_648_192  # Llama-2-70B, counted by hand in the first test
    shard_bytes = Fraction(2 * params, t * p)
    expected = {0: 2, 1: 2, 2: 2, 3: 3}
    for stage, passes in expected.items():
        report = _llama2_70b_states_and_activations(capsys, "--zero", str(stage))
        dp = passes * Fraction(d - 1, d) * shard_bytes
        assert report["comms"]["bytes"]["dp"] == pytest.approx(float(dp), rel=1e-12), stage
    # and their model states on the first stage's GPU (its l/p layers, the RMSNorm scales whole, the embedding's V·h/t):
    # 18 bytes per parameter in Megatron Core, of which ZeRO-1 (the distributed optimizer) splits the 12 of Adam and the
    # master weights, ZeRO-2 also the 4 of the fp32 gradients, ZeRO-3 also the 2 of the weights, over the d replicas
    h, a, g, d_head, d_ff, l, V = (LLAMA2_70B[k] for k in ("h", "a", "g", "d_head", "d_ff", "l", "V"))
    first = Fraction(l, p) * (Fraction(2 * h * a * d_head + 2 * h * g * d_head + 3 * h * d_ff, t) + 2 * h) + Fraction(V * h, t)
    for stage, split in {0: 0, 1: 12, 2: 16, 3: 18}.items():
        report = _llama2_70b_states_and_activations(capsys, "--zero", str(stage))
        states = (18 - split) * first + Fraction(split, d) * first
        assert report["memory"]["first_stage"]["model_states"] == pytest.approx(float(states), rel=1e-12), stage
