"""Lesson: Li Bojie, "Training large models: why the A100 beats the 4090", re-derived.

The inference figures of its prose are computed below from the essay's worked examples (formulas/examples.py, the
catalogue at the essay's inputs) and the GPU presets, by the calls its code cells make, and rendered into the text:
a stage's latency and a token's are named apart, and each balance batch names the FLOP/s figure it divides.
"""

from llm_formulas.formulas.examples import example
from llm_formulas.formulas.gpus import gpu
from llm_formulas.formulas.estimate import exact
from llm_formulas.render.documents.notebooks import code, markdown
from llm_formulas.render.printers.human import human


def _figures() -> dict[str, str]:
    stage, token, busy = (example(case).exact() for case in ("S14a", "S14b", "S14c"))
    stages = 8  # the essay's 8 cards, one pipeline stage each
    rtx = gpu("rtx4090")
    balance = {name: exact("inference.balance_batch", q_w=2, X=rtx.flops(name), W_mem=rtx.memory_bandwidth) for name in ("fp16", "bf16")}
    return {"stage": human(stage, "second"), "token": human(token, "second"), "busy_stage": human(busy, "second"),
            "busy_token": human(stages * busy, "second"), "stages": f"{stages}",
            "essay_balance": f"{float(example('S14d').exact()):.0f}", "balance_bf16": f"{float(balance['bf16']):.0f}",
            "x_bf16": human(rtx.flops("bf16"), "FLOP/second"), "x_fp16": human(rtx.flops("fp16"), "FLOP/second"),
            "h100_balance": f"{float(example('S14e').exact()):.0f}"}


F = _figures()

CELLS = [
    markdown("""
# Article 001: why does the A100 beat the 4090 for training? (Li Bojie)

> *"An RTX 4090 has about the compute of an A100 for a tenth of the price. Why can't we train
> Llama-2-70B on a few hundred of them?"*

李博杰 (Li Bojie), "大模型训练：为何A100更胜4090一筹？" ("Training large models: why the A100 beats
the 4090") answers with a chain of estimates for LLaMA-2 70B: the FLOPs of training (6PD), the
memory training needs, what recomputation costs, the largest tensor-parallel degree a link can
feed, the KV cache, and why inference on 4090s works where training does not. (The lessons are
numbered after the source articles, 000, 001, 002 and 004; no article 003 was among the
sources.) This lesson follows the essay's argument in its order, checks every figure it prints
against the catalogue, and shows each of its slips with the engine's proof. Around 50 minutes.
"""),
    markdown("""
## Training FLOPs: 6 per parameter per token

The essay explains the 6 as three multiplies and three adds per weight per token: forward,
the input's gradient, the weight's gradient. It then works one layer of about a billion
parameters at b = 8, s = 4096: 196 TFLOP per step, 0.6 s on a 4090.
"""),
    code("""
derive("flops.training.approx")
source_figure("S10")"""),
    markdown("""
## Training memory: 1850 GB

Weights 140 GB, gradients 140 GB, Adam states 840 GB and the activations of 80 layers
(selective recompute, no tensor parallelism, s·b·h·l·(10 + 24/t)) 730 GB: 1850 GB, so at least
24 A100 80 GB or 78 RTX 4090.
"""),
    code("""
derive("memory.activations.selective_001")
source_figure("S7")
source_figure("S8")"""),
    markdown("""
Recomputing every layer from the input instead of keeping activations would need 3240 layer
forward passes for 80 layers, 40 times one pass:
"""),
    code("""
derive("flops.recompute.from_scratch")
source_figure("S9")"""),
    markdown("""
## How far tensor parallelism goes

Li's central argument: a TP rank computes 2·3·(h/t) FLOPs of Q, K, V projections per byte it
receives, and its link must bring bytes as fast as its compute eats them. One head per GPU for
LLaMA-2 70B (t = 64) gives 384 FLOPs per byte, which needs 859 GB/s one way on a 4090. Solving
for t gives the largest useful degree per GPU:
"""),
    code("""
derive("comms.tp.max_degree")
for case in ("S11a", "S11b", "S11c", "S11d", "S11e", "S11f"):
    source_figure(case)"""),
    markdown("""
The H800 line carries a slip: 4.8 printed, 4.97 by the essay's own figures (the same formula
gives 11.18 for the H100 at 900 GB/s, so the H800 at 400 GB/s gets 4/9 of it). Two more slips sit
in the H100 case: the essay divides 989 TFLOPS by the whole 900 GB/s of NVLink (both directions)
to say the GPU needs 1100 FLOPs per byte, where one way carries 450 GB/s and the need is about
2198; and from 1100 its own inequality would allow t ≤ 22, not the 11 it prints (11 is right
only for 2198). The engine refutes all three:
"""),
    code("""
refutation("comms.tp.max_degree", "S11e: H800 t ≤ 4.8")
refutation("comms.tp.max_degree", "001: H100 needs 1100")
refutation("comms.tp.max_degree", "001: 1100 gives t ≤ 11")"""),
    markdown("""
The picture of the need against t shows why only NVLink keeps up:
"""),
    code("""picture("bandwidth_vs_tp", h=8192, gpus=("rtx4090", "a100-80gb", "h100-sxm"), U="1/2", r="1")"""),
    markdown("""
## The KV cache, and two slips

The essay sizes the cache of LLaMA-2 70B taken without GQA: 2 (K and V) × 80 layers × 8192 ×
4096 tokens × 8 sequences × 2 bytes = 80 GB. Those are GiB (2³⁰ bytes), 85.9 GB decimal. It
then calls this "5 GB per prompt": its own numbers give 10 GiB per sequence, and the real model
with its 8 KV heads needs 1.25 GiB. The engine refutes the printed figure:
"""),
    code("""
source_figure("S12")
refutation("memory.kv_cache", "S12: 80 GB")
refutation("memory.kv_cache.per_sequence", "001: 5 GB per prompt")"""),
    markdown("""
The cache saves recomputing K and V for earlier tokens: 640 T FLOPs (binary T) per step at 4096
tokens, for 40 T weight reads. The essay's ratio of "16K FLOPs saved per byte" is 8K by its own
figures (reads are of 2-byte values):
"""),
    code("""
source_figure("S13a")
refutation("inference.kv_recompute.flops", "001: 16K FLOPs per byte")"""),
    markdown(f"""
## Inference on 4090s

The essay's last part turns the question around: if the 4090 is poor at training, is it any
good at serving? Its argument is the inference lesson's: decoding reads every weight per step,
so memory bandwidth, not compute, sets the pace at small batches.

Decoding reads every weight once per step. LLaMA-2 70B over {F['stages']} cards: {F['stage']} per
*stage* per token, and since pipeline stages run in series, {F['token']} per *token*. At batch
1024 a stage's step is compute-bound, {F['busy_stage']}; a token of that batch crosses all
{F['stages']} stages, {F['busy_token']}. (The essay prints the stage's figure beside the token's of batch 1:
the two are not comparable.) The balance batch (memory and compute equally slow) is
{F['essay_balance']} on a 4090 with the FLOP/s the essay divides, its FP16-accumulate peak of
{F['x_fp16']}; with its BF16 (and FP32-accumulate) peak of {F['x_bf16']}, the figure the roofline
below draws, it is {F['balance_bf16']}. An H100 balances at {F['h100_balance']}: a property of the GPU, not of
the model.
"""),
    code("""
for case in ("S14a", "S14b", "S14c", "S14d", "S14e"):
    source_figure(case)"""),
    code("""picture("roofline", gpus=("rtx4090", "a100-80gb", "h100-sxm"))"""),
    markdown("""
Between stages travel b·h·2 bytes per token: 128 KB at b = 8, 4 µs over PCIe. Over 1 Gbit/s
Ethernet at b = 330 the essay prints 5.28 MB and 41 ms, and a batch of at most 60 for 5 tokens
per second: 16 KB is 16384 bytes, not 16000, and 1 Gbit/s is 125 MB/s, so the figures are
5.41 MB, 43.25 ms and 57.2.
"""),
    code("""
for case in ("S15a", "S15b", "S15c", "S15d", "S15e"):
    source_figure(case)"""),
    markdown("""
The engine's refutations of these figures, and of two more in the same passage: 16 KB over
1 Gbit/s takes 0.131 ms, not 0.25 ms; and "0.33 s, so 3 tokens per second" counts only the 8
network hops and leaves out the 0.14 s the stages compute, which makes 0.486 s, 2.06 tokens per
second:
"""),
    code("""
refutation("inference.pipeline.stage_traffic", "S15b: 5.28 MB at b = 330")
refutation("inference.pipeline.transfer_time", "001: 16 KB over 1 Gbps in 0.25 ms")
refutation("inference.pipeline.transfer_time", "S15d: 41 ms at b = 330")
refutation("inference.latency.pipeline.network", "001: 0.33 s, 3 tokens/s")
refutation("inference.pipeline.max_batch", "S15e: batch ≤ 60")"""),
    markdown("""
Every slip the engine refutes in this essay (the list grows as more errata are proved):
"""),
    code("""slips("001")"""),
    markdown("""
## Exercises

Type your answer in place of `None`; a wrong answer gets the step that differs. The solutions
are not in this notebook.
"""),
    code("""exercise("article_001.kv_cache")"""),
    code("""
answer = None  # GiB
check("article_001.kv_cache", answer)"""),
    code("""exercise("article_001.max_tp_h100")"""),
    code("""
answer = None  # a plain number
check("article_001.max_tp_h100", answer)"""),
]
