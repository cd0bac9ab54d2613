"""Read a Hugging Face ``config.json`` (a dict) into the sizes and switches of formulas/architecture.py.

One reader per ``model_type`` (gpt2, gptj, gpt_neox, opt, bloom, falcon, llama,
mistral, mixtral, qwen2, gemma, phi3) says which structural choice each family
makes, as transformers 5.24 builds it; a key a config.json may leave out takes
transformers' default, a size that has no default must be there. An unknown
model_type, a missing key or a value of the wrong kind raises ConfigError,
naming it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import sympy as sp

from formulas import symbols as S


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
        S.moe: 0,
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
                qkv_bias: str | int = 0, mlp_bias: bool = True, moe: bool = False) -> Callable[[_Reader], dict]:
    """Llama and its relatives: RMSNorm, gated MLP, GQA; the family differences as arguments."""

    def read(r: _Reader) -> dict:
        h, a = r.size("hidden_size"), r.size("num_attention_heads")
        d_head = r.size("head_dim", default=0) or head_dim_default or _head_dim(r, h, a)
        bias = r.flag(qkv_bias, False) if isinstance(qkv_bias, str) else qkv_bias
        values = _base(
            r, h=h, a=a, g=r.size("num_key_value_heads", default=kv_default or a), d_head=d_head,
            l=r.size("num_hidden_layers"), d_ff=r.size("intermediate_size"),
            tied=r.flag("tie_word_embeddings", tied), gated=True,
            bias_qkv=bias, bias_o=bias if isinstance(qkv_bias, str) else 0,
            bias_mlp=r.flag("mlp_bias", False) if mlp_bias else 0,
        )
        if moe:
            values.update({S.moe: 1, S.E: r.size("num_local_experts", "num_experts"), S.k: r.size("num_experts_per_tok")})
        return values

    return read


READERS: dict[str, Callable[[_Reader], dict]] = {
    "gpt2": _gpt2,
    "gptj": _gptj,
    "gpt_neox": _gpt_neox,
    "opt": _opt,
    "bloom": _bloom,
    "falcon": _falcon,
    "llama": _llama_like(qkv_bias="attention_bias"),
    "mistral": _llama_like(8, mlp_bias=False),
    "mixtral": _llama_like(8, mlp_bias=False, moe=True),
    "qwen2": _llama_like(32, qkv_bias=1, mlp_bias=False),  # Qwen2: biases on Q, K, V only
    "gemma": _llama_like(16, 256, tied=True, qkv_bias="attention_bias", mlp_bias=False),
    "phi3": _llama_like(mlp_bias=False),
}


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
    values = reader(_Reader(config, model_type))
    if values[S.a] % values[S.g]:
        raise ConfigError(f"{model_type} config: {values[S.a]} attention heads are not a multiple of {values[S.g]} key/value heads")
    if values[S.k] > values[S.E]:
        raise ConfigError(f"{model_type} config: more experts per token ({values[S.k]}) than experts ({values[S.E]})")
    return Architecture(model_type, values)
