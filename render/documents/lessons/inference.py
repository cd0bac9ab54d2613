"""Lesson: inference. Why can't a 4090 cluster train a 70B model but can serve it?"""

from llm_formulas.render.documents.notebooks import code, markdown

CELLS = [
    markdown("""
# Inference: why can a 4090 cluster serve a 70B model it cannot train?

> *"RTX 4090s cost a tenth of an H100. Why does everyone say they are useless for training
> Llama-2-70B, yet people serve 70B models on eight of them?"*

Li Bojie's essay ("Training large models: why the A100 beats the 4090") answers this with
arithmetic, and this lesson rebuilds his argument from the catalogue. Training and serving
stress different resources. Training must hold 16 bytes per parameter plus activations and
move gradients and activations between GPUs at a rate set by their compute: the 4090's 24 GB
and its PCIe link (no NVLink) fail both. Decoding one token at a time must *read* every
weight once per step, so its speed is set by memory bandwidth, where the 4090 (1 TB/s) is
not far behind an A100 (2 TB/s), and the network between the GPUs carries only one small
vector per token. You will derive the memory-bound and compute-bound step times, the balance
batch where they meet (the roofline), the latency of a pipeline of GPUs, and the KV cache.
About 45 minutes.
"""),
    markdown("""
## 1. Why training fails: memory and the link

Training states alone, 16 bytes per parameter, over 24 GB cards:
"""),
    code("""
M = model("llama2-70b")
RTX = gpu("rtx4090")
H100 = gpu("h100-sxm")
states = put("memory.model_states", **M)
note(f"That is at least **{states.value / RTX['M_gpu']:.0f}** RTX 4090s for the states alone, before any activation.")"""),
    markdown("""
Many GPUs means splitting layers with tensor parallelism, and tensor parallelism all-reduces
activations in every layer. Li Bojie's criterion: the FLOPs a GPU does per byte its link
brings must exceed what its compute needs to stay busy. The largest useful degree is
3·W_link·h/(X·q); for the 4090 on PCIe Gen4 it is about 2, useless for a model that needs 50
GPUs. (The communication lesson derives this bound.)
"""),
    code("""
formula("comms.tp.max_degree")
source_figure("S11c")"""),
    markdown("""
## 2. Why serving works: a decoding step reads every weight

Generating one token for a batch of b sequences multiplies each weight matrix by b vectors.
Every weight is read from HBM once per step, so for a small batch the step time is the bytes
of weights over the memory bandwidth, split over n GPUs:
"""),
    code("""
derive("inference.latency.memory_bound")
weights = put("memory.model_states.inference", **M)
per_gpu = put("inference.latency.memory_bound", **M, q_w=2, n=8, W_mem=RTX["W_mem"])"""),
    markdown("""
138 GB of 16-bit weights fit in 8 × 24 GB = 192 GB, leaving room for the KV cache. Li Bojie's
figure for the time per stage, with his rounded inputs (Ψ = 70B, 1 TB/s):
"""),
    code("""source_figure("S14a")"""),
    markdown("""
## 3. Compute-bound above the balance batch

The FLOPs of a step are 2Ψ per token, b tokens per step. Reading the weights costs the same
whatever b is, so larger batches are free until the FLOPs take longer than the reads. The
batch where both take equally long is the balance batch b* = X·q/(2·W_mem): a property of the
GPU alone, not of the model.
"""),
    code("""
derive("inference.balance_batch")
b_4090 = put("inference.balance_batch", q_w=2, **RTX, label="RTX 4090")
b_h100 = put("inference.balance_batch", q_w=2, **H100, label="H100 SXM")"""),
    markdown("""
The roofline shows the same thing as attainable FLOP/s against the batch: a slope (memory
bound) up to b*, then the flat roof of peak compute. Every GPU here balances at a batch of a
few hundred; a 4090 simply reaches a lower roof.
"""),
    code("""picture("roofline", gpus=("rtx4090", "a100-80gb", "h100-sxm"))"""),
    code("""picture("decode_latency", model="llama2-70b", gpu_key="rtx4090", n=8)"""),
    markdown("""
## 4. A pipeline of GPUs: stages run in series

With pipeline parallelism over 8 cards each token passes through the 8 stages one after the
other. The per-token latency is therefore the whole model's read time on one card's bandwidth:
splitting does not make a token faster, it only makes the model fit (and lets 8 batches be in
flight at once). Between stages travels one vector of h values per sequence, 16 KB at
h = 8192: even 1 Gbit Ethernet carries that in a fraction of a millisecond, which is why
serving tolerates a slow network that training cannot.
"""),
    code("""
derive("inference.latency.pipeline")
source_figure("S14b")
hop = put("inference.pipeline.stage_traffic", b=1, h=M["h"], q=2, label="bytes per token at one boundary")"""),
    markdown("""
## 5. The KV cache

Each sequence keeps the keys and values of its earlier tokens in every layer, so that a new
token does not recompute them. Llama-2-70B's grouped-query attention keeps g = 8 key/value
heads instead of 64, which divides the cache by 8:
"""),
    code("""
derive("memory.kv_cache.per_token")
kv = put("memory.kv_cache", **M, b=8, s=4096, q=2, binary=True)"""),
    markdown("""
10 GiB for 8 sequences of 4096 tokens: next to 138 GB of weights it is small, and it is what
limits the batch on 8 × 24 GB. So the answer: **a 4090 cluster serves a 70B model because
decoding is bound by memory bandwidth (where the 4090 is close to datacenter cards) and its
pipeline sends only kilobytes per token; it cannot train it because training needs ten times
the memory and a link fast enough for tensor parallelism.**

## Exercises

Type your answer in place of `None` and run the cell; a wrong answer gets the step that
differs. Solutions: `from llm_formulas.render.documents.exercises import solution` (not shown here).
"""),
    code("""exercise("inference.stage_latency")"""),
    code("""
answer = None  # milliseconds
check("inference.stage_latency", answer)"""),
    code("""exercise("inference.balance_h100")"""),
    code("""
answer = None  # a batch size
check("inference.balance_h100", answer)"""),
]
