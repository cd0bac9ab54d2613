"""Inference: roofline, per-token latency, pipeline and TP traffic, the KV cache's savings (001).

A decoding step reads every weight once (q_Ψ·Ψ bytes) and does 2Ψ FLOPs per
sequence: with batch b its arithmetic intensity is 2b/q_Ψ FLOP per byte. On n
GPUs the step takes q_Ψ·Ψ/(n·W_mem) when memory-bound and b·2Ψ/(n·X) when
compute-bound; they meet at the balance batch X/W_mem (for q_Ψ = 2). Pipeline
stages run one after another, so the latency does not shrink with p, and each
stage boundary carries b·h·q bytes per token. Tensor parallelism all-reduces
b·h values twice per layer per token. Without a KV cache, a step with s earlier
tokens would recompute K and V: 2·2·h²·s·l·b FLOPs, reading 2h² weights per
token per layer.
"""

from __future__ import annotations

import sympy as sp

from llm_formulas.formulas.vocabulary.catalogue import Condition, Source, formula
from llm_formulas.formulas.vocabulary.examples import worked_example
from llm_formulas.formulas.vocabulary.symbols import P, W_link, W_mem, X, b, c_flop, c_mac, c_step, h, l, n, p, q, q_w, s, tau, u_param, u_seq

LI_BOUND = Source("001", "inference: compute- or memory-bound")
LI_PIPELINE = Source("001", "inference: pipeline parallelism and network latency")
LI_KV = Source("001", "KV cache: computation saved")
WILLIAMS = Source("williams2009", "the roofline")

DECODE = Condition("decode step: weights read once per step, KV-cache and activation traffic left out (001)")

intensity = formula(
    "inference.arithmetic_intensity",
    b * c_step * c_flop / q_w,
    "FLOP/byte",
    "FLOPs per byte of weights read in a decoding step of batch b: 2b/q_Ψ",
    sources=[LI_BOUND],
    conditions=[DECODE],
    related=["inference.roofline", "inference.balance_batch"],
    symbol_latex=r"I",
)
roofline = formula(
    "inference.roofline",
    sp.Min(X, intensity.part * W_mem),
    "FLOP/second",
    "attainable FLOP/s of one GPU at intensity I: the lower of the compute roof X and the memory slope I·W_mem",
    sources=[WILLIAMS, LI_BOUND],
    conditions=[DECODE],
    related=["inference.arithmetic_intensity"],
    symbol_latex=r"X_{attainable}",
)
memory_bound = formula(
    "inference.latency.memory_bound",
    q_w * P / (n * W_mem),
    "second",
    "time of one decoding step when memory-bound: each of n GPUs reads its q_Ψ·Ψ/n bytes of weights",
    sources=[LI_BOUND],
    conditions=[DECODE],
    related=["inference.latency.compute_bound"],
    symbol_latex=r"T_{mem}",
)
compute_bound = formula(
    "inference.latency.compute_bound",
    b * c_step * c_flop * P / (n * X),
    "second",
    "time of one decoding step when compute-bound: b tokens of 2Ψ FLOPs over n GPUs",
    sources=[LI_BOUND],
    conditions=[DECODE],
    related=["inference.latency.memory_bound", "flops.inference.per_token"],
    symbol_latex=r"T_{compute}",
)
step_latency = formula(
    "inference.latency.step",
    sp.Max(memory_bound.part, compute_bound.part),
    "second",
    "time of one decoding step: the slower of reading the weights and doing the FLOPs",
    sources=[LI_BOUND, WILLIAMS],
    conditions=[DECODE],
    related=["inference.latency.memory_bound", "inference.latency.compute_bound"],
    symbol_latex=r"T_{step}",
)
balance_batch = formula(
    "inference.balance_batch",
    q_w * X / (c_step * c_flop * W_mem) * u_seq,
    "sequence",
    "batch at which a decoding step is equally memory- and compute-bound: X/W_mem for 2-byte weights",
    sources=[LI_BOUND],
    conditions=[DECODE],
    related=["inference.latency.memory_bound", "inference.latency.compute_bound"],
    symbol_latex=r"b^{*}",
)
pipeline_latency = formula(
    "inference.latency.pipeline",
    q_w * P / W_mem,
    "second",
    "memory-bound per-token latency through p pipeline stages: the stages run in series, so p does not help",
    sources=[LI_BOUND],
    conditions=[DECODE],
    related=["inference.latency.memory_bound"],
    symbol_latex=r"T_{pipe}",
)
stage_traffic = formula(
    "inference.pipeline.stage_traffic",
    b * h * q,
    "byte",
    "bytes one pipeline boundary carries per decoding step: b·h activations",
    sources=[LI_PIPELINE],
    related=["comms.pp.per_microbatch"],
    symbol_latex=r"V_{stage}",
)
stage_transfer = formula(
    "inference.pipeline.transfer_time",
    b * h * q / W_link,
    "second",
    "time to send one boundary's activations over a link of W_link",
    sources=[LI_PIPELINE],
    related=["inference.pipeline.stage_traffic"],
    symbol_latex=r"T_{hop}",
)
network_latency = formula(
    "inference.latency.pipeline.network",
    q_w * P / W_mem + p * b * h * q / W_link,
    "second",
    "per-token latency of p pipeline stages, memory-bound, with p network hops per token as 001 counts them",
    sources=[LI_PIPELINE],
    conditions=[DECODE],
    related=["inference.latency.pipeline", "inference.pipeline.transfer_time"],
    symbol_latex=r"T_{pipe}^{net}",
)
max_batch = formula(
    "inference.pipeline.max_batch",
    W_link * (tau - q_w * P / W_mem) / (p * h * q) * u_seq,
    "sequence",
    "largest batch whose per-token latency through p stages and their links stays within τ",
    sources=[LI_PIPELINE],
    conditions=[DECODE, Condition("τ exceeds the compute latency q_Ψ·Ψ/W_mem", sp.StrictGreaterThan(tau, q_w * P / W_mem))],
    related=["inference.latency.pipeline.network"],
    symbol_latex=r"b_{max}",
)
tp_traffic = formula(
    "inference.tp.traffic_per_token",
    2 * l * b * h * q,
    "byte",
    "TP all-reduce volume per GPU per decoding step: 2 all-reduces of b·h values per layer (forward only)",
    sources=[Source("000", "§3.3.2.1, tensor parallelism"), LI_PIPELINE],
    related=["comms.tp.per_microbatch"],
    symbol_latex=r"V_{TP}^{token}",
)
kv_flops = formula(
    "inference.kv_recompute.flops",
    2 * c_mac * h**2 * s * l * b,
    "FLOP",
    "FLOPs a KV cache saves in one decoding step with s earlier tokens: K and V projections of every earlier token",
    sources=[LI_KV],
    related=["flops.gemm"],
    symbol_latex=r"F_{KV}",
)
kv_reads = formula(
    "inference.kv_recompute.reads",
    2 * h**2 * s * l * u_param,
    "parameter",
    "weight values read to recompute K and V of s earlier tokens in l layers, reloading the K and V matrices per token (001)",
    sources=[LI_KV],
    related=["inference.kv_recompute.flops"],
    symbol_latex=r"R_{KV}",
)

# --- worked examples (SOURCES.md) ---------------------------------------------------
_S14 = Source("001", "inference: LLaMA-2 70B on 8 × RTX 4090")
_S15 = Source("001", "inference: pipeline over PCIe and 1 Gbps Ethernet")
_LLAMA70 = {"q_w": 2, "P": 70 * 10**9}
worked_example(
    "S14a",
    "LLaMA-2 70B on 8 × RTX 4090 (1 TB/s), batch 1: per stage per token",
    _S14,
    "inference.latency.memory_bound",
    {**_LLAMA70, "n": 8, "W_mem": 10**12},
    claimed="0.0175",
    claimed_text="17.5 ms per stage per token",
    scale=sp.Rational(1, 1000),
    scale_name="ms",
)
worked_example(
    "S14b",
    "LLaMA-2 70B through 8 pipeline stages of RTX 4090: per token",
    _S14,
    "inference.latency.pipeline",
    {**_LLAMA70, "W_mem": 10**12},
    claimed="0.14",
    claimed_text="0.14 s per token (7 tokens/s)",
)
worked_example(
    "S14c",
    "LLaMA-2 70B on 8 × RTX 4090 (330 TFLOPS), batch 1024: compute-bound",
    _S14,
    "inference.latency.compute_bound",
    {"b": 1024, "P": 70 * 10**9, "n": 8, "X": 330 * 10**12},
    claimed="0.0543",
    claimed_text="0.0543 s per token",
    scale=sp.Rational(1, 1000),
    scale_name="ms",
)
for _case, _gpu, _flops, _bandwidth, _claimed in (("S14d", "RTX 4090", 330, 1, 330), ("S14e", "H100", 989, "3.35", 295)):
    worked_example(
        _case,
        f"Balance batch of the {_gpu} ({_flops} TFLOPS, {_bandwidth} TB/s)",
        _S14,
        "inference.balance_batch",
        {"q_w": 2, "X": _flops * 10**12, "W_mem": sp.Rational(str(_bandwidth)) * 10**12},
        claimed=_claimed,
        claimed_text=f"batch {_claimed}",
    )
for _case, _batch, _claimed, _text in (("S15a", 8, 128 * 1024, "128 KB"), ("S15b", 330, "5.28e6", "5.28 MB (16 KB × 330)")):
    worked_example(
        _case,
        f"Stage-boundary traffic per token, h = 8192, batch {_batch}",
        _S15,
        "inference.pipeline.stage_traffic",
        {"b": _batch, "h": 8192, "q": 2},
        claimed=_claimed,
        claimed_text=_text,
        slip="001 multiplies 16 KB (16384 bytes) by 330 and reads 5280 KB as 5.28 MB; it is 5.41 MB" if _batch == 330 else "",
    )
worked_example(
    "S15c",
    "128 KB over PCIe Gen4 x16 (32 GB/s one way)",
    _S15,
    "inference.pipeline.transfer_time",
    {"b": 8, "h": 8192, "q": 2, "W_link": 32 * 10**9},
    claimed="4e-6",
    claimed_text="4 µs",
    scale=sp.Rational(1, 10**6),
    scale_name="µs",
)
worked_example(
    "S15d",
    "Batch 330 over 1 Gbps Ethernet (125 MB/s)",
    _S15,
    "inference.pipeline.transfer_time",
    {"b": 330, "h": 8192, "q": 2, "W_link": 125 * 10**6},
    claimed="0.041",
    claimed_text="41 ms",
    scale=sp.Rational(1, 1000),
    scale_name="ms",
    slip="5 406 720 bytes at 10⁹ bit/s take 43.25 ms; 001's 41 ms mixes binary and decimal units",
)
worked_example(
    "S15e",
    "Largest batch for 5 tokens/s over 8 hosts on 1 Gbps",
    _S15,
    "inference.pipeline.max_batch",
    {**_LLAMA70, "W_mem": 10**12, "tau": "0.2", "p": 8, "h": 8192, "q": 2, "W_link": 125 * 10**6},
    claimed=60,
    claimed_text="batch ≤ 60",
    slip="001 takes 1 Gbps as 128 MB/s and 16 KB as 16 000 bytes; at 125 MB/s and 16 384 bytes the bound is 57.2",
)
_S13 = Source("001", "KV cache: 640 T FLOPs, 40 T reads")
worked_example(
    "S13a",
    "K, V recompute a KV cache avoids: LLaMA-2 70B, 4096 tokens, batch 8",
    _S13,
    "inference.kv_recompute.flops",
    {"h": 8192, "s": 4096, "l": 80, "b": 8},
    claimed=640 * 2**40,
    claimed_text="640 Tflops (binary T: 640 × 2⁴⁰)",
    scale=2**40,
    scale_name="Ti FLOP",
)
worked_example(
    "S13b",
    "Weight reads of that recompute at the last of 4096 tokens",
    _S13,
    "inference.kv_recompute.reads",
    {"h": 8192, "s": 4096, "l": 80},
    claimed=40 * 2**40,
    claimed_text="40 T reads of 2 bytes (binary T: 40 × 2⁴⁰)",
    scale=2**40,
    scale_name="Ti reads",
)
