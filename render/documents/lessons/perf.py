"""Lesson: the performance model. Why did Megatron choose t = 8, p = 64 for 1T on 3072 GPUs?

A three-term step-time model first (compute, blocking TP communication, the bubble), then the toolkit's full
performance model (formulas/topics/performance.py) through ``render.documents.lesson_layouts``.
"""

from llm_formulas.formulas.data.calibration import a100
from llm_formulas.render.documents.figures import Figures
from llm_formulas.render.documents.lesson_layouts import Cluster, terms
from llm_formulas.render.documents.notebooks import code, markdown

F = Figures("perf", model="megatron-1t", gpu="a100-80gb", minutes=40, t=8, p=64, d=6, n=3072, B=3072, s=2048, b=1, q=2)
F.input("m", F["B"] // (F["b"] * F["d"]))
for name, value in (("t_wide", 16), ("t_narrow", 4), ("p_short", 32), ("p_deep", 128), ("v_as_run", 1)):
    F.number(name, value)  # the layouts the lesson compares with the published one
F.published("paper_tflops", "megatron2021.t1.1T.peak", measured="X_run")
F.published("paper_share", "megatron2021.t1.1T.peak")
F.number("eta", a100().eta_gemm, percent=True, digits=3)
F.number("nvlink_one_way", F["W_link"] / 2, unit="byte/second")
F.number("network", 25 * 10**9, unit="byte/second")
F.value("megatron_flops", "flops.megatron")
F.number("compute", F["megatron_flops"] / (F["n"] * F["X"] * a100().eta_gemm), unit="second")
F.number("tp_bytes", F.compute("comms.tp.sent_per_microbatch") * F["m"] * 3 / 2, unit="byte")
F.number("tp", F["tp_bytes"] / F["nvlink_one_way"], unit="second")
F.value("bubble_share", "cluster.bubble", percent=True, digits=3)
F.number("bubble", F["bubble_share"] * (F["compute"] + F["tp"]), unit="second")
F.number("simple_step", F["compute"] + F["tp"] + F["bubble"], unit="second")
F.number("simple_rate", F["megatron_flops"] / (F["n"] * F["simple_step"]), unit="FLOP/second")
CLUSTER = Cluster("megatron-1t", int(F["n"]), int(F["B"]), int(F["s"]))
AS_RUN = CLUSTER.predict(8, 64, v=1)
F.number("full_step", sum(terms(AS_RUN).values()), unit="second")
F.number("full_rate", F["megatron_flops"] / (F["n"] * F["full_step"]), unit="FLOP/second")
F.number("full_mfu", AS_RUN["time"]["mfu"], percent=True, digits=3)
F.number("rate_share", F["full_rate"] / F["X"], percent=True, digits=3)
F.number("recompute_factor", F["megatron_flops"] / F.compute("flops.training", b=F["B"]), digits=4)
F.number("ratio_mfu", F["rate_share"] / F["recompute_factor"], percent=True, digits=3)
F.number("states_per_gpu_32", 16 * F["P"] / (8 * 32), unit="byte")
F.number("params_per_gpu_32", F["P"] / (8 * 32), unit="parameter")
F.number("optimizer_step_32", 20 * F["P"] / (8 * 32), unit="byte")
P32 = CLUSTER.predict(8, 32)
P64 = CLUSTER.predict(8, 64)
F.number("memory_32", P32["memory"]["total"], unit="byte", display="GB", digits=3)
F.number("memory_64", P64["memory"]["total"], unit="byte", display="GB", digits=3)
F.number("memory_64_as_run", AS_RUN["memory"]["total"], unit="byte", display="GB", digits=3)
F.number("faster_32", 1 - float(P32["time"]["step_seconds"]) / float(P64["time"]["step_seconds"]), percent=True, digits=1)
F.number("over_32", P32["memory"]["total"] - F["M_gpu"], unit="byte")
F.number("nvlink_vs_network", F["nvlink_one_way"] / F["network"])

CELLS = [
    markdown(F.text("""
# Performance: why did Megatron choose t = {{t}}, p = {{p}} for 1T on {{n}} GPUs?

> *"Megatron trained a trillion-parameter model with tensor parallelism {{t}} and {{p}} pipeline
> stages. Why not 16 × 32, or 8 × 32? What would each have cost per step?"*

Narayanan et al. 2021 ("Efficient Large-Scale Language Model Training on GPU Clusters Using
Megatron-LM", Table 1) trained {{model}} (h = {{h}}, a = {{a}}, l = {{l}}) on {{n}} {{gpu}} with
tensor parallelism t = {{t}}, pipeline parallelism p = {{p}} and data parallelism d = {{d}}, a
global batch of B = {{B}} sequences of s = {{s}} tokens, full activation recompute and
micro-batches of one sequence, and reached {{paper_tflops}} per GPU ({{paper_share}} of peak).
This lesson first prices one iteration with a model of three terms anyone can redo on paper,
then asks the toolkit's full performance model (`formulas/topics/performance.py`, its constants fitted
on that same Table 1) why this layout and not another, term by term. Plan {{minutes}}; the cells
print seconds per iteration and GB per GPU.
""")),
    markdown(F.text("""
## 1. A step in three terms

An iteration of a pipelined, tensor-parallel run costs, to a first approximation:

1. **compute**: the FLOPs of the iteration spread over the n GPUs, at the fraction η of peak a
   large GEMM reaches. Megatron counts the FLOPs with its Eq. 3 (full recompute: the layers run
   forward twice), {{megatron_flops}} for this batch; at η = {{eta}} of the {{X}} peak that is
   {{compute}} per iteration;
2. **blocking tensor-parallel communication**: each layer all-reduces its activations two times
   in the forward and two in the backward, and once more twice in the recomputed forward; over
   the m = {{m}} micro-batches of a replica a GPU sends {{tp_bytes}} across NVLink at
   {{nvlink_one_way}} one way: {{tp}};
3. **the pipeline bubble**: the first and last stages idle while the pipeline fills and drains,
   (p − 1)/m = {{bubble_share}} of the time the rest takes: {{bubble}}.

Their sum is {{simple_step}}, which would be {{simple_rate}} per GPU by Megatron's count. The
bubble is the one term with a derivation of its own here:
""")),
    code('''derive("cluster.bubble")'''),
    code(F.code('''
compute = evaluate("flops.megatron", B={{B}}, s={{s}}, l={{l}}, h={{h}}, V={{V}})
note(f"Eq. 3 FLOPs of one iteration: **{compute}**; the three terms: {{compute:text}} + {{tp:text}} + {{bubble:text}} = **{{simple_step:text}}**.")''')),
    markdown(F.text("""
## 2. The full model: what the three terms leave out

The simple model is optimistic: it takes every GEMM at its large-matrix efficiency, charges no
kernel launches, no point-to-point sends between stages, no exposed gradient all-reduce and no
optimizer step. The toolkit's performance model prices each GEMM by its shape (a small GEMM runs
below η), each kernel's fixed cost, the stage-to-stage sends, the data-parallel all-reduce and
the optimizer, with Megatron-LM 2021's own settings (the framework `megatron-lm-2021`: ZeRO 0,
full recompute, the gradient all-reduce after the last backward, every TP all-reduce blocking,
an fp16 optimizer holding 20 bytes per parameter at its step). The authors' script for the
table (NVIDIA/Megatron-LM, `examples/sc21/run_table_1.sh`) ran this row without the interleaved
schedule (v = {{v_as_run}}). One helper runs the model per layout:
""")),
    code(F.code('''
from llm_formulas.render.documents.lesson_layouts import Cluster, row

cluster = Cluster("megatron-1t", n={{n}}, B={{B}}, s={{s}})
as_run, _ = row("t={{t}} p={{p}} d={{d}} (as run)", cluster.predict({{t}}, {{p}}, v=1))
interleaved, _ = row("t={{t}} p={{p}} d={{d}} interleaved", cluster.predict({{t}}, {{p}}, v=2))
rate = compute.value / ({{n}} * sum(as_run.values()))
note(f"As run: {Value(rate, 'FLOP/second')} per GPU by Megatron's count; the paper measured {{paper_tflops:text}}.")''')),
    markdown(F.text("""
The full model predicts {{full_step}} per iteration as run, {{full_rate}} per GPU, against the
paper's {{paper_tflops}}. Its line prints an **MFU of {{full_mfu}}**, which is not
{{full_rate}} over the {{X}} peak ({{rate_share}}): the two count different FLOPs. Megatron's
TFLOP/s count Eq. 3, whose layers run forward twice under full recompute, {{recompute_factor}}
times the model's own FLOPs (`flops.training`, forward and backward once: what MFU counts,
whatever the run recomputes). {{rate_share}} divided by {{recompute_factor}} is {{ratio_mfu}},
the MFU. The paper's {{paper_share}} of peak is the first kind (hardware FLOPs, recompute
included); the utilization lesson derives both.

## 3. Why t = {{t}}: tensor parallelism stops at the node

From here on each layout runs at the fastest v it allows, so that the rows compare layouts, not
schedules. Each layer's all-reduces block the next GEMM. Inside a DGX node they cross NVLink
({{nvlink_one_way}} each way); at t = {{t_wide}} the ring crosses the {{network}} network and the same
bytes take {{nvlink_vs_network}} times longer. A smaller t ({{t_narrow}}) leaves twice the parameters per
GPU and, at the same p, twice the data parallelism: half the micro-batches per replica, so twice
the bubble.
""")),
    code(F.code('''
for t, p in (({{t_narrow}}, {{p}}), ({{t}}, {{p}}), ({{t_wide}}, {{p_short}}), ({{t}}, {{p_short}}), ({{t}}, {{p_deep}})):
    row(f"t={t} p={p} d={{{n}} // (t * p)}", cluster.predict(t, p))''')),
    markdown(F.text("""
## 4. Why p = {{p}}: the smallest pipeline with room to spare

Without ZeRO each GPU holds 16 bytes of model state per parameter of its share Ψ/(t·p) through
the backward, and Megatron-LM 2021's optimizer 20 at its step: at t = {{t}}, p = {{p_short}} a GPU holds
{{params_per_gpu_32}}, {{states_per_gpu_32}} before a single activation ({{optimizer_step_32}} at
the step), and the first stage of a 1F1B pipeline holds p micro-batches of its l/p layers'
inputs. At p = {{p_short}} the model counts {{memory_32}} of the {{M_gpu}}, {{over_32}} too much once the
first stage's embedding and the one layer the backward rebuilds are counted beside its layers: it does not fit,
though the model predicts it {{faster_32}} faster, and the count still leaves out the allocator's fragmentation,
NCCL's buffers and cuBLAS workspaces. p = {{p}} needs
{{memory_64}} interleaved, {{memory_64_as_run}} as run. Deeper pipelines fit easily, but a deeper
pipeline means fewer replicas (d = n/(t·p)) and a slower stage: the bubble (p − 1)/m stays near
{{bubble_share}} because m = B/d grows with p, while the logits weigh more on a stage of fewer
layers.
""")),
    code(F.code('''
for p in ({{p_short}}, {{p}}, {{p_deep}}):
    d = {{n}} // ({{t}} * p)
    print(f"p={p:<4} d={d:<3} m={{{B}} // d:<4} bubble (p-1)/m = {(p - 1) / ({{B}} // d):.3f}")''')),
    markdown(F.text("""
## 5. Where the time goes

The stacked bars split each layout's predicted step into the model's terms, with each layout's
memory per GPU. t = {{t_wide}} pays the network for its all-reduces; t = {{t_narrow}} doubles the
bubble and does not fit; t = {{t}}, p = {{p_short}} is a little faster but leaves little room;
t = {{t}}, p = {{p_deep}} cannot interleave (one layer per stage) and pays twice the bubble.
""")),
    code(F.code('''
import matplotlib.pyplot as plt
import numpy as np

from llm_formulas.render.documents.lesson_layouts import PARTS

layouts = {"t={{t}} p={{p}}\\n(published t, p)": ({{t}}, {{p}}), "t={{t_wide}} p={{p_short}}": ({{t_wide}}, {{p_short}}),
           "t={{t}} p={{p_short}}": ({{t}}, {{p_short}}), "t={{t}} p={{p_deep}}": ({{t}}, {{p_deep}}), "t={{t_narrow}} p={{p}}": ({{t_narrow}}, {{p}})}
bars, labels = {}, []
for name, shape in layouts.items():
    bars[name], memory = row(name.replace("\\n", " "), cluster.predict(*shape))
    labels.append(f"{name}\\n{memory:.0f} GB")
figure, axes = plt.subplots(figsize=(8, 4), dpi=80)
bottom = np.zeros(len(bars))
for part in PARTS:
    values = np.array([bars[name][part] for name in bars])
    axes.bar(labels, values, bottom=bottom, label=part.replace("_seconds", "").replace("_", " "))
    bottom += values
axes.set_ylabel("seconds per iteration")
axes.set_title("1T on {{n}} A100s: where the predicted step time goes")
axes.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1))
show(figure)''')),
    markdown(F.text("""
Read the rows as a budget. Compute dominates every layout, and it barely moves: the same FLOPs
are done whatever the split, only at slightly different GEMM efficiencies. What separates the
layouts are the smaller terms around it, and each of them is one of the earlier lessons: the
blocking TP all-reduces (the communication lesson's bandwidth against t), the bubble (the
cluster lesson's (p − 1)/m), the DP all-reduce that does not hide (Amdahl), and the memory that
decides whether a layout is allowed at all (the memory lesson's first stage).

## 6. What plan says today

With the features Megatron gained since (sequence parallelism and selective recompute,
Korthikanti et al. 2022; the distributed optimizer, ZeRO-1; the gradient all-reduce overlapped
with the backward), memory no longer forces p = {{p}} and the model prefers a shallower pipeline;
`llm-formulas plan --explain` prints where the published layout then ranks and why
(`--framework megatron-lm-2021` restricts the search to the paper's features instead).
""")),
    code(F.code('''
from llm_formulas.render.numeric.plan import explain

today = cluster.layout({{t}}, {{p}}, zero=1, recompute="selective", sp=True, v=2)
result = explain(cluster.sizes, cluster.inputs("default"), today)
print(f"rank {result['rank']} of {result['of']}; first: {result['first']['layout']}")
for term in result["terms"]:
    print(f"  {term['meaning']:<40} {term['difference']:+.2f} s")''')),
    markdown(F.text("""
## Exercises

Type your answer in place of `None`; the helper says right or wrong and, when wrong, which slip
it matches. The solutions are not in this notebook.
""")),
    code('''exercise("perf.bubble")'''),
    code('''
answer = None  # a fraction of the compute time, e.g. 0.25
check("perf.bubble", answer)'''),
]
