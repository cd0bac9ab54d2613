"""The predicted step time of one layout: formulas/topics/performance.py evaluated where the groups sit.

Glue only (any evaluator: exact Rationals, or NumPy arrays of layouts). Where each group sits
(Megatron's rank order, TP innermost, then DP, then PP; ``node`` GPUs per node):
- the TP ring runs over NVLink when its t consecutive ranks sit in one node (t divides the node
  size), else over the network (priced, not forbidden): t = 6 on 8-GPU nodes puts some groups
  across two nodes, and the ring is as slow as its slowest link;
- pipeline neighbours are n/p ranks apart: the slowest boundary crosses the network unless
  the whole job sits in one node;
- the DP all-reduce is hierarchical over d_node = min(d, ⌊node/t⌋) ranks per node (1 when t fills the node);
- NVLink's one-way bandwidth is half the preset's figure, the network's is ``--network``,
  both at the calibrated η_link (NCCL's bus bandwidth falls short of the wire).
The framework (formulas/data/frameworks.py) sets the overlap switches σ_DP^ovl (DP reduction under
the last backward or after it), σ_TP^ovl (the backward's all-reduces under the weight-gradient
GEMMs) and σ_P2P^ser (sends and receives serialised).
The step: (m + (p−1)/v) slots of the last stage's micro-batch time, the exposed DP/ZeRO time,
the optimizer step. Split for reading: compute (GEMMs, attention, element-wise, logits,
recompute), TP communication (what of it is exposed) and PP communication (on the critical
path), bubble, exposed DP/ZeRO, optimizer; MFU counts the model's FLOPs, HFU the recomputed ones too (Korthikanti et al. 2022 §6).
"""

from __future__ import annotations

from llm_formulas.formulas.data.calibration import Efficiency
from llm_formulas.formulas.data.frameworks import DEFAULT

Q_16BIT = 2


def placement(t: object, p: object, d: object, gpu: dict, network: object, node: int, eta_link: object, ops) -> dict:
    """The bandwidths each group's collectives see and the DP ranks per node."""
    n = t * p * d
    nvlink = gpu["W_link"] / 2 * eta_link
    net = network * eta_link
    per_node = ops.maximum(_floor(node / t, ops), 1)
    return {
        "W_tp": ops.where(node % t == 0, nvlink, net),  # every TP group inside one node only when t divides it
        "W_pp": ops.where(n <= node, nvlink, net),
        "W_intra": nvlink,
        "W_net": net,
        "d_node": ops.minimum(d, per_node),
    }


def _floor(x: object, ops) -> object:
    return -ops.ceiling(-x)


def model_values(base: dict, layout_numbers: dict, settings: dict, efficiency: Efficiency, network: object, node: int,
                 flash: bool, ops, framework=None) -> dict:
    """Every input of the perf.* formulas by name: the model, GPU and layout, the constants, where each group sits,
    the settings as 0/1 switches and the framework's overlap switches."""
    t, p, d = (layout_numbers[name] for name in ("t", "p", "d"))
    mode = settings["recompute"]
    return dict(base) | efficiency.values() | placement(t, p, d, base, network, node, efficiency.eta_link, ops) | {
        "b": layout_numbers["b"], "q": Q_16BIT, "q_w": Q_16BIT,
        "flash": 1 if flash else 0,
        "seq_par": ops.where(settings["sequence_parallel"], 1, 0),
        "rc_full": ops.where(mode == 2, settings.get("recompute_share", 1), 0),  # block recompute: the share of layers
        "rc_sel": ops.where(mode == 1, 1, 0),
        "piped": ops.where(p > 1, 1, 0),
    } | (framework or DEFAULT).switches()


def _stage_times(values: dict, p: object, stages: list[tuple[int, object, bool]], ev) -> list[object]:
    """Each uneven stage's micro-batch time: perf.stage.microbatch at its layers (l/p → its count) and its parameters
    (P/(t·p) → its own over t), the logits on the last stage only. Stages alike are evaluated once: a partition of
    l layers has at most about √(2l) distinct stage sizes, however many stages it has."""
    times: dict[tuple, object] = {}
    for count, params, last in stages:
        if (count, params, last) not in times:
            own = values | {"l": count * p, "P": params * p}
            times[count, params, last] = ev("perf.stage.microbatch", **own) - (0 if last else ev("perf.logits", **own))
    return [times[stage] for stage in stages]


def predict(base: dict, layout_numbers: dict, settings: dict, efficiency: Efficiency, network: object, node: int,
            flash: bool, flops: dict, ev, ops, framework=None, stages: list[tuple[int, object, bool]] | None = None) -> dict:
    """Seconds per iteration and their split. ``base``: model, GPU and layout values by name; ``settings``:
    zero (stage), recompute (index: 0 none, 1 selective, 2 full), sequence_parallel, recompute_share (the share of
    the layers recomputed in full: 1 but under block recompute, where σ_full = the share is exact because the stage
    sums are linear in σ_full); ``flops``: training and recomputed FLOPs of the iteration (for MFU and HFU);
    ``framework``: its overlap switches (None: the default); ``stages``: an explicit partition (v = 1), each stage's
    layers, parameters and whether it is the last, paced by its slowest stage (perf.pipeline.uneven; the windows ZeRO
    and DP traffic hide under stay the mean stage's); None: l/p each."""
    t, p, d, m, v, n = (layout_numbers[name] for name in ("t", "p", "d", "m", "v", "n"))
    values = model_values(base, layout_numbers, settings, efficiency, network, node, flash, ops, framework)
    if stages is None:
        slot, layers = ev("perf.stage.microbatch", **values), base["l"] / p
        pipeline = ev("perf.pipeline", **values)
    else:
        times = _stage_times(values, p, stages, ev)
        slot, layers = times[0], stages[0][0]
        for time, (count, _, _) in zip(times[1:], stages[1:]):  # the slowest stage, elementwise when plan passes arrays
            slower = time > slot
            slot, layers = ops.where(slower, time, slot), ops.where(slower, count, layers)
        pipeline = ev("perf.pipeline.uneven", m=m, T_slow=slot, T_stages=sum(times))
    values |= {"tau_fwd": ev("perf.window.forward", **values), "tau_bwd": ev("perf.window.backward", **values)}
    tp = layers * ((1 + values["rc_full"]) * ev("perf.tp.layer", **values) + ev("perf.tp.backward", **values))
    p2p = ev("perf.pp.p2p", **values)
    zero = settings["zero"]
    exposed_dp = ops.where(d > 1, ops.choose(zero, {stage: (lambda s=stage: ev(f"perf.zero.stage{s}.exposed", **values))
                                                     for stage in (0, 1, 2, 3)}), 0)
    optimizer = ops.choose(zero, {0: lambda: ev("perf.optimizer", **values), 1: lambda: ev("perf.optimizer.sharded", **values),
                                  2: lambda: ev("perf.optimizer.sharded", **values), 3: lambda: ev("perf.optimizer.sharded", **values)})
    step = pipeline + exposed_dp + optimizer
    peak = n * base["X"] * step
    return {
        "step_seconds": step,
        "compute_seconds": m * (slot - tp - p2p),
        "tp_seconds": m * tp,
        "pp_seconds": m * p2p,
        "bubble_seconds": pipeline - m * slot,  # (p − 1)/v slots when balanced
        "dp_exposed_seconds": exposed_dp,
        "optimizer_seconds": optimizer,
        "mfu": flops["training"] / peak,
        "hfu": (flops["training"] + flops["recomputed"]) / peak,
        "compute_efficiency": (flops["training"] + flops["recomputed"]) / (n * base["X"] * m * (slot - tp - p2p)),
        "links": {"tp": values["W_tp"], "pp": values["W_pp"], "dp_intra": values["W_intra"], "dp_network": values["W_net"],
                  "dp_ranks_per_node": values["d_node"]},
    }
