"""Lesson: communication. Why does tensor parallelism stay inside a server while data parallelism crosses the cluster?"""

from llm_formulas.formulas.data.gpus import NODE_SIZE, gpu
from llm_formulas.render.documents.figures import Figures
from llm_formulas.render.documents.lesson_layouts import NETWORK
from llm_formulas.render.documents.notebooks import code, markdown

F = Figures("comms", model="llama2-70b", gpu="a100-80gb", minutes=45, compare_gpus=("rtx4090", "h100-sxm"),
            b=1, s=4096, t=8, p=8, d=8, q=2, q_w=2, B=1024, U="1/2", r=1)
F.number("node", NODE_SIZE["a100-80gb"])
F.number("network", NETWORK, unit="byte/second")
F.number("network_gbit", NETWORK * 8 / 10**9)
F.number("t_wide", 16)
F.number("layers_per_gpu", F["l"] / F["p"])
F.value("need_tp", "comms.bandwidth.tp")
F.value("need_dp", "comms.bandwidth.dp")
F.value("need_tp_wide", "comms.bandwidth.tp", t=16)
ONE_WAY = {key: gpu(key).link() / 2 for key in ("a100-80gb", "h100-sxm", "rtx4090")}
F.number("a100_one_way", ONE_WAY["a100-80gb"], unit="byte/second")
F.number("h100_one_way", ONE_WAY["h100-sxm"], unit="byte/second")
F.number("rtx_one_way", gpu("rtx4090").link("pcie") / 2, unit="byte/second")
# the degree at which the whole-layer need (∝ t) reaches a link: t · link / need(t)
F.number("rtx_runs_out", F["t"] * F["rtx_one_way"] / F.compute("comms.bandwidth.tp", X=gpu("rtx4090").flops("bf16")))
F.number("network_runs_out", F["t"] * F["network"] / F["need_tp"])
F.refuted("h800", "comms.tp.max_degree", "S11e: H800 t ≤ 4.8")
F.number("essay_link", 64 * 10**9, unit="byte/second")

CELLS = [
    markdown(F.text("""
# Communication: why does tensor parallelism stay inside one server?

> *"Our nodes have {{node}} {{gpu}} on NVLink and {{network_gbit}} Gbit/s between nodes. Why does
> every recipe put tensor parallelism inside a node and data parallelism across nodes? Could we
> do TP = {{t_wide}}?"*

The three kinds of parallelism move very different amounts of data, at very different times.
Tensor parallelism (TP) all-reduces activations inside every layer, four times per layer per
micro-batch; pipeline parallelism (PP) sends one activation tensor to the next stage; data
parallelism (DP) all-reduces the gradients once per iteration. The Bilibili article turns
this into bandwidth *requirements*: the bytes divided by the share r of compute time they
may take, and proves (we will check) that TP's need grows as t/h, PP's as 1/(h·l/p) and DP's
as d/(B·s). Li Bojie's essay adds a sharp bound, the largest TP degree a link can feed. This
lesson derives all of these with the engine and puts {{model}} on A100, H100 and RTX 4090
through them. About {{minutes}}.
""")),
    markdown(F.text("""
## 1. What an all-reduce costs

A ring all-reduce over n GPUs is a reduce-scatter followed by an all-gather: 2(n − 1) steps,
each moving 1/n of the buffer. Each GPU sends 2(n − 1)/n times the buffer, the "redundancy"
that NCCL's bus bandwidth accounts for (Bilibili's Table 5). The picture follows four GPUs
through the ring, step by step:
""")),
    code("""
picture("ring_allreduce", n=4)
derive("comms.collective.allreduce")"""),
    markdown(F.text("""
## 2. TP moves activations in every layer

Megatron's tensor parallelism splits each weight matrix over the t GPUs of a group: attention
by heads (Q, K, V column by column, the output projection row by row), the MLP by its inner
width. Each GPU then holds a partial sum of the layer's output, and an all-reduce adds them:
two all-reduces of the b·s·h activations per layer in the forward pass and two in the backward
pass. The picture draws the split at {{model}}'s sizes:
""")),
    code(F.code("""picture("tp_sharding", model="llama2-70b", t={{t}})""")),
    markdown(F.text("""
For {{model}} at b = {{b}}, s = {{s}}, with t = {{t}} and its {{l}} layers in p = {{p}} stages
({{layers_per_gpu}} layers per GPU):
""")),
    code(F.code("""
M = model("llama2-70b")
layout = dict(b={{b}}, s={{s}}, t={{t}}, p={{p}}, q={{q}})
derive("comms.tp.per_microbatch")
tp_bytes = put("comms.tp.sent_per_microbatch", **M, **layout, label="bytes each GPU sends for TP per micro-batch")""")),
    markdown(F.text("""
Gigabytes per micro-batch, while the compute of that micro-batch on one A100 takes well under
a second. Compare data parallelism, which sends the gradients of this GPU's share once per
iteration, whatever the batch:
""")),
    code(F.code("""
dp_bytes = put("comms.dp.sent_per_iteration", **M, t={{t}}, p={{p}}, d={{d}}, q_w={{q_w}}, label="bytes each GPU sends for DP per iteration (d = {{d}})")""")),
    markdown(F.text("""
## 3. The bandwidth each dimension needs

Divide the bytes by r times the compute time of the same span (r = {{r}}: communication may take
as long as compute, fully overlapped). The compute grows as h² per token while the TP traffic
grows as h, so the requirement is proportional to t/h; the engine proves the closed form and,
by differentiating, that nothing else (b, s, l, p) enters:
""")),
    code("""derive("comms.bandwidth.tp", only=("W_TP", "W_TP closed", "comms.bandwidth.tp", "need/(t/h) = constant"))"""),
    code(F.code("""
A100 = gpu("a100-80gb")
need_tp = put("comms.bandwidth.tp", **M, t={{t}}, U="1/2", r={{r}}, q={{q}}, X=A100["X"], label="TP, t = {{t}}, on A100s at U = 0.5")
need_dp = put("comms.bandwidth.dp", B={{B}}, s={{s}}, d={{d}}, U="1/2", r={{r}}, q={{q}}, X=A100["X"], label="DP, d = {{d}}, B = {{B}} sequences")""")),
    markdown(F.text("""
{{need_tp}} for TP at t = {{t}}, {{need_dp}} for DP. The picture shows the TP need against t
for three GPUs beside each one's link (one way). The need doubles with t: NVLink on the A100
({{a100_one_way}} one way) and the H100 ({{h100_one_way}}) has room far beyond t = {{t}}; the
4090's PCIe ({{rtx_one_way}} one way) runs out at t ≈ {{rtx_runs_out}} by this whole-layer
criterion; across nodes ({{network}}) an A100 runs out at t ≈ {{network_runs_out}}. This criterion
is generous: it lets the all-reduces overlap with the whole layer's compute.
""")),
    code("""picture("bandwidth_vs_tp", h=8192, gpus=("rtx4090", "a100-80gb", "h100-sxm"), U="1/2", r="1")"""),
    markdown(F.text("""
## 4. Li Bojie's bound: the largest useful TP degree

Li's sharper argument does not grant that overlap: it looks at the attention projections: a TP rank computes 2·3·(h/t) FLOPs
per byte of input it receives. Its compute stays busy only if that intensity exceeds what the
link can feed, X/(W_link/2). Solving for t gives t_max = 3·W_link·h/(X·q); the engine solves
the inequality and checks that the intensity at t_max equals the need:
""")),
    code("""derive("comms.tp.max_degree")"""),
    code("""
source_figure("S11c")
source_figure("S11d")
source_figure("S11e")"""),
    markdown(F.text("""
The H800 case carries one of the essay's slips ({{h800}} printed, {{h800_correct}} by its own
figures); the article lesson shows it with its proof. The answer to the opening question:
**TP = {{t}} on NVLink keeps up with room to spare; TP = {{t_wide}} would cross the inter-node
network, slower than TP then needs ({{need_tp_wide}} against {{network}}) even by the generous
criterion and far slower by Li's,
while DP's need is small and falls as the global batch grows.** Put TP inside
the node, PP between a few nodes, DP across the rest.

## Exercises

Type your answer in place of `None`; a wrong one gets the slip it matches or the step that
differs. The solutions are not in this notebook.
""")),
    code("""exercise("comms.allreduce")"""),
    code("""
answer = None  # GB
check("comms.allreduce", answer)"""),
    code("""exercise("comms.max_tp_4090")"""),
    code("""
answer = None  # a plain number
check("comms.max_tp_4090", answer)"""),
    markdown(F.text("""
What the checker says to a reader who took the essay's {{essay_link}} as one way:
""")),
    code("""check("comms.max_tp_4090", 4.77)"""),
]
