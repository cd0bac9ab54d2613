"""Read a Hugging Face ``config.json`` (a dict) into the sizes and switches of formulas/architecture.py.

Each ``model_type`` is a declaration in formulas/families.py (its decoder block as data, read by
formulas/blocks.py): which structural choice the family makes, as transformers 5.24 builds it, and which config
keys say so. A key a config.json may leave out takes transformers' default, a size that has no default must be
there. An unknown model_type, a missing key, a value of the wrong kind, or a feature the counts do not model (an
unknown layer type, a quantization scheme the stored-bytes count does not know) raises ConfigError, naming it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import sympy as sp

from llm_formulas.formulas import symbols as S
from llm_formulas.formulas.blocks import MAX_SIZE, Config, ConfigError, Family, Layer, read_family, short
from llm_formulas.formulas.families import FAMILIES
from llm_formulas.formulas.multimodal import MULTIMODAL, Piece, tower_pieces

__all__ = ["MAX_SIZE", "Architecture", "ConfigError", "read_config"]


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

    def evaluate(self, expr: sp.Expr, **extra: int) -> int:
        """The exact value of an expression at this architecture (plus e.g. b, s)."""
        given = dict(self.values)
        given.update({S.quantity(name).symbol: value for name, value in extra.items()})
        value = sp.sympify(expr).xreplace(S.constant_values()).xreplace(given)  # symbols only: a structural replace
        if value.free_symbols:
            names = ", ".join(sorted(x.name for x in value.free_symbols))
            raise ConfigError(f"{self.model_type}: no value for {names}")
        if not value.is_integer:
            raise ConfigError(f"{self.model_type}: the count came out as {value}, not a whole number")
        return int(value)

    def tower_parameters(self) -> dict[str, int]:
        """The vision tower's and the projector's parameters (empty for a text-only model)."""
        from llm_formulas.formulas.catalogue import get

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
    "vision_config": "a vision tower; pass the text model's config (its text_config)",
    "audio_config": "an audio tower; pass the text model's config",
    "quantization_config": "quantized weights and their scales; count the unquantized model without it",
}


def read_config(config: object) -> Architecture:
    """A config.json dict → Architecture; ConfigError names what is wrong."""
    if not isinstance(config, dict):
        raise ConfigError(f"a config must be a JSON object, got {type(config).__name__}")
    model_type = config.get("model_type")
    if model_type is None:
        raise ConfigError("config: missing key 'model_type'")
    if isinstance(model_type, str) and model_type in MULTIMODAL:
        return _read_multimodal(config, model_type)
    family = FAMILIES.get(model_type) if isinstance(model_type, str) else None
    if family is None:
        raise ConfigError(f"unknown model_type {short(model_type)}; known: {', '.join(sorted({*FAMILIES, *MULTIMODAL}))}")
    for key, what in UNMODELLED_KEYS.items():
        if config.get(key) is not None:
            raise ConfigError(f"{model_type} config: {key!r} is not counted ({what})")
    reader = Config(config, model_type)
    values, layers = read_family(family, reader)
    kinds = tuple(layer.mixer for layer in layers)
    return Architecture(model_type, values, kinds, family, layers, dict(reader.read), dict(reader.defaulted))


def _read_multimodal(config: dict, model_type: str) -> Architecture:
    """A multimodal config: its text_config by the text family, its vision_config by the declared tower."""
    declared = MULTIMODAL[model_type]
    top = Config(config, model_type)
    text, vision = config.get("text_config"), config.get("vision_config")
    for key, value in (("text_config", text), ("vision_config", vision)):
        if not isinstance(value, dict):
            raise ConfigError(f"{model_type} config: {key!r} must be an object, got {short(value)}")
    for key in ("audio_config", "quantization_config"):
        if config.get(key) is not None:
            raise ConfigError(f"{model_type} config: {key!r} is not counted ({UNMODELLED_KEYS[key]})")
    text_type = text.get("model_type", declared.text_type)
    family = FAMILIES.get(text_type) if isinstance(text_type, str) else None
    if family is None:
        raise ConfigError(f"{model_type} config: text_config model_type {short(text_type)} is not a known text family")
    tied = declared.tied.fn(top, {})
    reader = Config({**text, "tie_word_embeddings": bool(tied)}, f"{model_type} text_config")
    values, layers = read_family(family, reader)
    pieces = tower_pieces(declared.tower, Config(vision, f"{model_type} vision_config"), top, values[S.h])
    return Architecture(text_type, values, tuple(layer.mixer for layer in layers), family, layers, dict(reader.read),
                        dict(reader.defaulted), pieces, model_type)
