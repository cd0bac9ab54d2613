"""Lesson: communication. Why does tensor parallelism stay inside a server while data parallelism crosses the cluster?"""

from llm_formulas.render.documents.notebooks import code, markdown

CELLS = [
    markdown("""
# Communication: why does tensor parallelism stay inside one server?

> *"Our nodes have 8 GPUs on NVLink and 200 Gbit/s between nodes. Why does every recipe put
> tensor parallelism inside a node and data parallelism across nodes? Could we do TP = 16?"*

The three kinds of parallelism move very different amounts of data, at very different times.
Tensor parallelism (TP) all-reduces activations inside every layer, four times per layer per
micro-batch; pipeline parallelism (PP) sends one activation tensor to the next stage; data
parallelism (DP) all-reduces the gradients once per iteration. The Bilibili article turns
this into bandwidth *requirements*: the bytes divided by the share r of compute time they
may take, and proves (we will check) that TP's need grows as t/h, PP's as 1/(h·l/p) and DP's
as d/(B·s). Li Bojie's essay adds a sharp bound, the largest TP degree a link can feed. This
lesson derives all of these with the engine and puts Llama-2-70B on A100, H100 and RTX 4090
through them. About 45 minutes.
"""),
    markdown("""
## 1. What an all-reduce costs

A ring all-reduce over n GPUs is a reduce-scatter followed by an all-gather: 2(n − 1) steps,
each moving 1/n of the buffer. Each GPU sends 2(n − 1)/n times the buffer, the "redundancy"
that NCCL's bus bandwidth accounts for (Bilibili's Table 5):
"""),
    code("""derive("comms.collective.allreduce")"""),
    markdown("""
## 2. TP moves activations in every layer

Megatron's tensor parallelism needs two all-reduces of the b·s·h activations per layer in the
forward pass and two in the backward pass. For Llama-2-70B at b = 1, s = 4096, with t = 8 and
its 80 layers in p = 8 stages (10 layers per GPU):
"""),
    code("""
M = model("llama2-70b")
layout = dict(b=1, s=4096, t=8, p=8, q=2)
derive("comms.tp.per_microbatch")
tp_bytes = put("comms.tp.sent_per_microbatch", **M, **layout, label="bytes each GPU sends for TP per micro-batch")"""),
    markdown("""
Gigabytes per micro-batch, while the compute of that micro-batch on one A100 takes well under
a second. Compare data parallelism, which sends the gradients of this GPU's share once per
iteration, whatever the batch:
"""),
    code("""
dp_bytes = put("comms.dp.sent_per_iteration", **M, t=8, p=8, d=8, q_w=2, label="bytes each GPU sends for DP per iteration (d = 8)")"""),
    markdown("""
## 3. The bandwidth each dimension needs

Divide the bytes by r times the compute time of the same span (r = 1: communication may take
as long as compute, fully overlapped). The compute grows as h² per token while the TP traffic
grows as h, so the requirement is proportional to t/h; the engine proves the closed form and,
by differentiating, that nothing else (b, s, l, p) enters:
"""),
    code("""derive("comms.bandwidth.tp", only=("W_TP", "W_TP closed", "comms.bandwidth.tp", "need/(t/h) = constant"))"""),
    code("""
A100 = gpu("a100-80gb")
need_tp = put("comms.bandwidth.tp", **M, t=8, U="1/2", r=1, q=2, X=A100["X"], label="TP, t = 8, on A100s at U = 0.5")
need_dp = put("comms.bandwidth.dp", B=1024, s=4096, d=8, U="1/2", r=1, q=2, X=A100["X"], label="DP, d = 8, B = 1024 sequences")"""),
    markdown("""
About 17 GB/s for TP at t = 8, a tenth of a GB/s for DP. The picture shows the TP need
against t for three GPUs beside each one's link (one way). The need doubles with t: NVLink on
the A100 (300 GB/s one way) and the H100 (450 GB/s) has room far beyond t = 8; the 4090's PCIe
(32 GB/s one way) runs out between t = 16 and 32 by this whole-layer criterion; across nodes
(25 GB/s for 200 Gbit/s) an A100 runs out at t = 16. This criterion is generous: it lets the
all-reduces overlap with the whole layer's compute.
"""),
    code("""picture("bandwidth_vs_tp", h=8192, gpus=("rtx4090", "a100-80gb", "h100-sxm"), U="1/2", r="1")"""),
    markdown("""
## 4. Li Bojie's bound: the largest useful TP degree

Li's sharper argument does not grant that overlap: it looks at the attention projections: a TP rank computes 2·3·(h/t) FLOPs
per byte of input it receives. Its compute stays busy only if that intensity exceeds what the
link can feed, X/(W_link/2). Solving for t gives t_max = 3·W_link·h/(X·q); the engine solves
the inequality and checks that the intensity at t_max equals the need:
"""),
    code("""derive("comms.tp.max_degree")"""),
    code("""
source_figure("S11c")
source_figure("S11d")
source_figure("S11e")"""),
    markdown("""
The H800 case carries one of the essay's slips (4.8 printed, 4.97 by its own figures); the
article lesson shows it with its proof. The answer to the opening question: **TP = 8 on NVLink
keeps up with room to spare; TP = 16 would cross the inter-node network, slower than TP then
needs (about 34 GB/s against 25 GB/s) even by the generous criterion and far slower by Li's,
while DP's need is small and falls as the global batch grows.** Put TP inside
the node, PP between a few nodes, DP across the rest.

## Exercises

Type your answer in place of `None`; a wrong one gets the step that differs. The solutions
are not in this notebook.
"""),
    code("""exercise("comms.allreduce")"""),
    code("""
answer = None  # GB
check("comms.allreduce", answer)"""),
    code("""exercise("comms.max_tp_4090")"""),
    code("""
answer = None  # a plain number
check("comms.max_tp_4090", answer)"""),
    markdown("""
What the checker says to a reader who took the 64 GB/s as one way (a factor of 2):
"""),
    code("""check("comms.max_tp_4090", 4.77)"""),
]
