"""``llm-formulas compare``: the other calculators' figures beside ours and the measured form, each difference a proved claim.

    llm-formulas compare --model llama2-70b --gpu a100-80gb --tp 8 --pp 4 --dp 2 --global-batch 32 --seq 4096 --zero 1

For a model and a layout (estimate's options), every claim of formulas/topics/peers.py ``CLAIMS`` that answers the layout's
ZeRO stage and sequence parallelism: the peer's figure (its formula at the model's sizes), ours (the measured forms as
estimate sums them for the framework the claim names, at the setting the peer describes), the measured form (ours with
the per-token statistics the forms drop: what the reference blocks save byte for byte), the ratio, and the terms of the
difference: the "Δ …" steps of the claim's derivation (derivations/topics/peers.py), whose sum is proved to be ours − peer.
A peer that cannot express the model says why; asked for by name (``--peer``), that is one line and exit 2.
"""

from __future__ import annotations

import argparse

from llm_formulas.render.cli.numbers import InputError, quote
from llm_formulas.render.cli.result import Result, number_json

PEER_CHOICES = ("megatron", "deepspeed", "llm-analysis", "transformer-math")  # formulas.topics.peers.PEERS
SETTING_FORMS = {  # a claim's setting: (the layer's form, the form without recompute, sequence parallelism)
    "peers.megatron.activations": ("selective", "eager", True),
    "peers.megatron.activations.without_sp": ("selective", "eager", False),
    "peers.llm_analysis.activations": ("flash", None, True),
    "peers.llm_analysis.activations.moe": ("flash", None, True),
    "peers.transformer_math.activations": ("selective", "eager", False),
}


def add_arguments(command: argparse.ArgumentParser) -> None:
    from llm_formulas.render.cli.estimate_command import add_arguments as estimate_arguments

    estimate_arguments(command)
    command.add_argument("--peer", choices=PEER_CHOICES, help="one peer only (default: every peer)")


def run(args: argparse.Namespace) -> Result:
    from llm_formulas.formulas.reports.estimate import estimate, exact_inputs
    from llm_formulas.formulas.topics.peers import CLAIMS, PEERS
    from llm_formulas.render.cli.estimate_command import check_framework, read_inputs, read_model_and_layout

    architecture, label, model, layout = read_model_and_layout(args)
    if layout.c > 1 or layout.v > 1 or layout.stages is not None:
        raise InputError("compare's claims hold without context parallelism, interleaving or an explicit partition "
                         "(the peers model none of them): drop --cp, --interleave, --stages")
    if layout.m < layout.p:
        raise InputError(f"compare's claims hold at m ≥ p (the estimator's min(1, m/p) is 1): m = {layout.m}, p = {layout.p}")
    inputs = exact_inputs(read_inputs(args, model, architecture.model_type))
    check_framework(inputs.framework, layout, model)
    report = estimate(layout, inputs)
    values = _values(architecture.values, layout, report)
    rows, skipped = [], []
    for peer in [args.peer] if args.peer else list(PEERS):
        for quantity in dict.fromkeys(c.quantity for c in CLAIMS if c.peer == peer):
            answering = [c for c in CLAIMS if c.peer == peer and c.quantity == quantity and layout.zero in c.zero
                         and c.sequence_parallel in (None, layout.sequence_parallel)]
            able = [c for c in answering if c.cannot(model) is None]
            if not able:
                reason = answering[0].cannot(model) if answering else "no claim for this layout"
                if args.peer:
                    raise InputError(f"{PEERS[peer]} cannot express this model's {quantity}: {reason}")
                skipped.append({"peer": peer, "quantity": quantity, "reason": f"cannot express {reason}"})
                continue
            rows.append(_row(able[0], values))
    doc = {"model": label, "layout": {name: getattr(layout, name) for name in ("n", "t", "p", "d", "b", "m", "s", "e", "zero")}
           | {"sequence_parallel": layout.sequence_parallel, "recompute": layout.recompute, "t_e": values_t_e(layout)},
           "rows": rows, "skipped": skipped}
    return Result(_json(doc), _text(doc))


def values_t_e(layout) -> int:
    return layout.t if layout.expert_tp is None else layout.expert_tp


def _values(architecture: dict, layout, report: dict) -> dict:
    """The symbols' values a claim is evaluated at: the model's sizes, the layout, Megatron Core's fused SwiGLU, the
    GPU's first-stage parameters (Ψ of the DeepSpeed estimators) and DeepSpeed's largest module."""
    import sympy as sp

    from llm_formulas.formulas.vocabulary.symbols import quantity

    def symbol(name: str) -> sp.Symbol:
        return quantity(name).symbol

    given = dict(architecture) | {symbol(name): value for name, value in dict(
        t=layout.t, p=layout.p, d=layout.d, b=layout.b, s=layout.s, m=layout.m, e=layout.e, t_e=values_t_e(layout),
        piped=int(layout.p > 1), glu_fused=1, q=2).items()}
    V, h, d_ff, gated = (architecture[symbol(name)] for name in ("V", "h", "d_ff", "gated"))
    given[symbol("P_unit")] = sp.Rational(max(V * h, (1 + gated) * h * d_ff), layout.t)  # DeepSpeed's largest module, per rank
    given[symbol("P")] = sp.nsimplify(report["params"]["per_gpu"])
    given["total"], given["global_batch"] = report["params"]["total"], layout.global_batch
    return given


def _row(claim, values: dict) -> dict:
    import sympy as sp

    from llm_formulas.derivations.reports.catalogue import derivation_of
    from llm_formulas.formulas.vocabulary.catalogue import get
    from llm_formulas.formulas.vocabulary.symbols import constant_values, quantity

    at = {k: v for k, v in values.items() if not isinstance(k, str)}
    if claim.per_gpu_total:
        at[quantity("P").symbol] = values["total"]
    if claim.quantity == "FLOPs":  # one global batch: B = b·m·d sequences
        at[quantity("b").symbol] = values["global_batch"]
    derivation = derivation_of(claim.formula_id)

    def number(expr: sp.Expr) -> sp.Rational:
        result = expr.xreplace(constant_values()).xreplace(at)  # a catalogue expression: never a user's string
        if result.is_Number and not result.is_Rational:  # a float the report carried: read as the shortest rational
            result = sp.nsimplify(result)
        if result.free_symbols:
            raise ValueError(f"{claim.formula_id}: no value for {', '.join(sorted(s.name for s in result.free_symbols))}")
        return result

    peer = number(get(claim.formula_id).expr)
    ours_step = next(step for step in derivation.steps if "_ours" in step.label and not step.piece)
    ours = number(ours_step.expr)
    terms = [{"term": step.label.removeprefix("Δ "), "value": number(step.expr), "why": step.why}
             for step in derivation.steps if step.label.startswith("Δ ") and not step.piece]
    explained = ours - peer - sum((term["value"] for term in terms), sp.Integer(0))
    if explained != 0:
        raise ValueError(f"{claim.formula_id}: the claim's terms leave {explained} unexplained")
    measured = ours + _statistics(claim, at) if claim.formula_id in SETTING_FORMS else ours
    unit = str(get(claim.formula_id).unit)
    return {"peer": claim.peer, "quantity": claim.quantity, "claim": claim.formula_id, "setting": claim.setting, "unit": unit,
            "peer_value": peer, "ours": ours, "measured": measured, "ratio": peer / ours if ours else None,
            "terms": [term for term in terms if term["value"] != 0]}


def _statistics(claim, at: dict) -> object:
    """What the forms drop and the reference blocks save: the per-token statistics of the layers the first stage
    holds (and of the head and loss at p = 1), from the measured inventories."""
    import sympy as sp

    from llm_formulas.derivations.topics.framework_memory import head_tensors
    from llm_formulas.derivations.topics.memory import STATISTICS, decoder_tensors, exact_bytes
    from llm_formulas.derivations.vocabulary.proof import valued
    from llm_formulas.formulas.vocabulary.symbols import quantity

    core, none, sequence_parallel = SETTING_FORMS[claim.formula_id]

    def stats(form: str, mlp: str) -> sp.Expr:
        tensors = [x for x in decoder_tensors(form, sequence_parallel=sequence_parallel, mlp=mlp) if x.label in STATISTICS]
        return valued(exact_bytes(tensors)).xreplace(at)

    def value(name: str) -> object:
        return at[quantity(name).symbol]

    l, l_moe, p = value("l"), value("l_moe"), value("p")

    def mean(form: str) -> sp.Expr:
        return (stats(form, "dense") * (l - l_moe) + stats(form, "moe") * l_moe) / l

    total = l * mean(core) + (mean(none) - mean(core) if none else 0)
    if p == 1:
        head = valued(exact_bytes([x for x in head_tensors(sequence_parallel) if x.label == "norm mean, rstd"])).xreplace(at)
        total += head + value("n_mtp") * (stats(core, "moe") + head)
    return sp.nsimplify(total)


def _json(doc: dict) -> dict:
    def convert(value: object) -> object:
        if isinstance(value, dict):
            return {key: convert(item) for key, item in value.items()}
        if isinstance(value, list):
            return [convert(item) for item in value]
        if isinstance(value, (str, bool)) or value is None:
            return value
        return number_json(value)

    return convert(doc)


def _text(doc: dict) -> str:
    from llm_formulas.formulas.topics.peers import PEERS
    from llm_formulas.render.printers.human import human

    lay = doc["layout"]
    lines = [f"{doc['model']}: t={lay['t']} p={lay['p']} d={lay['d']} e={lay['e']} b={lay['b']} m={lay['m']} s={lay['s']} "
             f"ZeRO {lay['zero']}" + (", sequence parallel" if lay["sequence_parallel"] else ""), ""]
    for peer in dict.fromkeys(row["peer"] for row in doc["rows"]):
        lines.append(PEERS[peer])
        for row in (r for r in doc["rows"] if r["peer"] == peer):
            unit = "byte" if row["unit"] == "byte" else row["unit"]
            ratio = f"{row['ratio']:.4f}" if row["ratio"] is not None else "—"
            lines.append(f"  {row['quantity']} ({row['setting']}): peer {human(row['peer_value'], unit)}   ours "
                         f"{human(row['ours'], unit)}   measured {human(row['measured'], unit)}   peer/ours {ratio}")
            for term in row["terms"]:
                lines.append(f"    {'+' if term['value'] >= 0 else '−'} {human(abs(term['value']), unit)}  {term['term']}: "
                             f"{term['why']}")
            lines.append(f"    (proved: ours − peer is the sum of these terms, {row['claim']})")
        lines.append("")
    for item in doc["skipped"]:
        lines.append(f"{PEERS[item['peer']]}: {item['quantity']}: {item['reason']}")
    return "\n".join(lines).rstrip()


def register(add_command) -> None:
    command = add_command("compare", "the other calculators' figures beside ours and the measured form, each difference a "
                                     "proved claim", run)
    add_arguments(command)
