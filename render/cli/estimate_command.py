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
ATTENTION_CHOICES = ("eager", "flash")  # formulas.estimate.ATTENTION_KERNELS
TOKENS_PER_PARAMETER = 20  # formulas.estimate.TOKENS_PER_PARAMETER (Hoffmann et al. 2022), the default D

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
    command.add_argument("--attention", default="eager", choices=ATTENTION_CHOICES,
                         help="attention kernel: eager stores and moves the s×s scores, flash (FlashAttention) neither "
                              "(memory and predicted time; default eager)")
    command.add_argument("--flash-attention", dest="attention", action="store_const", const="flash",
                         help="the same as --attention flash")
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
        zero=int(args.zero), recompute=args.recompute, sequence_parallel=args.sequence_parallel, attention=args.attention,
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
        flash=args.attention == "flash",
    )


def run(args: argparse.Namespace) -> Result:
    from formulas.estimate import LayoutError, check_layout, estimate, model_values

    from formulas.presets import preset

    architecture, label = load_architecture(args.hf_config, args.model)
    source = preset(args.model).source if args.model is not None else None
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
        "source": source,
        "gpu": chosen_gpu(args.gpu).name,
        "layout": {
            "n": layout.n, "t": layout.t, "p": layout.p, "d": layout.d, "v": layout.v, "b": layout.b, "m": layout.m,
            "B": layout.global_batch, "s": layout.s, "zero": layout.zero, "recompute": layout.recompute,
            "sequence_parallel": layout.sequence_parallel, "attention": layout.attention,
        },
        "assumptions": assumptions_json(inputs) | {"tokens_default": args.tokens is None},
    } | _to_json(report)
    doc["units"] = report_units(doc)
    return Result(doc, render_text(doc))


# The unit of each figure of the report, by path (first matching pattern wins); --json carries them
UNITS = (
    ("params.*", "parameter"), ("flops.per_token", "FLOP/token"), ("flops.*", "FLOP"),
    ("memory.fits", "bool"), ("memory.max_micro_batch", "sequence"), ("memory.activation_formula", "formula id"),
    ("memory.*", "byte"), ("comms.bytes.*", "byte"), ("comms.seconds.*", "second"), ("comms.*", "byte/second"),
    ("time.*_seconds", "second"), ("time.*_days", "day"), ("time.tokens", "token"), ("time.gpu_hours", "GPU-hour"),
    ("time.tokens_per_gpu_second", "token/second"), ("time.*", "1"),
    ("inference.latency_*", "second"), ("inference.token_latency", "second"), ("inference.tokens_per_second", "token/second"),
    ("inference.sequences_in_flight", "sequence"), ("inference.balance_batch", "sequence"), ("inference.*", "byte"),
)


def report_units(doc: dict) -> dict[str, str]:
    """{"memory.total": "byte", ...} for every number of the report's sections."""
    from fnmatch import fnmatchcase

    paths = [f"{section}.{key}" if not isinstance(value, dict) else f"{section}.{key}.{inner}"
             for section in ("params", "flops", "memory", "comms", "time", "inference")
             for key, value in doc[section].items() for inner in (value if isinstance(value, dict) else [None])]
    return {path: next(unit for pattern, unit in UNITS if fnmatchcase(path, pattern)) for path in paths}


def assumptions_json(inputs: Inputs) -> dict[str, object]:
    common = {"network_bytes_per_second": float(inputs.network), "gpus_per_node": inputs.node_size, "bytes_per_value": 2}
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


def render_text(doc: dict) -> str:
    """The report a person reads: human units, the assumptions first, a parallel dimension of degree 1 left out."""
    from render.printers.human import human, significant

    lay, assumed, params, flops = doc["layout"], doc["assumptions"], doc["params"], doc["flops"]
    memory, comms, time, inference = doc["memory"], doc["comms"], doc["time"], doc["inference"]
    settings = [f"ZeRO {lay['zero']}", f"recompute {lay['recompute']}", f"{lay['attention']} attention"]
    if lay["sequence_parallel"]:
        settings.append("sequence parallel")
    tokens = f"{human(time['tokens'], '1')} tokens" + (f" ({TOKENS_PER_PARAMETER} per parameter)" if assumed["tokens_default"] else "")
    if assumed["mode"] == "given":
        speed = f"MFU U = {_percent(assumed['U'])} (given), communication hidden under {_percent(assumed['r'])} of compute"
    else:
        speed = f"step time predicted from the GPU's performance constants ({assumed['constants']['provenance']})"
    lines = [f"{doc['model']} on {lay['n']} × {doc['gpu']}"]
    if doc.get("source"):
        lines.append(f"  source: {doc['source']}")
    lines += [
        f"layout: t={lay['t']} p={lay['p']} d={lay['d']} v={lay['v']}  b={lay['b']} m={lay['m']} B={lay['B']} s={lay['s']}  "
        + ", ".join(settings),
        f"assumes: {speed}, {tokens}, network {human(assumed['network_bytes_per_second'], 'byte/second')} per GPU "
        f"(PP, DP), {assumed['gpus_per_node']} GPUs per node, bf16 weights and activations (2 bytes), mixed-precision Adam",
        "",
        "parameters",
        f"  total {human(params['total'], '1')}   active {human(params['active'], '1')}   "
        f"per GPU {human(params['per_gpu_stored'], '1')}" + (" (ZeRO-3 shard)" if lay["zero"] == 3 and lay["d"] > 1 else ""),
        "FLOPs per iteration",
        f"  forward {human(flops['forward'], 'FLOP')}   backward {human(flops['backward'], 'FLOP')}   "
        f"training {human(flops['training'], 'FLOP')}   recomputed {human(flops['recomputed'], 'FLOP')}",
        "memory per GPU (first pipeline stage)",
        f"  model states {human(memory['model_states'], 'byte')}   activations {human(memory['activations'], 'byte')} "
        f"({memory['activation_formula']})",
        f"  total {human(memory['total'], 'byte')} of {human(memory['capacity'], 'byte')}: "
        + (f"fits, {human(memory['left'], 'byte')} left" if memory["fits"]
           else f"DOES NOT FIT, {human(-memory['left'], 'byte')} over"),
        f"  largest micro-batch that fits: {memory['max_micro_batch']:,}",
    ]
    degrees = {"tp": lay["t"], "pp": lay["p"], "dp": lay["d"]}
    used = [dim for dim in ("tp", "pp", "dp") if degrees[dim] > 1]
    if used:
        lines.append("communication per GPU per iteration")
    for dim in used:
        lines.append(
            f"  {dim.upper()}  {human(comms['bytes'][dim], 'byte')} in {human(comms['seconds'][dim], 'second')} over "
            f"{human(comms['link_bandwidth'][dim], 'byte/second')}; needs {human(comms['required_bandwidth'][dim], 'byte/second')}"
        )
    lines += ["time", "  " + _mode_line(doc), _step_line(time, lay["p"] > 1),
        f"  {time['iterations']:,} iterations for {human(time['tokens'], '1')} tokens: "
        f"{human(time['training_days'] * 86400, 'second')}, {human(time['gpu_hours'], '1')} GPU-hours, "
        f"{significant(time['tokens_per_gpu_second'])} tokens/s per GPU (6ΨD at that MFU alone: {human(time['ideal_days'] * 86400, 'second')})",
        f"inference (one replica of t·p = {lay['t'] * lay['p']} GPU{'s' if lay['t'] * lay['p'] > 1 else ''}, "
        f"batches of b = {lay['b']})",
    ]
    bound = "memory" if inference["latency_memory_bound"] >= inference["latency_compute_bound"] else "compute"
    in_flight = f", {inference['sequences_in_flight']:,} sequences in flight" if lay["p"] > 1 else ""
    lines.append(
        f"  KV cache {human(inference['kv_cache_per_sequence'], 'byte')} per sequence   token latency "
        f"{human(inference['token_latency'], 'second')} ({bound}-bound"
        + (f", {lay['p']} stages in series" if lay["p"] > 1 else "") + f")   "
        f"{significant(inference['tokens_per_second'])} tokens/s{in_flight}   balance batch {significant(inference['balance_batch'])}"
    )
    return "\n".join(lines)


def _percent(fraction: float) -> str:
    from render.printers.human import significant

    return f"{significant(100 * fraction)} %"


def _step_line(time: dict, piped: bool) -> str:
    """The step split by where the time goes: the performance model's parts, or compute, bubble and what
    communication the overlap leaves exposed."""
    from render.printers.human import human

    step = f"  step {human(time['step_seconds'], 'second')}: "
    if time["mode"] == "predicted":
        parts = time["predicted"]
        return step + (f"compute {human(parts['compute_seconds'], 'second')} (at {_percent(parts['compute_efficiency'])} "
                       f"of peak)   TP {human(parts['tp_seconds'], 'second')}   PP p2p {human(parts['pp_seconds'], 'second')}   "
                       f"bubble {human(parts['bubble_seconds'], 'second')}   DP/ZeRO exposed "
                       f"{human(parts['dp_exposed_seconds'], 'second')}   optimizer {human(parts['optimizer_seconds'], 'second')}")
    bubble = f"bubble {_percent(time['bubble'])} ({human(time['bubble_seconds'], 'second')})   " if piped else ""
    return step + (f"compute {human(time['compute_seconds'], 'second')}   {bubble}"
                   f"exposed comms {human(time['exposed_comm_seconds'], 'second')}")


def _mode_line(doc: dict) -> str:
    time, assumptions = doc["time"], doc["assumptions"]
    if time["mode"] == "given":
        return (f"MFU given: U = {time['mfu']:.3f} (--mfu); HFU {time['hfu']:.3f} (recompute counted); "
                f"achieved over the whole step: MFU {time['step_mfu']:.1%}")
    return (f"MFU predicted: {time['mfu']:.1%} (HFU {time['hfu']:.1%}, recompute counted); performance constants "
            f"{assumptions['constants']['provenance']}")


def register(add_command) -> None:
    command = add_command("estimate", "the training and inference report for a model, a GPU and a parallel layout", run)
    add_arguments(command)
