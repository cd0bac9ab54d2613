"""Lesson: the performance model. Why did Megatron choose t = 8, p = 64 for 1T on 3072 GPUs?

The lesson's text and cells come from the performance model's lesson (issue 16), in the lesson format.
"""

from llm_formulas.render.documents.notebooks import code, markdown

CELLS = [
    markdown("""
# Performance: why did Megatron choose t = 8, p = 64 for 1T on 3072 GPUs?

> *"Megatron trained a trillion-parameter model with tensor parallelism 8 and 64 pipeline stages.
> Why not 16 × 32, or 8 × 32? What would each have cost per step?"*

Narayanan et al. 2021 ("Efficient Large-Scale Language Model Training on GPU Clusters Using Megatron-LM",
Table 1) trained a 1-trillion-parameter GPT (h = 25600, a = 160, l = 128) on 3072 A100 80 GB GPUs with
tensor parallelism t = 8, pipeline parallelism p = 64 and data parallelism d = 6, global batch 3072 of 2048
tokens, full activation recompute and micro-batches of one sequence, and reached 163 TFLOP/s per GPU (52 % of
peak). This lesson asks the
toolkit's performance model (`formulas/performance.py`, its constants fitted on that same Table 1) why, term
by term: compute efficiency, the blocking TP all-reduces, the pipeline bubble, the DP all-reduce and memory.
The earlier lessons priced each of these alone (FLOPs, memory, communication, the bubble); the performance
model adds them up into one predicted step time per layout, so that layouts can be ranked. Plan 40 minutes;
the cells print seconds per iteration and GB per GPU.
"""),
    markdown("""
The model is built from the catalogue's `perf.*` formulas; its step is a sum of their terms. One of them, the
pipeline's time, with the derivation the engine checks:
"""),
    code('''derive("perf.pipeline")'''),
    code('''
from dataclasses import replace
from fractions import Fraction

import numpy as np

from llm_formulas.formulas.calibration import a100
from llm_formulas.formulas.estimate import Inputs, Layout, estimate, model_values
from llm_formulas.formulas.frameworks import framework
from llm_formulas.formulas.gpus import NODE_SIZE, gpu as gpu_preset
from llm_formulas.formulas.presets import preset
from llm_formulas.render.numeric.plan import interleavings
from llm_formulas.render.numeric.evaluator import NUMPY_OPS, numeric, numeric_inputs

MODEL = model_values(preset("megatron-1t").architecture.values)  # h = 25600, a = 160, l = 128, V = 51200
A100 = gpu_preset("a100-80gb")


def inputs(name):
    """The A100's calibrated constants in one framework (formulas/frameworks.py)."""
    return numeric_inputs(Inputs(model=MODEL, gpu=A100.inputs(), network=25 * 10**9, tokens=None, utilization=None,
                                 overlap=Fraction(1, 2), efficiency=a100(), node_size=NODE_SIZE["a100-80gb"],
                                 framework=framework(name)))


INPUTS = inputs("megatron-lm-2021")  # the paper's code: what it overlapped, the memory its optimizer held
N, B, S = 3072, 3072, 2048
PARTS = ("compute_seconds", "tp_seconds", "pp_seconds", "bubble_seconds", "dp_exposed_seconds", "optimizer_seconds")


def report(t, p, b=1, zero=0, recompute="full", sp=False, v=None):
    """The predicted report of one layout of the 1T model on 3072 A100s (global batch 3072, s = 2048), at interleaving
    degree v, or (v=None) at the fastest v the layer count allows."""
    d = N // (t * p)
    layout = Layout(n=N, t=t, p=p, d=d, b=b, m=B // (b * d), s=S, zero=zero, recompute=recompute, sequence_parallel=sp)
    candidates = interleavings(layout, MODEL) if v is None else (replace(layout, v=v),)
    reports = [estimate(candidate, INPUTS, numeric, NUMPY_OPS) | {"v": candidate.v} for candidate in candidates]
    return min(reports, key=lambda r: float(r["time"]["step_seconds"]))


def row(name, t, p, **settings):
    r = report(t, p, **settings)
    parts = {part: float(r["time"]["predicted"][part]) for part in PARTS}
    memory = float(r["memory"]["total"]) / 1e9
    print(f"{name:<34} v={r['v']} step {float(r['time']['step_seconds']):7.2f} s  MFU {float(r['time']['mfu']):5.1%}  "
          f"memory {memory:6.1f} GB {'fits' if memory <= 80 else 'DOES NOT FIT'}  "
          + "  ".join(f"{part.split('_')[0]} {value:.2f}" for part, value in parts.items()))
    return parts, memory


note(f"The model: {preset('megatron-1t').title}; {N} GPUs of {A100.name}, a global batch of {B} sequences of {S} tokens.")'''),
    markdown("""
## The published layout, predicted

Megatron-LM 2021 had neither ZeRO nor sequence parallelism nor selective recompute: ZeRO 0, full recompute. Its
code (the framework `megatron-lm-2021`) all-reduced the gradients after the last backward rather than under it,
blocked on every tensor-parallel all-reduce, and its fp16 optimizer held 20 bytes per parameter at the step (an fp32
copy of every gradient beside the 16 bytes of the usual count). The authors' script for the table (NVIDIA/Megatron-LM,
`examples/sc21/run_table_1.sh`) ran this row at micro-batch 1 and without the interleaved schedule (v = 1), which
its smaller rows used. The model's figure to compare with the paper is Megatron's own count (Eq. 3, recompute
included) per GPU-second.
"""),
    code('''
megatron = float(evaluate("flops.megatron", B=B, s=S, l=MODEL["l"], h=MODEL["h"], V=MODEL["V"]))
as_run, _ = row("t=8 p=64 d=6 (as run)", 8, 64, v=1)
print(f"predicted {megatron / (N * sum(as_run.values())) / 1e12:.1f} TFLOP/s per GPU; the paper measured 163")
interleaved, _ = row("t=8 p=64 d=6 interleaved", 8, 64, v=2)
print(f"interleaved, 2 chunks of one layer per GPU: {megatron / (N * sum(interleaved.values())) / 1e12:.1f} TFLOP/s per GPU")'''),
    markdown("""
## Why t = 8: tensor parallelism stops at the node

From here on each layout runs at the fastest v it allows (t = 8, p = 64 at v = 2), so that the rows compare
layouts, not schedules.

Each layer's two forward and two backward all-reduces (three pairs with full recompute) block the next GEMM.
Inside a DGX node they cross NVLink (300 GB/s each way); at t = 16 the ring crosses the 25 GB/s network and the
same bytes take twelve times longer. A smaller t (4) leaves twice the parameters per GPU and, at the same p,
twice the data parallelism: half the micro-batches per replica, so twice the bubble.
"""),
    code('''
for t, p in ((4, 64), (8, 64), (16, 32), (8, 32), (8, 128)):
    row(f"t={t} p={p} d={N // (t * p)}", t, p)'''),
    markdown("""
## Why p = 64: the smallest pipeline with room to spare

Without ZeRO each GPU holds 16 bytes of model state per parameter of its share Ψ/(t·p) through the backward, and
Megatron-LM 2021's optimizer 20 at its step: 1T/(8·32) is 3.9 B parameters, 63 GB before a single activation
(79 GB at the step), and the first stage of a 1F1B pipeline holds p micro-batches of its l/p layers' inputs. At
p = 32 that is 79.7 GB of the 80: on paper it fits, and the model predicts it 5 % faster, but the count leaves out
the allocator's fragmentation, NCCL's buffers and cuBLAS workspaces. p = 64 needs 51.5 GB interleaved (v = 2), 44.9 GB as run (v = 1). Deeper pipelines fit easily, but a deeper pipeline means fewer replicas (d = n/(t·p)) and a slower
stage: the bubble (p − 1)/m stays near 12 % because m = B/d grows with p, while the logits weigh more on a
stage of fewer layers.
"""),
    code('''
for p in (32, 64, 128):
    d = N // (8 * p)
    print(f"p={p:<4} d={d:<3} m={B // d:<4} bubble (p-1)/m = {(p - 1) / (B // d):.3f}")'''),
    markdown("""
## Where the time goes

The stacked bars split each layout's predicted step into the model's terms, with each layout's memory per GPU.
t = 16 pays the network for its all-reduces; t = 4 doubles the bubble and does not fit; t = 8, p = 32 is a little
faster but leaves 0.3 GB; t = 8, p = 128 cannot interleave (one layer per stage) and pays twice the bubble.
"""),
    code('''
import matplotlib.pyplot as plt

layouts = {"t=8 p=64\\n(published t, p)": (8, 64), "t=16 p=32": (16, 32), "t=8 p=32": (8, 32), "t=8 p=128": (8, 128), "t=4 p=64": (4, 64)}
bars, labels = {}, []
for name, shape in layouts.items():
    bars[name], memory = row(name.replace("\\n", " "), *shape)
    labels.append(f"{name}\\n{memory:.0f} GB")
figure, axes = plt.subplots(figsize=(8, 4), dpi=80)
bottom = np.zeros(len(bars))
for part in PARTS:
    values = np.array([bars[name][part] for name in bars])
    axes.bar(labels, values, bottom=bottom, label=part.replace("_seconds", "").replace("_", " "))
    bottom += values
axes.set_ylabel("seconds per iteration")
axes.set_title("1T on 3072 A100s: where the predicted step time goes")
axes.legend(fontsize=8)
show(figure)'''),
    markdown("""
Read the rows as a budget. Compute dominates every layout, and it barely moves: the same FLOPs are done
whatever the split, only at slightly different GEMM efficiencies. What separates the layouts are the smaller
terms around it, and each of them is one of the earlier lessons: the blocking TP all-reduces (the communication
lesson's bandwidth against t), the bubble (the cluster lesson's (p − 1)/m), the DP all-reduce that does not hide
(Amdahl), and the memory that decides whether a layout is allowed at all (the memory lesson's first stage).

## What plan says today

With the features Megatron gained since (sequence parallelism and selective recompute, Korthikanti et al. 2022;
the distributed optimizer, ZeRO-1; the gradient all-reduce overlapped with the backward), memory no longer forces
p = 64 and the model prefers a shallower pipeline; `llm-formulas plan --explain` prints where the published layout
then ranks and why (`--framework megatron-lm-2021` restricts the search to the paper's features instead).
"""),
    code('''
from llm_formulas.render.numeric.plan import explain

result = explain(MODEL, inputs("default"), Layout(n=N, t=8, p=64, d=6, b=1, m=512, s=S, v=2, zero=1, recompute="selective",
                                       sequence_parallel=True))
print(f"rank {result['rank']} of {result['of']}; first: {result['first']['layout']}")
for term in result["terms"]:
    print(f"  {term['meaning']:<40} {term['difference']:+.2f} s")'''),
    markdown("""
## Exercises

Type your answer in place of `None`; the helper says right or wrong and, when wrong, which step differs. The
solutions are not in this notebook.
"""),
    code('''exercise("perf.bubble")'''),
    code('''
answer = None  # a fraction of the compute time, e.g. 0.25
check("perf.bubble", answer)'''),
]
