"""The one table of symbols: every quantity has one SymPy symbol, made here only.

Each entry carries the SymPy assumptions (counts are ``positive, integer``),
its LaTeX, a one-line meaning, a unit and where the notation comes from
(Table 3 of the Bilibili article, Yu 2024 (000), extended).
Constants that carry a unit (``c_flop`` = 2 FLOP per parameter per token) are
symbols too, with a value: formulas keep them symbolic so that dimensional
analysis sees their unit, and every proof or evaluation substitutes the value.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

import sympy as sp

from formulas.bibliography import Source
from formulas.units import Unit, as_unit


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

    @property
    def name(self) -> str:
        return self.symbol.name

    @property
    def is_integer(self) -> bool:
        return bool(self.symbol.is_integer)

    @property
    def is_constant(self) -> bool:
        return self.value is not None


_REGISTRY: dict[str, Quantity] = {}


def declare(
    name: str,
    latex: str,
    meaning: str,
    unit: Unit | str,
    *,
    integer: bool,
    source: Source = Source("000", "Table 3"),
    maximum: int | None = None,
) -> sp.Symbol:
    """Create and register a positive symbol; a second, different declaration is refused."""
    symbol = sp.Symbol(name, positive=True, integer=integer) if integer else sp.Symbol(name, positive=True)
    bound = None if maximum is None else sp.Integer(maximum)
    entry = Quantity(symbol, latex, meaning, as_unit(unit), source, maximum=bound)
    _register(entry)
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


def quantity(name_or_symbol: str | sp.Symbol) -> Quantity:
    """The registry entry of a symbol, by name or by symbol."""
    name = name_or_symbol if isinstance(name_or_symbol, str) else name_or_symbol.name
    try:
        return _REGISTRY[name]
    except KeyError:
        raise KeyError(f"unknown symbol {name!r}") from None


def is_declared(name: str) -> bool:
    return name in _REGISTRY


def all_quantities() -> list[Quantity]:
    return list(_REGISTRY.values())


def table_order(symbol: sp.Symbol) -> int:
    """Position of a symbol in the table (the order help and reports list inputs in)."""
    return list(_REGISTRY).index(symbol.name)


def constant_values() -> dict[sp.Symbol, sp.Rational]:
    """Substitution that replaces every unit-carrying constant by its value."""
    return {q.symbol: q.value for q in _REGISTRY.values() if q.value is not None}


def latex_names() -> dict[sp.Symbol, str]:
    """``symbol_names`` for ``sympy.latex``, built from the registry."""
    return {q.symbol: q.latex for q in _REGISTRY.values() if q.value is None}


# --- batch and sequence -------------------------------------------------------
b = declare("b", "b", "micro-batch size", "1", integer=True)
B = declare("B", "B", "global batch size", "1", integer=True)
s = declare("s", "s", "sequence length", "1", integer=True)
# --- model shape ----------------------------------------------------------------
h = declare("h", "h", "hidden size", "1", integer=True)
a = declare("a", "a", "attention heads", "1", integer=True)
g = declare("g", "g", "key/value heads", "1", integer=True, source=Source("ainslie2023", "g key/value heads"))
d_head = declare("d_head", "d_{head}", "head dimension", "1", integer=True, source=Source("vaswani2017", "§3.2.2, d_k"))
d_ff = declare("d_ff", "d_{ff}", "MLP inner width", "1", integer=True, source=Source("vaswani2017", "§3.3, d_ff"))
l = declare("l", "l", "layers", "1", integer=True)  # noqa: E741 - the sources' name
V = declare("V", "V", "vocabulary size", "1", integer=True)
E = declare("E", "E", "experts", "1", integer=True, source=Source("fedus2021", "§2, experts"))
k = declare("k", "k", "experts per token", "1", integer=True, source=Source("jiang2024", "top-2 of 8 experts per token"))
# --- parallel layout ------------------------------------------------------------
t = declare("t", "t", "tensor parallel degree", "1", integer=True)
p = declare("p", "p", "pipeline parallel degree", "1", integer=True)
d = declare("d", "d", "data parallel degree", "1", integer=True)
n = declare("n", "n", "GPUs (workers)", "1", integer=True)
m = declare("m", "m", "micro-batches per iteration", "1", integer=True)
v = declare("v", "v", "virtual pipeline stages per GPU", "1", integer=True, source=Source("narayanan2021", "§2.2.2, interleaved schedule"))
# --- model and data size --------------------------------------------------------
P = declare("P", r"\Psi", "parameters", "parameter", integer=False)
D = declare("D", "D", "training tokens", "token", integer=False)
# --- hardware and efficiency ------------------------------------------------------
X = declare("X", "X", "peak FLOP/s of one GPU", "FLOP/second", integer=False)
U = declare("U", "U", "utilization (MFU)", "1", integer=False, maximum=1)
W_mem = declare("W_mem", r"W_{mem}", "memory bandwidth", "byte/second", integer=False, source=Source("williams2009", "memory bandwidth"))
W_link = declare("W_link", r"W_{link}", "link bandwidth", "byte/second", integer=False, source=Source("001", "NVLink and PCIe bandwidth"))
r = declare("r", "r", "allowed communication-to-compute time ratio", "1", integer=False)
f = declare("f", "f", "serial fraction (Amdahl)", "1", integer=False, maximum=1)

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

# --- architecture switches ------------------------------------------------------
# Structural choices of a decoder: 0/1 switches and
# small non-negative counts that a Hugging Face config maps to (formulas/hf_config.py).
ARCH = Source("transformers", "configuration switches of the modelling code")


def switch(name: str, latex: str, meaning: str, *, maximum: int | None = 1, source: Source = ARCH) -> sp.Symbol:
    """Register a non-negative integer symbol (a 0/1 switch unless ``maximum`` says otherwise)."""
    symbol = sp.Symbol(name, integer=True, nonnegative=True)
    bound = None if maximum is None else sp.Integer(maximum)
    _register(Quantity(symbol, latex, meaning, as_unit("1"), source, maximum=bound))
    return symbol


n_pos = declare("n_pos", r"n_{pos}", "positions of the learned position table (max_position_embeddings)", "1", integer=True, source=ARCH)
o_pos = switch("o_pos", r"o_{pos}", "extra rows of the position table (OPT: 2)", maximum=None)
n_norm = switch("n_norm", r"n_{norm}", "norms with parameters per layer (2; 1 for parallel GPT-J/Falcon-7B)", maximum=None)
pos_table = switch("pos_table", r"\sigma_{pos}", "1 if the model has a learned position table (GPT-2, OPT), 0 for rotary/ALiBi")
gated = switch("gated", r"\sigma_{gated}", "1 for a gated MLP with three matrices (SwiGLU, GeGLU), 0 for two")
b_q = switch("b_q", r"\sigma_{b_Q}", "1 if the query projection has a bias")
b_k = switch("b_k", r"\sigma_{b_K}", "1 if the key projection has a bias")
b_v = switch("b_v", r"\sigma_{b_V}", "1 if the value projection has a bias")
b_o = switch("b_o", r"\sigma_{b_O}", "1 if the attention output projection has a bias")
b_mlp = switch("b_mlp", r"\sigma_{b_{mlp}}", "1 if the MLP matrices have biases")
norm_bias = switch("norm_bias", r"\sigma_{\beta}", "1 for LayerNorm (scale and shift), 0 for RMSNorm (scale only)")
norm_final = switch("norm_final", r"\sigma_{final}", "1 if a norm follows the last layer (0: OPT with post-norm)")
emb_norm = switch("emb_norm", r"\sigma_{emb}", "1 if a norm follows the token embedding (BLOOM)")
tied = switch("tied", r"\sigma_{tied}", "1 if the output head reuses the token embedding")
head_bias = switch("head_bias", r"\sigma_{b_{head}}", "1 if the output head has a bias (GPT-J)")
d_emb = declare("d_emb", r"d_{emb}", "token embedding width (h except OPT's word_embed_proj_dim)", "1", integer=True, source=ARCH)
proj_emb = switch("proj_emb", r"\sigma_{proj}", "1 if project_in/project_out map the embedding width to h and back (OPT-350m)")

# --- today's families: MLA, mixture-of-experts layers, windows, multi-token prediction ---
mla = switch("mla", r"\sigma_{MLA}", "1 for multi-head latent attention (DeepSeek-V2/V3): keys and values through a low-rank latent")
q_lora = switch("q_lora", r"\sigma_{r_Q}", "1 if MLA queries go through a low-rank latent too (q_lora_rank set; DeepSeek-V2-Lite: 0)")
r_q = switch("r_q", r"r_Q", "MLA query latent rank (q_lora_rank; 0 without one)", maximum=None)
r_kv = switch("r_kv", r"r_{KV}", "MLA key/value latent rank (kv_lora_rank; 0 without MLA)", maximum=None)
d_rope = switch("d_rope", r"d_{rope}", "MLA rotary part of a query/key head, shared by all heads for keys (qk_rope_head_dim)", maximum=None)
d_nope = switch("d_nope", r"d_{nope}", "MLA non-rotary part of a query/key head (qk_nope_head_dim)", maximum=None)
d_v = switch("d_v", r"d_{v}", "MLA value head width (v_head_dim)", maximum=None)
qk_norm = switch("qk_norm", r"\sigma_{qk}", "1 if queries and keys get an RMSNorm of width d_head each (Qwen3, Gemma-3, GLM-4.5)")
qk_norm_full = switch("qk_norm_full", r"\sigma_{qk,full}", "1 if queries and keys get an RMSNorm over all heads, a·d_head and g·d_head (OLMo-2)")
sink = switch("sink", r"\sigma_{sink}", "1 if each head has a learned attention-sink logit (gpt-oss)")
l_moe = switch("l_moe", r"l_{moe}", "layers whose MLP is a mixture of experts (0 for a dense model)", maximum=None)
d_moe = declare("d_moe", r"d_{moe}", "width of one routed expert (moe_intermediate_size; d_ff when the config has one width)", "1", integer=True, source=ARCH)
d_sh = switch("d_sh", r"d_{sh}", "total width of the shared experts of a MoE layer (0 without; DeepSeek n_shared·d_moe)", maximum=None)
sh_gate = switch("sh_gate", r"\sigma_{sh}", "1 if a sigmoid gate h→1 scales the shared expert (Qwen2-MoE)")
router_bias = switch("router_bias", r"\sigma_{b_{router}}", "1 if the router has a bias (gpt-oss)")
all_experts = switch("all_experts", r"\sigma_{all}", "1 if the implementation runs every expert on every token (Llama-4 in transformers 5.24)")
l_win = switch("l_win", r"l_{win}", "layers with a sliding window or attention chunks (the rest attend to the whole context)", maximum=None)
W = declare("W", "W", "attention window (sliding_window, or attention_chunk_size of chunked layers)", "1", integer=True, source=Source("jiang2023", "§2, sliding window W"))
n_mtp = switch("n_mtp", r"n_{MTP}", "multi-token-prediction modules (DeepSeek-V3: 1; not built by transformers)", maximum=None, source=Source("deepseek2024v3", "§2.2, D MTP modules"))
c_f = declare("c_f", r"c_f", "MoE capacity factor: an expert takes at most c_f·k·T/E tokens of T", "1", integer=False, source=Source("lepikhin2020", "§2.2, expert capacity"))
n_blk = declare("n_blk", r"n_{blk}", "tokens per block of a paged KV cache (vLLM: 16)", "1", integer=True, source=Source("kwon2023", "§4.2, KV blocks"))
n_sink = switch("n_sink", r"n_{sink}", "first tokens a windowed cache keeps as attention sinks (StreamingLLM: 4)", maximum=None, source=Source("xiao2023", "§3, sink tokens"))

# --- the performance model (formulas/performance.py) ------------------------------
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
flash = switch("flash", r"\sigma_{flash}", "1 when attention is one fused kernel (FlashAttention): no s² scores in HBM", source=Source("dao2023", "fused attention"))
seq_par = switch("seq_par", r"\sigma_{SP}", "1 with Megatron sequence parallelism: norms and dropouts on s/t tokens", source=Source("korthikanti2022", "§4.2.2, sequence parallelism"))
rc_full = switch("rc_full", r"\sigma_{full}", "1 with full activation recompute: each layer's forward runs again in the backward", source=Source("korthikanti2022", "§5, full recompute"))
rc_sel = switch("rc_sel", r"\sigma_{sel}", "1 with selective recompute: the attention core runs again in the backward", source=Source("korthikanti2022", "§5, selective recompute"))
piped = switch("piped", r"\sigma_{PP}", "1 when there is a pipeline (p > 1): activations cross stage boundaries", source=Source("narayanan2021", "§2.2, pipeline parallelism"))
tau_fwd = declare("tau_fwd", r"\tau_{fwd}", "one micro-batch's forward on one pipeline stage: what a prefetched gather hides under", "second", integer=False, source=Source("deepspeed", "stage3_prefetch_bucket_size"))
tau_bwd = declare("tau_bwd", r"\tau_{bwd}", "one micro-batch's backward on one pipeline stage: what bucketed collectives hide under", "second", integer=False, source=Source("li2020", "gradient bucketing"))
