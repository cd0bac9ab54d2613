"""The seeds' last chapters: ZeRO-R, scatter/gather, 1-bit Adam, KV paging, batching, 001's pipeline rules, 002's penalty."""

import sympy as sp

from llm_formulas.formulas.vocabulary.examples import example
from helpers import value


def test_zero_r_partitioned_activations_cost_a_twelfth():
    # ZeRO §8: with checkpointing a block moves 12 × seq × hidden; P_a adds one all-gather of
    # seq × hidden, "less than 10 %": 1/12 = 8.3 %
    block = value("optimizations.zero_r.tp_checkpointing", b=1, s=1024, h=1600, q=2)
    extra = value("optimizations.zero_r.partitioned_activations", b=1, s=1024, h=1600, q=2)
    assert block == 12 * 1024 * 1600 * 2 and extra / block == sp.Rational(1, 12)


def test_scatter_gather_sends_a_tth():
    # GPT-3 175B boundary tensor: b=1, s=2048, h=12288 in bf16 = 50,331,648 bytes; t = 8 ranks send 1/8 each
    assert value("optimizations.scatter_gather", b=1, s=2048, h=12288, q=2, t=8) == 50_331_648 // 8


def test_onebit_adam_five_times_needs_a_17_percent_warmup():
    # 004: 32-bit values sent as 1 bit, "up to 5×" less traffic overall: 1/(f + (1 − f)/32) = 5
    # gives f = (32/5 − 1)/31 = 27/155
    assert value("optimizations.onebit_adam.reduction", f_w=sp.Rational(27, 155), k_cmp=32) == 5
    assert value("optimizations.onebit_adam.reduction", f_w=0, k_cmp=32) == 32


def test_kv_waste_and_batching():
    # 004: contiguous reservations waste 60–80 %: sequences using 20–40 % of s_max
    assert value("optimizations.kv.contiguous_waste", s=819, s_max=4096) > sp.Rational(8, 10)
    assert value("optimizations.kv.contiguous_waste", s=1639, s_max=4096) < sp.Rational(6, 10)
    # vLLM blocks of 16 tokens: a 512-token sequence wastes at most 15/512 = 2.9 %
    assert value("optimizations.kv.paged_waste", k_blk=16, s=512) == sp.Rational(15, 512)
    assert value("optimizations.static_batching.utilization", s=1024, s_max=4096) == sp.Rational(1, 4)


def test_001_pipeline_rules():
    # 001: 80 stages hold 2·80 − 1 = 159 micro-batches of activations ("160 times")
    assert value("optimizations.pipeline.naive_in_flight", p=80) == 159
    assert example("S23").claimed == 160
    # B ≥ b·p·d: Megatron's GPT-3 layout p = 8, d = 24, b = 1 needs at least 192 sequences
    assert value("optimizations.pipeline.min_global_batch", b=1, p=8, d=24) == 192


def test_002_export_penalty():
    # 002: an A800 trains about 5 % longer than an A100: 6ΨD/(nXU) × 1.05
    base = value("cluster.training_time", P=7 * 10**9, D=2 * 10**12, n=64, X=312 * 10**12, U="0.4")
    assert value("optimizations.export_penalty", P=7 * 10**9, D=2 * 10**12, n=64, X=312 * 10**12, U="0.4", pi_pen="0.05") == base * sp.Rational(105, 100)


def test_payback_and_tokens_per_dollar():
    # 001: an H100 bought at $40,000 "pays back in about 7 months" at list rental: that is
    # 40000 / (7 × 720 h) = $7.94 per GPU-hour; at DeepSeek-V3's $2 it takes 40000/1440 = 27.8 months
    assert value("cost.payback_months", c_gpu=40000, c_rent=2) == sp.Rational(40000, 1440)
    assert abs(float(value("cost.payback_months", c_gpu=40000, c_rent=sp.Rational(40000, 7 * 720))) - 7) < 1e-12
    # an A100 at U = 0.5 trains a 7B model on 312e12 × 0.5 × 3600 / (6 × 7e9) = 13,371,428.6 tokens
    # per GPU-hour; at $2 an hour that is 6,685,714.3 tokens per dollar
    assert value("cost.tokens_per_dollar", X=312 * 10**12, U="0.5", P=7 * 10**9, c_rent=2) == sp.Rational(312 * 10**12 * 3600, 2 * 6 * 7 * 10**9 * 2)
