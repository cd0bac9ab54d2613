"""Proofs of the utilization formulas: measured rates, MFU and HFU per iteration, per-token counts.

Percent of peak and aggregate rate are definitions; the iteration MFU divides
the training FLOPs of B sequences (``flops.training``) by what n GPUs could do
in τ; selective recompute runs QKᵀ and scores·V of every layer forward again,
``flops.decoder.attention.scores`` with a·d_head = h, which is 4Bs²hl; the
attention FLOPs per token are 4lhs over the full square and 2lh(s + 1) over the
causal triangle; PaLM's per-token count adds three passes of the full square to
6Ψ, and without the attention the MFU keeps 6Ψ alone (an approximation whose
dropped part is the attention's three passes); PaLM Table 3's MT-NLG figures
are computed with 529.6B, the count of MT-NLG's shape, not the 530B the table
names (a refutation with the exact MFU difference); the Eq. 3 training time is
D/(B·s) iterations of ``flops.megatron``; an overhead compares two times of the
same work, a throughput increase two rates of the same work.
"""

from __future__ import annotations

import sympy as sp

from llm_formulas.derivations.vocabulary.engine import Derivation
from llm_formulas.formulas.vocabulary.catalogue import get
from llm_formulas.derivations.vocabulary.proof import much_less
from llm_formulas.formulas.vocabulary.symbols import B, D, P, c_flop, c_token, R_tok, U, U_hw, V, X, X_run, a, b, causal, d_head, f_remat, h, l, mla, n, s, tau, tau_0, u_param
from llm_formulas.derivations.topics.cluster import solved_for
from llm_formulas.formulas.topics.utilization import KAPLAN, KORTHIKANTI, KORTHIKANTI_T4, KORTHIKANTI_T5, NARAYANAN, PALM, PALM_REMAT, PALM_T3

MTNLG = {l: 105, h: 20480, V: 51200, s: 2048}  # Smith et al. 2022 §2.4 and Narayanan et al. 2021 Table 1: MT-NLG's shape


def _model_flops(d: Derivation) -> sp.Basic:
    return d.defines("F_model", get("flops.training").dimensioned.subs(b, B), "training FLOPs of one iteration of B sequences (flops.training)")


def _recompute_flops(d: Derivation) -> sp.Basic:
    scores = get("flops.decoder.attention.scores").dimensioned.subs({b: B, d_head: h / a, mla: 0})
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
    model = get("flops.training").dimensioned.subs(b, B)
    extra = l * get("flops.decoder.attention.scores").dimensioned.subs({b: B, d_head: h / a, mla: 0})
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
    attention = get("utilization.attention_per_token").dimensioned.subs({causal: 0, h: a * d_head})
    d.defines("F_tok", 3 * c_flop * P + 3 * attention, "6Ψ for the weights' GEMMs, and the full-square attention forward, backward twice over (h = a·d_head)")
    d.equals("6Ψ + 12·l·a·d_head·s", 3 * c_flop * P + 12 * l * a * d_head * s, "PaLM's 6N + 12LHQT")
    d.concludes("utilization.training_per_token")
    return d


def mfu_throughput() -> Derivation:
    d = Derivation("utilization.mfu.throughput", "MFU from a token throughput", (PALM,))
    d.defines("MFU", R_tok * get("utilization.training_per_token").part / (n * X), "FLOP/s the tokens need over the peak of n chips")
    d.concludes("utilization.mfu.throughput")
    return d


def mfu_throughput_weights() -> Derivation:
    d = Derivation("utilization.mfu.throughput.weights", "MFU without self-attention, and the N behind PaLM's MT-NLG figures", (PALM, PALM_T3))
    full = d.defines("MFU", R_tok * get("utilization.training_per_token").part / (n * X), "the MFU from a token throughput, 6Ψ + 12·l·a·d_head·s per token")
    weights = d.approximates(
        "MFU_weights",
        3 * c_flop * R_tok * P / (n * X),
        "Table 3's first figure counts the weights' GEMMs alone: the attention's three passes over the full square are dropped",
        condition=much_less(2 * l * a * d_head * s, P),
        dropped=12 * R_tok * l * a * d_head * s / (n * X),
    )
    d.concludes("utilization.mfu.throughput.weights")
    narayanan = get("params.narayanan").dimensioned
    d.defines("Ψ_MTNLG", narayanan.subs(MTNLG), "Narayanan's Eq. 2 at MT-NLG's shape (l = 105, h = 20480, V = 51200, s = 2048): 529,600,778,240, Table 1's 529.6B")
    d.refutes(
        "N = 530B",
        530 * 10**9 * u_param,
        "PaLM Table 3 names MT-NLG 530B, but its 29.7 % and 30.2 % are computed with 529.6B: at 530B and 65.43K tokens/s on 2240 "
        "A100s they are 29.77 % and 30.27 %, which print as 29.8 and 30.3",
        correct=narayanan.subs(MTNLG),
        source=PALM_T3,
    )
    d.defines("ΔMFU", (full - full.subs(P, narayanan)), "the MFU at a stated N less the MFU at Eq. 2's count of the shape")
    d.equals(
        "6·ΔΨ·R/(nX)", 3 * c_flop * (P - narayanan) * R_tok / (n * X),
        "only the 6N term moves: 0.4B parameters more at 65.43K tokens/s on 2240 × 312 TFLOP/s add 0.022 points", aside=True,
    )
    d.equals("ΔMFU_weights", weights - weights.subs(P, narayanan), "the same difference without the attention, whose term does not depend on N", of="ΔMFU", aside=True)
    return d


def hfu_remat() -> Derivation:
    d = Derivation("utilization.hfu.remat", "HFU of a partial rematerialization", (PALM, PALM_REMAT))
    tok = d.defines("F_tok", get("utilization.training_per_token").part, "PaLM's training FLOPs per token, 6Ψ + 12·l·a·d_head·s")
    fwd = d.defines("F_fwd", c_flop * P + 4 * l * a * d_head * s, "the forward alone: 2Ψ for the weights' GEMMs, 4·l·a·d_head·s for QKᵀ and scores·V")
    d.equals("F_tok/3", tok / 3, "a third of training: the backward computes the input and the weight gradients, two forwards' worth",
             of="F_fwd", aside=True)
    hw = d.defines("F_hw", tok + f_remat * fwd, "the hardware also runs the share f of the forward that the backward rematerializes")
    d.defines("HFU", U * hw / tok, "in the same time as the model FLOPs at MFU U: the hardware FLOPs over the model FLOPs, times U")
    d.equals("U(1 + f/3)", U * (1 + f_remat / 3), "Ψ, l, a, d_head and s cancel: every third of the work is a forward")
    d.concludes("utilization.hfu.remat")
    return d


def remat_share() -> Derivation:
    d = Derivation("utilization.remat_share", "The rematerialized share a published MFU and HFU imply", (PALM_REMAT,))
    hfu = d.defines("HFU", get("utilization.hfu.remat").part, "the HFU of a run that rematerializes a share f of its forward")
    d.solves("f", solved_for(hfu, U_hw, f_remat), "SymPy solves HFU(f) = the published HFU for f", unknown=f_remat, target=U_hw, of="HFU")
    d.concludes("utilization.remat_share")
    return d


def time_overhead() -> Derivation:
    d = Derivation("utilization.time_overhead", "Overhead of a measured time over its baseline", (KORTHIKANTI_T4,))
    d.defines("Δτ", tau - tau_0, "the time the run takes beyond the baseline's (negative when it is faster)")
    d.defines("δ_τ", (tau - tau_0) / tau_0, "over the baseline's time")
    d.equals("τ/τ₀ − 1", tau / tau_0 - 1, "the ratio of the two times, less one")
    d.concludes("utilization.time_overhead")
    return d


def throughput_gain() -> Derivation:
    d = Derivation("utilization.throughput_gain", "Throughput increase of a faster run", (KORTHIKANTI_T5,))
    rate = d.defines("R", B / tau, "B sequences per iteration of τ: the run's throughput")
    base = d.defines("R₀", B / tau_0, "the same B sequences in the baseline's τ₀")
    d.defines("γ", sp.Mul(rate, sp.Pow(base, -1, evaluate=False), evaluate=False) - 1, "the throughput's gain over the baseline's")
    d.equals("τ₀/τ − 1", tau_0 / tau - 1, "B cancels: the inverse ratio of the times, less one")
    d.concludes("utilization.throughput_gain")
    return d


def training_time_megatron() -> Derivation:
    d = Derivation("utilization.training_time.megatron", "Training time by Narayanan's Eq. 3", (NARAYANAN,))
    per_iteration = get("flops.megatron").part
    d.defines("T", per_iteration * (D / (B * s * c_token)) / (n * X_run), "D/(B·s) iterations of Eq. 3's FLOPs (one iteration with full recompute) at n·X_run FLOP/s")
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
    mfu_throughput_weights,
    training_time_megatron,
    hfu_remat,
    remat_share,
    time_overhead,
    throughput_gain,
)
