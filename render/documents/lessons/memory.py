"""Lesson: memory. Will Llama-2-70B fit on 64 A100s for training, and with which micro-batch?"""

from llm_formulas.render.documents.figures import Figures
from llm_formulas.render.documents.lesson_plots import estimate_first_stage, largest_micro_batch
from llm_formulas.render.documents.notebooks import code, markdown

F = Figures("memory", model="llama2-70b", gpu="a100-80gb", minutes=45, t=8, p=8, d=1, b=1, s=4096, q_w=2, glu_fused=0,
            compare_models=("llama2-7b",))  # section 8 prices Llama-2-7B on one node three ways
F.number("n", F["t"] * F["p"] * F["d"])
F.value("naive", "memory.model_states.inference")
F.value("states", "memory.model_states")
F.value("shard", "memory.zero")
F.number("activations", F["l"] * F.compute("memory.activations.layer.decoder.selective"), unit="byte")
F.number("first_stage", F["activations"] + F["shard"], unit="byte")
F.number("headroom", F["M_gpu"] - F["first_stage"], unit="byte")
F.number("activations_sp", F["l"] * F.compute("memory.activations.layer.decoder.selective_sp"), unit="byte")
F.number("gpt_activations", F["l"] * F.compute("memory.activations.layer.general.selective", gated=1), unit="byte")
F.number("fits_selective", largest_micro_batch("llama2-70b", "a100-80gb", "selective", 8, 8, 4096))
F.number("fits_full", largest_micro_batch("llama2-70b", "a100-80gb", "full", 8, 8, 4096))
_none = largest_micro_batch("llama2-70b", "a100-80gb", "none", 8, 8, 4096)
F.words("none_verdict", f"fill the GPU before b = {_none + 1}" if _none == 0 else f"leave room up to b = {_none}")
F.number("zero_d", 64)
F.number("framework_d", 8)  # the three-framework picture: Llama-2-7B on one node
F.number("megatron_bytes", 2 + 4 + 12, unit="byte")  # bf16 weight, fp32 main gradient, fp32 master weight and Adam m, v
F.value("zero3", "memory.zero.stage3", t=1, p=1, d=64)
F.value("unsplit_layer", "memory.activations.layer.decoder.selective", t=1)
F.number("unsplit_full", F["l"] * F.compute("memory.activations.layer.full_recompute"), unit="byte")
F.value("zero3_sent", "comms.zero.stage3.sent", t=1, p=1, d=64)
F.value("dp_sent", "comms.dp.sent_per_iteration", t=1, p=1, d=64)
F.number("zero3_ratio", F["zero3_sent"] / F["dp_sent"])
F.number("estimate_total", estimate_first_stage("llama2-70b", "a100-80gb", "megatron-lm-2022", t=8, p=8, s=4096), unit="byte")

CELLS = [
    markdown(F.text("""
# Memory: will {{model}} fit on {{n}} GPUs for training?

> *"We have {{n}} {{gpu}}. Can we train {{model}} on them, and how large a micro-batch fits?"*

This is the first question an infra team gets asked about a large model, and the answer is
not "Ψ × 2 bytes = {{naive}}, so two GPUs". Training keeps far more than the weights: the
gradients, the optimizer's fp32 copies, and the activations of every layer that the backward
pass will need. This lesson builds the answer from the toolkit's catalogue one piece at a time.
Each piece is a formula whose derivation the engine checks in front of you (the green tick
says which exact method proved the step), and each is then evaluated at the real {{model}}:
h = {{h}}, {{l}} layers, {{a}} query heads, {{g}} key/value heads, a SwiGLU MLP of width {{d_ff}}.
The hardware is the {{gpu}}: {{M_gpu}} of HBM per GPU.

You will learn to split training memory into *model states* (they scale with Ψ and shrink
with tensor and pipeline parallelism or ZeRO) and *activations* (they scale with the
micro-batch b and the sequence s, and shrink with tensor parallelism and recomputation), and
to find the micro-batch at which the sum crosses the HBM line. Plan about {{minutes}}.
Run the cells in order; every number is printed in GB (10⁹ bytes) unless a source speaks
GiB, and every printed value keeps its exact form: evaluate `value.exact` in a new cell.
""")),
    markdown(F.text("""
## 1. How many parameters?

The parameter count comes from the model's own shapes (its Hugging Face config), counted
exactly as `transformers` builds the model; the lesson on parameters derives it. "70B" is a
name: the real count is a little below.
""")),
    code(F.code("""
M = model("llama2-70b")
A100 = gpu("a100-80gb")
P = evaluate("params.decoder.total", **M)
note(f"{{model}} holds Ψ = **{P}** (exactly {P.exact}).")""")),
    markdown(F.text("""
## 2. Model states: 16 bytes per parameter

Mixed-precision training with Adam keeps, for every parameter, a 16-bit weight (2 bytes) used
by the forward and backward passes, a 16-bit gradient (2 bytes), and in fp32 the master copy
of the weight, Adam's momentum and Adam's variance (4 + 4 + 4 bytes). That is where the
famous 16Ψ comes from. The engine states it as a definition, then proves that the catalogue's
closed form is the same expression:
""")),
    code("""derive("memory.model_states")"""),
    code("""states = put("memory.model_states", **M)"""),
    markdown(F.text("""
That is {{states}}, before a single activation. No GPU holds that, so the states must be split.
Tensor parallelism (t) cuts every weight matrix into t slices and pipeline parallelism (p)
gives each GPU l/p of the layers; either way a GPU keeps 1/(t·p) of the states. With t = {{t}}
inside a server (NVLink) and p = {{p}} across servers we use all {{n}} GPUs with d = {{d}} (no
data parallelism):
""")),
    code(F.code("""
derive("memory.zero")
layout = dict(t={{t}}, p={{p}}, d={{d}}, s={{s}})
shard = put("memory.zero", **M, **layout)""")),
    markdown(F.text("""
The printed value is rounded to three digits, in the unit a person reads. Every value keeps
its exact form, one attribute away:
""")),
    code("""shard.exact"""),
    markdown(F.text("""
{{shard}} of the {{M_gpu}} are gone to the states. What remains must hold the activations.

## 3. Activations of one layer

During the forward pass each layer stores the tensors its backward pass needs: the inputs of
every GEMM, the softmax output, the dropout masks. Korthikanti et al. (2022) counted them for
a GPT layer in 16-bit values with 1-byte masks: 34·s·b·h bytes plus 5·a·s²·b for the
attention scores. The engine derives this from a tensor-by-tensor count (which also holds the
LayerNorm statistics the paper leaves out) and proves the paper's form as its approximation,
with the exact relative error and the limit in which it vanishes:
""")),
    code("""derive("memory.activations.layer")"""),
    markdown(F.text("""
Llama is not GPT: grouped-query attention stores K and V for only g = {{g}} heads, the head
width is d_head = {{d_head}}, the gated MLP stores four d_ff-wide tensors, and Llama trains without
dropout, so none of GPT's 1-byte masks is stored. The catalogue's decoder form covers that block at
the model's own switches (no dropout, a gated MLP); with tensor parallelism and *selective
recompute* (the s² attention scores are recomputed in the backward pass instead of stored,
Korthikanti's recommendation) it reads:
""")),
    code(F.code("""
formula("memory.activations.layer.decoder.selective")
layer = put("memory.activations.layer.decoder.selective", **M, **layout, b={{b}}, glu_fused=0)  # Megatron-LM's unfused SwiGLU""")),
    markdown(F.text("""
## 4. How many layers' worth does one GPU hold?

With 1F1B pipelining the first stage starts p micro-batches before the first backward comes
back, so it holds p micro-batches of its l/p layers: l layers' worth, whatever p is. This is
why the first stage is the one that runs out of memory.
""")),
    code("""derive("memory.activations.1f1b")"""),
    code(F.code("""
activations = Value(M["l"] * layer.value, layer.unit)
note(f"Activations on the first stage at b = {{b}}: **{activations}**; with the states: **{Value(activations.value + shard.value, layer.unit)}** of {Value(A100['M_gpu'], layer.unit)}.")""")),
    markdown(F.text("""
## 5. Where it crosses the HBM line

The activations grow linearly in b, the states do not move. The picture puts the three
recompute modes side by side: without recompute the s² scores {{none_verdict}}; selective
recompute fits
{{fits_selective}} sequence of {{s}} tokens per micro-batch; full recompute (each layer keeps only
its input, 2·s·b·h bytes, and reruns its forward in the backward pass) fits {{fits_full}}, at the
price of a third more FLOPs.
""")),
    code(F.code("""picture("memory_vs_micro_batch", model="llama2-70b", gpu_key="a100-80gb", t={{t}}, p={{p}}, s={{s}})""")),
    markdown(F.text("""
So on paper the answer to the opening question is **yes, at micro-batch {{fits_selective}} with
selective recompute** (or larger micro-batches with full recompute), with t = {{t}}, p = {{p}}:
{{first_stage}} of the {{M_gpu}}, {{headroom}} to spare (GPT's form with its dropout masks would
have said {{gpt_activations}} of activations, masks Llama does not store). This is the accounting of
Megatron-LM as Korthikanti et al. ran it: `llm-formulas estimate --model llama2-70b --gpu a100-80gb
--tp 8 --pp 8 --micro-batches 8 --seq 4096 --framework megatron-lm-2022` prints {{estimate_total}} for
the first stage, this count plus the embedding that stage also holds (its states and token ids); its
default framework, Megatron Core, keeps fp32 gradients (18 bytes a parameter) and says so on its
`prices:` line. Whether that margin is enough is not in the formula. The count holds the tensors the backward pass needs and nothing else; a real run
also needs the caching allocator's fragmentation (freed blocks of the wrong size), NCCL's
communication buffers, the workspaces of cuBLAS and of the attention kernels, and on the last
stage the logits and the loss. None of these is modelled here, and together they can take
several GB. Two changes buy margin: **sequence parallelism** (Korthikanti et al. 2022) splits
the norms' and dropouts' activations over the t GPUs too, and brings the first stage's
activations from {{activations}} to {{activations_sp}}; full recompute trades a third more FLOPs
for most of the rest. Whether it trains *fast enough* is a question of FLOPs and of the bubble
that pipelining leaves, which the cluster lesson takes up.

## 6. What fills a GPU, by layout

The breakdown below shows how the pieces shrink as more GPUs share the model: the fp32 Adam
states dominate until the model is spread over many GPUs, and the activations do not shrink
with p at all (the first stage always holds l layers' worth), only with t.
""")),
    code(F.code("""picture("memory_breakdown", model="llama2-70b", layouts=(({{t}}, 1), ({{t}}, 2), ({{t}}, 4), ({{t}}, {{p}})), b={{b}}, s={{s}})""")),
    markdown(F.text("""
## 7. ZeRO: partition the states over data parallelism instead

With data parallelism every replica would keep all its states. ZeRO (Rajbhandari et al.
2020) partitions them over the d replicas: stage 1 the optimizer states, stage 2 also the
gradients, stage 3 also the weights. The picture draws what each of {{zero_d}} ranks keeps at
each stage (four ranks are drawn; each one's share is 1/d of what it partitions). Stage 3 on all
{{zero_d}} GPUs, without tensor or pipeline parallelism, leaves each GPU 1/{{zero_d}} of the states,
but every GPU then computes whole layers, so its activations are those of the full, unsplit layer:
""")),
    code(F.code("""
picture("zero_partitioning", model="llama2-70b", d={{zero_d}})
derive("memory.zero.stage3")
zero3 = put("memory.zero.stage3", **M, t=1, p=1, d={{zero_d}})""")),
    markdown(F.text("""
The states fit ({{zero3}} per GPU), yet one unsplit layer of {{model}} at b = {{b}}, s = {{s}}
stores {{unsplit_layer}} with selective recompute, and with {{l}} layers even full recompute keeps
{{unsplit_full}}. ZeRO-3 also trades memory for traffic: every iteration each GPU gathers the
16-bit weights twice (forward and backward) and reduce-scatters the gradients, so it sends
{{zero3_sent}} against the {{dp_sent}} of plain data parallelism's gradient all-reduce, {{zero3_ratio}}
times as much (Ψ values of 2 bytes, three passes against two). The communication lesson weighs that.
""")),
    markdown(F.text("""
## 8. Which framework does this price?

The formulas above are the classic recipe (16Ψ, Korthikanti's blocks). A real job holds what its framework's code
keeps: `llm-formulas estimate` prices **a current Megatron Core job** by default (bf16 weights with fp32 main gradients,
{{megatron_bytes}} per parameter; ZeRO 1 is its distributed optimizer, $6 + 12/d$ bytes; fused SwiGLU; no dropout masks
for Llama; the first stage's embedding, the last stage's head and loss, the layer the backward rebuilds), and
`--framework` picks another (formulas/data/frameworks.py says, with sources, what each keeps). The same model, the same
{{framework_d}} GPUs, three ways:
Megatron Core keeps its fp32 gradients whole, DeepSpeed's ZeRO-3 shards everything and gathers one module at a time,
FSDP keeps fp32 shards and gathers a decoder layer (and the next) in bf16.
""")),
    code(F.code("""picture("memory_by_framework", model="llama2-7b", gpu_key="a100-80gb", d={{framework_d}}, s=4096)""")),
    markdown(F.text("""
## Exercises

Type your answer in place of `None` and run the cell; the helper says right or wrong and, when
wrong, which slip it matches or which step differs. Pass your intermediate values as keywords
(the question lists their names) to find your slip. The worked solution is kept out of the
notebook: if you are stuck, run
`from llm_formulas.render.documents.exercises import solution; print(solution("memory.kv_gqa"))`.
""")),
    code("""exercise("memory.training_70b")"""),
    code("""
answer = None  # your figure, in GB (a number, or a figure with its unit, such as "2 TB")
check("memory.training_70b", answer)"""),
    code("""exercise("memory.kv_gqa")"""),
    code("""
answer = None  # your figure, in GiB
check("memory.kv_gqa", answer)"""),
    markdown(F.text("""
An example of what the checker says: suppose a reader forgot the fp32 Adam states and typed
the 16-bit weights and gradients plus the activations. The helper does not give the answer
away; it names the slip and the step where it happened.
""")),
    code("""check("memory.training_70b", 1010, states=280, activations=730)"""),
]
