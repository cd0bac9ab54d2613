"""Lesson: memory. Will Llama-2-70B fit on 64 A100s for training, and with which micro-batch?"""

from llm_formulas.render.documents.notebooks import code, markdown

CELLS = [
    markdown("""
# Memory: will Llama-2-70B fit on 64 A100s?

> *"We have 64 A100 80 GB. Can we train Llama-2-70B on them, and how large a micro-batch fits?"*

This is the first question an infra team gets asked about a large model, and the answer is
not "70 billion parameters × 2 bytes = 140 GB, so two GPUs". Training keeps far more than
the weights: the gradients, the optimizer's fp32 copies, and the activations of every layer
that the backward pass will need. This lesson builds the answer from the toolkit's catalogue
one piece at a time. Each piece is a formula whose derivation the engine checks in front of
you (the green tick says which exact method proved the step), and each is then evaluated at
the real Llama-2-70B: h = 8192, 80 layers, 64 query heads, 8 key/value heads, a SwiGLU MLP of
width 28672.

You will learn to split training memory into *model states* (they scale with Ψ and shrink
with tensor and pipeline parallelism or ZeRO) and *activations* (they scale with the
micro-batch b and the sequence s, and shrink with tensor parallelism and recomputation), and
to find the micro-batch at which the sum crosses the 80 GB of HBM. Plan about 45 minutes.
Run the cells in order; every number is printed in GB (10⁹ bytes) unless a source speaks
GiB, and every printed value keeps its exact form: evaluate `value.exact` in a new cell.
"""),
    markdown("""
## 1. How many parameters?

The parameter count comes from the model's own shapes (its Hugging Face config), counted
exactly as `transformers` builds the model; the lesson on parameters derives it. "70B" is a
name: the real count is a little below.
"""),
    code("""
M = model("llama2-70b")
A100 = gpu("a100-80gb")
P = evaluate("params.decoder.total", **M)
note(f"Llama-2-70B holds Ψ = **{P}** (exactly {P.exact}).")"""),
    markdown("""
## 2. Model states: 16 bytes per parameter

Mixed-precision training with Adam keeps, for every parameter, a 16-bit weight (2 bytes) used
by the forward and backward passes, a 16-bit gradient (2 bytes), and in fp32 the master copy
of the weight, Adam's momentum and Adam's variance (4 + 4 + 4 bytes). That is where the
famous 16Ψ comes from. The engine states it as a definition, then proves that the catalogue's
closed form is the same expression:
"""),
    code("""derive("memory.model_states")"""),
    code("""states = put("memory.model_states", **M)"""),
    markdown("""
More than a terabyte, before a single activation. No GPU holds that, so the states must be
split. Tensor parallelism (t) cuts every weight matrix into t slices and pipeline parallelism
(p) gives each GPU l/p of the layers; either way a GPU keeps 1/(t·p) of the states. With
t = 8 inside a server (NVLink) and p = 8 across servers we use all 64 GPUs with d = 1 (no data
parallelism):
"""),
    code("""
derive("memory.zero")
layout = dict(t=8, p=8, d=1, s=4096)
shard = put("memory.zero", **M, **layout)"""),
    markdown("""
The printed value is rounded to three digits, in the unit a person reads. Every value keeps
its exact form, one attribute away:
"""),
    code("""shard.exact"""),
    markdown("""
About 17 GB of the 80 are gone to the states. What remains must hold the activations.

## 3. Activations of one layer

During the forward pass each layer stores the tensors its backward pass needs: the inputs of
every GEMM, the softmax output, the dropout masks. Korthikanti et al. (2022) counted them for
a GPT layer in 16-bit values with 1-byte masks: 34·s·b·h bytes plus 5·a·s²·b for the
attention scores. The engine derives this from a tensor-by-tensor count (which also holds the
LayerNorm statistics the paper leaves out) and proves the paper's form as its approximation,
with the exact relative error and the limit in which it vanishes:
"""),
    code("""derive("memory.activations.layer")"""),
    markdown("""
Llama is not GPT: grouped-query attention stores K and V for only g = 8 heads, the head
width is d_head = 128, and the gated MLP stores three h×d_ff products. The catalogue's general
form covers that block; with tensor parallelism and *selective recompute* (the s² attention
scores are recomputed in the backward pass instead of stored, Korthikanti's recommendation)
it reads:
"""),
    code("""
formula("memory.activations.layer.general.selective")
layer = put("memory.activations.layer.general.selective", **M, **layout, b=1)"""),
    markdown("""
## 4. How many layers' worth does one GPU hold?

With 1F1B pipelining the first stage starts p micro-batches before the first backward comes
back, so it holds p micro-batches of its l/p layers: l layers' worth, whatever p is. This is
why the first stage is the one that runs out of memory.
"""),
    code("""derive("memory.activations.1f1b")"""),
    code("""
activations = Value(M["l"] * layer.value, layer.unit)
note(f"Activations on the first stage at b = 1: **{activations}**; with the states: **{Value(activations.value + shard.value, layer.unit)}** of {Value(A100['M_gpu'], layer.unit)}.")"""),
    markdown("""
## 5. Where it crosses the HBM line

The activations grow linearly in b, the states do not move. The picture puts the three
recompute modes side by side: without recompute the s² scores alone fill the GPU before
b = 1; selective recompute fits one sequence of 4096 tokens per micro-batch; full recompute
(each layer keeps only its input, 2·s·b·h bytes, and reruns its forward in the backward pass)
fits about eleven, at the price of a third more FLOPs.
"""),
    code("""picture("memory_vs_micro_batch", model="llama2-70b", gpu_key="a100-80gb", t=8, p=8, s=4096)"""),
    markdown("""
So the answer to the opening question is: **yes, at micro-batch 1 with selective recompute**
(or larger micro-batches with full recompute), with t = 8, p = 8. Whether it trains *fast
enough* is a question of FLOPs and of the bubble that pipelining leaves, which the cluster
lesson takes up.

## 6. What fills a GPU, by layout

The breakdown below shows how the pieces shrink as more GPUs share the model: the fp32 Adam
states dominate until the model is spread over 32 or more GPUs, and the activations do not
shrink with p at all (the first stage always holds l layers' worth), only with t.
"""),
    code("""picture("memory_breakdown", model="llama2-70b", layouts=((8, 1), (8, 2), (8, 4), (8, 8)), b=1, s=4096)"""),
    markdown("""
## 7. ZeRO: partition the states over data parallelism instead

With data parallelism every replica would keep all its states. ZeRO (Rajbhandari et al.
2020) partitions them over the d replicas: stage 1 the optimizer states, stage 2 also the
gradients, stage 3 also the weights. Stage 3 on all 64 GPUs, without tensor or pipeline
parallelism, leaves each GPU the same 1/64 of the states, but every GPU then computes whole
layers, so its activations are those of the full, unsplit layer:
"""),
    code("""
derive("memory.zero.stage3")
zero3 = put("memory.zero.stage3", **M, t=1, p=1, d=64)"""),
    markdown("""
The states fit, yet one unsplit layer of Llama-2-70B at b = 1, s = 4096 stores more than a
gigabyte, and with 80 layers even full recompute needs several GB more. ZeRO-3 trades memory
for traffic (3Ψ bytes per iteration instead of 2Ψ): the communication lesson weighs that.

## 8. Which framework does this price?

The formulas above are the classic recipe (16Ψ, Korthikanti's blocks). A real job holds what its framework's code
keeps: `llm-formulas estimate` prices **a current Megatron Core job** by default (bf16 weights with fp32 main gradients,
18 bytes per parameter; ZeRO 1 is its distributed optimizer, 6 + 12/d; fused SwiGLU; no dropout masks for Llama; the
first stage's embedding, the last stage's head and loss, the layer the backward rebuilds), and `--framework` picks
another (formulas/frameworks.py says, with sources, what each keeps). The same model and the same 8 GPUs, three ways:
Megatron Core keeps its fp32 gradients whole, DeepSpeed's ZeRO-3 shards everything and gathers one module at a time,
FSDP keeps fp32 shards and gathers a decoder layer (and the next) in bf16.
"""),
    code("""picture("memory_by_framework", model="llama2-7b", gpu_key="a100-80gb", d=8, s=4096)"""),
    markdown("""
## Exercises

Type your answer in place of `None` and run the cell; the helper says right or wrong and, when
wrong, which step differs. Pass your intermediate values as keywords (the question lists their
names) to find your slip. The worked solution is kept out of the notebook: if you are stuck,
run `from llm_formulas.render.documents.exercises import solution; print(solution("memory.kv_gqa"))`.
"""),
    code("""exercise("memory.training_70b")"""),
    code("""
answer = None  # your figure, in GB
check("memory.training_70b", answer)"""),
    code("""exercise("memory.kv_gqa")"""),
    code("""
answer = None  # your figure, in GiB
check("memory.kv_gqa", answer)"""),
    markdown("""
An example of what the checker says: suppose a reader forgot the fp32 Adam states and typed
the 16-bit weights and gradients plus the activations. The helper does not give the answer
away; it names the step that differs and by how much.
"""),
    code("""check("memory.training_70b", 1010, states=280, activations=730)"""),
]
