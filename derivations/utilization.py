"""Proofs of the utilization formulas: measured rates, MFU and HFU per iteration, per-token counts.

Percent of peak and aggregate rate are definitions; the iteration MFU divides
the training FLOPs of B sequences (``flops.training``) by what n GPUs could do
in τ; selective recompute runs QKᵀ and scores·V of every layer forward again,
``flops.decoder.attention.scores`` with a·d_head = h, which is 4Bs²hl; the
attention FLOPs per token are 4lhs over the full square and 2lh(s + 1) over the
causal triangle; PaLM's per-token count adds three passes of the full square to
6Ψ; the Eq. 3 training time is D/(B·s) iterations of ``flops.megatron``.
"""

from __future__ import annotations

import sympy as sp

from derivations.engine import Derivation
from formulas.catalogue import get
from formulas.symbols import B, D, P, R_tok, V, X, X_run, a, b, causal, d_head, h, l, mla, n, s, tau
from formulas.utilization import KAPLAN, KORTHIKANTI, NARAYANAN, PALM


def _model_flops(d: Derivation) -> sp.Basic:
    return d.defines("F_model", get("flops.training").expr.subs(b, B), "training FLOPs of one iteration of B sequences (flops.training)")


def _recompute_flops(d: Derivation) -> sp.Basic:
    scores = get("flops.decoder.attention.scores").expr.subs({b: B, d_head: h / a, mla: 0})
    return d.defines("F_sel", l * scores, "selective recompute runs QKᵀ and scores·V of each of the l layers forward again (a·d_head = h)")


def of_peak() -> Derivation:
    d = Derivation("utilization.of_peak", "Percent of peak from a measured rate", (NARAYANAN,))
    d.defines("U_peak", X_run / X, "the measured per-GPU rate over the datasheet peak")
    d.concludes("utilization.of_peak")
    return d


def aggregate() -> Derivation:
    d = Derivation("utilization.aggregate", "Aggregate rate of n GPUs", (NARAYANAN,))
    d.defines("X_agg", n * X_run, "n GPUs each at the measured rate")
    d.concludes("utilization.aggregate")
    return d


def mfu_iteration() -> Derivation:
    d = Derivation("utilization.mfu.iteration", "MFU of one iteration", (KORTHIKANTI,))
    model = _model_flops(d)
    d.defines("MFU", model / (n * X * tau), "model FLOPs over what n GPUs at peak do in the iteration time τ")
    d.concludes("utilization.mfu.iteration")
    return d


def hfu_selective() -> Derivation:
    d = Derivation("utilization.hfu.selective", "HFU with selective recompute, counted physically", (KORTHIKANTI,))
    model = _model_flops(d)
    extra = _recompute_flops(d)
    d.equals("4Bs²hl", 4 * B * s**2 * h * l, "2Bs²h for QKᵀ and 2Bs²h for scores·V, per layer")
    d.defines("HFU", (model + extra) / (n * X * tau), "the FLOPs the hardware ran over what it could run in τ")
    d.concludes("utilization.hfu.selective")
    return d


def selective_overhead() -> Derivation:
    d = Derivation("utilization.selective_overhead", "FLOPs overhead of selective recompute", (KORTHIKANTI,))
    model = get("flops.training").expr.subs(b, B)
    extra = l * get("flops.decoder.attention.scores").expr.subs({b: B, d_head: h / a, mla: 0})
    d.defines(
        "δ",
        extra / model,
        "recomputed FLOPs, QKᵀ and scores·V of each of the l layers again (a·d_head = h), over the model FLOPs of B sequences (flops.training)",
    )
    d.equals("(s/18h)/(1 + s/6h + V/12lh)", (s / (18 * h)) / (1 + s / (6 * h) + V / (12 * l * h)), "B, s, l and h² cancel")
    d.concludes("utilization.selective_overhead")
    return d


def attention_per_token() -> Derivation:
    d = Derivation("utilization.attention_per_token", "Attention FLOPs per token: full square or causal triangle", (KAPLAN,))
    full = d.defines("F_full", 4 * l * h * s, "QKᵀ and scores·V over all s² score entries, 2h FLOPs each, over s tokens, in l layers")
    tri = d.defines("F_causal", l * 2 * 2 * h * (s * (s + 1) / 2) / s, "only the s(s+1)/2 entries on or below the diagonal: 2h FLOPs each in QKᵀ and in scores·V")
    d.equals("2lh(s+1)", 2 * l * h * (s + 1), "per token")
    d.defines("F_attn", (1 - causal) * full + causal * tri, "the switch σ_causal picks one count")
    d.equals("2lh(2s − σ(s−1))", 2 * l * h * (2 * s - causal * (s - 1)), "collected")
    d.concludes("utilization.attention_per_token")
    return d


def training_per_token() -> Derivation:
    d = Derivation("utilization.training_per_token", "PaLM's training FLOPs per token", (PALM,))
    attention = get("utilization.attention_per_token").expr.subs({causal: 0, h: a * d_head})
    d.defines("F_tok", 6 * P + 3 * attention, "6Ψ for the weights' GEMMs, and the full-square attention forward, backward twice over (h = a·d_head)")
    d.equals("6Ψ + 12·l·a·d_head·s", 6 * P + 12 * l * a * d_head * s, "PaLM's 6N + 12LHQT")
    d.concludes("utilization.training_per_token")
    return d


def mfu_throughput() -> Derivation:
    d = Derivation("utilization.mfu.throughput", "MFU from a token throughput", (PALM,))
    d.defines("MFU", R_tok * get("utilization.training_per_token").expr / (n * X), "FLOP/s the tokens need over the peak of n chips")
    d.concludes("utilization.mfu.throughput")
    return d


def training_time_megatron() -> Derivation:
    d = Derivation("utilization.training_time.megatron", "Training time by Narayanan's Eq. 3", (NARAYANAN,))
    per_iteration = get("flops.megatron").expr
    d.defines("T", per_iteration * (D / (B * s)) / (n * X_run), "D/(B·s) iterations of Eq. 3's FLOPs (one iteration with full recompute) at n·X_run FLOP/s")
    d.concludes("utilization.training_time.megatron")
    return d


DERIVATIONS = (
    of_peak,
    aggregate,
    mfu_iteration,
    hfu_selective,
    selective_overhead,
    attention_per_token,
    training_per_token,
    mfu_throughput,
    training_time_megatron,
)
