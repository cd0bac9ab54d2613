"""FP8 training, LoRA and QLoRA: against real PEFT models, FlopCounterMode, published figures and hand arithmetic.

Oracles:
- PEFT 0.21 (LoraConfig, get_peft_model) on tiny transformers 5.24 models: trainable parameters, and FLOPs of a
  forward and backward pass counted by torch's FlopCounterMode (eager attention, eager experts);
- PEFT's printed figure for LLaMA-7B with r = 8 on q_proj and v_proj: "trainable params: 4,194,304 || all params:
  6,742,609,920" (Hugging Face PEFT README / quicktour);
- QLoRA (Dettmers et al. 2023) §3: 32/64 = 0.5 bits of constants per parameter, 0.127 with double quantization;
- Megatron/Transformer Engine's FP8 recipe written out tensor by tensor (formulas/topics/precision.py's docstring).
"""

import json
from fractions import Fraction

import peft
import pytest
import torch
from torch.utils.flop_counter import FlopCounterMode

from architecture_configs import build, config_json
from llm_formulas.formulas.reports.estimate import exact, model_values
from llm_formulas.formulas.data.hf_config import read_config
from helpers import cli_json, run, value

MODULES = {"lora_q": "q_proj", "lora_k": "k_proj", "lora_v": "v_proj", "lora_o": "o_proj",
           "lora_gate": "gate_proj", "lora_up": "up_proj", "lora_down": "down_proj"}
CASES = [  # family, config index, targets, rank
    ("llama", 0, ["q_proj", "v_proj", "down_proj"], 4),
    ("llama", 1, list(MODULES.values()), 3),  # GQA (g = 2 of 6 heads)
    ("mistral", 0, ["k_proj", "o_proj", "gate_proj", "up_proj"], 5),
    ("qwen2", 2, ["q_proj", "v_proj"], 4),  # d_head 12 ≠ h/a = 8, QKV biases
    ("mixtral", 0, ["q_proj", "k_proj", "v_proj", "o_proj"], 2),  # attention only: the experts are fused 3-D weights
]


def lora_model(family, index, targets, rank):
    model = build(family, index, "cpu")
    wrapped = peft.get_peft_model(model, peft.LoraConfig(r=rank, target_modules=targets, lora_dropout=0.0))
    wrapped.enable_input_require_grads()  # what prepare_model_for_kbit_training and gradient checkpointing do
    return wrapped.train()


def values(family, index, targets, rank):
    switches = {name: int(module in targets) for name, module in MODULES.items()}
    return model_values(read_config(config_json(family, index)).values) | switches | {"r_lora": rank}


@pytest.mark.parametrize("family, index, targets, rank", CASES)
def test_adapter_count_equals_peft(family, index, targets, rank):
    wrapped = lora_model(family, index, targets, rank)
    trainable = sum(parameter.numel() for parameter in wrapped.parameters() if parameter.requires_grad)
    assert exact("params.lora.total", **values(family, index, targets, rank)) == trainable


@pytest.mark.parametrize("family, index, targets, rank", CASES)
def test_lora_flops_equal_flop_counter(family, index, targets, rank):
    wrapped = lora_model(family, index, targets, rank)
    inputs = values(family, index, targets, rank)
    b, s = 2, 7
    ids = torch.randint(0, inputs["V"], (b, s))
    with FlopCounterMode(display=False) as forward:
        logits = wrapped(input_ids=ids, use_cache=False).logits
    with FlopCounterMode(display=False) as backward:
        logits.sum().backward()
    assert exact("flops.lora.forward", **inputs, b=b, s=s) == forward.get_total_flops()
    assert exact("flops.lora.backward", **inputs, b=b, s=s) == backward.get_total_flops()


def test_llama_7b_r8_is_peft_printed_figure(capsys):
    # 32 layers × 2 projections × r·(d_in + d_out) = 32 · 2 · 8 · (4096 + 4096)
    assert 32 * 2 * 8 * (4096 + 4096) == 4_194_304
    doc = cli_json(capsys, "estimate", "--mfu", "0.5", "--model", "llama-7b", "--gpu", "a100-80gb", "--seq", "2048",
                   "--finetune", "lora", "--lora-rank", "8", "--lora-targets", "q_proj,v_proj")
    assert doc["params"]["trainable"] == 4_194_304
    assert doc["params"]["total"] + doc["params"]["trainable"] == 6_742_609_920  # PEFT's "all params"


def test_qlora_constants_are_the_papers_bits():
    single = value("memory.qlora.bytes_per_weight.single", B_q=64) * 8
    double = value("memory.qlora.bytes_per_weight", B_q=64, B_q2=256) * 8
    assert single - 4 == Fraction(1, 2)  # "32/64 = 0.5 bits per parameter"
    assert round(float(double - 4), 3) == 0.127  # "8/64 + 32/(64·256) = 0.127 bits per parameter"
    assert value("memory.int8.bytes_per_weight", d_in=4096) == 1 + Fraction(4, 4096)  # an fp32 scale per 4096-weight row


def test_qlora_states_of_llama2_7b(capsys):
    doc = cli_json(capsys, "estimate", "--mfu", "0.5", "--model", "llama2-7b", "--gpu", "a100-80gb", "--seq", "4096",
                   "--finetune", "qlora", "--lora-rank", "64",
                   "--lora-targets", "q_proj,k_proj,v_proj,o_proj,gate_proj,up_proj,down_proj")
    h, d_ff, l, total = 4096, 11008, 32, 6_738_415_616
    projections = l * (4 * h * h + 3 * h * d_ff)  # Q, K, V, O are h×h (32 KV heads of 128); gate, up, down h×d_ff
    assert projections == 6_476_005_376 and total - projections == 2 * 32000 * h + (2 * l + 1) * h  # embeddings, head, norms
    adapters = l * 64 * (4 * (h + h) + 3 * (h + d_ff))
    assert doc["params"]["trainable"] == adapters == 159_907_840
    nf4 = Fraction(1, 2) + Fraction(1, 64) + Fraction(4, 64 * 256)  # 4 bits, an 8-bit constant per 64, fp32 per 16384
    expected = projections * nf4 + 2 * (total - projections) + 16 * adapters  # fp32 adapter, gradient, Adam m and v
    assert doc["memory"]["model_states"] == pytest.approx(float(expected), rel=1e-12)
    assert 6.4e9 < expected < 6.5e9


def test_lora_on_a_bf16_base_keeps_no_gradients_of_it(capsys):
    doc = cli_json(capsys, "estimate", "--mfu", "0.5", "--model", "llama2-7b", "--gpu", "a100-80gb", "--seq", "4096", "--finetune", "lora")
    adapters = 32 * 16 * 2 * (4096 + 4096)  # default r = 16 on q_proj and v_proj
    assert doc["memory"]["model_states"] == 2 * 6_738_415_616 + 16 * adapters


def test_fp8_states_and_activations(capsys):
    t, s, l, h, a, d_head, d_ff = 8, 4096, 80, 8192, 64, 128, 28672
    argv = ["estimate", "--mfu", "0.5", "--model", "llama2-70b", "--gpu", "h100-sxm", "--tp", str(t), "--seq", str(s)]
    bf16, fp8 = cli_json(capsys, *argv), cli_json(capsys, *argv, "--precision", "fp8")
    params = bf16["params"]["total"]
    # the FP8 copy and its transpose: 2 bytes per parameter of the t-way shard, beside the bf16 states
    assert fp8["memory"]["model_states"] - bf16["memory"]["model_states"] == pytest.approx(2 * params / t, rel=1e-12)
    # one byte saved per value of the QKV and MLP inputs (h each, whole on every TP rank) and of the projection
    # (a·d_head/t) and down-projection (d_ff/t) inputs, per token and layer
    saved_per_token = 2 * h + (a * d_head + d_ff) // t
    assert saved_per_token == 20992
    assert bf16["memory"]["activations"] - fp8["memory"]["activations"] == pytest.approx(saved_per_token * s * l, rel=1e-9)


def test_fp8_saves_only_in_the_rebuilt_layer_when_layers_are_recomputed(capsys):
    # full recompute keeps each layer's bf16 input; only the one layer the backward rebuilds stores its GEMM inputs,
    # one byte less each in FP8: the QKV and MLP inputs (h each) and the projection and down-projection inputs
    # (a·d_head + d_ff), Llama-2-7B at t = 1
    s, h, a, d_head, d_ff = 4096, 4096, 32, 128, 11008
    argv = ["estimate", "--mfu", "0.5", "--model", "llama2-7b", "--gpu", "h100-sxm", "--seq", str(s), "--recompute", "full"]
    bf16, fp8 = (cli_json(capsys, *argv, *extra)["memory"]["activations"] for extra in ((), ("--precision", "fp8")))
    assert bf16 - fp8 == (2 * h + a * d_head + d_ff) * s


@pytest.mark.parametrize("argv, message", [
    (["--finetune", "lora", "--lora-targets", "c_attn"], "'c_attn' is not a projection of llama"),
    (["--lora-rank", "8"], "--lora-rank needs --finetune lora or qlora"),
    (["--finetune", "qlora", "--base-bits", "8"], "QLoRA's base is 4-bit NF4"),
    (["--finetune", "lora", "--lora-rank", "0"], "must be positive"),
])
def test_bad_lora_input_is_one_line(capsys, argv, message):
    code, out, err = run(capsys, "estimate", "--mfu", "0.5", "--model", "llama2-7b", "--gpu", "a100-80gb", "--seq", "4096", *argv)
    assert code == 2 and out == "" and err.count("\n") == 1 and message in err


def test_experts_are_not_lora_targets(capsys, tmp_path):
    path = tmp_path / "mixtral.json"
    path.write_text(json.dumps(config_json("mixtral", 0)))
    code, out, err = run(capsys, "estimate", "--mfu", "0.5", "--hf-config", path, "--gpu", "a100-80gb", "--seq", "64",
                         "--finetune", "lora", "--lora-targets", "q_proj,gate_proj")
    assert code == 2 and "'gate_proj' is not a projection of mixtral" in err
    code, out, err = run(capsys, "estimate", "--mfu", "0.5", "--hf-config", path, "--gpu", "a100-80gb", "--seq", "64", "--finetune", "qlora")
    assert code == 2 and "quantized base of a mixture-of-experts model" in err


def test_plan_with_lora_fits_where_full_training_does_not(capsys):
    argv = ["plan", "--mfu", "0.5", "--model", "llama2-13b", "--gpu", "rtx4090", "--gpus", "1", "--global-batch", "1", "--seq", "512"]
    assert cli_json(capsys, *argv)["ranked"] == []  # 16 bytes × 13B parameters ≫ 24 GB
    best = cli_json(capsys, *argv, "--finetune", "qlora")["ranked"]
    assert best and best[0]["memory_total"] < 24e9  # 13B at ≈ 4.13 bits ≈ 6.7 GB
