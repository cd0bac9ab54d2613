"""Quantized checkpoints as published: the scheme a quantization_config names, and the bytes of the weights as stored.

``read_scheme`` reads a config.json's quantization_config: FP8 block-scaled (quant_method "fp8", weight_block_size;
DeepSeek-V3/R1, Kimi-K2, Qwen3-FP8), MXFP4 (gpt-oss), GPTQ and AWQ (bits, group_size), bitsandbytes (4-bit NF4/FP4
with or without double quantization, or LLM.int8()), compressed-tensors (symmetric pack-quantized int4/int8 by group or
channel, NVFP4) and NVIDIA ModelOpt (NVFP4, per-tensor FP8). Any other quant_method, format or layout is refused,
naming it. The parameter
count does not change. ``stored_bytes`` lists the model's weight matrices by role (attention, MLP, experts, shared
experts, router, recurrent mixer, embedding, head), prices each matrix the scheme converts by its
memory.weights.* formula, and everything else (the matrices it leaves alone, norms, biases, convolutions) at the
checkpoint's 16-bit dtype: params.decoder.total − the converted weights, times the dtype's bytes.

Which matrices a scheme converts, as transformers 5.24 and the published checkpoints do: FP8 every linear layer
and the fused experts; MXFP4 the experts only; GPTQ and AWQ every linear layer of the decoder layers, experts one
by one; bitsandbytes every nn.Linear (the fused 3-D experts of transformers 5.24 are not nn.Linear and stay
16-bit). None converts the embedding, the head or the router; modules_to_not_convert (and llm_int8_skip_modules)
take more out, matched against the module names as transformers spells them (model.layers.*.self_attn, lm_head).
compressed-tensors converts the modules its config groups target ("Linear": every linear layer, the head included;
"re:" patterns by name) less those its ignore list names ("re:" patterns too); ModelOpt every linear layer less its
ignore (exclude_modules) list. Both store a fused pair (the experts' gate and up) as its two matrices, each with its
own scales, as the original modules are; an exclusion of one layer only (model.layers.3.mlp) is refused, the counts
pricing every layer of a kind alike. ModelOpt's FP8 cache adds an fp32 k_scale and v_scale to each attention layer.
"""

from __future__ import annotations

import fnmatch
import re
from dataclasses import dataclass

from llm_formulas.formulas.data.blocks import Config, ConfigError, short

LINEAR_ROLES = frozenset({"attention", "mlp", "experts", "shared", "mixer"})
DTYPE_BYTES = {"bfloat16": 2, "float16": 2, "float32": 4, "float": 4, "half": 2}


@dataclass(frozen=True)
class Scheme:
    """A quantization scheme: its stored-bytes formula at its sizes, the roles it converts, the names it skips."""

    method: str  # "fp8", "mxfp4", "gptq", "awq", "nf4", "fp4", "nf4-double", "fp4-double", "int8"
    formula_id: str
    values: dict[str, int]
    roles: frozenset[str]
    skip: tuple[str, ...] = ()
    targets: tuple[str, ...] = ()  # "re:" patterns a matrix's name must match (compressed-tensors' targets); () any
    split_fused: bool = False  # the checkpoint stores a fused pair as its two matrices (compressed-tensors, ModelOpt)
    kv_scale_bytes: int = 0  # bytes of cache scales per attention layer (ModelOpt's FP8 cache: k_scale and v_scale)


@dataclass(frozen=True)
class Matrix:
    """One kind of weight matrix: its role, the names transformers gives it, its widths and how many the model has."""

    role: str
    names: tuple[str, ...]
    d_in: int
    d_out: int
    count: int
    bias: int = 0  # 1 if it has a bias of d_out (stored at the checkpoint's dtype with the unquantized values)
    parts: int = 1  # matrices of d_out/parts rows fused into this one (the experts' gate_up_proj: 2)


def read_scheme(config: dict, model_type: str) -> Scheme | None:
    """The scheme of a config's quantization_config (None without one); ConfigError for one the counts do not model."""
    data = config.get("quantization_config")
    if data is None:
        return None
    if not isinstance(data, dict):
        raise ConfigError(f"{model_type} config: 'quantization_config' must be an object, got {short(data)}")
    q = Config(data, f"{model_type} quantization_config")
    method = data.get("quant_method")
    skip = tuple(_names(q, "modules_to_not_convert")) + ("lm_head",)
    if method == "fp8":
        block = data.get("weight_block_size")
        if not (isinstance(block, list) and len(block) == 2 and all(isinstance(x, int) and not isinstance(x, bool) and x > 0 for x in block)):
            raise q.fail("weight_block_size", "two positive block sizes (per-tensor FP8 is not modelled)", block)
        if data.get("fmt", "e4m3") not in ("e4m3", "float8_e4m3fn"):
            raise q.fail("fmt", "'e4m3'", data.get("fmt"))
        return Scheme("fp8", "memory.weights.fp8_block", {"B_r": block[0], "B_c": block[1]}, LINEAR_ROLES, skip)
    if method == "mxfp4":
        return Scheme("mxfp4", "memory.weights.mxfp4", {}, frozenset({"experts"}), skip)
    if method in ("gptq", "awq"):
        bits = q.size("bits", default=4)
        if bits not in (4, 8):
            raise q.fail("bits", "4 or 8 (other widths pack across int32 words)", bits)
        if method == "awq" and data.get("version", "gemm") not in ("gemm", "GEMM"):
            raise q.fail("version", "'gemm' (AWQ's other layouts are not modelled)", data.get("version"))
        group = data.get("group_size", 128)
        if isinstance(group, bool) or not isinstance(group, int) or (group <= 0 and group != -1):
            raise q.fail("group_size", "a positive group size or -1 (one group per input)", group)
        return Scheme(method, f"memory.weights.{method}", {"n_bits": bits, "G_q": group}, LINEAR_ROLES, skip)
    if method == "bitsandbytes":
        skip = tuple(_names(q, "llm_int8_skip_modules")) + skip
        linear = LINEAR_ROLES - {"experts"}  # transformers 5.24's fused experts are 3-D parameters, not nn.Linear
        if q.flag("load_in_8bit", False):
            return Scheme("int8", "memory.weights.int8", {}, linear, skip)
        if q.flag("load_in_4bit", False):
            kind = data.get("bnb_4bit_quant_type", "fp4")
            if kind not in ("nf4", "fp4"):
                raise q.fail("bnb_4bit_quant_type", "'nf4' or 'fp4'", kind)
            if data.get("bnb_4bit_quant_storage", "uint8") != "uint8":
                raise q.fail("bnb_4bit_quant_storage", "'uint8'", data.get("bnb_4bit_quant_storage"))
            double = q.flag("bnb_4bit_use_double_quant", False)
            formula_id = "memory.weights.nf4.double" if double else "memory.weights.nf4"
            return Scheme(f"{kind}-double" if double else kind, formula_id, {"B_q": 64, "B_q2": 256}, linear, skip)
        raise ConfigError(f"{model_type} quantization_config: bitsandbytes without load_in_4bit or load_in_8bit")
    if method == "compressed-tensors":
        return _compressed_tensors(data, q)
    if method == "modelopt":
        return _modelopt(data, Config(data.get("quantization") or data, q.model_type))
    raise ConfigError(f"{model_type} config: 'quantization_config' quant_method {short(method)} is not modelled "
                      "(known: fp8 block-scaled, mxfp4, gptq, awq, bitsandbytes, compressed-tensors, modelopt)")


CT_FORMATS = ("pack-quantized", "nvfp4-pack-quantized")


def _compressed_tensors(data: dict, q: Config) -> Scheme:
    """compressed-tensors: one weight scheme over its config groups, a format whose tensors the formulas state."""
    if data.get("quantization_status", "compressed") != "compressed":
        raise q.fail("quantization_status", "'compressed' (the weights stored packed)", data.get("quantization_status"))
    groups = data.get("config_groups")
    if not isinstance(groups, dict) or not groups or not all(isinstance(g, dict) for g in groups.values()):
        raise q.fail("config_groups", "an object of quantization groups", groups)
    weights = [g.get("weights") for g in groups.values()]
    if any(w != weights[0] for w in weights) or not isinstance(weights[0], dict):
        raise q.fail("config_groups", "groups of one weight scheme (mixed schemes are not modelled)", list(groups))
    formats = {g.get("format") or data.get("format") for g in groups.values()}
    fmt = formats.pop() if len(formats) == 1 else sorted(map(str, formats))
    if fmt not in CT_FORMATS:
        raise q.fail("format", f"one of {', '.join(CT_FORMATS)} (other layouts are not modelled)", fmt)
    w = Config(weights[0], f"{q.model_type}.weights")
    targets = [target for g in groups.values() for target in _names(Config(g, q.model_type), "targets")]
    if any(t != "Linear" and not t.startswith("re:") for t in targets):
        raise q.fail("targets", "'Linear' or 're:' module patterns", targets)
    only = () if "Linear" in targets else tuple(targets)
    roles = LINEAR_ROLES | {"head"}
    skip = tuple(_names(q, "ignore"))
    if fmt == "nvfp4-pack-quantized":
        inputs = [g.get("input_activations") for g in groups.values()]
        if weights[0].get("type") != "float" or w.size("num_bits") != 4 or w.size("group_size") != 16 or not all(inputs):
            raise q.fail("config_groups", "NVFP4 weights and inputs (float, 4 bits, groups of 16)", weights[0])
        return Scheme("nvfp4", "memory.weights.nvfp4", {}, roles, skip, only, split_fused=True)
    bits, kind, strategy = w.size("num_bits"), weights[0].get("type"), weights[0].get("strategy")
    if kind != "int" or bits not in (4, 8):
        raise q.fail("weights", "int weights of 4 or 8 bits", {"type": kind, "num_bits": bits})
    if w.flag("symmetric", True) != 1:
        raise q.fail("symmetric", "true (zero points are not modelled)", weights[0].get("symmetric"))
    if weights[0].get("actorder") not in (None, "static"):
        raise q.fail("actorder", "null or 'static' (a stored group index is not modelled)", weights[0].get("actorder"))
    if strategy not in ("group", "channel"):
        raise q.fail("strategy", "'group' or 'channel'", strategy)
    if any(g.get("input_activations") and not g["input_activations"].get("dynamic") for g in groups.values()):
        raise q.fail("input_activations", "null or dynamic (static input scales are not modelled)", "static")
    group = w.size("group_size") if strategy == "group" else -1  # -1: one group per row (the whole input)
    return Scheme(f"int{bits}-pack", "memory.weights.int_packed", {"n_bits": bits, "G_q": group}, roles, skip, only,
                  split_fused=True)


def _modelopt(data: dict, q: Config) -> Scheme:
    """NVIDIA ModelOpt: NVFP4 (groups of 16) or per-tensor FP8 in every linear layer but those its ignore list names."""
    algo = q.get("quant_algo")
    skip = tuple(_names(q, "ignore" if "ignore" in q.data else "exclude_modules"))
    kv = q.get("kv_cache_quant_algo")
    if kv not in (None, "FP8"):
        raise q.fail("kv_cache_quant_algo", "null or 'FP8'", kv)
    scales = 8 if kv == "FP8" else 0
    if algo == "NVFP4":
        if q.get("group_size", 16) != 16:
            raise q.fail("group_size", "16 (NVFP4's block)", q.get("group_size"))
        return Scheme("nvfp4", "memory.weights.nvfp4", {}, LINEAR_ROLES | {"head"}, skip, split_fused=True, kv_scale_bytes=scales)
    if algo == "FP8":
        return Scheme("fp8-tensor", "memory.weights.fp8_tensor", {}, LINEAR_ROLES | {"head"}, skip, split_fused=True,
                      kv_scale_bytes=scales)
    raise q.fail("quant_algo", "'NVFP4' or 'FP8' (other ModelOpt algorithms are not modelled)", algo)


def converts(matrix: Matrix, scheme: Scheme) -> bool:
    """Whether the scheme stores this matrix quantized: its role, its targets, less what it skips. A skip that names one
    layer of a converted kind (model.layers.3.mlp) is refused: the counts price every layer of a kind alike."""
    if matrix.role not in scheme.roles or skipped(matrix, scheme.skip):
        return False
    if scheme.targets and not skipped(matrix, scheme.targets):
        return False
    for pattern in scheme.skip:
        one_layer = re.search(r"layers\.(\d+)\.", pattern)
        if one_layer and skipped(Matrix(matrix.role, tuple(n.replace("*", one_layer[1]) for n in matrix.names), 1, 1, 1), (pattern,)):
            raise ConfigError(f"quantization_config skips {pattern!r}, one layer of {matrix.names[0]}: a per-layer exception "
                              "is not modelled")
    return True


def _names(q: Config, key: str) -> list[str]:
    names = q.get(key) or []
    if not isinstance(names, list) or not all(isinstance(name, str) for name in names):
        raise q.fail(key, "a list of module names", names)
    return names


def skipped(matrix: Matrix, patterns: tuple[str, ...]) -> bool:
    """Whether a module-name pattern takes the matrix out: the name itself or a module above it (a glob with * or a
    dotted name), or a name's last parts (``gate``, ``self_attn.o_proj``), as transformers' should_convert_module; a
    "re:" pattern (compressed-tensors) matches the start of a name whose layer index is a number."""
    for pattern in patterns:
        for name in matrix.names:
            if pattern.startswith("re:"):
                if re.match(pattern[3:], name.replace("*", "0")):
                    return True
                continue
            parts = name.split(".")
            prefixes = [".".join(parts[:i]) for i in range(1, len(parts) + 1)]
            suffixes = [".".join(parts[i:]) for i in range(len(parts))]
            if any(fnmatch.fnmatch(prefix, pattern) for prefix in prefixes) or pattern in suffixes:
                return True
    return False


def inventory(v: dict[str, int]) -> list[Matrix]:
    """The weight matrices of a decoder with these symbol values (by name), as transformers 5.24 names them."""
    layer, found = "model.layers.*", []

    def add(role: str, names: tuple[str, ...], d_in: int, d_out: int, count: int, bias: int = 0, parts: int = 1) -> None:
        if count and d_in and d_out:
            found.append(Matrix(role, names, d_in, d_out, count, bias, parts))

    attending = v["l"] - v["l_mamba"] - v["l_ssd"] - v["l_lru"] - v["l_gdn"] - v["l_noattn"]
    attn = f"{layer}.self_attn"
    if v["mla"]:
        qk = v["d_nope"] + v["d_rope"]
        if v["q_lora"]:
            add("attention", (f"{attn}.q_a_proj",), v["h"], v["r_q"], attending)
            add("attention", (f"{attn}.q_b_proj",), v["r_q"], v["a"] * qk, attending)
        else:
            add("attention", (f"{attn}.q_proj",), v["h"], v["a"] * qk, attending)
        add("attention", (f"{attn}.kv_a_proj_with_mqa",), v["h"], v["r_kv"] + v["d_rope"], attending)
        add("attention", (f"{attn}.kv_b_proj",), v["r_kv"], v["a"] * (v["d_nope"] + v["d_v"]), attending)
        add("attention", (f"{attn}.o_proj",), v["a"] * v["d_v"], v["h"], attending)
        indexed = attending * v["dsa"]  # DSA's indexer: wq_b and wk linear layers; weights_proj kept 16-bit (DeepSeek's
        add("attention", (f"{attn}.indexer.wq_b",), v["r_q"], v["n_idx"] * v["d_idx"], indexed)  # model.py stores it in bf16)
        add("attention", (f"{attn}.indexer.wk",), v["h"], v["d_idx"], indexed)
        add("indexer", (f"{attn}.indexer.weights_proj",), v["h"], v["n_idx"], indexed)
    else:
        add("attention", (f"{attn}.q_proj",), v["h"], (1 + v["attn_gate"]) * v["a"] * v["d_head"], attending, v["b_q"])
        for name in ("k_proj", "v_proj"):
            add("attention", (f"{attn}.{name}",), v["h"], v["g"] * v["d_head"], attending, v["b_k"])
        add("attention", (f"{attn}.o_proj",), v["a"] * v["d_head"], v["h"], attending, v["b_o"])
    if v["x_attn"]:
        add("attention", (f"{layer}.crossattention",), v["h"], 4 * v["a"] * v["d_head"], v["l"])  # four h→h maps, as one kind
    dense = v["l"] - v["l_moe"] - v["l_nomlp"]
    _mlp(add, "mlp", f"{layer}.mlp", v["h"], v["d_ff"], v["gated"], dense, v["b_mlp"])
    expert_width = v["d_lat"] if v["moe_lat"] else v["h"]  # Nemotron-3-Super's experts work at the latent width
    _mlp(add, "experts", f"{layer}.mlp.experts", expert_width, v["d_moe"], v["gated"], v["l_moe"] * v["E"], v["b_mlp"], fused=True)
    add("mlp", (f"{layer}.mlp.fc1_latent_proj",), v["h"], v["d_lat"], v["l_moe"] * v["moe_lat"], v["b_mlp"])  # nn.Linear each
    add("mlp", (f"{layer}.mlp.fc2_latent_proj",), v["d_lat"], v["h"], v["l_moe"] * v["moe_lat"], v["b_mlp"])
    _mlp(add, "shared", f"{layer}.mlp.shared_expert", v["h"], v["d_sh"], v["gated"], v["l_moe"], aliases=("shared_experts",))
    add("router", (f"{layer}.mlp.gate", f"{layer}.mlp.router"), v["h"], v["E"], v["l_moe"])
    add("shared", (f"{layer}.mlp.shared_expert_gate",), v["h"], 1, v["l_moe"] * v["sh_gate"])  # an nn.Linear h→1
    _mixers(add, layer, v)
    add("embedding", ("model.embed_tokens",), v["V"], v["d_emb"], 1)
    add("embedding", ("model.project_in", "model.project_out"), v["d_emb"], v["h"], 2 * v["proj_emb"])
    add("head", ("lm_head",), v["d_emb"], v["V"], 1 - v["tied"])
    return found


def _mlp(add, role: str, prefix: str, h: int, width: int, gated: int, count: int, bias: int = 0, fused: bool = False,
         aliases: tuple[str, ...] = ()) -> None:
    """Up (and gate) and down; a layer's experts hold gate and up fused, one [2·width, h] matrix an expert
    (transformers 5.24's gate_up_proj, scaled as one by FP8). ``aliases``: other names of the block (DeepSeek's
    shared_experts for Qwen's shared_expert)."""
    blocks = (prefix, *(prefix.rsplit(".", 1)[0] + "." + alias for alias in aliases))

    def names(leaf: str) -> tuple[str, ...]:
        return tuple(f"{block}.{leaf}" for block in blocks)

    if gated and fused:
        add(role, names("gate_up_proj"), h, 2 * width, count, bias, parts=2)
    else:
        for leaf in (("gate_proj", "up_proj") if gated else ("up_proj",)):
            add(role, names(leaf), h, width, count, bias)
    add(role, names("down_proj"), width, h, count, bias)


def _mixers(add, layer: str, v: dict[str, int]) -> None:
    d, n = v["d_ssm"], v["N_ssm"]
    mamba, ssd = f"{layer}.mamba", f"{layer}.mixer"
    add("mixer", (f"{mamba}.in_proj",), v["h"], 2 * d, v["l_mamba"])
    add("mixer", (f"{mamba}.x_proj",), d, v["r_dt"] + 2 * n, v["l_mamba"])
    add("mixer", (f"{mamba}.dt_proj",), v["r_dt"], d, v["l_mamba"])
    add("mixer", (f"{mamba}.out_proj",), d, v["h"], v["l_mamba"])
    add("mixer", (f"{ssd}.in_proj",), v["h"], 2 * d + 2 * v["n_grp"] * n + v["n_ssmh"], v["l_ssd"])
    add("mixer", (f"{ssd}.out_proj",), d, v["h"], v["l_ssd"])
    lru = f"{layer}.temporal_block"
    add("mixer", (f"{lru}.linear_x", f"{lru}.linear_y"), v["h"], v["d_lru"], 2 * v["l_lru"])
    add("mixer", (f"{lru}.linear_out",), v["d_lru"], v["h"], v["l_lru"])
    gdn = f"{layer}.linear_attn"
    add("mixer", (f"{gdn}.in_proj_qkvz",), v["h"], 2 * v["n_kh"] * v["d_kh"] + 2 * v["n_vh"] * v["d_vh"], v["l_gdn"])
    add("mixer", (f"{gdn}.in_proj_ba",), v["h"], 2 * v["n_vh"], v["l_gdn"])
    add("mixer", (f"{gdn}.out_proj",), v["n_vh"] * v["d_vh"], v["h"], v["l_gdn"])


def checkpoint_dtype_bytes(config: dict) -> int:
    """Bytes of the checkpoint's unquantized values: its torch_dtype (dtype), 2 (bf16) when absent."""
    name = config.get("torch_dtype", config.get("dtype"))
    if name is None:
        return 2
    if name not in DTYPE_BYTES:
        raise ConfigError(f"config: 'torch_dtype' {short(name)} is not a known dtype (known: {', '.join(DTYPE_BYTES)})")
    return DTYPE_BYTES[name]
