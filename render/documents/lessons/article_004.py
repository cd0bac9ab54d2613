"""Lesson: Li Wei, AI Computing Systems (2nd ed.), chapter 9 slides: BLOOM-176B, re-derived."""

from llm_formulas.render.documents.notebooks import code, markdown

CELLS = [
    markdown("""
# Article 004: how was BLOOM-176B trained on 384 GPUs? (Li Wei, CAS, chapter 9)

> *"BLOOM-176B was trained on 384 A100s with TP 4 × PP 12 × DP 8. Why that layout, and what does
> one iteration cost?"*

The source is a textbook's lecture slides: 李威 (Li Wei), Institute of Computing Technology,
Chinese Academy of Sciences, 《智能计算系统：从深度学习到大模型》第2版课件, 第九章 大模型计算系统 (AI
Computing Systems: from Deep Learning to Large Models, 2nd edition, slides of chapter 9,
"Large-model computing systems"). The lessons are numbered after the four source articles
000, 001, 002 and 004; there is no 003 among the sources. The slides take BLOOM-176B as their
worked system: 70 blocks of h = 14336, a vocabulary of 250880, trained on 384 GPUs as
TP 4 × PP 12 × DP 8. They compute the FLOPs of one iteration (34.8 PFLOP) and the training
state (3525 GB, so at least 45 GPUs of 80 GB), then survey the optimizations that make such
training possible: ZeRO, recomputation, FlashAttention, paged KV caches, continuous batching,
1-bit Adam. This lesson re-derives both numbers, shows what the 34.8 PFLOP really counts, and
puts the layout through the memory and pipeline formulas. About 30 minutes.
"""),
    markdown("""
## The FLOPs of one iteration: 34.8 PFLOP

The slides take a batch of B = 16 sequences of s = 2048 tokens (micro-batches of b = 2) and
print 34.8 PFLOP for it. The catalogue's exact training FLOPs (forward and backward of
every GEMM, logits included) give more:
"""),
    code("""
derive("flops.training", only=("F_train", "flops.training"))
source_figure("S19")
refutation("flops.training", "S19: BLOOM-176B 34.8 PFLOP")"""),
    markdown("""
What do the slides count, then? Three forward passes of the 70 blocks **without the logits**:
72·B·s·l·h²·(1 + s/(6h)) = 34.750 PFLOP, which rounds to the printed 34.8. (6ΨD gives 34.65,
which would round to 34.7; with the logits the count is 35.46.) Put the slides' inputs through
the per-layer formula and multiply by 3 × 70:
"""),
    code("""
layer = put("flops.layer.forward", b=16, s=2048, h=14336, label="forward FLOPs of one BLOOM block, 16 sequences")
note(f"3 × 70 blocks: **{Value(210 * layer.value, layer.unit)}** ({Value(210 * layer.value, layer.unit).exact})")"""),
    markdown("""
## The training state: 3525 GB

The second number on the slides is the memory the training state needs, the figure that sets
the minimum number of GPUs before any question of speed. It depends only on the parameter
count and on how many bytes the optimizer keeps per parameter.

The slides count 20 bytes per parameter (16-bit weights and gradients, fp32 master weights,
momentum, variance and an fp32 gradient buffer):
"""),
    code("""
derive("memory.model_states.grad_buffers")
source_figure("S20")"""),
    markdown("""
## Why TP 4 × PP 12 × DP 8

Split over t·p = 48 model-parallel GPUs the 3525 GB become 73 GB per GPU at 20 bytes per
parameter, or 59 GB at 16 (the picture uses 16Ψ, the catalogue's `memory.zero`). That leaves
little room for activations: the first pipeline stage holds l layers' worth (split four ways
by TP), and with selective recompute that alone is more than the GPU has left. With full
recompute each layer keeps only its input, and it fits; ZeRO stage 1 over the 8 replicas would
shrink the Adam states further. The cell computes the first stage's activations both ways, and
the picture draws the first stage's memory against the micro-batch for the three recompute
modes, beside the 80 GB line:
"""),
    code("""
B = model("bloom-176b")
selective = put("memory.activations.layer.selective", **B, b=2, s=2048, t=4, label="one layer, selective recompute, t = 4")
full = put("memory.activations.layer.full_recompute", **B, b=2, s=2048, label="one layer, full recompute")
note(f"70 layers' worth: **{Value(70 * selective.value, selective.unit)}** selective, **{Value(70 * full.value, full.unit)}** full.")"""),
    code("""picture("memory_vs_micro_batch", model="bloom-176b", gpu_key="a100-80gb", t=4, p=12, s=2048)"""),
    markdown("""
TP 4 stays inside a node's NVLink (the communication lesson shows why TP must), and PP 12
spreads the 70 blocks (padded into stages) across nodes. The price of 12 stages is the bubble:
with m micro-batches per iteration a stage idles (p − 1)/m of the time, so BLOOM needed many
micro-batches per iteration (a global batch of 2048 sequences: 128 micro-batches of 2 per
replica, a bubble under 9 %):
"""),
    code("""
derive("cluster.bubble")
bubble = put("cluster.bubble", p=12, m=128)"""),
    code("""picture("bubble_vs_m", stages=(4, 8, 12, 16))"""),
    markdown("""
A note on reading slides: a figure such as 34.8 PFLOP carries no formula with it, and several
plausible formulas round to nearby numbers (34.65, 34.75, 35.46). Only by evaluating each
candidate exactly at the slide's inputs can one tell which accounting the author used; here
the three-digit figure singles out the blocks-only count, and that is worth knowing before
comparing it with a measured throughput that includes the logits.

The slides' optimizations each attack one of these terms: ZeRO the 16–20Ψ of states (the
memory lesson), recomputation the activations, FlashAttention the s² attention scores (the
catalogue's `memory.activations.layer.flash`), paged KV caches and continuous batching the
waste of serving memory, 1-bit Adam the DP traffic.

Every slip the engine refutes in these slides (the list grows as more errata are proved):
"""),
    code("""slips("004")"""),
    markdown("""
## Exercises

Type your answer in place of `None`; a wrong answer gets the step that differs. The solutions
are not in this notebook.
"""),
    code("""exercise("article_004.states")"""),
    code("""
answer = None  # GB
check("article_004.states", answer)"""),
    code("""exercise("article_004.iteration_flops")"""),
    code("""
answer = None  # PFLOP
check("article_004.iteration_flops", answer)"""),
    markdown("""
What the checker says to a reader who forgot the factor 3 of the backward pass (the per-block
figure they pass is right, so the helper points at the last step):
"""),
    code("""check("article_004.iteration_flops", 11.58, layer=165.5)"""),
]
