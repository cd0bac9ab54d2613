"""Every lesson's exercises: the question, and the solution as steps through catalogue formulas.

Ids are ``<lesson>.<name>``. The solutions live here, not in the notebooks; the tests check
each against a published or hand-computed figure (tests/test_notebooks.py), and each exercise's
usual slips, computed here the way the slip computes, against the slipped figure worked by hand
(tests/test_exercise_slips.py).
"""

from __future__ import annotations

import sympy as sp

from llm_formulas.formulas.reports import estimate

from llm_formulas.render.documents.exercise_kit import Slip, Step, gpu, model, register

LLAMA2_70B = model("llama2-70b")
LLAMA2_7B = model("llama2-7b")
A100 = gpu("a100-80gb")
H100 = gpu("h100-sxm")
GPT2_SMALL = {"l": 12, "h": 768, "V": 50257, "s": 1024}
DAY_SECONDS = 86400

# --- params ---------------------------------------------------------------------------------
register(
    "params.gpt2",
    "GPT-2 small has l = 12 layers, h = 768, a vocabulary of V = 50257 and a learned position table of "
    "s = 1024 rows; its head is tied to the token embedding. How many parameters does it hold, exactly?",
    Step("layer", "parameters of one layer", "params.layer", GPT2_SMALL),
    Step("total", "the whole model", "params.total", GPT2_SMALL),
    slips=(
        Slip("an untied head", "GPT-2 reuses the token embedding as its output head: its V·h weights are counted once.",
             plus=(Step("head", "", "params.decoder.head", {"V": 50257, "d_emb": 768, "tied": 0, "head_bias": 0}),)),
        Slip("the position table left out", "GPT-2 learns a position embedding of s rows of h: count it with the token table.",
             values={"s": 0}),
    ),
    exact=True,
)
register(
    "params.llama2_7b",
    "Llama-2-7B: h = 4096, 32 layers of 32 heads (no GQA), a SwiGLU MLP of width 11008, V = 32000, RMSNorm, "
    "no biases, an untied head. Count its parameters exactly.",
    Step("attention", "one layer's attention", "params.decoder.attention", LLAMA2_7B),
    Step("mlp", "one layer's gated MLP", "params.decoder.mlp", LLAMA2_7B),
    Step("layer", "one decoder layer", "params.decoder.layer", LLAMA2_7B),
    Step("total", "the whole model", "params.decoder.total", LLAMA2_7B),
    slips=(
        Slip("a tied head", "Llama-2 has its own output head, untied from the token embedding: count its V·h weights too.",
             values={"tied": 1}),
        Slip("an ungated MLP", "Llama's MLP is gated: three matrices of h × d_ff (gate, up, down), not two.", values={"gated": 0}),
    ),
    exact=True,
)

# --- flops ----------------------------------------------------------------------------------
register(
    "flops.gpt3",
    "GPT-3 175B (Ψ = 175 × 10⁹) was trained on D = 300 × 10⁹ tokens. With 6ΨD, how many FLOPs did the training "
    "take? Type a number of FLOP such as 1.2e22.",
    Step("per_token", "training FLOPs per token, 6Ψ", "flops.training.approx", {"P": 175 * 10**9, "D": 1}, "FLOP"),
    Step("total", "6ΨD", "flops.training.approx", {"P": 175 * 10**9, "D": 300 * 10**9}, "FLOP"),
    slips=(
        Slip("2ΨD: the forward pass only", "training runs the backward pass too, twice the forward's GEMMs: 2 + 4 = 6 per parameter per token.",
             times=sp.Rational(1, 3)),
        Slip("8ΨD: recompute counted", "6ΨD is the work of the model; full recompute adds a forward pass (8ΨD) only when it is on, which the question does not say.",
             times=sp.Rational(4, 3)),
    ),
)
register(
    "flops.llama2_7b_forward",
    "One forward pass of Llama-2-7B over a single sequence of s = 4096 tokens (b = 1): how many TFLOP, counting "
    "every GEMM (Q, K, V, O projections, QKᵀ, scores·V, the gated MLP and the logits)?",
    Step("projections", "Q, K, V, O projections of one layer", "flops.decoder.attention.projections", LLAMA2_7B | {"b": 1, "s": 4096}, "TFLOP"),
    Step("scores", "QKᵀ and scores·V of one layer", "flops.decoder.attention.scores", LLAMA2_7B | {"b": 1, "s": 4096}, "TFLOP"),
    Step("mlp", "the MLP of one layer", "flops.decoder.mlp", LLAMA2_7B | {"b": 1, "s": 4096}, "TFLOP"),
    Step("total", "the whole forward pass", "flops.decoder.forward", LLAMA2_7B | {"b": 1, "s": 4096}, "TFLOP"),
    slips=(
        Slip("6Ψ per token: a training step", "a forward pass is 2 FLOPs per weight per token; 6 counts the backward pass as well.",
             formula_id="flops.training.approx", values={"D": 4096}),
        Slip("2Ψ per token: the attention scores left out", "2Ψ counts the weight GEMMs; QKᵀ and scores·V add 4·a·s²·d_head per layer at s = 4096.",
             formula_id="flops.inference.per_token", times=4096),
    ),
)

# --- memory ---------------------------------------------------------------------------------
S8 = {"P": 70 * 10**9, "b": 8, "s": 4096, "h": 8192, "l": 80, "t": 1}
register(
    "memory.training_70b",
    "Li Bojie's estimate: Llama-2-70B (Ψ = 70 × 10⁹) trained with mixed-precision Adam, micro-batch b = 8 of "
    "s = 4096 tokens, h = 8192, l = 80, selective recompute, no tensor parallelism, the activations counted with "
    "Korthikanti's GPT layer (34·s·b·h bytes a layer under selective recompute), as the article does. How many GB must "
    "the cluster hold (model states and activations)?",
    Step("states", "model states, 16 bytes per parameter", "memory.model_states", S8, "GB"),
    Step("activations", "the activations of the 80 layers", "memory.activations.selective_001", S8, "GB"),
    Step("total", "both together", "memory.training.selective", S8, "GB"),
    slips=(
        Slip("the optimizer states forgotten", "mixed-precision Adam keeps an fp32 master copy, momentum and variance: 12 more bytes per parameter.",
             plus=(Step("adam", "", "memory.optimizer.adam", S8, times=-1),)),
        Slip("the optimizer states forgotten", "16-bit weights and gradients are 4 of the 16 bytes per parameter; Adam's fp32 copies "
             "are the other 12.", plus=(Step("adam", "", "memory.optimizer.adam", S8, times=-1),), step="states"),
        Slip("GiB where GB were asked", "the question asks for GB, 10⁹ bytes; you divided by 2³⁰.", read_as="GiB"),
        Slip("Llama's own block where the question counts GPT's", "the memory lesson's form for Llama's block (GQA, a gated "
             "MLP) is the real one; this question, as the article, counts Korthikanti's GPT layer: 34·s·b·h.",
             plus=(Step("gpt", "", "memory.activations.selective_001", S8, times=-1),
                   Step("llama", "", "memory.activations.layer.general.selective",
                        LLAMA2_70B | {"b": 8, "s": 4096, "t": 1, "gated": 1}, times=80))),
    ),
)
KV = LLAMA2_70B | {"b": 8, "s": 4096, "q": 2}
register(
    "memory.kv_gqa",
    "The real Llama-2-70B has g = 8 key/value heads of d_head = 128 in each of its 80 layers. How many GiB does "
    "the 16-bit KV cache of a batch of 8 sequences of 4096 tokens hold?",
    Step("per_token", "K and V of one token in every layer", "memory.kv_cache.per_token", KV, "KiB"),
    Step("total", "the whole batch", "memory.kv_cache", KV, "GiB"),
    slips=(
        Slip("GQA forgotten", "Llama-2-70B keeps K and V for its g = 8 key/value heads, which the 64 query heads share; you kept them for all 64.",
             values={"g": LLAMA2_70B["a"]}),
        Slip("GB where GiB were asked", "the question asks for GiB, 2³⁰ bytes; you divided by 10⁹.", read_as="GB"),
        Slip("K without V", "the cache keeps both the keys and the values: two tensors per layer.", times=sp.Rational(1, 2)),
        Slip("one sequence, not the batch", "the batch holds 8 sequences of 4096 tokens, each with its own cache.", values={"b": 1}),
    ),
)

# --- comms ----------------------------------------------------------------------------------
register(
    "comms.allreduce",
    "Eight GPUs all-reduce a 1 GB gradient buffer with a ring. How many GB does each GPU send?",
    Step("redundancy", "bytes sent per byte of buffer", "comms.redundancy.allreduce", {"n": 8}),
    Step("sent", "bytes each GPU sends", "comms.collective.allreduce", {"n": 8, "x_msg": 10**9}, "GB"),
    slips=(
        Slip("one pass only", "a ring all-reduce is a reduce-scatter then an all-gather: (n − 1)/n of the buffer, twice.",
             times=sp.Rational(1, 2)),
        Slip("2× the buffer", "each GPU keeps its own 1/n of the buffer in both passes: 2(n − 1)/n, not 2.",
             times=sp.Rational(8, 7)),
    ),
)
RTX4090_001 = {"h": 8192, "q": 2, "X": 330 * 10**12, "W_link": 64 * 10**9}
register(
    "comms.max_tp_4090",
    "RTX 4090s (330 TFLOPS) on PCIe Gen4 (64 GB/s counting both directions) train a model of h = 8192 in "
    "16-bit. Up to which tensor-parallel degree t does the link keep up with the attention projections?",
    Step("t_max", "3·W_link·h/(X·q)", "comms.tp.max_degree", RTX4090_001),
    slips=(
        Slip("twice too much: q forgotten or 64 GB/s taken as one way", "64 GB/s is PCIe Gen4 both ways (the formula's W_link "
             "counts both), and each 16-bit value is q = 2 bytes.", values={"q": 1}),
        Slip("one link direction only", "the essay's 64 GB/s counts both directions of PCIe Gen4; the formula takes it as given.",
             times=sp.Rational(1, 2)),
    ),
)

# --- cluster --------------------------------------------------------------------------------
register(
    "cluster.amdahl",
    "Data parallelism over n = 512 replicas, where 0.05 % of the work (the gradient all-reduce not hidden under "
    "compute) is serial. What speed-up does Amdahl's law allow?",
    Step("speed_up", "1/(f + (1 − f)/n)", "cluster.amdahl", {"f": "1/2000", "n": 512}),
    slips=(
        Slip("the serial part ignored", "with any serial fraction the speed-up stays below n: 1/(f + (1 − f)/n).",
             values={"f": 0}),
        Slip("0.05 read as a fraction, not a percentage", "0.05 % is f = 0.0005.", values={"f": "1/20"}),
    ),
)
LLAMA_RUN = {"P": 70 * 10**9, "D": 2 * 10**12, "n": 64, "X": A100["X"], "U": "2/5"}
register(
    "cluster.llama2_70b_days",
    "Will Llama-2-70B (Ψ = 70 × 10⁹) train on 2T tokens on 64 A100s (312 TFLOPS) at a utilization of 40 %, "
    "without recompute, in a reasonable time? How many days?",
    Step("flops", "training FLOPs, 6ΨD", "flops.training.approx", LLAMA_RUN, "FLOP"),
    Step("days", "days on 64 GPUs", "cluster.training_time", LLAMA_RUN, "days"),
    slips=(
        Slip("the utilization forgotten", "the GPUs deliver U·X, 40 % of their peak, not X.", values={"U": 1}),
        Slip("8ΨD: recompute counted", "the question trains without recompute: 6ΨD.", times=sp.Rational(4, 3)),
        Slip("hours where days were asked", "the question asks for days.", read_as="hours"),
        Slip("the real parameter count where the question gives 70 × 10⁹", "the cluster lesson uses Llama-2-70B's "
             "real 68,976,648,192 parameters; this question states Ψ = 70 × 10⁹.", values={"P": LLAMA2_70B["P"]}),
    ),
)

# --- inference ------------------------------------------------------------------------------
S14 = {"q_w": 2, "P": 70 * 10**9, "n": 8, "W_mem": 10**12}
register(
    "inference.stage_latency",
    "Llama-2-70B (Ψ = 70 × 10⁹, 16-bit weights) split over 8 RTX 4090s (memory bandwidth 1 TB/s each), batch 1. "
    "How many milliseconds does each GPU need per generated token?",
    Step("bytes", "16-bit weights one GPU holds and reads per token", "memory.model_states.inference", S14, "GB", times="1/8"),
    Step("latency", "the time to read them", "inference.latency.memory_bound", S14, "ms"),
    slips=(
        Slip("the stages summed", "each GPU reads only its own eighth of the weights; the per-GPU time is one stage's, not the pipeline's.",
             times=8),
        Slip("1-byte weights", "16-bit weights are 2 bytes each.", times=sp.Rational(1, 2)),
    ),
)
register(
    "inference.balance_h100",
    "An H100 SXM does 989 TFLOPS and reads 3.35 TB/s of HBM. Up to which decoding batch is a step memory-bound "
    "(16-bit weights)?",
    Step("balance", "the balance batch X·q/(2·W_mem)", "inference.balance_batch", {"q_w": 2, "X": 989 * 10**12, "W_mem": 3350 * 10**9}),
    slips=(
        Slip("the 2 bytes per weight forgotten", "each weight read is q = 2 bytes: the reads per step are 2Ψ bytes.", values={"q_w": 1}),
        Slip("one FLOP per weight per token", "a multiply-add is 2 FLOPs: decoding does 2Ψ FLOPs per token.", times=2),
    ),
)

# --- serving ---------------------------------------------------------------------------------
LLAMA31_70B = {"P": 70_553_706_496, "V": 128256, "d_emb": 8192, "tied": 0, "q_w": 2, "t": 8, "p": 1}  # meta-llama config.json
KV_WALL = {"M_gpu": 80 * 10**9, "M_ws": 0, "p": 1, "t": 8, "a": 64, "g": 8, "mla": 0, "kv_expand": 0, "d_head": 128, "l": 80,
           "l_win": 0, "W": 1, "s_ctx": 8192, "q_kv": 2,
           "l_mamba": 0, "l_ssd": 0, "l_lru": 0, "l_gdn": 0, "l_noattn": 0}  # every layer attention: no recurrent state
register(
    "serving.kv_wall",
    "Llama-3.1-70B (Ψ = 70,553,706,496 parameters, 16-bit, untied 128256 × 8192 embedding and head) on 8 H100s of 80 GB "
    "(TP 8); its 16-bit cache holds K and V of 8 KV heads of 128 in each of 80 layers. Leaving out any workspace, how "
    "many sequences of 8192 tokens fit beside the weights?",
    Step("weights", "weight bytes per GPU", "serving.memory.weights", LLAMA31_70B, "GB"),
    Step("batch", "the largest batch: the memory left over the cache of one sequence on one GPU",
         "serving.memory.max_batch", KV_WALL | {"M_w": estimate.exact("serving.memory.weights", **LLAMA31_70B)}),
    slips=(
        Slip("the weights left out", "the 8 GPUs hold the weights too: only what is left beside them holds the cache.",
             values={"M_w": 0}),
        Slip("one GPU's share of the cache against all 8 GPUs' memory", "each GPU holds 1/8 of every sequence's cache "
             "in its own memory: divide one GPU's room by one GPU's share.", times=8),
        Slip("GQA forgotten", "the cache holds K and V of the 8 key/value heads, not of all 64 query heads.",
             values={"g": 64}),
    ),
    whole=True,
)
register(
    "serving.speculative",
    "A draft model proposes γ = 4 tokens, each accepted with probability α = 0.8, and one draft step costs c = 0.05 of "
    "a target step. How many times faster than plain decoding does speculative decoding run?",
    Step("tokens", "expected tokens per target step", "serving.speculative.tokens", {"alpha_acc": "4/5", "gamma_spec": 4}),
    Step("speedup", "over the cost of a step, γc + 1", "serving.speculative.speedup",
         {"alpha_acc": "4/5", "gamma_spec": 4, "c_draft": "1/20"}),
    slips=(
        Slip("the draft's cost forgotten", "each target step also runs γ draft steps of cost c: divide by γc + 1.",
             formula_id="serving.speculative.tokens"),
    ),
)

# --- article 000 ----------------------------------------------------------------------------
S2 = {"P": 10**12, "D": 450 * 10**9, "n": 3072, "X": 312 * 10**12, "U": "1/2"}
register(
    "article_000.training_days",
    "000 §3.5: a 1T-parameter model on 450B tokens, 3072 A100s (312 TFLOPS) at U = 0.5, with full activation "
    "recompute (8ΨD). How many days?",
    Step("flops", "training FLOPs with recompute, 8ΨD", "flops.training.recompute.approx", S2, "FLOP"),
    Step("days", "days on 3072 GPUs", "cluster.training_time.recompute", S2, "days"),
    slips=(
        Slip("the recompute forgotten", "with full recompute the forward pass runs twice: 8ΨD, not 6ΨD.", times=sp.Rational(3, 4)),
        Slip("the utilization forgotten", "the GPUs deliver U·X = half their peak.", values={"U": 1}),
    ),
)
register(
    "article_000.zero3",
    "ZeRO stage 3 over d = 64 data-parallel GPUs (t = p = 1) for GPT-3 175B (Ψ = 175 × 10⁹): how many GB of "
    "model states does each GPU hold?",
    Step("states", "16Ψ of the whole model", "memory.model_states", {"P": 175 * 10**9}, "GB"),
    Step("per_gpu", "its share on one GPU", "memory.zero.stage3", {"P": 175 * 10**9, "t": 1, "p": 1, "d": 64}, "GB"),
    slips=(
        Slip("stage 1: only the optimizer states partitioned", "stage 3 partitions the 16-bit weights and gradients too.",
             formula_id="memory.zero.stage1"),
        Slip("stage 2: the weights kept whole", "stage 3 partitions the 16-bit weights as well.",
             formula_id="memory.zero.stage2"),
    ),
)

# --- article 001 ----------------------------------------------------------------------------
S12 = {"l": 80, "g": 64, "d_head": 128, "s": 4096, "b": 8, "q": 2}
register(
    "article_001.kv_cache",
    "001's KV cache: LLaMA-2 70B taken without GQA (64 KV heads of 128), 80 layers, batch 8, 4096 tokens, 16-bit. "
    "How many GiB?",
    Step("per_token", "K and V of one token in every layer", "memory.kv_cache.per_token", S12, "MiB"),
    Step("total", "the whole batch", "memory.kv_cache", S12, "GiB"),
    slips=(
        Slip("GB where GiB were asked", "the essay's '80 GB' are GiB: the question asks for 2³⁰ bytes.", read_as="GB"),
        Slip("one sequence, not the batch", "the batch holds 8 sequences, each with its own cache.", times=sp.Rational(1, 8)),
        Slip("K without V", "the cache keeps both the keys and the values.", times=sp.Rational(1, 2)),
    ),
)
register(
    "article_001.max_tp_h100",
    "001: H100s on NVLink (989 TFLOPS, 900 GB/s counting both directions), h = 8192, 16-bit. The largest useful "
    "tensor-parallel degree?",
    Step("t_max", "3·W_link·h/(X·q)", "comms.tp.max_degree", {"h": 8192, "q": 2, "X": 989 * 10**12, "W_link": 900 * 10**9}),
    slips=(
        Slip("both link directions as one way", "the essay's slip: 900 GB/s is NVLink both ways; one way carries half (the essay's t ≤ 22).",
             times=2),
    ),
)

# --- article 002 ----------------------------------------------------------------------------
register(
    "article_002.utilization",
    "Meta reports 1,720,320 A100 GPU-hours for Llama-2-70B (Ψ = 70 × 10⁹, 2T tokens). What utilization of the "
    "312 TFLOPS peak does that imply? Answer as a fraction (0.5 for 50 %).",
    Step("U", "6ΨD over what the GPU-hours could do at peak", "cluster.mfu.gpu_hours",
         {"P": 70 * 10**9, "D": 2 * 10**12, "X": 312 * 10**12, "H_gpu": 1720320}),
    slips=(
        Slip("8ΨD: recompute counted", "MFU counts the model's 6ΨD, whatever the run recomputed.", times=sp.Rational(4, 3)),
        Slip("2ΨD: the forward pass only", "training is 6 FLOPs per parameter per token.", times=sp.Rational(1, 3)),
        Slip("a percentage where a fraction was asked", "type 0.5 for 50 %.", times=100),
    ),
)
S17 = {"P": 34 * 10**9, "D": 5 * 10**9, "X": 312 * 10**12, "U": "7/20"}
register(
    "article_002.gpu_hours",
    "002's fine-tuning budget: a 34B model on 5B tokens, A100s at U = 0.35. How many GPU-hours, done right?",
    Step("flops", "6ΨD", "flops.training.approx", S17, "FLOP"),
    Step("gpu_hours", "GPU-hours at X·U per GPU", "cluster.gpu_hours", S17),
    slips=(
        Slip("the utilization forgotten", "an A100 delivers U·X, 35 % of its 312 TFLOP/s.", values={"U": 1}),
        Slip("8ΨD: recompute counted", "the question prices 6ΨD.", times=sp.Rational(4, 3)),
    ),
)

# --- article 004 ----------------------------------------------------------------------------
register(
    "article_004.states",
    "BLOOM-176B has 176,247,271,424 parameters; the slides count 20 bytes per parameter of training state. How "
    "many GB in all?",
    Step("states", "20 bytes per parameter", "memory.model_states.grad_buffers", {"P": 176247271424}, "GB"),
    slips=(
        Slip("16 bytes per parameter", "the slides add a 4-byte fp32 gradient buffer to the usual 16: 20 bytes.",
             formula_id="memory.model_states"),
        Slip("GiB where GB were asked", "the question asks for GB, 10⁹ bytes.", read_as="GiB"),
    ),
)
BLOOM = {"b": 16, "s": 2048, "h": 14336}
register(
    "article_004.iteration_flops",
    "The slides' FLOPs of one BLOOM-176B iteration: B = 16 sequences of 2048 tokens, 70 blocks of h = 14336, "
    "forward and backward (3 forward passes' worth), blocks only. How many PFLOP?",
    Step("layer", "forward FLOPs of one block", "flops.layer.forward", BLOOM, "TFLOP"),
    Step("iteration", "3 × 70 blocks", "flops.layer.forward", BLOOM, "PFLOP", times=3 * 70),
    slips=(
        Slip("the backward pass forgotten", "training runs forward and backward: three forward passes' worth.", times=sp.Rational(1, 3)),
        Slip("the logits counted", "the slides count the blocks only; the question does too.",
             plus=(Step("logits", "", "flops.logits", BLOOM | {"V": 250880}, times=3),)),
    ),
)

# --- perf -----------------------------------------------------------------------------------
register(
    "perf.bubble",
    "Megatron's 1T run: p = 64 pipeline stages, and m = 3072/6 = 512 micro-batches per iteration on each of the "
    "d = 6 replicas. What fraction of the compute time does the 1F1B bubble add?",
    Step("bubble", "(p − 1)/m", "cluster.bubble", {"p": 64, "m": 512}),
    slips=(
        Slip("p/m instead of (p − 1)/m", "the pipeline fills in p − 1 slots and drains in p − 1: the bubble is (p − 1)/m.",
             values={"p": 65}),
        Slip("a percentage where a fraction was asked", "type 0.25 for 25 %.", times=100),
        Slip("m = 3072 micro-batches", "each of the d = 6 replicas runs its own 3072/6 micro-batches.", values={"m": 3072}),
    ),
)

# --- issue 14: utilization, conventions, energy, cost, reliability, pipeline, optimizations -----
register(
    "utilization.megatron_peak",
    "Megatron-LM's 39.1B model ran at 138 teraFLOP/s per A100 (peak 312 dense bf16). What share of the peak is "
    "that? Type a fraction such as 0.5.",
    Step("share", "the measured rate over the peak", "utilization.of_peak", {"X_run": 138 * 10**12, "X": 312 * 10**12}),
    slips=(
        Slip("a percentage where a fraction was asked", "type 0.5 for 50 %.", times=100),
        Slip("the sparse peak", "312 TFLOP/s is the A100's dense bf16 peak; 624 counts 2:4 sparsity, which training does not use.",
             values={"X": 624 * 10**12}),
    ),
)
register(
    "conventions.megatron_eq4",
    "With Megatron's Eq. 4, 8TP/(nX), how many days does GPT-3 (P = 175 × 10⁹) take on T = 300 × 10⁹ tokens with "
    "n = 1024 GPUs at X = 140 teraFLOP/s each? Type days.",
    Step("days", "8TP/(nX) in days", "conventions.megatron.eq4",
         {"D": 300 * 10**9, "P": 175 * 10**9, "n": 1024, "X_run": 140 * 10**12}, "days"),
    slips=(
        Slip("6TP: the recompute left out", "Megatron's Eq. 4 counts the recomputed forward pass: 8TP/(nX), not 6.", times=sp.Rational(3, 4)),
        Slip("hours where days were asked", "the question asks for days.", read_as="hours"),
    ),
)
register(
    "energy.llama2_70b",
    "Llama-2-70B took 1,720,320 A100 GPU-hours at 400 W. With a PUE of 1.1 and 385 g CO2eq per kWh, how many "
    "tonnes of CO2eq? Type tonnes (1 t = 10⁶ g).",
    Step("grams", "GPU-hours × power × PUE × intensity", "energy.emissions",
         {"H_gpu": 1720320, "W_gpu": 400, "PUE": sp.Rational(11, 10), "I_co2": 385}, "", sp.Rational(1, 10**6)),
    slips=(
        Slip("the PUE forgotten", "the data centre draws PUE = 1.1 times what the GPUs draw.", values={"PUE": 1}),
        Slip("kilograms where tonnes were asked", "1 t is 1000 kg, 10⁶ g.", times=1000),
    ),
)
register(
    "cost.deepseek_pretraining",
    "DeepSeek-V3's pre-training took 2,664K H800 GPU-hours. At $2 per GPU-hour, what did it cost? Type dollars.",
    Step("dollars", "GPU-hours × price", "cost.training", {"H_gpu": 2664000, "c_rent": 2}),
    slips=(
        Slip("2,664K read as 2,664", "K is a thousand: 2,664K GPU-hours are 2.664 million.", values={"H_gpu": 2664}),
        Slip("the price forgotten", "GPU-hours are not dollars: multiply by the $2 each costs.", values={"c_rent": 1}),
        Slip("millions typed as dollars", "type dollars, e.g. 5.3e6 or \"$5.3M\".", times=sp.Rational(1, 10**6)),
    ),
)
register(
    "reliability.mtbf_2048",
    "2048 GPUs each fail once per 30 days, independently. How many minutes pass between two failures of the "
    "cluster, on average? Type minutes.",
    Step("minutes", "M/n", "reliability.cluster_mtbf", {"M_fail": 30 * 86400, "n": 2048}, "minutes"),
    slips=(
        Slip("hours where minutes were asked", "the question asks for minutes.", read_as="hours"),
        Slip("seconds where minutes were asked", "the question asks for minutes.", read_as="s"),
    ),
)
register(
    "pipeline.bloom_last_stage",
    "BLOOM-176B's last pipeline stage holds 5 blocks and the output head (V = 250880, h = 14336, s = 2048). How "
    "many layer-forwards of work is the head? Type a number.",
    Step("logits", "V/(12h + 2s)", "pipeline.logits_layers", {"V": 250880, "h": 14336, "s": 2048}),
    slips=(
        Slip("the attention's 2s left out", "a layer-forward is 24bsh² + 4bs²h FLOPs: per token, 12h + 2s in units of 2h.", values={"s": 0}),
    ),
)
register(
    "optimizations.onebit_warmup",
    "1-bit Adam sends 32-bit values as 1 bit after a warm-up of 15 % of the steps at full size. How many times "
    "less does it communicate overall? Type a number.",
    Step("reduction", "1/(f + (1 − f)/32)", "optimizations.onebit_adam.reduction", {"f_w": sp.Rational(15, 100), "k_cmp": 32}),
    slips=(
        Slip("the warm-up ignored", "the first 15 % of the steps send full 32-bit values: 1/(f + (1 − f)/32).", values={"f_w": 0}),
    ),
)

# --- issue 26: mixture of experts, precision, long context, achievable FLOP/s ---------------------
MIXTRAL = model("mixtral-8x7b")
register(
    "moe.flops_per_token",
    "Mixtral 8x7B routes each token to k = 2 of its E = 8 experts in each of its 32 layers. With 6Ψ per token, Ψ the "
    "parameters a token passes through, how many training FLOPs does one token cost? Type FLOP, such as 1.2e11.",
    Step("active", "the active parameters", "params.decoder.active", MIXTRAL),
    Step("flops", "6Ψ of the active parameters", "flops.training.approx", {"P": 12879925248, "D": 1}, "FLOP"),
    slips=(
        Slip("every expert counted", "a token passes through only its k experts; the others see other tokens. Use the active "
             "count, not the total.", values={"P": MIXTRAL["P"]}),
        Slip("the forward pass only", "training is forward and backward: 6 FLOPs per active parameter, not 2.", times=sp.Rational(1, 3)),
    ),
)
LLAMA70_QUANT = 68451041280  # Llama-2-70B's projection matrices, the weights NF4 quantizes (params.quantized.linear)
NF4 = {"B_q": 64, "B_q2": 256}
BASE = {"P": LLAMA2_70B["P"], "P_keep": LLAMA2_70B["P"] - LLAMA70_QUANT,
        "q_base": sp.Rational(1, 2) + sp.Rational(1, 64) + sp.Rational(4, 64 * 256)}
register(
    "precision.qlora_base",
    "QLoRA stores Llama-2-70B's projection matrices in 4-bit NormalFloat with double quantization (blocks of B_q = 64 "
    "weights, B_q2 = 256 constants) and its embeddings, norms and head in bf16. How many GB does the frozen base take?",
    Step("bytes_per_weight", "bytes per NF4 weight, constants included", "memory.qlora.bytes_per_weight", NF4),
    Step("base", "the frozen base", "memory.lora.frozen_base", BASE, "GB"),
    slips=(
        Slip("the quantization constants forgotten", "each block of 64 weights has an 8-bit scale, and each 256 of those an "
             "fp32 one: 1/64 + 4/(64·256) of a byte per weight on top of the half byte.", values={"q_base": sp.Rational(1, 2)}),
        Slip("everything in 4 bits", "only the projection matrices are quantized; embeddings, norms and the head stay in 16 bits.",
             formula_id="memory.model_states.inference.int4"),
        Slip("GiB where GB were asked", "the question asks for GB, 10⁹ bytes.", read_as="GiB"),
    ),
)
LONG = LLAMA2_70B | {"t": 8, "c": 8, "b": 1, "s": 131072}
register(
    "long_context.cp_activations",
    "Llama-2-70B with flash attention, tensor and sequence parallelism t = 8, context parallelism c = 8, one sequence of "
    "131072 tokens, selective recompute. How many GB of activations does a GPU of the first pipeline stage hold for the "
    "80 layers (1F1B: l layers' worth)?",
    Step("per_layer", "one layer's activations per GPU", "memory.activations.layer.cp_sp", LONG, "GB"),
    Step("first_stage", "80 layers' worth", "memory.activations.layer.cp_sp", LONG, "GB", times=80),
    slips=(
        Slip("c forgotten", "context parallelism gives each GPU s/c of the sequence's tokens: divide by c = 8.", values={"c": 1}),
        Slip("no sequence parallelism", "with sequence parallelism the norms' and dropouts' 10·h values per token are split "
             "over the t GPUs too.", formula_id="memory.activations.layer.cp"),
        Slip("GiB where GB were asked", "the question asks for GB, 10⁹ bytes.", read_as="GiB"),
    ),
)
GEMM_UP = {"M_rows": 4096, "K_inner": 8192, "N_cols": 7168, "q": 2} | A100 | {
    "eta_gemm": sp.Rational(401, 500), "eta_mem": sp.Rational(843, 1000), "tau_k": sp.Rational(273, 5000000)}
register(
    "achievable.gemm_time",
    "On an A100 (312 TFLOPS dense bf16, 2.039 TB/s of HBM), at the constants fitted on Megatron-LM 2021 (η_gemm = 0.802, "
    "η_mem = 0.843, τ_k = 54.6 µs), how many microseconds does the [4096, 8192] × [8192, 7168] GEMM of Llama-2-70B's "
    "gate and up projections (t = 8) take?",
    Step("flops", "2·M·K·N", "flops.gemm", GEMM_UP, "GFLOP"),
    Step("time", "its FLOPs at η_gemm, its bytes at η_mem, one kernel's cost", "perf.gemm.time", GEMM_UP, "µs"),
    slips=(
        Slip("at the datasheet peak", "no GEMM reaches 100 % of the peak: the FLOPs run at η_gemm of it, and the operands' "
             "bytes and the kernel's fixed cost add time.", values={"eta_gemm": 1, "tau_k": 0, "W_mem": 10**30}),
        Slip("the sparse peak", "624 TFLOPS counts 2:4 sparsity, which this GEMM does not use: the dense peak is 312.",
             values={"X": 624 * 10**12}),
        Slip("the kernel's fixed cost forgotten", "each kernel launch costs τ_k = 54.6 µs on top of its FLOPs and bytes.",
             values={"tau_k": 0}),
        Slip("the compute term alone", "the operands' bytes at η_mem of the HBM and the kernel's fixed cost τ_k add to the "
             "FLOPs' time.", values={"tau_k": 0, "W_mem": 10**30}),
        Slip("the memory term forgotten", "the GEMM also reads its operands and writes its result: their bytes at η_mem of "
             "the HBM bandwidth add time.", values={"W_mem": 10**30}),
    ),
)
