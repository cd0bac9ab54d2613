"""Lesson: serving. How many H100s does it take to serve Llama-3.1-70B to 1,000 users at 50 ms per token?

Every figure the prose quotes is computed below by the calls the pictures draw (render/documents/serving_figures.py),
rendered into the text: tests/test_serving_lessons.py computes them again and compares.
"""

import numpy as np

from llm_formulas.render.documents import serving_figures as SF
from llm_formulas.render.documents.notebooks import code, markdown
from llm_formulas.render.printers.human import human

MODEL, GPU, T, S_IN, S_OUT, USERS, TARGET = "llama3.1-70b", "h100-sxm", 8, 2000, 500, 1000, 0.05


def _figures() -> dict[str, str]:
    """The prose's figures, each printed as the lesson prints values."""
    curve = SF.decode_curve(MODEL, GPU, T, S_IN, S_OUT)
    at = {int(b): i for i, b in enumerate(curve["batch"])}
    one, many = at[1], at[64]
    fitting = np.flatnonzero(curve["fits"])
    widest = int(fitting[-1])
    wall = SF.kv_wall(MODEL, GPU, T, np.array([8192, 32768, 131072]))
    wall8 = SF.kv_wall(MODEL, GPU, T, np.array([8192, 32768, 131072]), "fp8", "fp8")
    phases = SF.phase_intensities(MODEL, GPU, T, S_IN, np.array([1.0]))  # the points the roofline picture draws
    intensity_prefill, intensity_decode = phases["prefill"], float(phases["decode"][0])
    experts = SF.experts_curve("deepseek-v3")
    eat = {int(b): i for i, b in enumerate(experts["batch"])}
    fp8 = SF.decode_curve(MODEL, GPU, T, S_IN, S_OUT, "fp8", "fp8")
    bf16_answer = SF.answer_users(MODEL, GPU, USERS, TARGET, S_IN, S_OUT)
    fp8_answer = SF.answer_users(MODEL, GPU, USERS, TARGET, S_IN, S_OUT, "fp8", "fp8")
    speedup = float(SF.speculative_curve(np.array([0.8]), 4, 0.05)[0])
    mtp = float(SF.speculative_curve(np.array([0.85]), 1, 1 / 61)[0])
    ms = lambda seconds: human(seconds, "second")  # noqa: E731
    values = dict(SF.model(MODEL))
    per_token = 2 * values["l"] * values["g"] * values["d_head"] * 2  # K and V, every layer, 16-bit
    weights = SF.exact_report(MODEL, GPU, T, 1, S_IN, 64)["memory"]["weights_bytes"] * T
    return {
        "kv_token": human(per_token, "byte"), "weights": human(weights, "byte"), "messages": f"{2 * values['l']}",
        "layers": f"{values['l']}", "kv_heads": f"{values['g']}", "head_dim": f"{values['d_head']}",
        "tpot_1": ms(curve["tpot"][one]), "weights_1": ms(curve["weights"][one]), "links_1": ms(curve["link"][one]),
        "tpot_64": ms(curve["tpot"][many]), "kv_64": ms(curve["kv"][many]), "widest": f"{int(curve['batch'][widest])}",
        "tpot_widest": ms(curve["tpot"][widest]), "ttft_1": ms(curve["ttft"][one]), "wall_mix": f"{int(curve['max_batch'][0])}",
        "mix": f"{S_IN + S_OUT:,}",
        "intensity_prefill": f"{intensity_prefill:,.0f}", "intensity_decode": f"{intensity_decode:.2g}",
        "ridge": f"{float(SF.gpu(GPU).flops('bf16') / SF.gpu(GPU).memory_bandwidth):.0f}",
        "wall_8k": f"{int(wall[0])}", "wall_32k": f"{int(wall[1])}", "wall_128k": f"{int(wall[2])}",
        "wall8_8k": f"{int(wall8[0])}", "wall8_128k": f"{int(wall8[2])}",
        "experts_1": f"{experts['touched'][eat[1]]:.0f}", "share_1": f"{100 * experts['share'][eat[1]]:.1f} %",
        "experts_64": f"{experts['touched'][eat[64]]:.0f}", "share_64": f"{100 * experts['share'][eat[64]]:.0f} %",
        "fp8_tpot_64": ms(fp8["tpot"][many]), "fp8_widest": f"{int(fp8['batch'][np.flatnonzero(fp8['fits'])[-1]])}",
        "speedup": f"{speedup:.2f}", "mtp": f"{mtp:.2f}",
        "gpus": f"{bf16_answer['gpus']}", "tp": f"{bf16_answer['t']}", "per_replica": f"{bf16_answer['batch']}",
        "replicas": f"{bf16_answer['replicas']}", "step": ms(bf16_answer["step"]),
        "dollars": f"${bf16_answer['dollars_per_million']:.2f}", "price": f"${bf16_answer['price']:.2f}",
        "gpus_fp8": f"{fp8_answer['gpus']}", "tp_fp8": f"{fp8_answer['t']}", "per_replica_fp8": f"{fp8_answer['batch']}",
        "replicas_fp8": f"{fp8_answer['replicas']}", "dollars_fp8": f"${fp8_answer['dollars_per_million']:.2f}",
    }


F = _figures()

CELLS = [
    markdown(f"""
# Serving: how many GPUs, at what cost per token?

> *"How many H100s does it take to serve Llama-3.1-70B to 1,000 concurrent users at 50 ms per token, and what
> does a million tokens cost?"*

Training asks how long; serving asks how many GPUs keep a latency target at a load. A request is served in two
phases. The **prefill** runs the whole prompt through the model at once and emits the first token: its time is the
time to first token (TTFT). Then every **decoding step** feeds each sequence's newest token: the time per output token
(TPOT) is one step. This lesson builds both from the catalogue's `serving.*` formulas, each proved by the engine and
measured against real transformers models on the CPU (FLOPs with PyTorch's counter, bytes with a dispatch mode that
adds what every kernel reads), and prices them on the roofline with constants fitted on NVIDIA's published
TensorRT-LLM tables. The request mix throughout: {S_IN} prompt tokens and {S_OUT} output tokens, a chat turn. About
50 minutes.
"""),
    markdown(f"""
## 1. Two phases on one roofline

A GPU reaches its peak FLOP/s only when each byte it reads from memory feeds enough FLOPs: above the ridge point,
{F['ridge']} FLOPs per byte on an H100, it is compute-bound; below, memory-bound. A prefill of {S_IN} tokens reads
the weights once and computes with them for every token: about {F['intensity_prefill']} FLOPs per byte, far above the
ridge. A decoding step at batch 1 reads every weight (and the cache) for one token per sequence: about
{F['intensity_decode']} FLOP per byte, far below. Same model, same GPU, opposite bottlenecks.
"""),
    code("""picture("serving_phases")"""),
    markdown("""
The cost of a step is the weights it reads, so what a step reads must be exact. The derivation builds it from the
decoder's parameter count: the embedding is read only at the rows looked up, a mixture-of-experts layer only at the
experts its tokens reach:
"""),
    code("""derive("serving.decode.params_read")"""),
    markdown(f"""
## 2. TPOT against the batch

The weights cost the same whatever the batch; every sequence adds its own cache, its context times {F['kv_token']}
per token for this model in 16 bits ({F['layers']} layers, {F['kv_heads']} KV heads of {F['head_dim']}). On {T} H100s
at batch 1 (after a prefill of {F['ttft_1']}, the time to first token) a token takes {F['tpot_1']}: the weights are
{F['weights_1']} of it and the tensor-parallel all-reduces
{F['links_1']}, {F['messages']} small messages whose latency, not bandwidth, sets their cost. At batch 64 the step is {F['tpot_64']}, of which the cache is already
{F['kv_64']}; the picture shows the cache's share growing up to the KV wall, {F['wall_mix']} sequences of {F['mix']}
tokens (at {F['widest']}, the widest batch drawn, a token takes {F['tpot_widest']}). A decoding step is never "just the weights" once the batch is worth serving.
"""),
    code("""picture("serving_tpot")"""),
    markdown("""
Every step of a request sees a longer context than the last, so the end-to-end latency sums s_out − 1 steps at
growing contexts. The sum has a closed form, proved equal to the step-by-step sum (SymPy evaluates it, below and past
a sliding window):
"""),
    code("""derive("serving.decode.context.sum")"""),
    markdown(f"""
## 3. The KV wall

Memory caps the batch before compute does. On {T} × 80 GB with 16-bit weights ({F['weights']} over {T} GPUs) the cache of
8,192-token sequences leaves room for {F['wall_8k']} of them; at 32,768 tokens {F['wall_32k']}; at the model's full
131,072-token window {F['wall_128k']}. The largest batch is solved in closed form from the memory per GPU:
"""),
    code("""
derive("serving.memory.max_batch")
picture("serving_kv_wall")"""),
    markdown(f"""
## 4. Mixture of experts: the experts a batch touches

A token of DeepSeek-V3 uses 8 of each layer's 256 routed experts. A decoding step of b tokens reads every expert one
of them is routed to: under uniform routing the expected number is E(1 − (1 − k/E)^b), derived from the probability
that one expert is missed. At batch 1 that is {F['experts_1']} experts, {F['share_1']} of the weights per step; at
batch 64 it is already {F['experts_64']} of 256, {F['share_64']} of the weights. MoE saves FLOPs at every batch, but
memory traffic only at small ones.
"""),
    code("""
derive("serving.decode.experts_touched")
picture("serving_experts")"""),
    markdown(f"""
## 5. What FP8 buys

FP8 weights halve the bytes a step reads and run the GEMMs on FP8 tensor cores; an FP8 cache halves the bytes per
cached token. At batch 64, TPOT falls from {F['tpot_64']} to {F['fp8_tpot_64']}, and the KV wall moves: at 8,192
tokens {F['wall8_8k']} sequences fit instead of {F['wall_8k']}, at the full window {F['wall8_128k']} instead of
{F['wall_128k']}, and the picture's batches fit up to {F['fp8_widest']} at this request mix. An A100 has no FP8 tensor cores: `llm-formulas serve` refuses `--weights fp8` there.
"""),
    code("""picture("serving_fp8")"""),
    markdown(f"""
## 6. Speculative decoding

A small draft model proposes γ tokens; the target checks them in one step and keeps the accepted prefix plus one
token of its own. With acceptance rate α a target step yields (1 − α^(γ+1))/(1 − α) tokens, and with a draft costing c
of a target step the speed-up is that over γc + 1 (Leviathan et al. 2023). At α = 0.8, γ = 4 and c = 0.05 it is
{F['speedup']}×; DeepSeek-V3's one multi-token-prediction module is the case γ = 1, at its reported acceptance of
85 % and a module costing one layer of 61: {F['mtp']}×.
"""),
    code("""
derive("serving.speculative.tokens")
picture("serving_speculative")"""),
    markdown(f"""
## 7. The answer

With continuous batching every step carries its b sequences and the prefills of the b/s_out requests that join it,
their FLOPs riding on the step's weight reads. Keeping 1,000 users at or below 50 ms per token with 16-bit weights and
cache takes **{F['gpus']} H100s**: {F['replicas']} replicas of TP {F['tp']}, {F['per_replica']} users each, a step of
{F['step']}; at {F['price']} per GPU-hour that is **{F['dollars']} per million output tokens**. With FP8 weights and
cache it takes {F['gpus_fp8']} H100s ({F['replicas_fp8']} replicas of TP {F['tp_fp8']}, {F['per_replica_fp8']} users
each): {F['dollars_fp8']} per million. The command line gives the same search for a request rate instead of a user
count: `llm-formulas serve --model ... --gpu h100-sxm --slo ttft=2s,tpot=50ms --rate R`.

How good are these numbers? The constants (compute and bandwidth fractions, a per-layer cost, an all-reduce's
latency) were fitted on one source, NVIDIA's TensorRT-LLM 0.8.0 tables, and `llm-formulas validate` predicts the
others without refitting: gpt-fast's batch-1 decoding, NVIDIA NIM's inter-token latencies and LMDeploy's decoding
steps within about 7 % at the median; older engines (FasterTransformer, LMDeploy's prefills) run slower than the fit.

## Exercises

Type your answer in place of `None` and run the cell; a wrong answer gets the step that differs.
"""),
    code("""exercise("serving.kv_wall")"""),
    code("""
answer = None  # sequences
check("serving.kv_wall", answer)"""),
    code("""exercise("serving.speculative")"""),
    code("""
answer = None  # times faster
check("serving.speculative", answer)"""),
]
