"""Lesson: cluster sizing. Will Llama-2-70B train on 64 A100s, and for how long?"""

from llm_formulas.render.documents.figures import Figures
from llm_formulas.render.documents.notebooks import code, markdown

F = Figures("cluster", model="llama2-70b", gpu="a100-80gb", minutes=40, n=64, t=8, p=8, b=1, D=2 * 10**12, U="2/5",
            tau=30 * 86400, d=1)
F.value("work", "flops.training.approx")
F.literal("D_value", int(F["D"]))
F.number("U_percent", F["U"], percent=True)
F.value("days", "cluster.training_time", display="years", digits=2)
F.value("gpus_month", "cluster.gpus_for_deadline", digits=2)
F.number("bubble_target", "1/10", percent=True)
F.number("m_needed", (F["p"] - 1) / F["bubble_target"])
F.source_input("f", "S1", "f")
F.number("f_percent", F["f"], percent=True, digits=1)
F.source_input("replicas", "S1", "n")
F.case("speed_up", "S1", digits=4)
F.number("amdahl_loss", 1 - F["speed_up"] / F["replicas"], percent=True, digits=2)
F.number("f_large", "1/20", percent=True)
F.number("cap_large", 20)
F.source_input("H_gpu", "S16c", "H_gpu")
F.case("meta_U", "S16c", digits=2)
F.number("meta_U_percent", F["meta_U"], percent=True, digits=2)
F.number("shorter", 1 - F["U"] / F["meta_U"], percent=True, digits=1)
F.value("days_meta", "cluster.training_time", U=F["meta_U"], display="years", digits=2)

CELLS = [
    markdown(F.text("""
# Cluster sizing: will {{model}} train on {{n}} GPUs, and for how long?

> *"Meta trained {{model}} on D = {{D}}. We have {{n}} {{gpu}}. How long would it take us,
> and how many GPUs would we need to do it in a month?"*

The memory lesson showed that {{model}} *fits* on {{n}} A100 80 GB (t = {{t}}, p = {{p}},
micro-batch {{b}}, selective recompute). Fitting is not training: this lesson asks how long it runs. The answer
is built from four pieces of the catalogue, each derived and checked by the engine in front of
you: the total training FLOPs (6ΨD), the time those FLOPs take on n GPUs of peak X at a
utilization U, the pipeline bubble that lowers U, and Amdahl's law, which says how much any
serial part (an all-reduce that cannot hide under compute) caps the speed-up. At the end you
will turn the question around, as Bilibili's infra team does in their article, and back-solve
the utilization that a published run must have reached. Plan about {{minutes}}.

Numbers are printed in human units (days, ZFLOP = 10²¹ FLOP); evaluate `.exact` on any value
to see every digit.
""")),
    markdown(F.text("""
## 1. How much work: 6ΨD

Each token passes every weight once forward (a multiply and an add: 2 FLOPs per parameter)
and twice backward (the gradient for the input and the gradient for the weight): 6 FLOPs per
parameter per token. The engine proves this as an approximation of the exact per-layer count of
the classic GPT block (12h² weights a layer, a 4h MLP), with the exact relative error (the attention
scores and the logits, which 6Ψ leaves out) and the limit in which that error vanishes. The leading
term counts every weight whatever the block, so 6ΨD holds for {{model}}'s GQA and SwiGLU layers too,
evaluated below at its own Ψ; the error term printed with the proof is GPT's, and the flops lesson
goes through the exact count of any block.
""")),
    code(F.code("""
derive("flops.training.approx")
M = model("llama2-70b")
A100 = gpu("a100-80gb")
work = put("flops.training.approx", P=M["P"], D={{D_value}})""")),
    markdown(F.text("""
## 2. How long: divide by what the cluster delivers

The work is {{work}}. A GPU never runs at its datasheet peak X ({{X}} dense bf16 for an A100).
The share it does reach is the model FLOPs utilization U: {{U_percent}} is good for a large dense
model; Meta's own run (section 5) reached a little more. Time is work over delivered FLOP/s:
""")),
    code(F.code("""
derive("cluster.training_time")
days = put("cluster.training_time", P=M["P"], D={{D_value}}, n={{n}}, X=A100["X"], U="2/5")""")),
    markdown(F.text("""
So the honest answer to the opening question: **it fits, but it would take {{days}}.**
The picture shows how the time falls with the GPU count (a straight line on log axes: the
formula assumes U does not drop as n grows, which the next sections question), and the cost of
full recompute, which does the forward pass twice (8ΨD).
""")),
    code("""picture("training_days", model="llama2-70b", tokens=2e12, gpu_key="a100-80gb", U="2/5")"""),
    markdown(F.text("""
Turned around: how many GPUs for a deadline τ? Solve T = τ for n. The engine does the solving
and proves the solution satisfies the equation.
""")),
    code(F.code("""
derive("cluster.gpus_for_deadline")
gpus = put("cluster.gpus_for_deadline", P=M["P"], D={{D_value}}, X=A100["X"], U="2/5", tau=30 * 86400)""")),
    markdown(F.text("""
About {{gpus_month}} A100s for a month at {{U_percent}}: the scale of cluster Meta trained Llama 2 on.

## 3. The pipeline bubble

Pipeline parallelism (needed above to fit the states) costs time: with p stages and m
micro-batches per iteration, each stage idles for p − 1 micro-batch slots while the pipeline
fills and drains. The bubble is the idle time over the useful time. The picture replays the
one-forward-one-backward schedule GPU by GPU, and the interleaved one beside it:
""")),
    code("""picture("pipeline_schedule", p=4, m=8, v=2)"""),
    code("""derive("cluster.bubble")"""),
    code(F.code("""picture("bubble_vs_m", stages=(2, 4, {{p}}, 12, 16), mark=({{p}}, {{m_needed}}))""")),
    markdown(F.text("""
With p = {{p}} a bubble of at most {{bubble_target}} needs m ≥ {{m_needed}} micro-batches per
iteration (m = {{m_needed}} gives exactly {{bubble_target}}; strictly under it takes one more), so a
global batch of at least {{m_needed}} sequences per data-parallel replica: with
{{n}} GPUs in one replica (d = {{d}}) that is
fine, but it ties the batch size to the pipeline depth. Interleaving v model chunks per GPU
divides the bubble by v, at the price of v times more pipeline traffic.

## 4. Amdahl: the part that does not scale

Data parallelism adds replicas, but the gradient all-reduce that does not hide under the
backward pass is serial work. If a fraction f of a step cannot be parallelised, n workers give
a speed-up of 1/(f + (1 − f)/n), never more than 1/f. The Bilibili article works one example:
{{f_percent}} serial (f = {{f}}) on {{replicas}} replicas.
""")),
    code("""
derive("cluster.amdahl")
source_figure("S1")"""),
    code("""picture("amdahl", fractions=("1/2000", "1/200", "1/20"))"""),
    markdown(F.text("""
At {{f_percent}} the speed-up is {{speed_up}}, a loss of {{amdahl_loss}} on {{replicas}} replicas;
at {{f_large}} no number of GPUs gives more than {{cap_large}} times one.
This is why the communication lesson insists that all-reduces hide under compute.

## 5. What utilization did a real run reach?

Published GPU-hours give the utilization directly: U = 6ΨD / (GPU-hours × 3600 × X). Llama-2's
paper reports {{H_gpu}} A100 GPU-hours for the 70B model on D = {{D}} (the article "Estimating
the resources to train a large model" does this arithmetic for the three sizes):
""")),
    code("""
derive("cluster.mfu.gpu_hours")
source_figure("S16c")"""),
    markdown(F.text("""
U = {{meta_U}}, {{meta_U_percent}} of peak: our {{U_percent}} above was honest, even a little pessimistic. With
Meta's utilization the {{n}}-GPU run is {{shorter}} shorter, and still {{days_meta}}.

## Exercises

Type your answer in place of `None` and run the cell. A wrong answer gets the step that
differs; pass intermediate values as keywords to find your slip. The worked solutions are
not in this notebook: `from llm_formulas.render.documents.exercises import solution` if you are stuck.
""")),
    code("""exercise("cluster.amdahl")"""),
    code("""
answer = None  # the speed-up, a plain number
check("cluster.amdahl", answer)"""),
    code("""exercise("cluster.llama2_70b_days")"""),
    code("""
answer = None  # days
check("cluster.llama2_70b_days", answer)"""),
    markdown(F.text("""
What the checker says to a reader who used 8ΨD (full recompute) where the question says no
recompute: the first step differs, by 4/3.
""")),
    code("""check("cluster.llama2_70b_days", 1623, flops=1.12e24)"""),
]
