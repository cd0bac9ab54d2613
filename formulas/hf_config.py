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
    family = FAMILIES.get(model_type) if isinstance(model_type, str) else None
    if family is None:
        raise ConfigError(f"unknown model_type {short(model_type)}; known: {', '.join(sorted(FAMILIES))}")
    for key, what in UNMODELLED_KEYS.items():
        if config.get(key) is not None:
            raise ConfigError(f"{model_type} config: {key!r} is not counted ({what})")
    reader = Config(config, model_type)
    values, layers = read_family(family, reader)
    kinds = tuple(layer.mixer for layer in layers)
    return Architecture(model_type, values, kinds, family, layers, dict(reader.read), dict(reader.defaulted))
