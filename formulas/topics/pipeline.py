"""Uneven pipeline stages: the slowest stage sets the pace, the first holds the most activations.

With stages of work w_1 … w_p (in layer-forwards; the last stage also computes
the logits, V/(12h + 2s) layer-forwards), 1F1B runs m + p − 1 slots of the
slowest stage's time: the step takes p·w_max/w_tot times the balanced compute,
and the bubble measured against the balanced ideal is
p·(m + p − 1)·w_max/(m·w_tot) − 1, which is (p − 1)/m when every stage holds
w_tot/p. The first stage keeps p micro-batches of its l_1 layers. BLOOM-176B's
layout (BigScience 2022; 004) puts the embedding and 5 blocks on the first and
last of 12 stages and 6 blocks on the ten others.
"""

from __future__ import annotations

from llm_formulas.formulas.vocabulary.catalogue import Source, formula
from llm_formulas.formulas.vocabulary.symbols import V, a, b, c_byte, h, l, l_first, m, p, s, t, w_max, w_tot

NARAYANAN = Source("narayanan2021", "§2.2, 1F1B schedule")
KORTHIKANTI = Source("korthikanti2022", "§4.2.3, pipeline parallelism")
BLOOM = Source("bigscience2022", "§3.4, TP 4 × PP 12 × DP 8")
SLIDES = Source("004", "BLOOM-176B: 70 blocks over 12 pipeline stages")

step_factor = formula(
    "pipeline.step_factor",
    p * w_max / w_tot,
    "1",
    "compute time of a pipeline with uneven stages over the balanced one: the slowest stage over the mean",
    sources=[NARAYANAN, BLOOM],
    symbol_latex=r"\kappa_{stage}",
)
bubble_uneven = formula(
    "pipeline.bubble.uneven",
    p * (m + p - 1) * w_max / (m * w_tot) - 1,
    "1",
    "pipeline bubble of 1F1B with uneven stages: m + p − 1 slots of the slowest stage against m balanced ones",
    sources=[NARAYANAN, BLOOM],
    related=["cluster.bubble", "pipeline.step_factor"],
    symbol_latex=r"\beta_{uneven}",
)
logits_layers = formula(
    "pipeline.logits_layers",
    V / (12 * h + 2 * s),
    "1",
    "the output head's forward FLOPs in layer-forwards: 2bshV / (24bsh² + 4bs²h)",
    sources=[NARAYANAN, SLIDES],
    related=["flops.logits", "flops.layer.forward"],
    symbol_latex=r"w_{logits}",
)
first_stage_activations = formula(
    "pipeline.activations.first_stage",
    c_byte * s * b * h * (10 + 24 / t + 5 * a * s / (h * t)) * l_first * p,
    "byte",
    "activations of the first stage under 1F1B (m ≥ p): p micro-batches of its l_1 layers, tensor parallel",
    sources=[KORTHIKANTI, BLOOM],
    related=["memory.activations.1f1b"],
    symbol_latex=r"A_{stage_1}",
)
embedding_dropout = formula(
    "pipeline.activations.embedding_dropout",
    c_byte * s * b * h * p / t,
    "byte",
    "activations outside the layers on the first stage: the embedding dropout's 1-byte mask, p micro-batches, split by sequence parallelism",
    sources=[KORTHIKANTI],
    related=["pipeline.activations.first_stage"],
    symbol_latex=r"A_{emb}",
)
output_layer = formula(
    "pipeline.activations.output_layer",
    4 * c_byte * s * b * h * (1 + V / h) / t,
    "byte",
    "activations of the output layer on the last stage: the final norm's and the head's 16-bit inputs (4sbh) and fp32 logits for the cross-entropy (4sbV)",
    sources=[KORTHIKANTI],
    symbol_latex=r"A_{out}",
)
whole_model = formula(
    "pipeline.activations.whole_model",
    c_byte * s * b * h * l * (34 + 5 * a * s / h) / t + c_byte * s * b * h / t + 4 * c_byte * s * b * h * (1 + V / h) / t,
    "byte",
    "activations of the whole model on one stage (p = 1) with tensor and sequence parallelism: the layers, the embedding dropout and the output layer",
    sources=[KORTHIKANTI],
    related=["memory.activations.layer.tp_sp", "pipeline.activations.embedding_dropout", "pipeline.activations.output_layer"],
    symbol_latex=r"A_{model}",
)
