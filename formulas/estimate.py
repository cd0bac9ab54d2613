"""The training and inference report for one model, GPU and parallel layout.

Every figure is a catalogue formula evaluated at the model's sizes, the GPU's
figures and the layout; nothing here is a formula of its own but the glue
(which variant applies, sums of the sections, the step time). The glue runs
on any evaluator: exact SymPy Rationals for ``llm-formulas estimate``, NumPy
arrays of layouts for sweeps and ``plan``.

Conventions (each stated in the report):
- weights and activations in 16-bit (q = 2 bytes); mixed-precision Adam;
- activations are Korthikanti et al.'s stored tensors at the model's own block: GQA heads of
  d_head, a gated or ungated MLP of width d_ff (``memory.activations.layer.general.*``; the
  classic terms when g = a, d_head = h/a, d_ff = 4h, gated = 0); the first pipeline stage
  holds min(p, m) micro-batches of its l/p layers (1F1B), ×(1 + (p−1)/(p·v)) when interleaved;
- TP traffic crosses the GPU's NVLink (PCIe without one) at half the preset's figure,
  which counts both directions while a ring sends and receives at once; PP and DP
  traffic crosses the inter-node network at ``network`` bytes/s per GPU each way;
- interleaving (v > 1) divides the bubble by v and multiplies the PP traffic by v;
- with U given (``--mfu``): a step is compute × (1 + bubble) plus the communication time (TP, PP and DP
  together) that exceeds the share r of the compute it can hide under;
- without it the step time is predicted (formulas/prediction.py, formulas/performance.py):
  per-layer times under the layout, blocking TP, PP p2p, the bubble, exposed DP/ZeRO time and
  the optimizer, with the GPU's calibrated constants; MFU and HFU are then outputs;
- full recompute re-runs the layers' forward, not the logits (as ``flops.megatron``);
- FLOP-based figures of a mixture-of-experts model (6ΨD, compute-bound decoding) use
  the active Ψ, byte-based ones (weights, states, memory-bound decoding) the total Ψ;
- the iterations are whole: ⌈D/(B·s)⌉;
- FlashAttention (``attention="flash"``) keeps no s² tensor (``memory.activations.layer.general.flash``):
  with it, no recompute and selective recompute store the same;
- decoding runs the p pipeline stages in series (``inference.latency.pipeline``): a token takes the
  whole model's time over the t GPUs of one stage; p batches in flight, one per stage.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import Callable, Literal

import sympy as sp

from formulas.catalogue import get
from formulas.symbols import quantity

Recompute = Literal["none", "selective", "full"]
RECOMPUTE_MODES: tuple[str, ...] = ("none", "selective", "full")
ATTENTION_KERNELS: tuple[str, ...] = ("eager", "flash")  # flash: FlashAttention keeps no s² tensor (Dao et al. 2022)
Q_16BIT = 2  # bytes per 16-bit value
SECONDS_PER_DAY = 86400
SECONDS_PER_HOUR = 3600
TOKENS_PER_PARAMETER = 20  # the default D: Hoffmann et al. 2022 (Chinchilla), about 20 tokens per parameter


class LayoutError(ValueError):
    """A layout that cannot exist; the message names the rule it breaks."""


@dataclass(frozen=True)
class Layout:
    """One parallel layout: n GPUs as t·p·d, micro-batch b, m micro-batches, s tokens, v chunks, and the settings."""

    n: int
    t: int
    p: int
    d: int
    b: int
    m: int
    s: int
    v: int = 1
    zero: int = 0
    recompute: Recompute = "selective"
    sequence_parallel: bool = False
    attention: str = "eager"

    @property
    def global_batch(self) -> int:
        return self.b * self.m * self.d


def layout_violation(layout: Layout, model: dict[str, int]) -> str | None:
    """The first rule the layout breaks, in words, or None: the one statement of the rules
    (``check_layout`` raises it, ``plan`` keeps the layouts that break none)."""
    t, p, d, n = layout.t, layout.p, layout.d, layout.n
    if t * p * d != n:
        return f"t·p·d must equal n: {t}·{p}·{d} = {t * p * d}, n = {n}"
    if model["a"] % t:
        return f"t = {t} must divide the {model['a']} attention heads"
    if model["g"] % t:
        return f"t = {t} must divide the {model['g']} key/value heads"
    if model["l"] % (p * layout.v):
        return f"p·v = {p * layout.v} must divide the {model['l']} layers"
    if layout.zero not in (0, 1, 2, 3):
        return f"ZeRO stage must be 0, 1, 2 or 3, got {layout.zero}"
    if layout.attention not in ATTENTION_KERNELS:
        return f"attention must be one of {', '.join(ATTENTION_KERNELS)}, got {layout.attention!r}"
    if layout.recompute not in RECOMPUTE_MODES:
        return f"recompute must be one of {', '.join(RECOMPUTE_MODES)}, got {layout.recompute!r}"
    if layout.v > 1 and (p == 1 or layout.m % p):
        return f"interleaving (v = {layout.v}) needs p > 1 and m a multiple of p (m = {layout.m}, p = {p})"
    return None


def check_layout(layout: Layout, model: dict[str, int]) -> None:
    """Raise LayoutError naming the first rule the layout breaks."""
    violation = layout_violation(layout, model)
    if violation is not None:
        raise LayoutError(violation)


Evaluator = Callable[..., object]


@dataclass(frozen=True)
class Ops:
    """The glue's choices, branch-free: ``where(cond, x, y)``, elementwise ``minimum``/``maximum``,
    ``number`` (a count as the evaluator's number: an exact Integer, or a float64 array), and
    ``choose(key, {value: thunk})``, the value of the thunk the key names (element by element
    when the key is an array: a categorical setting that picks a formula id)."""

    where: Callable
    minimum: Callable
    maximum: Callable
    number: Callable
    choose: Callable
    ceiling: Callable


EXACT_OPS = Ops(where=lambda cond, x, y: x if cond else y, minimum=sp.Min, maximum=sp.Max, number=sp.Integer,
                choose=lambda key, options: options[key](), ceiling=sp.ceiling)


@cache
def _exact_function(formula_id: str) -> tuple[tuple[sp.Symbol, ...], sp.Expr]:
    expr = get(formula_id).value_expr
    return tuple(sorted(expr.free_symbols, key=lambda s: s.name)), expr


def exact(formula_id: str, **values: object) -> sp.Rational:
    """Evaluate a formula exactly; extra values are ignored, a missing one is an error
    (unless a switch set to 0 removes its term, as pos_table = 0 removes n_pos)."""
    symbols, expr = _exact_function(formula_id)
    result = expr.xreplace({s: sp.sympify(values[s.name]) for s in symbols if s.name in values})
    if result.free_symbols:
        raise KeyError(f"{formula_id} needs {', '.join(sorted(s.name for s in result.free_symbols))}")
    return result


@dataclass(frozen=True)
class Inputs:
    """Everything the report reads besides the layout (values by symbol name)."""

    model: dict[str, int]  # architecture sizes and switches
    gpu: dict[str, object]  # X, W_mem, W_link, M_gpu
    network: object  # inter-node bytes/s per GPU
    tokens: object | None  # D; None: TOKENS_PER_PARAMETER per parameter
    utilization: object | None  # U; None: predicted by the performance model (formulas/prediction.py)
    overlap: object  # r
    efficiency: object | None = None  # formulas.calibration.Efficiency, needed when utilization is None
    node_size: int = 8  # GPUs one node's NVLink joins
    flash: bool = False  # fused (Flash) attention in the performance model


def estimate(layout: Layout, inputs: Inputs, ev: Evaluator = exact, ops: Ops = EXACT_OPS) -> dict:
    """The report as nested sections of numbers (exact or arrays, by evaluator).

    With ``ev = exact`` and ``EXACT_OPS`` every figure is an exact Rational. With a NumPy
    evaluator and NumPy ops every field of ``layout`` may be an array (one shape): the
    counts enter the formulas, the settings (ZeRO stage, recompute mode as an index into
    RECOMPUTE_MODES, sequence parallelism) pick formula ids element by element; no loop
    per layout.
    """
    n, t, p, d, b, m, s, v = (ops.number(x) for x in (layout.n, layout.t, layout.p, layout.d, layout.b, layout.m, layout.s, layout.v))
    model = inputs.model
    layers = ops.number(model["l"])
    base = dict(model) | dict(inputs.gpu) | {"t": t, "p": p, "d": d, "m": m, "s": s, "v": v, "n": n, "q": Q_16BIT,
                                              "q_w": Q_16BIT, "r": inputs.overlap}
    B = b * m * d
    tensor, pipeline, data, interleaved = t > 1, p > 1, d > 1, v > 1

    total = ev("params.decoder.total", **base)
    active = ev("params.decoder.active", **base)
    tokens = TOKENS_PER_PARAMETER * total if inputs.tokens is None else inputs.tokens
    base |= {"P": total, "D": tokens}

    forward = ev("flops.decoder.forward", **(base | {"b": B}))
    backward = ev("flops.decoder.backward", **(base | {"b": B}))
    training = forward + backward
    mode = _recompute_code(layout.recompute)
    recomputed = ops.choose(mode, {
        0: lambda: 0 * forward,  # none
        1: lambda: layers * ev("flops.decoder.attention.scores", **(base | {"b": B})),  # selective
        2: lambda: ev("flops.decoder.layers.forward", **(base | {"b": B})),  # full: the layers, not the logits
    })

    states = ops.choose(layout.zero, {stage: (lambda f=formula_id: ev(f, **base)) for stage, formula_id in ZERO_STATES.items()})
    activation = _activation_index(mode, layout.sequence_parallel, _flash(layout.attention), ops)
    per_layer = ops.choose(activation, {i: (lambda f=f: ev(f, **(base | {"b": b}))) for i, f in enumerate(ACTIVATION_FORMULAS)})
    in_flight = ops.minimum(p, m)
    interleave = 1 + ops.where(interleaved, (p - 1) / (p * v), 0)
    activations = per_layer * (layers / p) * in_flight * interleave
    memory_total = states + activations
    capacity = inputs.gpu["M_gpu"]
    # activations are linear in b: the largest b whose activations fit beside the model states (0: none fits)
    max_micro_batch = ops.maximum(-ops.ceiling(-(capacity - states) * b / activations), 0)

    bubble = ops.where(interleaved, ev("cluster.bubble.interleaved", **base), ev("cluster.bubble", **base))
    comms = _comms(layout, base, ev, ops)
    link = {"tp": inputs.gpu["W_link"] / 2, "pp": inputs.network, "dp": inputs.network}  # bytes/s one way
    comm_time = {dim: comms[dim] / link[dim] for dim in comms}
    if inputs.utilization is None:  # predicted: the performance model, where each group sits
        from formulas.prediction import predict

        predicted = predict(base | {"b": b}, {"t": t, "p": p, "d": d, "m": m, "v": v, "n": n, "b": b},
                            {"zero": layout.zero, "recompute": mode, "sequence_parallel": layout.sequence_parallel},
                            inputs.efficiency, inputs.network, inputs.node_size, inputs.flash,
                            {"training": training, "recomputed": recomputed}, ev, ops)
        step_time, compute_time = predicted["step_seconds"], predicted["compute_seconds"]
        bubble_time = predicted["bubble_seconds"]
        exposed = predicted["tp_seconds"] + predicted["pp_seconds"] + predicted["dp_exposed_seconds"]
        utilization, hardware = predicted["mfu"], predicted["hfu"]
    else:
        compute_time = (training + recomputed) / (n * inputs.gpu["X"] * inputs.utilization)
        exposed = ops.maximum(sum(comm_time.values()) - inputs.overlap * compute_time, 0)  # one overlap budget for all
        bubble_time = compute_time * bubble
        step_time = compute_time + bubble_time + exposed
        utilization, hardware = inputs.utilization, inputs.utilization * (training + recomputed) / training
        predicted = None
    base |= {"U": utilization}  # the required bandwidths divide compute at this U
    iterations = ops.ceiling(tokens / (B * s))

    return {
        "params": {"total": total, "active": active, "per_gpu": total / (t * p),
                   # the parameters a GPU holds between uses: ZeRO-3 shards them over the d replicas too
                   "per_gpu_stored": total / (t * p * _zero_share(layout.zero, 3, d, ops))},
        "flops": {
            "forward": forward,
            "backward": backward,
            "training": training,
            "recomputed": recomputed,
            "per_token": training / (B * s),
        },
        "memory": {
            "model_states": states,
            **_state_parts(layout.zero, base, ev, ops),
            "activations": activations,
            "total": memory_total,
            "capacity": capacity,
            "left": capacity - memory_total,
            "fits": memory_total <= capacity,
            "max_micro_batch": max_micro_batch,
            "activation_formula": ops.choose(activation, {i: (lambda f=f: f) for i, f in enumerate(ACTIVATION_FORMULAS)}),
        },
        "comms": {
            "bytes": comms,
            "required_bandwidth": {
                "tp": ops.where(tensor, ev("comms.bandwidth.tp", **base), 0),
                "pp": ops.where(pipeline, ev("comms.bandwidth.pp", **base), 0),
                "dp": ops.where(data, ev("comms.bandwidth.dp", **(base | {"B": B})), 0),
            },
            "link_bandwidth": link,
            "seconds": comm_time,
        },
        "time": {
            "mode": "given" if predicted is None else "predicted",
            "mfu": utilization,
            "hfu": hardware,
            "bubble": bubble,
            "compute_seconds": compute_time,
            "bubble_seconds": bubble_time,
            "exposed_comm_seconds": exposed,
            "step_seconds": step_time,
            "tokens": tokens,
            "iterations": iterations,
            "training_days": iterations * step_time / SECONDS_PER_DAY,
            "ideal_days": ev("cluster.training_time", **(base | {"P": active})) / SECONDS_PER_DAY,  # 6ΨD: Ψ a token uses
            "gpu_hours": n * iterations * step_time / SECONDS_PER_HOUR,
            "tokens_per_gpu_second": B * s / (n * step_time),
            # what the whole step achieves, bubble and exposed communication included (= mfu when predicted)
            "step_mfu": training / (n * inputs.gpu["X"] * step_time),
        } | ({} if predicted is None else {"predicted": predicted}),
        "inference": _inference(base, b, active, ev, ops),
    }


ZERO_STATES = {0: "memory.zero", 1: "memory.zero.stage1", 2: "memory.zero.stage2", 3: "memory.zero.stage3"}
ACTIVATION_FORMULAS = (  # per-layer bytes by recompute mode and sequence parallelism, at the model's g, d_head, d_ff, gated
    "memory.activations.layer.general.tp",
    "memory.activations.layer.general.tp_sp",
    "memory.activations.layer.general.selective",
    "memory.activations.layer.general.selective_sp",
    "memory.activations.layer.full_recompute",
    "memory.activations.layer.full_recompute_sp",
    "memory.activations.layer.general.flash",
    "memory.activations.layer.general.flash_sp",
)


def _state_parts(zero: object, base: dict, ev: Evaluator, ops: Ops) -> dict:
    """The model states split as ZeRO partitions them (Rajbhandari et al. 2020): 16-bit weights (2Ψ), 16-bit
    gradients (16Ψ − 2Ψ − 12Ψ) and Adam's fp32 part (12Ψ), over t·p GPUs, and over d too from stages 3, 2 and 1."""
    weights = ev("memory.model_states.inference", **base)
    optimizer = ev("memory.optimizer.adam", **base)
    gradients = ev("memory.model_states", **base) - weights - optimizer
    t, p, d = base["t"], base["p"], base["d"]

    return {"weights": weights / (t * p * _zero_share(zero, 3, d, ops)),
            "gradients": gradients / (t * p * _zero_share(zero, 2, d, ops)),
            "optimizer": optimizer / (t * p * _zero_share(zero, 1, d, ops))}


def _zero_share(zero: object, from_stage: int, d: object, ops: Ops) -> object:
    """How many ways ZeRO splits a part of the states: d from ``from_stage`` on, else 1."""
    return ops.choose(zero, {stage: (lambda stage=stage: d if stage >= from_stage else 1) for stage in range(4)})


def _recompute_code(recompute: object) -> object:
    """The recompute mode as its index in RECOMPUTE_MODES: given by name (one layout) or as indices (arrays)."""
    return RECOMPUTE_MODES.index(recompute) if isinstance(recompute, str) else recompute


def _flash(attention: object) -> object:
    """FlashAttention or not: given by name (one layout) or as a 0/1 flag (arrays, symbols)."""
    return attention == "flash" if isinstance(attention, str) else attention


def _activation_index(mode: object, sequence_parallel: object, flash: object, ops: Ops) -> object:
    """Which of ACTIVATION_FORMULAS applies (full recompute keeps only each layer's input, SP or not;
    FlashAttention keeps no s² tensor, so with it no recompute and selective recompute store the same)."""
    return ops.choose(mode, {
        0: lambda: ops.where(flash, ops.where(sequence_parallel, 7, 6), ops.where(sequence_parallel, 1, 0)),
        1: lambda: ops.where(flash, ops.where(sequence_parallel, 7, 6), ops.where(sequence_parallel, 3, 2)),
        2: lambda: ops.where(sequence_parallel, 5, 4),
    })


def _comms(layout: Layout, base: dict, ev: Evaluator, ops: Ops) -> dict:
    """Bytes each GPU moves per iteration, by parallel dimension."""
    t, p, d, b, m = base["t"], base["p"], base["d"], ops.number(layout.b), base["m"]
    tp = ops.choose(layout.sequence_parallel, {
        True: lambda: ev("comms.sp.per_microbatch", **(base | {"b": b})),
        False: lambda: ev("comms.tp.sent_per_microbatch", **(base | {"b": b})),
    })
    tp = ops.where(t > 1, tp * m, 0)
    pp = ops.where(p > 1, ev("comms.pp.per_iteration.interleaved", **(base | {"b": b})), 0)
    dp = ops.choose(layout.zero, {  # ZeRO-2 reduce-scatters every micro-batch, ZeRO-3 also gathers twice per micro-batch
        0: lambda: ev("comms.dp.sent_per_iteration", **base),
        1: lambda: ev("perf.zero.stage1.sent", **base),
        2: lambda: ev("perf.zero.stage2.sent", **base),
        3: lambda: ev("perf.zero.stage3.sent", **base),
    })
    return {"tp": tp, "pp": pp, "dp": ops.where(d > 1, dp, 0)}


def _inference(base: dict, b: object, active: object, ev: Evaluator, ops: Ops) -> dict:
    """One replica (t·p GPUs) decoding batches of b sequences of s tokens: every weight is read per step
    (total Ψ), each token computes with the Ψ it uses (active Ψ; the same for a dense model).

    The p pipeline stages run in series (``inference.latency.pipeline``: p does not shorten a token): a token's
    latency is that of the whole model over the t GPUs of one stage, ``inference.latency.*`` at n = t (at t = 1
    the memory-bound term is ``inference.latency.pipeline`` itself). With p batches in flight, one per stage,
    the replica emits p·b tokens per token latency."""
    replica = base | {"n": base["t"] * base["p"], "b": b}
    stage = replica | {"n": base["t"]}
    memory_bound = ev("inference.latency.memory_bound", **stage)
    compute_bound = ev("inference.latency.compute_bound", **(stage | {"P": active}))  # FLOPs: the Ψ a token uses
    step = ops.maximum(memory_bound, compute_bound)
    return {
        # what transformers' cache holds: windowed layers W − 1 tokens, MLA the latent (memory.kv_cache when neither)
        "kv_cache_per_sequence": ev("memory.kv_cache.decoder", **(replica | {"b": 1})),
        "kv_cache_batch": ev("memory.kv_cache.decoder", **replica),
        "weights_per_gpu": ev("memory.model_states.inference", **replica) / replica["n"],
        "kv_cache_per_gpu": ev("memory.kv_cache.decoder", **replica) / replica["n"],
        "latency_memory_bound": memory_bound,
        "latency_compute_bound": compute_bound,
        "token_latency": step,
        "sequences_in_flight": base["p"] * b,
        "tokens_per_second": base["p"] * b / step,
        "balance_batch": ev("inference.balance_batch", **replica),
    }


def model_values(values: dict[sp.Symbol, int]) -> dict[str, int]:
    """An Architecture's symbol values keyed by name (what evaluators take)."""
    return {quantity(symbol).name: int(value) for symbol, value in values.items()}
