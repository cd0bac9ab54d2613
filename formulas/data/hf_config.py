"""Read a Hugging Face ``config.json`` (a dict) into the sizes and switches of formulas/topics/architecture.py.

Each ``model_type`` is a declaration in formulas/data/families.py (its decoder block as data, read by
formulas/data/blocks.py): which structural choice the family makes, as transformers 5.24 builds it, and which config
keys say so. A key a config.json may leave out takes transformers' default, a size that has no default must be
there. An unknown model_type, a missing key, a value of the wrong kind, or a feature the counts do not model (an
unknown layer type, a quantization scheme the stored-bytes count does not know) raises ConfigError, naming it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import sympy as sp

from llm_formulas.formulas.vocabulary import symbols as S
from llm_formulas.formulas.vocabulary.expressions import as_sympy
from llm_formulas.formulas.data.blocks import MAX_SIZE, Config, ConfigError, Family, Layer, read_family, short
from llm_formulas.formulas.data.families import FAMILIES, REFUSED
from llm_formulas.formulas.data.multimodal import MULTIMODAL, Piece, tower_pieces
from llm_formulas.formulas.data.quantization import Scheme, checkpoint_dtype_bytes, converts, inventory, read_scheme
from llm_formulas.formulas.data.unread_keys import check_unread, unread_structural_keys

__all__ = ["MAX_SIZE", "Architecture", "ConfigError", "context_window", "read_config"]


@dataclass(frozen=True)
class Architecture:
    """A model as values of the architecture symbols (every one the general formulas use), with its layers as built
    and the config keys it was read from."""

    model_type: str
    values: dict[sp.Symbol, int]
    layer_kinds: tuple[str, ...] = ()  # per layer, what the cache holds: "full", "window", a recurrent kind, or "none"
    family: Family | None = None
    layers: tuple[Layer, ...] = ()
    keys_read: dict[str, object] = field(default_factory=dict)  # config key → value, as read
    defaults: dict[str, object] = field(default_factory=dict)  # config key → the default taken where the config has none
    towers: tuple[Piece, ...] = ()  # a multimodal checkpoint's vision tower and projector, counted apart
    multimodal: str | None = None  # its top-level model_type (gemma3, qwen2_5_vl, ...)
    scheme: Scheme | None = None  # the quantization_config's scheme, where the checkpoint is quantized
    dtype_bytes: int = 2  # bytes of the checkpoint's unquantized values (torch_dtype)
    unread_keys: tuple[str, ...] = ()  # structural-looking keys counted without (only under allow_unread_keys)

    def evaluate(self, expr: sp.Expr, **extra: int) -> int:
        """The exact value of an expression at this architecture (plus e.g. b, s)."""
        given = dict(self.values)
        given.update({S.quantity(name).symbol: value for name, value in extra.items()})
        value = as_sympy(expr).xreplace(S.constant_values()).xreplace(given)  # symbols only: a structural replace
        if value.free_symbols:
            names = ", ".join(sorted(x.name for x in value.free_symbols))
            raise ConfigError(f"{self.model_type}: no value for {names}")
        if not value.is_integer:
            raise ConfigError(f"{self.model_type}: the count came out as {value}, not a whole number")
        return int(value)

    def stored_weight_bytes(self, dtype_bytes: int | None = None) -> dict:
        """The bytes of the weights as the checkpoint stores them, with the parameter count (unchanged by quantization).

        ``dtype_bytes`` overrides the checkpoint's dtype for the unquantized values (2: bf16/fp16, 4: fp32). Returns
        {"bytes", "parameters", "scheme", "quantized": {"parameters", "bytes"}, "unquantized": {"parameters",
        "bytes"}, "by_role": {role: bytes}}: the matrices the scheme converts priced by memory.weights.*, the rest
        (norms, biases, embedding, head, routers, the towers) at the dtype.
        """
        from llm_formulas.formulas.vocabulary.catalogue import get

        width = self.dtype_bytes if dtype_bytes is None else dtype_bytes
        names = {symbol.name: value for symbol, value in self.values.items()}
        total = self.evaluate(get("params.decoder.total").dimensioned) + sum(self.tower_parameters().values())
        by_role: dict[str, int] = {}
        converted_params = converted_bytes = 0
        for matrix in inventory(names):
            params = matrix.count * matrix.d_in * matrix.d_out
            if self.scheme is not None and converts(matrix, self.scheme):
                each = self._matrix_bytes(matrix)
                converted_params += params
                converted_bytes += matrix.count * each
                by_role[matrix.role] = by_role.get(matrix.role, 0) + matrix.count * each
            else:
                by_role[matrix.role] = by_role.get(matrix.role, 0) + params * width
        rest = total - converted_params
        listed = sum(by_role.values()) - converted_bytes
        by_role["other"] = rest * width - listed  # norms, biases, convolutions, positions, the towers
        buffers = 4 * names["score_bias"] * names["E"] * names["l_moe"]  # fp32 routing-score correction biases
        if self.scheme is not None:  # ModelOpt's FP8 cache: an fp32 k_scale and v_scale in each attention layer
            buffers += self.scheme.kv_scale_bytes * (names["l"] - names["l_noattn"] - sum(names[n] for n in ("l_mamba", "l_ssd", "l_lru", "l_gdn")))
        if buffers:
            by_role["buffers"] = buffers
        return {"bytes": converted_bytes + rest * width + buffers, "parameters": total, "scheme": None if self.scheme is None else self.scheme.method,
                "dtype_bytes": width, "quantized": {"parameters": converted_params, "bytes": converted_bytes},
                "unquantized": {"parameters": rest, "bytes": rest * width}, "by_role": by_role}

    def _matrix_bytes(self, matrix) -> int:
        """One matrix as the scheme stores it; a fused pair as its two matrices where the checkpoint keeps them apart."""
        from llm_formulas.formulas.vocabulary.catalogue import get

        parts = matrix.parts if self.scheme.split_fused else 1
        sizes = dict(self.scheme.values)
        if sizes.get("G_q") == -1:  # one group per input row set: the whole input
            sizes["G_q"] = matrix.d_in
        sizes.update({"d_in": matrix.d_in, "d_out": matrix.d_out // parts})
        values = {S.quantity(name).symbol: value for name, value in sizes.items()}
        return parts * Architecture(self.model_type, values).evaluate(get(self.scheme.formula_id).dimensioned)

    def tower_parameters(self) -> dict[str, int]:
        """The vision tower's and the projector's parameters (empty for a text-only model)."""
        from llm_formulas.formulas.vocabulary.catalogue import get

        counts: dict[str, int] = {}
        for piece in self.towers:
            formula = get(piece.formula_id).dimensioned
            names = {symbol.name for symbol in formula.free_symbols}
            values = {S.quantity(name).symbol: value for name, value in piece.values.items() if name in names}
            counted = Architecture(self.model_type, values).evaluate(formula)
            counts[piece.component] = counts.get(piece.component, 0) + piece.count * counted
        return counts


# Keys that bring parameters or layers the counts leave out: refused, never silently ignored.
UNMODELLED_KEYS = {
    "vision_config": "a vision tower of a model_type without one; pass the text model's config (its text_config)",
    "audio_config": "an audio tower; pass the text model's config",
}


DROPOUT_KEYS = ("resid_pdrop", "embd_pdrop", "attn_pdrop", "hidden_dropout", "attention_dropout", "dropout", "resid_dropout",
                "embed_dropout")
DROPOUT_DEFAULTS = {"gpt2": {"resid_pdrop": 0.1, "embd_pdrop": 0.1, "attn_pdrop": 0.1}, "opt": {"dropout": 0.1}}  # transformers'


def _dropout(config: dict, model_type: str) -> int:
    """σ_drop: 1 if the config trains with any dropout (its keys, else transformers' defaults: GPT-2 and OPT 0.1, the
    other families 0), so a framework's blocks save masks (formulas/topics/memory.py, the decoder forms)."""
    defaults = DROPOUT_DEFAULTS.get(model_type, {})
    rates = [config.get(key, defaults.get(key, 0.0)) for key in DROPOUT_KEYS]
    for key, rate in zip(DROPOUT_KEYS, rates):
        if not isinstance(rate, (int, float)) or isinstance(rate, bool) or not 0 <= rate < 1:
            raise ConfigError(f"{model_type} config: {key!r} must be a dropout probability in [0, 1), got {short(rate)}")
    return int(any(rate > 0 for rate in rates))


def read_config(config: object, allow_unread_keys: bool = False) -> Architecture:
    """A config.json dict → Architecture; ConfigError names what is wrong, and every structural key the family does not
    read (formulas/data/unread_keys.py) unless ``allow_unread_keys``, when the Architecture lists them for a caveat."""
    if not isinstance(config, dict):
        raise ConfigError(f"a config must be a JSON object, got {type(config).__name__}")
    model_type = config.get("model_type")
    if model_type is None:
        raise ConfigError("config: missing key 'model_type'")
    if isinstance(model_type, str) and model_type in MULTIMODAL:
        return _read_multimodal(config, model_type, allow_unread_keys)
    family = FAMILIES.get(model_type) if isinstance(model_type, str) else None
    if isinstance(model_type, str) and model_type in REFUSED:
        raise ConfigError(f"{model_type} is not counted: {REFUSED[model_type]}")
    if family is None:
        raise ConfigError(f"unknown model_type {short(model_type)}; known: {', '.join(sorted({*FAMILIES, *MULTIMODAL}))}")
    for key, what in UNMODELLED_KEYS.items():
        if config.get(key) is not None:
            raise ConfigError(f"{model_type} config: {key!r} is not counted ({what})")
    scheme = read_scheme(config, model_type)
    reader = Config(config, model_type)
    values, layers = read_family(family, reader)
    values[S.drop] = _dropout(config, model_type)
    unread = check_unread(unread_structural_keys(config, reader, family), model_type, allow_unread_keys)
    kinds = tuple(layer.mixer for layer in layers)
    return Architecture(model_type, values, kinds, family, layers, dict(reader.read), dict(reader.defaulted),
                        scheme=scheme, dtype_bytes=checkpoint_dtype_bytes(config), unread_keys=unread)


def context_window(config: dict) -> int | None:
    """The config's ``max_position_embeddings`` (the longest sequence its positions cover), held to the rules of every
    size key (a positive integer up to MAX_SIZE, never a bool, a string or a fraction), or None when absent or null."""
    model_type = config.get("model_type")
    return Config(config, model_type if isinstance(model_type, str) else "config").optional_size("max_position_embeddings")


def _read_multimodal(config: dict, model_type: str, allow_unread_keys: bool) -> Architecture:
    """A multimodal config: its text_config by the text family, its vision_config by the declared tower."""
    declared = MULTIMODAL[model_type]
    top = Config(config, model_type)
    text, vision = config.get("text_config"), config.get("vision_config")
    for key, value in (("text_config", text), ("vision_config", vision)):
        if not isinstance(value, dict):
            raise ConfigError(f"{model_type} config: {key!r} must be an object, got {short(value)}")
    if config.get("audio_config") is not None:
        raise ConfigError(f"{model_type} config: 'audio_config' is not counted ({UNMODELLED_KEYS['audio_config']})")
    scheme = read_scheme(config, model_type)
    text_type = text.get("model_type", declared.text_type)
    family = FAMILIES.get(text_type) if isinstance(text_type, str) else None
    if family is None:
        raise ConfigError(f"{model_type} config: text_config model_type {short(text_type)} is not a known text family")
    tied = declared.tied.fn(top, {})
    reader = Config({**text, "tie_word_embeddings": bool(tied)}, f"{model_type} text_config")
    values, layers = read_family(family, reader)
    values[S.drop] = _dropout(text, text_type)
    unread = check_unread(unread_structural_keys(text, reader, family), f"{model_type} text_config", allow_unread_keys)
    pieces = tower_pieces(declared.tower, Config(vision, f"{model_type} vision_config"), top, values[S.h])
    return Architecture(text_type, values, tuple(layer.mixer for layer in layers), family, layers, dict(reader.read),
                        dict(reader.defaulted), pieces, model_type, scheme, checkpoint_dtype_bytes(config), unread)
