"""``llm-formulas estimate``: the report equals the catalogue's formulas evaluated one by one."""

from fractions import Fraction

import pytest

from render.cli import main
from helpers import cli_json


def formula(capsys, formula_id, **values):
    """One catalogue formula through the public `eval` command, exactly."""
    doc = cli_json(capsys, "eval", formula_id, *(f"{k}={v}" for k, v in values.items()))
    return Fraction(doc["exact"])


LLAMA2_70B = dict(h=8192, a=64, g=8, d_head=128, l=80)  # Touvron et al. 2023 Table 1 / config.json
A100_80GB = dict(X=312 * 10**12, W_mem=2039 * 10**9, W_link=600 * 10**9, M_gpu=80 * 10**9)  # NVIDIA A100 datasheet


def test_llama2_70b_report_equals_the_catalogue(capsys):
    t, p, d, b, m, s, tokens = 8, 4, 2, 1, 16, 4096, 2 * 10**12
    report = cli_json(capsys, "estimate", "--model", "llama2-70b", "--gpu", "a100-80gb", "--tp", str(t), "--pp", str(p),
                      "--dp", str(d), "--micro-batches", str(m), "--seq", str(s), "--tokens", str(tokens))
    params = cli_json(capsys, "params", "--model", "llama2-70b")["total"]
    assert params == 68_976_648_192  # Llama-2-70B as transformers builds it
    assert report["params"]["total"] == params

    flops = cli_json(capsys, "flops", "--model", "llama2-70b", "--batch", str(b * m * d), "--seq", str(s))
    assert report["flops"]["forward"] == flops["forward"] and report["flops"]["training"] == flops["training"]

    states = formula(capsys, "memory.zero", P=params, t=t, p=p)
    per_layer = formula(capsys, "memory.activations.layer.selective", b=b, s=s, h=LLAMA2_70B["h"], t=t)
    activations = per_layer * LLAMA2_70B["l"] // p * min(p, m)  # 1F1B: the first stage holds min(p, m) micro-batches
    assert report["memory"]["model_states"] == pytest.approx(float(states), rel=1e-12)
    assert report["memory"]["activations"] == pytest.approx(float(activations), rel=1e-12)
    assert report["memory"]["fits"] == (states + activations <= A100_80GB["M_gpu"])

    tp_bytes = formula(capsys, "comms.tp.sent_per_microbatch", b=b, s=s, h=LLAMA2_70B["h"], l=LLAMA2_70B["l"], t=t, p=p, q=2) * m
    pp_bytes = formula(capsys, "comms.pp.per_iteration.interleaved", b=b, s=s, h=LLAMA2_70B["h"], m=m, q=2, v=1)
    dp_bytes = formula(capsys, "comms.dp.sent_per_iteration", P=params, t=t, p=p, d=d, q_w=2)
    assert report["comms"]["bytes"] == pytest.approx({"tp": float(tp_bytes), "pp": float(pp_bytes), "dp": float(dp_bytes)}, rel=1e-12)
    # NVIDIA's 600 GB/s counts both directions; a ring sends at 300 GB/s while it receives at 300
    assert report["comms"]["seconds"]["tp"] == pytest.approx(float(tp_bytes / (A100_80GB["W_link"] / 2)), rel=1e-12)
    assert report["comms"]["seconds"]["dp"] == pytest.approx(float(dp_bytes / (25 * 10**9)), rel=1e-12)  # --network default

    bubble = formula(capsys, "cluster.bubble", p=p, m=m)
    assert report["time"]["bubble"] == pytest.approx(float(bubble), rel=1e-12)
    compute = Fraction(flops["training"] + report["flops"]["recomputed"]) / (t * p * d * A100_80GB["X"] * Fraction(1, 2))
    assert report["time"]["compute_seconds"] == pytest.approx(float(compute), rel=1e-12)
    ideal = formula(capsys, "cluster.training_time", n=t * p * d, P=params, D=tokens, X=A100_80GB["X"], U="0.5")
    assert report["time"]["ideal_days"] == pytest.approx(float(ideal / 86400), rel=1e-12)

    kv = formula(capsys, "memory.kv_cache.per_sequence", s=s, g=LLAMA2_70B["g"], d_head=LLAMA2_70B["d_head"], l=LLAMA2_70B["l"], q=2)
    assert kv == 1_342_177_280  # 1.25 GiB: 2 × 80 layers × 8 KV heads × 128 × 4096 tokens × 2 bytes
    assert report["inference"]["kv_cache_per_sequence"] == kv
    latency = formula(capsys, "inference.latency.memory_bound", n=t * p, P=params, W_mem=A100_80GB["W_mem"], q_w=2)
    assert report["inference"]["token_latency"] == pytest.approx(float(latency), rel=1e-12)


# 000 §4.1.2 (SOURCES.md S6): the article's three layouts, each in its two "typical" settings: (1) ZeRO-1, selective
# recompute, sequence parallel; (2) no ZeRO, no recompute. Its Table 10 was lost: each must produce a full report, and
# setting (1), the one the article recommends, must fit an 80 GB A100.
S6 = [
    ("llama-13b", dict(tp=2, pp=1, dp=212, gb=1272, seq=4096)),
    ("llama-65b", dict(tp=4, pp=4, dp=132, gb=2112, seq=2048)),
    ("gpt3-175b", dict(tp=8, pp=8, dp=18, gb=1152, seq=2048)),
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
    if setting == "zero1-selective-sp":
        assert report["memory"]["fits"] is True
    else:  # without ZeRO or recompute the activations of a whole micro-batch stack up
        assert report["memory"]["activations"] > report["memory"]["model_states"] / 10
    for dim in ("tp", "dp"):
        assert report["comms"]["bytes"][dim] > 0
    assert 0 < report["time"]["training_days"] < 365


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
        (["--gpu", "b200"], "invalid choice"),
    ],
)
def test_invalid_layouts_name_the_rule(capsys, extra, rule):
    argv = ["estimate", "--model", "llama2-70b", "--seq", "4096"]
    if "--gpu" not in extra:
        argv += ["--gpu", "a100-80gb"]
    code = main(argv + extra)
    out, err = capsys.readouterr()
    assert code == 2 and out == "" and err.count("\n") == 1 and rule in err
