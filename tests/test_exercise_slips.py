"""The checker names the slip a reader made: every exercise's usual slips, each worked by hand here (never read
from the bank), answers with units, the lesson's own roundings, and a sentence for whatever cannot be read."""

from __future__ import annotations

from fractions import Fraction

import pytest

from llm_formulas.render.documents.exercises import all_exercises, check

GiB, GB = 2**30, 10**9
LLAMA2_70B_P = 68_976_648_192  # meta-llama/Llama-2-70b-hf, num_parameters()
DAY = 86400

# (exercise, slip name, the slipped answer by hand, in the question's unit)
SLIPPED = [
    ("params.gpt2", "an untied head", 124_439_808 + 50257 * 768),
    ("params.gpt2", "the position table left out", 124_439_808 - 1024 * 768),
    ("params.llama2_7b", "a tied head", 6_738_415_616 - 32000 * 4096),
    ("params.llama2_7b", "an ungated MLP", 6_738_415_616 - 32 * 4096 * 11008),
    ("flops.gpt3", "2ΨD: the forward pass only", 2 * 175e9 * 300e9),
    ("flops.gpt3", "8ΨD: recompute counted", 8 * 175e9 * 300e9),
    ("flops.llama2_7b_forward", "6Ψ per token: a training step", 6 * 6_738_415_616 * 4096 / 1e12),
    ("flops.llama2_7b_forward", "2Ψ per token: the attention scores left out", 2 * 6_738_415_616 * 4096 / 1e12),
    ("memory.training_70b", "the optimizer states forgotten", (4 * 70e9 + 8 * 4096 * 8192 * 80 * (10 + 24)) / GB),
    ("memory.training_70b", "GiB where GB were asked", (16 * 70e9 + 8 * 4096 * 8192 * 80 * (10 + 24)) / GiB),
    ("memory.kv_gqa", "GQA forgotten", 2 * 80 * 64 * 128 * 2 * 4096 * 8 / GiB),  # 80: every query head keeps K and V
    ("memory.kv_gqa", "GB where GiB were asked", 2 * 80 * 8 * 128 * 2 * 4096 * 8 / GB),
    ("memory.kv_gqa", "K without V", 80 * 8 * 128 * 2 * 4096 * 8 / GiB),
    ("memory.kv_gqa", "one sequence, not the batch", "1.25 GiB"),
    ("comms.allreduce", "one pass only", 7 / 8),
    ("comms.allreduce", "2× the buffer", 2.0),
    ("comms.max_tp_4090", "twice too much: q forgotten or 64 GB/s taken as one way", 3 * 64e9 * 8192 / 330e12),
    ("comms.max_tp_4090", "one link direction only", 3 * 32e9 * 8192 / (330e12 * 2)),
    ("cluster.amdahl", "the serial part ignored", 512),
    ("cluster.amdahl", "0.05 read as a fraction, not a percentage", 1 / (0.05 + 0.95 / 512)),
    ("cluster.llama2_70b_days", "the utilization forgotten", 6 * 70e9 * 2e12 / (64 * 312e12) / DAY),
    ("cluster.llama2_70b_days", "8ΨD: recompute counted", 8 * 70e9 * 2e12 / (64 * 312e12 * 0.4) / DAY),
    ("cluster.llama2_70b_days", "hours where days were asked", 6 * 70e9 * 2e12 / (64 * 312e12 * 0.4) / 3600),
    ("inference.stage_latency", "the stages summed", 140),  # 8 stages of 17.5 ms
    ("inference.stage_latency", "1-byte weights", 70e9 / 8 / 1e12 * 1e3),
    ("inference.balance_h100", "the 2 bytes per weight forgotten", 989e12 / (2 * 3350e9)),
    ("inference.balance_h100", "one FLOP per weight per token", 989e12 * 2 / 3350e9),
    ("article_000.training_days", "the recompute forgotten", 6 * 1e12 * 450e9 / (3072 * 312e12 * 0.5) / DAY),
    ("article_000.training_days", "the utilization forgotten", 8 * 1e12 * 450e9 / (3072 * 312e12) / DAY),
    ("article_000.zero3", "stage 1: only the optimizer states partitioned", (4 * 175e9 + 12 * 175e9 / 64) / GB),
    ("article_000.zero3", "stage 2: the weights kept whole", (2 * 175e9 + 14 * 175e9 / 64) / GB),
    ("article_001.kv_cache", "GB where GiB were asked", 2 * 80 * 64 * 128 * 2 * 4096 * 8 / GB),
    ("article_001.kv_cache", "one sequence, not the batch", 10),
    ("article_001.kv_cache", "K without V", 40),
    ("article_001.max_tp_h100", "both link directions as one way", 22),  # Li Bojie (001): "t ≤ 22" from 1100 FLOPs/byte
    ("article_002.utilization", "8ΨD: recompute counted", 8 * 70e9 * 2e12 / (1_720_320 * 3600 * 312e12)),
    ("article_002.utilization", "2ΨD: the forward pass only", 2 * 70e9 * 2e12 / (1_720_320 * 3600 * 312e12)),
    ("article_002.utilization", "a percentage where a fraction was asked", 43.5),
    ("article_002.gpu_hours", "the utilization forgotten", 6 * 34e9 * 5e9 / 312e12 / 3600),
    ("article_002.gpu_hours", "8ΨD: recompute counted", 8 * 34e9 * 5e9 / (312e12 * 0.35) / 3600),
    ("article_004.states", "16 bytes per parameter", 16 * 176_247_271_424 / GB),
    ("article_004.states", "GiB where GB were asked", 20 * 176_247_271_424 / GiB),
    ("article_004.iteration_flops", "the backward pass forgotten", 34.75 / 3),
    # 3 × 70 blocks plus 3 × the logits 2·b·s·h·V, in PFLOP
    ("article_004.iteration_flops", "the logits counted", 34.750 + 3 * 2 * 16 * 2048 * 14336 * 250880 / 1e15),
    ("perf.bubble", "p/m instead of (p − 1)/m", 64 / 512),
    ("perf.bubble", "a percentage where a fraction was asked", "12.3"),
    ("perf.bubble", "m = 3072 micro-batches", 63 / 3072),
    ("utilization.megatron_peak", "a percentage where a fraction was asked", 44),
    ("utilization.megatron_peak", "the sparse peak", 138 / 624),
    ("conventions.megatron_eq4", "6TP: the recompute left out", 6 * 300e9 * 175e9 / (1024 * 140e12) / DAY),
    ("conventions.megatron_eq4", "hours where days were asked", 8 * 300e9 * 175e9 / (1024 * 140e12) / 3600),
    # GPU-hours × 0.4 kW × PUE × 385 g/kWh, in tonnes (10⁶ g) or kilograms
    ("energy.llama2_70b", "the PUE forgotten", 1_720_320 * 0.4 * 385 / 1e6),
    ("energy.llama2_70b", "kilograms where tonnes were asked", 1_720_320 * 0.4 * 1.1 * 385 / 1e3),
    ("cost.deepseek_pretraining", "2,664K read as 2,664", 2664 * 2),
    ("cost.deepseek_pretraining", "millions typed as dollars", 5.328),
    ("reliability.mtbf_2048", "hours where minutes were asked", 30 * 24 / 2048),
    ("reliability.mtbf_2048", "seconds where minutes were asked", 30 * DAY / 2048),
    ("pipeline.bloom_last_stage", "the attention's 2s left out", 250880 / (12 * 14336)),
    ("optimizations.onebit_warmup", "the warm-up ignored", 32),
    ("moe.flops_per_token", "every expert counted", 6 * 46_702_792_704),
    ("moe.flops_per_token", "the forward pass only", 2 * (46_702_792_704 - 32 * 6 * 3 * 4096 * 14336)),
    # the Llama-2-70B base: 525,606,912 parameters in bf16, 68,451,041,280 projections in NF4
    ("precision.qlora_base", "the quantization constants forgotten", (2 * 525_606_912 + 68_451_041_280 / 2) / GB),
    ("precision.qlora_base", "everything in 4 bits", 68_976_648_192 / 2 / GB),
    ("precision.qlora_base", "GiB where GB were asked",
     (2 * 525_606_912 + 68_451_041_280 * (1 / 2 + 1 / 64 + 4 / 16384)) / GiB),
    ("long_context.cp_activations", "c forgotten", 80 * (4 * 64 * 131072 / 8 + 131072 * (8 * 28672 + 4 * 128 * 72 + 10 * 8192) / 8) / GB),
    # without sequence parallelism the 10·h of norms and dropouts stay whole on each of the t GPUs
    ("long_context.cp_activations", "no sequence parallelism",
     80 * (4 * 64 * 16384 / 8 + 16384 * (10 * 8192 + (8 * 28672 + 4 * 128 * 72) / 8)) / GB),
    ("long_context.cp_activations", "GiB where GB were asked",
     80 * (4 * 64 * 16384 / 8 + 16384 * (8 * 28672 + 4 * 128 * 72 + 10 * 8192) / 8) / GiB),
    ("achievable.gemm_time", "at the datasheet peak", 2 * 4096 * 8192 * 7168 / 312e12 * 1e6),
    ("achievable.gemm_time", "the sparse peak",
     (2 * 4096 * 8192 * 7168 / (624e12 * 0.802) + 2 * (4096 * 8192 + 8192 * 7168 + 4096 * 7168) / (2.039e12 * 0.843) + 54.6e-6) * 1e6),
    # Llama-3.1-70B on 8 × 80 GB, 8192 tokens of 16-bit K and V of 8 heads of 128 in 80 layers, split over 8 GPUs
    ("serving.kv_wall", "the weights left out", 80e9 / (8192 * 2 * 80 * 8 * 128 * 2 / 8)),
    ("serving.kv_wall", "GQA forgotten", (80e9 - 2 * 70_553_706_496 / 8) / (8192 * 2 * 80 * 64 * 128 * 2 / 8)),
    # Leviathan et al. 2023, Eq. 1 without the cost of the draft: (1 − α^(γ+1))/(1 − α)
    ("serving.speculative", "the draft's cost forgotten", (1 - 0.8**5) / (1 - 0.8)),
    ("achievable.gemm_time", "the kernel's fixed cost forgotten",
     (2 * 4096 * 8192 * 7168 / (312e12 * 0.802) + 2 * (4096 * 8192 + 8192 * 7168 + 4096 * 7168) / (2.039e12 * 0.843)) * 1e6),
    # issue 32 item 6: the slips the old checker misnamed
    ("achievable.gemm_time", "the compute term alone", 2 * 4096 * 8192 * 7168 / (312e12 * 0.802) * 1e6),
    ("achievable.gemm_time", "the memory term forgotten", (2 * 4096 * 8192 * 7168 / (312e12 * 0.802) + 54.6e-6) * 1e6),
    # Llama's block with its two 1-byte masks at t = 1: b·s·(10h + 8·d_ff + 4·d_head·(a + g)) a layer, 80 of them
    ("memory.training_70b", "Llama's own block where the question counts GPT's",
     (16 * 70e9 + 80 * 8 * 4096 * (10 * 8192 + 8 * 28672 + 4 * 128 * (64 + 8))) / GB),
    ("cluster.llama2_70b_days", "the real parameter count where the question gives 70 × 10⁹",
     6 * LLAMA2_70B_P * 2e12 / (64 * 312e12 * 0.4) / DAY),
    ("serving.kv_wall", "one GPU's share of the cache against all 8 GPUs' memory",
     8 * (80e9 - 2 * 70_553_706_496 / 8) / (8192 * 2 * 80 * 8 * 128 * 2 / 8)),
    ("cost.deepseek_pretraining", "the price forgotten", 2_664_000),
]


def test_every_exercise_lists_its_usual_slips_and_each_is_tested():
    listed = {(e.id, slip.name) for e in all_exercises() for slip in e.slips if not slip.step}
    assert {e.id for e in all_exercises()} <= {exercise for exercise, _ in listed}
    assert listed == {(exercise, name) for exercise, name, _ in SLIPPED}


@pytest.mark.parametrize("exercise_id, name, answer", SLIPPED, ids=[f"{e}:{n}" for e, n, _ in SLIPPED])
def test_the_diagnosis_names_the_slip_made(exercise_id, name, answer):
    verdict = check(exercise_id, answer)
    assert verdict.right is False and verdict.slip == name, verdict.message
    assert name in verdict.message


def test_the_slips_of_the_issue():
    # forgot GQA gives 80 GiB, a factor of 8 that is not bits for bytes; the summed stages' 140 ms neither
    assert "GQA" in check("memory.kv_gqa", 80).message and "bits" not in check("memory.kv_gqa", 80).message
    assert check("inference.stage_latency", 140).slip == "the stages summed"
    # a slip of a step passed by keyword: 2Ψ + 2Ψ = 280 GB of states for 70B parameters
    verdict = check("memory.training_70b", 1010, states=280, activations=730)
    assert verdict.differs == "states" and verdict.slip == "the optimizer states forgotten"


@pytest.mark.parametrize("exercise_id, answer", [
    ("article_001.max_tp_h100", 11),  # 3·900e9·8192/(989e12·2) = 11.18: the essay prints t ≤ 11
    ("perf.bubble", 0.12),  # 63/512 = 0.123
    ("inference.balance_h100", 300),  # 989e12·2/(2·3.35e12) = 295.2
    ("memory.training_70b", "1850 GB"),  # Li Bojie (001): 1850 GB
    ("memory.training_70b", "1.85 TB"),
    ("memory.kv_gqa", "10 GiB"),
    ("memory.kv_gqa", "10.74 GB"),  # the same bytes in decimal units
    ("memory.kv_gqa", "10240 MiB"),
    ("reliability.mtbf_2048", "21 minutes"),  # 30·24·60/2048 = 21.1
    ("reliability.mtbf_2048", "0.35 hours"),
    ("perf.bubble", "12.3 %"),  # a percentage written as one
    ("cost.deepseek_pretraining", "$5.33M"),  # DeepSeek-AI 2024, Table 1: $5.328M
    ("cost.deepseek_pretraining", "5,328,000"),
    ("flops.gpt3", "3.14e23"),  # Brown et al. 2020, Table D.1
    ("article_004.iteration_flops", Fraction(3475, 100)),
])
def test_answers_with_units_and_the_lessons_roundings_are_right(exercise_id, answer):
    assert check(exercise_id, answer).right is True, check(exercise_id, answer).message


@pytest.mark.parametrize("answer, wrong", [(295, True), (290, True), (1000, True), (2000, True)])
def test_the_tolerance_is_the_readers_precision_not_looser(answer, wrong):
    # a balance batch of 295.2: 290 (two digits: 2.9e2) and a round thousand are wrong
    assert (check("inference.balance_h100", answer).right is False) == (answer != 295)


@pytest.mark.parametrize("answer", ["lots", "1850 parsecs", "10 ms", [1, 2], float("nan"), "1e999", "1/0", True, "", "1850 GB GB"])
def test_a_malformed_answer_gets_a_sentence(answer):
    verdict = check("memory.kv_gqa", answer)
    assert verdict.right is None and verdict.message.startswith("Exercise memory.kv_gqa: ") and verdict.message.endswith(".")
    assert "Traceback" not in verdict.message and "Fraction" not in verdict.message


def test_an_unknown_step_or_exercise_gets_a_sentence():
    assert check("memory.kv_gqa", 10, per_layer=3).right is None
    assert "no exercise" in check("memory.nothing", 1).message
