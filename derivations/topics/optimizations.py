"""Proofs of the optimization formulas (ZeRO-R, scatter/gather, 1-bit Adam, KV paging, batching, 001, 002)."""

from __future__ import annotations

import sympy as sp

from llm_formulas.derivations.vocabulary.engine import Derivation
from llm_formulas.derivations.vocabulary.proof import much_greater
from llm_formulas.formulas.vocabulary.catalogue import get
from llm_formulas.formulas.topics.optimizations import EXPORT, KORTHIKANTI, LI, NARAYANAN, SLIDES, TANG, VLLM, ZERO
from llm_formulas.formulas.vocabulary.symbols import R_cmp, b, d, f_w, h, k_blk, k_cmp, m, n, p, pi_pen, q, s, s_max, t, x_msg


def selective_saving() -> Derivation:
    d_ = Derivation("optimizations.selective_recompute.saving", "What selective recompute saves", (KORTHIKANTI,))
    full = get("memory.activations.layer.tp_sp").part
    kept = get("memory.activations.layer.selective_sp").part
    d_.defines("σ", (full - kept) / full, "the share of the tensor + sequence parallel layer's bytes that selective recompute does not keep")
    d_.concludes("optimizations.selective_recompute.saving", "sbh/t cancels")
    return d_


def tp_checkpointing() -> Derivation:
    d_ = Derivation("optimizations.zero_r.tp_checkpointing", "TP traffic of a block with activation checkpointing", (ZERO,))
    ring = get("comms.collective.allreduce").dimensioned.subs({x_msg: b * s * h * q, n: t})
    d_.defines("V_ring", 6 * ring, "2 all-reduces forward, 2 in the recomputed forward, 2 backward, each of b·s·h values")
    d_.approximates("12bshq", 12 * b * s * h * q, "ZeRO counts each ring all-reduce as twice the message",
                    condition=much_greater(t, 1), dropped=-12 * b * s * h * q / t)
    d_.concludes("optimizations.zero_r.tp_checkpointing")
    return d_


def partitioned_activations() -> Derivation:
    d_ = Derivation("optimizations.zero_r.partitioned_activations", "ZeRO-R's P_a traffic", (ZERO,))
    d_.defines("V_Pa", b * s * h * q, "the checkpointed input of a block, partitioned over the t ranks, is all-gathered once for its recompute")
    d_.concludes("optimizations.zero_r.partitioned_activations")
    d_.defines("share", get("optimizations.zero_r.partitioned_activations").part / get("optimizations.zero_r.tp_checkpointing").part,
               "against the block's TP traffic")
    d_.equals("1/12", sp.Rational(1, 12), "under ZeRO's 'less than 10 %' of the MP traffic", aside=True)
    return d_


def scatter_gather() -> Derivation:
    d_ = Derivation("optimizations.scatter_gather", "Megatron's scatter/gather between stages", (NARAYANAN,))
    whole = d_.defines("V_pp", b * s * h * q, "the boundary tensor, identical on the t ranks of a stage (TP replicates it)")
    d_.defines("V_sg", whole / t, "each rank sends its 1/t slice; the next stage all-gathers the slices over NVLink")
    d_.concludes("optimizations.scatter_gather")
    return d_


def onebit() -> Derivation:
    d_ = Derivation("optimizations.onebit_adam.reduction", "1-bit Adam's traffic", (TANG, SLIDES))
    d_.defines("V", f_w + (1 - f_w) / k_cmp, "traffic relative to uncompressed: the warm-up at full size, the rest 1/k_cmp")
    d_.defines("R", 1 / (f_w + (1 - f_w) / k_cmp), "the reduction is its inverse")
    d_.concludes("optimizations.onebit_adam.reduction")
    solutions = sp.solve(sp.Eq(get("optimizations.onebit_adam.reduction").dimensioned, R_cmp), f_w)
    d_.solves("f_w", solutions[0], "SymPy solves R(f_w) = R for the warm-up share a reduction implies", unknown=f_w, target=R_cmp, of="R")
    d_.equals("(k/R − 1)/(k − 1)", (k_cmp / R_cmp - 1) / (k_cmp - 1), "004's 5× at 32 → 1 bit needs f_w = 27/155 ≈ 17 %", aside=True)
    return d_


def contiguous_waste() -> Derivation:
    d_ = Derivation("optimizations.kv.contiguous_waste", "Waste of a contiguous KV reservation", (SLIDES, VLLM))
    d_.defines("w", (s_max - s) / s_max, "s_max − s reserved tokens never written, of s_max")
    d_.concludes("optimizations.kv.contiguous_waste")
    return d_


def paged_waste() -> Derivation:
    d_ = Derivation("optimizations.kv.paged_waste", "Waste of a paged KV cache", (VLLM, SLIDES))
    d_.defines("w_max", (k_blk - 1) / s, "only the last block of a sequence is partly empty: at most k − 1 of its tokens, over s held")
    d_.concludes("optimizations.kv.paged_waste")
    return d_


def static_batching() -> Derivation:
    d_ = Derivation("optimizations.static_batching.utilization", "Static batching keeps slots idle", (SLIDES,))
    d_.defines("u", s / s_max, "a slot decodes s steps and idles s_max − s waiting for the batch's longest sequence")
    d_.concludes("optimizations.static_batching.utilization")
    return d_


def naive_in_flight() -> Derivation:
    d_ = Derivation("optimizations.pipeline.naive_in_flight", "001: 2N − 1 activations at the first stage", (LI,))
    d_.defines(
        "N",
        2 * (p - 1) + 1,
        "a micro-batch's activations wait p − 1 rounds forward and p − 1 backward, and a new micro-batch enters each round: "
        "those 2(p − 1) waiting and the current one",
    )
    d_.concludes("optimizations.pipeline.naive_in_flight")
    d_.approximates("2p", 2 * p, "001: 80 stages hold about 160 times one micro-batch's activations",
                    condition=much_greater(p, 1), dropped=sp.Integer(-1))
    d_.refutes("S23: 160", sp.Integer(160), "001 counts 80 × 2 = 160 rounds; 2N − 1 at N = 80 is 159",
               correct=get("optimizations.pipeline.naive_in_flight").dimensioned.subs(p, 80), source=LI)
    return d_


def min_global_batch() -> Derivation:
    d_ = Derivation("optimizations.pipeline.min_global_batch", "001: the batch must cover the pipeline", (LI,))
    d_.defines("B_min", (b * m * d).subs(m, p), "the global batch b·m·d of d replicas, m micro-batches of b each: every one of p stages busy needs m ≥ p")
    d_.concludes("optimizations.pipeline.min_global_batch")
    return d_


def export_penalty() -> Derivation:
    d_ = Derivation("optimizations.export_penalty", "002: export GPUs train longer", (EXPORT,))
    d_.defines("T", get("cluster.training_time").part * (1 + pi_pen), "the same 6ΨD at (1 + π) times the time per FLOP")
    d_.concludes("optimizations.export_penalty")
    return d_


DERIVATIONS = (selective_saving, tp_checkpointing, partitioned_activations, scatter_gather, onebit, contiguous_waste, paged_waste,
               static_batching, naive_in_flight, min_global_batch, export_penalty)
