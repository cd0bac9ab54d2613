"""The one table of symbols: every quantity has one SymPy symbol, made here only.

Each entry carries the SymPy assumptions (counts are ``positive, integer``),
its LaTeX, a one-line meaning, a unit and where the notation comes from
(Table 3 of the Bilibili article, Yu 2024 (000), extended).
Constants that carry a unit (``c_flop`` = 2 FLOP per parameter per token) are
symbols too, with a value: formulas keep them symbolic so that dimensional
analysis sees their unit, and every proof or evaluation substitutes the value.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from fractions import Fraction

import sympy as sp

from llm_formulas.formulas.vocabulary.bibliography import Source
from llm_formulas.formulas.vocabulary import scope
from llm_formulas.formulas.vocabulary.units import Unit, as_unit
from llm_formulas.formulas.vocabulary.value_rules import Rule
from llm_formulas.formulas.vocabulary.workload_symbols import DECLARATIONS, TABLE3, Declaration


@dataclass(frozen=True)
class Quantity:
    """Metadata of one symbol; the registry is keyed by the symbol itself."""

    symbol: sp.Symbol
    latex: str
    meaning: str
    unit: Unit
    source: Source
    value: sp.Rational | None = None
    maximum: sp.Rational | None = None
    minimum: sp.Rational | None = None
    default: sp.Integer | None = None  # a structural switch's classic value (``switch``)

    @property
    def name(self) -> str:
        return self.symbol.name

    @property
    def is_integer(self) -> bool:
        return bool(self.symbol.is_integer)

    @property
    def is_constant(self) -> bool:
        return self.value is not None

    @property
    def rule(self) -> Rule:
        """What a value of this symbol must be (formulas/vocabulary/value_rules.py)."""
        return Rule(self.name, self.meaning, self.unit, self.is_integer, positive=bool(self.symbol.is_positive),
                    maximum=self.maximum, minimum=self.minimum)


_REGISTRY: dict[str, Quantity] = {}
_CONSTANTS: dict[sp.Symbol, sp.Rational] = {}


def declare(
    name: str,
    latex: str,
    meaning: str,
    unit: Unit | str,
    *,
    integer: bool,
    source: Source,
    maximum: int | None = None,
    minimum: int | None = None,
) -> sp.Symbol:
    """Create and register a positive symbol; a second, different declaration is refused."""
    symbol = sp.Symbol(name, positive=True, integer=integer) if integer else sp.Symbol(name, positive=True)
    bound = None if maximum is None else sp.Integer(maximum)
    floor_ = None if minimum is None else sp.Integer(minimum)
    entry = Quantity(symbol, latex, meaning, as_unit(unit), source, maximum=bound, minimum=floor_)
    _register(entry)
    return symbol


def declared(entry: Declaration) -> sp.Symbol:
    """``declare`` from a declaration kept as plain data (formulas/vocabulary/workload_symbols.py)."""
    return declare(entry.name, entry.latex, entry.meaning, entry.unit, integer=entry.integer, source=entry.source,
                   maximum=entry.maximum)


def declare_in(owner: scope.Scope, name: str, latex: str, meaning: str, unit: Unit | str, *, integer: bool,
               source: Source, maximum: int | None = None, minimum: int | None = None) -> sp.Symbol:
    """Declare a symbol in a user's catalogue: a positive symbol like ``declare``'s, known only while that
    catalogue is active. A name the built-in table (or an enclosing catalogue) already has is refused unless the
    declaration is the same; declaring the same symbol twice is a no-op."""
    symbol = sp.Symbol(name, positive=True, integer=integer) if integer else sp.Symbol(name, positive=True)
    entry = Quantity(symbol, latex, meaning, as_unit(unit), source,
                     maximum=None if maximum is None else sp.Integer(maximum),
                     minimum=None if minimum is None else sp.Integer(minimum))
    token = scope.enter(owner)
    try:
        existing = _REGISTRY.get(name) or scope.find("symbols", name)
    finally:
        scope.leave(token)
    if existing is not None and existing != entry:
        where = "the built-in table" if name in _REGISTRY else "an active catalogue"
        raise ValueError(f"symbol {name!r} is already declared differently in {where}: choose another name")
    owner.symbols[name] = entry
    return symbol


def constant(name: str, latex: str, value: int | Fraction, meaning: str, unit: Unit | str, source: Source) -> sp.Symbol:
    """Register a unit-carrying constant; it prints as its value."""
    symbol = sp.Symbol(name, positive=True)
    entry = Quantity(symbol, latex, meaning, as_unit(unit), source, sp.Rational(value))
    _register(entry)
    return symbol


def _register(entry: Quantity) -> None:
    existing = _REGISTRY.get(entry.name)
    if existing is not None and existing != entry:
        raise ValueError(f"symbol {entry.name!r} is already declared differently")
    _REGISTRY[entry.name] = entry
    if entry.value is not None:
        _CONSTANTS[entry.symbol] = entry.value


class UnknownSymbol(KeyError):
    """A name that no symbol of the active catalogues has; the message suggests the nearest names."""

    def __str__(self) -> str:
        return str(self.args[0])


def quantity(name_or_symbol: str | sp.Symbol) -> Quantity:
    """The registry entry of a symbol, by name or by symbol: the built-in table, then the active user catalogues."""
    name = name_or_symbol if isinstance(name_or_symbol, str) else name_or_symbol.name
    entry = _REGISTRY.get(name) or scope.find("symbols", name)
    if entry is None:
        raise UnknownSymbol(f"unknown symbol {name!r}{did_you_mean(name, [q.name for q in all_quantities()])}")
    return entry


def did_you_mean(name: str, known: list[str]) -> str:
    """``"; did you mean 'h'?"`` for the names closest to ``name`` (or ``""`` when none is close)."""
    close = difflib.get_close_matches(name, known, n=3, cutoff=0.6)
    return f"; did you mean {' or '.join(repr(c) for c in close)}?" if close else ""


def resolve(name_or_symbol: str | sp.Symbol) -> sp.Symbol:
    """The catalogue's symbol for a name or for a symbol of that name.

    The catalogue's symbols carry assumptions (``h`` is a positive integer), so ``sympy.Symbol("h")`` is another
    symbol that prints alike: ``resolve`` maps either to the catalogue's ``h``; an unknown name raises
    ``UnknownSymbol`` with the nearest names.
    """
    return quantity(name_or_symbol).symbol


def is_declared(name: str) -> bool:
    return name in _REGISTRY or scope.find("symbols", name) is not None


def all_quantities() -> list[Quantity]:
    """The built-in symbols in table order, then those of the active user catalogues."""
    own = [entry for user in scope.chain() for entry in user.symbols.values()]
    return list(_REGISTRY.values()) + own


def table_order(symbol: sp.Symbol) -> int:
    """Position of a symbol in the table (the order help and reports list inputs in); user symbols come last."""
    names = [q.name for q in all_quantities()]
    return names.index(symbol.name)


def constant_values() -> dict[sp.Symbol, sp.Rational]:
    """Substitution that replaces every unit-carrying constant by its value."""
    return dict(_CONSTANTS)


def switch_defaults() -> dict[sp.Symbol, sp.Integer]:
    """The classic model's value of every structural switch that has one (``switch(default=...)``)."""
    return {q.symbol: q.default for q in _REGISTRY.values() if q.default is not None}


def latex_names() -> dict[sp.Symbol, str]:
    """``symbol_names`` for ``sympy.latex``, built from the registry (and the active user catalogues)."""
    return {q.symbol: q.latex for q in all_quantities() if q.value is None}


# --- batch and sequence -------------------------------------------------------
b = declared(DECLARATIONS["b"])
B = declared(DECLARATIONS["B"])
s = declared(DECLARATIONS["s"])
# --- model shape ----------------------------------------------------------------
h = declare("h", "h", "hidden size", "1", integer=True, source=TABLE3)
a = declare("a", "a", "attention heads", "1", integer=True, source=TABLE3)
g = declare("g", "g", "key/value heads", "1", integer=True, source=Source("ainslie2023", "g key/value heads"))
d_head = declare("d_head", "d_{head}", "head dimension", "1", integer=True, source=Source("vaswani2017", "§3.2.2, d_k"))
d_ff = declare("d_ff", "d_{ff}", "MLP inner width", "1", integer=True, source=Source("vaswani2017", "§3.3, d_ff"))
l = declare("l", "l", "layers", "1", integer=True, source=TABLE3)  # noqa: E741 - the sources' name
V = declare("V", "V", "vocabulary size", "1", integer=True, source=TABLE3)
E = declare("E", "E", "experts", "1", integer=True, source=Source("fedus2021", "§2, experts"))
k = declare("k", "k", "experts per token", "1", integer=True, source=Source("jiang2024", "top-2 of 8 experts per token"))
# --- parallel layout ------------------------------------------------------------
t = declared(DECLARATIONS["t"])
p = declared(DECLARATIONS["p"])
d = declared(DECLARATIONS["d"])
n = declared(DECLARATIONS["n"])
m = declared(DECLARATIONS["m"])
v = declared(DECLARATIONS["v"])
# --- model and data size --------------------------------------------------------
P = declare("P", r"\Psi", "parameters", "parameter", integer=False, source=TABLE3)
D = declared(DECLARATIONS["D"])
# --- hardware and efficiency ------------------------------------------------------
X = declare("X", "X", "peak FLOP/s of one GPU", "FLOP/second", integer=False, source=TABLE3)
U = declared(DECLARATIONS["U"])
W_mem = declare("W_mem", r"W_{mem}", "memory bandwidth", "byte/second", integer=False, source=Source("williams2009", "memory bandwidth"))
W_link = declare("W_link", r"W_{link}", "link bandwidth", "byte/second", integer=False, source=Source("001", "NVLink and PCIe bandwidth"))
r = declared(DECLARATIONS["r"])
f = declare("f", "f", "serial fraction (Amdahl)", "1", integer=False, maximum=1, source=TABLE3)

# --- one matrix multiplication [M, K] x [K, N] ------------------------------------
M_rows = declare("M_rows", "M", "rows of a GEMM's left operand", "1", integer=True, source=Source("000", "§3.2"))
K_inner = declare("K_inner", "K", "inner (contracted) dimension of a GEMM", "1", integer=True, source=Source("000", "§3.2"))
N_cols = declare("N_cols", "N", "columns of a GEMM's right operand", "1", integer=True, source=Source("000", "§3.2"))

# --- constants that carry a unit -----------------------------------------------
c_flop = constant(
    "c_flop",
    "c_{flop}",
    2,
    "FLOPs per parameter per token in one pass: a multiply and an add",
    "FLOP/(parameter*token)",
    Source("001", "3 multiplies and 3 adds per weight per token in training"),
)

# --- communication, cluster, inference ---------------------------------------------
q = declare("q", "q", "bytes per value of an activation or gradient tensor (2 for bf16/fp16, 4 for fp32)", "byte", integer=False, source=Source("001", "bytes per param"))
q_w = declare("q_w", r"q_{\Psi}", "bytes per parameter of a weight or gradient copy (2 for bf16/fp16, 4 for fp32)", "byte/parameter", integer=False, source=Source("001", "2 bytes per parameter"))
x_msg = declare("x_msg", "x", "bytes of the buffer a collective works on (per participant)", "byte", integer=False, source=Source("000", "§3.3.2.2"))
tau = declare("tau", r"\tau", "a wall-clock time span (a deadline, a pipeline slot, a per-token budget)", "second", integer=False, source=Source("000", "§3.5.3"))
W_alg = declare("W_alg", r"W_{alg}", "algorithm bandwidth of a collective: buffer bytes over elapsed time", "byte/second", integer=False, source=Source("000", "§3.3.2.2 (nccl-tests)"))
rho = declare("rho", r"\rho", "redundancy of a collective: bytes each GPU sends per byte of buffer", "1", integer=False, source=Source("000", "Table 5"))
H_gpu = declare("H_gpu", r"H_{GPU}", "GPU-hours of a training run (GPUs × hours)", "GPU", integer=False, source=Source("002"))
c_mac = constant("c_mac", "c_{mac}", 2, "FLOPs of one multiply-accumulate", "FLOP", Source("000", "§3.2 (a GEMM costs 2MKN)"))
c_hour = constant("c_hour", "c_{hour}", 3600, "seconds in one hour", "second", Source("002", "GPU-hours"))
c_step = constant("c_step", "c_{step}", 1, "tokens each sequence emits per decoding step", "token", Source("001", "each prompt outputs one token per round"))

# --- memory ---------------------------------------------------------------------
q_bf16 = constant("q_bf16", "q_{16}", 2, "bytes per parameter of a 16-bit (bf16/fp16) copy", "byte/parameter", Source("000", "§3.4.2.1 (2 bytes per element)"))
q_fp32 = constant("q_fp32", "q_{32}", 4, "bytes per parameter of an fp32 copy", "byte/parameter", Source("000", "§3.4.2.1 (Adam states in fp32)"))
q_int8 = constant("q_int8", "q_{8}", 1, "bytes per parameter of an int8 weight", "byte/parameter", Source("000", "§3.4.2.1 (INT8 inference)"))
q_int4 = constant("q_int4", "q_{4}", Fraction(1, 2), "bytes per parameter of an int4 weight", "byte/parameter", Source("000", "§3.4.2.1 (INT4 inference)"))
c_byte = constant("c_byte", r"\mathrm{B}", 1, "one byte: activation counts are in bytes (16-bit values 2, bool dropout masks 1)", "byte", Source("korthikanti2022", "§4"))
# --- unit marks: a count states what it counts ------------------------------------
# A pure number is allowed only for a true ratio; a count of parameters, FLOPs,
# layers, sequences or GPUs carries its unit through one of these (value 1).
UNIT_MARK = Source("000", "Table 3 (the quantities counted: parameters, FLOPs, layers, sequences, GPUs)")
u_param = constant("u_param", r"\mathrm{param}", 1, "one parameter: the unit a parameter count is stated in", "parameter", UNIT_MARK)
u_flop = constant("u_flop", r"\mathrm{FLOP}", 1, "one floating-point operation: the unit a FLOP count is stated in", "FLOP", UNIT_MARK)
u_layer = constant("u_layer", r"\mathrm{layer}", 1, "one layer: the unit a count of layers is stated in", "layer", UNIT_MARK)
u_seq = constant("u_seq", r"\mathrm{seq}", 1, "one sequence: the unit a batch size is stated in", "sequence", UNIT_MARK)
u_gpu = constant("u_gpu", r"\mathrm{GPU}", 1, "one GPU: the unit a count of GPUs is stated in", "GPU", UNIT_MARK)
M_gpu = declare("M_gpu", r"M_{GPU}", "memory capacity of one GPU", "byte", integer=False, source=Source("001", "80 GB A100/H100, 24 GB RTX 4090"))

# --- expert and context parallelism (formulas/topics/parallelism.py) -------------------------
e = declared(DECLARATIONS["e"])
c = declared(DECLARATIONS["c"])
P_exp = declare("P_exp", r"\Psi_{E}", "parameters of the routed experts (what expert parallelism shards)", "parameter",
                integer=False, source=Source("rajbhandari2022", "§4.1"))

# --- precision and fine-tuning (formulas/topics/precision.py) -----------------------------------
q_fp8 = constant("q_fp8", "q_{8}^{fp}", 1, "bytes per value of an fp8 (E4M3 or E5M2) copy", "byte/parameter",
                 Source("micikevicius2022", "§3"))
q_base = declare("q_base", r"q_{base}", "bytes per frozen base weight (2 bf16, 1 int8, 1/2 NF4), constants excluded",
                 "byte/parameter", integer=False, source=Source("dettmers2023", "§3"))
P_keep = declare("P_keep", r"\Psi_{16}", "parameters kept in 16 bits when the base is quantized (embeddings, norms, head)",
                 "parameter", integer=False, source=Source("transformers", "integrations/bitsandbytes.py"))
P_lora = declare("P_lora", r"\Psi_{LoRA}", "trainable LoRA adapter parameters", "parameter", integer=False,
                 source=Source("hu2021", "§4.1"))
r_lora = declare("r_lora", r"r_{LoRA}", "LoRA rank", "1", integer=True, source=Source("hu2021", "§4.1"))
d_in = declare("d_in", r"d_{in}", "input width of a weight matrix", "1", integer=True, source=Source("hu2021", "§4.1"))
d_out = declare("d_out", r"d_{out}", "output width of a weight matrix", "1", integer=True, source=Source("hu2021", "§4.1"))
B_q = declare("B_q", r"B_{q}", "weights per quantization block (QLoRA: 64)", "1", integer=True, source=Source("dettmers2023", "§3"))
B_q2 = declare("B_q2", r"B_{q2}", "first-level constants per second-level block (QLoRA double quantization: 256)", "1",
               integer=True, source=Source("dettmers2023", "§3"))

# --- architecture switches ------------------------------------------------------
# Structural choices of a decoder: 0/1 switches and
# small non-negative counts that a Hugging Face config maps to (formulas/data/hf_config.py).
ARCH = Source("transformers", "configuration switches of the modelling code")


def switch(name: str, latex: str, meaning: str, *, default: int | None, maximum: int | None = 1,
           source: Source = ARCH, positive: bool = False) -> sp.Symbol:
    """Register a non-negative integer symbol (a 0/1 switch unless ``maximum`` says otherwise); ``positive`` for a
    size some formula divides by (a chunk length, a scale block, a quantization group), which is never 0.

    ``default`` is its value in the classic model (000's GPT: biases, LayerNorm, a learned position table, a tied
    head; no MoE, MLA, window or recompute), which ``eval``, the library and the generated functions use when the
    switch is not given; ``None`` where there is no classic value (a size that matters only under another switch,
    MLA's d_rope under mla = 1; a framework's behaviour).
    """
    symbol = sp.Symbol(name, integer=True, positive=True) if positive else sp.Symbol(name, integer=True, nonnegative=True)
    bound = None if maximum is None else sp.Integer(maximum)
    fallback = None if default is None else sp.Integer(default)
    _register(Quantity(symbol, latex, meaning, as_unit("1"), source, maximum=bound, default=fallback))
    return symbol


n_pos = declare("n_pos", r"n_{pos}", "positions of the learned position table (max_position_embeddings)", "1", integer=True, source=ARCH)
o_pos = switch("o_pos", r"o_{pos}", "extra rows of the position table (OPT: 2)", maximum=None, default=0)
n_norm = switch("n_norm", r"n_{norm}", "norms with parameters per layer (2; 1 for parallel GPT-J/Falcon-7B)", maximum=None, default=2)
pos_table = switch("pos_table", r"\sigma_{pos}", "1 if the model has a learned position table (GPT-2, OPT), 0 for rotary/ALiBi", default=1)
gated = switch("gated", r"\sigma_{gated}", "1 for a gated MLP with three matrices (SwiGLU, GeGLU), 0 for two", default=0)
b_q = switch("b_q", r"\sigma_{b_Q}", "1 if the query projection has a bias", default=1)
b_k = switch("b_k", r"\sigma_{b_K}", "1 if the key projection has a bias", default=1)
b_v = switch("b_v", r"\sigma_{b_V}", "1 if the value projection has a bias", default=1)
b_o = switch("b_o", r"\sigma_{b_O}", "1 if the attention output projection has a bias", default=1)
b_mlp = switch("b_mlp", r"\sigma_{b_{mlp}}", "1 if the MLP matrices have biases", default=1)
norm_bias = switch("norm_bias", r"\sigma_{\beta}", "1 for LayerNorm (scale and shift), 0 for RMSNorm (scale only)", default=1)
norm_final = switch("norm_final", r"\sigma_{final}", "1 if a norm follows the last layer (0: OPT with post-norm)", default=1)
emb_norm = switch("emb_norm", r"\sigma_{emb}", "1 if a norm follows the token embedding (BLOOM)", default=0)
tied = switch("tied", r"\sigma_{tied}", "1 if the output head reuses the token embedding", default=1)
head_bias = switch("head_bias", r"\sigma_{b_{head}}", "1 if the output head has a bias (GPT-J)", default=0)
d_emb = declare("d_emb", r"d_{emb}", "token embedding width (h except OPT's word_embed_proj_dim)", "1", integer=True, source=ARCH)
proj_emb = switch("proj_emb", r"\sigma_{proj}", "1 if project_in/project_out map the embedding width to h and back (OPT-350m)", default=0)

# --- today's families: MLA, mixture-of-experts layers, windows, multi-token prediction ---
mla = switch("mla", r"\sigma_{MLA}", "1 for multi-head latent attention (DeepSeek-V2/V3): keys and values through a low-rank latent", default=0)
q_lora = switch("q_lora", r"\sigma_{r_Q}", "1 if MLA queries go through a low-rank latent too (q_lora_rank set; DeepSeek-V2-Lite: 0)", default=0)
r_q = switch("r_q", r"r_Q", "MLA query latent rank (q_lora_rank; 0 without one)", maximum=None, default=None)
r_kv = switch("r_kv", r"r_{KV}", "MLA key/value latent rank (kv_lora_rank; 0 without MLA)", maximum=None, default=None)
d_rope = switch("d_rope", r"d_{rope}", "MLA rotary part of a query/key head, shared by all heads for keys (qk_rope_head_dim)", maximum=None, default=None)
d_nope = switch("d_nope", r"d_{nope}", "MLA non-rotary part of a query/key head (qk_nope_head_dim)", maximum=None, default=None)
d_v = switch("d_v", r"d_{v}", "MLA value head width (v_head_dim)", maximum=None, default=None)
qk_norm = switch("qk_norm", r"\sigma_{qk}", "1 if queries and keys get an RMSNorm of width d_head each (Qwen3, Gemma-3, GLM-4.5)", default=0)
qk_norm_full = switch("qk_norm_full", r"\sigma_{qk,full}", "1 if queries and keys get an RMSNorm over all heads, a·d_head and g·d_head (OLMo-2)", default=0)
sink = switch("sink", r"\sigma_{sink}", "1 if each head has a learned attention-sink logit (gpt-oss)", default=0)
l_moe = switch("l_moe", r"l_{moe}", "layers whose MLP is a mixture of experts (0 for a dense model)", maximum=None, default=0)
d_moe = declare("d_moe", r"d_{moe}", "width of one routed expert (moe_intermediate_size; d_ff when the config has one width)", "1", integer=True, source=ARCH)
d_sh = switch("d_sh", r"d_{sh}", "total width of the shared experts of a MoE layer (0 without; DeepSeek n_shared·d_moe)", maximum=None, default=0)
moe_lat = switch("moe_lat", r"\sigma_{lat}", "1 if the routed experts work at a latent width d_lat between a down and an up projection (Nemotron-3-Super)", default=0)
dsa = switch("dsa", r"\sigma_{DSA}", "1 if each MLA layer runs DeepSeek sparse attention's lightning indexer (DeepSeek-V3.2, GLM-5)", default=0)
n_idx = switch("n_idx", r"n_{idx}", "the indexer's heads (index_n_heads; unused without dsa)", maximum=None, default=0)
d_idx = switch("d_idx", r"d_{idx}", "the indexer's head width, also its cached key's (index_head_dim; unused without dsa)", maximum=None, default=0)
k_top = switch("k_top", r"k_{top}", "cached positions each query of DeepSeek sparse attention attends, the indexer's top-k (index_topk; unused without dsa)", maximum=None, default=0)
d_lat = switch("d_lat", r"d_{lat}", "latent width of the routed experts (moe_latent_size; unused without moe_lat)", maximum=None, default=0)
sh_gate = switch("sh_gate", r"\sigma_{sh}", "1 if a sigmoid gate h→1 scales the shared expert (Qwen2-MoE)", default=0)
router_bias = switch("router_bias", r"\sigma_{b_{router}}", "1 if the router has a bias (gpt-oss)", default=0)
all_experts = switch("all_experts", r"\sigma_{all}", "1 if the implementation runs every expert on every token (Llama-4 in transformers 5.24)", default=0)
l_win = switch("l_win", r"l_{win}", "layers with a sliding window or attention chunks (the rest attend to the whole context)", maximum=None, default=0)
W = declare("W", "W", "attention window (sliding_window, or attention_chunk_size of chunked layers)", "1", integer=True, source=Source("jiang2023", "§2, sliding window W"))
n_mtp = switch("n_mtp", r"n_{MTP}", "multi-token-prediction modules (DeepSeek-V3: 1; not built by transformers)", maximum=None, source=Source("deepseek2024v3", "§2.2, D MTP modules"), default=0)
c_f = declare("c_f", r"c_f", "MoE capacity factor: an expert takes at most c_f·k·T/E tokens of T", "1", integer=False, source=Source("lepikhin2020", "§2.2, expert capacity"))
n_blk = declare("n_blk", r"n_{blk}", "tokens per block of a paged KV cache (vLLM: 16)", "1", integer=True, source=Source("kwon2023", "§4.2, KV blocks"))
n_sink = switch("n_sink", r"n_{sink}", "first tokens a windowed cache keeps as attention sinks (StreamingLLM: 4)", maximum=None, source=Source("xiao2023", "§3, sink tokens"), default=0)

# --- the performance model (formulas/topics/performance.py) ------------------------------
ROOFLINE = Source("williams2009", "the roofline's sustained compute and memory rates")
COLLECTIVE = Source("nccl-tests", "bus bandwidth of a collective")
eta_gemm = declare("eta_gemm", r"\eta_{gemm}", "fraction of peak FLOP/s a large GEMM sustains (calibrated)", "1", integer=False, source=ROOFLINE, maximum=1)
eta_mem = declare("eta_mem", r"\eta_{mem}", "fraction of the HBM bandwidth memory-bound kernels sustain (calibrated)", "1", integer=False, source=ROOFLINE, maximum=1)
tau_k = declare("tau_k", r"\tau_{k}", "fixed cost of one kernel or collective: launch, tail, synchronisation (calibrated)", "second", integer=False, source=Source("nvidia-gemm", "small GEMMs are latency-bound"))
W_tp = declare("W_tp", r"W_{TP}", "one-way bandwidth a GPU's TP ring sustains (NVLink inside a node, the network across)", "byte/second", integer=False, source=COLLECTIVE)
W_pp = declare("W_pp", r"W_{PP}", "one-way bandwidth between neighbouring pipeline stages", "byte/second", integer=False, source=Source("narayanan2021", "§4.1, point-to-point between stages"))
W_intra = declare("W_intra", r"W_{intra}", "one-way bandwidth a collective sustains inside a node (NVLink)", "byte/second", integer=False, source=COLLECTIVE)
W_net = declare("W_net", r"W_{net}", "one-way network bandwidth a collective sustains per GPU across nodes", "byte/second", integer=False, source=COLLECTIVE)
d_node = declare("d_node", r"d_{node}", "data-parallel ranks inside one node (the intra-node level of a hierarchical all-reduce)", "1", integer=True, source=Source("jia2018", "hierarchical all-reduce"))
flash = switch("flash", r"\sigma_{flash}", "1 when attention is one fused kernel (FlashAttention): no s² scores in HBM", source=Source("dao2023", "fused attention"), default=0)
seq_par = switch("seq_par", r"\sigma_{SP}", "1 with Megatron sequence parallelism: norms and dropouts on s/t tokens", source=Source("korthikanti2022", "§4.2.2, sequence parallelism"), default=0)
rc_full = switch("rc_full", r"\sigma_{full}", "1 with full activation recompute: each layer's forward runs again in the backward", source=Source("korthikanti2022", "§5, full recompute"), default=0)
rc_sel = switch("rc_sel", r"\sigma_{sel}", "1 with selective recompute: the attention core runs again in the backward", source=Source("korthikanti2022", "§5, selective recompute"), default=0)
piped = switch("piped", r"\sigma_{PP}", "1 when there is a pipeline (p > 1): activations cross stage boundaries", source=Source("narayanan2021", "§2.2, pipeline parallelism"), default=None)
# framework switches: what an implementation overlaps (formulas/data/frameworks.py names the published ones)
ovl_dp = switch("ovl_dp", r"\sigma_{DP}^{ovl}", "1 when the DP gradient reduction overlaps the last micro-batch's backward (PyTorch DDP "
                "buckets, Megatron Core --overlap-grad-reduce); 0 when it runs after it (Megatron-LM 2021's local DDP, "
                "DeepSpeed's pipeline engine)", source=Source("li2020", "gradient bucketing"), default=None)
ovl_tp = switch("ovl_tp", r"\sigma_{TP}^{ovl}", "1 when the backward all-reduce of a column-parallel layer's input gradient overlaps its "
                "weight-gradient GEMM (Megatron-LM since September 2021; Korthikanti et al. 2022 §6.2)",
                source=Source("korthikanti2022", "§6.2, all-reduce overlapped with the linear weight's gradient computation"), default=None)
p2p_serial = switch("p2p_serial", r"\sigma_{P2P}^{ser}", "1 when a stage's pipeline sends and receives run one after another "
                    "(DeepSpeed's PipelineEngine), 0 when both directions go in one batched call (Megatron-LM's batch_isend_irecv)",
                    source=Source("narayanan2021", "§4.1, send and receive in the forward and backward direction in parallel"), default=None)
p2p_grad_whole = switch("p2p_grad_whole", r"\sigma_{P2P}^{grad}", "1 when each TP rank sends a stage's input gradient whole (b·s·h) "
                        "rather than as a 1/t slice all-gathered on receipt (DeepSpeed's PipelineEngine before v0.5.4: "
                        "is_grad_partitioned = False)",
                        source=Source("deepspeed-pipe", "engine.py _exec_send_grads, is_grad_partitioned"), default=None)
grad_fp32 = switch("grad_fp32", r"\sigma_{acc}^{fp32}", "1 when every micro-batch's 16-bit gradients are added into fp32 "
                   "gradients after its backward (DeepSpeed's BF16_Optimizer: update_hp_grads after each backward pass)",
                   source=Source("deepspeed-pipe", "engine.py _exec_backward_pass, bf16_optimizer.py update_hp_grads"), default=None)
T_slow = declare("T_slow", r"T_{mb}^{max}", "one micro-batch's forward and backward on the slowest of uneven pipeline stages",
                 "second", integer=False, source=Source("narayanan2021", "§2.2, 1F1B schedule"))
T_stages = declare("T_stages", r"\sum_i T_{mb,i}", "one micro-batch's forward and backward summed over the pipeline stages",
                   "second", integer=False, source=Source("narayanan2021", "§2.2, 1F1B schedule"))
tau_fwd = declare("tau_fwd", r"\tau_{fwd}", "one micro-batch's forward on one pipeline stage: what a prefetched gather hides under", "second", integer=False, source=Source("deepspeed", "stage3_prefetch_bucket_size"))
tau_bwd = declare("tau_bwd", r"\tau_{bwd}", "one micro-batch's backward on one pipeline stage: what bucketed collectives hide under", "second", integer=False, source=Source("li2020", "gradient bucketing"))

# --- LoRA targets (formulas/topics/precision.py): 1 if the named projection carries an adapter ------------------
LORA_SOURCE = Source("peft", "LoraConfig.target_modules")
lora_q = switch("lora_q", r"\lambda_{Q}", "1 if q_proj carries a LoRA adapter", source=LORA_SOURCE, default=None)
lora_k = switch("lora_k", r"\lambda_{K}", "1 if k_proj carries a LoRA adapter", source=LORA_SOURCE, default=None)
lora_v = switch("lora_v", r"\lambda_{V}", "1 if v_proj carries a LoRA adapter", source=LORA_SOURCE, default=None)
lora_o = switch("lora_o", r"\lambda_{O}", "1 if o_proj carries a LoRA adapter", source=LORA_SOURCE, default=None)
lora_gate = switch("lora_gate", r"\lambda_{gate}", "1 if gate_proj carries a LoRA adapter", source=LORA_SOURCE, default=None)
lora_up = switch("lora_up", r"\lambda_{up}", "1 if up_proj carries a LoRA adapter", source=LORA_SOURCE, default=None)
lora_down = switch("lora_down", r"\lambda_{down}", "1 if down_proj carries a LoRA adapter", source=LORA_SOURCE, default=None)

# --- measured rates, energy, emissions and cost (issue 14) ---------------------------
X_run = declared(DECLARATIONS["X_run"])
f_remat = declare("f_remat", r"f_{remat}", "share of the forward pass the backward runs again (rematerialization)", "1",
                  integer=False, maximum=1, source=Source("chowdhery2022", "§4, 'the rest of the activations are rematerialized'"))
U_hw = declare("U_hw", r"U_{HFU}", "hardware FLOPs utilization (HFU): the FLOPs run, recomputation included, over the peak",
               "1", integer=False, maximum=1, source=Source("chowdhery2022", "§4.1, hardware FLOPs utilization"))
R_tok = declare("R_tok", r"R_{tok}", "training throughput of the whole cluster", "token/second", integer=False, source=Source("chowdhery2022", "Appendix B, tokens per second"))
C_flops = declare("C_flops", "C", "a FLOP count (a training budget)", "FLOP", integer=False, source=Source("hoffmann2022", "Table 3, FLOPs"))
c_token = constant("c_token", r"\mathrm{tok}", 1, "one token: a sequence's FLOPs over its s tokens are FLOPs per token", "token", Source("kaplan2020", "Table 1, FLOPs per token"))
c_pfday = constant("c_pfday", r"\mathrm{PF\cdot day}", 10**15 * 86400, "one petaFLOP/s-day: 10^15 FLOP/s for 86400 s", "FLOP", Source("kaplan2020", "§1.3, PF-days"))
c_kwh = constant("c_kwh", r"\mathrm{kWh}", 3600000, "one kilowatt-hour in joules", "joule", Source("touvron2023a", "§6, energy in kWh"))
W_gpu = declare("W_gpu", r"W_{GPU}", "board power of one GPU (its TDP or measured draw)", "joule/second", integer=False, source=Source("touvron2023b", "Table 2, power consumption (W)"))
PUE = declare("PUE", r"\mathrm{PUE}", "power usage effectiveness of the data centre (facility power over IT power, at least 1)", "1", integer=False, minimum=1, source=Source("touvron2023a", "§6, PUE 1.1"))
I_co2 = declare("I_co2", r"I_{CO_2}", "carbon intensity of the grid: grams of CO2-equivalent per kWh", "gram", integer=False, source=Source("touvron2023a", "§6, 0.385 kg CO2eq/kWh"))
c_rent = declare("c_rent", r"c_{GPU\cdot h}", "rental price of one GPU for one hour", "dollar", integer=False, source=Source("deepseek2024", "Table 1, $2 per H800 GPU-hour"))
causal = switch("causal", r"\sigma_{causal}", "1 if only the causal (lower) triangle of the attention scores is computed, 0 for the full square", source=Source("kaplan2020", "Table 1, causal attention FLOPs"), default=0)
# --- failures and checkpoints (issue 14; 001 on fault tolerance) ----------------------
M_fail = declare("M_fail", r"M_{GPU}^{fail}", "mean time between failures of one GPU (with its share of the host)", "second", integer=False, source=Source("001", "one failure per GPU per month"))
tau_ckpt = declare("tau_ckpt", r"\tau_{ckpt}", "time between two checkpoints", "second", integer=False, source=Source("young1974", "the checkpoint interval"))
delta_ckpt = declare("delta_ckpt", r"\delta_{ckpt}", "time to write one checkpoint (the run stalls meanwhile)", "second", integer=False, source=Source("young1974", "the checkpoint interval"))
R_restore = declare("R_restore", r"R_{restore}", "time to restart after a failure: reschedule, load the last checkpoint", "second", integer=False, source=Source("001", "about 10 minutes to restore"))
W_store = declare("W_store", r"W_{store}", "bandwidth of the checkpoint storage, all writers together", "byte/second", integer=False, source=Source("dubey2024", "§3.3.4, storage"))
# --- uneven pipeline stages (issue 14; 004's BLOOM-176B layout) -------------------------
l_first = declare("l_first", r"l_{1}", "layers of the first pipeline stage", "1", integer=True, source=Source("004", "BLOOM-176B: 5 blocks and the embedding on the first stage"))
w_max = declare("w_max", r"w_{max}", "work of the slowest pipeline stage, in layer-forwards", "1", integer=False, source=Source("narayanan2021", "§2.2, the slowest stage sets the pace"))
w_tot = declare("w_tot", r"w_{tot}", "work of all pipeline stages together, in layer-forwards", "1", integer=False, source=Source("narayanan2021", "§2.2"))
# --- serving and communication optimizations (issue 14; 004, 001, 002) -----------------
s_max = declare("s_max", r"s_{max}", "tokens reserved per sequence: the longest a request may grow to", "1", integer=True, source=Source("004", "KV cache allocated for the longest sequence"))
k_blk = declare("k_blk", r"k_{blk}", "tokens per block of a paged KV cache", "1", integer=True, source=Source("kwon2023", "§4.2, KV blocks"))
f_w = declare("f_w", r"f_{w}", "share of the steps in the uncompressed warm-up stage of 1-bit Adam", "1", integer=False, maximum=1, source=Source("tang2021", "§4, warm-up stage"))
k_cmp = declare("k_cmp", r"k_{cmp}", "compression ratio of the compressed stage (bits before over bits after)", "1", integer=False, source=Source("004", "32-bit values to 1 bit"))
R_cmp = declare("R_cmp", r"R_{cmp}", "overall reduction of the communication volume", "1", integer=False, source=Source("004", "up to 5× less communication"))
pi_pen = declare("pi_pen", r"\pi", "extra training time of an export GPU (A800, H800) over the GPU it is cut from", "1", integer=False, source=Source("002", "A800 about 5 %, H800 10–30 % longer"))
c_gpu = declare("c_gpu", r"c_{GPU}", "purchase price of one GPU", "dollar", integer=False, source=Source("001", "H100 about $40,000, RTX 4090 $1,600"))
# --- 001's price comparison and NIC count (issue 14) ------------------------------
PRICES = Source("001", "H100 against RTX 4090: prices, LambdaLabs' throughput and throughput per dollar")
c_ref = declare("c_ref", r"c_{ref}", "purchase price of the GPU compared against (the cheaper one: an RTX 4090 at $1,600)", "dollar", integer=False, source=PRICES)
x_thr = declare("x_thr", r"x_{thr}", "training throughput of one GPU over the compared GPU's (measured: LambdaLabs, H100 about 2× a 4090)", "1", integer=False, source=PRICES)
X_ref = declare("X_ref", r"X_{ref}", "peak FLOP/s of the GPU compared against", "FLOP/second", integer=False, source=PRICES)
W_ref = declare("W_ref", r"W_{ref}", "memory bandwidth of the GPU compared against", "byte/second", integer=False, source=PRICES)
N_pay = declare("N_pay", r"N_{pay}", "months in which a GPU rented out is to earn its purchase price", "1", integer=False, source=Source("001", "pays back in about 7 months at list price"))
NICS = Source("001", "data parallelism over PCIe: 8 ConnectX-6 200 Gbps RDMA NICs for 8 GPUs")
g_node = declare("g_node", r"g_{node}", "GPUs in one machine, sharing its network cards", "1", integer=True, source=NICS)
k_nic = declare("k_nic", r"k_{NIC}", "network cards (NICs) in one machine", "1", integer=True, source=NICS)
W_nic = declare("W_nic", r"W_{NIC}", "one-way bandwidth of one network card (ConnectX-6 200 Gb/s: 25 GB/s)", "byte/second", integer=False, source=NICS)
tau_0 = declare("tau_0", r"\tau_0", "the baseline's time for the same work (the run another is compared against)", "second", integer=False, source=Source("korthikanti2022", "Table 4, the baseline's forward and backward times"))
c_month = constant("c_month", r"\mathrm{month}", 30 * 86400, "one month of 30 days, in seconds", "second", Source("001", "months to pay back"))

# --- serving (issue 24: formulas/topics/serving.py) -----------------------------------------------
ORCA = Source("yu2022", "§2, the initiation (prefill) and increment (decode) phases")
s_in = declare("s_in", r"s_{in}", "prompt tokens of one request (its prefill)", "1", integer=True, source=ORCA)
s_out = declare("s_out", r"s_{out}", "output tokens of one request (the first from the prefill, the rest one per decoding step)", "1", integer=True, source=ORCA)
s_ctx = declare("s_ctx", r"s_{ctx}", "context of a decoding step: the tokens its new token attends to, itself included", "1", integer=True, source=ORCA)
s_long = declare("s_long", r"s_{out}^{max}", "the longest output of a static batch's requests (the batch runs until it ends)", "1", integer=True, source=Source("yu2022", "§2.2, requests that finish early wait for the batch"))
N_kv = declare("N_kv", r"N_{KV}", "cached positions one sequence's decoding step reads, summed over the layers", "1", integer=True, source=Source("transformers", "cache_utils.py: DynamicLayer, DynamicSlidingWindowLayer"))
q_kv = declare("q_kv", r"q_{KV}", "bytes per cached key/value element (2 bf16/fp16, 1 fp8/int8)", "byte", integer=False, source=Source("kwon2023", "§4, the KV cache"))
q_s = declare("q_s", r"q_{s}", "bytes of one quantization group's scale and zero point (gpt-fast int4: two bf16 values, 4 bytes)", "byte", integer=False, source=Source("gpt-fast", "quantize.py, scales_and_zeros in bfloat16"))
E_hit = declare("E_hit", r"E_{hit}", "distinct routed experts one MoE layer reads in a decoding step (the mean over the MoE layers)", "1", integer=False, source=Source("fedus2021", "§2, each token routed to its experts"))
eta_pf = declare("eta_pf", r"\eta_{pf}", "fraction of peak FLOP/s a prefill's GEMMs and attention sustain (calibrated)", "1", integer=False, maximum=1, source=Source("williams2009", "the roofline's sustained compute rate"))
eta_dec = declare("eta_dec", r"\eta_{dec}", "fraction of peak FLOP/s a decoding step's skinny GEMMs and attention sustain (calibrated)", "1", integer=False, maximum=1, source=Source("nvidia-gemm", "small and skinny GEMMs are memory- or latency-bound"))
eta_hbm = declare("eta_hbm", r"\eta_{HBM}", "fraction of the HBM bandwidth a forward pass's weight and cache reads sustain (calibrated)", "1", integer=False, maximum=1, source=Source("williams2009", "the roofline's sustained memory bandwidth"))
tau_L = declare("tau_L", r"\tau_{L}", "fixed cost of one layer's kernels in one forward pass: launches, tails, synchronisation (calibrated)", "second", integer=False, source=Source("nvidia-gemm", "small GEMMs are latency-bound"))
tau_ar = declare("tau_ar", r"\tau_{msg}", "latency of one step of a ring collective: a message's fixed cost (calibrated)", "second", integer=False, source=Source("thakur2005", "§2, the α of the α + nβ cost model"))

# --- per-op times fitted on measured kernels (issues 33 item 3, 34 item 2: formulas/topics/kernels.py) ----------------
MEASURED = Source("aiconfigurator", "collected per-op latencies, fitted per GPU (render/numeric/kernel_calibrate.py)")
tau_mm = declare("tau_mm", r"\tau_{mm}", "floor of one GEMM kernel: launch, prologue, epilogue (fitted on measured kernels)", "second", integer=False, source=MEASURED)
eta_mm = declare("eta_mm", r"\eta_{mm}", "fraction of peak FLOP/s a compute-bound GEMM kernel sustains (fitted on measured kernels)", "1", integer=False, maximum=1, source=MEASURED)
eta_mmb = declare("eta_mmb", r"\eta_{mm}^{B}", "fraction of the HBM bandwidth a memory-bound GEMM kernel's operands sustain (fitted on measured kernels)", "1", integer=False, maximum=1, source=MEASURED)
x_ew = declare("x_ew", r"x_{ew}", "bytes an element-wise kernel reads and writes", "byte", integer=False, source=Source("williams2009", "bytes moved from memory"))
tau_ew = declare("tau_ew", r"\tau_{ew}", "floor of one element-wise kernel (fitted on measured kernels)", "second", integer=False, source=MEASURED)
eta_ew = declare("eta_ew", r"\eta_{ew}", "fraction of the HBM bandwidth an element-wise kernel sustains (fitted on measured kernels)", "1", integer=False, maximum=1, source=MEASURED)
tau_da = declare("tau_da", r"\tau_{da}", "floor of one decode-attention kernel (fitted on measured kernels)", "second", integer=False, source=MEASURED)
eta_da = declare("eta_da", r"\eta_{da}", "fraction of the HBM bandwidth a decode-attention kernel's cache reads sustain (fitted on measured kernels)", "1", integer=False, maximum=1, source=MEASURED)
eta_dax = declare("eta_dax", r"\eta_{da}^{X}", "fraction of peak FLOP/s a decode-attention kernel's score and value products sustain (fitted on measured kernels)", "1", integer=False, maximum=1, source=MEASURED)
c_blk = declare("c_blk", r"c_{blk}", "cost of one (sequence, KV head) block of a decode-attention kernel (fitted on measured kernels)", "second", integer=False, source=MEASURED)
c_pos = declare("c_pos", r"c_{pos}", "serial cost per cached position and head dimension of one decode-attention block (fitted on measured kernels)", "second", integer=False, source=MEASURED)
tau_ca = declare("tau_ca", r"\tau_{ca}", "floor of one prefill (context) attention kernel (fitted on measured kernels)", "second", integer=False, source=MEASURED)
eta_ca = declare("eta_ca", r"\eta_{ca}", "fraction of peak FLOP/s a long causal prefill-attention kernel sustains (fitted on measured kernels)", "1", integer=False, maximum=1, source=MEASURED)
eta_cab = declare("eta_cab", r"\eta_{ca}^{B}", "fraction of the HBM bandwidth a prefill-attention kernel's Q, K, V and output traffic sustains (fitted on measured kernels)", "1", integer=False, maximum=1, source=MEASURED)
s_half = declare("s_half", r"s_{1/2}", "prompt length at which a causal prefill-attention kernel reaches half its long-prompt efficiency (fitted on measured kernels)", "1", integer=False, source=MEASURED)
d_half = declare("d_half", r"d_{1/2}", "head dimension at which a prefill-attention kernel's per-score softmax work equals its matmuls' (fitted on measured kernels)", "1", integer=False, source=MEASURED)
c_head = declare("c_head", r"c_{head}", "cost of one (sequence, query head) tile row of a prefill-attention kernel (fitted on measured kernels)", "second", integer=False, source=MEASURED)
alpha_c = declare("alpha_c", r"\alpha_{c}", "latency of a collective at two GPUs: its fixed cost (fitted on measured NCCL runs)", "second", integer=False, source=MEASURED)
beta_c = declare("beta_c", r"\beta_{c}", "latency a collective adds per further GPU (fitted on measured NCCL runs)", "second", integer=False, source=MEASURED)
tau_p = declare("tau_p", r"\tau_{p}", "cost of one pipelined segment of a collective: what cutting the message finer adds (fitted on measured NCCL runs)", "second", integer=False, source=MEASURED)
W_bus = declare("W_bus", r"W_{bus}", "bus bandwidth a collective sustains at its GPU count (fitted per GPU count on measured NCCL runs)", "byte/second", integer=False, source=COLLECTIVE)
tau_os = declare("tau_os", r"\tau_{os}", "latency of a one-shot all-reduce: a kernel that reads every peer's buffer over NVLink (fitted on measured runs)", "second", integer=False, source=MEASURED)
W_os = declare("W_os", r"W_{os}", "bandwidth at which a one-shot all-reduce reads its peers' buffers (fitted on measured runs)", "byte/second", integer=False, source=MEASURED)
F_fwd = declare("F_fwd", r"F_{fwd}", "FLOPs of one forward pass of a replica (a prefill, or a decoding step without its attention over the cache)", "FLOP", integer=False, source=Source("pytorch", "FlopCounterMode"))
F_pf = declare("F_pf", r"F_{pf}", "FLOPs of one request's prefill", "FLOP", integer=False, source=Source("pytorch", "FlopCounterMode"))
R_w = declare("R_w", r"R_{w}", "bytes of weights one forward pass of a replica reads", "byte", integer=False, source=Source("williams2009", "bytes moved from memory"))
T_pf = declare("T_pf", r"T_{pf}", "time of one batch's prefill: the time to its first token", "second", integer=False, source=ORCA)
T_tok = declare("T_tok", r"T_{tok}", "time per output token after the first (TPOT): the mean decoding step", "second", integer=False, source=ORCA)
T_e2e = declare("T_e2e", r"T_{e2e}", "time from a batch's start to its last token", "second", integer=False, source=ORCA)
R_out = declare("R_out", r"R_{out}", "output tokens per second of a deployment", "token/second", integer=False, source=ORCA)
R_req = declare("R_req", r"R_{req}", "requests arriving per second", "sequence/second", integer=False, source=Source("little1961", "the arrival rate λ"))
alpha_acc = declare("alpha_acc", r"\alpha", "probability that the target model accepts a drafted token (expected acceptance rate)", "1", integer=False, maximum=1, source=Source("leviathan2023", "Definition 3.1, α"))
gamma_spec = declare("gamma_spec", r"\gamma", "tokens drafted per target step in speculative decoding", "1", integer=True, source=Source("leviathan2023", "Algorithm 1, γ"))
c_draft = declare("c_draft", r"c", "time of one draft step over one target step", "1", integer=False, source=Source("leviathan2023", "Definition 3.5, the cost coefficient c"))
n_chunk = declare("n_chunk", r"n_{chunk}", "prompt tokens a chunked prefill adds to one step (its chunk size)", "1", integer=True, source=Source("agrawal2024", "§4, chunked prefills"))
n_pf = declare("n_pf", r"n_{pf}", "GPUs of one prefill instance", "1", integer=True, source=Source("zhong2024", "§3, prefill and decoding instances"))
n_dec = declare("n_dec", r"n_{dec}", "GPUs of one decoding instance", "1", integer=True, source=Source("zhong2024", "§3, prefill and decoding instances"))
b_pf = declare("b_pf", r"b_{pf}", "prompts one prefill instance processes together", "1", integer=True, source=Source("zhong2024", "§3, batching prefills"))
M_w = declare("M_w", r"M_{w}", "bytes of weights one GPU holds", "byte", integer=False, source=Source("kwon2023", "§4, the weights beside the KV cache"))
M_ws = declare("M_ws", r"M_{ws}", "workspace one GPU reserves for a prefill's activations", "byte", integer=False, source=Source("vllm", "profile_run"))
j_step = declare("j_step", "j", "index of a decoding step after the prefill (1 for the first), or of a drafted token", "1", integer=True, source=ORCA)
u_below = declare("u_below", "u", "decoding steps of a request whose context is still within a windowed layer's window", "1", integer=True, source=Source("jiang2023", "§2, sliding window W"))

# --- families (issue 28): the switches and sizes of the families read from config.json -------------------
kv_expand = switch("kv_expand", r"\sigma_{KV}^{exp}", "1 if keys and values are expanded to every query head before the cache "
                   "(Falcon's new decoder architecture in transformers): the cache holds a heads, not g", default=0)
x_attn = switch("x_attn", r"\sigma_{cross}", "1 if every layer has a cross-attention block and its norm (GPT-2's add_cross_attention)",
                default=0)


attn_gate = switch("attn_gate", r"\sigma_{gate}", "1 if the query projection also yields a per-head output gate, doubling it (Qwen3-Next's "
                   "gated attention)", default=0)
# layers whose token mixer is not attention, and layers without a mixer or an MLP (hybrid and state-space models)
HYBRID = Source("transformers", "the hybrid models' decoder layers: mamba, mamba2, jamba, nemotron_h, recurrent_gemma, qwen3_next")
l_mamba = switch("l_mamba", r"l_{S6}", "layers whose mixer is a Mamba (S6) selective scan instead of attention", maximum=None,
                 default=0, source=Source("gu2023", "§3, the Mamba block"))
l_ssd = switch("l_ssd", r"l_{SSD}", "layers whose mixer is a Mamba-2 (SSD) block instead of attention", maximum=None, default=0,
               source=Source("dao2024", "§7, the Mamba-2 block"))
l_lru = switch("l_lru", r"l_{LRU}", "layers whose mixer is a Griffin recurrent block (RG-LRU) instead of attention", maximum=None,
               default=0, source=Source("de2024", "§2.4, the recurrent block"))
l_gdn = switch("l_gdn", r"l_{GDN}", "layers whose mixer is a gated delta-net (linear attention) instead of attention", maximum=None,
               default=0, source=Source("yang2024gdn", "§3, gated delta rule"))
l_noattn = switch("l_noattn", r"l_{\varnothing mix}", "layers with no token mixer at all, only an MLP or experts (Nemotron-H's)",
                  maximum=None, default=0, source=HYBRID)
l_nomlp = switch("l_nomlp", r"l_{\varnothing mlp}", "layers with no MLP or experts, only a mixer (Mamba's, Nemotron-H's)", maximum=None,
                 default=0, source=HYBRID)
d_ssm = switch("d_ssm", r"d_{ssm}", "inner width of a Mamba or Mamba-2 mixer (intermediate_size = expand·h)", maximum=None, default=None,
               source=Source("gu2023", "§3.4, E = 2"))
N_ssm = switch("N_ssm", r"N", "state size per channel of a Mamba or Mamba-2 mixer (state_size)", maximum=None, default=None,
               source=Source("gu2023", "§3.1, N"))
r_dt = switch("r_dt", r"r_{\Delta}", "rank of Mamba's Δ projection (time_step_rank, ⌈h/16⌉)", maximum=None, default=None,
              source=Source("gu2023", "§3.6, Δ rank"))
k_conv = switch("k_conv", r"k_{conv}", "kernel width of a mixer's causal depthwise convolution (conv_kernel: 4)", maximum=None,
                default=None, source=Source("gu2023", "§3.4, the short convolution"))
b_ssm = switch("b_ssm", r"\sigma_{b_{ssm}}", "1 if a Mamba mixer's input and output projections have biases (use_bias)", default=0,
               source=HYBRID)
b_conv = switch("b_conv", r"\sigma_{b_{conv}}", "1 if the mixer's convolution has a bias (use_conv_bias)", default=0, source=HYBRID)
dt_norm = switch("dt_norm", r"\sigma_{\Delta BC}", "1 if Δ, B and C get RMSNorms inside the mixer (Jamba)", default=0,
                 source=Source("lieber2024", "§2, RMSNorm inside Mamba layers"))
n_ssmh = switch("n_ssmh", r"n_{SSD}", "heads of a Mamba-2 mixer (num_heads; d_ssm = n_SSD·head_dim)", maximum=None, default=None,
                source=Source("dao2024", "§7.2, multi-head SSM"))
n_grp = switch("n_grp", r"n_{grp}", "groups of B and C in a Mamba-2 mixer (n_groups)", maximum=None, default=None,
               source=Source("dao2024", "§7.2, grouped B and C"))
Q_ssd = switch("Q_ssd", r"Q_{SSD}", "chunk length of the Mamba-2 scan (chunk_size: 256); the sequence is padded to whole chunks",
               maximum=None, default=256, source=Source("dao2024", "§6, the chunked SSD algorithm"), positive=True)
d_lru = switch("d_lru", r"d_{LRU}", "width of a Griffin recurrent block (lru_width)", maximum=None, default=None,
               source=Source("de2024", "§2.4, RG-LRU width"))
w_lru = switch("w_lru", r"w_{LRU}", "block width of the RG-LRU's block-diagonal gates (lru_width / heads)", maximum=None, default=None,
               source=Source("de2024", "§2.4, block-diagonal gates"))
n_kh = switch("n_kh", r"n_{K}^{lin}", "query/key heads of a gated delta-net (linear_num_key_heads)", maximum=None, default=None,
              source=Source("yang2024gdn", "§3"))
n_vh = switch("n_vh", r"n_{V}^{lin}", "value heads of a gated delta-net (linear_num_value_heads)", maximum=None, default=None,
              source=Source("yang2024gdn", "§3"))
d_kh = switch("d_kh", r"d_{K}^{lin}", "query/key head width of a gated delta-net (linear_key_head_dim)", maximum=None, default=None,
              source=Source("yang2024gdn", "§3"))
d_vh = switch("d_vh", r"d_{V}^{lin}", "value head width of a gated delta-net (linear_value_head_dim)", maximum=None, default=None,
              source=Source("yang2024gdn", "§3"))
Q_gdn = switch("Q_gdn", r"Q_{GDN}", "chunk length of the gated delta rule's chunked scan (64 in transformers' torch path)",
               maximum=None, default=64, source=Source("yang2024gdn", "§3.3, chunkwise form"), positive=True)


# vision towers (formulas/topics/towers.py): the patch stem, position table and projector of a multimodal model
TOWER = Source("transformers", "the vision towers of gemma3 (SigLIP), mistral3 (Pixtral), qwen2_5_vl, qwen3_vl, llama4")
C_img = switch("C_img", r"C_{img}", "input channels of an image (num_channels: 3)", maximum=None, default=None, source=TOWER)
P_img = switch("P_img", r"P", "patch side in pixels (patch_size: 14, 16)", maximum=None, default=None, source=TOWER)
P_t = switch("P_t", r"P_t", "frames per patch of a video-capable stem (temporal_patch_size: 2; 1 for a still image)", maximum=None,
             default=None, source=TOWER)
b_patch = switch("b_patch", r"\sigma_{b_{patch}}", "1 if the patch embedding has a bias", default=0, source=TOWER)
n_vpos = switch("n_vpos", r"n_{pos}^{img}", "rows of a vision tower's learned position table ((image_size/patch_size)², or "
                "num_position_embeddings; 0 with rotary positions)", maximum=None, default=0, source=TOWER)
cls_tok = switch("cls_tok", r"\sigma_{cls}", "1 if the tower prepends a learned class embedding (Llama-4)", default=0, source=TOWER)
b_lin = switch("b_lin", r"\sigma_{b}", "1 if a linear layer has a bias", default=0, source=TOWER)


# quantized weights as stored (formulas/topics/weights.py)
QUANT = Source("transformers", "quantizers/ and integrations/: finegrained_fp8, mxfp4, gptq, awq, bitsandbytes")
B_r = switch("B_r", r"B_{r}", "output rows per FP8 scale block (weight_block_size[0]: 128)", maximum=None, default=None, source=QUANT,
             positive=True)
B_c = switch("B_c", r"B_{c}", "input columns per FP8 scale block (weight_block_size[1]: 128)", maximum=None, default=None, source=QUANT,
             positive=True)
G_q = switch("G_q", r"G", "input rows per GPTQ/AWQ quantization group (group_size: 128; the whole input when -1)", maximum=None,
             default=None, source=Source("frantar2022", "§4, grouping"), positive=True)
n_bits = switch("n_bits", r"n_{bits}", "bits per GPTQ/AWQ weight (bits: 4 or 8)", maximum=None, default=None,
                source=Source("frantar2022", "§4"))
score_bias = switch("score_bias", r"\sigma_{corr}", "1 if each MoE layer keeps an fp32 routing-score correction bias of E (a stored buffer, "
                    "not a parameter: DeepSeek-V3, GLM-4.5, MiniMax-M2, Nemotron-H)", default=0, source=Source("deepseek2024v3", "§2.1.2, auxiliary-loss-free load balancing: a bias per expert"))


# --- memory as the frameworks hold it (issue 25; formulas/data/frameworks.py, formulas/stage_memory.py) ----------
MEGATRON_CORE = Source("megatron-core", "megatron/core and megatron/training at commit d98e8a64")
drop = switch("drop", r"\sigma_{drop}", "1 if the block trains with dropout (a mask saved per dropout: GPT-2/GPT-3 recipes); 0 "
              "without (Llama, Mixtral, DeepSeek: p = 0 saves nothing, the softmax output is the scores·V input)",
              source=Source("pytorch", "aten/src/ATen/native/Dropout.cpp: p = 0 returns the input"), default=1)
glu_fused = switch("glu_fused", r"\sigma_{GLU}", "1 if the gated activation (SwiGLU) is one fused kernel that saves only its "
                   "input (Megatron Core's bias_swiglu_impl and weighted_bias_swiglu_impl); 0 for SiLU and product as two ops",
                   source=Source("megatron-core", "megatron/core/fusions/fused_bias_swiglu.py, SwiGLUFunction"), default=0)
t_e = declare("t_e", r"t_{E}", "expert tensor parallel degree: the ranks one expert's width is split over (Megatron Core: t "
              "unless --expert-tensor-parallel-size; DeepSeek-V3 trained with 1)", "1", integer=True,
              source=Source("megatron-core", "megatron/core/model_parallel_config.py, expert_tensor_parallel_size"))
q_p = declare("q_p", r"q_{W}", "bytes per parameter of the model's own weights, kept all run long (2 bf16; 4 when the model "
              "is fp32 and autocast or FSDP casts it)", "byte/parameter", integer=False, source=MEGATRON_CORE)
q_g = declare("q_g", r"q_{G}", "bytes per parameter of the gradient a framework keeps (4: Megatron Core's fp32 main grads; 2: "
              "DeepSpeed ZeRO's bf16 grads)", "byte/parameter", integer=False, source=MEGATRON_CORE)
q_o = declare("q_o", r"q_{O}", "bytes per parameter of the optimizer's states (12: fp32 master weight, Adam's m and v; 8: m and "
              "v when the weights are fp32 already)", "byte/parameter", integer=False, source=Source("rajbhandari2020", "§3"))
P_unit = declare("P_unit", r"\Psi_{unit}", "parameters gathered at once under ZeRO-3 or FSDP: DeepSpeed's largest module, "
                 "FSDP's wrapped unit (a decoder layer)", "parameter", integer=False,
                 source=Source("deepspeed-zero", "stage3.py, estimate_zero3_model_states_mem_needs: largest_layer_params"))


# --- counts derived from the table's (printed by their own names: formulas/vocabulary/latex.py, ``abbreviated``) ------------
l_rec = l_mamba + l_ssd + l_lru + l_gdn  # layers with a recurrent mixer in place of attention
l_attn = l - l_rec - l_noattn  # layers with attention
l_mlp = l - l_moe - l_nomlp  # layers with a dense MLP
t_kv = (1 - mla) * sp.Min(t, g) + mla  # ways a stage's TP ranks split the KV cache (MLA's latent is whole on each)
DERIVED_COUNTS: tuple[tuple[sp.Expr, sp.Symbol, str, str], ...] = (  # (count, its printed symbol, LaTeX, meaning)
    (l_attn, sp.Symbol("l_attn"), r"l_{attn}", "layers with attention: l − l_S6 − l_SSD − l_LRU − l_GDN − l_∅mix"),
    (l_mlp, sp.Symbol("l_mlp"), r"l_{mlp}", "layers with a dense MLP: l − l_moe − l_∅mlp"),
    (t_kv, sp.Symbol("t_KV"), r"t_{KV}",
     "ways a stage's TP ranks split the KV cache: min(t, g) KV-head shards, 1 under MLA (its latent is whole on each)"),
)

# ``from llm_formulas.formulas.vocabulary.symbols import *`` brings the table's symbols and its functions, nothing else
# (E is the number of experts here, as in the sources' notation, not SymPy's Euler number).
__all__ = sorted(name for name, value in list(globals().items())
                 if isinstance(value, sp.Symbol) and not name.startswith("_")) + [
    "DERIVED_COUNTS", "Quantity", "UnknownSymbol", "all_quantities", "constant", "constant_values", "declare", "declare_in",
    "is_declared", "latex_names", "quantity", "resolve", "switch", "switch_defaults", "table_order"]
