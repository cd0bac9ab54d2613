"""Read a Hugging Face ``config.json`` (a dict) into the sizes and switches of formulas/architecture.py.

One reader per ``model_type`` (gpt2, gptj, gpt_neox, opt, bloom, falcon, llama,
mistral, mixtral, qwen2, gemma, phi3; deepseek_v2, deepseek_v3, qwen3, qwen3_moe,
qwen2_moe, gemma2, gemma3_text, gpt_oss, llama4_text, olmo2, glm4_moe, phimoe) says
which structural choice each family makes, as transformers 5.24 builds it: the
layers that are mixtures of experts, the layers with a sliding window or attention
chunks, multi-head latent attention. A key a config.json may leave out takes
transformers' default, a size that has no default must be there. An unknown
model_type, a missing key, a value of the wrong kind, or a feature the counts do
not model (a vision tower, quantized weights, a linear-attention layer, an unknown
layer type) raises ConfigError, naming it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import sympy as sp

from llm_formulas.formulas import symbols as S


class ConfigError(ValueError):
    """A config the readers cannot map: the message names the model_type or key."""


MAX_SIZE = 2**31  # no real dimension comes near; a larger one is a typo or an attack


def _short(value: object) -> str:
    """A value for an error line, cut to a readable length."""
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


@dataclass(frozen=True)
class Architecture:
    """A model as values of the architecture symbols (every one the general formulas use)."""

    model_type: str
    values: dict[sp.Symbol, int]
    layer_kinds: tuple[str, ...] = ()  # "full" or "window" per layer, as the KV cache holds them

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


class _Reader:
    """Typed access to one config dict; every complaint names the model_type and key."""

    def __init__(self, config: dict, model_type: str) -> None:
        self.config = config
        self.model_type = model_type
        self.window_default: int | None = None  # the family's sliding_window when the config.json leaves it out

    def size(self, *keys: str, default: int | None = None) -> int:
        """The first key present (aliases), a positive integer; else the default, else an error."""
        for key in keys:
            value = self.config.get(key)
            if value is not None:
                if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
                    raise ConfigError(f"{self.model_type} config: {key!r} must be a positive integer, got {_short(value)}")
                if value > MAX_SIZE:
                    raise ConfigError(f"{self.model_type} config: {key!r} = {_short(value)} is out of range (at most 2^31)")
                return value
        if default is None:
            raise ConfigError(f"{self.model_type} config: missing key {keys[0]!r}")
        return default

    def optional_size(self, key: str, default: int | None = None) -> int | None:
        """A positive integer that may be absent or null (a feature switched off)."""
        if self.config.get(key, default) is None:
            return None
        return self.size(key, default=default)

    def indices(self, key: str, layers: int, default: list[int]) -> set[int]:
        """A list of layer indices (Llama-4's moe_layers), each in range."""
        value = self.config.get(key)
        if value is None:
            return set(default)
        if not isinstance(value, list) or any(isinstance(i, bool) or not isinstance(i, int) or not 0 <= i < layers for i in value):
            raise ConfigError(f"{self.model_type} config: {key!r} must be a list of layer indices below {layers}, got {_short(value)}")
        return set(value)

    def refuse(self, key: str, unsupported: object, why: str) -> None:
        """A feature the counts do not model: one line naming the key."""
        if self.config.get(key) == unsupported:
            raise ConfigError(f"{self.model_type} config: {key!r} = {_short(unsupported)} is not modelled ({why})")

    def flag(self, key: str, default: bool) -> int:
        value = self.config.get(key, default)
        if value is None:
            value = default
        if not isinstance(value, bool):
            raise ConfigError(f"{self.model_type} config: {key!r} must be true or false, got {_short(value)}")
        return int(value)


def _base(
    r: _Reader,
    *,
    h: int,
    a: int,
    l: int,  # noqa: E741 - the symbol's name
    d_ff: int,
    tied: bool,
    g: int | None = None,
    d_head: int | None = None,
    layer_norm: bool = False,
    n_norm: int = 2,
    gated: bool = False,
    bias_qkv: int = 0,
    bias_o: int = 0,
    bias_mlp: int = 0,
) -> dict[sp.Symbol, int]:
    """The values every family has; family readers override the rest."""
    return {
        S.h: h,
        S.a: a,
        S.g: a if g is None else g,
        S.d_head: _head_dim(r, h, a) if d_head is None else d_head,
        S.d_ff: d_ff,
        S.l: l,
        S.V: r.size("vocab_size"),
        S.d_emb: h,
        S.proj_emb: 0,
        S.E: 1,
        S.k: 1,
        S.l_moe: 0,
        S.d_moe: d_ff,
        S.d_sh: 0,
        S.sh_gate: 0,
        S.router_bias: 0,
        S.all_experts: 0,
        S.mla: 0,
        S.q_lora: 0,
        S.r_q: 0,
        S.r_kv: 0,
        S.d_rope: 0,
        S.d_nope: 0,
        S.d_v: 0,
        S.qk_norm: 0,
        S.qk_norm_full: 0,
        S.sink: 0,
        S.l_win: 0,
        S.W: 1,
        S.n_mtp: 0,
        S.pos_table: 0,
        S.gated: int(gated),
        S.b_q: bias_qkv,
        S.b_k: bias_qkv,
        S.b_v: bias_qkv,
        S.b_o: bias_o,
        S.b_mlp: bias_mlp,
        S.norm_bias: int(layer_norm),
        S.n_norm: n_norm,
        S.norm_final: 1,
        S.emb_norm: 0,
        S.tied: int(tied),
        S.head_bias: 0,
    }


def _head_dim(r: _Reader, h: int, a: int) -> int:
    if h % a:
        raise ConfigError(f"{r.model_type} config: hidden size {h} is not a multiple of {a} heads")
    return h // a


def _gpt2(r: _Reader) -> dict:
    h = r.size("n_embd", "hidden_size")
    values = _base(
        r, h=h, a=r.size("n_head", "num_attention_heads"), l=r.size("n_layer", "num_hidden_layers"),
        d_ff=r.size("n_inner", default=4 * h), tied=r.flag("tie_word_embeddings", True),
        layer_norm=True, bias_qkv=1, bias_o=1, bias_mlp=1,
    )
    values.update({S.pos_table: 1, S.n_pos: r.size("n_positions", "max_position_embeddings"), S.o_pos: 0})
    return values


def _gptj(r: _Reader) -> dict:
    h = r.size("n_embd", "hidden_size")
    values = _base(
        r, h=h, a=r.size("n_head", "num_attention_heads"), l=r.size("n_layer", "num_hidden_layers"),
        d_ff=r.size("n_inner", default=4 * h), tied=r.flag("tie_word_embeddings", False),
        layer_norm=True, n_norm=1, bias_mlp=1,  # one ln_1 feeds attention and MLP in parallel
    )
    values[S.head_bias] = 1
    return values


def _gpt_neox(r: _Reader) -> dict:
    bias = r.flag("attention_bias", True)
    return _base(
        r, h=r.size("hidden_size"), a=r.size("num_attention_heads"), l=r.size("num_hidden_layers"),
        d_ff=r.size("intermediate_size"), tied=r.flag("tie_word_embeddings", False),
        layer_norm=True, bias_qkv=bias, bias_o=bias, bias_mlp=1,
    )


def _opt(r: _Reader) -> dict:
    h = r.size("hidden_size")
    width = r.size("word_embed_proj_dim", default=h)
    bias = r.flag("enable_bias", True)
    affine = r.flag("layer_norm_elementwise_affine", True)
    values = _base(
        r, h=h, a=r.size("num_attention_heads"), l=r.size("num_hidden_layers"), d_ff=r.size("ffn_dim"),
        tied=r.flag("tie_word_embeddings", True), layer_norm=True, n_norm=2 * affine,
        bias_qkv=bias, bias_o=bias, bias_mlp=bias,
    )
    final = r.flag("do_layer_norm_before", True) and not r.flag("_remove_final_layer_norm", False)
    values.update({
        S.pos_table: 1, S.n_pos: r.size("max_position_embeddings"), S.o_pos: 2,  # OPTLearnedPositionalEmbedding
        S.norm_final: int(final) * affine,
        S.d_emb: width, S.proj_emb: int(width != h),  # project_in/out exist only when the widths differ
    })
    return values


def _bloom(r: _Reader) -> dict:
    h = r.size("hidden_size", "n_embed")
    values = _base(
        r, h=h, a=r.size("n_head", "num_attention_heads"), l=r.size("n_layer", "num_hidden_layers"), d_ff=4 * h,
        tied=r.flag("tie_word_embeddings", True), layer_norm=True, bias_qkv=1, bias_o=1, bias_mlp=1,
    )
    values[S.emb_norm] = 1
    return values


def _falcon(r: _Reader) -> dict:
    h, a = r.size("hidden_size", "n_embed"), r.size("num_attention_heads")
    new = r.flag("new_decoder_architecture", False)
    if new:
        g = r.size("num_kv_heads", default=a)
    else:
        g = 1 if r.flag("multi_query", True) else a
    parallel = r.flag("parallel_attn", True)
    lns = r.size("num_ln_in_parallel_attn", default=2 if new else 1)
    bias = r.flag("bias", False)
    return _base(
        r, h=h, a=a, g=g, l=r.size("num_hidden_layers"), d_ff=r.size("ffn_hidden_size", default=4 * h),
        tied=r.flag("tie_word_embeddings", True), layer_norm=True,
        n_norm=2 if (not parallel or lns == 2) else 1, bias_qkv=bias, bias_o=bias, bias_mlp=bias,
    )


def _llama_like(kv_default: int | None = None, head_dim_default: int | None = None, *, tied: bool = False,
                qkv_bias: str | int = 0, bias_default: bool = False, o_bias: bool = True, mlp_bias: bool = True,
                experts: tuple[int, int] | None = None, n_norm: int = 2, layer_norm: bool = False,
                window: str | None = None) -> Callable[[_Reader], dict]:
    """Llama and its relatives: RMSNorm, gated MLP, GQA; the family differences as arguments.

    ``experts``: every layer MoE, with the config class's defaults (experts, experts per token) for absent keys;
    ``window`` names transformers' rule for the windowed layers (formulas.hf_config.WINDOW_RULES).
    """

    def read(r: _Reader) -> dict:
        h, a = r.size("hidden_size"), r.size("num_attention_heads")
        d_head = r.size("head_dim", default=0) or head_dim_default or _head_dim(r, h, a)
        bias = r.flag(qkv_bias, bias_default) if isinstance(qkv_bias, str) else qkv_bias
        values = _base(
            r, h=h, a=a, g=r.size("num_key_value_heads", default=kv_default or a), d_head=d_head,
            l=r.size("num_hidden_layers"), d_ff=r.size("intermediate_size"),
            tied=r.flag("tie_word_embeddings", tied), gated=True, layer_norm=layer_norm, n_norm=n_norm,
            bias_qkv=bias, bias_o=bias if isinstance(qkv_bias, str) and o_bias else 0,
            bias_mlp=r.flag("mlp_bias", False) if mlp_bias else 0,
        )
        if experts is not None:
            values.update({S.l_moe: values[S.l], S.E: r.size("num_local_experts", "num_experts", default=experts[0]),
                           S.k: r.size("num_experts_per_tok", default=experts[1])})
        if window is not None:
            values.update(_windows(r, values[S.l], window))
        return values

    return read


# --- windows: which layers keep only the latest tokens -------------------------------

LAYER_KINDS = {"full_attention": "full", "sliding_attention": "window", "chunked_attention": "window"}


def _pattern(r: _Reader, layers: int, rule: str) -> list[str]:
    """transformers' layer_types when the config.json leaves them out (each family's configuration_*.py)."""
    if rule == "all":  # Mistral, Mixtral, Phi-3, PhiMoE: sliding_window set → every layer (cache_utils.get_layer_types_and_kwargs)
        return ["sliding_attention" if r.config.get("sliding_window", r.window_default) is not None else "full_attention"] * layers
    if rule == "alternate":  # Gemma-2, gpt-oss: even layers sliding
        return ["sliding_attention" if (i + 1) % 2 else "full_attention" for i in range(layers)]
    if rule == "gemma3":  # five sliding layers, then a global one
        period = r.size("sliding_window_pattern", "_sliding_window_pattern", default=6)
        return ["sliding_attention" if (i + 1) % period else "full_attention" for i in range(layers)]
    if rule == "llama4":  # chunked where RoPE is used (no_rope_layers[i] = 1), if attention_chunk_size is set
        interval = r.size("no_rope_layer_interval", default=4)
        no_rope = r.config.get("no_rope_layers") or [int((i + 1) % interval != 0) for i in range(layers)]
        chunked = r.config.get("attention_chunk_size", 8192) is not None
        return ["chunked_attention" if rope and chunked else "full_attention" for rope in no_rope]
    raise AssertionError(rule)


def _windows(r: _Reader, layers: int, rule: str) -> dict:
    """l_win and W from layer_types (given, or by the family's rule); an unknown entry is refused."""
    types = r.config.get("layer_types") or _pattern(r, layers, rule)
    if not isinstance(types, list) or len(types) != layers:
        raise ConfigError(f"{r.model_type} config: 'layer_types' must list {layers} layer types, got {_short(types)}")
    for index, kind in enumerate(types):
        if kind not in LAYER_KINDS:
            raise ConfigError(f"{r.model_type} config: layer_types[{index}] = {_short(kind)} is not modelled "
                              f"(known: {', '.join(LAYER_KINDS)})")
    kinds = [LAYER_KINDS[kind] for kind in types]
    windowed = kinds.count("window")
    key = "attention_chunk_size" if "chunked_attention" in types else "sliding_window"
    size = r.size(key, default=r.window_default if key == "sliding_window" else 8192) if windowed else 1
    return {S.l_win: windowed, S.W: size, "kinds": tuple(kinds)}


# --- today's families ---------------------------------------------------------------


def _qwen(experts: tuple[int, int, int] | None, kv_default: int, head_dim_default: int | None = None) -> Callable[[_Reader], dict]:
    """Qwen3 and Qwen3-MoE (``experts``: its config's experts, experts per token and expert width by default):
    q/k norms per head; their sliding-window option is refused."""

    def read(r: _Reader) -> dict:
        r.refuse("use_sliding_window", True, "Qwen's sliding-window layers")
        values = _llama_like(kv_default, head_dim_default, qkv_bias="attention_bias", mlp_bias=False)(r)
        values[S.qk_norm] = 1
        if experts is not None:
            values.update(_qwen_moe_layers(r, values, *experts))
        return values

    return read


def _windowed(window_default: int | None, rule: str, **family) -> Callable[[_Reader], dict]:
    """A Llama-like family with windowed layers by ``rule``; ``window_default`` is its config class's sliding_window."""
    read_llama = _llama_like(window=rule, **family)

    def read(r: _Reader) -> dict:
        r.window_default = window_default
        return read_llama(r)

    return read


def _qwen_moe_layers(r: _Reader, values: dict, experts: int, per_token: int, width: int) -> dict:
    """Qwen2/3-MoE: layer i is MoE unless in mlp_only_layers, when (i + 1) is a multiple of decoder_sparse_step;
    ``experts``, ``per_token`` and ``width`` are the config class's defaults for absent keys."""
    layers = values[S.l]
    step = r.size("decoder_sparse_step", default=1)
    dense = r.indices("mlp_only_layers", layers, [])
    moe_layers = [i for i in range(layers) if i not in dense and (i + 1) % step == 0]
    return {S.l_moe: len(moe_layers), S.E: r.size("num_experts", "num_local_experts", default=experts),
            S.k: r.size("num_experts_per_tok", default=per_token), S.d_moe: r.size("moe_intermediate_size", default=width)}


@dataclass(frozen=True)
class DeepSeekMoE:
    """A DeepSeekMoE config class's defaults for absent keys (transformers 5.24): routed experts, experts per token
    (None: the key is required), expert width, first dense layers, shared experts, MTP layers."""

    experts: int
    per_token: int | None
    width: int
    first_dense: int
    shared: int
    mtp: int


def _deepseek_moe(r: _Reader, values: dict, defaults: DeepSeekMoE) -> dict:
    """DeepSeek-V2/V3, GLM-4.5: the first first_k_dense_replace layers dense, shared experts of n_shared·d_moe."""
    dense = r.config.get("first_k_dense_replace", defaults.first_dense)
    if isinstance(dense, bool) or not isinstance(dense, int) or not 0 <= dense <= values[S.l]:
        raise ConfigError(f"{r.model_type} config: 'first_k_dense_replace' must be a layer count, got {_short(dense)}")
    d_moe = r.size("moe_intermediate_size", default=defaults.width)
    shared = r.optional_size("n_shared_experts", default=defaults.shared) or 0
    return {S.l_moe: values[S.l] - dense, S.E: r.size("n_routed_experts", default=defaults.experts),
            S.k: r.size("num_experts_per_tok", default=defaults.per_token), S.d_moe: d_moe, S.d_sh: shared * d_moe,
            S.n_mtp: r.optional_size("num_nextn_predict_layers", default=defaults.mtp) or 0}


# DeepseekV2Config leaves num_experts_per_tok None: a config.json must give it
DEEPSEEK_DEFAULTS = {"deepseek_v2": DeepSeekMoE(64, None, 1407, 0, 2, 0), "deepseek_v3": DeepSeekMoE(256, 8, 2048, 3, 1, 1)}
GLM4_MOE_DEFAULTS = DeepSeekMoE(128, 8, 1408, 1, 1, 1)


def _deepseek(r: _Reader) -> dict:
    """DeepSeek-V2/V3: multi-head latent attention and DeepSeekMoE (transformers' DeepseekV2/V3Attention, *Moe)."""
    r.refuse("attention_bias", True, "biases on MLA's projections")
    r.refuse("mlp_bias", True, "biases on DeepSeek-V2's MLPs")
    h, a = r.size("hidden_size"), r.size("num_attention_heads")
    d_rope, d_nope = r.size("qk_rope_head_dim", default=64), r.size("qk_nope_head_dim", default=128)
    values = _base(r, h=h, a=a, g=a, d_head=d_rope + d_nope, l=r.size("num_hidden_layers"), d_ff=r.size("intermediate_size"),
                   tied=r.flag("tie_word_embeddings", False), gated=True)
    r_q = r.optional_size("q_lora_rank", default=1536)
    values.update({S.mla: 1, S.q_lora: int(r_q is not None), S.r_q: r_q or 0, S.r_kv: r.size("kv_lora_rank", default=512),
                   S.d_rope: d_rope, S.d_nope: d_nope, S.d_v: r.size("v_head_dim", default=128)})
    values.update(_deepseek_moe(r, values, DEEPSEEK_DEFAULTS[r.model_type]))
    return values


def _glm4_moe(r: _Reader) -> dict:
    values = _llama_like(8, qkv_bias="attention_bias", o_bias=False, mlp_bias=False)(r)
    values[S.qk_norm] = r.flag("use_qk_norm", False)
    values.update(_deepseek_moe(r, values, GLM4_MOE_DEFAULTS))
    return values


def _qwen2_moe(r: _Reader) -> dict:
    r.refuse("use_sliding_window", True, "Qwen's sliding-window layers")
    values = _llama_like(16, qkv_bias="qkv_bias", bias_default=True, o_bias=False, mlp_bias=False)(r)
    values.update(_qwen_moe_layers(r, values, 60, 4, 1408))  # Qwen2MoeConfig's defaults
    values.update({S.d_sh: r.size("shared_expert_intermediate_size", default=5632), S.sh_gate: 1})
    return values


def _gpt_oss(r: _Reader) -> dict:
    """gpt-oss: biases everywhere, learned sinks, a router bias, experts with biases, alternating 128-token windows."""
    values = _windowed(128, "alternate", kv_default=8, head_dim_default=64, qkv_bias="attention_bias", bias_default=True,
                       mlp_bias=False, experts=(128, 4))(r)
    values.update({S.d_moe: r.size("intermediate_size"), S.b_mlp: 1, S.sink: 1, S.router_bias: 1})
    return values


def _llama4(r: _Reader) -> dict:
    """Llama-4 text: MoE layers at moe_layers (every interleave_moe_layer_step-th), a shared expert, every expert run."""
    values = _windowed(None, "llama4", kv_default=8, head_dim_default=128, qkv_bias="attention_bias", mlp_bias=False)(r)
    layers, step = values[S.l], r.size("interleave_moe_layer_step", default=1)
    moe_layers = r.indices("moe_layers", layers, list(range(step - 1, layers, step)))
    d_moe = values[S.d_ff]
    values.update({S.d_ff: r.size("intermediate_size_mlp", default=16384), S.d_moe: d_moe, S.d_sh: d_moe,
                   S.l_moe: len(moe_layers), S.E: r.size("num_local_experts", default=16),
                   S.k: r.size("num_experts_per_tok", default=1), S.all_experts: 1})
    return values
def _gemma3(r: _Reader) -> dict:
    """Gemma-3 text: Gemma-2's four norms per layer, q/k norms, five sliding layers to one global."""
    r.refuse("use_bidirectional_attention", True, "Gemma-3's bidirectional variant changes the window")
    values = _windowed(4096, "gemma3", kv_default=4, head_dim_default=256, tied=True, qkv_bias="attention_bias",
                       mlp_bias=False, n_norm=4)(r)
    values[S.qk_norm] = 1
    return values


def _olmo2(r: _Reader) -> dict:
    """OLMo-2: norms after attention and MLP (two), q/k norms over all heads."""
    values = _llama_like(qkv_bias="attention_bias", mlp_bias=False)(r)
    values[S.qk_norm_full] = 1
    return values


def _phimoe(r: _Reader) -> dict:
    """Phi-3.5-MoE: Mixtral's experts with LayerNorms (scale and shift) and an optional head bias."""
    values = _windowed(None, "all", kv_default=8, qkv_bias="attention_bias", mlp_bias=False, experts=(16, 2),
                       layer_norm=True)(r)
    values[S.head_bias] = r.flag("lm_head_bias", False)
    return values


READERS: dict[str, Callable[[_Reader], dict]] = {
    "gpt2": _gpt2,
    "gptj": _gptj,
    "gpt_neox": _gpt_neox,
    "opt": _opt,
    "bloom": _bloom,
    "falcon": _falcon,
    "llama": _llama_like(qkv_bias="attention_bias"),
    "mistral": _windowed(4096, "all", kv_default=8, mlp_bias=False),
    "mixtral": _windowed(None, "all", kv_default=8, mlp_bias=False, experts=(8, 2)),
    "qwen2": _llama_like(32, qkv_bias=1, mlp_bias=False),  # Qwen2: biases on Q, K, V only
    "gemma": _llama_like(16, 256, tied=True, qkv_bias="attention_bias", mlp_bias=False),
    "phi3": _windowed(None, "all", mlp_bias=False),
    "deepseek_v2": _deepseek,
    "deepseek_v3": _deepseek,
    "qwen3": _qwen(None, 32, 128),
    "qwen3_moe": _qwen((128, 8, 768), 4),  # Qwen3MoeConfig's experts, experts per token, expert width
    "qwen2_moe": _qwen2_moe,
    "gemma2": _windowed(4096, "alternate", kv_default=4, head_dim_default=256, tied=True, qkv_bias="attention_bias",
                        mlp_bias=False, n_norm=4),
    "gemma3_text": _gemma3,
    "gpt_oss": _gpt_oss,
    "llama4_text": _llama4,
    "olmo2": _olmo2,
    "glm4_moe": _glm4_moe,
    "phimoe": _phimoe,
}


# Keys that bring parameters or layers the counts leave out: refused, never silently ignored.
UNMODELLED_KEYS = {
    "vision_config": "a vision tower; pass the text model's config (its text_config)",
    "audio_config": "an audio tower; pass the text model's config",
    "quantization_config": "quantized weights and their scales; count the unquantized model without it",
}


DROPOUT_KEYS = ("resid_pdrop", "embd_pdrop", "attn_pdrop", "hidden_dropout", "attention_dropout", "dropout")
DROPOUT_DEFAULTS = {"gpt2": {"resid_pdrop": 0.1, "embd_pdrop": 0.1, "attn_pdrop": 0.1}, "opt": {"dropout": 0.1}}  # transformers'


def _dropout(config: dict, model_type: str) -> int:
    """σ_drop: 1 if the config trains with any dropout (its keys, else transformers' defaults: GPT-2 and OPT 0.1, the
    other families 0), so a framework's blocks save masks (formulas/memory.py, the decoder forms)."""
    defaults = DROPOUT_DEFAULTS.get(model_type, {})
    rates = [config.get(key, defaults.get(key, 0.0)) for key in DROPOUT_KEYS]
    for key, rate in zip(DROPOUT_KEYS, rates):
        if not isinstance(rate, (int, float)) or isinstance(rate, bool) or not 0 <= rate < 1:
            raise ConfigError(f"{model_type} config: {key!r} must be a dropout probability in [0, 1), got {_short(rate)}")
    return int(any(rate > 0 for rate in rates))


def read_config(config: object) -> Architecture:
    """A config.json dict → Architecture; ConfigError names what is wrong."""
    if not isinstance(config, dict):
        raise ConfigError(f"a config must be a JSON object, got {type(config).__name__}")
    model_type = config.get("model_type")
    if model_type is None:
        raise ConfigError("config: missing key 'model_type'")
    reader = READERS.get(model_type) if isinstance(model_type, str) else None
    if reader is None:
        raise ConfigError(f"unknown model_type {_short(model_type)}; known: {', '.join(sorted(READERS))}")
    for key, what in UNMODELLED_KEYS.items():
        if config.get(key) is not None:
            raise ConfigError(f"{model_type} config: {key!r} is not counted ({what})")
    values = reader(_Reader(config, model_type))
    values[S.drop] = _dropout(config, model_type)
    kinds = values.pop("kinds", ("full",) * values[S.l])
    if values[S.a] % values[S.g]:
        raise ConfigError(f"{model_type} config: {values[S.a]} attention heads are not a multiple of {values[S.g]} key/value heads")
    if values[S.k] > values[S.E]:
        raise ConfigError(f"{model_type} config: more experts per token ({values[S.k]}) than experts ({values[S.E]})")
    return Architecture(model_type, values, kinds)
