"""serving.* against real tiny transformers models on the CPU, and against exact simulations.

Oracles (tests/serving_oracles.py): FlopCounterMode around a prefill (logits_to_keep = 1) and a decoding step with a
DynamicCache; a TorchDispatchMode that adds the bytes each op reads from the parameters and from the cache; a hook
that records the experts each MoE layer is given. Families: dense GQA and MHA (tied and untied), a sliding window
(Mistral, W = 4, past the window at s_in = 7), local and global layers (Gemma 3), MoE (Mixtral, Qwen2-MoE with a shared
expert) and MLA with MoE (DeepSeek-V3). Every figure is exact; bf16 weights and cache (2 bytes).
"""

from __future__ import annotations

import random
from fractions import Fraction
from itertools import product

import pytest
import torch
from architecture_configs import build, config_json
from serving_oracles import ExpertLog, cache_bytes, run_step
from transformers import DynamicCache

from llm_formulas.formulas.vocabulary.catalogue import get
from llm_formulas.formulas.data.hf_config import read_config
from llm_formulas.formulas.vocabulary.symbols import quantity

FAMILIES = [("llama", 1), ("llama", 0), ("qwen2", 1), ("mistral", 2), ("gemma3_text", 0), ("mixtral", 0), ("qwen2_moe", 0),
            ("deepseek_v3", 0)]
BATCH, PROMPT = 2, 7


def value(architecture, formula_id: str, **extra) -> int | Fraction:
    """The formula at the architecture's sizes (exact; a mean E_hit may make a byte count a fraction)."""
    expr = get(formula_id).dimensioned
    given = {**architecture.values, **{quantity(k).symbol: v for k, v in extra.items()}}
    from llm_formulas.formulas.vocabulary.symbols import constant_values

    result = expr.xreplace(constant_values()).xreplace(given)
    assert not result.free_symbols, result.free_symbols
    return Fraction(int(result.p), int(result.q))


@pytest.fixture(scope="module")
def measured():
    """Each family's tiny bf16 model: a prefill of PROMPT tokens, then two decoding steps, measured."""
    results = {}
    for family, index in FAMILIES:
        config = config_json(family, index)
        model = build(family, index, "cpu").to(torch.bfloat16)
        experts = ExpertLog(model)
        generator = torch.Generator().manual_seed(7)
        cache = DynamicCache(config=model.config)
        prompt = torch.randint(0, config["vocab_size"], (BATCH, PROMPT), generator=generator)
        steps = [run_step(model, prompt, cache, experts, logits_to_keep=1)]
        held = [cache_bytes(cache)]
        for _ in range(2):
            token = torch.randint(0, config["vocab_size"], (BATCH, 1), generator=generator)
            steps.append(run_step(model, token, cache, experts))
            held.append(cache_bytes(cache))
        results[family, index] = (read_config(config), steps, held)
    return results


@pytest.mark.parametrize("family, index", FAMILIES)
def test_prefill_flops_equal_the_flop_counter(measured, family, index):
    architecture, steps, _ = measured[family, index]
    assert steps[0].flops == value(architecture, "serving.prefill.flops", b=BATCH, s_in=PROMPT)


@pytest.mark.parametrize("family, index", FAMILIES)
def test_decoding_step_flops_equal_the_flop_counter(measured, family, index):
    architecture, steps, _ = measured[family, index]
    for step, context in ((steps[1], PROMPT + 1), (steps[2], PROMPT + 2)):
        assert step.flops == value(architecture, "serving.decode.flops", b=BATCH, s_ctx=context)


@pytest.mark.parametrize("family, index", FAMILIES)
def test_bytes_a_decoding_step_reads(measured, family, index):
    # weights: each parameter once (the embedding at the b rows, MoE layers the experts the hook saw routed to);
    # cache: the attention reads N_KV positions per sequence; DynamicCache's torch.cat copies the s_ctx − 1 older ones
    architecture, steps, _ = measured[family, index]
    for step, context in ((steps[1], PROMPT + 1), (steps[2], PROMPT + 2)):
        hit = Fraction(sum(step.experts_hit), len(step.experts_hit)) if step.experts_hit else 1
        assert step.weights == value(architecture, "serving.decode.weights_read", b=BATCH, q_w=2, E_hit=hit)
        assert step.cache == value(architecture, "serving.decode.kv_read", b=BATCH, s_ctx=context, q_kv=2)
        assert step.old_cache == value(architecture, "memory.kv_cache.decoder", b=BATCH, s=context - 1, q=2)


def test_the_cases_exercise_windows_experts_and_ties(measured):
    # guards the tests above: past the window the windowed layers read fewer positions; experts are partly hit
    mistral, steps, _ = measured["mistral", 2]
    assert steps[1].cache < value(mistral, "serving.decode.kv_read", b=BATCH, s_ctx=PROMPT + 1, q_kv=2, l_win=0)
    _, moe_steps, _ = measured["mixtral", 0]
    assert any(hit < 4 for hit in moe_steps[1].experts_hit)  # E = 4, k = 2, b = 2: not every expert is read
    llama, _, _ = measured["llama", 1]
    assert llama.values[quantity("tied").symbol] == 1


@pytest.mark.parametrize("family, index", [("llama", 1), ("qwen2", 1), ("mixtral", 0), ("deepseek_v3", 0)])
def test_memory_kv_is_what_the_cache_holds(measured, family, index):
    # no windowed layer: after s tokens the DynamicCache holds serving.memory.kv at s_ctx = s (t = p = 1)
    architecture, _, held = measured[family, index]
    for tokens, bytes_held in zip((PROMPT, PROMPT + 1, PROMPT + 2), held):
        assert bytes_held == value(architecture, "serving.memory.kv", b=BATCH, s_ctx=tokens, q_kv=2, t=1, p=1)


@pytest.mark.parametrize("family, index", [("mistral", 2), ("gemma3_text", 0)])
def test_causal_pairs_are_the_weights_the_mask_keeps(family, index):
    # the causal count's query-key pairs are the attention probabilities the model's own mask leaves nonzero:
    # s(s + 1)/2 per head in a full layer, s·m − m(m − 1)/2 with m = min(s, W) in a windowed one
    config = config_json(family, index)
    architecture = read_config(config)
    model = build(family, index, "cpu")
    tokens = torch.randint(0, config["vocab_size"], (1, PROMPT), generator=torch.Generator().manual_seed(3))
    with torch.no_grad():
        attentions = model(tokens, output_attentions=True, use_cache=False).attentions
    window = architecture.values[quantity("W").symbol]
    span = min(PROMPT, window)
    pairs = {"full": PROMPT * (PROMPT + 1) // 2, "window": PROMPT * span - span * (span - 1) // 2}
    heads = architecture.values[quantity("a").symbol]
    assert [int((layer != 0).sum()) for layer in attentions] == [heads * pairs[kind] for kind in architecture.layer_kinds]
    masked = value(architecture, "serving.prefill.flops.masked", b=1, s_in=PROMPT)
    skipped = value(architecture, "serving.prefill.flops", b=1, s_in=PROMPT) - value(architecture, "serving.prefill.flops.causal", b=1, s_in=PROMPT)
    assert masked == skipped > 0


def test_context_sum_is_the_step_by_step_sum():
    # brute force over a grid: the closed form against Σ_j N_KV(s_in + j), windows included; of l = 6 layers, 2 may be
    # Mamba mixers and 1 without a mixer (Nemotron-H's kinds): they cache no position
    closed = get("serving.decode.context.sum").expr
    names = ("l", "l_mamba", "l_ssd", "l_lru", "l_gdn", "l_noattn", "l_win", "W", "s_in", "s_out")
    symbols = {quantity(name).symbol: name for name in names}
    for mamba, none, l_win, window, s_in, s_out in product((0, 2), (0, 1), range(4), (1, 3, 6, 11), (1, 2, 5, 9), (2, 3, 7, 12)):
        attention = 6 - mamba - none
        by_step = sum((attention - l_win) * (s_in + j) + l_win * min(s_in + j, window) for j in range(1, s_out))
        values = {"l": 6, "l_mamba": mamba, "l_ssd": 0, "l_lru": 0, "l_gdn": 0, "l_noattn": none, "l_win": l_win, "W": window,
                  "s_in": s_in, "s_out": s_out}
        assert closed.xreplace({symbol: values[name] for symbol, name in symbols.items()}) == by_step


def test_e2e_is_the_prefill_and_every_step_summed():
    # exact rationals at random sizes, a windowed model: the closed form against the s_out − 1 steps one by one
    e2e, step, context = (get(f).expr for f in ("serving.time.e2e", "serving.time.decode_step", "serving.decode.context"))
    rng = random.Random(5)
    for _ in range(3):
        point = {s: Fraction(rng.randint(1, 9), rng.randint(1, 5)) for s in step.free_symbols | e2e.free_symbols}
        point |= {quantity(n).symbol: v for n, v in {"l": 6, "l_win": 4, "W": 9, "s_in": 5, "s_out": 8, "mla": 0,
                                                      "t": 2, "g": 4, "p": 1, "e": 1, "l_moe": 0}.items()}
        total = point[quantity("T_pf").symbol]
        for j in range(1, 8):
            positions = context.xreplace(point | {quantity("s_ctx").symbol: 5 + j})
            total += step.xreplace(point | {quantity("N_kv").symbol: positions})
        assert e2e.xreplace(point) == total


# --- experts touched under random routing ---------------------------------------------------------


def _distinct_expert_moments(experts: int, top_k: int, tokens: int) -> tuple[Fraction, Fraction]:
    """Exact mean and variance of the distinct experts b uniformly routed tokens reach (indicator algebra)."""
    one = Fraction(experts - top_k, experts) ** tokens  # an expert missed by all
    two = Fraction((experts - top_k) * (experts - top_k - 1), experts * (experts - 1)) ** tokens  # two experts missed
    mean = experts * (1 - one)
    variance = experts * one * (1 - one) + experts * (experts - 1) * (two - one * one)
    return mean, variance


def test_distinct_experts_under_random_routing_match_the_expectation():
    # the real Mixtral router, its rows made orthonormal and fed isotropic Gaussian tokens: its logits are then i.i.d.,
    # so each token's top-k set is uniform. N draws of b tokens go through the router at once; the mean count of
    # distinct experts per draw must lie within 4 standard errors of serving.decode.experts_touched (exact variance;
    # the seed fixes the draws). The MoE block itself hands its experts module exactly the router's choice.
    config = config_json("mixtral", 1)  # E = 8, k = 3, h = 32
    model = build("mixtral", 1, "cpu")
    block = model.model.layers[0].mlp
    torch.manual_seed(11)
    with torch.no_grad():
        block.gate.weight.copy_(torch.linalg.qr(torch.randn(config["hidden_size"], config["num_local_experts"]))[0].T)
    experts, top_k, draws = config["num_local_experts"], config["num_experts_per_tok"], 2000
    expected = get("serving.decode.experts_touched").expr
    for tokens in (1, 2, 4, 8):
        with torch.no_grad():
            _, _, index = block.gate(torch.randn(draws * tokens, config["hidden_size"]))
        counts = [len(set(row)) for row in index.reshape(draws, tokens * top_k).tolist()]
        mean, variance = _distinct_expert_moments(experts, top_k, tokens)
        assert expected.xreplace({quantity("E").symbol: experts, quantity("k").symbol: top_k, quantity("b").symbol: tokens}) == mean
        sample = Fraction(sum(counts), draws)
        assert abs(sample - mean) <= 4 * (float(variance) / draws) ** 0.5, (tokens, float(sample), float(mean))
    log = ExpertLog(model)
    sample_tokens = torch.randn(1, 8, config["hidden_size"])
    with torch.no_grad():
        _, _, index = block.gate(sample_tokens.reshape(8, -1))
        block(sample_tokens)
    assert log.take() == (len(set(index.flatten().tolist())),)


# --- speculative decoding, simulated exactly ----------------------------------------------------------


def _speculative_step(target: list[Fraction], draft: list[Fraction], drafts: int) -> tuple[Fraction, list[Fraction]]:
    """Leviathan et al. 2023, Algorithm 1, enumerated exactly for context-free distributions: the expected tokens one
    target step emits, and the distribution of the first token it emits."""
    vocabulary = range(len(target))
    leftover = [max(p - q, 0) for p, q in zip(target, draft)]
    norm = sum(leftover)
    residual = [x / norm for x in leftover] if norm else list(target)

    def run(remaining: int) -> tuple[Fraction, list[Fraction]]:
        if remaining == 0:  # every draft accepted: one more token from the target
            return Fraction(1), list(target)
        tokens, first = Fraction(0), [Fraction(0)] * len(target)
        for x in vocabulary:
            accept = min(Fraction(1), target[x] / draft[x]) if draft[x] else Fraction(0)
            if draft[x] == 0:
                continue
            later, _ = run(remaining - 1)
            tokens += draft[x] * (accept * (1 + later) + (1 - accept) * 1)
            first[x] += draft[x] * accept
            for y in vocabulary:
                first[y] += draft[x] * (1 - accept) * residual[y]
        return tokens, first

    return run(drafts)


@pytest.mark.parametrize("drafts", [1, 2, 4])
def test_speculative_decoding_simulated_exactly(drafts):
    target = [Fraction(1, 2), Fraction(1, 4), Fraction(1, 8), Fraction(1, 8)]
    draft = [Fraction(1, 4), Fraction(1, 2), Fraction(1, 8), Fraction(1, 8)]
    tokens, first = _speculative_step(target, draft, drafts)
    acceptance = sum(min(p, q) for p, q in zip(target, draft))  # Leviathan's α = Σ min(p, q) (Corollary 3.6)
    closed = get("serving.speculative.tokens").expr
    assert closed.xreplace({quantity("alpha_acc").symbol: acceptance, quantity("gamma_spec").symbol: drafts}) == tokens
    assert first == target  # the emitted token is distributed as the target's (Theorem: speculative sampling is exact)
