"""Lesson: inference. Why can't a 4090 cluster train a 70B model but can serve it?

Every figure the prose quotes is computed below (render/documents/figures.py), by the calls the pictures and the code
cells make, and rendered into the text; tests/test_lesson_figures.py reads each back and tests/test_serving_lessons.py
computes the essay's own arithmetic again. A stage's latency and a token's are named apart: the 8 pipeline stages run
in series.
"""

import numpy as np

from llm_formulas.formulas.data.gpus import gpu
from llm_formulas.render.documents import serving_figures as SF
from llm_formulas.render.documents.figures import Figures
from llm_formulas.render.documents.notebooks import code, markdown

F = Figures("inference", model="llama2-70b", gpu="rtx4090", minutes=45, compare_gpus=("a100-80gb", "h100-sxm"),
            n=8, q_w=2, q=2, b=1, s_in=512, s_out=64)
F.value("stage", "inference.latency.memory_bound")
F.value("token", "inference.latency.pipeline")
F.number("weights", F["q_w"] * F["P"], unit="byte")
F.number("box", F["n"] * F["M_gpu"], unit="byte")
F.number("a100_bandwidth", gpu("a100-80gb").memory_bandwidth, unit="byte/second")
F.number("x_fp16", gpu("rtx4090").flops("fp16"), unit="FLOP/second")
F.value("max_tp", "comms.tp.max_degree", X=F["x_fp16"], digits=2)  # the essay's FP16-accumulate peak
F.value("balance_bf16", "inference.balance_batch")
F.value("balance_fp16", "inference.balance_batch", X=F["x_fp16"])
F.value("balance_h100", "inference.balance_batch", X=gpu("h100-sxm").flops("bf16"), W_mem=gpu("h100-sxm").memory_bandwidth)
_CURVE = SF.decode_curve("llama2-70b", "rtx4090", 1, int(F["s_in"]), int(F["s_out"]), p=int(F["n"]))
_ONE = int(np.flatnonzero(_CURVE["batch"] == 1)[0])
F.number("served_token", _CURVE["tpot"][_ONE], unit="second")
F.number("served_stage", _CURVE["tpot"][_ONE] / F["n"], unit="second")
F.number("wall_prompt", 4000, unit="token", digits=None)
F.number("wall_output", 96, unit="token", digits=None)
F.number("wall_context", F["wall_prompt"] + F["wall_output"], unit="token", digits=None)
F.number("wall", SF.decode_curve("llama2-70b", "rtx4090", 1, int(F["wall_prompt"]), int(F["wall_output"]), p=int(F["n"]))
         ["max_batch"][0], digits=None)
F.value("hop", "inference.pipeline.stage_traffic")
F.number("gqa_factor", F["a"] / F["g"])

CELLS = [
    markdown(F.text("""
# Inference: why can a 4090 cluster serve a 70B model it cannot train?

> *"RTX 4090s cost a tenth of an H100. Why does everyone say they are useless for training
> {{model}}, yet people serve 70B models on eight of them?"*

Li Bojie's essay ("Training large models: why the A100 beats the 4090") answers this with
arithmetic, and this lesson rebuilds his argument from the catalogue. Training and serving
stress different resources. Training must hold 16 bytes per parameter plus activations and
move gradients and activations between GPUs at a rate set by their compute: the 4090's {{M_gpu}}
and its PCIe link (no NVLink) fail both. Decoding one token at a time must *read* every
weight once per step, so its speed is set by memory bandwidth, where the 4090 ({{W_mem}}) is
not far behind an A100 ({{a100_bandwidth}}), and the network between the GPUs carries only one small
vector per token. You will derive the memory-bound and compute-bound step times, the balance
batch where they meet (the roofline), the latency of a pipeline of GPUs, and the KV cache, on
{{n}} cards of the {{gpu}}; the serving lesson then adds what this sketch leaves out. About {{minutes}}.
""")),
    markdown(F.text("""
## 1. Why training fails: memory and the link

Training states alone, 16 bytes per parameter, over {{M_gpu}} cards:
""")),
    code("""
M = model("llama2-70b")
RTX = gpu("rtx4090")
H100 = gpu("h100-sxm")
states = put("memory.model_states", **M)
note(f"That is at least **{states.value / RTX['M_gpu']:.0f}** RTX 4090s for the states alone, before any activation.")"""),
    markdown(F.text("""
Many GPUs means splitting layers with tensor parallelism, and tensor parallelism all-reduces
activations in every layer. Li Bojie's criterion: the FLOPs a GPU does per byte its link
brings must exceed what its compute needs to stay busy. The largest useful degree is
3·W_link·h/(X·q); for the 4090 on PCIe Gen4 ({{W_link}}) at the essay's {{x_fp16}} it is {{max_tp}},
useless for a model that needs dozens of GPUs. (The communication lesson derives this bound.)
""")),
    code("""
formula("comms.tp.max_degree")
source_figure("S11c")"""),
    markdown(F.text("""
## 2. Why serving works: a decoding step reads every weight

Generating one token for a batch of b sequences multiplies each weight matrix by b vectors.
Every weight is read from HBM once per step, so for a small batch the step time is the bytes
of weights over the memory bandwidth. Split over {{n}} cards as {{n}} pipeline stages, each card reads
an eighth of them: **{{stage}} per stage**. The stages run one after the other, so a token
takes all {{n}} of them: **{{token}} per token**, the whole model's {{weights}} read at one
card's bandwidth. The two figures are one step seen per card and per token; neither is wrong,
but only the second is what a user waits for.
""")),
    code("""
derive("inference.latency.memory_bound")
weights = put("memory.model_states.inference", **M)
per_stage = put("inference.latency.memory_bound", **M, q_w=2, n=8, W_mem=RTX["W_mem"], label="a stage: 1/8 of the weights on one card")
per_token = put("inference.latency.pipeline", **M, q_w=2, W_mem=RTX["W_mem"], label="a token: the 8 stages in series")"""),
    markdown(F.text("""
{{weights}} of 16-bit weights fit in {{n}} × {{M_gpu}} = {{box}}, leaving room for the KV cache.
Li Bojie's figure for the time per stage, with his rounded inputs (Ψ = 70B and a round terabyte per second):
""")),
    code("""source_figure("S14a")"""),
    markdown(F.text("""
## 3. Compute-bound above the balance batch

The FLOPs of a step are 2Ψ per token, b tokens per step. Reading the weights costs the same
whatever b is, so larger batches are free until the FLOPs take longer than the reads. The
batch where both take equally long is the balance batch b* = X·q/(2·W_mem): a property of the
GPU alone, not of the model. Which FLOP/s figure X is matters: a 4090 runs FP16 GEMMs with
FP16 accumulation at {{x_fp16}} (the essay's figure: b* = {{balance_fp16}}) but BF16, and FP16 with
FP32 accumulation, at {{X}} (b* = {{balance_bf16}}, what the picture below uses). An H100
balances at {{balance_h100}} with its BF16 peak.
""")),
    code("""
derive("inference.balance_batch")
b_4090 = put("inference.balance_batch", q_w=2, **RTX, label="RTX 4090 at its BF16 (FP32-accumulate) peak")
b_4090_fp16 = put("inference.balance_batch", q_w=2, X=3303 * 10**11, W_mem=RTX["W_mem"], label="RTX 4090 at its FP16-accumulate peak (330.3 TFLOPS)")
b_h100 = put("inference.balance_batch", q_w=2, **H100, label="H100 SXM")"""),
    markdown("""
The roofline shows the same thing as attainable FLOP/s against the batch: a slope (memory
bound) up to b*, then the flat roof of peak compute. Every GPU here balances at a batch of a
few hundred; a 4090 simply reaches a lower roof.
"""),
    code("""picture("roofline", gpus=("rtx4090", "a100-80gb", "h100-sxm"))"""),
    markdown(F.text("""
The sketch leaves out what the serving model counts: the KV cache each sequence reads, the
kernels' fixed costs and the hops between stages. Priced that way (the serving lesson's
`serving.time.decode_step`, constants fitted on published TensorRT-LLM runs), a token at batch {{b}}
after a prompt of {{s_in}} tokens takes {{served_token}} through the {{n}} stages, {{served_stage}} a stage;
the picture draws both against the batch, each labelled for what it is.
""")),
    code("""picture("serving_stage_and_token")"""),
    markdown(F.text("""
## 4. A pipeline of GPUs: stages run in series

With pipeline parallelism over {{n}} cards each token passes through the {{n}} stages one after the
other. The per-token latency is therefore the whole model's read time on one card's bandwidth:
splitting does not make a token faster, it only makes the model fit (and lets {{n}} batches be in
flight at once). Between stages travels one vector of h values per sequence, {{hop}} at
h = {{h}}: even gigabit Ethernet carries that in a fraction of a millisecond, which is why
serving tolerates a slow network that training cannot.
""")),
    code("""
derive("inference.latency.pipeline")
source_figure("S14b")
hop = put("inference.pipeline.stage_traffic", b=1, h=M["h"], q=2, label="bytes per token at one boundary")"""),
    markdown(F.text("""
## 5. The KV cache, and the wall it builds

Each sequence keeps the keys and values of its earlier tokens in every layer, so that a new
token does not recompute them. {{model}}'s grouped-query attention keeps g = {{g}} key/value
heads instead of {{a}}, which divides the cache by {{gqa_factor}}. It is also what caps the batch: beside the
weights, {{n}} × {{M_gpu}} hold the cache of only **{{wall}}** sequences of {{wall_context}} tokens ({{wall_prompt}} in,
{{wall_output}} out: `llm-formulas serve`'s KV wall, with a prefill workspace), far below the balance batch of section 3.
""")),
    code("""
derive("memory.kv_cache.per_token")
kv = put("memory.kv_cache", **M, b=8, s=4096, q=2, binary=True)"""),
    markdown("""
So the answer: **a 4090 cluster serves a 70B model because decoding is bound by memory bandwidth
(where the 4090 is close to datacenter cards) and its pipeline sends only kilobytes per token;
it cannot train it because training needs ten times the memory and a link fast enough for
tensor parallelism.** What batch it can serve is set by the cache, not by the roofline.

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
