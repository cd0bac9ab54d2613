"""Lesson: uneven pipeline stages. Why does BLOOM put 5 blocks on its first and last stage?"""

from llm_formulas.render.documents.notebooks import code, markdown

CELLS = [
    markdown("""
# Uneven pipeline stages: BLOOM-176B's 5, 6, …, 6, 5

> *"70 blocks on 12 stages do not divide. BLOOM gave the first and last stage 5 blocks and the
> embedding, and the ten others 6: which stage is the slowest?"* (after 004; BigScience 2022)

The slowest stage paces 1F1B; the first keeps p micro-batches of its layers. About 15 minutes.
Try it whole: `llm-formulas estimate --model bloom-176b --gpu a100-80gb --seq 2048 --layout bloom-176b`.

Layer-forwards are the unit of work here: one layer's forward pass for one micro-batch, whatever
its size, so that stages of different models can be compared and the head can be counted in
the same unit as the blocks around it.
"""),
    code("""
derive("pipeline.logits_layers")
logits = put("pipeline.logits_layers", V=250880, h=14336, s=2048)"""),
    markdown("""
The last stage's 5 blocks plus the head are 6.42 layer-forwards: the slowest stage.
"""),
    code("""
derive("pipeline.step_factor")
derive("pipeline.bubble.uneven")
w_max = 5 + logits.value
w_tot = 70 + logits.value
put("pipeline.step_factor", p=12, w_max=w_max, w_tot=w_tot)
put("pipeline.bubble.uneven", p=12, m=128, w_max=w_max, w_tot=w_tot)
put("cluster.bubble", p=12, m=128)"""),
    code("""
derive("pipeline.activations.whole_model")"""),
    markdown("""
## Why 5, 6, …, 6, 5 and not 6, 6, …, 6, 4

Seventy blocks do not divide over twelve stages, so some stages must hold more than others.
BLOOM's engineers had two things to balance: memory and time. The first stage holds the
embedding matrix, 250880 × 14336 = 3.6 billion parameters, about one and a half blocks' worth
(a block is 2.47 billion); the last stage holds the output head, which in BLOOM is the same
matrix, tied, so a copy of it. Giving the first and last stage one block fewer evens out the
parameters and the optimizer states: the first stage holds 15.9 billion parameters against a
middle stage's 14.8. For memory this is close to balanced.

For time it is not quite. The embedding lookup costs no FLOPs, but the output head is a GEMM
over the whole vocabulary: V/(12h + 2s) = 1.42 layer-forwards of work. So the last stage
computes 6.42 layer-forwards per micro-batch against six for a middle stage, and in 1F1B the
slowest stage sets the pace of every slot. The step takes p·w_max/w_tot = 1.079 times the
balanced compute, and the bubble measured against the balanced ideal grows from (p − 1)/m to
p(m + p − 1)·w_max/(m·w_tot) − 1. With m = 128 micro-batches that is 17 % rather than 9 %.
A partition 5, 6, …, 6, 4 with the head on a 4-block stage would balance time better and
memory worse; the right trade-off depends on whether the run is short of memory or of time.

The first stage also holds the most activations: under 1F1B it keeps p micro-batches of its own
layers in flight, so its activations are p·l₁ layers' worth, and the embedding's dropout mask on
top. `llm-formulas estimate --layout bloom-176b` runs the published layout; a partition that does
not sum to the model's layers, has an empty stage, or has a different length than p is refused
with one line.
"""),

    markdown("""
## Summary, and what to try next

A pipeline is as fast as its slowest stage and as full as its first stage's memory allows; an
uneven partition trades one against the other. The catalogue states the pace
(`pipeline.step_factor`), the bubble against the balanced ideal (`pipeline.bubble.uneven`),
which reduces to (p − 1)/m when the stages are even, and the first stage's activations, which
reduce to Korthikanti's 1F1B figure. Try other partitions of BLOOM's 70 blocks with `estimate
--stages`: 6, 6, …, 6, 4 with the head on the last stage balances the time; 5, 6, …, 6, 5 with
the embedding on both ends balances the memory; an even split is impossible. Then try a model
whose layers do divide, Llama-2-70B on p = 8, with `--stages 10,10,10,10,10,10,10,10`: the
report equals the balanced one except that the head now makes the last stage the slowest,
which the balanced estimate ignores.
"""),
    markdown("""
## Exercise

Type your answer in place of `None` and run the cell. A wrong answer gets the step that
differs, or the usual slip it looks like (a factor of 1000, of 2, GB for GiB). The worked
solution is not in this notebook: `from llm_formulas.render.documents.exercises import solution` if you are
stuck.
"""),
    code("""exercise("pipeline.bloom_last_stage")"""),
    code("""
answer = None  # layer-forwards
check("pipeline.bloom_last_stage", answer)"""),
]
