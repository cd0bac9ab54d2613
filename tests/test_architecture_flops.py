"""flops.decoder.* against PyTorch: forward FLOPs equal FlopCounterMode on real tiny models, backward is 2×.

Oracle: torch.utils.flop_counter.FlopCounterMode around a transformers model (CPU,
float32, eager attention, use_cache=False) built from each family's configs in
tests/architecture_configs.py. Mixtral runs its eager experts kernel: the default
grouped_mm kernel has no FLOP formula in torch 2.13 and would count the experts as 0.
"""

import pytest
import torch
from architecture_configs import CASES, build, config_json
from torch.utils.flop_counter import FlopCounterMode

from llm_formulas.formulas.vocabulary.catalogue import get
from llm_formulas.formulas.data.hf_config import read_config

SHAPES = [(1, 7), (3, 5)]
# every family; a second config where it changes the GEMMs (GQA, d_head ≠ h/a, OPT's projections, Falcon's layouts)
FLOP_CASES = [
    ("gpt2", 1), ("gptj", 1), ("gpt_neox", 1), ("opt", 0), ("opt", 1), ("bloom", 1), ("falcon", 0), ("falcon", 1),
    ("falcon", 2), ("llama", 1), ("llama", 2), ("mistral", 1), ("mixtral", 0), ("mixtral", 1), ("qwen2", 2),
    ("gemma", 0), ("gemma", 1), ("phi3", 1),
    ("deepseek_v3", 0), ("deepseek_v2", 0), ("qwen3", 0), ("qwen3_moe", 0), ("qwen2_moe", 0), ("gemma2", 0),
    ("gemma3_text", 0), ("gpt_oss", 0), ("llama4_text", 0), ("olmo2", 0), ("glm4_moe", 0), ("phimoe", 0), ("mistral", 2),
]


@pytest.fixture(scope="module")
def models():
    """Each tiny CPU model built once for the module."""
    built = {}

    def get_model(family: str, index: int) -> torch.nn.Module:
        if (family, index) not in built:
            built[family, index] = build(family, index, "cpu")
        return built[family, index]

    return get_model


def measure(model: torch.nn.Module, vocab: int, batch: int, seq: int) -> tuple[int, int, int]:
    """(forward, backward, lm_head forward) FLOPs as FlopCounterMode counts them."""
    model.zero_grad(set_to_none=True)
    tokens = torch.randint(0, vocab, (batch, seq), generator=torch.Generator().manual_seed(batch * 100 + seq))
    with FlopCounterMode(display=False) as forward_counter:
        output = model(tokens, use_cache=False)
    with FlopCounterMode(display=False) as backward_counter:
        output.logits.sum().backward()
    head = sum(
        sum(ops.values()) for name, ops in forward_counter.get_flop_counts().items() if name.endswith(".lm_head")
    )
    return forward_counter.get_total_flops(), backward_counter.get_total_flops(), head


@pytest.mark.parametrize("family, index", FLOP_CASES)
def test_forward_and_backward_equal_the_flop_counter(models, family, index):
    config = config_json(family, index)
    architecture = read_config(config)
    model = models(family, index)
    for batch, seq in SHAPES:
        forward, backward, head = measure(model, config["vocab_size"], batch, seq)
        assert architecture.evaluate(get("flops.decoder.forward").dimensioned, b=batch, s=seq) == forward, (batch, seq)
        assert architecture.evaluate(get("flops.decoder.backward").dimensioned, b=batch, s=seq) == backward == 2 * forward
        assert architecture.evaluate(get("flops.decoder.logits").dimensioned, b=batch, s=seq) == head
        assert architecture.evaluate(get("flops.decoder.training").dimensioned, b=batch, s=seq) == forward + backward


def test_the_flop_cases_cover_every_family():
    assert {family for family, _ in FLOP_CASES} == {family for family, _ in CASES}


def test_the_attention_scores_grow_with_the_square_of_the_sequence(models):
    # oracle: three measurements; only the s² terms (attention scores) survive the second difference
    config = config_json("llama", 1)
    model = models("llama", 1)
    f = {seq: measure(model, config["vocab_size"], 1, seq)[0] for seq in (4, 5, 6)}
    second_difference = f[6] - 2 * f[5] + f[4]
    expected = get("flops.decoder.attention.scores").dimensioned
    architecture = read_config(config)
    per_layer = [architecture.evaluate(expected, b=1, s=seq) for seq in (4, 5, 6)]
    layers = config["num_hidden_layers"]
    assert second_difference == layers * (per_layer[2] - 2 * per_layer[1] + per_layer[0])
    # 4·b·a·s²·d_head per layer: a = 6 query heads of 8, although g = 2 key/value heads
    assert second_difference == layers * 4 * 6 * 8 * 2
