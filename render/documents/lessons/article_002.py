"""Lesson: "Estimating the resources to train a large model", re-derived."""

from llm_formulas.render.documents.figures import Figures
from llm_formulas.render.documents.notebooks import code, markdown

F = Figures("article_002", gpu="a100-80gb", minutes=30, compare_models=("llama2-70b",), P=34 * 10**9, D=5 * 10**9, U="7/20",
            n=80)  # the article's run: a 34B model (no preset), 5B tokens, U = 0.35, 80 GPUs
for size, case in (("7b", "S16a"), ("34b", "S16b"), ("70b", "S16c")):
    F.source_input(f"hours_{size}", case, "H_gpu")
    F.claimed(f"U_{size}", case, percent=True)
F.source_input("llama_D", "S16a", "D")
F.refuted("U_7b_printed", "cluster.mfu.gpu_hours", "S16a: LLaMA-2 7B at 40.5 %")
F.number("U_7b_exact", F["U_7b_printed_correct"], percent=True, digits=4)
F.value("C", "flops.training.approx")
F.refuted("C_printed", "cluster.gpu_hours", "002: C = 1.02e22")
F.refuted("hours", "cluster.gpu_hours", "S17: 27700 GPU-hours", digits=4)
F.refuted("schedule", "cluster.gpu_hours", "002: 14.5 days on 80 A100")
F.refuted("margin", "cluster.gpus_for_deadline", "002: 4466 × 1.2 = 5280", digits=5)
F.value("states", "memory.model_states")
F.number("a100s_for_states", -(-F["states"] // F["M_gpu"]))
F.source_input("act_b", "S18", "b")
F.source_input("act_s", "S18", "s")
F.claimed("S18", "S18")
F.case("S18_exact", "S18", display="TB", digits=5)

CELLS = [
    markdown(F.text("""
# Article 002: estimating the resources to train a large model

> *"We want to continue pre-training a model of Ψ = {{P}} on D = {{D}}, on {{gpu}} GPUs. How many
> GPU-hours do we budget, and how much memory per GPU?"*

The short, unsigned article "大模型训练资源评估：算力与显存需求详解" ("Estimating the resources to
train a large model: compute and memory in detail") answers exactly this. It first calibrates
the utilization U from the GPU-hours Meta published for Llama-2, then applies C = 6PD to a 34B
model on 5B tokens, then estimates memory, including an activation formula for LLaMA-7B.
(Lessons are numbered after the source articles 000, 001, 002 and 004; no 003 was among the
sources.) It is a useful recipe, and it contains a slip of a factor of ten that propagates
into its GPU-hours and its schedule. This lesson follows its steps, checks each figure with the
catalogue and shows where the slip enters. It calibrates on Llama-2. About {{minutes}}.
""")),
    markdown(F.text("""
## Step 1: utilization from published GPU-hours

The Llama 2 paper reports {{hours_7b}}, {{hours_34b}} and {{hours_70b}} A100 GPU-hours for the 7B,
34B and 70B models on D = {{llama_D}}. Dividing 6PD by what those hours could do at {{X}} gives
the utilization each run reached. The article prints {{U_7b}}, {{U_34b}} and {{U_70b}}; the first
is truncated ({{U_7b_exact}}; the engine refutes {{U_7b_printed}} against {{U_7b_printed_correct}}):
""")),
    code("""
derive("cluster.mfu.gpu_hours", only=("U", "cluster.mfu.gpu_hours"))
for case in ("S16a", "S16b", "S16c"):
    source_figure(case)
refutation("cluster.mfu.gpu_hours", "S16a: LLaMA-2 7B at 40.5 %")"""),
    markdown(F.text("""
## Step 2: the compute of the new run, and a factor of ten

C = 6ΨD = {{C}}. The article prints {{C_printed}} (the engine's refutation sets it beside the
correct {{C_printed_correct}}) and divides that by what an A100 does at
U = {{U}} to get {{hours}} GPU-hours, where the right figure is {{hours_correct}}. The engine derives the GPU-hours and refutes both printed figures:
""")),
    code("""
derive("cluster.gpu_hours", only=("H_GPU", "cluster.gpu_hours"))
refutation("cluster.gpu_hours", "002: C = 1.02e22")
refutation("cluster.gpu_hours", "S17: 27700 GPU-hours")"""),
    code("""source_figure("S17")"""),
    markdown(F.text("""
The slip propagates: the article then plans {{schedule}} on {{n}} A100s, which inherits the same
factor of ten. Check it with the catalogue: the corrected budget on {{n}} GPUs is
{{schedule_correct}}.
""")),
    code(F.code("""
days = put("cluster.training_time", P=34 * 10**9, D=5 * 10**9, n={{n}}, X=312 * 10**12, U="7/20", label="the run on {{n}} A100s at U = {{U:text}}")
refutation("cluster.gpu_hours", "002: 14.5 days on 80 A100")""")),
    code("""picture("training_days", model="llama2-70b", tokens=2e12, gpu_key="a100-80gb", U="87/200")"""),
    markdown(F.text("""
The picture puts the same arithmetic in perspective for the Llama-2-70B run the article
calibrated from (U = {{U_70b}}): about a month needs two thousand A100s, which is what Meta's
GPU-hours imply. The article's margin computation, 4466 × 1.2 = {{margin}}, is also off (the
product is {{margin_correct}}): a small one, but the kind a checked calculation never makes.
""")),
    code("""refutation("cluster.gpus_for_deadline", "002: 4466 × 1.2 = 5280")"""),
    markdown(F.text("""

## Step 3: memory of the 34B model

A budget in GPU-hours says nothing about whether the model fits. The article's next step is
the memory: the model states first, at 16 bytes per parameter (16-bit weights and gradients,
fp32 master weights, Adam's momentum and variance), which do not depend on the batch at all
and must be split over tensor and pipeline parallelism or ZeRO before anything else:
""")),
    code("""states = put("memory.model_states", P=34 * 10**9)"""),
    markdown(F.text("""
For the model of Ψ = {{P}} that is {{states}}, {{a100s_for_states}} A100s' worth before a single activation, so even a
short continued pre-training run needs tensor or pipeline parallelism, or ZeRO-3 over the data
parallel group, on the same scale as the original training.

## Step 4: activations of LLaMA-7B, as printed

The article's activation formula for LLaMA-7B at b = {{act_b}}, s = {{act_s}} gives {{S18}}. The
arithmetic of the formula is right ({{S18_exact}}), but one of its terms, 8·a·b·s·h, matches no
tensor that a LLaMA layer stores (the per-head scores are a·b·s², not a·b·s·h). The engine
states the formula as printed, evaluates the article's case and refutes that term against the
tensor count:
""")),
    code("""
source_figure("S18")
refutation("memory.activations.llama_002", "S18: 8·a·b·s·h")"""),
    markdown(F.text("""
Every slip the engine refutes in this article (the list grows as more errata are proved):
""")),
    code("""slips("002")"""),
    markdown(F.text("""
Why do these slips matter more than their size suggests? Because a budget is a chain: the
utilization from step 1 feeds the GPU-hours of step 2, which feed the schedule and the
purchase order. A factor of ten in the middle of such a chain survives every later step
unnoticed, since each later step is computed correctly from a wrong input. Writing the chain
as catalogue formulas evaluated at exact inputs, and checking each printed figure against it,
catches the slip at the step where it enters.

So the answer to the opening question: **{{hours_correct}} A100 GPU-hours ({{schedule_correct}}
on {{n}} GPUs), and {{states}} of model states spread over enough GPUs that each keeps well under
its {{M_gpu}}** — not the {{hours}} hours the article budgets.

## Exercises

Type your answer in place of `None`; a wrong answer gets the slip it matches or the step
that differs. The solutions
are not in this notebook.
""")),
    code("""exercise("article_002.utilization")"""),
    code("""
answer = None  # a fraction, 0.5 for 50 %
check("article_002.utilization", answer)"""),
    code("""exercise("article_002.gpu_hours")"""),
    code("""
answer = None  # GPU-hours
check("article_002.gpu_hours", answer)"""),
    markdown(F.text("""
What the checker says to a reader who copies the article's factor-of-ten slip:
""")),
    code("""check("article_002.gpu_hours", 25946, flops=1.02e22)"""),
]
