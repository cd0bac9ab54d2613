"""Lesson: inference. Why can't a 4090 cluster train a 70B model but can serve it?

Every figure the prose quotes is computed below, by the calls the pictures and the code cells make, and rendered into
the text (tests/test_serving_lessons.py computes them again and compares). A stage's latency and a token's are named
apart: the 8 pipeline stages run in series.
"""

import numpy as np

from llm_formulas.formulas import estimate
from llm_formulas.formulas.gpus import gpu
from llm_formulas.render.documents import serving_figures as SF
from llm_formulas.render.documents.notebooks import code, markdown
from llm_formulas.render.printers.human import human

MODEL, CARDS, S_IN, S_OUT = "llama2-70b", 8, 512, 64


def _figures() -> dict[str, str]:
    values = dict(SF.model(MODEL))
    params = estimate.exact("params.decoder.total", **values)
    rtx, h100 = gpu("rtx4090"), gpu("h100-sxm")
    stage = estimate.exact("inference.latency.memory_bound", q_w=2, P=params, n=CARDS, W_mem=rtx.memory_bandwidth)
    token = estimate.exact("inference.latency.pipeline", q_w=2, P=params, W_mem=rtx.memory_bandwidth)
    balance = {name: estimate.exact("inference.balance_batch", q_w=2, X=rtx.flops(name), W_mem=rtx.memory_bandwidth)
               for name in ("bf16", "fp16")}
    curve = SF.decode_curve(MODEL, "rtx4090", 1, S_IN, S_OUT, p=CARDS)
    one = int(np.flatnonzero(curve["batch"] == 1)[0])
    wall = SF.decode_curve(MODEL, "rtx4090", 1, 4000, 96, p=CARDS)["max_batch"][0]
    return {
        "stage": human(stage, "second"), "token": human(token, "second"),
        "weights": human(2 * params, "byte"), "box": human(CARDS * rtx.memory, "byte"),
        "balance_bf16": f"{float(balance['bf16']):.0f}", "balance_fp16": f"{float(balance['fp16']):.0f}",
        "x_bf16": human(rtx.flops("bf16"), "FLOP/second"), "x_fp16": human(rtx.flops("fp16"), "FLOP/second"),
        "balance_h100": f"{float(estimate.exact('inference.balance_batch', q_w=2, X=h100.flops('bf16'), W_mem=h100.memory_bandwidth)):.0f}",
        "served_token": human(curve["tpot"][one], "second"), "served_stage": human(curve["tpot"][one] / CARDS, "second"),
        "wall": f"{int(wall)}", "hop": human(2 * values["h"], "byte"),
    }


F = _figures()

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
batch where they meet (the roofline), the latency of a pipeline of GPUs, and the KV cache;
the serving lesson then adds what this sketch leaves out. About 45 minutes.
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
3·W_link·h/(X·q); for the 4090 on PCIe Gen4 it is about 2, useless for a model that needs
dozens of GPUs. (The communication lesson derives this bound.)
"""),
    code("""
formula("comms.tp.max_degree")
source_figure("S11c")"""),
    markdown(f"""
## 2. Why serving works: a decoding step reads every weight

Generating one token for a batch of b sequences multiplies each weight matrix by b vectors.
Every weight is read from HBM once per step, so for a small batch the step time is the bytes
of weights over the memory bandwidth. Split over {CARDS} cards as {CARDS} pipeline stages, each card reads
an eighth of them: **{F['stage']} per stage**. The stages run one after the other, so a token
takes all {CARDS} of them: **{F['token']} per token**, the whole model's {F['weights']} read at one
card's bandwidth. The two figures are one step seen per card and per token; neither is wrong,
but only the second is what a user waits for.
"""),
    code("""
derive("inference.latency.memory_bound")
weights = put("memory.model_states.inference", **M)
per_stage = put("inference.latency.memory_bound", **M, q_w=2, n=8, W_mem=RTX["W_mem"], label="a stage: 1/8 of the weights on one card")
per_token = put("inference.latency.pipeline", **M, q_w=2, W_mem=RTX["W_mem"], label="a token: the 8 stages in series")"""),
    markdown(f"""
{F['weights']} of 16-bit weights fit in {CARDS} × 24 GB = {F['box']}, leaving room for the KV cache.
Li Bojie's figure for the time per stage, with his rounded inputs (Ψ = 70B, 1 TB/s):
"""),
    code("""source_figure("S14a")"""),
    markdown(f"""
## 3. Compute-bound above the balance batch

The FLOPs of a step are 2Ψ per token, b tokens per step. Reading the weights costs the same
whatever b is, so larger batches are free until the FLOPs take longer than the reads. The
batch where both take equally long is the balance batch b* = X·q/(2·W_mem): a property of the
GPU alone, not of the model. Which FLOP/s figure X is matters: a 4090 runs FP16 GEMMs with
FP16 accumulation at {F['x_fp16']} (the essay's figure: b* = {F['balance_fp16']}) but BF16, and FP16 with
FP32 accumulation, at {F['x_bf16']} (b* = {F['balance_bf16']}, what the picture below uses). An H100
balances at {F['balance_h100']} with its BF16 peak.
"""),
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
    markdown(f"""
The sketch leaves out what the serving model counts: the KV cache each sequence reads, the
kernels' fixed costs and the hops between stages. Priced that way (the serving lesson's
`serving.time.decode_step`, constants fitted on published TensorRT-LLM runs), a token at batch 1
takes {F['served_token']} through the {CARDS} stages, {F['served_stage']} a stage; the picture draws both against the
batch, each labelled for what it is.
"""),
    code("""picture("serving_stage_and_token")"""),
    markdown(f"""
## 4. A pipeline of GPUs: stages run in series

With pipeline parallelism over {CARDS} cards each token passes through the {CARDS} stages one after the
other. The per-token latency is therefore the whole model's read time on one card's bandwidth:
splitting does not make a token faster, it only makes the model fit (and lets {CARDS} batches be in
flight at once). Between stages travels one vector of h values per sequence, {F['hop']} at
h = 8192: even 1 Gbit Ethernet carries that in a fraction of a millisecond, which is why
serving tolerates a slow network that training cannot.
"""),
    code("""
derive("inference.latency.pipeline")
source_figure("S14b")
hop = put("inference.pipeline.stage_traffic", b=1, h=M["h"], q=2, label="bytes per token at one boundary")"""),
    markdown(f"""
## 5. The KV cache, and the wall it builds

Each sequence keeps the keys and values of its earlier tokens in every layer, so that a new
token does not recompute them. Llama-2-70B's grouped-query attention keeps g = 8 key/value
heads instead of 64, which divides the cache by 8. It is also what caps the batch: beside the
weights, {CARDS} × 24 GB hold the cache of only **{F['wall']}** sequences of 4,096 tokens (`llm-formulas serve`'s
KV wall, with a prefill workspace), far below the balance batch of section 3.
"""),
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
