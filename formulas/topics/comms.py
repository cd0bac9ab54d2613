"""Communication of 3D-parallel training (000 §3.3, §4.1.3; 001; ZeRO).

Collectives (000 Table 5, NCCL ring/tree): a GPU of n that all-reduces x bytes
sends 2(n−1)x/n (reduce-scatter then all-gather, n−1 steps of x/n each);
all-gather, reduce-scatter, all-to-all and gather send (n−1)x/n; send/recv and
broadcast x. Bus bandwidth = algorithm bandwidth × redundancy.

Per GPU: TP all-reduces b·s·h values 4 times per layer (2 forward, 2 backward)
for its l/p layers; sequence parallelism swaps each all-reduce for a
reduce-scatter and an all-gather, the same bytes; PP sends b·s·h forward and
b·s·h backward to each neighbour; DP all-reduces the Ψ/(t·p) gradients once an
iteration; ZeRO-1/2 move 2Ψ, ZeRO-3 3Ψ. Required bandwidth = traffic / (r ×
compute time of the same span): TP ∝ t/h, PP ∝ 1/(h·l/p), DP ∝ d/(B·s).
001's largest useful TP degree: 2·3·(h/t)/q FLOP per byte ≥ X/(W_link/2).
001's data parallelism over PCIe: each GPU sends its fp32 gradients and gets the
averages back, 2·4Ψ bytes a step; the g GPUs of a machine share its k NICs,
so the exchange takes 2·g·4Ψ/(k·W_NIC), and a budget τ needs 2·g·4Ψ/(τ·W_NIC)
NICs. Its "8 ConnectX-6 for 8 GPUs" is one NIC per GPU: 0.32 s, where under
1 s needs 2.56 NICs and matching PCIe Gen4 x16's 32 GB/s needs 10.24.
"""

from __future__ import annotations

import sympy as sp

from llm_formulas.formulas.vocabulary.catalogue import Condition, Source, divides, formula
from llm_formulas.formulas.vocabulary.examples import worked_example
from llm_formulas.formulas.vocabulary.symbols import (
    B, P, U, W_alg, W_link, W_nic, X, b, c_mac, d, g_node, h, k_nic, l, m, n, p, q, q_fp32, q_w, r, rho, s, t, tau, v, x_msg,
)

TABLE5 = Source("000", "§3.3.2.2, Table 5 (NCCL ring/tree redundancy)")
TABLE4 = Source("000", "§3.3.2.1, Table 4 (per-GPU traffic of 3D parallelism)")
SP_NOTE = Source("000", "§4.1.3.1, sequence parallelism keeps the traffic")
NEEDS = Source("000", "§4.1.3.1, bandwidth needs of TP, PP and DP")
LI_TP = Source("001", "tensor parallelism: compute-to-communication ratio")
ZERO = Source("rajbhandari2020", "§7, communication analysis")
NARAYANAN = Source("narayanan2021", "§3.2, §4.1")

ALGO_NOTE = (
    "algorithm bandwidth (000 counts the collective's data volume): multiply by the redundancy (comms.redundancy.*) "
    "for the bus bandwidth the links carry; with full recompute the compute time is 4/3 longer, the need 3/4"
)
GPT_SHAPE = Condition("Ψ ≈ 12lh² and 6Ψ FLOPs per token (s ≪ 6h, V ≪ 12lh), no recompute")

# --- collectives: bytes each GPU sends, and the redundancy (000 Table 5) ----------
# primitive → (redundancy, what each GPU sends in NCCL's ring/tree algorithm)
PRIMITIVES: dict[str, tuple[sp.Expr, str]] = {
    "allreduce": (2 * (n - 1) / n, "reduce-scatter then all-gather: 2(n−1) steps of x/n"),
    "reduce_scatter": ((n - 1) / n, "n−1 steps of x/n around the ring"),
    "allgather": ((n - 1) / n, "n−1 steps of x/n around the ring"),
    "alltoall": ((n - 1) / n, "x/n to each of the n−1 others"),
    "gather": ((n - 1) / n, "the root receives x/n from each of the n−1 others"),
    "broadcast": (sp.Integer(1), "the pipelined ring forwards all x once"),
    "sendrecv": (sp.Integer(1), "x to one peer"),
}

for _name, (_redundancy, _how) in PRIMITIVES.items():
    formula(
        f"comms.redundancy.{_name}",
        _redundancy,
        "1",
        f"redundancy of {_name} over n GPUs: bytes sent per GPU per byte of buffer ({_how})",
        sources=[TABLE5],
        related=[f"comms.collective.{_name}"],
        symbol_latex=rf"\rho_{{{_name.replace('_', '')}}}",
    )
    formula(
        f"comms.collective.{_name}",
        _redundancy * x_msg,
        "byte",
        f"bytes a GPU's link carries in a {_name} of an x-byte buffer over n GPUs ({_how})",
        sources=[TABLE5],
        related=[f"comms.redundancy.{_name}"],
        symbol_latex=rf"V_{{{_name.replace('_', '')}}}",
    )

ring_steps = formula(
    "comms.collective.allreduce.ring_steps",
    2 * (n - 1),
    "1",
    "sequential steps of a ring all-reduce over n GPUs (latency grows linearly in n)",
    sources=[TABLE5],
    related=["comms.collective.allreduce", "comms.collective.allreduce.tree_steps"],
    symbol_latex=r"S_{ring}",
)
tree_steps = formula(
    "comms.collective.allreduce.tree_steps",
    2 * sp.log(n, 2),
    "1",
    "sequential steps of a (double) binary tree all-reduce: reduce up, broadcast down, log₂n levels each",
    sources=[TABLE5, Source("jeaugey2019", "double binary trees"), Source("sanders2009", "two-tree reduction")],
    conditions=[Condition("n a power of 2 (otherwise round the depth up)")],
    related=["comms.collective.allreduce.ring_steps"],
    notes="the tree sends at most 2x per GPU, like the ring's 2(n−1)x/n in the limit: the two differ in latency, not bytes",
    symbol_latex=r"S_{tree}",
)
bus_bandwidth = formula(
    "comms.bus_bandwidth",
    rho * W_alg,
    "byte/second",
    "bus bandwidth (the links' real rate) = algorithm bandwidth × redundancy, as nccl-tests reports",
    sources=[TABLE5],
    related=["comms.redundancy.allreduce"],
    symbol_latex=r"W_{bus}",
)

# --- per-GPU traffic of 3D parallelism (000 Table 4, Table 11) ----------------------
tp_per_microbatch = formula(
    "comms.tp.per_microbatch",
    4 * b * s * h * q * l / p,
    "byte",
    "TP all-reduce volume per GPU per micro-batch: 4 all-reduces of b·s·h values per layer, l/p layers",
    sources=[TABLE4, NARAYANAN],
    conditions=[divides(p, l)],
    related=["comms.tp.sent_per_microbatch", "comms.collective.allreduce"],
    symbol_latex=r"V_{TP}",
)
tp_sent = formula(
    "comms.tp.sent_per_microbatch",
    4 * b * s * h * q * l / p * 2 * (t - 1) / t,
    "byte",
    "bytes each GPU sends for TP per micro-batch: the all-reduce volume × 2(t−1)/t (ring)",
    sources=[TABLE4, TABLE5],
    related=["comms.tp.per_microbatch", "comms.redundancy.allreduce", "comms.sp.per_microbatch"],
    symbol_latex=r"V_{TP}^{sent}",
)
sp_sent = formula(
    "comms.sp.per_microbatch",
    8 * b * s * h * q * l * (t - 1) / (p * t),
    "byte",
    "bytes each GPU sends for TP with sequence parallelism per micro-batch: 4 reduce-scatters and 4 all-gathers "
    "of b·s·h values per layer; the same as without SP",
    sources=[SP_NOTE, TABLE5],
    related=["comms.tp.sent_per_microbatch"],
    symbol_latex=r"V_{TP+SP}^{sent}",
)
tp_per_iteration = formula(
    "comms.tp.per_iteration",
    m * tp_per_microbatch.part,
    "byte",
    "TP all-reduce volume per GPU per iteration of m micro-batches",
    sources=[TABLE4],
    related=["comms.tp.per_microbatch"],
    symbol_latex=r"V_{TP}^{iter}",
)
pp_per_microbatch = formula(
    "comms.pp.per_microbatch",
    2 * b * s * h * q,
    "byte",
    "PP traffic between two neighbouring stages per micro-batch: b·s·h activations forward, b·s·h gradients back",
    sources=[TABLE4],
    related=["comms.collective.sendrecv"],
    notes="Megatron's scatter/gather optimisation splits this over the t GPUs of a stage (÷t each)",
    symbol_latex=r"V_{PP}",
)
pp_per_iteration = formula(
    "comms.pp.per_iteration",
    m * pp_per_microbatch.part,
    "byte",
    "PP traffic between two neighbouring stages per iteration of m micro-batches",
    sources=[TABLE4],
    related=["comms.pp.per_microbatch"],
    symbol_latex=r"V_{PP}^{iter}",
)
pp_interleaved = formula(
    "comms.pp.per_iteration.interleaved",
    v * pp_per_iteration.part,
    "byte",
    "PP traffic per GPU per iteration with v interleaved model chunks per GPU: each micro-batch crosses v·p stage boundaries",
    sources=[NARAYANAN],
    related=["comms.pp.per_iteration", "cluster.bubble.interleaved"],
    notes="the interleaved schedule divides the bubble by v and multiplies the point-to-point traffic by v",
    symbol_latex=r"V_{PP}^{iter,v}",
)
dp_per_iteration = formula(
    "comms.dp.per_iteration",
    q_w * P / (t * p),
    "byte",
    "DP all-reduce volume per GPU per iteration: the gradients of its Ψ/(t·p) parameters",
    sources=[TABLE4],
    related=["comms.dp.sent_per_iteration"],
    symbol_latex=r"V_{DP}",
)
dp_sent = formula(
    "comms.dp.sent_per_iteration",
    2 * (d - 1) / d * q_w * P / (t * p),
    "byte",
    "bytes each GPU sends for the DP gradient all-reduce per iteration (ring over d replicas)",
    sources=[TABLE4, TABLE5],
    related=["comms.dp.per_iteration", "comms.redundancy.allreduce"],
    symbol_latex=r"V_{DP}^{sent}",
)
ZERO_LARGE_D = Condition("d ≫ 1 (the ring's (d−1)/d taken as 1)")
zero_stage1 = formula(
    "comms.zero.stage1",
    2 * q_w * P,
    "byte",
    "ZeRO-1 traffic per GPU per iteration: reduce-scatter the gradients, all-gather the updated parameters (2Ψ)",
    sources=[ZERO, Source("000", "§3.4, Tables 6–8")],
    conditions=[ZERO_LARGE_D],
    related=["comms.dp.sent_per_iteration"],
    symbol_latex=r"V_{ZeRO1}",
)
zero_stage2 = formula(
    "comms.zero.stage2",
    2 * q_w * P,
    "byte",
    "ZeRO-2 traffic per GPU per iteration: as ZeRO-1, gradients reduce-scattered as they are produced (2Ψ)",
    sources=[ZERO, Source("000", "§3.4, Tables 6–8")],
    conditions=[ZERO_LARGE_D],
    related=["comms.zero.stage1"],
    symbol_latex=r"V_{ZeRO2}",
)
zero_stage3 = formula(
    "comms.zero.stage3",
    3 * q_w * P,
    "byte",
    "ZeRO-3 traffic per GPU per iteration: all-gather parameters for forward and for backward, reduce-scatter gradients (3Ψ)",
    sources=[ZERO, Source("000", "§3.4, Tables 6–8")],
    conditions=[ZERO_LARGE_D],
    related=["comms.zero.stage1"],
    symbol_latex=r"V_{ZeRO3}",
)
zero3_sent = formula(
    "comms.zero.stage3.sent",
    3 * (d - 1) / d * q_w * P / (t * p),
    "byte",
    "bytes each GPU sends for ZeRO-3 per iteration under 3D parallelism: two all-gathers of its Ψ/(t·p) parameters "
    "and a reduce-scatter of their gradients, rings over d replicas",
    sources=[ZERO, TABLE5],
    related=["comms.zero.stage3", "comms.dp.sent_per_iteration"],
    symbol_latex=r"V_{ZeRO3}^{sent}",
)

# --- bandwidth requirements (000 §4.1.3) ---------------------------------------------
bandwidth_tp = formula(
    "comms.bandwidth.tp",
    q * t * X * U / (9 * c_mac * r * h),
    "byte/second",
    "bandwidth each GPU needs so TP all-reduces take at most r of the compute time (∝ t/h)",
    sources=[NEEDS],
    conditions=[GPT_SHAPE],
    related=["comms.tp.per_microbatch"],
    notes=ALGO_NOTE,
    symbol_latex=r"W_{TP}",
)
bandwidth_pp = formula(
    "comms.bandwidth.pp",
    q * t * p * X * U / (18 * c_mac * r * h * l),
    "byte/second",
    "bandwidth each GPU needs so PP sends take at most r of the compute time (∝ 1/(h·l/p))",
    sources=[NEEDS],
    conditions=[GPT_SHAPE],
    related=["comms.pp.per_microbatch"],
    notes="with Megatron's scatter/gather of the stage boundary the factor t drops out; " + ALGO_NOTE,
    symbol_latex=r"W_{PP}",
)
bandwidth_dp = formula(
    "comms.bandwidth.dp",
    q * d * X * U / (3 * c_mac * r * B * s),
    "byte/second",
    "bandwidth each GPU needs so the DP gradient all-reduce takes at most r of an iteration's compute (∝ d/(B·s))",
    sources=[NEEDS],
    conditions=[GPT_SHAPE],
    related=["comms.dp.per_iteration"],
    notes=ALGO_NOTE,
    symbol_latex=r"W_{DP}",
)

# --- 001: the largest useful tensor-parallel degree (S11) ----------------------------
attention_intensity = formula(
    "comms.tp.attention_intensity",
    3 * c_mac * (h / t) / q,
    "FLOP/byte",
    "FLOPs of Q, K, V projections per byte of input each TP GPU receives: 2·3·(h/t)/q",
    sources=[LI_TP],
    related=["comms.tp.max_degree"],
    symbol_latex=r"I_{TP}",
)
required_link = formula(
    "comms.tp.required_link",
    q * t * X / (3 * c_mac * h),
    "byte/second",
    "one-way link bandwidth at which TP communication keeps up with the attention projections: X / I_TP",
    sources=[LI_TP],
    related=["comms.tp.attention_intensity"],
    symbol_latex=r"W_{TP}^{min}",
)
max_degree = formula(
    "comms.tp.max_degree",
    3 * c_mac * h * W_link / (2 * q * X),
    "1",
    "largest TP degree before communication becomes the bottleneck, W_link counting both directions",
    sources=[LI_TP],
    related=["comms.tp.attention_intensity"],
    symbol_latex=r"t_{max}",
)

LI_NIC = Source("001", "data parallelism over PCIe: 80 micro-batches aggregated, 8 ConnectX-6 200 Gbps RDMA NICs for 8 GPUs")
nic_time = formula(
    "comms.nic.time",
    2 * g_node * q_fp32 * P / (k_nic * W_nic),
    "second",
    "time a machine's k NICs take to send each of its g GPUs' fp32 gradients (Ψ parameters per GPU) and receive the averages back",
    sources=[LI_NIC],
    related=["comms.nic.count", "comms.dp.per_iteration"],
    symbol_latex=r"T_{NIC}",
)
nic_count = formula(
    "comms.nic.count",
    2 * g_node * q_fp32 * P / (tau * W_nic),
    "1",
    "NICs a machine needs to send its g GPUs' fp32 gradients and receive the averages back within τ",
    sources=[LI_NIC],
    related=["comms.nic.time"],
    symbol_latex=r"k_{NIC}^{\tau}",
)

# --- worked examples (SOURCES.md) ---------------------------------------------------
_LI_TP_CASE = Source("001", "tensor parallelism: 384, 859 GB/s, t ≤ 2.4 / 11 / 4.8 / 1.6")
worked_example(
    "S11a",
    "One attention head per GPU, LLaMA-2 70B (h=8192, 64 heads)",
    _LI_TP_CASE,
    "comms.tp.attention_intensity",
    {"h": 8192, "t": 64, "q": 2},
    claimed=384,
    claimed_text="384 FLOPs per byte",
    scale_name="FLOP/byte",
)
worked_example(
    "S11b",
    "Link bandwidth one head per RTX 4090 needs (330 TFLOPS)",
    _LI_TP_CASE,
    "comms.tp.required_link",
    {"h": 8192, "t": 64, "q": 2, "X": 330 * 10**12},
    claimed=859 * 10**9,
    claimed_text="859 GB/s one way (1.7 TB/s both ways)",
    scale=10**9,
    scale_name="GB/s",
)
for _case, _gpu, _flops, _link, _claimed in (
    ("S11c", "RTX 4090 on PCIe Gen4 (330 TFLOPS, 64 GB/s)", 330, 64, "2.4"),
    ("S11d", "H100 on NVLink (989 TFLOPS, 900 GB/s)", 989, 900, "11"),
    ("S11e", "H800 on NVLink (989 TFLOPS, 400 GB/s)", 989, 400, "4.8"),
    ("S11f", "H100 on PCIe Gen5 (989 TFLOPS, 128 GB/s)", 989, 128, "1.6"),
):
    worked_example(
        _case,
        f"Largest useful TP degree, {_gpu}",
        _LI_TP_CASE,
        "comms.tp.max_degree",
        {"h": 8192, "q": 2, "X": _flops * 10**12, "W_link": _link * 10**9},
        claimed=_claimed,
        claimed_text=f"t ≤ {_claimed}",
        slip="001 prints 4.8; its own figures give 4.97" if _link == 400 else "",
    )
_NIC = {"g_node": 8, "P": 10**9, "W_nic": 25 * 10**9}  # 001: 8 GPUs a machine, ~1B parameters a stage, ConnectX-6 200 Gb/s
worked_example(
    "S28",
    "LLaMA-2 70B on 80 stages of ~1B parameters, 8 GPUs and 8 ConnectX-6 NICs a machine: the gradient exchange of one step",
    LI_NIC,
    "comms.nic.time",
    {**_NIC, "k_nic": 8},
    claimed=None,
    claimed_text="communication under 1 s of a 48 s step (80 micro-batches × 0.6 s)",
    scale_name="s",
)
worked_example(
    "S29",
    "The same exchange within 1 s: NICs a machine of 8 GPUs needs",
    LI_NIC,
    "comms.nic.count",
    {**_NIC, "tau": 1},
    claimed=8,
    claimed_text="basically 8 ConnectX-6 200 Gbps RDMA NICs for 8 GPUs",
    slip="under 1 s takes 2.56 NICs (3 whole ones); 8 is one NIC per GPU, which exchanges in 0.32 s",
)
worked_example(
    "S30",
    "The same exchange at PCIe Gen4 x16's pace (8 GB at 32 GB/s one way: 0.25 s): NICs that push it all out",
    LI_NIC,
    "comms.nic.count",
    {**_NIC, "tau": "1/4"},
    claimed=8,
    claimed_text="enough NICs to push PCIe Gen4's bandwidth out through the network: basically 8",
    slip="matching PCIe Gen4 x16 takes 10.24 NICs; 8 carry 200 of the 256 GB/s the 8 GPUs' links send (78 %)",
)
