"""The model commands: ``params`` and ``flops`` of a config.json or a named preset (DESIGN.md).

``params (--hf-config PATH | --model NAME)`` → {"total", "active", "components"}: the
exact count of params.decoder.total, split into embeddings, attention, MLP (or
experts and router), norms and head. ``flops ... --batch B --seq S`` → {"forward",
"backward", "training"} of flops.decoder.*, integers. A bad path, malformed JSON,
an unknown model_type or a missing key is one line on stderr and exit 2.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from llm_formulas.formulas.data.presets import names
from llm_formulas.render.cli.config_file import read_json_config
from llm_formulas.render.cli.numbers import InputError
from llm_formulas.render.cli.result import Result

if TYPE_CHECKING:
    from llm_formulas.formulas.data.hf_config import Architecture


def load_architecture(hf_config: str | None, model: str | None, allow_unread_keys: bool = False) -> tuple[Architecture, str]:
    """The architecture and a label for it (a preset's title, or the path), from a config.json path (``-`` for stdin)
    or a preset name; a structural key the family does not read refuses the config unless ``allow_unread_keys``."""
    from llm_formulas.formulas.data.hf_config import ConfigError, read_config
    from llm_formulas.formulas.data.presets import preset

    try:
        if model is not None:
            chosen = preset(model)
            return chosen.architecture, chosen.title
        config, label = read_json_config(hf_config)
        return read_config(config, allow_unread_keys), label
    except ConfigError as error:
        raise InputError(str(error)) from None


def _value(architecture: Architecture, formula_id: str, **extra: int) -> int:
    from llm_formulas.formulas.vocabulary.catalogue import get

    return architecture.evaluate(get(formula_id).dimensioned, **extra)


MIXERS = {"l_mamba": "recurrent.mamba", "l_ssd": "recurrent.mamba2", "l_lru": "recurrent.rglru", "l_gdn": "recurrent.gdn"}


def layer_counts(architecture: Architecture) -> dict[str, int]:
    """Layers by what they hold: attention (l_attn), a dense MLP (l_mlp), experts (l_moe), each recurrent mixer."""
    from llm_formulas.formulas.vocabulary.symbols import quantity

    v = {name: architecture.values[quantity(name).symbol] for name in ("l", "l_moe", "l_noattn", "l_nomlp", *MIXERS)}
    return {**v, "l_attn": v["l"] - sum(v[name] for name in MIXERS) - v["l_noattn"], "l_mlp": v["l"] - v["l_moe"] - v["l_nomlp"]}


def parameter_components(architecture: Architecture) -> dict[str, int]:
    """Per-component counts; they add up to params.decoder.total."""
    from llm_formulas.formulas.vocabulary.symbols import quantity

    n = layer_counts(architecture)
    experts = architecture.values[quantity("E").symbol]
    components = {
        "embeddings": _value(architecture, "params.decoder.embeddings"),
        "attention": n["l_attn"] * _value(architecture, "params.decoder.attention")
        + n["l"] * _value(architecture, "params.decoder.cross_attention"),
        "recurrent_mixers": sum(n[count] * _value(architecture, f"params.{name}") for count, name in MIXERS.items()),
        "mlp": n["l_mlp"] * _value(architecture, "params.decoder.mlp"),
        "experts": n["l_moe"] * experts * _value(architecture, "params.decoder.expert"),
        "shared_experts": n["l_moe"] * _value(architecture, "params.decoder.shared_experts"),
        "router": n["l_moe"] * _value(architecture, "params.decoder.router"),
        "moe_latent": n["l_moe"] * _value(architecture, "params.decoder.moe_latent"),
        "norms": n["l"] * _value(architecture, "params.decoder.norms") + _value(architecture, "params.decoder.final_norm"),
        "head": _value(architecture, "params.decoder.head"),
    }
    return {name: count for name, count in components.items() if count or name in ("embeddings", "attention", "norms", "head")}


def provenance(architecture: Architecture) -> dict:
    """Which family read the config, and the keys it read and the defaults it took (config key → value)."""
    family = architecture.family
    return {"family": architecture.model_type, "title": "" if family is None else family.title, "multimodal": architecture.multimodal,
            "keys_read": {key: value for key, value in architecture.keys_read.items() if not isinstance(value, (dict, list))},
            "defaults": {key: value for key, value in architecture.defaults.items() if not isinstance(value, (dict, list))}}


def provenance_lines(doc: dict) -> list[str]:
    """Two lines for people: the keys read, the defaults taken."""
    read = ", ".join(doc["keys_read"]) or "none"
    taken = ", ".join(f"{key}={value}" for key, value in doc["defaults"].items()) or "none"
    return [f"read by the {doc['family']} declaration ({doc['title']}) from: {read}", f"transformers' defaults taken: {taken}"]


def unread_caveat(architecture: Architecture, doc: dict, lines: list[str]) -> None:
    """Where the count was made without some structural keys (--allow-unread-keys): name them in the document and the text."""
    from llm_formulas.formulas.data.unread_keys import caveat

    if architecture.unread_keys:
        doc["unread_keys"] = list(architecture.unread_keys)
        lines.append(caveat(architecture.unread_keys))


def params(hf_config: str | None, model: str | None, mtp: bool = False, allow_unread_keys: bool = False) -> Result:
    architecture, label = load_architecture(hf_config, model, allow_unread_keys)
    total = _value(architecture, "params.decoder.total")
    active = _value(architecture, "params.decoder.active")
    components = parameter_components(architecture)
    source = provenance(architecture)
    stored = architecture.stored_weight_bytes()
    towers = architecture.tower_parameters()
    doc = {"total": total, "active": active, "components": components, "model_type": architecture.model_type,
           "unit": "parameter", **source, "stored_weights": stored}
    from llm_formulas.render.printers.human import human

    rows = [("total", total), ("active", active)] + [(f"  {name}", count) for name, count in components.items()]
    if towers:
        doc["towers"] = towers
        rows += [(f"{name} (apart)", count) for name, count in towers.items()]
    width = max(len(name) for name, _ in rows)
    shown = [human(count, "1") if count >= 10**6 else f"{count:,}" for _, count in rows]
    number_width = max(len(text) for text in shown)
    kind = f"{architecture.multimodal} → text {architecture.model_type}" if architecture.multimodal else architecture.model_type
    lines = [f"{label} [{kind}]: parameters"]
    lines += [f"{name:<{width}}  {text:>{number_width}}  ({count:,})" for (name, count), text in zip(rows, shown)]
    scheme = stored["scheme"] or f"unquantized, {stored['dtype_bytes']} bytes a value"
    lines.append(f"weights as stored ({scheme}): {human(stored['bytes'], 'byte')} ({stored['bytes']:,} bytes)")
    if mtp:  # the multi-token-prediction modules the config declares, which transformers does not build
        extra = _value(architecture, "params.decoder.mtp")
        doc |= {"mtp": extra, "total_with_mtp": total + extra}
        lines.append(f"with {architecture.values[_symbol('n_mtp')]} MTP module(s): +{human(extra, '1')} = {human(total + extra, '1')} "
                     f"({total + extra:,}; embedding and head shared; a checkpoint storing copies adds 2·V·h per module)")
    lines += provenance_lines(source)
    unread_caveat(architecture, doc, lines)
    return Result(doc, "\n".join(lines))


def _symbol(name: str):
    from llm_formulas.formulas.vocabulary.symbols import quantity

    return quantity(name).symbol


FLOP_COMPONENTS = {  # name: (formula, layers it runs in)
    "attention_projections": ("flops.decoder.attention.projections", "l_attn"),
    "attention_scores": ("flops.decoder.attention.scores", "l_attn"),
    "mamba": ("flops.recurrent.mamba", "l_mamba"),
    "mamba2": ("flops.recurrent.mamba2", "l_ssd"),
    "rg_lru": ("flops.recurrent.rglru", "l_lru"),
    "gated_delta_net": ("flops.recurrent.gdn", "l_gdn"),
    "mlp": ("flops.decoder.mlp", "l_mlp"),
    "experts": ("flops.decoder.experts", "l_moe"),
    "shared_experts": ("flops.decoder.shared_experts", "l_moe"),
    "router": ("flops.decoder.router", "l_moe"),
    "moe_latent": ("flops.decoder.moe_latent", "l_moe"),
}


def flops(hf_config: str | None, model: str | None, batch: str, seq: str, allow_unread_keys: bool = False) -> Result:
    architecture, label = load_architecture(hf_config, model, allow_unread_keys)
    from llm_formulas.render.cli.inputs import parse_count

    shape = {"b": parse_count(batch, "b", "--batch"), "s": parse_count(seq, "s", "--seq")}
    layers = layer_counts(architecture)
    components = {name: layers[which] * _value(architecture, fid, **shape) for name, (fid, which) in FLOP_COMPONENTS.items()}
    components["embedding_projections"] = _value(architecture, "flops.decoder.embedding_projections", **shape)
    components["logits"] = _value(architecture, "flops.decoder.logits", **shape)
    doc = {
        "forward": _value(architecture, "flops.decoder.forward", **shape),
        "backward": _value(architecture, "flops.decoder.backward", **shape),
        "training": _value(architecture, "flops.decoder.training", **shape),
        "components": {name: value for name, value in components.items() if value},
        "batch": shape["b"],
        "seq": shape["s"],
        "unit": "FLOP",
    }
    lines = [flops_table(doc, f"{label} [{architecture.model_type}]")]
    unread_caveat(architecture, doc, lines)
    return Result(doc, "\n".join(lines))


def flops_table(doc: dict, label: str) -> str:
    """Components down, forward / backward / training across, human units, then the exact totals.
    Backward is twice forward for each matmul (dX and dW, each as costly as Y = XW): the columns add up."""
    from llm_formulas.render.printers.human import human

    rows = [(name.replace("_", " "), value, 2 * value, 3 * value) for name, value in doc["components"].items()]
    totals = ("total", doc["forward"], doc["backward"], doc["training"])
    header = ("component", "forward", "backward", "training")
    cells = [header] + [(row[0], *(human(x, "FLOP") for x in row[1:])) for row in rows + [totals]]
    widths = [max(len(cell[i]) for cell in cells) for i in range(4)]
    lines = [f"{label}: one step of b={doc['batch']} sequences of s={doc['seq']} tokens (matmul FLOPs, eager attention)"]
    for number, cell in enumerate(cells):
        if number == len(cells) - 1:
            lines.append("  ".join("-" * w for w in widths))
        lines.append("  ".join([cell[0].ljust(widths[0])] + [c.rjust(w) for c, w in zip(cell[1:], widths[1:])]))
    lines.append(f"exact: forward {doc['forward']:,}  backward {doc['backward']:,}  training {doc['training']:,} FLOP")
    return "\n".join(lines)


def add_model_source(parser) -> None:
    """--hf-config PATH | --model NAME, one of them required (params, flops, estimate, plan)."""
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--hf-config", metavar="PATH", help="a Hugging Face config.json (a regular file of at most 1 MB, or - for stdin)")
    source.add_argument("--model", metavar="NAME", help=f"a named model: {', '.join(names())}")


def add_unread_option(parser) -> None:
    """--allow-unread-keys (params, flops): count a config whose structural keys the family does not all read, naming them."""
    parser.add_argument("--allow-unread-keys", action="store_true",
                        help="count even where the config has structural keys the family does not read; a caveat names them")


def register(add_command) -> None:
    counted = add_command(
        "params",
        "exact parameter count of a config.json or named model, total, active and by component",
        lambda args: params(args.hf_config, args.model, args.mtp, args.allow_unread_keys),
    )
    add_model_source(counted)
    add_unread_option(counted)
    counted.add_argument("--mtp", action="store_true",
                         help="add the multi-token-prediction modules the config declares (DeepSeek-V3, GLM-4.5), which transformers does not build")
    flopped = add_command(
        "flops",
        "forward, backward and training FLOPs of one step of b sequences of s tokens (eager attention, every GEMM)",
        lambda args: flops(args.hf_config, args.model, args.batch, args.seq, args.allow_unread_keys),
    )
    add_model_source(flopped)
    add_unread_option(flopped)
    flopped.add_argument("--batch", required=True, metavar="B", help="sequences per step")
    flopped.add_argument("--seq", required=True, metavar="S", help="tokens per sequence")
