"""Lesson: Yu Chen (Bilibili) 2024, "What hardware compute do large models need", re-derived."""

from llm_formulas.render.documents.figures import Figures
from llm_formulas.render.documents.notebooks import code, markdown

F = Figures("article_000", model="gpt3-175b", gpu="a100-80gb", minutes=50, compare_gpus=("rtx4090", "h100-sxm"), t=8, p=8)
F.source_input("f", "S1", "f")
F.number("f_percent", F["f"], percent=True, digits=1)
F.source_input("replicas", "S1", "n")
F.claimed("speed_up", "S1")
F.source_input("big_P", "S2", "P")
F.source_input("big_D", "S2", "D")
F.source_input("big_n", "S2", "n")
F.source_input("big_U", "S2", "U")
F.case("sized_U", "S3", digits=3)

CELLS = [
    markdown(F.text("""
# Article 000: what hardware do large models need? (Yu Chen, Bilibili, 2024)

> *"How many GPUs, how much memory and how much bandwidth do we need to train {{model}} on
> {{gpu}} GPUs, and which of those runs out first?"*

This is the question Bilibili's server team set out to answer in 郁晨 (Yu Chen), "万字长文解析：
大模型需要怎样的硬件算力" ("What hardware compute do large models need: a long-form analysis",
2024-07-30). The lessons are numbered after the four source articles the project was built
from: 000, 001, 002 and 004. There is no 003: no fourth article with that number was among the
sources, and the numbers are kept so that citations stay stable.

The article builds, in order: the parameter count (§3.1), the FLOPs (§3.2), the communication
of 3D parallelism and of collectives (§3.3), the memory of model states, ZeRO and activations
(§3.4), then Amdahl's law, training time and cluster sizing (§3.5, §4.1). This lesson follows
the same order, re-derives each result with the engine (the verdict beside each step says how
it was proved), puts the article's own examples through the catalogue, and stops where the
article slips, with the engine's refutation. About {{minutes}}.
""")),
    markdown(F.text("""
## §3.1 Parameters: 12h² + 13h per layer

The article counts a GPT layer: attention 4h² + 4h, MLP 8h² + 5h, two LayerNorms 4h, so
12h² + 13h, and the model 12lh² + Vh plus a small position table. Its Table 1 compares this
estimate with the real counts of several models. The engine's derivation of the layer:
""")),
    code("""derive("params.layer")"""),
    markdown(F.text("""
Narayanan et al.'s factored form 12lh²(1 + 13/(12h) + (V + s)/(12lh)) differs from the article's
only by the s·h position table, which the engine shows as an approximation with its exact
error:
""")),
    code("""derive("params.narayanan")"""),
    markdown(F.text("""
## §3.2 FLOPs: 24bsh² + 4bs²h per layer, and a slip about inference

A [m, k] × [k, n] product costs 2mkn FLOPs; the article sums the GEMMs of a layer to
24bsh² + 4bs²h, adds the logits 2bshV, and reaches 6 FLOPs per parameter per token for
training (8 with full recompute). The flops lesson goes through this in detail; here the
closing step, and the article's statement about inference:
""")),
    code("""derive("flops.training.approx")"""),
    markdown(F.text("""
The article then says that inference costs **6** FLOPs per parameter per token. Inference is
a forward pass only: 2 FLOPs per parameter per token. The engine derives 2Ψ and refutes the
printed figure:
""")),
    code("""refutation("flops.inference.per_token", "000: 6Ψ per token")"""),
    markdown(F.text("""
## §3.3 Communication: redundancy of collectives

Table 5 of the article lists how many bytes each GPU sends per byte of buffer in NCCL's ring
algorithms: 2(n − 1)/n for an all-reduce, (n − 1)/n for all-gather and reduce-scatter, 1 for
send/receive and broadcast. The engine derives the all-reduce as a reduce-scatter followed by
an all-gather:
""")),
    code("""derive("comms.collective.allreduce")"""),
    markdown(F.text("""
## §3.4 Memory: 16Ψ, ZeRO, and activations under tensor parallelism

Model states of mixed-precision Adam are 16Ψ bytes (the article quotes 18 to 20Ψ with fp32
gradients and buffers). ZeRO partitions them over d replicas; the picture below shows, for the
{{model}} case of the article's Table 10 (t = {{t}}, p = {{p}}), what each GPU holds:
""")),
    code(F.code("""
derive("memory.zero.stage1")
picture("memory_breakdown", model="gpt3-175b", layouts=(({{t}}, 1), ({{t}}, 2), ({{t}}, 4), ({{t}}, {{p}})), b=1, s=2048, recompute="selective")""")),
    markdown(F.text("""
The activations follow Korthikanti et al.: 34sbh + 5as²b per layer, and under tensor
parallelism without sequence parallelism sbh(10 + 24/t + 5as/(ht)). Here the article slips:
its table splits the LayerNorm activations as 4bsht, growing with t, where they are 4bsh,
replicated on every rank (they do not depend on t at all). The engine derives the correct form
from the tensor inventory and refutes the printed one:
""")),
    code("""refutation("memory.activations.layer.tp", "000: norms 4bsht")"""),
    markdown(F.text("""
## §3.5 Amdahl, training time, cluster size

With {{f_percent}} of the work serial (f = {{f}}: communication not hidden under compute) and
{{replicas}} data-parallel replicas, the article computes a speed-up of {{speed_up}}:
""")),
    code("""
derive("cluster.amdahl")
source_figure("S1")"""),
    code("""picture("amdahl", fractions=("1/2000", "1/200", "1/20"))"""),
    markdown(F.text("""
The training time of a model of Ψ = {{big_P}} on D = {{big_D}}, {{big_n}} A100s at U = {{big_U}}
with full recompute (8ΨD): the article's figure was lost with its formula image; the catalogue gives:
""")),
    code("""source_figure("S2")"""),
    markdown(F.text("""
§4.1.1 turns the formula around and sizes clusters for three published runs. The article
does not print the utilization it assumed; the engine back-solves it from the GPU counts, and
all three come out at the same U = {{sized_U}}, which shows the article used one U throughout:
""")),
    code("""
source_figure("S3")
source_figure("S4")
source_figure("S5")"""),
    markdown(F.text("""
## §4.1.3 Bandwidth requirements

Finally the article derives how much bandwidth each parallel dimension needs so that its
communication takes at most a share r of the compute time, and concludes that the TP need is
proportional to t/h, the PP need to 1/(h·l/p), the DP need to d/(B·s). The engine proves each
by differentiation (the closed form divided by the claimed proportionality has zero derivative
in every variable):
""")),
    code("""derive("comms.bandwidth.dp", only=("W_DP closed", "comms.bandwidth.dp", "need/(d/(B·s)) = constant"))"""),
    code("""picture("bandwidth_vs_tp", h=12288, gpus=("rtx4090", "a100-80gb", "h100-sxm"), U="1/2", r="1")"""),
    markdown(F.text("""
All the slips the engine refutes in this article, in one place (this list grows as more
errata are proved):
""")),
    code("""slips("000")"""),
    markdown(F.text("""
## Exercises

Type your answer in place of `None`; the helper says right or wrong and, when wrong, which
step differs. The solutions are not in this notebook.
""")),
    code("""exercise("article_000.training_days")"""),
    code("""
answer = None  # days
check("article_000.training_days", answer)"""),
    code("""exercise("article_000.zero3")"""),
    code("""
answer = None  # GB
check("article_000.zero3", answer)"""),
]
