"""Papers' conventions against the physical counts: each difference proved exactly, with its cause.

- Korthikanti et al. 2022 Eq. 8 adds 72Bslh²·(s/6h) = 12Bs²hl for selective
  recompute, three times the 4Bs²hl of QKᵀ and scores·V it runs again.
- Kaplan et al. 2020 count attention as 2·n_layer·n_ctx·d_attn per token: the
  causal triangle is 2lh(s + 1), the full square 4lhs.
- Narayanan et al. 2021 Eq. 4, 8TP/(nX), approximates the exact Eq. 3 time.
- Hoffmann et al. 2022 Table 3's 67B row carries Gopher's budget, not 6ND.
"""

from __future__ import annotations

import sympy as sp

from llm_formulas.derivations.vocabulary.engine import Derivation
from llm_formulas.derivations.vocabulary.proof import much_greater, much_less
from llm_formulas.formulas.vocabulary.catalogue import get
from llm_formulas.formulas.topics.conventions import HOFFMANN, HOFFMANN_F, KAPLAN, KORTHIKANTI, NARAYANAN
from llm_formulas.formulas.vocabulary.symbols import B, C_flops, D, P, c_flop, V, X, X_run, a, b, causal, d_head, h, l, mla, n, s, tau, u_flop


def korthikanti_hfu() -> Derivation:
    d = Derivation("conventions.korthikanti.hfu", "Korthikanti's Eq. 8 counts selective recompute three times", (KORTHIKANTI,))
    model = d.defines("F_model", get("flops.training").dimensioned.subs(b, B), "model FLOPs of one iteration, 72Bslh²(1 + s/6h + V/12lh)")
    scores = get("flops.decoder.attention.scores").dimensioned.subs({b: B, d_head: h / a, mla: 0})
    physical = d.defines("F_hw", model + l * scores, "what the hardware runs: the model FLOPs and QKᵀ, scores·V once more (4Bs²hl)")
    printed = d.defines("F_Eq8", 72 * B * s * l * h**2 * (1 + s / (3 * h) + V / (12 * l * h)) * u_flop, "Eq. 8 as printed: s/6h becomes s/3h")
    d.defines("ΔEq8", printed - model, "what Eq. 8 adds for the recompute")
    d.equals(
        "3 · 4Bs²hl", 3 * (physical - model), "three times the FLOPs the recompute redoes: 12Bs²hl, not 4Bs²hl", aside=True
    )
    d.defines("F_Eq8 / F_hw", printed / physical, "Eq. 8's count over the hardware's")
    d.approximates(
        "1",
        sp.Integer(1),
        "Eq. 8 overstates the hardware FLOPs by 8Bs²hl; the gap, relative to F_hw, vanishes as s/h → 0",
        condition=much_less(s, h),
        dropped=8 * B * s**2 * h * l * u_flop / physical,
    )
    d.defines("HFU_Eq8", printed / (n * X * tau), "Eq. 8's FLOPs over what n GPUs do in τ")
    d.concludes("conventions.korthikanti.hfu")
    return d


def korthikanti_overhead() -> Derivation:
    d = Derivation("conventions.korthikanti.overhead", "Selective recompute's overhead: Eq. 8 against the physical count", (KORTHIKANTI,))
    model = get("flops.training").dimensioned.subs(b, B)
    printed = 72 * B * s * l * h**2 * (1 + s / (3 * h) + V / (12 * l * h))
    overhead = d.defines("δ_Eq8", (printed - model) / model, "the share Eq. 8 adds to the model FLOPs")
    d.equals("(s/6h)/(1 + s/6h + V/12lh)", (s / (6 * h)) / (1 + s / (6 * h) + V / (12 * l * h)), "B, s, l, h² cancel")
    d.concludes("conventions.korthikanti.overhead")
    d.equals("3 δ", 3 * get("utilization.selective_overhead").part, "three times the physical overhead (s/18h)/(1 + s/6h + V/12lh)", of="δ_Eq8")
    return d


def kaplan_forward() -> Derivation:
    d = Derivation("conventions.kaplan.forward_per_token", "Kaplan's C_forward and the causal and full-square counts", (KAPLAN,))
    printed = d.defines("C_forward", c_flop * P + 2 * l * s * h, "Kaplan's Table 1 as printed: 2N + 2·n_layer·n_ctx·d_attn, d_attn = h")
    d.concludes("conventions.kaplan.forward_per_token")
    d.defines("C_causal", c_flop * P + get("utilization.attention_per_token").dimensioned.subs(causal, 1), "2N and the causal triangle, 2lh(s+1)")
    d.approximates(
        "C_forward",
        printed,
        "Kaplan's term is the causal triangle with s + 1 taken as s: 2lh too few per token",
        condition=much_greater(s, 1),
        dropped=2 * l * h,
        of="C_causal",
    )
    d.defines("C_full", c_flop * P + get("utilization.attention_per_token").dimensioned.subs(causal, 0), "2N and the full square, 4lhs")
    d.equals("C_forward + 2lhs", printed + 2 * l * h * s, "the full square counts twice Kaplan's attention term", of="C_full", aside=True)
    d.approximates(
        "2N",
        c_flop * P,
        "with d_model > n_ctx/12 (Kaplan's condition, 12h ≫ s, so with N ≈ 12lh² 2lhs ≪ 2N) attention is a small share of 2N, either way",
        condition=much_less(l * h * s, P),
        dropped=4 * l * h * s,
        of="C_full",
    )
    return d


def megatron_eq4() -> Derivation:
    d = Derivation("conventions.megatron.eq4", "Megatron's Eq. 4, 8TP/(nX), against its exact Eq. 3", (NARAYANAN,))
    exact = d.defines("T_Eq3", get("utilization.training_time.megatron").part, "Eq. 3 per iteration, D/(B·s) iterations")
    params = get("params.narayanan").part
    estimate = d.defines("T_Eq4", 4 * c_flop * D * params / (n * X_run), "Eq. 4 with Ψ from Eq. 2, 12lh²(1 + 13/12h + (V+s)/12lh)")
    d.concludes("conventions.megatron.eq4", "Eq. 4 as printed, with Ψ from Eq. 2", where={P: params})
    d.defines("T_Eq4 / T_Eq3", sp.Mul(estimate, sp.Pow(exact, -1, evaluate=False), evaluate=False), "Eq. 4's time over Eq. 3's")
    d.approximates(
        "1",
        sp.Integer(1),
        "Eq. 4 drops s/6h + V/16lh and keeps Ψ's 13/12h + (V+s)/12lh: 2–3 % low for GPT-3 and MT-NLG",
        condition=(much_less(s, 6 * h), much_less(V, 16 * l * h), much_greater(h, 1)),
        dropped=(sp.Rational(13, 12) / h + (V + s) / (12 * l * h) - s / (6 * h) - V / (16 * l * h)) / (1 + s / (6 * h) + V / (16 * l * h)),
    )
    return d


def chinchilla_pinned() -> Derivation:
    d = Derivation("conventions.chinchilla.pinned", "Chinchilla's 67B row is pinned to Gopher's budget", (HOFFMANN,))
    d.defines("C", C_flops, "the row's FLOPs are Gopher's training budget, given, not computed")
    d.concludes("conventions.chinchilla.pinned")
    d.refutes(
        "6ND = 5.76e23",
        sp.Rational("5.76e23"),
        "the row prints 5.76e23 FLOPs beside N = 67B, D = 1.5T, whose 6ND is 6.03e23: the FLOPs are Gopher's, N and D the rounded optimum",
        correct=get("flops.training.approx").dimensioned.subs({P: 67 * 10**9, D: 15 * 10**11}),
        source=HOFFMANN,
    )
    return d


def chinchilla_forward() -> Derivation:
    d = Derivation("conventions.chinchilla.forward", "Chinchilla's FLOP count: embedding and softmax as refinements", (HOFFMANN_F,))
    gemms = d.defines("F_fwd", get("flops.forward").dimensioned.subs(b, 1), "the GEMM count of one sequence: 24slh²(1 + s/6h + V/12lh)")
    d.defines("F_emb", 2 * s * V * h, "Appendix F counts the embedding lookup as a one-hot matmul: 2·s·V·h")
    d.defines("F_softmax", 3 * a * s**2 * l, "and 3 FLOPs per score entry of the softmax, a·s² entries per layer")
    d.defines("F_Chinchilla", gemms + (2 * s * V * h + 3 * a * s**2 * l) * u_flop, "the GEMMs with both refinements")
    d.concludes("conventions.chinchilla.forward", of="F_Chinchilla")
    d.defines("F_Chinchilla / F_fwd", (gemms + (2 * s * V * h + 3 * a * s**2 * l) * u_flop) / gemms, "Appendix F's count over the GEMM count")
    d.approximates(
        "1",
        sp.Integer(1),
        "the refinements vanish beside the GEMMs for wide, deep models: exact error (2sVh + 3las²)/F_fwd",
        condition=(much_less(V, 12 * l * h), much_less(a * s, 8 * h**2)),
        dropped=(2 * s * V * h + 3 * a * s**2 * l) * u_flop / gemms,
    )
    return d


DERIVATIONS = (korthikanti_hfu, korthikanti_overhead, kaplan_forward, megatron_eq4, chinchilla_pinned, chinchilla_forward)
