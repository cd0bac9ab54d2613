"""Lesson: Li Wei, AI Computing Systems (2nd ed.), chapter 9 slides: BLOOM-176B, re-derived."""

from llm_formulas.render.documents.figures import Figures
from llm_formulas.render.documents.lesson_plots import largest_micro_batch
from llm_formulas.render.documents.notebooks import code, markdown

F = Figures("article_004", model="bloom-176b", gpu="a100-80gb", minutes=30, layout="bloom-176b", s=2048)
F.claimed("S19", "S19")
F.claimed("S20", "S20")
F.number("least_gpus", -(-F["S20"] // F["M_gpu"]))
F.number("batch", 16)  # the slides' batch for the FLOPs of one iteration
F.value("blocks_only", "flops.layer.forward", b=16, times=3 * F["l"], display="PFLOP", digits=5)
F.value("six_pd", "flops.training.approx", D=16 * F["s"], display="PFLOP", digits=4)
F.value("with_logits", "flops.training", b=16, display="PFLOP", digits=4)
F.number("model_parallel", F["t"] * F["p"])
F.number("shard_20", F["S20"] / (F["t"] * F["p"]), unit="byte")
F.value("shard_16", "memory.zero")
F.number("selective_first", F["l"] * F.compute("memory.activations.layer.selective"), unit="byte")
F.number("full_first", F["l"] * F.compute("memory.activations.layer.full_recompute"), unit="byte")
F.number("fits_full", largest_micro_batch("bloom-176b", "a100-80gb", "full", int(F["t"]), int(F["p"]), int(F["s"])))
F.value("bubble", "cluster.bubble", percent=True, digits=2)

CELLS = [
    markdown(F.text("""
# Article 004: how was {{model}} trained on {{n}} GPUs? (Li Wei, CAS, chapter 9)

> *"{{model}} was trained on {{n}} {{gpu}} with tensor parallelism {{t}} × pipeline {{p}} × data
> parallelism {{d}}. Why that layout, and what does one iteration cost?"*

The source is a textbook's lecture slides: 李威 (Li Wei), Institute of Computing Technology,
Chinese Academy of Sciences, 《智能计算系统：从深度学习到大模型》第2版课件, 第九章 大模型计算系统 (AI
Computing Systems: from Deep Learning to Large Models, 2nd edition, slides of chapter 9,
"Large-model computing systems"). The lessons are numbered after the four source articles
000, 001, 002 and 004; there is no 003 among the sources. The slides take {{model}} as their
worked system: {{l}} blocks of h = {{h}}, a vocabulary of V = {{V}}, trained on {{n}} GPUs as
TP {{t}} × PP {{p}} × DP {{d}}. They compute the FLOPs of one iteration ({{S19}}) and the
training state ({{S20}}, so at least {{least_gpus}} GPUs of {{M_gpu}}), then survey the
optimizations that make such training possible: ZeRO, recomputation, FlashAttention, paged KV
caches, continuous batching, 1-bit Adam. This lesson re-derives both numbers, shows what the
{{S19}} really counts, and puts the layout through the memory and pipeline formulas. About
{{minutes}}.
""")),
    markdown(F.text("""
## The FLOPs of one iteration: {{S19}}

The slides take a batch of B = {{batch}} sequences of s = {{s}} tokens and print {{S19}} for it.
The catalogue's exact training FLOPs (forward and backward of every GEMM, logits included)
give more:
""")),
    code("""
derive("flops.training", only=("F_train", "flops.training"))
source_figure("S19")"""),
    markdown(F.text("""
This is not a slip but another accounting. The slides count three forward passes of the
{{l}} blocks **without the logits**: 72·B·s·l·h²·(1 + s/(6h)) = {{blocks_only}}, which rounds to
the printed {{S19}}. (6ΨD gives {{six_pd}}, which would round lower; with the logits the step is
{{with_logits}}.) Both counts are right about what they count; comparing the slides' figure with
a measured throughput that includes the logits would be the mistake. Put the slides' inputs
through the per-layer formula and multiply by 3 × {{l}} blocks:
""")),
    code(F.code("""
layer = put("flops.layer.forward", b={{batch}}, s={{s}}, h={{h}}, label="forward FLOPs of one BLOOM block, {{batch}} sequences")
note(f"3 × {{l}} blocks: **{Value(3 * {{l}} * layer.value, layer.unit)}** ({Value(3 * {{l}} * layer.value, layer.unit).exact})")""")),
    markdown(F.text("""
## The training state: {{S20}}

The second number on the slides is the memory the training state needs, the figure that sets
the minimum number of GPUs before any question of speed. It depends only on the parameter
count and on how many bytes the optimizer keeps per parameter.

The slides count 20 bytes per parameter (16-bit weights and gradients, fp32 master weights,
momentum, variance and an fp32 gradient buffer):
""")),
    code("""
derive("memory.model_states.grad_buffers")
source_figure("S20")"""),
    markdown(F.text("""
## Why TP {{t}} × PP {{p}} × DP {{d}}

Split over t·p = {{model_parallel}} model-parallel GPUs the {{S20}} become {{shard_20}} per GPU at
20 bytes per parameter, or {{shard_16}} at 16 (the picture uses 16Ψ, the catalogue's
`memory.zero`). That leaves little room for activations: the first pipeline stage holds l
layers' worth (split {{t}} ways by TP), and with selective recompute that alone is
{{selective_first}} at micro-batch {{b}}, more than the GPU has left. With full recompute each
layer keeps only its input ({{full_first}} for the first stage), and it fits up to micro-batch
{{fits_full}}; ZeRO stage 1 over the {{d}} replicas would shrink the Adam states further. The cell
computes the first stage's activations both ways, and the picture draws the first stage's
memory against the micro-batch for the three recompute modes, beside the {{M_gpu}} line:
""")),
    code(F.code("""
B = model("bloom-176b")
selective = put("memory.activations.layer.selective", **B, b={{b}}, s={{s}}, t={{t}}, label="one layer, selective recompute, t = {{t}}")
full = put("memory.activations.layer.full_recompute", **B, b={{b}}, s={{s}}, label="one layer, full recompute")
note(f"{{l}} layers' worth: **{Value({{l}} * selective.value, selective.unit)}** selective, **{Value({{l}} * full.value, full.unit)}** full.")""")),
    code(F.code("""picture("memory_vs_micro_batch", model="bloom-176b", gpu_key="a100-80gb", t={{t}}, p={{p}}, s={{s}})""")),
    markdown(F.text("""
TP {{t}} stays inside a node's NVLink (the communication lesson shows why TP must), and PP {{p}}
spreads the {{l}} blocks (padded into stages) across nodes. The price of {{p}} stages is the
bubble: with m micro-batches per iteration a stage idles (p − 1)/m of the time, so BLOOM needed
many micro-batches per iteration (a global batch of B = {{B}} sequences: m = {{m}} micro-batches of
{{b}} per replica, a bubble of {{bubble}}):
""")),
    code(F.code("""
derive("cluster.bubble")
bubble = put("cluster.bubble", p={{p}}, m={{m}})""")),
    code(F.code("""picture("bubble_vs_m", stages=(4, 8, {{p}}, 16), mark=({{p}}, {{m}}))""")),
    markdown(F.text("""
A note on reading slides: a figure such as {{S19}} carries no formula with it, and several
plausible formulas round to nearby numbers ({{six_pd}}, {{blocks_only}}, {{with_logits}}). Only by
evaluating each candidate exactly at the slide's inputs can one tell which accounting the
author used; here the three-digit figure singles out the blocks-only count, and that is worth
knowing before comparing it with a measured throughput that includes the logits.

The slides' optimizations each attack one of these terms: ZeRO the 16–20Ψ of states (the
memory lesson), recomputation the activations, FlashAttention the s² attention scores (the
catalogue's `memory.activations.layer.flash`), paged KV caches and continuous batching the
waste of serving memory, 1-bit Adam the DP traffic.

Every slip the engine refutes in these slides (the list grows as more errata are proved):
""")),
    code("""slips("004")"""),
    markdown(F.text("""
## Exercises

Type your answer in place of `None`; a wrong answer gets the slip it matches or the step that
differs. The solutions are not in this notebook.
""")),
    code("""exercise("article_004.states")"""),
    code("""
answer = None  # GB
check("article_004.states", answer)"""),
    code("""exercise("article_004.iteration_flops")"""),
    code("""
answer = None  # PFLOP
check("article_004.iteration_flops", answer)"""),
    markdown(F.text("""
What the checker says to a reader who forgot the factor 3 of the backward pass:
""")),
    code("""check("article_004.iteration_flops", 11.58, layer=165.5)"""),
]
