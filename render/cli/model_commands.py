"""The model commands: ``params`` and ``flops`` of a config.json or a named preset (DESIGN.md).

``params (--hf-config PATH | --model NAME)`` → {"total", "active", "components"}: the
exact count of params.decoder.total, split into embeddings, attention, MLP (or
experts and router), norms and head. ``flops ... --batch B --seq S`` → {"forward",
"backward", "training"} of flops.decoder.*, integers. A bad path, malformed JSON,
an unknown model_type or a missing key is one line on stderr and exit 2.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from formulas.presets import names
from render.cli.config_file import read_json_config
from render.cli.numbers import InputError
from render.cli.result import Result

if TYPE_CHECKING:
    from formulas.hf_config import Architecture


def load_architecture(hf_config: str | None, model: str | None) -> tuple[Architecture, str]:
    """The architecture and a label for it, from a config.json path (``-`` for stdin) or a preset name."""
    from formulas.hf_config import ConfigError, read_config
    from formulas.presets import preset

    try:
        if model is not None:
            chosen = preset(model)
            return chosen.architecture, f"{chosen.title} ({chosen.source})"
        config, label = read_json_config(hf_config)
        return read_config(config), label
    except ConfigError as error:
        raise InputError(str(error)) from None


def _value(architecture: Architecture, formula_id: str, **extra: int) -> int:
    from formulas.catalogue import get

    return architecture.evaluate(get(formula_id).expr, **extra)


def parameter_components(architecture: Architecture) -> dict[str, int]:
    """Per-component counts; they add up to params.decoder.total."""
    from formulas.symbols import quantity

    per_layer = {
        "attention": _value(architecture, "params.decoder.attention"),
        "mlp": _value(architecture, "params.decoder.mlp"),
        "router": _value(architecture, "params.decoder.router"),
        "norms": _value(architecture, "params.decoder.norms"),
    }
    l, experts = architecture.values[quantity("l").symbol], architecture.values[quantity("E").symbol]
    components = {
        "embeddings": _value(architecture, "params.decoder.embeddings"),
        "attention": l * per_layer["attention"],
    }
    if architecture.values[quantity("moe").symbol]:
        components["experts"] = l * experts * per_layer["mlp"]
        components["router"] = l * per_layer["router"]
    else:
        components["mlp"] = l * experts * per_layer["mlp"]
    components["norms"] = l * per_layer["norms"] + _value(architecture, "params.decoder.final_norm")
    components["head"] = _value(architecture, "params.decoder.head")
    return components


def params(hf_config: str | None, model: str | None) -> Result:
    architecture, label = load_architecture(hf_config, model)
    total = _value(architecture, "params.decoder.total")
    active = _value(architecture, "params.decoder.active")
    components = parameter_components(architecture)
    doc = {"total": total, "active": active, "components": components, "model_type": architecture.model_type}
    width = max(len(name) for name in components)
    lines = [f"{label} [{architecture.model_type}]", f"total   {total:,}", f"active  {active:,}"]
    lines += [f"  {name:<{width}}  {count:,}" for name, count in components.items()]
    return Result(doc, "\n".join(lines))


FLOP_COMPONENTS = {
    "attention_projections": "flops.decoder.attention.projections",
    "attention_scores": "flops.decoder.attention.scores",
    "mlp": "flops.decoder.mlp",
    "router": "flops.decoder.router",
}


def flops(hf_config: str | None, model: str | None, batch: str, seq: str) -> Result:
    architecture, label = load_architecture(hf_config, model)
    from formulas.symbols import quantity
    from render.cli.inputs import parse_count

    shape = {"b": parse_count(batch, "b", "--batch"), "s": parse_count(seq, "s", "--seq")}
    l = architecture.values[quantity("l").symbol]
    components = {name: l * _value(architecture, fid, **shape) for name, fid in FLOP_COMPONENTS.items()}
    components["embedding_projections"] = _value(architecture, "flops.decoder.embedding_projections", **shape)
    components["logits"] = _value(architecture, "flops.decoder.logits", **shape)
    doc = {
        "forward": _value(architecture, "flops.decoder.forward", **shape),
        "backward": _value(architecture, "flops.decoder.backward", **shape),
        "training": _value(architecture, "flops.decoder.training", **shape),
        "components": {name: value for name, value in components.items() if value},
        "batch": shape["b"],
        "seq": shape["s"],
    }
    lines = [f"{label} [{architecture.model_type}], b={shape['b']}, s={shape['s']}"]
    lines += [f"{key:<9} {doc[key]:,} FLOP" for key in ("forward", "backward", "training")]
    lines += [f"  {name}  {value:,}" for name, value in doc["components"].items()]
    return Result(doc, "\n".join(lines))


def add_model_source(parser) -> None:
    """--hf-config PATH | --model NAME, one of them required (params, flops, estimate, plan)."""
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--hf-config", metavar="PATH", help="a Hugging Face config.json (a regular file of at most 1 MB, or - for stdin)")
    source.add_argument("--model", metavar="NAME", help=f"a named model: {', '.join(names())}")


def register(add_command) -> None:
    counted = add_command(
        "params",
        "exact parameter count of a config.json or named model, total, active and by component",
        lambda args: params(args.hf_config, args.model),
    )
    add_model_source(counted)
    flopped = add_command(
        "flops",
        "forward, backward and training FLOPs of one step of b sequences of s tokens (eager attention, every GEMM)",
        lambda args: flops(args.hf_config, args.model, args.batch, args.seq),
    )
    add_model_source(flopped)
    flopped.add_argument("--batch", required=True, metavar="B", help="sequences per step")
    flopped.add_argument("--seq", required=True, metavar="S", help="tokens per sequence")
