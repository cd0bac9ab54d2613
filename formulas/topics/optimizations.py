"""Optimizations of the seeds' last chapters: ZeRO-R traffic, 1-bit Adam, paged KV cache, batching, export GPUs.

- ZeRO-R (Rajbhandari et al. 2020 §6): with activation checkpointing, a Megatron block
  all-reduces its b·s·h activations twice forward, twice in the recomputed forward and
  twice backward, each ring all-reduce moving about twice the message: 12·b·s·h values;
  partitioned activation checkpointing (P_a) adds one all-gather of b·s·h: 1/12 more.
- Megatron's scatter/gather (Narayanan et al. 2021 §4.1): the t ranks of a stage send
  1/t of the b·s·h boundary tensor each over the network and all-gather it over NVLink.
- 1-bit Adam (004; Tang et al. 2021): a warm-up share f_w uncompressed, the rest k_cmp
  times smaller: 1/(f_w + (1 − f_w)/k_cmp) less traffic overall.
- KV cache (004): reserving s_max tokens for a sequence that holds s wastes 1 − s/s_max;
  paging in blocks of k tokens wastes at most k − 1 tokens, (k − 1)/s of what it holds.
- Static batching (004) keeps a slot busy s of s_max steps; continuous batching refills it.
- 001: a naive pipeline holds 2p − 1 micro-batches of activations at its first stage; a
  pipeline stays full only while each of the p·d replicas' stages has a micro-batch: B ≥ b·p·d.
- 002: an export GPU (A800, H800) trains (1 + π) times longer than the GPU it is cut from.
"""

from __future__ import annotations

from llm_formulas.formulas.vocabulary.catalogue import Source, formula
from llm_formulas.formulas.vocabulary.examples import worked_example
from llm_formulas.formulas.vocabulary.symbols import (
    D, P, U, X, a, b, c_flop, d, f_w, h, k_blk, k_cmp, n, p, pi_pen, q, s, s_max, t,
)

KORTHIKANTI = Source("korthikanti2022", "§4.2.2, selective activation recomputation")
ZERO = Source("rajbhandari2020", "§6.1 and §8, P_a")
NARAYANAN = Source("narayanan2021", "§4.1, scatter/gather")
SLIDES = Source("004", "optimizations: 1-bit Adam, batching, KV cache paging")
TANG = Source("tang2021", "§4")
VLLM = Source("kwon2023", "§4.2")
LI = Source("001", "pipeline parallelism: 2N − 1 activations; the batch must cover the pipeline")
EXPORT = Source("002", "A100 against A800, H100 against H800")

selective_saving = formula(
    "optimizations.selective_recompute.saving",
    5 * a * s / (34 * h + 5 * a * s),
    "1",
    "share of a layer's activations selective recompute drops (tensor + sequence parallel): 5as/h of 34 + 5as/h",
    sources=[KORTHIKANTI],
    related=["memory.activations.layer.tp_sp", "memory.activations.layer.selective_sp"],
    symbol_latex=r"\sigma_{sel}",
)
tp_checkpointing = formula(
    "optimizations.zero_r.tp_checkpointing",
    12 * b * s * h * q,
    "byte",
    "tensor-parallel traffic of one block with activation checkpointing: 6 all-reduces of b·s·h, each moving about 2×",
    sources=[ZERO],
    symbol_latex=r"V_{MP}",
)
partitioned_activations = formula(
    "optimizations.zero_r.partitioned_activations",
    b * s * h * q,
    "byte",
    "extra traffic of ZeRO-R's partitioned activation checkpointing: one all-gather of a block's b·s·h input",
    sources=[ZERO],
    related=["optimizations.zero_r.tp_checkpointing"],
    symbol_latex=r"V_{P_a}",
)
scatter_gather = formula(
    "optimizations.scatter_gather",
    b * s * h * q / t,
    "byte",
    "bytes each of a stage's t ranks sends to the next stage with Megatron's scatter/gather (b·s·h/t instead of b·s·h)",
    sources=[NARAYANAN],
    related=["comms.pp.per_microbatch"],
    symbol_latex=r"V_{pp}^{sg}",
)
onebit = formula(
    "optimizations.onebit_adam.reduction",
    1 / (f_w + (1 - f_w) / k_cmp),
    "1",
    "how many times less 1-bit Adam communicates: a warm-up share f_w uncompressed, the rest k_cmp times smaller",
    sources=[TANG, SLIDES],
    symbol_latex=r"R_{1bit}",
)
contiguous_waste = formula(
    "optimizations.kv.contiguous_waste",
    1 - s / s_max,
    "1",
    "share of a contiguous KV reservation left unused: s of s_max tokens held",
    sources=[SLIDES, VLLM],
    symbol_latex=r"w_{contig}",
)
paged_waste = formula(
    "optimizations.kv.paged_waste",
    (k_blk - 1) / s,
    "1",
    "at most this share of a paged KV cache is unused: under one block of k tokens per sequence of s",
    sources=[VLLM, SLIDES],
    related=["optimizations.kv.contiguous_waste"],
    symbol_latex=r"w_{paged}",
)
static_batching = formula(
    "optimizations.static_batching.utilization",
    s / s_max,
    "1",
    "busy share of a slot under static batching: a sequence of s steps waits for the longest, s_max",
    sources=[SLIDES],
    symbol_latex=r"u_{static}",
)
naive_in_flight = formula(
    "optimizations.pipeline.naive_in_flight",
    2 * p - 1,
    "1",
    "micro-batches whose activations a naive pipeline's first stage holds: each waits 2p − 2 rounds for its backward",
    sources=[LI],
    related=["memory.activations.1f1b"],
    symbol_latex=r"N_{flight}",
)
min_global_batch = formula(
    "optimizations.pipeline.min_global_batch",
    b * p * d,
    "1",
    "smallest global batch that keeps every stage of the d replicas busy: one micro-batch per stage, B ≥ b·p·d",
    sources=[LI],
    related=["cluster.bubble"],
    symbol_latex=r"B_{min}",
)
export_penalty = formula(
    "optimizations.export_penalty",
    3 * c_flop * P * D * (1 + pi_pen) / (n * X * U),
    "second",
    "training time on an export GPU (A800, H800): 6ΨD/(n·X·U) stretched by the cut link, (1 + π)",
    sources=[EXPORT],
    related=["cluster.training_time"],
    symbol_latex=r"T_{export}",
)

worked_example(
    "S23",
    "a naive pipeline of 80 stages, one layer each (LLaMA-2 70B): micro-batches of activations at the first stage",
    LI,
    "optimizations.pipeline.naive_in_flight",
    {"p": 80},
    claimed=160,
    claimed_text="80 × 2 = 160 rounds of activations, 160 times as much",
    slip="001 rounds 2N − 1 = 159 to 2N",
)
