"""``llm-formulas estimate``: the training and inference report (formulas/estimate.py).

    llm-formulas estimate --model llama2-70b --gpu a100-80gb --tp 8 --pp 4 --dp 2 \\
        --micro-batch 1 --global-batch 32 --seq 4096 --tokens 2e12

Readable tables by default, ``--json`` for one document (numbers as floats,
integers where exact). An impossible layout is one line on stderr and exit 2.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from render.cli.model_commands import add_model_source, load_architecture
from render.cli.numbers import InputError, quote
from render.cli.result import Result, number_json

if TYPE_CHECKING:
    from formulas.estimate import Inputs, Layout
    from formulas.gpus import GPU

RECOMPUTE_CHOICES = ("none", "selective", "full")  # formulas.estimate.RECOMPUTE_MODES, named here so --help loads no SymPy

DEFAULTS = {"overlap": "0.5", "network": "25"}  # r = 1/2 (with --mfu); 200 Gb/s per GPU


def add_source_arguments(command: argparse.ArgumentParser) -> None:
    """--hf-config | --model, and --gpu (shared with ``plan``)."""
    add_model_source(command)
    command.add_argument("--gpu", required=True, metavar="GPU", help="GPU preset, e.g. a100-80gb or h100-sxm (an unknown name lists them all)")


def add_assumption_arguments(command: argparse.ArgumentParser) -> None:
    """--seq, --tokens, --mfu, --overlap, --network (shared with ``plan``)."""
    command.add_argument("--seq", required=True, metavar="S", help="sequence length s in tokens")
    command.add_argument("--tokens", metavar="D", help="training tokens (default 20 per parameter)")
    command.add_argument("--mfu", metavar="U", help="assume this model FLOPs utilization instead of predicting the step time "
                                                      "(000 §3.5 uses 0.5); without it MFU and HFU are predicted")
    command.add_argument("--overlap", default=DEFAULTS["overlap"], metavar="R",
                         help="with --mfu: share of compute time that communication may hide under (default 0.5)")
    command.add_argument("--flash-attention", action="store_true",
                         help="predict with fused (Flash) attention: no s² scores through memory")
    command.add_argument("--network", default=DEFAULTS["network"], metavar="GB/s",
                         help="inter-node bandwidth per GPU for PP and DP traffic, GB/s (default 25 = 200 Gb/s)")


def add_arguments(command: argparse.ArgumentParser) -> None:
    add_source_arguments(command)
    command.add_argument("--gpus", metavar="N", help="GPUs in all (default t·p·d)")
    command.add_argument("--tp", default="1", metavar="T", help="tensor parallel degree t (default 1)")
    command.add_argument("--pp", default="1", metavar="P", help="pipeline parallel degree p (default 1)")
    command.add_argument("--dp", default="1", metavar="D", help="data parallel degree d (default 1)")
    command.add_argument("--interleave", default="1", metavar="V", help="virtual pipeline stages per GPU v (default 1)")
    command.add_argument("--micro-batch", default="1", metavar="B", help="micro-batch size b in sequences (default 1)")
    batch = command.add_mutually_exclusive_group()
    batch.add_argument("--micro-batches", metavar="M", help="micro-batches per iteration m")
    batch.add_argument("--global-batch", metavar="B", help="global batch in sequences (a multiple of b·d)")
    command.add_argument("--zero", default="0", choices=["0", "1", "2", "3"], help="ZeRO stage (default 0)")
    command.add_argument("--recompute", default="selective", choices=RECOMPUTE_CHOICES, help="activation recompute (default selective)")
    command.add_argument("--sequence-parallel", action="store_true", help="Megatron sequence parallelism")
    add_assumption_arguments(command)


def chosen_gpu(name: str) -> GPU:
    """The GPU preset called ``name``; bad input lists the known presets."""
    from formulas.gpus import PRESETS

    if name not in PRESETS:
        raise InputError(f"unknown GPU {quote(name)}; known: {', '.join(sorted(PRESETS))}")
    return PRESETS[name]


def read_layout(args: argparse.Namespace) -> Layout:
    from formulas.estimate import Layout
    from render.cli.inputs import parse_count

    t, p, d = parse_count(args.tp, "t"), parse_count(args.pp, "p"), parse_count(args.dp, "d")
    b = parse_count(args.micro_batch, "b")
    if args.global_batch is not None:
        global_batch = parse_count(args.global_batch, "B")
        if global_batch % (b * d):
            raise InputError(f"the global batch {global_batch} must be a multiple of b·d = {b * d}")
        m = global_batch // (b * d)
    else:
        m = parse_count(args.micro_batches or "1", "m")
    n = parse_count(args.gpus, "n") if args.gpus is not None else t * p * d
    return Layout(
        n=n, t=t, p=p, d=d, b=b, m=m, s=parse_count(args.seq, "s"), v=parse_count(args.interleave, "v"),
        zero=int(args.zero), recompute=args.recompute, sequence_parallel=args.sequence_parallel,
    )


def read_inputs(args: argparse.Namespace, model: dict[str, int]) -> Inputs:
    """The GPU and the assumptions (--mfu, --overlap, --network, --tokens) as exact values; without --mfu the
    GPU's performance constants (one line and exit 2 for a GPU that has none)."""
    from formulas.calibration import NoCalibration, efficiency
    from formulas.gpus import NODE_SIZE
    from formulas.estimate import Inputs
    from formulas.symbols import quantity
    from render.cli.inputs import check_value, parse_number

    preset = chosen_gpu(args.gpu)
    utilization = None if args.mfu is None else check_value(quantity("U"), parse_number(args.mfu, "--mfu"))
    performance = None
    if utilization is None:
        try:
            performance = efficiency(args.gpu)
        except NoCalibration as error:
            raise InputError(str(error)) from None
    overlap = check_value(quantity("r"), parse_number(args.overlap, "--overlap"))
    network = parse_number(args.network, "--network") * 10**9
    if network <= 0:
        raise InputError(f"--network must be positive, got {args.network}")
    tokens = parse_number(args.tokens, "--tokens", suffix_allowed=True) if args.tokens is not None else None
    if tokens is not None and tokens <= 0:
        raise InputError(f"--tokens must be positive, got {args.tokens}")
    return Inputs(
        model=model,
        gpu=preset.inputs(),
        network=network,
        tokens=tokens,
        utilization=utilization,
        overlap=overlap,
        efficiency=performance,
        node_size=NODE_SIZE[args.gpu],
        flash=args.flash_attention,
    )


def run(args: argparse.Namespace) -> Result:
    from formulas.estimate import LayoutError, check_layout, estimate, model_values

    architecture, label = load_architecture(args.hf_config, args.model)
    model = model_values(architecture.values)
    layout = read_layout(args)
    try:
        check_layout(layout, model)
    except LayoutError as error:
        raise InputError(f"invalid layout: {error}") from None
    inputs = read_inputs(args, model)
    report = estimate(layout, inputs)
    doc = {
        "model": label,
        "gpu": chosen_gpu(args.gpu).name,
        "layout": {
            "n": layout.n, "t": layout.t, "p": layout.p, "d": layout.d, "v": layout.v, "b": layout.b, "m": layout.m,
            "B": layout.global_batch, "s": layout.s, "zero": layout.zero, "recompute": layout.recompute,
            "sequence_parallel": layout.sequence_parallel,
        },
        "assumptions": assumptions_json(inputs),
    } | _to_json(report)
    return Result(doc, render_text(doc))


def assumptions_json(inputs: Inputs) -> dict[str, object]:
    common = {"network_bytes_per_second": float(inputs.network), "gpus_per_node": inputs.node_size}
    if inputs.utilization is not None:
        return {"mode": "given", "U": float(inputs.utilization), "r": float(inputs.overlap)} | common
    constants = inputs.efficiency
    return {"mode": "predicted", "flash_attention": inputs.flash, "constants": {
        "eta_gemm": float(constants.eta_gemm), "eta_mem": float(constants.eta_mem), "tau_k": float(constants.tau_k),
        "eta_link": float(constants.eta_link), "provenance": constants.provenance}} | common


def _to_json(value: object) -> object:
    if isinstance(value, dict):
        return {key: _to_json(item) for key, item in value.items()}
    if isinstance(value, str):
        return value
    if isinstance(value, bool) or type(value).__name__ in ("BooleanTrue", "BooleanFalse"):
        return bool(value)
    return number_json(value)


def _si(value: float, unit: str) -> str:
    for factor, prefix in ((1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(value) >= factor:
            return f"{value / factor:,.3f} {prefix}{unit}"
    return f"{value:,.3f} {unit}"


def render_text(doc: dict) -> str:
    lay = doc["layout"]
    lines = [
        f"{doc['model']} on {lay['n']} × {doc['gpu']}",
        f"layout: t={lay['t']} p={lay['p']} d={lay['d']} v={lay['v']}  b={lay['b']} m={lay['m']} B={lay['B']} s={lay['s']}  "
        f"ZeRO {lay['zero']}, recompute {lay['recompute']}{', sequence parallel' if lay['sequence_parallel'] else ''}",
        "",
        "parameters",
        f"  total {doc['params']['total']:,}   active {doc['params']['active']:,}   per GPU {doc['params']['per_gpu']:,.0f}",
        "FLOPs per iteration",
        f"  forward {_si(doc['flops']['forward'], 'FLOP')}   backward {_si(doc['flops']['backward'], 'FLOP')}   "
        f"training {_si(doc['flops']['training'], 'FLOP')}   recomputed {_si(doc['flops']['recomputed'], 'FLOP')}",
        "memory per GPU (first pipeline stage)",
        f"  model states {_si(doc['memory']['model_states'], 'B')}   activations {_si(doc['memory']['activations'], 'B')} "
        f"({doc['memory']['activation_formula']})",
        f"  total {_si(doc['memory']['total'], 'B')} of {_si(doc['memory']['capacity'], 'B')}: "
        + ("fits" if doc["memory"]["fits"] else "DOES NOT FIT"),
        "communication per GPU per iteration",
    ]
    comms = doc["comms"]
    for dim in ("tp", "pp", "dp"):
        lines.append(
            f"  {dim.upper()}  {_si(comms['bytes'][dim], 'B')} in {comms['seconds'][dim]:.3f} s over "
            f"{_si(comms['link_bandwidth'][dim], 'B/s')}; needs {_si(comms['required_bandwidth'][dim], 'B/s')}"
        )
    time = doc["time"]
    lines += ["time", "  " + _mode_line(doc)] + _breakdown(time) + [
        f"  bubble {time['bubble']:.3f}   compute {time['compute_seconds']:.3f} s   exposed comms {time['exposed_comm_seconds']:.3f} s"
        f"   step {time['step_seconds']:.3f} s",
        f"  {time['iterations']:,.0f} iterations for {time['tokens']:,.0f} tokens: {time['training_days']:,.1f} days "
        f"(6ΨD at U alone: {time['ideal_days']:,.1f} days)",
        "inference (one replica of t·p GPUs, batch b)",
    ]
    inference = doc["inference"]
    lines.append(
        f"  KV cache {_si(inference['kv_cache_per_sequence'], 'B')} per sequence   token latency {inference['token_latency'] * 1e3:.2f} ms "
        f"({'memory' if inference['latency_memory_bound'] >= inference['latency_compute_bound'] else 'compute'}-bound)   "
        f"{inference['tokens_per_second']:,.1f} tokens/s   balance batch {inference['balance_batch']:.1f}"
    )
    return "\n".join(lines)


def _mode_line(doc: dict) -> str:
    time, assumptions = doc["time"], doc["assumptions"]
    if time["mode"] == "given":
        return f"MFU given: U = {time['mfu']:.3f} (--mfu); HFU {time['hfu']:.3f}"
    return (f"MFU predicted: {time['mfu']:.1%} (HFU {time['hfu']:.1%}); performance constants "
            f"{assumptions['constants']['provenance']}")


def _breakdown(time: dict) -> list[str]:
    """The predicted step split by where the time goes."""
    if time["mode"] != "predicted":
        return []
    parts = time["predicted"]
    return [f"  compute {parts['compute_seconds']:.3f} s (at {parts['compute_efficiency']:.1%} of peak)   TP {parts['tp_seconds']:.3f} s   "
            f"PP p2p {parts['pp_seconds']:.3f} s   bubble {parts['bubble_seconds']:.3f} s   DP/ZeRO exposed "
            f"{parts['dp_exposed_seconds']:.3f} s   optimizer {parts['optimizer_seconds']:.3f} s"]


def register(add_command) -> None:
    command = add_command("estimate", "the training and inference report for a model, a GPU and a parallel layout", run)
    add_arguments(command)
