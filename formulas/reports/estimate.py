"""The training and inference report for one model, GPU and parallel layout.

Every figure is a catalogue formula evaluated at the model's sizes, the GPU's
figures and the layout; nothing here is a formula of its own but the glue
(which variant applies, sums of the sections, the step time). The glue runs
on any evaluator: exact SymPy Rationals for ``llm-formulas estimate``, NumPy
arrays of layouts for sweeps and ``plan``.

Conventions (each stated in the report):
- activations in 16-bit (q = 2 bytes); the states at the bytes the framework keeps (``Framework.holds``,
  formulas/topics/framework_memory.py: ``memory.states.*`` at q_W, q_G, q_O; the default is a current Megatron Core job,
  bf16 weights and fp32 main gradients, 18 bytes per parameter, ZeRO 1 its distributed optimizer);
- the parameters a GPU holds are its stage's (``params.stage.*``): l/p mean layers with their projections split t
  ways and their norms, routers and MLA down projections whole, the embedding on the first stage, the head (or a
  tied model's copy), the final norm and the MTP modules on the last, the routed experts over t_E·e ranks and
  t·c·d/(t_E·e) replicas;
- activations are the stored tensors at the model's own block as the framework runs it: GQA heads of d_head or
  multi-head latent attention, a gated or ungated MLP of width d_ff, dropout masks only where the model trains with
  dropout (σ_drop), SwiGLU fused or not (σ_GLU) (``memory.activations.layer.decoder.*``), and for the l_moe
  mixture-of-experts layers their router, k dispatched copies per token, experts of width d_moe and shared experts
  (``memory.activations.layer.decoder.moe.*``); transformers' own modules for the FSDP and HF Trainer frameworks
  (``memory.activations.layer.transformers.*``, ``.amp.*``); a layer's bytes are the mean over the l layers
  (l_moe/l of them MoE); the first pipeline stage holds min(p, m) micro-batches of its l/p layers and of the
  embedding (1F1B), ×(1 + (p−1)/(p·v)) when interleaved; the last stage one micro-batch of its layers, the output
  layer and loss (``memory.activations.logits*``) and an MTP module's layer and loss; under recompute each stage also
  holds the one layer the backward rebuilds (no recompute's form less the stored one); the report's memory is the
  more loaded of the two ends (``memory.first_stage``, ``memory.last_stage``);
- TP traffic crosses the GPU's NVLink (PCIe without one) at half the preset's figure,
  which counts both directions while a ring sends and receives at once; PP and DP
  traffic crosses the inter-node network at ``network`` bytes/s per GPU each way;
- interleaving (v > 1) divides the bubble by v and multiplies the PP traffic by v;
- with U given (``--mfu``): a step is compute × (1 + bubble) plus the communication time (TP, PP and DP
  together) that exceeds the share r of the compute it can hide under;
- without it the step time is predicted (formulas/reports/prediction.py, formulas/topics/performance.py):
  per-layer times under the layout, blocking TP, PP p2p, the bubble, exposed DP/ZeRO time and
  the optimizer, with the GPU's calibrated constants; MFU and HFU are then outputs;
- full recompute re-runs the layers' forward, not the logits (as ``flops.megatron``);
- block recompute (``Layout.recompute_layers`` = k, Megatron-LM's ``--recompute-method block
  --recompute-num-layers k``): full recompute of k of each model chunk's l/(p·v) layers, the others store
  everything. A stage's memory, FLOPs and time are sums over its layers, so the report is full recompute's
  terms at the share k·p·v/l of the layers and no recompute's at the rest (σ_full = k·p·v/l in the
  performance model, whose stage sums are linear in it); PaLM's partial rematerialization
  (``utilization.hfu.remat``, f ≈ the share) is one such split;
- FLOP-based figures of a mixture-of-experts model (6ΨD, compute-bound decoding) use
  the active Ψ, byte-based ones (weights, states, memory-bound decoding) the total Ψ;
- the iterations are whole: ⌈D/(B·s)⌉;
- uneven stages (``Layout.stages``, one layout at a time): the first stage holds its own
  layers' (and, when it carries one, the embedding's) states and p micro-batches of its
  layers' activations; the last stage also computes the logits; the bubble, against the
  balanced compute, is ``pipeline.bubble.uneven`` (fill, drain and the slowest stage's
  excess, ``pipeline.step_factor``); predicted, each stage's micro-batch time is its own layers',
  logits (the last) and parameters' (``perf.pipeline.uneven``: m − 1 slots of the slowest, one of each).
- n = t·p·c·d: context parallelism (c) splits each sequence, its ranks hold the same weights and reduce
  gradients with the data-parallel ones; expert parallelism (e) spreads the experts over e of the d
  data-parallel ranks (``formulas/topics/parallelism.py``). Ranks are ordered t, c, e, d, p as in Megatron-LM:
  CP traffic crosses NVLink while t·c ≤ 8 GPUs, EP traffic while t·c·e ≤ 8, the network otherwise;
- ``precision = "fp8"`` adds the FP8 weight copies to the states and stores the GEMM inputs in FP8
  (``formulas/topics/precision.py``); the compute time still uses the GPU's 16-bit peak;
- LoRA/QLoRA (``lora``): the frozen base at q_base bytes per projection weight, fp32 adapters with their
  gradients and Adam states (ZeRO not applied), the adapters' saved products on top of the layer's
  activations, input gradients only for frozen weights, the adapters' gradients all-reduced;
- FlashAttention (``attention="flash"``) keeps no s² tensor (``memory.activations.layer.general.flash``):
  with it, no recompute and selective recompute store the same;
- a framework whose optimizer step holds more than its states (``Framework.step_states``: Megatron-LM 2021's fp32
  gradient copy, 20 bytes per parameter; ``Holdings.step``: DeepSpeed's fp32 gradient partition) peaks at the larger
  of the backward's memory and the step's, the activations freed by then; what a framework keeps all run long
  (``Framework.resident_states``: PyTorch DDP's buckets, ``memory.ddp.buckets``; DeepSpeed's bf16 fp32 gradients,
  ``memory.bf16.fp32_grads``) adds to both, and what it gathers for the passes (``Holdings.gathered``: ZeRO-3's
  module, FSDP's units, autocast's weight casts) to the backward's;
- decoding is the serving model's step at a context of s tokens (formulas/topics/serving.py: the weights once, the
  experts b tokens reach, the KV cache, the GEMMs and attention, per-layer costs, all-reduces); the p pipeline stages
  run in series, so a token's latency is the p stages' and a stage's is one of them; p batches in flight, one per stage.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, replace
from fractions import Fraction
from functools import cache
from typing import TYPE_CHECKING, Callable, Literal

from llm_formulas.formulas.data.frameworks import DEFAULT

if TYPE_CHECKING:  # SymPy is imported by the exact path only: plan and sweep run on NumPy alone
    import sympy as sp

Recompute = Literal["none", "selective", "full"]
Precision = Literal["bf16", "fp8"]
RECOMPUTE_MODES: tuple[str, ...] = ("none", "selective", "full")
ATTENTION_KERNELS: tuple[str, ...] = ("eager", "flash")  # flash: FlashAttention keeps no s² tensor (Dao et al. 2022)
Q_16BIT = 2  # bytes per 16-bit value
SECONDS_PER_DAY = 86400
SECONDS_PER_HOUR = 3600
TOKENS_PER_PARAMETER = 20  # the default D: Hoffmann et al. 2022 (Chinchilla), about 20 tokens per parameter


class LayoutError(ValueError):
    """A layout that cannot exist; the message names the rule it breaks."""


@dataclass(frozen=True)
class Layout:
    """One parallel layout: n GPUs as t·p·d, micro-batch b, m micro-batches, s tokens, v chunks, and the settings."""

    n: int
    t: int
    p: int
    d: int
    b: int
    m: int
    s: int
    v: int = 1
    zero: int = 0
    recompute: Recompute = "selective"
    sequence_parallel: bool = False
    stages: tuple[int, ...] | None = None  # layers per pipeline stage, first to last (None: l/p each)
    embedding_stages: tuple[int, ...] = ()  # indices of the stages that hold the (tied) embedding matrix
    attention: str = "eager"
    e: int = 1  # expert parallel degree, taken from the d data-parallel ranks
    c: int = 1  # context parallel degree: n = t·p·c·d
    recompute_layers: int | None = None  # with full recompute: the layers of each model chunk recomputed (None: all)
    expert_tp: int | None = None  # t_E, the ranks one expert's width is split over (None: t, Megatron Core's default)

    @property
    def global_batch(self) -> int:
        return self.b * self.m * self.d


def bubble_note(p: int, m: int, v: int = 1) -> str | None:
    """A warning, in words, when the pipeline has fewer micro-batches than stages (m < p): the bubble
    (p − 1)/(v·m) (``cluster.bubble``, Narayanan et al. 2021 §2.2) is then at least (p − 1)/p of the compute, and
    the step it prices is mostly idle; None otherwise."""
    if p <= 1 or m >= p:
        return None
    share = Fraction(p - 1, v * m)
    return (f"m = {m} micro-batch{'es' if m > 1 else ''} < p = {p} stages: the pipeline bubble (p−1)/(v·m) = "
            f"{float(share) * 100:.0f} % of the compute dominates the step; give more micro-batches (m ≥ p)")


def layout_violation(layout: Layout, model: dict[str, int]) -> str | None:
    """The first rule the layout breaks, in words, or None: the one statement of the rules
    (``check_layout`` raises it, ``plan`` keeps the layouts that break none)."""
    t, p, d, n, e, c = layout.t, layout.p, layout.d, layout.n, layout.e, layout.c
    if c == 1 and t * p * d != n:
        return f"t·p·d must equal n: {t}·{p}·{d} = {t * p * d}, n = {n}"
    if t * p * c * d != n:
        return f"t·p·c·d must equal n: {t}·{p}·{c}·{d} = {t * p * c * d}, n = {n}"
    if e > 1 and not model.get("l_moe"):
        return f"expert parallelism (e = {e}) needs a mixture-of-experts model"
    if model["E"] % e:
        return f"e = {e} must divide the {model['E']} experts"
    if d % e:
        return f"e = {e} must divide the data-parallel degree d = {d} (expert-parallel ranks are data-parallel ranks)"
    if layout.s % c:
        return f"c = {c} must divide the sequence length s = {layout.s}"
    if model["a"] % t:
        return f"t = {t} must divide the {model['a']} attention heads"
    if model["g"] % t:
        return f"t = {t} must divide the {model['g']} key/value heads"
    if layout.stages is not None:
        stage_rule = stage_violation(layout, model["l"])
        if stage_rule is not None:
            return stage_rule
    elif model["l"] % (p * layout.v):
        return f"p·v = {p * layout.v} must divide the {model['l']} layers"
    if layout.zero not in (0, 1, 2, 3):
        return f"ZeRO stage must be 0, 1, 2 or 3, got {layout.zero}"
    if layout.attention not in ATTENTION_KERNELS:
        return f"attention must be one of {', '.join(ATTENTION_KERNELS)}, got {layout.attention!r}"
    if layout.recompute not in RECOMPUTE_MODES:
        return f"recompute must be one of {', '.join(RECOMPUTE_MODES)}, got {layout.recompute!r}"
    if layout.recompute_layers is not None:
        block_rule = block_recompute_violation(layout, model["l"])
        if block_rule is not None:
            return block_rule
    if layout.expert_tp is not None:
        if t % layout.expert_tp:
            return f"the expert tensor-parallel degree t_E = {layout.expert_tp} must divide t = {t}"
        if layout.expert_tp != t and not layout.sequence_parallel:
            return f"expert tensor parallelism t_E = {layout.expert_tp} ≠ t needs sequence parallelism (Megatron Core's MoE dispatcher)"
    if layout.v > 1 and (p == 1 or layout.m % p):
        return f"interleaving (v = {layout.v}) needs p > 1 and m a multiple of p (m = {layout.m}, p = {p})"
    return None


def stage_violation(layout: Layout, layers: int) -> str | None:
    """The first rule an explicit stage partition breaks, or None."""
    stages = layout.stages
    if len(stages) != layout.p:
        return f"{len(stages)} stages given for p = {layout.p}"
    for index, count in enumerate(stages, start=1):
        if count < 1:
            return f"stage {index} of the partition is empty"
    if sum(stages) != layers:
        return f"the stages hold {sum(stages)} layers, the model has {layers}"
    if layout.v != 1:
        return "an explicit stage partition cannot be interleaved (v must be 1)"
    if any(not 0 <= index < layout.p for index in layout.embedding_stages):
        return f"embedding stages must be among the {layout.p} stages"
    return None


def block_recompute_violation(layout: Layout, layers: int) -> str | None:
    """The first rule block recompute (k recomputed layers per model chunk) breaks, or None."""
    k = layout.recompute_layers
    if layout.recompute != "full":
        return f"recomputing {k} layers per chunk is block recompute: it needs recompute full, not {layout.recompute}"
    if layout.stages is not None:
        return "block recompute is modelled on even stages only: give --stages or --recompute-layers, not both"
    per_chunk = layers // (layout.p * layout.v)
    if not 0 <= k <= per_chunk:
        return f"the layers recomputed per chunk must be between 0 and the {per_chunk} layers of a chunk, got {k}"
    return None


def unpredicted(layout: Layout, inputs: Inputs) -> str | None:
    """Why the performance model cannot time this case (it models bf16 full training on t·p·d GPUs), or None:
    such a case needs an assumed utilization (``--mfu``)."""
    if inputs.utilization is not None:
        return None
    features = [name for name, used in (("expert parallelism", layout.e > 1), ("context parallelism", layout.c > 1),
                                        ("FP8", inputs.precision == "fp8"), ("LoRA", inputs.lora is not None)) if used]
    if not features:
        return None
    return f"the performance model does not time {' or '.join(features)} yet: give --mfu U"


# Layer kinds the report's activation, traffic and time forms do not price (they model attention-and-MLP layers)
UNPRICED_LAYERS = (("l_mamba", "Mamba"), ("l_ssd", "Mamba-2"), ("l_lru", "RG-LRU"), ("l_gdn", "gated delta-net"),
                   ("l_noattn", "mixer-less"), ("l_nomlp", "MLP-less"))
UNPRICED_BLOCKS = (("x_attn", "cross-attention"), ("attn_gate", "an attention output gate"),
                   ("dsa", "DeepSeek sparse attention (its top-k selection)"))


def unpriced(model: dict[str, int]) -> str | None:
    """Why the report cannot price this model, or None: its stage parameters cover every layer kind
    (``params.stage.*``), but the activations (``memory.activations.layer.*``), the TP traffic and the step times are
    forms of attention-and-MLP (or MoE) layers, so a recurrent or a mixer- or MLP-less layer, a cross-attention or an
    attention output gate would be priced as another block."""
    parts = [f"{model[key]} {name} layers" for key, name in UNPRICED_LAYERS if model.get(key)]
    parts += [name for key, name in UNPRICED_BLOCKS if model.get(key)]
    if not parts:
        return None
    return ("the training report prices attention-and-MLP decoder layers only (their activations, TP traffic and "
            f"step times): this model has {' and '.join(parts)}")


def check_layout(layout: Layout, model: dict[str, int]) -> None:
    """Raise LayoutError naming the first rule the layout breaks."""
    violation = layout_violation(layout, model)
    if violation is not None:
        raise LayoutError(violation)


Evaluator = Callable[..., object]


@dataclass(frozen=True)
class Ops:
    """The glue's choices, branch-free: ``where(cond, x, y)``, elementwise ``minimum``/``maximum``,
    ``number`` (a count as the evaluator's number: an exact Integer, or a float64 array), and
    ``choose(key, {value: thunk})``, the value of the thunk the key names (element by element
    when the key is an array: a categorical setting that picks a formula id)."""

    where: Callable
    minimum: Callable
    maximum: Callable
    number: Callable
    choose: Callable
    ceiling: Callable


@cache
def exact_ops() -> Ops:
    """The exact evaluator's choices: SymPy's Min, Max, Integer and ceiling (imported here, not at start-up)."""
    import sympy as sp

    return Ops(where=lambda cond, x, y: x if cond else y, minimum=sp.Min, maximum=sp.Max, number=sp.Integer,
               choose=lambda key, options: options[key](), ceiling=sp.ceiling)


def __getattr__(name: str) -> object:
    """``EXACT_OPS``, built on first use (PEP 562) so that importing this module imports no SymPy."""
    if name == "EXACT_OPS":
        return exact_ops()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _is_sympy(value: object, kind: str) -> bool:
    """Whether ``value`` is an instance of (or, for a callable, is) SymPy's ``kind``, without importing SymPy:
    a value cannot be SymPy's unless SymPy is loaded."""
    sympy = sys.modules.get("sympy")
    if sympy is None:
        return False
    target = getattr(sympy, kind)
    return value is target or (isinstance(target, type) and isinstance(value, target))


@cache
def _exact_function(formula_id: str) -> tuple[tuple[sp.Symbol, ...], sp.Expr]:
    from llm_formulas.formulas.vocabulary.catalogue import get

    expr = get(formula_id).expr
    return tuple(sorted(expr.free_symbols, key=lambda s: s.name)), expr


def exact(formula_id: str, **values: object) -> sp.Rational:
    """Evaluate a formula exactly; values of other declared symbols are ignored (the report passes one dict to every
    formula), a name no symbol has is an error (a typo), and so is a missing value (unless a switch set to 0
    removes its term, as pos_table = 0 removes n_pos)."""
    import sympy as sp

    from llm_formulas.formulas.vocabulary.expressions import as_expression
    from llm_formulas.formulas.vocabulary.symbols import is_declared

    unknown = [name for name in values if not is_declared(name)]
    if unknown:
        raise KeyError(f"{formula_id}: no symbol is named {', '.join(repr(name) for name in unknown)}")
    symbols, expr = _exact_function(formula_id)
    result = expr.xreplace({s: as_expression(values[s.name]) for s in symbols if s.name in values})
    if result.free_symbols:
        raise KeyError(f"{formula_id} needs {', '.join(sorted(s.name for s in result.free_symbols))}")
    return result


@dataclass(frozen=True)
class Inputs:
    """Everything the report reads besides the layout (values by symbol name)."""

    model: dict[str, int]  # architecture sizes and switches
    gpu: dict[str, object]  # X, W_mem, W_link, M_gpu
    network: object  # inter-node bytes/s per GPU
    tokens: object | None  # D; None: TOKENS_PER_PARAMETER per parameter
    utilization: object | None  # U; None: predicted by the performance model (formulas/reports/prediction.py)
    overlap: object  # r
    precision: Precision = "bf16"  # "fp8": formulas/topics/precision.py's FP8 recipe
    lora: dict[str, object] | None = None  # LoRA/QLoRA: r_lora, the lora_* switches and q_base (formulas/topics/precision.py)
    efficiency: object | None = None  # formulas.data.calibration.Efficiency, needed when utilization is None
    node_size: int = 8  # GPUs one node's NVLink joins
    flash: bool = False  # fused (Flash) attention in the performance model
    framework: object | None = None  # formulas.data.frameworks.Framework: what the implementation overlaps (None: the default)


def exact_inputs(inputs: Inputs) -> Inputs:
    """The same inputs with each Fraction (what the command line's readers give, without SymPy) an exact SymPy
    Rational: the GPU's figures, the network, tokens, utilization, overlap and the performance constants."""
    import sympy as sp

    def exact(value: object) -> object:
        return sp.Rational(value) if isinstance(value, Fraction) else value

    constants = inputs.efficiency
    if constants is not None:
        constants = replace(constants, **{name: exact(getattr(constants, name)) for name in ("eta_gemm", "eta_mem", "tau_k", "eta_link")})
    return replace(inputs, gpu={name: exact(value) for name, value in inputs.gpu.items()}, network=exact(inputs.network),
                   tokens=exact(inputs.tokens), utilization=exact(inputs.utilization), overlap=exact(inputs.overlap),
                   efficiency=constants)


def estimate(layout: Layout, inputs: Inputs, ev: Evaluator = exact, ops: Ops | None = None) -> dict:
    """The report as nested sections of numbers (exact or arrays, by evaluator).

    With ``ev = exact`` and the exact ops every figure is an exact Rational. With a NumPy
    evaluator and NumPy ops every field of ``layout`` may be an array (one shape): the
    counts enter the formulas, the settings (ZeRO stage, recompute mode as an index into
    RECOMPUTE_MODES, sequence parallelism) pick formula ids element by element; no loop
    per layout. ``ops`` None: the exact choices (``exact_ops``).
    """
    ops = exact_ops() if ops is None else ops
    n, t, p, d, b, m, s, v = (ops.number(x) for x in (layout.n, layout.t, layout.p, layout.d, layout.b, layout.m, layout.s, layout.v))
    e, c = ops.number(layout.e), ops.number(layout.c)
    model = inputs.model
    layers = ops.number(model["l"])
    base = dict(model) | dict(inputs.gpu) | {"t": t, "p": p, "d": d, "m": m, "s": s, "v": v, "n": n, "q": Q_16BIT,
                                              "q_w": Q_16BIT, "r": inputs.overlap, "e": e, "c": c}
    B = b * m * d
    tensor, pipeline, data, interleaved = t > 1, p > 1, d > 1, v > 1

    total = ev("params.decoder.total", **base)
    active = ev("params.decoder.active", **base)
    tokens = TOKENS_PER_PARAMETER * total if inputs.tokens is None else inputs.tokens
    base |= {"P": total, "D": tokens}
    base |= {"P_exp": ev("params.ep.experts", **base)}  # what expert parallelism shards (0 when dense)
    lora = inputs.lora is not None
    if lora:  # the frozen base at q_base bytes (16-bit Ψ_16 aside), the adapters trained
        base |= dict(inputs.lora)
        base |= {"P_lora": ev("params.lora.total", **base), "P_keep": ev("params.quantized.kept", **base)}

    flops_of = {"forward": "flops.lora.forward", "backward": "flops.lora.backward"} if lora else \
        {"forward": "flops.decoder.forward", "backward": "flops.decoder.backward"}
    forward = ev(flops_of["forward"], **(base | {"b": B}))
    backward = ev(flops_of["backward"], **(base | {"b": B}))
    training = forward + backward
    mode = _recompute_code(layout.recompute)
    share = 1 if layout.recompute_layers is None else ops.number(layout.recompute_layers) * p * v / layers  # of full recompute
    recomputed = ops.choose(mode, {
        0: lambda: 0 * forward,  # none
        1: lambda: layers * ev("flops.decoder.attention.scores", **(base | {"b": B})),  # selective
        2: lambda: share * ev("flops.decoder.layers.forward", **(base | {"b": B})),  # full: the layers, not the logits
    })

    framework = inputs.framework or DEFAULT
    holds = framework.holds
    base |= holds.switches() | {"t_e": t if layout.expert_tp is None else ops.number(layout.expert_tp),
                                "piped": ops.where(pipeline, 1, 0), "drop": model.get("drop", 1)}
    if not holds.mtp:  # the multi-token-prediction modules exist only where the framework builds them
        base["n_mtp"] = 0
    fp8 = inputs.precision == "fp8"
    chunk = base | {"b": b, "s": s / c}  # the rank's tokens

    def activation_of(mode: object) -> object:
        return _activation_index(mode, layout.sequence_parallel, _flash(layout.attention), ops)

    layer_values = base | {"b": b}
    forms: dict[tuple[str, bool], object] = {}  # each activation form evaluated once: per_layer, rebuilt, MTP share them

    def layer_activations(mode: object) -> object:
        """Bytes one layer stores under that recompute mode."""
        if holds.blocks != "megatron":  # transformers' own modules (dense, one GPU)
            return _transformers_layer(mode, holds.blocks, layout.attention, layer_values, ev, ops)
        stored = _per_layer_activations(activation_of(mode), layer_values, ev, ops, forms=forms)
        if fp8:  # the four GEMM inputs saved in FP8, unless the layer is recomputed in full
            saving = ops.where(layout.sequence_parallel, ev("memory.fp8.activations.saving_sp", **chunk),
                               ev("memory.fp8.activations.saving", **chunk))
            stored = stored - ops.choose(mode, {0: lambda: saving, 1: lambda: saving, 2: lambda: 0 * saving})
        if lora:
            stored = stored + ev("memory.lora.activations.layer", **chunk)
        return stored

    activation = activation_of(mode)
    per_layer = layer_activations(mode)
    # the one layer being rebuilt in the backward holds what recompute dropped (full: all of it; selective: the core)
    rebuilt = layer_activations(0) - per_layer
    if layout.recompute_layers is not None:  # block recompute: the share of the layers recomputed in full, the rest none
        rebuilt = ops.where(layout.recompute_layers > 0, rebuilt, 0 * rebuilt)
        per_layer = share * per_layer + (1 - share) * layer_activations(0)
    # an MTP module (the last stage) holds one more MoE layer and its own output layer and loss
    mtp_layer = 0 if not holds.mtp or _is_zero(base["n_mtp"]) else \
        _per_layer_activations(activation, layer_values, ev, ops, moe_only=True, forms=forms)
    memory, held = _memory(layout, base | {"b": b}, inputs, framework, per_layer, rebuilt, mtp_layer, ev, ops)
    capacity = inputs.gpu["M_gpu"]
    bubble = ops.where(interleaved, ev("cluster.bubble.interleaved", **base), ev("cluster.bubble", **base))
    stages = None
    if layout.stages is not None:  # one exact layout: the slowest stage's time
        stages = _uneven_stages(layout, base | {"b": b}, ev)
        bubble = stages["bubble"]  # against the balanced compute: fill, drain and the slowest stage's excess
    comms = _comms(layout, base, ev, ops)
    nvlink = inputs.gpu["W_link"] / 2
    link = {"tp": nvlink, "pp": inputs.network, "dp": inputs.network,  # bytes/s one way
            "cp": ops.where(t * c <= inputs.node_size, nvlink, inputs.network),  # ranks ordered t, c, e, d (Megatron)
            "ep": ops.where(t * c * e <= inputs.node_size, nvlink, inputs.network)}
    comm_time = {dim: comms[dim] / link[dim] for dim in comms}
    if inputs.utilization is None:  # predicted: the performance model, where each group sits
        from llm_formulas.formulas.reports.prediction import predict

        uneven = None if layout.stages is None else [
            (count, params, index == len(layout.stages) - 1)
            for index, (count, (params, _)) in enumerate(zip(layout.stages, _stage_parameters(layout, base, ev)))]
        predicted = predict(base | {"b": b}, {"t": t, "p": p, "d": d, "m": m, "v": v, "n": n, "b": b},
                            {"zero": layout.zero, "recompute": mode, "sequence_parallel": layout.sequence_parallel,
                             "recompute_share": share},
                            inputs.efficiency, inputs.network, inputs.node_size, inputs.flash,
                            {"training": training, "recomputed": recomputed}, ev, ops, inputs.framework, uneven)
        step_time, compute_time = predicted["step_seconds"], predicted["compute_seconds"]
        bubble_time = predicted["bubble_seconds"]
        exposed = predicted["tp_seconds"] + predicted["pp_seconds"] + predicted["dp_exposed_seconds"]
        utilization, hardware = predicted["mfu"], predicted["hfu"]
    else:
        compute_time = (training + recomputed) / (n * inputs.gpu["X"] * inputs.utilization)
        exposed = ops.maximum(sum(comm_time.values()) - inputs.overlap * compute_time, 0)  # one overlap budget for all
        bubble_time = compute_time * bubble
        step_time = compute_time + bubble_time + exposed
        utilization, hardware = inputs.utilization, inputs.utilization * (training + recomputed) / training
        predicted = None
        if stages is not None:  # the slowest stage paces the pipeline: m + p − 1 of its slots
            bubble_time = compute_time * bubble
            step_time = compute_time + bubble_time + exposed
    base |= {"U": utilization}  # the required bandwidths divide compute at this U
    iterations = ops.ceiling(tokens / (B * s))

    report = {
        "params": {"total": total, "active": active, "per_gpu": held["dense"] + held["experts"], "experts": base["P_exp"],
                   "trainable": base["P_lora"] if lora else total,
                   # the parameters the first stage's GPU holds between uses: ZeRO-3 shards them over the c·d replicas
                   # (the experts over their t·c·d/(t_E·e) expert-data-parallel replicas)
                   "per_gpu_stored": ops.choose(layout.zero, {stage: (lambda stage=stage: held["dense"] / (c * d) + held["experts"]
                                                                      / held["expert_replicas"] if stage == 3 else
                                                                      held["dense"] + held["experts"]) for stage in range(4)})},
        "flops": {
            "forward": forward,
            "backward": backward,
            "training": training,
            "recomputed": recomputed,
            "per_token": training / (B * s),
        },
        "memory": memory | {
            "capacity": capacity,
            "left": capacity - memory["total"],
            "fits": memory["total"] <= capacity,
            "activation_formula": _activation_label(activation, base, ops, holds.blocks, layout.attention)
            if layout.recompute_layers is None else
            f"{_activation_label(activation, base, ops, holds.blocks, layout.attention)} for {layout.recompute_layers} "
            f"layers per chunk, {_activation_label(activation_of(0), base, ops, holds.blocks, layout.attention)} for the others",
        },
        "comms": {
            "bytes": comms,
            "required_bandwidth": {
                "tp": ops.where(tensor, ev("comms.bandwidth.tp", **base), 0),
                "pp": ops.where(pipeline, ev("comms.bandwidth.pp", **base), 0),
                "dp": ops.where(data, ev("comms.bandwidth.dp", **(base | {"B": B})), 0),
            },
            "link_bandwidth": link,
            "seconds": comm_time,
        },
        "time": {
            "mode": "given" if predicted is None else "predicted",
            "mfu": utilization,
            "hfu": hardware,
            "bubble": bubble,
            "compute_seconds": compute_time,
            "bubble_seconds": bubble_time,
            "exposed_comm_seconds": exposed,
            "step_seconds": step_time,
            "tokens": tokens,
            "iterations": iterations,
            "training_days": iterations * step_time / SECONDS_PER_DAY,
            "ideal_days": ev("cluster.training_time", **(base | {"P": active})) / SECONDS_PER_DAY,  # 6ΨD: Ψ a token uses
            "gpu_hours": n * iterations * step_time / SECONDS_PER_HOUR,
            "tokens_per_gpu_second": B * s / (n * step_time),
            # what the whole step achieves, bubble and exposed communication included (= mfu when predicted)
            "step_mfu": training / (n * inputs.gpu["X"] * step_time),
        } | ({} if predicted is None else {"predicted": predicted}),
        "inference": _inference(base, b, active, inputs, ev, ops),
    }
    if stages is not None:
        report["pipeline"] = stages
    return report


def _stage_parameters(layout: Layout, base: dict, ev: Evaluator) -> list[tuple[object, object]]:
    """Each stage's parameters and, of them, the experts: its layers' (a dense layer exactly params.decoder.layer; an MoE
    model's stage its share of the mean layer, where the MoE layers sit not being in the model's values) and the
    embedding matrix on the stages that hold it."""
    embedding = base["V"] * base["d_emb"]
    layers = sum(layout.stages)
    if base.get("l_moe"):  # every matrix but the embeddings is a layer's
        per_layer, experts = (base["P"] - embedding * (2 - base["tied"])) / layers, base["P_exp"] / layers
    else:
        per_layer, experts = ev("params.decoder.layer", **base), 0
    return [(count * per_layer + (embedding if index in layout.embedding_stages else 0), count * experts)
            for index, count in enumerate(layout.stages)]


def _uneven_stages(layout: Layout, base: dict, ev: Evaluator) -> dict:
    """Per-stage work (layer-forwards, the logits on the last stage), the first stage's parameters, pace and bubble."""
    one = base | {"b": 1}  # FLOPs are linear in b: the ratio is one number, also when plan passes b as an array
    logits = ev("flops.decoder.logits", **one) / ev("flops.decoder.layer.forward", **one)
    last = len(layout.stages) - 1
    work = [count + (logits if index == last else 0) for index, count in enumerate(layout.stages)]
    slowest, total = max(work), sum(work)
    (first_params, first_experts), *_ = _stage_parameters(layout, base, ev)
    pace = {"w_max": slowest, "w_tot": total}
    return {
        "stages": list(layout.stages),
        "embedding_stages": [index + 1 for index in layout.embedding_stages],
        "stage_work": work,
        "slowest_stage": work.index(slowest) + 1,
        "first_stage_params": first_params,
        "first_stage_experts": first_experts,
        "step_factor": ev("pipeline.step_factor", **(base | pace)),
        "bubble": ev("pipeline.bubble.uneven", **(base | pace)),
    }


DECODER_ACTIVATION_FORMULAS = (  # per-layer bytes by recompute mode and sequence parallelism, for a dense layer of any
    "memory.activations.layer.decoder.tp",  # attention (GQA or MLA) at the model's sizes and the framework's switches
    "memory.activations.layer.decoder.tp_sp",
    "memory.activations.layer.decoder.selective",
    "memory.activations.layer.decoder.selective_sp",
    "memory.activations.layer.full_recompute",
    "memory.activations.layer.full_recompute_sp",
    "memory.activations.layer.decoder.flash",
    "memory.activations.layer.decoder.flash_sp",
)
MOE_ACTIVATION_FORMULAS = (  # and for a mixture-of-experts layer (router, k copies per token, experts, shared experts)
    "memory.activations.layer.decoder.moe.tp",
    "memory.activations.layer.decoder.moe.tp_sp",
    "memory.activations.layer.decoder.moe.selective",
    "memory.activations.layer.decoder.moe.selective_sp",
    "memory.activations.layer.full_recompute",
    "memory.activations.layer.full_recompute_sp",
    "memory.activations.layer.decoder.moe.flash",
    "memory.activations.layer.decoder.moe.flash_sp",
)
FLASH_AT = (6, 7, 6, 7, 4, 5, 6, 7)  # under context parallelism: the flash form (or full recompute) of the same SP choice
HF_FORMULAS = {"transformers": "memory.activations.layer.transformers", "amp": "memory.activations.layer.amp"}


def _per_layer_activations(activation: object, values: dict, ev: Evaluator, ops: Ops, moe_only: bool = False,
                           forms: dict[tuple[str, bool], object] | None = None) -> object:
    """Bytes one layer stores, on average over the model's l layers: the l − l_moe dense layers'
    (``memory.activations.layer.decoder.*``, GQA or latent attention, which at σ_drop = 1, σ_GLU = 0 and mla = 0 is
    ``memory.activations.layer.general.*``) and the l_moe MoE layers' own forms
    (``memory.activations.layer.decoder.moe.*``), l_moe/l of them MoE. Under context parallelism (c > 1) a layer is
    its flash form (or full recompute) at the rank's s/c tokens. ``moe_only``: the MoE layer's alone (an MTP module's).
    ``forms``: the forms evaluated so far at these ``values`` (a form two recompute modes share is evaluated once)."""
    c = values["c"]
    chunk = values | {"s": values["s"] / c}
    forms = {} if forms is None else forms

    def form(formula: str, at_chunk: bool) -> object:
        if (formula, at_chunk) not in forms:
            forms[formula, at_chunk] = ev(formula, **(chunk if at_chunk else values))
        return forms[formula, at_chunk]

    def pick(formulas: tuple[str, ...]) -> object:
        return ops.where(
            c > 1,
            ops.choose(activation, {i: (lambda f=formulas[FLASH_AT[i]]: form(f, True)) for i in range(len(formulas))}),
            ops.choose(activation, {i: (lambda f=f: form(f, False)) for i, f in enumerate(formulas)}),
        )

    if moe_only:
        return pick(MOE_ACTIVATION_FORMULAS)
    dense = pick(DECODER_ACTIVATION_FORMULAS)
    if _is_zero(values["l_moe"]):  # a dense model: the mean below is the dense form, its MoE forms need no evaluating
        return dense
    moe = pick(MOE_ACTIVATION_FORMULAS)
    return dense + ops.number(values["l_moe"]) / ops.number(values["l"]) * (moe - dense)


def _is_zero(value: object) -> bool:
    """Whether ``value`` is 0: an int, a float or an exact zero, or a NumPy array of zeros (never a symbol)."""
    if isinstance(value, (int, float)):
        return value == 0
    if _is_sympy(value, "Basic"):
        return value.is_zero is True and value.is_Number
    any_nonzero = getattr(value, "any", None)  # a NumPy array
    return callable(any_nonzero) and not any_nonzero()


def _activation_label(activation: object, values: dict, ops: Ops, blocks: str = "megatron", attention: str = "eager") -> object:
    """The formula ids ``_per_layer_activations`` (or the transformers forms) used (None when the model is symbolic:
    the sizing page)."""
    moe_layers, layers = values["l_moe"], values["l"]
    if any(_is_sympy(x, "Basic") and not x.is_Number for x in (moe_layers, layers)):
        return None
    if blocks != "megatron":
        full = "memory.activations.layer.amp.full_recompute" if blocks == "amp" else "memory.activations.layer.full_recompute"
        core = f"{HF_FORMULAS[blocks]}.{'sdpa' if attention == 'flash' else 'eager'}"
        return ops.choose(activation, {i: (lambda i=i: full if i in (4, 5) else core) for i in range(8)})
    c = values["c"]

    def label(i: int, at_c: bool) -> str:
        index, tokens = (FLASH_AT[i], " at s/c") if at_c else (i, "")
        dense, moe = DECODER_ACTIVATION_FORMULAS[index] + tokens, MOE_ACTIVATION_FORMULAS[index] + tokens
        if not moe_layers:
            return dense
        if moe_layers == layers:
            return moe
        return f"{moe} ({moe_layers} MoE layers) + {dense} ({layers - moe_layers} dense)"

    return ops.where(c > 1, ops.choose(activation, {i: (lambda i=i: label(i, True)) for i in range(8)}),
                     ops.choose(activation, {i: (lambda i=i: label(i, False)) for i in range(8)}))


def _stage_held(layout: Layout, base: dict, ev: Evaluator, ops: Ops) -> dict[str, object]:
    """The parameters one GPU of the first and of the last pipeline stage holds, dense and routed experts apart
    (``params.stage.*``: TP splits the projections and the vocabulary, keeps the norms, router and MLA's down
    projections whole; the first stage holds the embedding, the last the head or a tied model's copy of it, the final
    norm and the MTP modules). An explicit partition puts its own layer counts on the two ends, the embedding and the
    head where ``embedding_stages`` says."""
    experts, mtp = ev("params.stage.layers.experts", **base), ev("params.stage.mtp.experts", **base)
    if layout.stages is None:
        return {"first": ev("params.stage.first", **base), "last": ev("params.stage.last", **base),
                "first_experts": experts + (1 - base["piped"]) * mtp, "last_experts": experts + mtp}
    layers, last = sum(layout.stages), len(layout.stages) - 1
    piped = base | {"piped": 1}
    own_layers = ev("params.stage.layers", **base)
    embedding = ev("params.stage.first", **piped) - own_layers  # the embedding's 1/t and the position table
    tail = ev("params.stage.last", **base) - own_layers  # the head's 1/t (or the tied copy), the final norm, the MTP modules
    held = {}
    for end, count, extra in (("first", layout.stages[0], embedding if 0 in layout.embedding_stages else 0),
                              ("last", layout.stages[-1], tail if last in layout.embedding_stages else 0)):
        at = base | {"p": ops.number(layers) / count}  # l/p: the stage's own layers
        held[end] = ev("params.stage.layers", **at) + extra
        held[f"{end}_experts"] = ev("params.stage.layers.experts", **at) + (mtp if end == "last" else 0)
    return held


def _states(zero: object, dense: object, experts: object, base: dict, formulas: tuple[str, ...], ev: Evaluator,
            ops: Ops, **widths: object) -> object:
    """A GPU's model states: the dense parameters partitioned over the c·d data-parallel replicas, the experts over
    their t·c·d/(t_E·e) (Megatron's expert data-parallel size), at the framework's bytes unless ``widths`` say others."""
    values = base | widths
    replicas = {"dense": (dense, base["c"] * base["d"]),
                "experts": (experts, base["t"] * base["c"] * base["d"] / (base["t_e"] * base["e"]))}
    if _is_zero(experts):  # a dense model: every states formula is proportional to Ψ (tests/test_numeric.py), so 0
        del replicas["experts"]
    return sum(ops.choose(zero, {stage: (lambda f=formulas[stage], held=held, over=over: ev(f, **(values | {"P": held, "d": over})))
                                 for stage in range(len(formulas))})
               for held, over in replicas.values())


def _memory(layout: Layout, base: dict, inputs: Inputs, framework: object, per_layer: object, rebuilt: object,
            mtp_layer: object, ev: Evaluator, ops: Ops) -> tuple[dict, dict]:
    """Memory of the first and the last pipeline stage's GPU, and the larger of the two.

    States: ``_states`` of each end's parameters (``_stage_held``) at the framework's bytes (``Holdings``), with what it
    keeps all run long (``Framework.resident_states``: DDP's buckets, DeepSpeed's bf16 fp32 gradients). Activations:
    the first stage holds min(p, m) micro-batches of its layers and of the embedding (×(1 + (p−1)/(p·v)) interleaved),
    the last one micro-batch of its layers (interleaved: (v−1)·p + 1 chunks of l/(p·v)) and the output layer and loss;
    each stage also holds the one layer the backward rebuilds (``rebuilt``), the last each MTP module's MoE layer
    (``mtp_layer``) and output layer and loss (its 2h-wide projection input is left out), and what the framework gathers for the
    passes (ZeRO-3's or FSDP's units, autocast's weight casts). The optimizer step's peak (``Framework.step_states``,
    ``Holdings.step``) replaces the activations by its own buffers."""
    holds = framework.holds
    t, p, d, m, v, c = (base[name] for name in ("t", "p", "d", "m", "v", "c"))
    zero, lora = layout.zero, inputs.lora is not None
    held = _stage_held(layout, base, ev, ops)
    expert_replicas = t * c * d / (base["t_e"] * base["e"])
    sp_on = layout.sequence_parallel
    hf = holds.blocks != "megatron"
    tokens = base | {"s": base["s"] / c}  # the rank's s/c tokens under context parallelism
    if hf:  # transformers' head and loss; its embedding keeps the ids only (no dropout in the Llama family)
        logits = ev(f"memory.activations.logits.{'amp' if holds.blocks == 'amp' else 'transformers'}", **tokens)
        embedding = ev("memory.activations.embedding", **(tokens | {"drop": 0}))
    else:
        logits = ops.where(sp_on, ev("memory.activations.logits_sp", **tokens), ev("memory.activations.logits", **tokens))
        embedding = ops.where(sp_on, ev("memory.activations.embedding_sp", **tokens), ev("memory.activations.embedding", **tokens))
    in_flight = ops.minimum(p, m)
    interleave = 1 + ops.where(v > 1, (p - 1) / (p * v), 0)
    piped = p > 1
    if layout.stages is None:
        first_layers, last_layers = base["l"] / p, ((v - 1) * p + 1) * base["l"] / (p * v)
    else:  # an explicit partition: the token ids only where the embedding is
        first_layers, last_layers = layout.stages[0], layout.stages[-1]
        embedding = embedding if 0 in layout.embedding_stages else 0 * embedding
    stages = {}
    for end in ("first", "last"):
        dense, experts = held[end], held[f"{end}_experts"]
        own = base | {"P": dense + experts}
        if lora:  # frozen base and fp32 adapters; ZeRO does not apply to a frozen base here
            states = ev("memory.lora.states.per_gpu", **base)
        else:
            states = _states(zero, dense, experts, base, holds.states, ev, ops)
        if inputs.precision == "fp8":  # the FP8 weight and its transpose, of the weights this GPU holds
            states = states + _fp8_copies(zero, base, ev, ops)
        resident = sum((ev(key, **own) for key in framework.resident_states), 0 * states)
        if holds.resident_needs_dp:
            resident = ops.where(d * c > 1, resident, 0 * resident)
        states = states + resident
        gathered = ops.choose(zero, {stage: (lambda stage=stage: ev(holds.gathered[stage], **(own | {"P_unit": _unit(holds, base, ev, ops)}))
                                             if stage in holds.gathered else 0 * states) for stage in range(4)})
        if end == "first":  # at p = 1 the only stage: one micro-batch, the output layer and loss too
            ends = logits + base["n_mtp"] * (mtp_layer + logits)  # the last stage's, when it is this one
            activations = (per_layer * first_layers + embedding) * in_flight * interleave + ops.where(piped, 0 * ends, ends)
        else:
            activations = per_layer * last_layers + logits + base["n_mtp"] * (mtp_layer + logits)
        activations = activations + rebuilt
        step = None
        if framework.step_states is not None:  # Megatron-LM 2021: the fp32 gradient copy at the step
            step = ev(framework.step_states, **own) + resident
        if holds.step is not None:  # DeepSpeed: the fp32 gradient partition beside the states
            step = states + _states(zero, dense, experts, base, (holds.step,) * 4, ev, ops)
        total = states + gathered + activations
        if step is not None:
            total = ops.maximum(total, step)
        stages[end] = {"model_states": states, "activations": activations, "gathered": gathered, "total": total,
                       **({} if step is None else {"optimizer_step": step}), "params": dense + experts}
    first, last = stages["first"], stages["last"]
    heavier = ops.where(piped, last["total"] > first["total"], False)  # the last stage is the most loaded
    pick = {key: ops.where(heavier, last[key], first[key]) for key in first}
    capacity = inputs.gpu["M_gpu"]
    # activations are linear in b: the largest b whose activations fit beside the states on both ends (0: none fits)
    fitting = [ops.maximum(-ops.ceiling(-(capacity - stage["model_states"] - stage["gathered"]) * base["b"] / stage["activations"]), 0)
               for stage in (first, last)]
    memory = {
        "model_states": pick["model_states"],
        **_state_parts(zero, held, base, inputs, holds, ev, ops),
        "activations": pick["activations"],
        "gathered": pick["gathered"],
        "total": pick["total"],
        "most_loaded_stage": ops.where(heavier, p, 1),
        "max_micro_batch": ops.where(piped, ops.minimum(*fitting), fitting[0]),
        **({"optimizer_step": pick["optimizer_step"]} if "optimizer_step" in pick else {}),
        "first_stage": {key: first[key] for key in ("params", "model_states", "activations", "total")},
        "last_stage": {key: last[key] for key in ("params", "model_states", "activations", "total")},
    }
    return memory, {"dense": held["first"], "experts": held["first_experts"], "expert_replicas": expert_replicas}


def _unit(holds: object, base: dict, ev: Evaluator, ops: Ops) -> object:
    """Ψ_unit, what ZeRO-3 or FSDP gathers at once: DeepSpeed's largest module (its estimator's largest_layer_params: the
    embedding or one MLP matrix, 1/t each), FSDP's wrapped unit (a decoder layer, or the root's embedding and head)."""
    t = base["t"]
    if holds.blocks == "megatron":
        return ops.maximum(base["V"] * base["d_emb"], (1 + base["gated"]) * base["h"] * base["d_ff"]) / t
    return ops.maximum(ev("params.decoder.layer", **base),
                       ev("params.decoder.embeddings", **base) + ev("params.decoder.head", **base))


def _state_parts(zero: object, held: dict, base: dict, inputs: Inputs, holds: object, ev: Evaluator, ops: Ops) -> dict:
    """The first stage's states split as ZeRO partitions them (Rajbhandari et al. 2020): the weights (q_W), the
    gradients (q_G) and the optimizer's states (q_O), each the same ``_states`` at the other two widths 0. LoRA's parts
    are the frozen base with the adapters, and the adapters' gradients and Adam moments; FP8 adds its weight copies."""
    t, p = base["t"], base["p"]
    if inputs.lora is not None:
        adapters = base["P_lora"] / (t * p)
        return {"weights": ev("memory.lora.frozen_base", **base) / (t * p) + 4 * adapters,
                "gradients": 4 * adapters, "optimizer": 8 * adapters}
    widths = {"weights": "q_p", "gradients": "q_g", "optimizer": "q_o"}
    parts = {name: _states(zero, held["first"], held["first_experts"], base, holds.states, ev, ops,
                           **{other: 0 for other in widths.values() if other != width})
             for name, width in widths.items()}
    if inputs.precision == "fp8":
        parts["weights"] = parts["weights"] + _fp8_copies(zero, base, ev, ops)
    return parts


def _transformers_layer(mode: object, blocks: str, attention: object, values: dict, ev: Evaluator, ops: Ops) -> object:
    """Bytes one transformers Llama-family layer stores (t = 1): the eager or sdpa form in bf16 or under autocast; with
    gradient checkpointing (full recompute) its input, bf16 or the fp32 residual under autocast."""
    kind = "amp" if blocks == "amp" else "transformers"
    full = "memory.activations.layer.amp.full_recompute" if blocks == "amp" else "memory.activations.layer.full_recompute"
    core = ops.where(_flash(attention), ev(f"memory.activations.layer.{kind}.sdpa", **values),
                     ev(f"memory.activations.layer.{kind}.eager", **values))
    return ops.choose(mode, {0: lambda: core, 1: lambda: core, 2: lambda: ev(full, **values)})


def _fp8_copies(zero: object, base: dict, ev: Evaluator, ops: Ops) -> object:
    """The FP8 weight and its transpose of the weights a GPU holds: its ZeRO-3 shard, or all it holds."""
    return ops.choose(zero, {stage: (lambda stage=stage: ev("memory.fp8.weight_copies.zero3" if stage == 3 else
                                                            "memory.fp8.weight_copies", **base)) for stage in range(4)})


def _flash(attention: object) -> object:
    """FlashAttention or not: given by name (one layout) or as a 0/1 flag (arrays, symbols)."""
    return attention == "flash" if isinstance(attention, str) else attention


def _recompute_code(recompute: object) -> object:
    """The recompute mode as its index in RECOMPUTE_MODES: given by name (one layout) or as indices (arrays)."""
    return RECOMPUTE_MODES.index(recompute) if isinstance(recompute, str) else recompute


def _activation_index(mode: object, sequence_parallel: object, flash: object, ops: Ops) -> object:
    """Which of ACTIVATION_FORMULAS applies (full recompute keeps only each layer's input, SP or not;
    FlashAttention keeps no s² tensor, so with it no recompute and selective recompute store the same)."""
    return ops.choose(mode, {
        0: lambda: ops.where(flash, ops.where(sequence_parallel, 7, 6), ops.where(sequence_parallel, 1, 0)),
        1: lambda: ops.where(flash, ops.where(sequence_parallel, 7, 6), ops.where(sequence_parallel, 3, 2)),
        2: lambda: ops.where(sequence_parallel, 5, 4),
    })


def _comms(layout: Layout, base: dict, ev: Evaluator, ops: Ops) -> dict:
    """Bytes each GPU moves per iteration, by parallel dimension (TP and PP carry the rank's s/c tokens)."""
    t, p, d, b, m = base["t"], base["p"], base["d"], ops.number(layout.b), base["m"]
    chunk = base | {"b": b, "s": base["s"] / base["c"]}
    tp = ops.choose(layout.sequence_parallel, {
        True: lambda: ev("comms.sp.per_microbatch", **chunk),
        False: lambda: ev("comms.tp.sent_per_microbatch", **chunk),
    })
    tp = ops.where(t > 1, tp * m, 0)
    pp = ops.where(p > 1, ev("comms.pp.per_iteration.interleaved", **chunk), 0)
    held = base | {"P": ev("params.per_gpu.ep", **base) * t * p, "d": d * base["c"]}  # the rank's weights, over c·d replicas
    dp = ops.choose(layout.zero, {  # ZeRO-2 reduce-scatters every micro-batch, ZeRO-3 also gathers twice per micro-batch
        0: lambda: ev("comms.dp.ep_cp.sent_per_iteration", **base),  # dense over c·d replicas, experts over c·d/e
        1: lambda: ev("perf.zero.stage1.sent", **held),
        2: lambda: ev("perf.zero.stage2.sent", **held),
        3: lambda: ev("perf.zero.stage3.sent", **held),
    })
    if "P_lora" in base:  # only the adapters' fp32 gradients are all-reduced
        dp = ev("comms.dp.ep_cp.sent_per_iteration", **(base | {"P": base["P_lora"], "P_exp": 0, "q_w": 4}))
    ep = ops.choose(layout.sequence_parallel, {
        True: lambda: ev("comms.ep.per_microbatch.sp", **(base | {"b": b})),
        False: lambda: ev("comms.ep.per_microbatch", **(base | {"b": b})),
    })
    cp = ev("comms.cp.per_microbatch", **(base | {"b": b}))
    return {"tp": tp, "pp": pp, "dp": ops.where(d * base["c"] > 1, dp, 0),
            "ep": ops.where(base["e"] > 1, ep * m, 0), "cp": ops.where(base["c"] > 1, cp * m, 0)}


def _inference(base: dict, b: object, active: object, inputs: Inputs, ev: Evaluator, ops: Ops) -> dict:
    """One replica (t·p GPUs) decoding batches of b sequences at a context of s tokens, by the serving model
    (formulas/topics/serving.py, constants fitted on TensorRT-LLM 0.8: formulas/data/serving_calibration.py): a decoding step reads
    the weights once (an MoE layer the experts b tokens reach, ``serving.decode.experts_touched``) and every sequence's
    cache (``serving.decode.kv_read``), computes its GEMMs and attention, pays τ_L per layer and two all-reduces per
    layer, 16-bit weights and cache.

    Two latencies, named for what they are: a *stage's* (one of the p stages: its l/p layers, its share of the weights,
    the cache and the FLOPs, over its t GPUs) and a *token's* (``token_latency``: the p stages in series with p − 1 hops,
    ``serving.time.decode_step``). With p batches in flight, one per stage, the replica emits p·b tokens per token
    latency. ``latency_memory_bound`` and ``latency_compute_bound`` are 001's sketch of the same step (weights only,
    ``inference.latency.*`` over the t GPUs of a stage, stages in series) and the balance batch X/W_mem its ridge point."""
    from llm_formulas.formulas.data.serving_calibration import constants

    exact = _is_sympy(ops.minimum, "Min")  # SymPy (exact or traced) keeps Rationals, NumPy takes floats
    replica = base | {"n": base["t"] * base["p"], "b": b}
    stage = replica | {"n": base["t"]}
    memory_bound = ev("inference.latency.memory_bound", **stage)
    compute_bound = ev("inference.latency.compute_bound", **(stage | {"P": active}))  # FLOPs: the Ψ a token uses
    t, p, layers = base["t"], base["p"], base["l"]
    nvlink = inputs.gpu["W_link"] / 2
    step = replica | constants("16", exact).values() | {
        "q_kv": Q_16BIT, "s_ctx": base["s"], "W_tp": ops.where(t <= inputs.node_size, nvlink, inputs.network),
        "W_pp": ops.where(t * p <= inputs.node_size, nvlink, inputs.network)}
    step |= {"E_hit": base["all_experts"] * base["E"] + (1 - base["all_experts"]) * ev("serving.decode.experts_touched", **step)}
    step |= {"F_fwd": ev("serving.decode.flops.linear", **step), "R_w": ev("serving.decode.weights_read", **step),
             "N_kv": ev("serving.decode.context", **step)}
    token = ev("serving.time.decode_step", **step)
    one_stage = ev("serving.time.decode_step", **(step | {"p": 1, "l": layers / p, "F_fwd": step["F_fwd"] / p,
                                                          "R_w": step["R_w"] / p, "N_kv": step["N_kv"] / p}))
    return {
        # what transformers' cache holds: windowed layers W − 1 tokens, MLA the latent (memory.kv_cache when neither)
        "kv_cache_per_sequence": ev("memory.kv_cache.decoder", **(replica | {"b": 1})),
        "kv_cache_batch": ev("memory.kv_cache.decoder", **replica),
        "weights_per_gpu": ev("memory.model_states.inference", **replica) / replica["n"],
        "kv_cache_per_gpu": ev("memory.kv_cache.decoder", **replica) / replica["n"],
        "weights_read_per_step": step["R_w"],
        "kv_read_per_step": ev("serving.decode.kv_read", **step),
        "experts_touched": step["E_hit"],
        "stage_latency": one_stage,
        "token_latency": token,
        "latency_memory_bound": memory_bound,
        "latency_compute_bound": compute_bound,
        "sequences_in_flight": p * b,
        "tokens_per_second": p * b / token,
        "balance_batch": ev("inference.balance_batch", **replica),
    }


def model_values(values: dict[sp.Symbol, int]) -> dict[str, int]:
    """An Architecture's symbol values keyed by name (what evaluators take)."""
    from llm_formulas.formulas.vocabulary.symbols import quantity

    return {quantity(symbol).name: int(value) for symbol, value in values.items()}
