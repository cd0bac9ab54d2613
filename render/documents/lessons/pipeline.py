"""Lesson: uneven pipeline stages. Why does BLOOM put 5 blocks on its first and last stage?"""

from llm_formulas.formulas.data.layouts import LAYOUTS
from llm_formulas.render.documents.figures import Figures
from llm_formulas.render.documents.notebooks import code, markdown

F = Figures("pipeline", model="bloom-176b", gpu="a100-80gb", minutes=15, layout="bloom-176b", s=2048)
STAGES = LAYOUTS["bloom-176b"].stages
F.number("end_blocks", STAGES[0])
F.number("middle_blocks", STAGES[1])
F.number("middle_stages", len(STAGES) - 2)
F.value("head", "pipeline.logits_layers", digits=3)
F.number("last_work", STAGES[-1] + F["head"], digits=3)
F.number("embedding", F["V"] * F["h"], unit="parameter")
F.value("block", "params.decoder.layer", digits=3)
F.number("embedding_blocks", F["embedding"] / F["block"], digits=2)
F.number("first_stage_params", STAGES[0] * F["block"] + F["embedding"], unit="parameter", digits=3)
F.number("middle_stage_params", STAGES[1] * F["block"], unit="parameter", digits=3)
F.input("w_max", F["last_work"])
F.input("w_tot", F["l"] + F["head"])
F.value("step_factor", "pipeline.step_factor", digits=4)
F.value("bubble_uneven", "pipeline.bubble.uneven", percent=True, digits=2)
F.value("bubble_even", "cluster.bubble", percent=True, digits=1)
F.number("llama_p", 8)
F.number("llama_l", 80)
F.name("stages_code", ", ".join(map(str, STAGES)))

CELLS = [
    markdown(F.text("""
# Uneven pipeline stages: {{model}}'s {{end_blocks}}, {{middle_blocks}}, …, {{middle_blocks}}, {{end_blocks}}

> *"{{l}} blocks on {{p}} stages do not divide. BLOOM gave the first and last stage {{end_blocks}}
> blocks and the embedding, and the {{middle_stages}} others {{middle_blocks}}: which stage is the
> slowest, on {{gpu}} GPUs?"* (after 004; BigScience 2022)

The slowest stage paces 1F1B; the first keeps p micro-batches of its layers. About {{minutes}}.
Try it whole: `llm-formulas estimate --model bloom-176b --gpu a100-80gb --seq 2048 --layout bloom-176b`.

Layer-forwards are the unit of work here: one layer's forward pass for one micro-batch, whatever
its size, so that stages of different models can be compared and the head can be counted in
the same unit as the blocks around it.
""")),
    code(F.code("""
derive("pipeline.logits_layers")
logits = put("pipeline.logits_layers", V={{V}}, h={{h}}, s={{s}})""")),
    markdown(F.text("""
The last stage's {{end_blocks}} blocks plus the head are {{last_work}} layer-forwards: the slowest
stage. The picture replays 1F1B over these stages, the head on the last:
""")),
    code(F.code("""picture("uneven_schedule", model="bloom-176b", stages=({{stages_code}}), s={{s}}, m=24)""")),
    code(F.code("""
derive("pipeline.step_factor")
derive("pipeline.bubble.uneven")
w_max = {{end_blocks}} + logits.value
w_tot = {{l}} + logits.value
put("pipeline.step_factor", p={{p}}, w_max=w_max, w_tot=w_tot)
put("pipeline.bubble.uneven", p={{p}}, m={{m}}, w_max=w_max, w_tot=w_tot)
put("cluster.bubble", p={{p}}, m={{m}})""")),
    code("""
derive("pipeline.activations.whole_model")"""),
    markdown(F.text("""
## Why {{end_blocks}}, {{middle_blocks}}, …, {{middle_blocks}}, {{end_blocks}} and not {{middle_blocks}}, …, {{middle_blocks}}, 4

{{l}} blocks do not divide over {{p}} stages, so some stages must hold more than others.
BLOOM's engineers had two things to balance: memory and time. The first stage holds the
embedding matrix, V × h = {{embedding}}, {{embedding_blocks}} blocks' worth (a block is
{{block}}); the last stage holds the output head, which in BLOOM is the same matrix, tied, so a
copy of it. Giving the first and last stage one block fewer evens out the parameters and the
optimizer states: the first stage holds {{first_stage_params}} against a middle stage's
{{middle_stage_params}}. For memory this is close to balanced.

For time it is not quite. The embedding lookup costs no FLOPs, but the output head is a GEMM
over the whole vocabulary: V/(12h + 2s) = {{head}} layer-forwards of work. So the last stage
computes {{last_work}} layer-forwards per micro-batch against {{middle_blocks}} for a middle stage, and
in 1F1B the slowest stage sets the pace of every slot. The step takes p·w_max/w_tot =
{{step_factor}} times the balanced compute, and the bubble measured against the balanced ideal
grows from (p − 1)/m to p(m + p − 1)·w_max/(m·w_tot) − 1. With m = {{m}} micro-batches that is
{{bubble_uneven}} rather than {{bubble_even}}. A partition {{end_blocks}}, {{middle_blocks}}, …,
{{middle_blocks}}, 4 with the head on a 4-block stage would balance time better and
memory worse; the right trade-off depends on whether the run is short of memory or of time.

The first stage also holds the most activations: under 1F1B it keeps p micro-batches of its own
layers in flight, so its activations are p·l₁ layers' worth, and the embedding's dropout mask on
top. `llm-formulas estimate --layout bloom-176b` runs the published layout; a partition that does
not sum to the model's layers, has an empty stage, or has a different length than p is refused
with one line.
""")),

    markdown(F.text("""
## Summary, and what to try next

A pipeline is as fast as its slowest stage and as full as its first stage's memory allows; an
uneven partition trades one against the other. The catalogue states the pace
(`pipeline.step_factor`), the bubble against the balanced ideal (`pipeline.bubble.uneven`),
which reduces to (p − 1)/m when the stages are even, and the first stage's activations, which
reduce to Korthikanti's 1F1B figure. Try other partitions of BLOOM's {{l}} blocks with `estimate
--stages`: {{middle_blocks}}, …, {{middle_blocks}}, 4 with the head on the last stage balances the time;
{{end_blocks}}, {{middle_blocks}}, …, {{middle_blocks}}, {{end_blocks}} with the embedding on both ends
balances the memory; an even split is impossible. Then try a model whose layers do divide,
Llama-2-70B ({{llama_l}} layers) on p = {{llama_p}}, with `--stages 10,10,10,10,10,10,10,10`: the
report equals the balanced one except that the head now makes the last stage the slowest,
which the balanced estimate ignores.
""")),
    markdown(F.text("""
## Exercise

Type your answer in place of `None` and run the cell. A wrong answer gets the step that
differs, or the usual slip it matches (the attention's 2s left out). The worked
solution is not in this notebook: `from llm_formulas.render.documents.exercises import solution` if you are
stuck.
""")),
    code("""exercise("pipeline.bloom_last_stage")"""),
    code("""
answer = None  # layer-forwards
check("pipeline.bloom_last_stage", answer)"""),
]
