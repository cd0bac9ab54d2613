"""A decoder block as data: what a family declares, and the one reader that maps a config.json onto the symbols.

A family is a :class:`Family`: its attention (heads, key/value heads, head width, biases, q/k norms, sinks, an
output gate, latent attention), its norms (RMSNorm or LayerNorm, how many per layer and where), its MLP (gated or
not, biases), its experts (which layers, how many, shared experts, router bias), its embedding and head (tied or
not, a position table), its per-layer kinds (windows, recurrent mixers) and its recurrent mixer's sizes. Every
choice is a *spec*: a number the family fixes, or a config key with transformers' default for a config.json that
leaves it out (:class:`Key`, :class:`Flag`, :class:`Count`), or, where no single key says it, a :class:`Rule`
with the words for it. ``read_family`` resolves the specs in a fixed order into the values of the general
decoder's symbols (formulas/topics/architecture.py) and the list of layer kinds; every key it looks at is recorded, so
``params`` can say which keys it read and which defaults it took.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Union

import sympy as sp

from llm_formulas.formulas.vocabulary import symbols as S
from llm_formulas.formulas.vocabulary.bounds import MAX_LAYERS, MAX_SIZE


class ConfigError(ValueError):
    """A config the readers cannot map: the message names the model_type or key."""


# no real dimension comes near MAX_SIZE, nor a depth near MAX_LAYERS (formulas/vocabulary/bounds.py): a larger one is a typo or an
# attack, and the reader builds one entry per layer
LAYER_KEYS = ("num_hidden_layers", "n_layer", "n_layers", "num_layers", "num_nextn_predict_layers", "max_window_layers")


def short(value: object) -> str:
    """A value for an error line, cut to a readable length."""
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


class Config:
    """Typed access to one config dict; every complaint names the model_type and key, every key read is recorded."""

    def __init__(self, data: dict, model_type: str) -> None:
        self.data = data
        self.model_type = model_type
        self.read: dict[str, object] = {}  # key → the value given, in the order first read
        self.defaulted: dict[str, object] = {}  # key → the default taken because the config leaves it out

    def raw(self, key: str) -> object:
        """A key's value or None; a dotted key reads a nested object (DBRX's attn_config.kv_n_heads)."""
        value: object = self.data
        for part in key.split("."):
            value = value.get(part) if isinstance(value, dict) else None
        return value

    def get(self, key: str, default: object = None) -> object:
        """The raw value (recorded as read, or as defaulted)."""
        value = self.raw(key)
        if value is None:
            self.defaulted.setdefault(key, default)
            return default
        self.read.setdefault(key, value)
        return value

    def setting(self, key: str, default: object) -> object:
        """A value as transformers' config class reads it: a key left out takes the class's default, a key given as
        null is None (Mistral-7B-v0.3's "sliding_window": null means no window, not the default 4096)."""
        return self.get(key, None if key in self.data else default)

    def fail(self, key: str, wanted: str, value: object) -> ConfigError:
        return ConfigError(f"{self.model_type} config: {key!r} must be {wanted}, got {short(value)}")

    def size(self, *keys: str, default: int | None = None) -> int:
        """The first key present (aliases), a positive integer; else the default, else an error."""
        for key in keys:
            value = self.raw(key)
            if value is not None:
                self.read.setdefault(key, value)
                if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
                    raise self.fail(key, "a positive integer", value)
                limit = MAX_LAYERS if key.split(".")[-1] in LAYER_KEYS else MAX_SIZE
                if value > limit:
                    raise ConfigError(f"{self.model_type} config: {key!r} = {short(value)} is out of range (at most {limit:,})")
                return value
        if default is None:
            raise ConfigError(f"{self.model_type} config: missing key {keys[0]!r}")
        self.defaulted.setdefault(keys[0], default)
        return default

    def count(self, key: str, default: int) -> int:
        """A non-negative integer (0 switches a feature off: num_nextn_predict_layers = 0, no MTP module)."""
        value = self.get(key, default)
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise self.fail(key, "a non-negative integer", value)
        limit = MAX_LAYERS if key.split(".")[-1] in LAYER_KEYS else MAX_SIZE
        if value > limit:
            raise ConfigError(f"{self.model_type} config: {key!r} = {short(value)} is out of range (at most {limit:,})")
        return value

    def optional_size(self, key: str, default: int | None = None) -> int | None:
        """A positive integer that may be absent or null (a feature switched off)."""
        if (default if self.raw(key) is None and key not in self.data else self.raw(key)) is None:
            (self.read if key in self.data else self.defaulted).setdefault(key, None)
            return None
        return self.size(key, default=default)

    def flag(self, key: str, default: bool) -> int:
        value = self.get(key, default)
        if not isinstance(value, bool):
            raise self.fail(key, "true or false", value)
        return int(value)

    def indices(self, key: str, layers: int, default: list[int]) -> set[int]:
        """A list of layer indices (Llama-4's moe_layers), each in range."""
        value = self.get(key, default)
        if not isinstance(value, list) or any(isinstance(i, bool) or not isinstance(i, int) or not 0 <= i < layers for i in value):
            raise self.fail(key, f"a list of layer indices below {layers}", value)
        return set(value)

    def strings(self, key: str, layers: int) -> list[str] | None:
        """A per-layer list of strings (layer_types), or None when absent."""
        value = self.get(key)
        if value is None:
            return None
        if not isinstance(value, list) or len(value) != layers or not all(isinstance(x, str) for x in value):
            raise ConfigError(f"{self.model_type} config: {key!r} must list {layers} layer types, got {short(value)}")
        return value

    def refuse(self, key: str, unsupported: object, why: str) -> None:
        """A feature the counts do not model: one line naming the key."""
        if self.raw(key) == unsupported:
            raise ConfigError(f"{self.model_type} config: {key!r} = {short(unsupported)} is not modelled ({why})")


# --- specs: how one value is read -------------------------------------------------------------------


@dataclass(frozen=True)
class Key:
    """A positive size: the first of ``names`` the config holds, else ``default`` (a number, a spec, or None: required)."""

    names: tuple[str, ...]
    default: "Spec | None" = None

    def __init__(self, *names: str, default: "Spec | None" = None) -> None:
        object.__setattr__(self, "names", names)
        object.__setattr__(self, "default", default)


@dataclass(frozen=True)
class Flag:
    """A true/false key as 1/0, ``default`` (a bool, or a spec) where the config leaves it out."""

    name: str
    default: "bool | Spec" = False


@dataclass(frozen=True)
class Count:
    """A non-negative integer key (0 allowed)."""

    name: str
    default: int = 0


@dataclass(frozen=True)
class Rule:
    """What no single key says: a function of the config and the values so far, with the words that say it."""

    why: str
    fn: Callable[[Config, dict], int]


Spec = Union[int, Key, Flag, Count, Rule]


def resolve(spec: Spec, config: Config, values: dict) -> int:
    """The value of one spec for this config (values: the symbols read so far, by name)."""
    if isinstance(spec, bool):
        return int(spec)
    if isinstance(spec, int):
        return spec
    if isinstance(spec, Key):
        present = next((name for name in spec.names if config.raw(name) is not None), None)
        if present is None and spec.default is not None and not isinstance(spec.default, int):
            fallback = resolve(spec.default, config, values)
            config.defaulted.setdefault(spec.names[0], fallback)
            return fallback
        return config.size(*spec.names, default=spec.default)
    if isinstance(spec, Flag):
        if config.raw(spec.name) is None and not isinstance(spec.default, bool):
            fallback = resolve(spec.default, config, values)
            config.defaulted.setdefault(spec.name, bool(fallback))
            return fallback
        return config.flag(spec.name, spec.default)
    if isinstance(spec, Count):
        return config.count(spec.name, spec.default)
    if isinstance(spec, Rule):
        return int(spec.fn(config, values))
    raise TypeError(spec)


def fixed(spec: Spec) -> int | None:
    """The value a family fixes whatever its config says, or None where a config key decides."""
    return int(spec) if isinstance(spec, int) else None


def same_as(name: str) -> Rule:
    return Rule(f"= {name}", lambda config, values: values[name])


HEAD_DIM = Rule("h / a", lambda config, values: _head_dim(config, values["h"], values["a"]))


def _head_dim(config: Config, h: int, a: int) -> int:
    if h % a:
        raise ConfigError(f"{config.model_type} config: hidden size {h} is not a multiple of {a} heads")
    return h // a


# --- the parts of a block ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Latent:
    """Multi-head latent attention's ranks and head parts (DeepSeek-V2/V3); None query rank: no query latent."""

    q_rank: Spec
    kv_rank: Spec
    rope: Spec
    nope: Spec
    v: Spec


@dataclass(frozen=True)
class Attention:
    """Heads, key/value heads (GQA; MQA: 1), head width, biases, q/k norms, sinks, an output gate, latent attention."""

    heads: Spec = Key("num_attention_heads")
    kv_heads: Spec = Key("num_key_value_heads", default=same_as("a"))
    head_dim: Spec = Key("head_dim", default=HEAD_DIM)
    qkv_bias: Spec = 0
    out_bias: Spec = 0
    qk_norm: Spec = 0  # an RMSNorm of d_head on each query and key head (Qwen3)
    qk_norm_all: Spec = 0  # a norm over all heads' queries and keys, or one per head of its own (OLMo-2, Cohere)
    sinks: Spec = 0
    gate: Spec = 0
    kv_expand: Spec = 0
    cross: Spec = 0
    latent: Latent | None = None


@dataclass(frozen=True)
class Mlp:
    width: Spec = Key("intermediate_size")
    gated: Spec = 1
    bias: Spec = 0


@dataclass(frozen=True)
class Norms:
    """Norms per layer and where they sit (words for the guide: pre, post, sandwich, parallel)."""

    layer_norm: Spec = 0  # 1: LayerNorm with a shift; 0: RMSNorm (or a LayerNorm without bias)
    per_layer: Spec = 2
    placement: str = "pre"
    kind: str = ""  # the norm's name where the switch alone does not say it (a LayerNorm without a shift)
    final: Spec = 1
    embedding: Spec = 0


@dataclass(frozen=True)
class Embedding:
    tied: Spec = Flag("tie_word_embeddings", False)
    head_bias: Spec = 0
    positions: Spec = 0  # a learned position table of n_pos (+ o_pos) rows
    n_pos: Spec = 1  # no table (positions = 0): a placeholder the counts multiply by 0; n_pos is a positive size
    o_pos: Spec = 0
    width: Spec = same_as("h")
    project: Spec = 0


Layout = Callable[[Config, int], set[int]]  # the MoE layer indices of l layers


@dataclass(frozen=True)
class Experts:
    layout: Layout
    count: Spec
    per_token: Spec
    width: Spec
    shared: Spec = 0  # total width of the shared experts
    latent: str | None = None  # the key of the latent width the routed experts work at (absent or null: they read h)
    shared_gate: Spec = 0
    router_bias: Spec = 0
    all_experts: Spec = 0
    score_bias: Spec = 0  # an fp32 e_score_correction_bias buffer of E in each MoE layer


@dataclass(frozen=True)
class Mixer:
    """A recurrent mixer's sizes, by symbol name (formulas/topics/recurrent.py), and the kind of layer it makes."""

    kind: str  # "mamba", "mamba2", "rglru", "gdn"
    sizes: dict[str, Spec]


LayerPattern = Callable[[Config, int], list[str]]  # per layer: a layer_types entry (full_attention, sliding_attention, ...)


@dataclass(frozen=True)
class Kinds:
    """Per-layer kinds: the family's rule for layer_types when the config leaves them out (None: every layer full
    attention, layer_types not read), its sliding_window default, the mixer a recurrent entry means, and whether a
    layer is one block, a mixer or an MLP but not both (Mamba, Nemotron-H)."""

    pattern: LayerPattern | None = None
    window_default: int | None = None
    recurrent: str | None = None  # what "linear_attention"/"mamba" entries are: "mamba", "mamba2", "rglru", "gdn"
    types_key: str = "layer_types"
    single_block: bool = False
    window_keys: tuple[str, ...] = ("sliding_window",)


@dataclass(frozen=True)
class Family:
    """One model_type: the few lines of data that say how its decoder block is built (transformers 5.24)."""

    model_type: str
    title: str
    layers: Spec = Key("num_hidden_layers")
    hidden: Spec = Key("hidden_size")
    vocab: Spec = Key("vocab_size")
    attention: Attention = Attention()
    mlp: Mlp = Mlp()
    norms: Norms = Norms()
    embedding: Embedding = Embedding()
    experts: Experts | None = None
    mixer: Mixer | None = None
    kinds: Kinds = Kinds()
    extra: dict[str, Spec] = field(default_factory=dict)  # any other symbol by name (a family's own rule)
    refuse: tuple[tuple[str, object, str], ...] = ()
    not_structural: dict[str, str] = field(default_factory=dict)  # keys whose names look structural but which change no weight here, why
    reduces_to: str | None = "llama"  # the classic form its declaration reduces to (derivations/data/families.py)
    why_not: str = ""  # where it reduces to none: what keeps it from the classic forms


# --- per-layer kinds -------------------------------------------------------------------------------------

ATTENTION_TYPES = {"full_attention": "full", "attention": "full", "sliding_attention": "window", "chunked_attention": "window"}
RECURRENT_TYPES = ("linear_attention", "mamba", "recurrent")
CHANNEL_ONLY = {"mlp": "mlp", "moe": "moe"}  # Nemotron-H's layers without a mixer
MIXER_COUNTS = {"mamba": "l_mamba", "mamba2": "l_ssd", "rglru": "l_lru", "gdn": "l_gdn"}
NEUTRAL = {"d_ssm": 0, "N_ssm": 0, "r_dt": 0, "k_conv": 0, "b_ssm": 0, "b_conv": 0, "dt_norm": 0, "n_ssmh": 0, "n_grp": 0,
           "Q_ssd": 1, "d_lru": 0, "w_lru": 0, "n_kh": 0, "n_vh": 0, "d_kh": 0, "d_vh": 0, "Q_gdn": 1}


@dataclass(frozen=True)
class Layer:
    """One layer as built: its token mixer (full, window, a recurrent kind, or none) and its channel part."""

    mixer: str  # "full", "window", "mamba", "mamba2", "rglru", "gdn", "none"
    channel: str  # "mlp", "moe", "none"


def layer_types(family: Family, config: Config, layers: int) -> list[str]:
    kinds = family.kinds
    if kinds.pattern is None:
        return ["full_attention"] * layers
    types = config.strings(kinds.types_key, layers) or kinds.pattern(config, layers)
    known = (*ATTENTION_TYPES, *(RECURRENT_TYPES if kinds.recurrent else ()), *CHANNEL_ONLY)
    for index, kind in enumerate(types):
        if kind not in known:
            raise ConfigError(f"{config.model_type} config: {kinds.types_key}[{index}] = {short(kind)} is not modelled "
                              f"(known: {', '.join(known)})")
    return types


def _layers(family: Family, types: list[str]) -> list[Layer]:
    channel = "none" if family.kinds.single_block else "mlp"  # the channel part of a layer that has a mixer
    built = []
    for kind in types:
        if kind in CHANNEL_ONLY:
            built.append(Layer("none", CHANNEL_ONLY[kind]))
        elif kind in RECURRENT_TYPES:
            built.append(Layer(family.kinds.recurrent, channel))
        else:
            built.append(Layer(ATTENTION_TYPES[kind], channel))
    return built


# --- the reader -------------------------------------------------------------------------------------------


def classic_values() -> dict[str, int]:
    """Every symbol of the general decoder at a value that switches its feature off (the starting point)."""
    return {
        "E": 1, "k": 1, "l_moe": 0, "d_sh": 0, "sh_gate": 0, "router_bias": 0, "all_experts": 0, "mla": 0, "q_lora": 0,
        "r_q": 0, "r_kv": 0, "d_rope": 0, "d_nope": 0, "d_v": 0, "l_win": 0, "W": 1, "n_mtp": 0, "emb_norm": 0,
        "l_mamba": 0, "l_ssd": 0, "l_lru": 0, "l_gdn": 0, "l_noattn": 0, "l_nomlp": 0, "qk_norm": 0, "qk_norm_full": 0, "sink": 0,
        "attn_gate": 0, "kv_expand": 0, "x_attn": 0, "score_bias": 0, "moe_lat": 0, "d_lat": 0, "dsa": 0, "n_idx": 0, "d_idx": 0, "k_top": 0, **NEUTRAL,
    }


def declared(family: Family) -> list[tuple[str, Spec]]:
    """The family's spec of each symbol, in the order the reader resolves them (MLA's query rank as "r_q")."""
    att, mlp, norms, emb = family.attention, family.mlp, family.norms, family.embedding
    latent = [] if att.latent is None else [("r_q", att.latent.q_rank), ("r_kv", att.latent.kv_rank), ("d_rope", att.latent.rope),
                                            ("d_nope", att.latent.nope), ("d_v", att.latent.v)]
    mixer = [] if family.mixer is None else list(family.mixer.sizes.items())
    return [
        ("h", family.hidden), ("a", att.heads), *latent, ("g", att.kv_heads), ("d_head", att.head_dim), ("b_q", att.qkv_bias),
        ("b_o", att.out_bias), ("qk_norm", att.qk_norm), ("qk_norm_full", att.qk_norm_all), ("sink", att.sinks),
        ("attn_gate", att.gate), ("kv_expand", att.kv_expand), ("x_attn", att.cross), ("l", family.layers),
        ("d_ff", mlp.width), ("gated", mlp.gated), ("b_mlp", mlp.bias), ("norm_bias", norms.layer_norm), ("n_norm", norms.per_layer),
        ("norm_final", norms.final), ("emb_norm", norms.embedding), ("tied", emb.tied), ("head_bias", emb.head_bias),
        ("pos_table", emb.positions), ("n_pos", emb.n_pos), ("o_pos", emb.o_pos), ("d_emb", emb.width), ("proj_emb", emb.project),
        ("V", family.vocab), *mixer, *family.extra.items(),
    ]


def read_family(family: Family, config: Config) -> tuple[dict[sp.Symbol, int], tuple[Layer, ...]]:
    """The symbol values and the layers of one config of this family."""
    for key, value, why in family.refuse:
        config.refuse(key, value, why)
    v = classic_values()
    for name, spec in declared(family):
        if name == "r_q":  # a null q_lora_rank: queries straight from the hidden state (DeepSeek-V2-Lite)
            r_q = _optional(spec, config, v)
            v.update({"mla": 1, "q_lora": int(r_q is not None), "r_q": r_q or 0})
            continue
        v[name] = resolve(spec, config, v)
        if name == "b_q":
            v["b_k"] = v["b_v"] = v["b_q"]
        if name == "d_ff":
            v["d_moe"] = v["d_ff"]
    types = layer_types(family, config, v["l"])
    layers = _layers(family, types)
    if family.experts is not None:
        layers = _with_experts(family.experts, config, v, layers)
    v.update(_counts(family, config, layers, chunked="chunked_attention" in types))
    if v["a"] % v["g"]:
        raise ConfigError(f"{config.model_type} config: {v['a']} attention heads are not a multiple of {v['g']} key/value heads")
    if v["k"] > v["E"]:
        raise ConfigError(f"{config.model_type} config: more experts per token ({v['k']}) than experts ({v['E']})")
    return {S.quantity(name).symbol: value for name, value in v.items()}, tuple(layers)


def _optional(spec: Spec, config: Config, values: dict) -> int | None:
    """A size that null (or a Key default of None) switches off: MLA's q_lora_rank."""
    if isinstance(spec, Key) and isinstance(spec.default, int):
        return config.optional_size(spec.names[0], default=spec.default)
    return resolve(spec, config, values)


def _with_experts(experts: Experts, config: Config, v: dict, layers: list[Layer]) -> list[Layer]:
    for name, spec in (("E", experts.count), ("k", experts.per_token), ("d_moe", experts.width), ("d_sh", experts.shared),
                       ("sh_gate", experts.shared_gate), ("router_bias", experts.router_bias), ("all_experts", experts.all_experts),
                       ("score_bias", experts.score_bias)):
        v[name] = resolve(spec, config, v)
    if experts.latent is not None:  # Nemotron-3-Super's moe_latent_size: null or absent, the experts read h
        latent = config.optional_size(experts.latent)
        v.update({"moe_lat": int(latent is not None), "d_lat": latent or 0})
    moe = experts.layout(config, v["l"])
    return [Layer(layer.mixer, "moe") if i in moe and layer.channel == "mlp" else layer for i, layer in enumerate(layers)]


def _counts(family: Family, config: Config, layers: list[Layer], chunked: bool) -> dict[str, int]:
    counts = {name: sum(layer.mixer == kind for layer in layers) for kind, name in MIXER_COUNTS.items()}
    windowed = sum(layer.mixer == "window" for layer in layers)
    counts.update({
        "l_win": windowed,
        "l_noattn": sum(layer.mixer == "none" for layer in layers),
        "l_nomlp": sum(layer.channel == "none" for layer in layers),
        "l_moe": sum(layer.channel == "moe" for layer in layers),
    })
    if windowed:  # Llama-4's chunked layers are held as a window of the chunk size
        counts["W"] = (config.size("attention_chunk_size", default=8192) if chunked
                       else config.size(*family.kinds.window_keys, default=family.kinds.window_default))
    return counts
