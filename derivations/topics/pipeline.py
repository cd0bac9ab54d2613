"""Proofs of the pipeline-stage formulas, each reduced to the balanced or whole-layer case it generalises."""

from __future__ import annotations


from llm_formulas.derivations.vocabulary.engine import Derivation
from llm_formulas.derivations.vocabulary.proof import much_less
from llm_formulas.formulas.vocabulary.catalogue import get
from llm_formulas.formulas.topics.pipeline import BLOOM, KORTHIKANTI, NARAYANAN
from llm_formulas.formulas.vocabulary.symbols import V, a, b, c_byte, h, l, l_first, m, p, s, t, tau, w_max, w_tot


def step_factor() -> Derivation:
    d = Derivation("pipeline.step_factor", "The slowest stage sets the pace", (NARAYANAN, BLOOM))
    d.defines(
        "κ",
        (w_max * tau) / ((w_tot / p) * tau),
        "the slowest stage, w_max layer-forwards of τ each per micro-batch, against a balanced stage of w_tot/p",
    )
    d.concludes("pipeline.step_factor")
    return d


def bubble_uneven() -> Derivation:
    d = Derivation("pipeline.bubble.uneven", "Bubble of uneven stages", (NARAYANAN, BLOOM))
    d.defines("T_pipe", (m + p - 1) * w_max * tau, "1F1B: m + p − 1 slots, each as long as the slowest stage")
    d.defines("T_ideal", m * (w_tot / p) * tau, "m micro-batches through balanced stages, no fill or drain")
    d.defines("β", ((m + p - 1) * w_max * tau - m * (w_tot / p) * tau) / (m * (w_tot / p) * tau), "idle and imbalance over the ideal")
    d.concludes("pipeline.bubble.uneven")
    d.defines("β_balanced", get("pipeline.bubble.uneven").dimensioned.subs(w_max, w_tot / p), "every stage holds w_tot/p")
    d.concludes("cluster.bubble", "balanced stages give back (p − 1)/m")
    return d


def logits_layers() -> Derivation:
    d = Derivation("pipeline.logits_layers", "The output head in layer-forwards", (NARAYANAN,))
    d.defines("w", get("flops.logits").part / get("flops.layer.forward").part, "logits FLOPs over one layer's forward")
    d.concludes("pipeline.logits_layers", "b, s and h cancel")
    return d


def first_stage_activations() -> Derivation:
    d = Derivation("pipeline.activations.first_stage", "Activations of an uneven first stage", (KORTHIKANTI, BLOOM))
    d.defines("A_1", get("memory.activations.layer.tp").part * l_first * p, "p micro-batches in flight, each holding its l_1 layers")
    d.concludes("pipeline.activations.first_stage")
    d.defines("A_balanced", get("pipeline.activations.first_stage").dimensioned.subs(l_first, l / p), "balanced stages: l/p layers each")
    d.concludes("memory.activations.1f1b", "Korthikanti's 1F1B first stage (l layers' worth)")
    return d


def embedding_dropout() -> Derivation:
    d = Derivation("pipeline.activations.embedding_dropout", "The embedding's dropout mask", (KORTHIKANTI,))
    d.defines("A_mask", c_byte * s * b * h, "one byte per element of the s×b×h embedding output")
    d.defines("A_emb", c_byte * s * b * h * p / t, "p micro-batches in flight on the first stage; sequence parallelism splits it t ways")
    d.concludes("pipeline.activations.embedding_dropout")
    return d


def output_layer() -> Derivation:
    d = Derivation("pipeline.activations.output_layer", "The output layer's activations", (KORTHIKANTI,))
    d.defines("A_norm", 2 * c_byte * s * b * h, "the final norm keeps its 16-bit input")
    d.defines("A_head", 2 * c_byte * s * b * h, "the head keeps its 16-bit input")
    d.defines("A_xent", 4 * c_byte * s * b * V, "the cross-entropy keeps the logits in fp32")
    whole = d.defines("A_norm + A_head + A_xent", 4 * c_byte * s * b * h + 4 * c_byte * s * b * V, "the three together", parts=("A_norm", "A_head", "A_xent"))
    d.defines("A_out", whole / t, "all three split t ways (sequence parallel, vocabulary-parallel head)")
    d.concludes("pipeline.activations.output_layer")
    return d


def whole_model() -> Derivation:
    d = Derivation("pipeline.activations.whole_model", "Activations of the whole model", (KORTHIKANTI,))
    layers = l * get("memory.activations.layer.tp_sp").part
    extras = get("pipeline.activations.embedding_dropout").dimensioned.subs(p, 1) + get("pipeline.activations.output_layer").dimensioned
    d.defines("A", layers + extras, "l layers (tensor + sequence parallel), the embedding dropout (p = 1) and the output layer")
    d.concludes("pipeline.activations.whole_model")
    d.approximates(
        "A_layers", layers,
        "the extras are a vanishing share as the model deepens: (1 + 4(1 + V/h))/(l(34 + 5as/h))",
        condition=much_less(5 + 4 * V / h, l * (34 + 5 * a * s / h)),
        dropped=extras,
        of="A",
    )
    return d


DERIVATIONS = (step_factor, bubble_uneven, logits_layers, first_stage_activations, embedding_dropout, output_layer, whole_model)
