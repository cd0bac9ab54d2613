"""``llm-formulas plan``: the fastest parallel layouts that fit (render/numeric/plan.py).

    llm-formulas plan --model megatron-1t --gpu a100-80gb --gpus 3072 --global-batch 3072 --seq 2048

Every valid (t, p, d, b, m, v, ZeRO stage, recompute mode, sequence parallelism)
of n GPUs is evaluated by the same glue as ``estimate`` (formulas/estimate.py)
through the generated NumPy code; those that don't fit are dropped; the best
``--top`` distinct (t, p, d, b, m, v), each at its best setting, are shown with
why each ranks where it does. ``--json``: one document with the ranked list.
"""

from __future__ import annotations

import argparse

from render.cli.estimate_command import add_assumption_arguments, add_source_arguments, assumptions_json, chosen_gpu, read_inputs
from render.cli.model_commands import load_architecture
from render.cli.numbers import InputError, parse_fraction
from render.cli.progress import Progress
from render.cli.result import Result
from render.numeric import GPUS_PER_NODE


def add_arguments(command: argparse.ArgumentParser) -> None:
    add_source_arguments(command)
    command.add_argument("--gpus", required=True, metavar="N", help="GPUs in all")
    command.add_argument("--global-batch", required=True, metavar="B", help="global batch in sequences")
    add_assumption_arguments(command)
    command.add_argument("--top", default="5", metavar="K", help="how many layouts to show (default 5)")
    command.add_argument("--max-tp", default=str(GPUS_PER_NODE), metavar="T",
                         help=f"largest tensor-parallel degree: TP traffic is priced at NVLink speed, inside a node "
                              f"(default {GPUS_PER_NODE}; 0 for no limit)")


PLAN_LIMIT = 10**7  # GPUs or sequences: far beyond any cluster, small enough to enumerate


def _whole(text: str, option: str, least: int) -> int:
    value = parse_fraction(text, option)
    if value.denominator != 1 or value < least:
        raise InputError(f"{option} must be a whole number of at least {least}, got {text}")
    return int(value)


def run(args: argparse.Namespace) -> Result:
    from formulas.estimate import model_values
    from render.cli.inputs import parse_count
    from render.numeric.plan import SpaceTooLarge, plan

    architecture, label = load_architecture(args.hf_config, args.model)
    model = model_values(architecture.values)
    inputs = read_inputs(args, model)
    n, global_batch, s = parse_count(args.gpus, "n"), parse_count(args.global_batch, "B"), parse_count(args.seq, "s")
    for value, option in ((n, "--gpus"), (global_batch, "--global-batch")):
        if value > PLAN_LIMIT:
            raise InputError(f"{option} = {value} is beyond what plan enumerates (at most {PLAN_LIMIT:,})")
    top, max_tp = _whole(args.top, "--top", least=1), _whole(args.max_tp, "--max-tp", least=0)
    bar = Progress("plan")
    try:
        result = plan(model, inputs, n, global_batch, s, top=top, max_tp=max_tp or None, progress=bar.update)
    except SpaceTooLarge as error:
        raise InputError(str(error)) from None
    bar.close()
    doc = {"model": label, "gpu": chosen_gpu(args.gpu).name, "n": n, "global_batch": global_batch, "s": s,
           "max_tp": max_tp or None, "assumptions": assumptions_json(inputs)} | result
    return Result(doc, render_text(doc))


def render_text(doc: dict) -> str:
    lines = [
        f"{doc['model']} on {doc['n']} × {doc['gpu']}, global batch {doc['global_batch']} × {doc['s']} tokens",
        f"{doc['explored']:,} layouts explored, {doc['fitting']:,} fit",
    ]
    if not doc["explored"]:
        return "\n".join(lines + ["no valid layout: t·p·d = n needs t | a, g (t ≤ --max-tp), p | l and d | B"])
    if not doc["ranked"]:
        return "\n".join(lines + ["no layout fits: more GPUs, a smaller batch or a GPU with more memory"])
    lines.append("")
    for place, entry in enumerate(doc["ranked"], start=1):
        lay = entry["layout"]
        lines += [
            f"{place}. t={lay['t']} p={lay['p']} d={lay['d']} v={lay['v']} b={lay['b']} m={lay['m']}  ZeRO {lay['zero']}, "
            f"recompute {lay['recompute']}{', sequence parallel' if lay['sequence_parallel'] else ''}",
            f"   step {entry['step_seconds']:.3f} s (compute {entry['compute_seconds']:.3f} s, bubble "
            f"{entry['bubble_seconds']:.3f} s, exposed comms {entry['exposed_comm_seconds']:.3f} s)   memory "
            f"{entry['memory_total'] / 1e9:.1f} GB   {entry['training_days']:,.1f} days",
            f"   why: {entry['reason']}",
        ]
    return "\n".join(lines)


def register(add_command) -> None:
    command = add_command("plan", "search parallel layouts of a model on n GPUs, fastest first", run)
    add_arguments(command)
