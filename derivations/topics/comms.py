"""Proofs of the communication formulas (000 §3.3, §4.1.3; 001; ZeRO).

The ring all-reduce is counted step by step (n−1 steps of x/n to reduce-scatter,
n−1 more to all-gather), every primitive's redundancy follows from the bytes it
sends, and the per-GPU traffic of TP, TP+SP, PP, DP and ZeRO is assembled from
those collectives. The bandwidth needs are traffic / (r × compute time of the
same span); the library simplifies each one and proves the article's
proportionality claims (TP ∝ t/h, PP ∝ 1/(h·l/p), DP ∝ d/(B·s)) by showing
the quotient's derivative in every shape variable is exactly 0. 001's largest
useful TP degree is the solution of an inequality, solved by SymPy.
"""

from __future__ import annotations

from functools import partial

import sympy as sp

from llm_formulas.derivations.vocabulary.engine import Derivation
from llm_formulas.derivations.vocabulary.proof import much_greater
from llm_formulas.derivations.topics.flops import gemm
from llm_formulas.formulas.vocabulary.catalogue import get
from llm_formulas.formulas.topics.comms import LI_NIC, LI_TP, NARAYANAN, NEEDS, PRIMITIVES, SP_NOTE, TABLE4, TABLE5, ZERO
from llm_formulas.formulas.vocabulary.symbols import (
    B,
    b,
    c_mac,
    c_token,
    D,
    d,
    g_node,
    u_param,
    h,
    k_nic,
    l,
    m,
    n,
    P,
    p,
    q,
    q_fp32,
    q_w,
    r,
    rho,
    s,
    t,
    tau,
    U,
    v,
    W_alg,
    W_link,
    W_nic,
    X,
    x_msg,
)

_step = sp.Dummy("i", positive=True, integer=True)  # a summation index, not a quantity


def _steps_of(chunk: sp.Basic, count: sp.Basic) -> sp.Sum:
    """``count`` ring steps, each sending ``chunk`` bytes."""
    return sp.Sum(chunk, (_step, 1, count))


def collective(name: str, size: sp.Basic, over: sp.Basic) -> sp.Basic:
    """Bytes each GPU sends in collective ``name`` of ``size`` bytes over ``over`` GPUs (the catalogue's formula)."""
    return get(f"comms.collective.{name}").dimensioned.subs({x_msg: size, n: over}, simultaneous=True)


def ring_allreduce() -> Derivation:
    dv = Derivation("comms.collective.allreduce", "Ring all-reduce: reduce-scatter, then all-gather", (TABLE5,))
    scatter = dv.defines(
        "V_reduce-scatter",
        _steps_of(x_msg / n, n - 1),
        "cut x into n chunks; in each of n−1 steps every GPU sends one chunk of x/n to its successor, which adds it "
        "to its own: afterwards each GPU holds one fully reduced chunk",
    )
    dv.equals("(n−1)x/n", (n - 1) * x_msg / n, "n−1 chunks of x/n")
    gather = dv.defines(
        "V_all-gather",
        _steps_of(x_msg / n, n - 1),
        "in n−1 more steps every GPU forwards a reduced chunk of x/n until every GPU holds all n",
    )
    dv.defines("V_allreduce", scatter + gather, "2(n−1) steps of x/n each")
    dv.equals("2(n−1)x/n", 2 * (n - 1) * x_msg / n, "so the redundancy is 2(n−1)/n")
    dv.concludes("comms.collective.allreduce")
    dv.equals(
        "V_RS + V_AG",
        collective("reduce_scatter", x_msg, n) + collective("allgather", x_msg, n),
        "the catalogue's reduce-scatter and all-gather add up to it",
        of="V_allreduce",
    )
    dv.approximates(
        "2x",
        2 * x_msg,
        "on many GPUs each all-reduced byte costs two bytes on the link (000)",
        condition=much_greater(n, 1),
        dropped=-2 * x_msg / n,
        of="V_allreduce",
    )
    return dv


# what each GPU sends, step by step (the all-reduce has its own derivation above)
_SENDS: dict[str, tuple[sp.Basic, str]] = {
    "reduce_scatter": (_steps_of(x_msg / n, n - 1), "n−1 ring steps, each passing a partial sum of one chunk x/n on"),
    "allgather": (_steps_of(x_msg / n, n - 1), "n−1 ring steps, each forwarding one chunk x/n"),
    "alltoall": (_steps_of(x_msg / n, n - 1), "the chunk x/n meant for each of the n−1 other GPUs"),
    "gather": (_steps_of(x_msg / n, n - 1), "the root receives one chunk x/n from each of the n−1 others"),
    "broadcast": (x_msg, "the ring pipeline forwards every byte of x once"),
    "sendrecv": (x_msg, "the whole buffer to one peer"),
}


def sends(name: str) -> Derivation:
    dv = Derivation(f"comms.collective.{name}", f"Bytes each GPU sends in {name}", (TABLE5,))
    expr, why = _SENDS[name]
    dv.defines(f"V_{name}", expr, why)
    dv.concludes(f"comms.collective.{name}")
    return dv


def redundancy(name: str) -> Derivation:
    dv = Derivation(f"comms.redundancy.{name}", f"Redundancy of {name}", (TABLE5,))
    dv.defines(f"ρ_{name}", get(f"comms.collective.{name}").dimensioned / x_msg, "bytes sent per GPU over the buffer size x")
    dv.concludes(f"comms.redundancy.{name}")
    return dv


def ring_steps() -> Derivation:
    dv = Derivation("comms.collective.allreduce.ring_steps", "A ring all-reduce takes 2(n−1) sequential steps", (TABLE5,))
    dv.defines("S_ring", _steps_of(1, n - 1) + _steps_of(1, n - 1), "n−1 reduce-scatter steps, then n−1 all-gather steps")
    dv.equals("2(n−1)", 2 * (n - 1), "linear in n: the latency term that makes NCCL switch to trees on large clusters")
    dv.concludes("comms.collective.allreduce.ring_steps")
    return dv


def tree_steps() -> Derivation:
    dv = Derivation("comms.collective.allreduce.tree_steps", "A tree all-reduce takes 2·log₂n sequential steps", (TABLE5,))
    depth = dv.defines("depth", sp.log(n, 2), "a balanced binary tree over n = 2^k GPUs has log₂n levels")
    dv.defines("S_tree", depth + depth, "reduce up the tree level by level, then broadcast the result down")
    dv.concludes("comms.collective.allreduce.tree_steps")
    return dv


def bus_bandwidth() -> Derivation:
    dv = Derivation("comms.bus_bandwidth", "Bus bandwidth = algorithm bandwidth × redundancy", (TABLE5,))
    dv.defines("W_alg", x_msg / tau, "nccl-tests: algorithm bandwidth is the buffer size over the elapsed time τ")
    dv.defines("W_bus", rho * x_msg / tau, "the links really carry ρx bytes per GPU in the same τ")
    dv.concludes("comms.bus_bandwidth", where={W_alg: x_msg / tau})
    return dv


# --- per-GPU traffic ------------------------------------------------------------------


def tp_per_microbatch() -> Derivation:
    dv = Derivation("comms.tp.per_microbatch", "TP: four all-reduces of b·s·h per layer", (TABLE4, NARAYANAN))
    one = dv.defines("V_1", b * s * h * q, "each all-reduce sums the [b, s, h] output of a row-parallel GEMM (q bytes a value)")
    layer = dv.defines(
        "V_layer",
        4 * one,
        "forward: after attention and after the MLP (Megatron's g); backward: the gradients of their inputs (f)",
    )
    dv.defines("V_TP", layer * l / p, "each GPU holds l/p layers of its pipeline stage")
    dv.concludes("comms.tp.per_microbatch")
    return dv


def tp_sent() -> Derivation:
    dv = Derivation("comms.tp.sent_per_microbatch", "TP: bytes actually sent", (TABLE4, TABLE5))
    dv.defines(
        "V_TP^sent",
        get("comms.tp.per_microbatch").part * get("comms.redundancy.allreduce").dimensioned.subs(n, t),
        "each all-reduce runs over the t GPUs of the tensor-parallel group: × 2(t−1)/t",
    )
    dv.concludes("comms.tp.sent_per_microbatch")
    return dv


def sp_sent() -> Derivation:
    dv = Derivation("comms.sp.per_microbatch", "Sequence parallelism moves the same bytes as TP", (SP_NOTE, TABLE5))
    value = b * s * h * q
    pair = dv.defines(
        "V_RS+AG",
        collective("reduce_scatter", value, t) + collective("allgather", value, t),
        "SP replaces each all-reduce by a reduce-scatter (into the sequence-split norm/dropout region) and an all-gather out of it",
    )
    dv.defines("V_SP", sp.Mul(4, pair, l, 1 / p, evaluate=False), "four such pairs per layer (two forward, two backward), l/p layers")
    dv.equals("8bshq·l(t−1)/(pt)", 8 * b * s * h * q * l * (t - 1) / (p * t), "collect")
    dv.concludes("comms.sp.per_microbatch")
    dv.equals(
        "V_TP^sent",
        get("comms.tp.sent_per_microbatch").part,
        "exactly what TP without SP sends: a ring all-reduce is a reduce-scatter followed by an all-gather",
        of="V_SP",
    )
    return dv


def per_iteration(target: str, per_microbatch: str) -> Derivation:
    dv = Derivation(target, "m micro-batches per iteration", (TABLE4,))
    dv.defines(f"V_{target}", m * get(per_microbatch).dimensioned, "the same traffic for each of the m micro-batches")
    dv.concludes(target)
    return dv


def pp_per_microbatch() -> Derivation:
    dv = Derivation("comms.pp.per_microbatch", "PP: 2bsh between neighbouring stages", (TABLE4,))
    forward = dv.defines("V_fwd", collective("sendrecv", b * s * h * q, 2), "forward: the [b, s, h] activations to the next stage")
    backward = dv.defines("V_bwd", collective("sendrecv", b * s * h * q, 2), "backward: their gradient to the previous stage")
    dv.defines("V_PP", forward + backward, "one send each way per micro-batch")
    dv.concludes("comms.pp.per_microbatch")
    return dv


def pp_interleaved() -> Derivation:
    dv = Derivation("comms.pp.per_iteration.interleaved", "Interleaving multiplies the PP traffic by v", (NARAYANAN,))
    dv.defines(
        "V_PP^v",
        v * get("comms.pp.per_iteration").part,
        "each GPU holds v chunks of l/(p·v) layers, so a micro-batch leaves and re-enters every GPU v times: "
        "v·p boundaries instead of p, each carrying the same 2bsh",
    )
    dv.concludes("comms.pp.per_iteration.interleaved")
    return dv


def dp_per_iteration() -> Derivation:
    dv = Derivation("comms.dp.per_iteration", "DP: the gradients of Ψ/(t·p) parameters", (TABLE4,))
    held = dv.defines("Ψ_GPU", P / (t * p), "TP and PP split the Ψ parameters over t·p GPUs; each holds the gradients of its share")
    dv.defines("V_DP", q_w * held, "all-reduced across the d replicas once per iteration, q_Ψ bytes a gradient")
    dv.concludes("comms.dp.per_iteration")
    return dv


def dp_sent() -> Derivation:
    dv = Derivation("comms.dp.sent_per_iteration", "DP: bytes actually sent", (TABLE4, TABLE5))
    dv.defines("V_DP^sent", collective("allreduce", get("comms.dp.per_iteration").part, d), "a ring all-reduce over the d replicas")
    dv.concludes("comms.dp.sent_per_iteration")
    return dv


def zero(stage: int) -> Derivation:
    target = f"comms.zero.stage{stage}"
    dv = Derivation(target, f"ZeRO stage {stage} traffic", (ZERO,))
    grads = collective("reduce_scatter", q_w * P, d)
    params = collective("allgather", q_w * P, d)
    if stage in (1, 2):
        when = "at the step's end" if stage == 1 else "bucket by bucket during the backward pass"
        dv.defines(
            "V_ZeRO",
            grads + params,
            f"reduce-scatter the gradients {when} (each GPU keeps the reduced 1/d it updates), then all-gather the updated parameters",
        )
        dv.equals(
            "V_DP^sent",
            get("comms.dp.sent_per_iteration").dimensioned.subs({t: 1, p: 1}),
            "the same bytes as plain data parallelism's all-reduce",
            of="V_ZeRO",
        )
        multiple = 2
    else:
        dv.defines(
            "V_ZeRO",
            params + params + grads,
            "parameters are partitioned too: all-gather them for the forward, again for the backward, and reduce-scatter the gradients",
        )
        multiple = 3
    dv.approximates(
        f"{multiple}Ψ",
        multiple * q_w * P,
        "the ring's (d−1)/d taken as 1",
        condition=much_greater(d, 1),
        dropped=-multiple * q_w * P / d,
        of="V_ZeRO",
    )
    dv.concludes(target)
    return dv


# --- bandwidth requirements ------------------------------------------------------------


def _compute_time(tokens: sp.Basic, gpus: sp.Basic) -> sp.Basic:
    """Seconds of training compute for ``tokens`` tokens shared by ``gpus`` GPUs: 6Ψ per token, Ψ ≈ 12lh²."""
    flops = get("flops.training.approx").dimensioned.subs({P: get("params.approx").dimensioned, D: tokens * c_token})
    return flops / (gpus * X * U)


def _quotient(numerator: sp.Basic, denominator: sp.Basic) -> sp.Basic:
    """numerator / denominator as written, not cancelled on construction (so the proofs have work to do)."""
    return sp.Mul(numerator, sp.Pow(denominator, -1, evaluate=False), evaluate=False)


def _proportional(dv: Derivation, need_label: str, shape: sp.Basic, shape_text: str, constant: sp.Basic, free: tuple) -> None:
    """Prove need / shape is a constant free of every variable in ``free``: simplify it, and show each derivative is 0."""
    label = f"need/({shape_text})"
    ratio = dv.defines(label, _quotient(dv.step(need_label).expr, shape), f"divide by the claimed shape {shape_text}")
    dv.equals(f"{label} = constant", constant, f"what is left holds none of {', '.join(map(str, free))}", of=label, aside=True)
    for variable in free:
        dv.defines(f"∂/∂{variable}", sp.diff(ratio, variable), f"the quotient's rate of change in {variable}")
        dv.equals(f"∂/∂{variable} = 0", sp.Integer(0), f"exactly 0: the need is proportional to {shape_text} whatever {variable} is", aside=True)


def zero3_sent() -> Derivation:
    dv = Derivation("comms.zero.stage3.sent", "ZeRO-3 under 3D parallelism: the bytes actually sent", (ZERO, TABLE5))
    shard = q_w * P / (t * p)
    dv.defines(
        "V_ZeRO3^sent",
        2 * collective("allgather", shard, d) + collective("reduce_scatter", shard, d),
        "each GPU's Ψ/(t·p) parameters are all-gathered for the forward and again for the backward, and their "
        "gradients reduce-scattered, each a ring over the d replicas",
    )
    dv.concludes("comms.zero.stage3.sent")
    return dv


def bandwidth_tp() -> Derivation:
    dv = Derivation("comms.bandwidth.tp", "TP bandwidth need ∝ t/h", (NEEDS,))
    time = dv.defines("T_mb", _compute_time(b * s, t * p), "a micro-batch of b·s tokens at 6Ψ each, Ψ ≈ 12lh², on the t·p GPUs of a replica")
    volume = dv.defines("V_TP", get("comms.tp.per_microbatch").part, "the TP all-reduce volume of the same micro-batch")
    dv.defines("W_TP", _quotient(volume, sp.Mul(r, time, evaluate=False)), "the all-reduces may take r of the compute time (they cannot overlap it)")
    dv.equals("W_TP closed", q * t * X * U / (9 * c_mac * r * h), "b, s, l and p cancel: compute grows as h², traffic as h")
    dv.concludes("comms.bandwidth.tp", of="W_TP closed")
    _proportional(dv, "W_TP closed", t / h, "t/h", q * X * U / (9 * c_mac * r), (h, t, b, s, l, p))
    return dv


def bandwidth_pp() -> Derivation:
    dv = Derivation("comms.bandwidth.pp", "PP bandwidth need ∝ 1/(h·l/p)", (NEEDS,))
    time = dv.defines("T_mb", _compute_time(b * s, t * p), "a micro-batch of b·s tokens on the t·p GPUs of a replica")
    volume = dv.defines("V_PP", get("comms.pp.per_microbatch").part, "the stage-boundary traffic of the same micro-batch")
    dv.defines("W_PP", _quotient(volume, sp.Mul(r, time, evaluate=False)), "sends that do not overlap compute may take r of it")
    dv.equals("W_PP closed", q * t * p * X * U / (18 * c_mac * r * h * l), "b and s cancel")
    dv.concludes("comms.bandwidth.pp", of="W_PP closed")
    _proportional(dv, "W_PP closed", p / (h * l), "1/(h·l/p)", q * t * X * U / (18 * c_mac * r), (h, l, p, b, s))
    return dv


def bandwidth_dp() -> Derivation:
    dv = Derivation("comms.bandwidth.dp", "DP bandwidth need ∝ d/(B·s)", (NEEDS,))
    time = dv.defines("T_iter", _compute_time(B * s, t * p * d), "an iteration of B·s tokens on all n = t·p·d GPUs")
    volume = dv.defines(
        "V_DP",
        get("comms.dp.per_iteration").dimensioned.subs({P: get("params.approx").part, q_w: q / u_param}),
        "the gradient all-reduce of the iteration: Ψ ≈ 12lh² values of q bytes, split over t·p",
    )
    dv.defines("W_DP", _quotient(volume, sp.Mul(r, time, evaluate=False)), "the all-reduce waits for the backward pass, so it may take r of the iteration")
    dv.equals("W_DP closed", q * d * X * U / (3 * c_mac * r * B * s), "the model's size cancels entirely")
    dv.concludes("comms.bandwidth.dp", of="W_DP closed")
    _proportional(dv, "W_DP closed", d / (B * s), "d/(B·s)", q * X * U / (3 * c_mac * r), (d, B, s, h, l, t, p))
    return dv


# --- 001: the largest useful TP degree ----------------------------------------------



def attention_intensity() -> Derivation:
    dv = Derivation("comms.tp.attention_intensity", "FLOPs per byte of a TP GPU's attention projections", (LI_TP,))
    work = dv.defines("F_QKV", gemm(b * s, h, 3 * h / t), "each GPU computes its h/t columns of Q, K and V: [bs, h] × [h, 3h/t]")
    traffic = dv.defines("V_X", b * s * h * q, "and must receive the whole input X, b·s·h values")
    dv.defines("I_TP", _quotient(work, traffic), "compute per byte moved")
    dv.equals("2·3·(h/t)/q", 3 * c_mac * h / (t * q), "b and s cancel: 2·3·(h/t)/q")
    dv.concludes("comms.tp.attention_intensity")
    return dv


def required_link() -> Derivation:
    dv = Derivation("comms.tp.required_link", "One-way link bandwidth TP needs", (LI_TP,))
    dv.defines("W_min", X / get("comms.tp.attention_intensity").part, "the link must deliver a byte per I_TP FLOPs at the GPU's X")
    dv.concludes("comms.tp.required_link")
    return dv


def max_degree() -> Derivation:
    dv = Derivation("comms.tp.max_degree", "The largest TP degree, by solving an inequality", (LI_TP,))
    intensity = dv.defines("I_TP", get("comms.tp.attention_intensity").part, "2·3·(h/t)/q FLOPs per byte received")
    needed = dv.defines("I_needed", X / (W_link / 2), "a link of W_link both ways carries W_link/2 each way: the GPU needs X/(W_link/2) FLOPs per byte")
    solution = sp.solve_univariate_inequality(intensity >= needed, t, relational=True)
    if not (isinstance(solution, sp.LessThan) and solution.lhs == t):
        raise ValueError(f"comms.tp.max_degree: expected t ≤ bound, SymPy gave {solution}")
    dv.solves("t_max", solution.rhs, "SymPy solves I_TP(t) ≥ I_needed for t: the intensity falls as 1/t, so t ≤ t_max; "
              "at the bound the GPU computes exactly as fast as the link feeds it", unknown=t, target=needed, of="I_TP")
    dv.equals("t_max closed", 3 * c_mac * h * W_link / (2 * q * X), "3·c·h·W_link/(2qX)")
    dv.concludes("comms.tp.max_degree", of="t_max closed")
    llama = {h: 8192, q: 2}
    h100 = {**llama, X: 989 * 10**12, W_link: 900 * 10**9}
    dv.refutes(
        "001: H100 needs 1100",
        sp.Integer(1100),
        "001 divides the H100's 989 TFLOPS by the whole 900 GB/s of NVLink; the link carries half of that each way, "
        "so by the article's own rule the GPU needs 989T / 450G ≈ 2198 FLOPs per byte",
        correct=needed.subs(h100),
        source=LI_TP,
    )
    dv.refutes(
        "001: 1100 gives t ≤ 11",
        sp.Integer(11),
        "from 1100 FLOPs per byte the inequality 2·3·8192/t/2 ≥ 1100 allows t ≤ 22.3, not 11; "
        "001's t ≤ 11 is right only for the 2198 its figures give",
        correct=solution.rhs.subs(X, 1100 * W_link / 2).subs(llama),
        source=LI_TP,
    )
    dv.refutes(
        "S11e: H800 t ≤ 4.8",
        sp.Rational("4.8"),
        "001 prints t ≤ 4.8 for the H800 (989 TFLOPS, 400 GB/s NVLink); its own formula gives 4.97",
        correct=solution.rhs.subs({**llama, X: 989 * 10**12, W_link: 400 * 10**9}),
        source=LI_TP,
    )
    return dv


def nic_time() -> Derivation:
    d = Derivation("comms.nic.time", "001's gradient exchange over a machine's NICs", (LI_NIC,))
    d.defines("x_out", q_fp32 * P, "each GPU sends its fp32 gradients, aggregated over its micro-batches first: 4 bytes per parameter (001: 4 GB for ~1B)")
    d.defines("x_in", q_fp32 * P, "and receives the averaged gradients back")
    per_gpu = d.defines("x_GPU", 2 * q_fp32 * P, "per GPU per step (001: 2 × 4 GB)", parts=("x_out", "x_in"))
    machine = d.defines("x_node", g_node * per_gpu, "the g GPUs of a machine go out through its NICs")
    d.defines("T", machine / (k_nic * W_nic), "k NICs carry k·W_NIC together")
    d.concludes("comms.nic.time")
    return d


def nic_count() -> Derivation:
    d = Derivation("comms.nic.count", "NICs for a time budget, and 001's eight", (LI_NIC,))
    d.defines("T(k)", get("comms.nic.time").part, "the exchange time with k NICs (comms.nic.time), falling as 1/k")
    d.solves("k_τ", 2 * g_node * q_fp32 * P / (tau * W_nic), "the NIC count at which the exchange takes τ", unknown=k_nic, target=tau, of="T(k)")
    d.concludes("comms.nic.count")
    article = {g_node: 8, P: 10**9, W_nic: 25 * 10**9}
    d.refutes(
        "S29: 8 NICs for under 1 s",
        sp.Integer(8),
        "001 asks for 8 ConnectX-6 200 Gb/s NICs for a machine of 8 GPUs so that the 2 × 4 GB per GPU take under 1 s; "
        "64 GB at 25 GB/s per NIC takes 2.56 NICs for 1 s (3 whole ones). 8 is one NIC per GPU: 0.32 s, and 200 of the "
        "256 GB/s the GPUs' PCIe Gen4 x16 links send (matching them takes 10.24)",
        correct=(2 * g_node * q_fp32 * P / (tau * W_nic)).subs({**article, tau: 1}),
        source=LI_NIC,
    )
    d.refutes(
        "S30: 8 NICs push PCIe Gen4 out",
        sp.Integer(8),
        "001's 8 NICs are to push the GPUs' PCIe Gen4 bandwidth out through the network: each x16 link sends 32 GB/s, "
        "8 GB in 0.25 s, and at that pace the machine's 64 GB need 10.24 NICs of 25 GB/s; 8 carry 78 % of it",
        correct=(2 * g_node * q_fp32 * P / (tau * W_nic)).subs({**article, tau: sp.Rational(1, 4)}),
        source=LI_NIC,
    )
    return d


DERIVATIONS = (
    ring_allreduce,
    *(partial(sends, name) for name in PRIMITIVES if name != "allreduce"),
    *(partial(redundancy, name) for name in PRIMITIVES),
    ring_steps,
    tree_steps,
    bus_bandwidth,
    tp_per_microbatch,
    tp_sent,
    sp_sent,
    partial(per_iteration, "comms.tp.per_iteration", "comms.tp.per_microbatch"),
    pp_per_microbatch,
    partial(per_iteration, "comms.pp.per_iteration", "comms.pp.per_microbatch"),
    pp_interleaved,
    dp_per_iteration,
    dp_sent,
    partial(zero, 1),
    partial(zero, 2),
    partial(zero, 3),
    zero3_sent,
    bandwidth_tp,
    bandwidth_pp,
    bandwidth_dp,
    attention_intensity,
    required_link,
    max_degree,
    nic_time,
    nic_count,
)
