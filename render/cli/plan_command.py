"""``llm-formulas plan``: the fastest parallel layouts that fit (render/numeric/plan.py).

    llm-formulas plan --model megatron-1t --gpu a100-80gb --gpus 3072 --global-batch 3072 --seq 2048

Every valid (t, p, d, b, m, v, c, e, ZeRO stage, recompute mode, sequence parallelism)
of n GPUs is evaluated by the same glue as ``estimate`` (formulas/reports/estimate.py)
through the generated NumPy code; those that don't fit are dropped; the best
``--top`` distinct (t, p, d, b, m, v, c, e), each at its best setting, are shown with
why each ranks where it does. ``--explain "t=8 p=64 d=6 ..."`` instead says where one
layout ranks and which terms (compute, bubble, TP, PP, DP/ZeRO, optimizer, memory)
separate it from the first; a layout that is invalid or does not fit is one line, exit 2.
``--framework`` (formulas/data/frameworks.py) sets what the implementation overlaps and restricts the
search to the features it has: ``--framework megatron-lm-2021`` compares with Narayanan et al. 2021
on the features its code had (no ZeRO, no selective recompute, no sequence parallelism, the DP
all-reduce after the backward). ``--json``: one document with the ranked list (or the explanation).
"""

from __future__ import annotations

import argparse

from llm_formulas.render.cli.estimate_command import (add_assumption_arguments, add_source_arguments, assumptions_json,
                                                      chosen_spec, read_inputs, read_model)
from llm_formulas.render.cli.numbers import InputError, parse_fraction, quote
from llm_formulas.render.cli.progress import Progress
from llm_formulas.render.cli.result import Result
from llm_formulas.render.numeric import GPUS_PER_NODE


def add_arguments(command: argparse.ArgumentParser) -> None:
    add_source_arguments(command)
    command.add_argument("--gpus", required=True, metavar="N", help="GPUs in all")
    command.add_argument("--global-batch", required=True, metavar="B", help="global batch in sequences")
    add_assumption_arguments(command)
    command.add_argument("--top", default="5", metavar="K", help="how many layouts to show (default 5)")
    command.add_argument("--max-tp", metavar="T",
                         help=f"largest tensor-parallel degree (0 for no limit). Predicted (no --mfu): no limit by default, "
                              f"TP beyond a node is priced at the network; with --mfu: default {GPUS_PER_NODE}, TP is priced "
                              f"at NVLink speed")
    command.add_argument("--uneven-stages", action="store_true",
                         help="also search pipeline degrees p that do not divide the layers, at v = 1, with balanced stages: "
                              "the l blocks and the two embeddings as l + 2 items, as Megatron-DeepSpeed's "
                              "type:transformer|embedding partition splits them (BLOOM-176B's 5, 6 x 10, 5 over 12 stages)")
    command.add_argument("--explain", metavar="LAYOUT",
                         help='where one layout ranks and why, e.g. "t=8 p=64 d=6 v=2 b=1 zero=1 recompute=selective sp=1" '
                              "(keys t p d v b zero recompute sp; d defaults to n/(t·p), v and b to 1, zero to 0, recompute "
                              "to selective, sp to 0)")


def _whole(text: str, option: str, least: int, most: int) -> int:
    value = parse_fraction(text, option)
    if value.denominator != 1 or not least <= value <= most:
        raise InputError(f"{option} must be a whole number from {least} to {most:,}, got {quote(text)}")
    return int(value)


def run(args: argparse.Namespace) -> Result:
    from llm_formulas.formulas.vocabulary.bounds import MAX_GPUS, MAX_LAYOUTS
    from llm_formulas.formulas.reports.estimate import Layout, unpredicted
    from llm_formulas.render.cli.inputs import parse_count
    from llm_formulas.render.numeric.plan import SpaceTooLarge, default_max_tp, plan

    model, model_type, label = read_model(args.hf_config, args.model)  # a preset without SymPy
    inputs = read_inputs(args, model, model_type)
    unmeasured = inputs.framework.lacks_model(model)  # transformers' forms cover the dense Llama family only
    if unmeasured is not None:
        raise InputError(f"invalid model for --framework: {unmeasured}")
    reason = unpredicted(Layout(n=1, t=1, p=1, d=1, b=1, m=1, s=1), inputs)  # FP8 or LoRA without --mfu
    if reason is not None:
        raise InputError(reason)
    # n, B and s within the shared bounds (formulas/vocabulary/bounds.py): far beyond any cluster, small enough to enumerate
    n = parse_count(args.gpus, "n", "--gpus")
    global_batch, s = parse_count(args.global_batch, "B", "--global-batch"), parse_count(args.seq, "s", "--seq")
    top = _whole(args.top, "--top", 1, MAX_LAYOUTS)
    max_tp = default_max_tp(inputs.utilization) if args.max_tp is None else _whole(args.max_tp, "--max-tp", 0, MAX_GPUS)
    if args.explain is not None:
        return _explain(args, model, inputs, label, n, global_batch, s, max_tp or None)
    bar = Progress("plan")
    try:
        result = plan(model, inputs, n, global_batch, s, top=top, max_tp=max_tp or None, progress=bar.update,
                      attention=args.attention, uneven=args.uneven_stages)
    except SpaceTooLarge as error:
        raise InputError(str(error)) from None
    bar.close()
    doc = {"model": label, "gpu": chosen_spec(args.gpu).name, "n": n, "global_batch": global_batch, "s": s,
           "max_tp": max_tp or None, "attention": args.attention, "uneven_stages": args.uneven_stages,
           "assumptions": assumptions_json(inputs)} | result
    return Result(doc, render_text(doc))


EXPLAIN_KEYS = ("t", "p", "d", "v", "b", "zero", "recompute", "sp", "c", "e")


def parse_layout(text: str, n: int, global_batch: int, s: int, attention: str = "eager"):
    """``"t=8 p=64 d=6 v=2 b=1 zero=1 recompute=full sp=0"`` → a Layout; every value parsed by hand, never evaluated."""
    from llm_formulas.formulas.reports.estimate import RECOMPUTE_MODES, Layout
    from llm_formulas.render.cli.inputs import parse_count

    values: dict[str, str] = {}
    for item in text.split():
        key, sep, value = item.partition("=")
        if not sep or key not in EXPLAIN_KEYS:
            raise InputError(f"--explain: expected key=value with a key among {', '.join(EXPLAIN_KEYS)}, got {quote(item)}")
        if key in values:
            raise InputError(f"--explain: {key} given twice")
        values[key] = value
    if "t" not in values or "p" not in values:
        raise InputError("--explain: the layout needs at least t and p")
    t, p = parse_count(values["t"], "t", "--explain t"), parse_count(values["p"], "p", "--explain p")
    c = parse_count(values.get("c", "1"), "c", "--explain c")
    e = parse_count(values.get("e", "1"), "e", "--explain e")
    d = parse_count(values["d"], "d", "--explain d") if "d" in values else n // (t * p * c)
    b = parse_count(values.get("b", "1"), "b", "--explain b")
    v = parse_count(values.get("v", "1"), "v", "--explain v")
    zero, recompute, parallel = values.get("zero", "0"), values.get("recompute", "selective"), values.get("sp", "0")
    if zero not in ("0", "1", "2", "3"):
        raise InputError(f"--explain: zero must be 0, 1, 2 or 3, got {quote(zero)}")
    if recompute not in RECOMPUTE_MODES:
        raise InputError(f"--explain: recompute must be one of {', '.join(RECOMPUTE_MODES)}, got {quote(recompute)}")
    if parallel not in ("0", "1"):
        raise InputError(f"--explain: sp must be 0 or 1, got {quote(parallel)}")
    if t * p * c * d != n:
        product = "t·p·d" if c == 1 else "t·p·c·d"
        raise InputError(f"--explain: invalid layout: {product} = {t * p * c * d}, but --gpus is {n}")
    if global_batch % (b * d):
        raise InputError(f"--explain: invalid layout: the global batch {global_batch} is not a multiple of b·d = {b * d}")
    return Layout(n=n, t=t, p=p, d=d, b=b, m=global_batch // (b * d), s=s, v=v, zero=int(zero), recompute=recompute,
                  sequence_parallel=parallel == "1", attention=attention, c=c, e=e)


def _explain(args, model, inputs, label, n, global_batch, s, max_tp) -> Result:
    from llm_formulas.render.numeric.plan import NotRanked, SpaceTooLarge, explain

    from llm_formulas.formulas.reports.estimate import unpredicted

    layout = parse_layout(args.explain, n, global_batch, s, args.attention)
    reason = unpredicted(layout, inputs)
    if reason is not None:
        raise InputError(reason)
    try:
        result = explain(model, inputs, layout, max_tp, uneven=args.uneven_stages)
    except (NotRanked, SpaceTooLarge) as error:
        raise InputError(str(error)) from None
    doc = {"model": label, "gpu": chosen_spec(args.gpu).name, "n": n, "global_batch": global_batch, "s": s,
           "max_tp": max_tp, "assumptions": assumptions_json(inputs), "explain": result}
    return Result(doc, render_explanation(doc))


def _stages(lay: dict) -> str:
    """`` stages 5,6,…,6,5`` for an uneven pipeline (the layers of each stage, first to last), else nothing."""
    return f" stages {','.join(map(str, lay['stages']))}" if "stages" in lay else ""


def _describe(entry: dict) -> str:
    from llm_formulas.render.printers.human import human

    lay = entry["layout"]
    return (f"t={lay['t']} p={lay['p']} d={lay['d']} v={lay['v']} b={lay['b']} m={lay['m']}{_stages(lay)}  ZeRO {lay['zero']}, recompute "
            f"{lay['recompute']}{', sequence parallel' if lay['sequence_parallel'] else ''}: step "
            f"{human(entry['step_seconds'], 'second')}, MFU {entry['mfu']:.1%}, memory {human(entry['memory_total'], 'byte')}")


def render_explanation(doc: dict) -> str:
    from llm_formulas.render.printers.human import human

    result = doc["explain"]
    mine, first = result["layout"], result["first"]
    gap = mine["step_seconds"] / first["step_seconds"] - 1
    lines = [f"{doc['model']} on {doc['n']} × {doc['gpu']}, global batch {doc['global_batch']} × {doc['s']} tokens",
             f"rank {result['rank']:,} of {result['of']:,} layouts that fit ({gap:+.1%} step time against the first)",
             f"  this:  {_describe(mine)}", f"  first: {_describe(first)}", "what separates them (this − first, per iteration):"]
    for term in result["terms"]:
        lines.append(f"  {term['meaning']:<40} {term['layout']:9.3f} s vs {term['first']:9.3f} s   {term['difference']:+.3f} s")
    if "compute_efficiency" in mine:
        lines.append(f"  compute runs at {mine['compute_efficiency']:.1%} of peak vs {first['compute_efficiency']:.1%}")
    lines.append(f"  memory {human(mine['memory_total'], 'byte')} vs {human(first['memory_total'], 'byte')} per GPU")
    framework = result["framework"]
    lines.append(f"searched within the framework {framework['name']}: {framework['features']}")
    return "\n".join(lines)


def _mode(assumptions: dict) -> str:
    if assumptions["mode"] == "given":
        return f"ranked at the given MFU U = {assumptions['U']:g} (--mfu)"
    framework = assumptions["framework"]
    within = "" if framework["name"] == "default" else f"; framework {framework['name']}: {framework['features']}"
    return f"ranked by predicted step time (constants {assumptions['constants']['provenance']}){within}"


def render_text(doc: dict) -> str:
    from llm_formulas.render.printers.human import human

    framework = doc["assumptions"]["framework"]
    lines = [
        f"{doc['model']} on {doc['n']} × {doc['gpu']}, global batch {doc['global_batch']} × {doc['s']} tokens",
        f"{doc['explored']:,} layouts explored, {doc['fitting']:,} fit; " + _mode(doc["assumptions"]),
        f"memory priced as {'Megatron Core' if framework['name'] == 'default' else framework['name']}: {framework['holds']}",
    ]
    if not doc["explored"]:
        return "\n".join(lines + ["no valid layout: t·p·c·d = n needs t | a, g (t ≤ --max-tp), p | l, c | s, e | d, E and d | B"])
    if not doc["ranked"]:
        framework = doc["assumptions"]["framework"]
        hint = "" if framework is None or framework["pipeline"] else ", or a framework with a pipeline"
        return "\n".join(lines + [f"no layout fits: more GPUs, a smaller batch or a GPU with more memory{hint}"])
    lines.append("")
    for place, entry in enumerate(doc["ranked"], start=1):
        lay = entry["layout"]
        lines += [
            f"{place}. t={lay['t']} p={lay['p']} d={lay['d']} v={lay['v']} e={lay['e']} c={lay['c']} b={lay['b']} m={lay['m']}"
            f"{_stages(lay)}  ZeRO {lay['zero']}, "
            f"recompute {lay['recompute']}{', sequence parallel' if lay['sequence_parallel'] else ''}"
            f"{', FlashAttention' if doc.get('attention') == 'flash' else ''}",
            f"   step {human(entry['step_seconds'], 'second')} (compute {human(entry['compute_seconds'], 'second')}, bubble "
            f"{human(entry['bubble_seconds'], 'second')}, exposed comms {human(entry['exposed_comm_seconds'], 'second')})   "
            f"memory {human(entry['memory_total'], 'byte')}   {human(entry['training_days'] * 86400, 'second')}   "
            f"MFU {entry['mfu']:.1%}",
            f"   why: {entry['reason']}",
        ]
    return "\n".join(lines)


def register(add_command) -> None:
    command = add_command("plan", "search parallel layouts of a model on n GPUs, fastest first", run)
    add_arguments(command)
