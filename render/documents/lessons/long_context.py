"""Lesson: long context and context parallelism. What does a 128k-token sequence do to training memory, FLOPs and
traffic, and how does context parallelism split it?"""

from llm_formulas.render.documents.figures import Figures
from llm_formulas.render.documents.notebooks import code, markdown

F = Figures("long_context", model="llama2-70b", gpu="h100-sxm", minutes=30, t=8, p=8, b=1, q=2, s=131072, c=8)
F.number("short_s", 4096)
F.value("states", "memory.zero")
F.number("eager_short", F["l"] * F.compute("memory.activations.layer.general.tp", s=F["short_s"]), unit="byte")
F.number("eager_long", F["l"] * F.compute("memory.activations.layer.general.tp"), unit="byte")
F.number("scores_long", F["l"] * F.compute("memory.activations.layer.general.tp") - F["l"] * F.compute(
    "memory.activations.layer.general.selective"), unit="byte")
F.number("flash_long", F["l"] * F.compute("memory.activations.layer.general.flash"), unit="byte")
F.number("sp_long", F["l"] * F.compute("memory.activations.layer.cp_sp", c=1), unit="byte")
F.number("cp_long", F["l"] * F.compute("memory.activations.layer.cp_sp"), unit="byte")
F.number("cp_total", F["cp_long"] + F["states"], unit="byte")
F.number("full_cp", F["l"] * F.compute("memory.activations.layer.cp.full_recompute_sp"), unit="byte")
F.value("cp_layer_bytes", "comms.cp.per_layer")
F.value("cp_microbatch", "comms.cp.per_microbatch")
F.value("tp_microbatch", "comms.tp.sent_per_microbatch", s=F["s"] // F["c"])
F.number("kv_chunk", 2 * F["b"] * (F["s"] // F["c"]) * F["g"] // F["t"] * F["d_head"] * F["q"], unit="byte")
F.number("scores_over_mlp", F.compute("flops.decoder.attention.scores.causal") / F.compute("flops.decoder.mlp"))
F.number("scores_over_mlp_short", F.compute("flops.decoder.attention.scores.causal", s=F["short_s"])
         / F.compute("flops.decoder.mlp", s=F["short_s"]), digits=2)
F.number("c_needed", next(c for c in (1, 2, 4, 8, 16, 32, 64)
                          if F["l"] * F.compute("memory.activations.layer.cp_sp", c=c) + F["states"] <= F["M_gpu"]))

CELLS = [
    markdown(F.text("""
# Long context and context parallelism: what does a sequence of {{s}} tokens cost?

> *"We want to train {{model}} on sequences of {{s}} tokens instead of {{short_s}}. The memory
> lesson's layout (t = {{t}}, p = {{p}}) fit on {{gpu}} GPUs. What breaks, and what fixes it?"*

Everything in a transformer that scales with the number of tokens grows linearly with the
sequence length s: the activations of the GEMMs, the norms, the dropouts. The attention scores
grow as s², since each token attends to every earlier one. A longer context therefore breaks
memory first (the activations of the first pipeline stage), then compute (the attention's share
of the FLOPs), and the remedy, context parallelism, adds traffic of its own. This lesson takes
{{model}} from {{short_s}} to {{s}} tokens per sequence and derives each step with the engine.
Plan {{minutes}}.
""")),
    markdown(F.text("""
## 1. The s² term: why eager attention is out

Korthikanti's count of a layer's activations has the term 5·a·s²·b for the attention scores,
their softmax and its dropout mask. At {{short_s}} tokens the first stage's {{l}} layers' worth
is already {{eager_short}} with tensor parallelism {{t}}; at {{s}} tokens it is {{eager_long}}, of
which the scores alone are {{scores_long}}. No GPU holds that, and none needs to: a fused
attention kernel (FlashAttention) never stores the s × s scores. It keeps Q, K, V, the output and
one fp32 log-sum-exp per head and token, and recomputes the scores block by block in the backward
pass:
""")),
    code(F.code("""
M = model("llama2-70b")
derive("memory.activations.layer.flash")
flash = put("memory.activations.layer.general.flash", **M, t={{t}}, b={{b}}, s={{s}}, label="one layer, flash attention, t = {{t}}, s = {{s}}")""")),
    markdown(F.text("""
The first stage's activations with flash attention: {{flash_long}}. Linear in s now, but still far
beyond one GPU. Sequence parallelism (Korthikanti et al. 2022) splits the norms' and dropouts'
activations over the t tensor-parallel GPUs too: {{sp_long}}. Still too much.

## 2. Context parallelism: split the sequence

Context parallelism (CP) gives each of c GPUs a contiguous chunk of s/c tokens of every sequence,
for every layer. Every activation that belongs to a token is then divided by c; what does not
divide is attention itself, since a token's query must meet the keys and values of all earlier
tokens. Ring attention solves that by passing K and V chunks around the c GPUs while each computes
its block of scores. The catalogue's activations with CP, tensor and sequence parallelism:
""")),
    code(F.code("""
derive("memory.activations.layer.cp_sp")
per_layer = put("memory.activations.layer.cp_sp", **M, t={{t}}, c={{c}}, b={{b}}, s={{s}})""")),
    markdown(F.text("""
With c = {{c}} the first stage holds {{cp_long}} of activations, {{cp_total}} with its {{states}} of
model states: it fits the {{M_gpu}}, and c = {{c_needed}} is the smallest power of two that does.
Full recompute on top would bring the activations down to {{full_cp}}. The picture draws the first
stage's memory against the sequence length for several c:
""")),
    code(F.code("""picture("context_memory", model="llama2-70b", gpu_key="h100-sxm", t={{t}}, p={{p}}, cs=(1, 2, 4, 8, 16))""")),
    markdown(F.text("""
## 3. What ring attention sends

Each layer's forward pass moves the c − 1 chunks of K and V that a GPU does not own past it (for
a GQA model only g = {{g}} key/value heads, split t ways: {{kv_chunk}} per chunk), and the backward
pass moves K and V again with their gradients. Per layer and micro-batch each GPU sends:
""")),
    code(F.code("""
derive("comms.cp.per_layer")
cp = put("comms.cp.per_layer", **M, t={{t}}, c={{c}}, b={{b}}, s={{s}}, q={{q}})""")),
    markdown(F.text("""
{{cp_layer_bytes}} per layer, {{cp_microbatch}} for the {{p}}-stage pipeline's share of the layers,
beside the {{tp_microbatch}} its tensor-parallel all-reduces send for the same tokens. Ring
attention overlaps these sends with the blocks of attention it computes meanwhile, which is why it
keeps up as long as a chunk's attention takes longer than sending the next chunk: long chunks (large
s/c) hide the traffic, many small ones do not.

## 4. The compute: attention takes over

With a causal kernel a token computes scores for the s(s + 1)/2 pairs it may see. Against the MLP,
whose FLOPs are linear in s, the attention's QKᵀ and scores·V are {{scores_over_mlp_short}} times
the MLP at {{short_s}} tokens and {{scores_over_mlp}} times at {{s}}: at long context 6ΨD is no
longer the training compute (the flops lesson shows by how much), and tokens cost more the longer
the sequence they sit in.

So: **a long context needs flash attention (no s² activations), sequence parallelism, and context
parallelism sized so that s/c tokens fit per GPU; it adds ring traffic per layer and makes
attention the largest term of the FLOPs.**

## Exercise

Type your answer in place of `None`; a wrong answer gets the slip it matches or the step that
differs. The solution is not in this notebook.
""")),
    code("""exercise("long_context.cp_activations")"""),
    code("""
answer = None  # GB
check("long_context.cp_activations", answer)"""),
    markdown("""
What the checker says to a reader who forgot to divide by the context-parallel degree:
"""),
    code("""check("long_context.cp_activations", 457)"""),
]
