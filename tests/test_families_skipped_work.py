"""The work eager attention does but a masking kernel skips, and MLA's decode step, against the real models.

Oracle: the attention probabilities transformers' eager attention returns (output_attentions=True): a
masked query-key pair has probability exactly 0, so counting the non-zero entries counts the pairs a
kernel that skips masked blocks must compute. Eager attention multiplies the full s×s square anyway
(tests/test_architecture_flops.py); flops.decoder.attention.scores.causal/.windowed/.chunked price the
pairs it keeps, and the difference is the skipped work. MLA's decode step is measured by FlopCounterMode
on one decoded token after a prefill, per attention module.
"""

import pytest
import sympy as sp
import torch
from architecture_configs import build, config_json
from torch.utils.flop_counter import FlopCounterMode

from llm_formulas.formulas.vocabulary.catalogue import get
from llm_formulas.formulas.data.hf_config import read_config

KERNEL_FORMULA = {"full": "flops.decoder.attention.scores.causal", "sliding": "flops.decoder.attention.scores.windowed",
                  "chunked": "flops.decoder.attention.scores.chunked"}


def kept_pairs(family: str, index: int, seq: int) -> list[int]:
    """Non-zero attention probabilities per layer, for one sequence and one head (every head alike here)."""
    model = build(family, index, "cpu")
    tokens = torch.randint(1, 50, (1, seq), generator=torch.Generator().manual_seed(seq))
    with torch.no_grad():
        attentions = model(tokens, use_cache=False, output_attentions=True).attentions
    counts = []
    for weights in attentions:
        per_head = (weights[0] != 0).sum(dim=(-1, -2))
        assert len(set(per_head.tolist())) == 1
        counts.append(int(per_head[0]))
    return counts


@pytest.mark.parametrize("family, index, seq, kinds", [
    ("gemma2", 0, 7, ["sliding", "full", "sliding"]),
    ("gpt_oss", 0, 9, ["sliding", "full"]),
    ("mistral", 2, 6, ["sliding", "sliding"]),
    ("llama4_text", 0, 8, ["chunked", "chunked", "chunked", "full"]),
])
def test_kernel_flops_price_the_pairs_the_mask_keeps(family, index, seq, kinds):
    architecture = read_config(config_json(family, index))
    pairs = kept_pairs(family, index, seq)
    square = architecture.evaluate(get("flops.decoder.attention.scores").dimensioned, b=1, s=seq)
    for kind, kept in zip(kinds, pairs, strict=True):
        kernel = architecture.evaluate(get(KERNEL_FORMULA[kind]).dimensioned, b=1, s=seq)
        assert kernel * seq**2 == square * kept  # the kernel's FLOPs are the square's, pair for pair
        assert kept < seq**2  # so eager attention did skippable work: square − kernel


def test_the_skipped_work_of_a_window_by_hand():
    # Gemma-2 tiny, W = 4, s = 7: a full layer keeps 7·8/2 = 28 pairs, a sliding one 7·4 − 4·3/2 = 22 of 49
    assert kept_pairs("gemma2", 0, 7) == [22, 28, 22]


def test_llama4_runs_every_expert_and_the_skipped_figure_says_how_much():
    # oracle: FlopCounterMode on the experts module of the MoE layer: E experts on every token, not k
    config = config_json("llama4_text", 0)
    model = build("llama4_text", 0, "cpu")
    tokens = torch.randint(1, 50, (2, 5), generator=torch.Generator().manual_seed(1))
    with FlopCounterMode(display=False) as counter:
        with torch.no_grad():
            model(tokens, use_cache=False)
    experts = sum(sum(ops.values()) for name, ops in counter.get_flop_counts().items() if name.endswith("layers.1.feed_forward.experts"))
    architecture = read_config(config)
    assert experts == architecture.evaluate(get("flops.decoder.experts").dimensioned, b=2, s=5)
    skipped = architecture.evaluate(get("flops.decoder.experts.skipped").dimensioned, b=2, s=5)
    E, k = config["num_local_experts"], config["num_experts_per_tok"]
    assert skipped == experts * (E - k) // E  # a top-k kernel would run k of the E


def test_mla_decode_step_reexpands_the_latent_cache():
    # one decoded token after a prefill of S: kv_b_proj runs over all S + 1 cached latents (naive), measured per module
    config = config_json("deepseek_v3", 0)
    architecture = read_config(config)
    model = build("deepseek_v3", 0, "cpu")
    prompt = 6
    tokens = torch.randint(1, 50, (1, prompt), generator=torch.Generator().manual_seed(2))
    with torch.no_grad():
        output = model(tokens, use_cache=True)
        cache = output.cache if "cache" in output else output.past_key_values
        with FlopCounterMode(display=False) as counter:
            model(torch.tensor([[7]]), cache=cache, use_cache=True)
    counts = counter.get_flop_counts()
    attention = sum(sum(ops.values()) for name, ops in counts.items() if name.endswith("layers.0.self_attn"))
    own = architecture.evaluate(get("flops.decoder.attention.projections.mla").dimensioned, b=1, s=1)
    r_kv, a, d_nope, d_v = config["kv_lora_rank"], config["num_attention_heads"], config["qk_nope_head_dim"], config["v_head_dim"]
    one_token_up = 2 * r_kv * a * (d_nope + d_v)  # kv_b_proj of the new token alone, already inside the naive figure
    naive = architecture.evaluate(get("flops.decoder.mla.decode.naive").dimensioned, s=prompt + 1)
    assert attention == naive + own - one_token_up
    absorbed = architecture.evaluate(get("flops.decoder.mla.decode.absorbed").dimensioned, s=prompt + 1)
    assert absorbed < naive  # the absorbed form does not re-expand the cache


def test_absorption_wins_for_deepseek_v3_at_long_context():
    # per decoded token and layer at s = 32768: naive grows with s·r_KV·a·(d_nope + d_v), absorbed with s·a·(2r_KV + d_rope)
    from llm_formulas.formulas.data.presets import preset

    architecture = read_config(preset("deepseek-v3").config)
    naive = architecture.evaluate(get("flops.decoder.mla.decode.naive").dimensioned, s=32768)
    absorbed = architecture.evaluate(get("flops.decoder.mla.decode.absorbed").dimensioned, s=32768)
    # hand arithmetic: naive ≈ 2·32768·512·128·256 = 1.10e12; absorbed ≈ 2·128·32768·(576 + 512) = 9.1e9
    assert naive == 2 * 32768 * 512 * 128 * 256 + 2 * 128 * 32768 * (192 + 128)
    assert absorbed == 2 * 128 * 128 * 512 + 2 * 128 * 32768 * (512 + 64) + 2 * 128 * 32768 * 512 + 2 * 128 * 512 * 128
    assert sp.Rational(naive, absorbed) > 100
