"""Papers' formulas exactly as printed, where their convention differs from the physical count.

Each is proved against its physical counterpart in ``derivations/topics/conventions.py``
(an ``approximates`` step with the exact error, or a ``refutes`` step):
Korthikanti et al. 2022 Eq. 8 charges selective recompute 72Bslh²·s/6h = 12Bs²hl,
three times the 4Bs²hl it redoes; Kaplan et al. 2020 count causal attention as
2·n_layer·n_ctx·d_attn per token (the causal triangle is 2lh(s+1)); Narayanan et
al. 2021 Eq. 4 estimates the training time as 8TP/(nX) where Eq. 3 is exact;
Hoffmann et al. 2022 pin Table 3's 67B row to Gopher's budget, not to 6ND, and
count (Appendix F) the embedding lookup as a matmul and 3 FLOPs per softmax entry,
two refinements the GEMM count leaves out.
"""

from __future__ import annotations

from llm_formulas.formulas.vocabulary.catalogue import Source, formula
from llm_formulas.formulas.vocabulary.symbols import B, C_flops, D, P, V, X, X_run, a, c_flop, c_mac, c_token, h, l, n, s, tau, u_flop

KORTHIKANTI = Source("korthikanti2022", "§6, Eq. 8")
KAPLAN = Source("kaplan2020", "§2.1, Table 1")
NARAYANAN = Source("narayanan2021", "§5.1, Eq. 4")
HOFFMANN = Source("hoffmann2022", "Table 3, the 67B row")

korthikanti_hfu = formula(
    "conventions.korthikanti.hfu",
    36 * c_mac * B * s * l * h**2 * (1 + s / (3 * h) + V / (12 * l * h)) / (n * X * tau),
    "1",
    "Korthikanti's hardware FLOPs utilization with selective recompute, as printed: 72Bslh²(1 + s/3h + V/12lh)/(nXτ)",
    sources=[KORTHIKANTI],
    related=["utilization.hfu.selective"],
    symbol_latex=r"HFU_{Eq.8}",
)
korthikanti_overhead = formula(
    "conventions.korthikanti.overhead",
    (s / (6 * h)) / (1 + s / (6 * h) + V / (12 * l * h)),
    "1",
    "selective recompute's FLOPs overhead as Eq. 8 counts it: (s/6h)/(1 + s/6h + V/12lh)",
    sources=[KORTHIKANTI],
    related=["utilization.selective_overhead"],
    symbol_latex=r"\delta_{Eq.8}",
)
kaplan_forward = formula(
    "conventions.kaplan.forward_per_token",
    c_flop * P + c_mac * l * s * h / c_token,
    "FLOP/token",
    "Kaplan's forward FLOPs per token, as printed: C_forward = 2N + 2·n_layer·n_ctx·d_attn (N without embeddings, d_attn = h)",
    sources=[KAPLAN],
    related=["utilization.attention_per_token"],
    symbol_latex=r"C_{forward}",
)
megatron_eq4 = formula(
    "conventions.megatron.eq4",
    4 * c_flop * D * P / (n * X_run),
    "second",
    "Narayanan's Eq. 4 estimate of the training time, as printed: 8TP/(nX) at the achieved per-GPU rate X",
    sources=[NARAYANAN],
    related=["utilization.training_time.megatron"],
    symbol_latex=r"T_{Eq.4}",
)
chinchilla_pinned = formula(
    "conventions.chinchilla.pinned",
    C_flops,
    "FLOP",
    "Chinchilla Table 3's FLOPs of the 67B row: pinned to Gopher's budget, not 6ND of the row's N and D",
    sources=[HOFFMANN],
    related=["flops.training.approx"],
    symbol_latex=r"C_{Gopher}",
)
HOFFMANN_F = Source("hoffmann2022", "Appendix F, FLOPs computation")
chinchilla_forward = formula(
    "conventions.chinchilla.forward",
    (2 * s * V * h + l * (2 * 3 * s * h * h + 2 * s * s * h + 3 * a * s * s + 2 * s * s * h + 2 * s * h * h + 2 * s * h * 4 * h * 2) + 2 * s * h * V) * u_flop,
    "FLOP",
    "Chinchilla's forward FLOPs of one sequence, as Appendix F counts them: the embedding as a matmul (2sVh), "
    "3 FLOPs per softmax entry (3as² per layer), the GEMMs and the logits (key_size × heads = h, d_ff = 4h)",
    sources=[HOFFMANN_F],
    related=["flops.forward"],
    symbol_latex=r"F_{Chinchilla}",
)
