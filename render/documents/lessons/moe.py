"""Lesson: mixture of experts in training. Mixtral 8x7B holds 47B parameters and uses 13B per token: what does it
cost to train, what must each GPU hold, and what does expert parallelism send?"""

from llm_formulas.render.documents.figures import Figures
from llm_formulas.render.documents.notebooks import code, markdown

F = Figures("moe", model="mixtral-8x7b", gpu="h100-sxm", minutes=30,
            compare_models=("mixtral-8x22b", "qwen3-235b-a22b", "deepseek-v3"),
            t=2, p=1, e=8, d=32, c=1, b=1, s=4096, q=2, q_w=2)
F.number("n", F["t"] * F["p"] * F["d"])
F.input("P_exp", F.compute("params.ep.experts"))
F.value("active", "params.decoder.active", digits=3)
F.number("expert_share", F["P_exp"] / F["P"], percent=True, digits=2)
F.number("active_share", F["active"] / F["P"], percent=True, digits=2)
F.value("flops_active", "flops.training.approx", P=F["active"], D=1)
F.value("flops_dense", "flops.training.approx", D=1)
F.number("dense_part", F["P"] - F["P_exp"], unit="parameter", digits=3)
F.value("states_total", "memory.model_states")
F.value("states_no_ep", "memory.zero")
F.value("states_ep", "memory.zero.ep_cp")
F.value("states_ep_zero1", "memory.zero.ep_cp.stage1")
F.value("params_per_gpu", "params.per_gpu.ep", digits=3)
F.value("ep_layer", "comms.ep.per_layer")
F.value("ep_microbatch", "comms.ep.per_microbatch")
F.value("tp_layer", "comms.tp.sent_per_microbatch", l=1)
F.value("dp_iteration", "comms.dp.ep_cp.sent_per_iteration")
F.value("activations_layer", "memory.activations.layer.decoder.moe.selective")
F.number("activations_all", F["l"] * F["activations_layer"], unit="byte")
F.number("ep_ranks", F["d"] / F["e"])
F.number("one_way", F["W_link"] / 2, unit="byte/second")
F.number("ep_seconds", F["ep_microbatch"] / (F["W_link"] / 2), unit="second")

CELLS = [
    markdown(F.text("""
# Mixture of experts in training: what does {{model}} cost?

> *"{{model}} holds {{P}} but a token only passes through {{active}} of them. Does it train
> at the price of a small model or of a large one, and will it fit on {{n}} {{gpu}} GPUs?"*

A mixture-of-experts (MoE) layer replaces the one MLP of a transformer block with E experts, each
an MLP of its own, and a router that sends every token to k of them. {{model}} has E = {{E}}
experts of width d_moe = {{d_moe}} in each of its {{l}} layers and routes each token to k = {{k}}.
The answer to the opening question has three parts, and they point in different directions:
the **compute** follows the parameters a token uses (the active ones), the **memory** follows
every parameter the model holds, and **expert parallelism** (EP), which spreads the experts over
GPUs, adds an all-to-all exchange of tokens in every layer that a dense model never pays. This
lesson derives each from the catalogue, with the engine's verdict on every step, and evaluates it
at {{model}} on {{n}} GPUs laid out as tensor parallelism t = {{t}}, expert parallelism
e = {{e}}, data parallelism d = {{d}}. Plan {{minutes}}.
""")),
    markdown(F.text("""
## 1. Total and active parameters

The parameter count of an MoE model is the dense count with E experts in each MoE layer; the
*active* count, the parameters one token passes through, has k experts instead of E. The
engine derives the active count from the same shapes as the total:
""")),
    code(F.code("""
M = model("mixtral-8x7b")
derive("params.decoder.active")
total = evaluate("params.decoder.total", **M)
active = evaluate("params.decoder.active", **M)
experts = evaluate("params.ep.experts", **M)
note(f"Total **{total}**, active **{active}**, of which the routed experts hold **{experts}**.")""")),
    markdown(F.text("""
The experts hold {{expert_share}} of the model, and a token uses {{active_share}} of it: the
attention, the embeddings and the router are shared by every token ({{dense_part}} in all), and
only k of the E experts of each layer see it.

## 2. Compute follows the active parameters

The FLOPs of a GEMM count only the rows it multiplies. An expert sees only the tokens routed to
it, so over a layer the expert GEMMs add up to k·b·s rows, not E·b·s: the forward FLOPs are those
of a dense model of the active size. The shortcut 6ΨD therefore holds with Ψ the *active* count:
{{flops_active}} per token, against {{flops_dense}} if every token went through every expert.
""")),
    code("""derive("flops.decoder.experts")"""),
    markdown(F.text("""
That is the whole appeal of MoE: a model that *knows* as much as {{P}} parameters can hold, for
the training compute of a {{active}} one. Two caveats belong beside it. Routing is never
perfectly even, so real kernels either pad every expert to a capacity (FLOPs spent on padding,
`flops.decoder.experts.capacity`) or drop tokens; and the expert GEMMs are smaller than one dense
MLP's, so they run further below peak (the lesson on achievable FLOP/s prices that).

## 3. Memory follows every parameter

The optimizer does not know which experts a token used: every parameter has its 16 bytes of
mixed-precision Adam state. The whole model's states are {{states_total}}. Without expert
parallelism, tensor parallelism t = {{t}} leaves each GPU {{states_no_ep}}, far beyond its
{{M_gpu}}. Expert parallelism gives each of e GPUs E/e of the experts (the data-parallel ranks
take turns holding them), so a GPU keeps the dense part split t ways and the experts split t·e
ways:
""")),
    code(F.code("""
derive("params.per_gpu.ep")
layout = dict(t={{t}}, p={{p}}, e={{e}}, d={{d}}, c={{c}}, b={{b}}, s={{s}}, q={{q}}, q_w={{q_w}})
per_gpu = put("params.per_gpu.ep", **M, **layout, P_exp=experts.value)
states = put("memory.zero.ep_cp", **M, **layout, P_exp=experts.value)
zero1 = put("memory.zero.ep_cp.stage1", **M, **layout, P_exp=experts.value)""")),
    markdown(F.text("""
Each GPU holds {{params_per_gpu}}: {{states_ep}} of model states at ZeRO stage 0, {{states_ep_zero1}}
once ZeRO-1 also partitions the Adam states over the data-parallel replicas. The activations are
those of the active path, {{activations_layer}} per layer at micro-batch {{b}} of {{s}} tokens with
selective recompute, {{activations_all}} for the {{l}} layers. The picture compares the total and
active counts of four MoE models, split into the shared part and the experts:
""")),
    code("""picture("moe_params", models=("mixtral-8x7b", "mixtral-8x22b", "qwen3-235b-a22b", "deepseek-v3"))"""),
    markdown(F.text("""
## 4. What expert parallelism sends

With the experts spread over e GPUs, the tokens must travel to their experts and back: an
all-to-all *dispatch* before the expert MLPs and an all-to-all *combine* after them, in the
forward pass, and the same two for the gradients in the backward pass. Each GPU keeps the
(1/e)-th of its tokens whose experts it holds and sends the rest, k copies of each token's h
values:
""")),
    code(F.code("""
derive("comms.ep.per_layer")
ep = put("comms.ep.per_layer", **M, **layout)
tp = put("comms.tp.sent_per_microbatch", **(M | layout | dict(l=1)), label="TP all-reduces of one layer, for comparison")
dp = put("comms.dp.ep_cp.sent_per_iteration", **M, **layout, P_exp=experts.value)""")),
    markdown(F.text("""
{{ep_layer}} per layer and micro-batch, {{ep_microbatch}} for the {{l}} layers: the same order as the
tensor-parallel all-reduces of a layer ({{tp_layer}} at t = {{t}}), and like them on the critical
path, since the expert GEMMs cannot start before their tokens arrive. On NVLink at {{one_way}} one
way a micro-batch's exchanges take {{ep_seconds}}; across nodes, ten or more times slower, which is
why EP groups are kept inside a node where they can be, and why DeepSeek-V3 limits each token to
experts on at most four nodes. Once per iteration the gradients are averaged: the dense ones
over all c·d replicas, each expert's over the d/e = {{ep_ranks}} ranks that hold it,
{{dp_iteration}} per GPU in all.

So: **MoE trains at the compute of its active parameters, needs the memory of all of them, and
pays an all-to-all per layer for spreading them.** The layouts that work keep EP inside fast
links and use ZeRO or more GPUs for the states that compute alone would not ask for.

## Exercise

Type your answer in place of `None`; a wrong answer gets the slip it matches or the step that
differs. The solution is not in this notebook.
""")),
    code("""exercise("moe.flops_per_token")"""),
    code("""
answer = None  # FLOP per token, e.g. 1.2e11
check("moe.flops_per_token", answer)"""),
    markdown("""
What the checker says to a reader who priced every expert, as if the model were dense:
"""),
    code("""check("moe.flops_per_token", 6 * 46.7e9)"""),
]
