"""``kv-cache``: the bytes a decoding cache holds for b sequences of s tokens (DESIGN.md command table).

Default layout ``transformers``: memory.kv_cache.decoder, the bytes of the tensors transformers 5.24's own
DynamicCache holds after a forward of s tokens (full layers s tokens, sliding or chunked layers W − 1, MLA the
latent and the shared rope key). ``--layout paged:N`` rounds every sequence's tokens of every layer up to
blocks of N (memory.kv_cache.decoder.paged); ``--layout mla-expanded`` stores MLA's per-head keys and values
(memory.kv_cache.decoder.mla_expanded). The text says how the figure differs from the default and why.
``--json`` → {"bytes", "layout", "dtype", "batch", "seq", "kinds": {...}, "layers": [...]}.
"""

from __future__ import annotations

from llm_formulas.render.cli.model_commands import add_model_source, load_architecture
from llm_formulas.render.cli.numbers import InputError, quote
from llm_formulas.render.cli.result import Result

DTYPE_BYTES = {"bf16": 2, "fp16": 2, "fp32": 4, "fp8": 1}
KIND_FORMULAS = {  # what one layer of each kind holds (a recurrent layer: its fixed-size state, whatever s is)
    "full": "memory.kv_cache.layer.full", "window": "memory.kv_cache.layer.window", "mamba": "memory.state.mamba",
    "mamba2": "memory.state.mamba2", "rglru": "memory.state.rglru", "gdn": "memory.state.gdn",
}
STATE_WORDS = {"mamba": "Mamba states (convolution in q, the scan's d_ssm × N in fp32)",
               "mamba2": "Mamba-2 states (convolution in q, the heads' states in fp32)",
               "rglru": "RG-LRU states (convolution in q, the recurrence in fp32)",
               "gdn": "gated delta-net states (convolution in q, a d_K × d_V state per value head in fp32)",
               "none": "layers without a token mixer: nothing cached"}
LAYOUTS = "transformers, paged:N (N tokens per block), mla-expanded"


def _layout(text: str) -> tuple[str, int]:
    """``transformers`` | ``paged:N`` | ``mla-expanded`` → (name, block size)."""
    from llm_formulas.render.cli.inputs import parse_count

    if text in ("transformers", "mla-expanded"):
        return text, 1
    name, sep, block = text.partition(":")
    if name == "paged" and sep:
        return name, parse_count(block, "n_blk", "--layout paged:N")
    raise InputError(f"--layout: unknown layout {quote(text)}; known: {LAYOUTS}")


def kv_cache(hf_config: str | None, model: str | None, batch: str, seq: str, dtype: str, layout: str) -> Result:
    from llm_formulas.formulas.vocabulary.catalogue import get
    from llm_formulas.formulas.vocabulary.symbols import quantity
    from llm_formulas.render.cli.inputs import parse_count
    from llm_formulas.render.printers.human import human

    architecture, label = load_architecture(hf_config, model)
    name, block = _layout(layout)
    shape = {"b": parse_count(batch, "b", "--batch"), "s": parse_count(seq, "s", "--seq"), "q": DTYPE_BYTES[dtype], "n_blk": block}
    value = {symbol.name: number for symbol, number in architecture.values.items()}
    if name == "mla-expanded" and not value["mla"]:
        raise InputError(f"--layout mla-expanded: {architecture.model_type} has no latent attention (only DeepSeek-V2/V3 do)")

    def evaluate(formula_id: str, **extra: int) -> int:
        return architecture.evaluate(get(formula_id).dimensioned, **(shape | extra))

    per_layer = {kind: evaluate(formula) for kind, formula in KIND_FORMULAS.items()} | {"none": 0}
    tokens = {"full": shape["s"], "window": min(shape["s"], value["W"] - 1)}
    if name == "paged":
        per_token = evaluate("memory.kv_cache.layer.full", s=1)  # one token of every sequence in one layer
        for kind in ("full", "window"):  # whole blocks of each sequence's tokens; recurrent states as they are
            tokens[kind] = -(-tokens[kind] // block) * block
            per_layer[kind] = per_token * tokens[kind]
    if name == "mla-expanded":
        per_layer["full"] = evaluate("memory.kv_cache.decoder.mla_expanded") // value["l"]
    layers = [{"index": i, "kind": kind, "tokens": tokens.get(kind, 0), "bytes": per_layer[kind]} for i, kind in enumerate(architecture.layer_kinds)]
    total = sum(entry["bytes"] for entry in layers)
    formula_id = {"transformers": "memory.kv_cache.decoder", "paged": "memory.kv_cache.decoder.paged",
                  "mla-expanded": "memory.kv_cache.decoder.mla_expanded"}[name]
    if total != evaluate(formula_id):  # the per-layer sum and the closed form are one figure
        raise AssertionError(f"{formula_id}: layers add up to {total}, the formula gives {evaluate(formula_id)}")
    present = [kind for kind in (*KIND_FORMULAS, "none") if kind in architecture.layer_kinds]
    kinds = {kind: {"layers": architecture.layer_kinds.count(kind), "tokens": tokens.get(kind, 0), "bytes_per_layer": per_layer[kind],
                    "bytes": architecture.layer_kinds.count(kind) * per_layer[kind]} for kind in present}
    default = evaluate("memory.kv_cache.decoder")
    from llm_formulas.render.cli.model_commands import provenance, provenance_lines

    source = provenance(architecture)
    doc = {"bytes": total, "layout": layout, "dtype": dtype, "batch": shape["b"], "seq": shape["s"], "formula": formula_id,
           "transformers_bytes": default, "kinds": kinds, "layers": layers, **source}
    per_token = "latent r_KV + d_rope" if value["mla"] else "K and V of g heads"
    lines = [f"{label} [{architecture.model_type}], b={shape['b']}, s={shape['s']}, {dtype}, layout {layout}",
             f"total   {human(total, 'byte')}  ({total:,} bytes; {quantity('q').name} = {shape['q']} bytes per value, {per_token})"]
    for kind, entry in kinds.items():
        if kind in STATE_WORDS:
            lines.append(f"  {entry['layers']} {kind} layers, {STATE_WORDS[kind]}: fixed, {human(entry['bytes_per_layer'], 'byte')} "
                         f"per layer, {human(entry['bytes'], 'byte')}")
            continue
        window = f" (window W = {value['W']}: W − 1 kept)" if kind == "window" else ""
        lines.append(f"  {entry['layers']} {kind} layers{window}: {entry['tokens']:,} tokens each, "
                     f"{human(entry['bytes_per_layer'], 'byte')} per layer, {human(entry['bytes'], 'byte')}")
    if name != "transformers":
        difference = total - default
        why = {"paged": f"each sequence's tokens of each layer rounded up to whole blocks of {block} (at most {block - 1} idle slots)",
               "mla-expanded": f"per-head keys a·(d_nope + d_rope) and values a·d_v instead of the latent r_KV + d_rope: "
                               f"{value['a'] * (value['d_nope'] + value['d_rope'] + value['d_v'])} values per token and layer "
                               f"instead of {value['r_kv'] + value['d_rope']}"}[name]
        lines.append(f"vs transformers' {human(default, 'byte')}: {'+' if difference >= 0 else ''}{human(difference, 'byte')}, {why}")
    lines += provenance_lines(source)
    return Result(doc, "\n".join(lines))


def register(add_command) -> None:
    cached = add_command(
        "kv-cache",
        "bytes a decoding KV cache holds for b sequences of s tokens, per layer kind (default: what transformers' cache holds)",
        lambda args: kv_cache(args.hf_config, args.model, args.batch, args.seq, args.dtype, args.layout),
    )
    add_model_source(cached)
    cached.add_argument("--batch", required=True, metavar="B", help="sequences decoded together")
    cached.add_argument("--seq", required=True, metavar="S", help="tokens per sequence held in the cache")
    cached.add_argument("--dtype", choices=sorted(DTYPE_BYTES), default="bf16", help="cache value type (default bf16)")
    cached.add_argument("--layout", default="transformers", metavar="L", help=f"whose cache: {LAYOUTS}")
