"""Property tests over the whole catalogue (issue 8, item 4).

Catalogue-wide properties iterate over ``all_formulas()``, so a formula added
later is covered without touching this file: its dimension equals its declared
unit, it holds no Float, and it evaluates to a finite number at every valid
point (an integer where it counts parameters, FLOPs or layers from integer
sizes). Then the invariants the sources state, proved symbolically where that
is the point and checked at Hypothesis-drawn exact points: per-GPU model states
∝ 1/t and 1/p, ZeRO-3 ∝ 1/d, model states and traffic conserved when a layout is
re-sharded, activations / KV cache / FLOPs increasing in b and s, the pipeline
bubble falling with m, Amdahl's speed-up between 1 and n.

Generated NumPy code against SymPy is tests/test_codegen.py's job (1000 points
per formula against a 40-digit oracle), not repeated here.
"""

from __future__ import annotations

import pytest
import sympy as sp
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from llm_formulas.formulas.vocabulary.catalogue import all_formulas, get
from llm_formulas.formulas.vocabulary.dimensions import check_declared_unit
from llm_formulas.formulas.vocabulary.examples import all_examples
from llm_formulas.formulas.vocabulary.symbols import M_gpu, P, b, d, f, k_conv, l, m, n, p, s, t, v, x_msg
from llm_formulas.testing.strategies import evaluate, point, satisfies, valid_point

FORMULAS = all_formulas()
# the profile (the same examples every CI run): tests/conftest.py
FEW = settings(max_examples=12, deadline=None)
SOME = settings(max_examples=40, deadline=None)


def by_id(formula):
    return formula.id


def vanishes(expr: sp.Basic) -> bool:
    """``expr`` is identically 0 once the constants have their values (cancel, then simplify)."""
    exact = evaluate(expr, {})
    return sp.cancel(exact) == 0 or sp.simplify(exact) == 0


def is_switch(symbol: sp.Symbol) -> bool:
    """A non-negative integer symbol (an architecture switch or small count that may be 0)."""
    return bool(symbol.is_integer) and not symbol.is_positive


# --- 1. dimensions ------------------------------------------------------------------


@pytest.mark.parametrize("formula", FORMULAS, ids=by_id)
def test_dimension_equals_declared_unit(formula):
    assert check_declared_unit(formula.dimensioned, formula.unit) == "exact"


# --- 2. exactness ----------------------------------------------------------------------


@pytest.mark.parametrize("formula", FORMULAS, ids=by_id)
def test_no_float_in_expression_or_conditions(formula):
    assert formula.expr.atoms(sp.Float) == set(), formula.expr
    assert formula.expr.atoms(sp.Float) == set(), formula.expr
    for condition in formula.conditions:
        if isinstance(condition.predicate, sp.Basic):
            assert condition.predicate.atoms(sp.Float) == set(), condition.text


def test_worked_examples_are_exact():
    examples = all_examples()
    assert examples
    for example in examples:
        for name, value in example.inputs:
            assert isinstance(value, sp.Rational) and not isinstance(value, sp.Float), (example.case, name, value)
        assert example.claimed is None or isinstance(example.claimed, sp.Rational), example.case
        assert isinstance(example.scale, sp.Rational), example.case


# --- 3. evaluation respects the assumptions ---------------------------------------------------


@pytest.mark.parametrize("formula", FORMULAS, ids=by_id)
@FEW
@given(data=st.data())
def test_finite_at_valid_points(formula, data):
    values = data.draw(valid_point(formula))
    value = evaluate(formula.expr, values)
    assert value.free_symbols == set(), (formula.id, value)
    assert value.is_finite is True and value.is_extended_real is True, (formula.id, values, value)
    assert sp.N(value, 30).is_finite, (formula.id, values, value)


def counts_from_integers(formula) -> bool:
    """params.* and flops.* that count parameters, FLOPs or layers from integer inputs only.

    Each is a sum of products of integer sizes (a GEMM is 2MKN; l(l+1)/2 layer
    passes is a triangular number), so it must be an integer at integer inputs;
    per-token and 6ΨD forms take the real Ψ and D and are left out.
    """
    topic = formula.id.split(".")[0]
    counted = str(formula.unit) in ("parameter", "FLOP", "layer")
    return topic in ("params", "flops") and counted and all(x.is_integer for x in formula.inputs)


# Integer-valued outside params/flops, each by its derivation: byte counts of 16-bit
# tensors and 1-byte masks with c_byte = 1 and integer coefficients (no /t), GEMM
# counts, ring steps 2(n−1), and a floor. The tensor-parallel activation forms divide
# sbh by t and are not integers in general, so they are not listed.
INTEGER_ELSEWHERE = (
    "memory.activations.layer",
    "memory.activations.layer.exact",
    "memory.activations.layer.full_recompute",
    "memory.activations.layer.gated",
    "memory.activations.llama_002",
    "memory.max_micro_batch",
    "comms.collective.allreduce.ring_steps",
    "inference.kv_recompute.flops",
    "inference.kv_recompute.reads",
)
# a stage's parameters on one GPU are shares of the mean layer and of the t-way vocabulary (formulas/topics/framework_memory.py):
# fractions where p does not divide l or t does not divide V, as Megatron's estimator counts them too
SHARES = ("params.stage.",)
INTEGER_VALUED = [x for x in FORMULAS if counts_from_integers(x) and not x.id.startswith(SHARES)] + \
    [get(i) for i in INTEGER_ELSEWHERE]


def test_integer_valued_set_is_not_empty():
    ids = {x.id for x in INTEGER_VALUED}
    assert {"params.total", "params.narayanan", "flops.forward", "flops.megatron", "flops.recompute.from_scratch"} <= ids
    assert "flops.inference.per_token" not in ids  # 2Ψ with Ψ real


@pytest.mark.parametrize("formula", INTEGER_VALUED, ids=by_id)
@FEW
@given(data=st.data())
def test_counts_are_integers(formula, data):
    values = data.draw(valid_point(formula))
    value = evaluate(formula.expr, values)
    assert value.is_Integer, (formula.id, values, value)


# --- 5. invariants: model states under re-sharding ----------------------------------------------

ZERO_FAMILY = [x for x in FORMULAS if x.id == "memory.zero" or x.id.startswith("memory.zero.")]
PER_GPU_STATES = ZERO_FAMILY + [get("comms.dp.per_iteration"), get("comms.dp.sent_per_iteration")]
SHARDED_BY_D = ("memory.zero.stage3", "memory.zero.offload.cpu")
STATES = get("memory.model_states").dimensioned


def test_zero_family_is_there():
    ids = {x.id for x in ZERO_FAMILY}
    assert {"memory.zero", "memory.zero.stage1", "memory.zero.stage2", "memory.zero.stage3"} <= ids


@pytest.mark.parametrize("formula", PER_GPU_STATES, ids=by_id)
def test_per_gpu_states_inverse_in_t_and_p_symbolically(formula):
    expr = formula.expr
    for degree in (t, p):
        assert vanishes(2 * expr.subs(degree, 2 * degree) - expr), (formula.id, degree)
        assert vanishes(3 * expr.subs(degree, 3 * degree) - expr), (formula.id, degree)


@pytest.mark.parametrize("formula", PER_GPU_STATES, ids=by_id)
@FEW
@given(data=st.data(), k=st.integers(2, 64))
def test_per_gpu_states_inverse_in_t_and_p(formula, data, k):
    values = data.draw(valid_point(formula))
    value = evaluate(formula.expr, values)
    for degree in (t, p):
        scaled = evaluate(formula.expr, {**values, degree: values[degree] * k})
        assert scaled * k == value, (formula.id, degree, k, values)


@pytest.mark.parametrize("formula_id", SHARDED_BY_D)
def test_zero3_inverse_in_d_symbolically(formula_id):
    expr = get(formula_id).dimensioned
    assert vanishes(2 * expr.subs(d, 2 * d) - expr)
    assert vanishes(5 * expr.subs(d, 5 * d) - expr)


@pytest.mark.parametrize("formula_id", SHARDED_BY_D)
@SOME
@given(values=point({t, p, d, P}), k=st.integers(2, 1024))
def test_zero3_inverse_in_d(formula_id, values, k):
    expr = get(formula_id).dimensioned
    assert evaluate(expr, {**values, d: values[d] * k}) * k == evaluate(expr, values)


def test_states_conserved_when_resharded_symbolically():
    # all n = t·p·d GPUs together hold one copy of the 16Ψ model states under ZeRO-3;
    # t·p model-parallel GPUs hold one copy without ZeRO (and each data-parallel replica holds one)
    assert vanishes(get("memory.zero.stage3").dimensioned * t * p * d - STATES)
    assert vanishes(get("memory.zero").dimensioned * t * p - STATES)
    # ZeRO-Offload only moves states: GPU side (per model-parallel rank) + CPU side (per GPU) = 16Ψ
    assert vanishes(get("memory.zero.offload.gpu").dimensioned * t * p + get("memory.zero.offload.cpu").dimensioned * t * p * d - STATES)
    # the DP gradient all-reduce carries one gradient per model-parallel rank: t·p of them make Ψ·q_Ψ
    assert sp.cancel(get("comms.dp.per_iteration").dimensioned * t * p).free_symbols.isdisjoint({t, p})


@SOME
@given(first=point({t, p, d}), second=point({t, p, d}), size=point({P}))
def test_states_conserved_between_two_layouts(first, second, size):
    stage3, stage0 = get("memory.zero.stage3").dimensioned, get("memory.zero").dimensioned
    total = evaluate(STATES, size)

    def on_all_gpus(layout):
        return evaluate(stage3, {**layout, **size}) * layout[t] * layout[p] * layout[d]

    def on_one_replica(layout):
        return evaluate(stage0, {**layout, **size}) * layout[t] * layout[p]

    assert on_all_gpus(first) == on_all_gpus(second) == total
    assert on_one_replica(first) == on_one_replica(second) == total


@SOME
@given(values=point({t, p, d, P}))
def test_zero_stages_ordered_and_equal_without_data_parallelism(values):
    stages = [get(i).dimensioned for i in ("memory.zero", "memory.zero.stage1", "memory.zero.stage2", "memory.zero.stage3")]
    per_gpu = [evaluate(x, values) for x in stages]
    assert per_gpu[0] >= per_gpu[1] >= per_gpu[2] >= per_gpu[3] > 0
    if values[d] > 1:
        assert per_gpu[0] > per_gpu[1] > per_gpu[2] > per_gpu[3]
    alone = [evaluate(x, {**values, d: 1}) for x in stages]
    assert len(set(alone)) == 1  # one replica: nothing to partition
    for x in stages[1:]:  # more replicas never cost more per GPU
        assert evaluate(x, {**values, d: values[d] + 1}) < evaluate(x, values)


# --- 5. invariants: traffic ------------------------------------------------------------------


def test_sequence_parallelism_sends_what_tensor_parallelism_sends():
    assert vanishes(get("comms.sp.per_microbatch").dimensioned - get("comms.tp.sent_per_microbatch").dimensioned)


@pytest.mark.parametrize("formula_id", ["comms.tp.per_microbatch", "comms.tp.sent_per_microbatch", "comms.sp.per_microbatch", "comms.tp.per_iteration"])
def test_tp_traffic_times_p_free_of_p(formula_id):
    # at fixed l the p stages split the layers: per GPU ∝ 1/p, summed over a pipeline independent of p
    expr = get(formula_id).dimensioned
    assert p in expr.free_symbols
    assert p not in sp.cancel(evaluate(expr * p, {})).free_symbols


TP_INPUTS = frozenset(get("comms.tp.per_microbatch").inputs)


@SOME
@given(data=st.data(), p1=st.integers(1, 64), p2=st.integers(1, 64), layers=st.integers(1, 16))
def test_tp_traffic_of_a_pipeline_conserved_across_p(data, p1, p2, layers):
    formula = get("comms.tp.per_microbatch")
    values = data.draw(point(TP_INPUTS - {p, l}))
    values[l] = sp.Integer(p1 * p2 * layers)  # p1 and p2 both divide l
    at = [{**values, p: sp.Integer(k)} for k in (p1, p2)]
    assert all(satisfies(formula, x) for x in at)
    totals = [evaluate(formula.expr, x) * x[p] for x in at]
    assert totals[0] == totals[1]


def collectives() -> list[str]:
    names = {x.id.split(".")[2] for x in FORMULAS if x.id.startswith("comms.redundancy.")}
    return sorted(x for x in names if any(y.id == f"comms.collective.{x}" for y in FORMULAS))


def test_collectives_found():
    assert {"allreduce", "reduce_scatter", "allgather"} <= set(collectives())


@pytest.mark.parametrize("name", collectives())
def test_collective_bytes_are_buffer_times_redundancy(name):
    assert vanishes(get(f"comms.collective.{name}").dimensioned - x_msg * get(f"comms.redundancy.{name}").dimensioned)


def test_allreduce_is_reduce_scatter_then_allgather():
    parts = get("comms.collective.reduce_scatter").dimensioned + get("comms.collective.allgather").dimensioned
    assert vanishes(get("comms.collective.allreduce").dimensioned - parts)


def test_sent_bytes_are_volume_times_ring_redundancy():
    ring = get("comms.redundancy.allreduce").dimensioned
    tp = get("comms.tp.per_microbatch").dimensioned * ring.subs(n, t)
    assert vanishes(get("comms.tp.sent_per_microbatch").dimensioned - tp)
    dp = get("comms.dp.per_iteration").dimensioned * ring.subs(n, d)
    assert vanishes(get("comms.dp.sent_per_iteration").dimensioned - dp)


def test_per_iteration_is_m_micro_batches():
    assert vanishes(get("comms.tp.per_iteration").dimensioned - m * get("comms.tp.per_microbatch").dimensioned)
    assert vanishes(get("comms.pp.per_iteration").dimensioned - m * get("comms.pp.per_microbatch").dimensioned)


# --- 5. invariants: monotone in b and s -------------------------------------------------------

GROWING_PREFIXES = ("flops.", "memory.activations.", "memory.kv_cache", "memory.training.")
GROWING_IDS = ("memory.inference", "memory.per_gpu")


def grows_with_batch_and_length(formula) -> bool:
    """FLOPs, activations, KV cache and the memory totals built on them (unit FLOP or byte)."""
    family = formula.id.startswith(GROWING_PREFIXES) or formula.id in GROWING_IDS
    return family and str(formula.unit) in ("FLOP", "byte")


GROWING = [(x, size) for x in FORMULAS if grows_with_batch_and_length(x) for size in (b, s) if size in x.inputs]


def test_growing_family_found():
    ids = {x.id for x, _ in GROWING}
    assert {"flops.forward", "memory.activations.layer", "memory.kv_cache", "memory.per_gpu"} <= ids


@pytest.mark.parametrize("formula,size", GROWING, ids=lambda x: x.id if hasattr(x, "id") else x.name)
@FEW
@given(data=st.data())
def test_increases_with_b_and_s(formula, size, data):
    values = data.draw(valid_point(formula))
    # a mixer's convolution has a tap at least (k_conv is 0 only where no layer has a mixer: the page's, a model's
    # sizes): an RG-LRU's state holds k_conv − 1 inputs
    assume(values.get(k_conv, 1) >= 1)
    bigger = {**values, size: values[size] * 2}  # doubling keeps divisibility conditions (t | s) true
    assume(satisfies(formula, bigger))
    assert evaluate(formula.expr, bigger) >= evaluate(formula.expr, values), (formula.id, size, values)
    # strictly, once every switch is on (a switch at 0 may remove the only b- or s-term); not where a window caps
    # the tokens (min(s, W − 1): a sliding layer's cache stops growing, as DynamicCache's does) or where the
    # figure is what an implementation wastes (Llama-4's unrouted experts: nothing when k = E)
    if formula.expr.has(sp.Min) or formula.id == "flops.decoder.experts.skipped":
        return
    on = {x: max(value, sp.Integer(1)) if is_switch(x) else value for x, value in values.items()}
    if not satisfies(formula, on) and l in on:  # every layer kind at one layer or more: more kinds than the l layers drawn
        on = {**on, l: on[l] + sum(on[x] for x in on if x.name.startswith("l_"))}
    assert evaluate(formula.expr, {**on, size: on[size] * 2}) > evaluate(formula.expr, on), (formula.id, size, on)


@pytest.mark.parametrize("size", [b, s])
@SOME
@given(data=st.data())
def test_headroom_shrinks_with_b_and_s(size, data):
    formula = get("memory.per_gpu.headroom")
    values = data.draw(valid_point(formula))
    assert evaluate(formula.expr, {**values, size: values[size] + 1}) < evaluate(formula.expr, values)


@SOME
@given(data=st.data(), slack=st.integers(1, 10**12))
def test_max_micro_batch_does_not_grow_with_s(data, slack):
    formula = get("memory.max_micro_batch")
    values = data.draw(valid_point(formula))
    states = evaluate(get("memory.zero").dimensioned, values)
    values[M_gpu] = states + slack  # its stated condition: the model states fit
    smaller = evaluate(formula.expr, values)
    longer = evaluate(formula.expr, {**values, s: values[s] + 1})
    assert 0 <= longer <= smaller, (values, longer, smaller)


@SOME
@given(data=st.data(), slack=st.integers(1, 10**12))
def test_max_micro_batch_is_where_headroom_runs_out(data, slack):
    largest, headroom = get("memory.max_micro_batch"), get("memory.per_gpu.headroom")
    values = data.draw(valid_point(largest))
    values[M_gpu] = evaluate(get("memory.zero").dimensioned, values) + slack
    fits = evaluate(largest.expr, values)
    if fits >= 1:
        assert evaluate(headroom.expr, {**values, b: fits}) >= 0, (values, fits)
    assert evaluate(headroom.expr, {**values, b: fits + 1}) < 0, (values, fits)


# --- 5. invariants: cluster -----------------------------------------------------------------


def test_interleaving_divides_the_bubble_by_v():
    assert vanishes(get("cluster.bubble.interleaved").dimensioned * v - get("cluster.bubble").dimensioned)


@SOME
@given(values=point({p, m, v}))
def test_bubble_falls_with_m(values):
    for formula_id in ("cluster.bubble", "cluster.bubble.interleaved"):
        expr = get(formula_id).dimensioned
        now = evaluate(expr, values)
        later = evaluate(expr, {**values, m: values[m] + 1})
        if values[p] == 1:
            assert now == later == 0  # one stage: no bubble
        else:
            assert 0 < later < now, (formula_id, values)


@SOME
@given(values=point({n, f}))
def test_amdahl_between_1_and_n(values):
    expr = get("cluster.amdahl").dimensioned
    speedup = evaluate(expr, values)
    assert 1 <= speedup <= values[n]
    assert speedup <= 1 / values[f]  # the serial part alone bounds it
    assert evaluate(expr, {**values, n: values[n] + 1}) >= speedup
    if values[f] < 1 and values[n] > 1:
        assert 1 < speedup < values[n]
