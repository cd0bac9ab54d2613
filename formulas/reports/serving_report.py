"""The serving report for one model, GPU and layout: what ``llm-formulas serve`` prints and ``estimate`` summarises.

Glue over formulas/topics/serving.py, nothing of its own but the choices below (each stated in the report):

- a replica is t·p GPUs (t-way tensor parallel stages, p of them in series, p batches in flight), d replicas serve in
  parallel; experts spread whole over e of a stage's t GPUs (e divides t) exchange tokens by all-to-all, 2·l_moe
  dispatches and combines per forward pass (``serving.time.alltoall``);
- a static batch: b prompts of s_in tokens prefilled together, then s_out − 1 decoding steps (``serving.time.e2e``);
  TTFT is the prefill, TPOT the mean step after it, the decoding step's bounds are read at the mean context
  s_in + s_out/2;
- weights at q_Ψ bytes (bf16/fp16 2, fp8 1, int8 1, int4 1/2 with a 4-byte scale and zero point per group of 128,
  ``serving.weights.int4``), the embedding and head kept 16-bit; FP8 weights run FP8 GEMMs (W8A8, as TensorRT-LLM's
  FP8), int8 and int4 are weight-only: their GEMMs run at the 16-bit peak; the cache at q_KV bytes;
- a decoding step reads the E_hit experts b tokens reach under uniform routing (``serving.decode.experts_touched``;
  all E where the implementation runs every expert), a prefill those b·s_in tokens reach;
- FLOPs: the step's GEMMs and an engine's attention (MLA absorbed), the prefill's causal count (fused kernels);
- DeepSeek sparse attention (σ_DSA = 1): the attention reads and computes over the min(s_ctx, k_top) positions its
  indexer selects, the indexer scores and reads the keys of all s_ctx (``serving.time.decode_step.sparse``,
  ``serving.time.e2e.sparse``, ``serving.prefill.flops.sparse``); the cache holds every position as before;
- memory per GPU: the weights, the cache of b sequences at s_in + s_out tokens in blocks of 16 (PagedAttention), and a
  workspace for a forward of up to 8192 tokens; the largest batch (the KV wall, ``kv_wall``) solves the same sum with
  the workspace at its own batch, so it fits and one more does not; the longest context solves the unpaged form;
- links: a TP group inside a node (t ≤ its NVLink domain) all-reduces at half the preset's NVLink figure (one way),
  beyond it at ``network`` bytes/s per GPU; a stage hop inside a node at NVLink speed, across nodes at the network's;
- constants: formulas/data/serving_calibration.py, fitted on TensorRT-LLM 0.8.0's tables, at 16-bit or 8-bit compute;
- $ per output token at the price per GPU-hour (the preset's, or given), energy per token at the preset's board power.
"""

from __future__ import annotations

from dataclasses import dataclass

import math

import sympy as sp

from llm_formulas.formulas.reports.estimate import EXACT_OPS, Evaluator, Ops, exact
from llm_formulas.formulas.data.gpus import GPU
from llm_formulas.formulas.data.serving_calibration import ServingConstants, constants

WEIGHT_DTYPES: tuple[str, ...] = ("bf16", "fp16", "fp8", "int8", "int4")
KV_DTYPES: tuple[str, ...] = ("bf16", "fp16", "fp8", "int8")
KV_BYTES = {"bf16": 2, "fp16": 2, "fp8": 1, "int8": 1}
INT4_GROUP = 128  # GPTQ's and AWQ's default group size
INT4_SCALE_BYTES = 4  # a 16-bit scale and a 16-bit zero point per group
BLOCK = 16  # tokens per KV block (vLLM's default)
WORKSPACE_TOKENS = 8192  # the most tokens one forward pass runs at once (a chunked prefill's budget)
EXACT_POWER_TOKENS = 4096  # up to here (1 − k/E)^n is an exact Rational of a few kilobytes; beyond, float64
Q_ACTIVATION = 2  # bytes per activation value (16-bit)


def weight_bytes(dtype: str, group: int = INT4_GROUP, scale: int = INT4_SCALE_BYTES) -> sp.Rational:
    """Bytes per weight of the matrices at ``dtype`` (int4: serving.weights.int4 with its group scales)."""
    if dtype == "int4":
        return exact("serving.weights.int4", B_q=group, q_s=scale)
    return sp.Integer({"bf16": 2, "fp16": 2, "fp8": 1, "int8": 1}[dtype])


def experts_reached(E: int, k: int, tokens: int) -> sp.Expr:
    """serving.decode.experts_touched, E(1 − (1 − k/E)^n) for n tokens, at float64 precision in closed form:
    −E·expm1(n·log1p(−k/E)), since the exact Rational power has n·log₂E bits (a prefill's n = b·s_in reaches millions).
    The catalogue's formula stays exact; this is its numeric evaluation (relative error about 1e-15)."""
    if k >= E:  # every token reaches all E (a dense model's one "expert": exact, so its report stays exact)
        return sp.Integer(E)
    return sp.Float(-E * math.expm1(int(tokens) * math.log1p(-k / E)))


def compute_precision(weights: str) -> str:
    """The tensor-core precision a weight dtype's GEMMs run at: FP8 weights run FP8 GEMMs, int8 and int4 are
    weight-only (dequantized to 16 bits), bf16 and fp16 their own."""
    return {"fp8": "fp8", "fp16": "fp16"}.get(weights, "bf16")


NO_FP8 = "the {gpu} has no FP8 tensor cores: FP8 {role} need Ada, Hopper, Blackwell or CDNA 3 (use --{option} int8 or bf16)"  # the page fills it too
FP8_ROLES = {"weights": "weights", "kv": "KV cache"}  # by the option that sets the dtype


def unsupported(gpu: GPU, weights: str, kv: str) -> str | None:
    """Why a GPU cannot run this dtype, or None: FP8 weights need FP8 tensor cores (Ampere has none)."""
    for option, dtype in (("weights", weights), ("kv", kv)):
        if dtype == "fp8" and gpu.fp8 is None:
            return NO_FP8.format(gpu=gpu.name, role=FP8_ROLES[option], option=option)
    return None


@dataclass(frozen=True)
class ServeInputs:
    """Everything the report reads besides the layout and the batch."""

    model: dict[str, int]  # architecture values by symbol name
    gpu: GPU
    weights: str = "bf16"
    kv: str = "bf16"
    node_size: int = 8
    network: object = 25 * 10**9  # bytes/s per GPU one way across nodes
    price: object | None = None  # $ per GPU-hour (None: the preset's rental price, if it has one)
    int4_group: int = INT4_GROUP
    constants: ServingConstants | None = None  # None: the fitted ones at the weights' compute precision

    @property
    def fitted(self) -> ServingConstants:
        return self.constants or constants("8" if compute_precision(self.weights) == "fp8" else "16")


def base_values(inputs: ServeInputs, t: object, p: object, ops: Ops = EXACT_OPS, given: dict | None = None) -> dict:
    """The symbol values every formula of the report takes: the model, the GPU at the weights' precision, the links,
    the constants, the dtypes. ``given`` replaces the GPU's figures (X, W_mem, W_link, M_gpu) and the dtypes' bytes
    (q_w, q_kv): the sizing page traces the report with them as its own inputs."""
    gpu, real = inputs.gpu, _real(ops)
    figures = {"X": real(gpu.flops(compute_precision(inputs.weights))), "W_mem": real(gpu.memory_bandwidth),
               "W_link": real(gpu.link()), "M_gpu": real(gpu.memory),
               "q_w": real(weight_bytes(inputs.weights, inputs.int4_group)), "q_kv": KV_BYTES[inputs.kv]} | (given or {})
    nvlink, network = figures.pop("W_link") / 2, real(inputs.network)  # one way: a ring sends and receives at once
    in_node = inputs.node_size
    return dict(inputs.model) | {name: real(v) for name, v in inputs.fitted.values().items()} | figures | {
        "t": t, "p": p, "q": Q_ACTIVATION,
        "W_tp": ops.where(t <= in_node, nvlink, network), "W_pp": ops.where(t * p <= in_node, nvlink, network),
    }


def _real(ops: Ops):
    """A GPU figure or constant as the evaluator's number: as it is for SymPy (exact, or traced for the page), a float
    beside NumPy arrays."""
    return (lambda value: value) if ops.minimum is sp.Min else float


def report(t: object, p: object, e: object, d: object, b: object, s_in: object, s_out: object, inputs: ServeInputs,
           ev: Evaluator = exact, ops: Ops = EXACT_OPS, given: dict | None = None) -> dict:
    """The serving report as nested sections of numbers (exact Rationals, NumPy arrays of layouts, or SymPy expressions
    of the page's inputs when traced with ``given``: base_values's figures, and c_rent and W_gpu for the cost)."""
    t, p, e, d, b, s_in, s_out = (ops.number(x) for x in (t, p, e, d, b, s_in, s_out))
    values = base_values(inputs, t, p, ops, given) | {"e": e, "b": b, "s_in": s_in, "s_out": s_out}
    model = inputs.model

    def experts(tokens: object) -> object:  # distinct experts reached; every one where the implementation runs them all
        large = ev is exact and getattr(tokens, "is_Integer", False) and tokens > EXACT_POWER_TOKENS
        reached = experts_reached(model["E"], model["k"], tokens) if large else \
            ev("serving.decode.experts_touched", **(values | {"b": tokens}))
        return model["all_experts"] * model["E"] + (1 - model["all_experts"]) * reached

    hit_decode, hit_prefill = experts(b), experts(b * s_in)
    read_decode = ev("serving.decode.weights_read", **(values | {"E_hit": hit_decode}))
    read_prefill = ev("serving.decode.weights_read", **(values | {"b": b * s_in, "E_hit": hit_prefill}))
    flops_decode = ev("serving.decode.flops.linear", **values)
    # DeepSeek sparse attention: the serving.*.sparse forms, for a model whose σ_DSA is the number 1 (a traced model,
    # the sizing page's, holds symbols: it prices the dense forms, and none of its presets has sparse attention)
    sparse = model.get("dsa") == 1
    flops_prefill = ev("serving.prefill.flops.sparse" if sparse else "serving.prefill.flops.causal", **values)
    dispatch = {phase: ops.where(e > 1, 2 * model["l_moe"] * ev("serving.time.alltoall", **(values | {
        "x_msg": model["k"] * tokens * model["h"] * Q_ACTIVATION})), 0) for phase, tokens in (("decode", b), ("prefill", b * s_in))}

    prefill = ev("serving.time.prefill", **(values | {"F_fwd": flops_prefill, "R_w": read_prefill})) + dispatch["prefill"]
    total = ev("serving.time.e2e.sparse" if sparse else "serving.time.e2e",
               **(values | {"T_pf": prefill, "F_fwd": flops_decode, "R_w": read_decode})) + (s_out - 1) * dispatch["decode"]
    tpot = ev("serving.time.tpot", **(values | {"T_e2e": total, "T_pf": prefill}))

    mean_context = (2 * s_in + s_out) / 2  # the mean of the contexts s_in + 1 … s_in + s_out − 1
    at_mean = values | {"s_ctx": mean_context}
    positions = ev("serving.decode.context", **at_mean)
    cache_read = ev("serving.decode.kv_read.sparse" if sparse else "serving.decode.kv_read", **at_mean)
    cache_per_gpu = ev("serving.memory.kv", **(at_mean | {"p": 1}))  # the positions over min(t, g) (MLA: 1), states over t
    if sparse:  # what a step reads of it: the selected positions' latents and every indexer key
        top_k = {"dsa": 0, "l_win": ev("serving.decode.context", **(values | {"s_ctx": 1, "l_win": 0})), "W": model["k_top"]}
        cache_per_gpu = (ev("serving.memory.kv", **(at_mean | {"p": 1} | top_k)) + cache_per_gpu
                         - ev("serving.memory.kv", **(at_mean | {"p": 1, "dsa": 0})))
    step = decode_terms(at_mean | {"N_kv": positions}, flops_decode, read_decode, cache_per_gpu, dispatch["decode"], ev, sparse)
    first = prefill_terms(values, flops_prefill, read_prefill, dispatch["prefill"], ev)

    longest = s_in + s_out
    weights = ev("serving.memory.weights", **(values | {"P": ev("params.decoder.total", **values)}))
    cache = ev("serving.memory.kv.paged", **(values | {"s_ctx": longest, "n_blk": BLOCK}))
    workspace = ev("serving.memory.workspace", **(values | {"n_chunk": ops.minimum(b * s_in, WORKSPACE_TOKENS)}))
    held = values | {"M_w": weights, "M_ws": workspace, "s_ctx": longest}
    per_gpu = weights + cache + workspace
    capacity = values["M_gpu"]
    room = capacity - weights - workspace
    max_batch = kv_wall(capacity - weights, ev("serving.memory.kv.paged", **(values | {"b": 1, "s_ctx": longest, "n_blk": BLOCK})),
                        ev("serving.memory.workspace", **(values | {"n_chunk": 1})), s_in, ops)
    attention = ev("serving.decode.context", **(values | {"s_ctx": 1, "l_win": 0}))  # l_attn: one position per attention layer
    longest_context = ops.where(model["l_win"] < attention, ops.where(room > 0, ops.maximum(  # -1: no context fills it
        -ops.ceiling(-ev("serving.memory.max_context", **(held | {"l_win": ops.minimum(model["l_win"], attention - 1)}))), 0), 0), -1)

    replica_rate = p * b * s_out / total  # p batches in flight
    rate = d * replica_rate
    gpus = t * p * d
    given = given or {}
    price = given.get("c_rent", inputs.price if inputs.price is not None else inputs.gpu.rent)
    power = given.get("W_gpu", inputs.gpu.tdp)
    result = {
        "ttft_seconds": prefill,
        "tpot_seconds": tpot,
        "e2e_seconds": total,
        "output_tokens_per_second": rate,
        "output_tokens_per_second_per_gpu": rate / gpus,
        "output_tokens_per_second_per_user": ev("serving.throughput.per_user", **(values | {"T_tok": tpot})),
        "decode_bytes_per_step": read_decode + cache_per_gpu * t,
        "gpus": gpus,
        "memory": {"per_gpu_bytes": per_gpu, "weights_bytes": weights, "kv_cache_bytes": cache, "workspace_bytes": workspace,
                   "capacity_bytes": capacity, "fits": per_gpu <= capacity, "missing_bytes": ops.maximum(per_gpu - capacity, 0),
                   "max_batch": max_batch, "max_context": longest_context},
        "decode_step": step,
        "prefill": first,
        "experts_touched": {"decode": hit_decode, "prefill": hit_prefill},
        "weights_read_bytes": read_decode,
        "kv_read_bytes": cache_read,
        "flops": {"decode_step": flops_decode + ev("serving.decode.attention.flops.sparse" if sparse else "serving.decode.attention.flops",
                                                   **(at_mean | {"N_kv": positions})),
                  "prefill": flops_prefill},
    }
    real = _real(ops)
    if price is not None:
        result["dollars_per_million_output_tokens"] = 10**6 * ev("serving.cost.per_token", c_rent=real(price), n=gpus, R_out=rate)
        result["price_per_gpu_hour"] = price
    if power is not None:
        result["joules_per_output_token"] = ev("serving.energy.per_token", W_gpu=real(power), n=gpus, R_out=rate)
    return result


def kv_wall(room: object, per_sequence: object, per_token: object, s_in: object, ops: Ops = EXACT_OPS) -> object:
    """The KV wall under the verdict's memory model: the largest b with b·M_seq + min(b·s_in, N)·m_tok ≤ R (R the
    memory beside the weights, M_seq one sequence's paged cache, m_tok the workspace per token of a forward, N =
    WORKSPACE_TOKENS), 0 when none fits. Both sides are linear in b on either side of b₀ = ⌈N/s_in⌉: from b₀ on the
    workspace is N tokens', b ≤ (R − N·m_tok)/M_seq; below it b ≤ R/(M_seq + s_in·m_tok)."""
    def floor(x: object) -> object:
        return -ops.ceiling(-x)

    knee = ops.ceiling(WORKSPACE_TOKENS / s_in)  # b₀: the first batch whose prefill fills the workspace
    full = floor((room - WORKSPACE_TOKENS * per_token) / per_sequence)
    below = ops.minimum(floor(room / (per_sequence + s_in * per_token)), knee - 1)
    return ops.maximum(ops.where(full >= knee, full, below), 0)


def decode_terms(values: dict, flops: object, weights_read: object, cache_per_gpu: object, dispatch: object,
                 ev: Evaluator, sparse: bool = False) -> dict:
    """One decoding step's time by term (serving.time.decode_step, or .sparse at s_ctx): compute, HBM (weights, the
    cache bytes a GPU reads), fixed, links."""
    t, hbm = values["t"], values["W_mem"] * values["eta_hbm"]
    attention = ev("serving.decode.attention.flops.sparse" if sparse else "serving.decode.attention.flops", **values)
    compute = (flops + attention) / (t * values["X"] * values["eta_dec"])
    memory_weights = weights_read / (t * hbm)
    memory_cache = cache_per_gpu / hbm
    fixed = values["l"] * values["tau_L"]
    step = ev("serving.time.decode_step.sparse" if sparse else "serving.time.decode_step",
              **(values | {"F_fwd": flops, "R_w": weights_read}))
    terms = {"compute_seconds": compute, "weights_seconds": memory_weights, "kv_seconds": memory_cache,
             "fixed_seconds": fixed, "link_seconds": step - compute - memory_weights - memory_cache - fixed + dispatch}
    return terms | {"seconds": step + dispatch}


def prefill_terms(values: dict, flops: object, weights_read: object, dispatch: object, ev: Evaluator) -> dict:
    """The prefill's time by term (serving.time.prefill): compute, HBM (weights), fixed, links."""
    t = values["t"]
    compute = flops / (t * values["X"] * values["eta_pf"])
    memory = weights_read / (t * values["W_mem"] * values["eta_hbm"])
    fixed = values["l"] * values["tau_L"]
    whole = ev("serving.time.prefill", **(values | {"F_fwd": flops, "R_w": weights_read}))
    terms = {"compute_seconds": compute, "weights_seconds": memory, "fixed_seconds": fixed,
             "link_seconds": whole - compute - memory - fixed + dispatch}
    return terms | {"seconds": whole + dispatch}


BOUNDS = {"compute_seconds": "compute", "weights_seconds": "HBM (weights)", "kv_seconds": "HBM (KV cache)",
          "fixed_seconds": "kernel latency", "link_seconds": "links (TP/PP/EP)"}


def bound(terms: dict) -> str:
    """The term that takes the longest (exact report only)."""
    named = {name: value for name, value in terms.items() if name in BOUNDS}
    return BOUNDS[max(named, key=lambda name: named[name])]
