"""Lesson: "Estimating the resources to train a large model", re-derived."""

from llm_formulas.render.documents.notebooks import code, markdown

CELLS = [
    markdown("""
# Article 002: estimating the resources to train a large model

> *"We want to continue pre-training a 34B model on 5 billion tokens. How many GPU-hours do we
> budget, and how much memory per GPU?"*

The short, unsigned article "大模型训练资源评估：算力与显存需求详解" ("Estimating the resources to
train a large model: compute and memory in detail") answers exactly this. It first calibrates
the utilization U from the GPU-hours Meta published for Llama-2, then applies C = 6PD to a 34B
model on 5B tokens, then estimates memory, including an activation formula for LLaMA-7B.
(Lessons are numbered after the source articles 000, 001, 002 and 004; no 003 was among the
sources.) It is a useful recipe, and it contains a slip of a factor of ten that propagates
into its GPU-hours and its schedule. This lesson follows its steps, checks each figure with the
catalogue and shows where the slip enters. About 30 minutes.
"""),
    markdown("""
## Step 1: utilization from published GPU-hours

The Llama 2 paper reports 184,320, 1,038,336 and 1,720,320 A100 GPU-hours for the 7B, 34B and
70B models on 2T tokens. Dividing 6PD by what those hours could do at 312 TFLOPS gives the
utilization each run reached. The article prints 40.5 %, 35.0 % and 43.5 %; the first is
truncated (40.57 %):
"""),
    code("""
derive("cluster.mfu.gpu_hours", only=("U", "cluster.mfu.gpu_hours"))
for case in ("S16a", "S16b", "S16c"):
    source_figure(case)
refutation("cluster.mfu.gpu_hours", "S16a: LLaMA-2 7B at 40.5 %")"""),
    markdown("""
## Step 2: the compute of the new run, and a factor of ten

C = 6 × 34 × 10⁹ × 5 × 10⁹ = 1.02 × 10²¹ FLOPs. The article prints 1.02 × 10²² and divides
that by what an A100 does at U = 0.35 to get 27,700 GPU-hours, where the right figure is
2,595. The engine derives the GPU-hours and refutes both printed figures:
"""),
    code("""
derive("cluster.gpu_hours", only=("H_GPU", "cluster.gpu_hours"))
refutation("cluster.gpu_hours", "002: C = 1.02e22")
refutation("cluster.gpu_hours", "S17: 27700 GPU-hours")"""),
    code("""source_figure("S17")"""),
    markdown("""
The slip propagates: the article then plans "14.5 days on 80 A100s", which inherits the same
factor of ten. Check it with the catalogue: the corrected budget on 80 GPUs is a day and a
half.
"""),
    code("""
days = put("cluster.training_time", P=34 * 10**9, D=5 * 10**9, n=80, X=312 * 10**12, U="7/20", label="the run on 80 A100s at U = 0.35")
refutation("cluster.gpu_hours", "002: 14.5 days on 80 A100")"""),
    code("""picture("training_days", model="llama2-70b", tokens=2e12, gpu_key="a100-80gb", U="87/200")"""),
    markdown("""
The picture puts the same arithmetic in perspective for the Llama-2-70B run the article
calibrated from (U = 43.5 %): about a month needs two thousand A100s, which is what Meta's
GPU-hours imply. The article's margin computation, "4466 × 1.2 = 5280", is also off
(4466 × 1.2 = 5359.2): a small one, but the kind a checked calculation never makes.
"""),
    code("""refutation("cluster.gpus_for_deadline", "002: 4466 × 1.2 = 5280")"""),
    markdown("""

## Step 3: memory of the 34B model

A budget in GPU-hours says nothing about whether the model fits. The article's next step is
the memory: the model states first, at 16 bytes per parameter (16-bit weights and gradients,
fp32 master weights, Adam's momentum and variance), which do not depend on the batch at all
and must be split over tensor and pipeline parallelism or ZeRO before anything else:
"""),
    code("""states = put("memory.model_states", P=34 * 10**9)"""),
    markdown("""
For the 34B model that is 544 GB, seven A100s' worth before a single activation, so even a
short continued pre-training run needs tensor or pipeline parallelism, or ZeRO-3 over the data
parallel group, on the same scale as the original training.

## Step 4: activations of LLaMA-7B, as printed

The article's activation formula for LLaMA-7B at b = 32, s = 2048 gives 3.1 × 10¹² bytes. The
arithmetic of the formula is right (3.0988 × 10¹²), but one of its terms, 8·a·b·s·h, matches no
tensor that a LLaMA layer stores (the per-head scores are a·b·s², not a·b·s·h). The engine
states the formula as printed, evaluates the article's case and refutes that term against the
tensor count:
"""),
    code("""
source_figure("S18")
refutation("memory.activations.llama_002", "S18: 8·a·b·s·h")"""),
    markdown("""
Every slip the engine refutes in this article (the list grows as more errata are proved):
"""),
    code("""slips("002")"""),
    markdown("""
Why do these slips matter more than their size suggests? Because a budget is a chain: the
utilization from step 1 feeds the GPU-hours of step 2, which feed the schedule and the
purchase order. A factor of ten in the middle of such a chain survives every later step
unnoticed, since each later step is computed correctly from a wrong input. Writing the chain
as catalogue formulas evaluated at exact inputs, and checking each printed figure against it,
catches the slip at the step where it enters.

So the answer to the opening question: **about 2,600 A100 GPU-hours (a day and a half on 80
GPUs), and 544 GB of model states spread over enough GPUs that each keeps well under its
80 GB** — not the 27,700 hours the article budgets.

## Exercises

Type your answer in place of `None`; a wrong answer gets the step that differs. The solutions
are not in this notebook.
"""),
    code("""exercise("article_002.utilization")"""),
    code("""
answer = None  # a fraction, 0.5 for 50 %
check("article_002.utilization", answer)"""),
    code("""exercise("article_002.gpu_hours")"""),
    code("""
answer = None  # GPU-hours
check("article_002.gpu_hours", answer)"""),
    markdown("""
What the checker says to a reader who copies the article's factor-of-ten slip:
"""),
    code("""check("article_002.gpu_hours", 25946, flops=1.02e22)"""),
]
