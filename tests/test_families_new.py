"""The families added in issue 28 against transformers 5.24 itself, each on a tiny copy (tests/family_cases.py).

Parameters: params.decoder.total equals sum(p.numel()) on the meta device. FLOPs: flops.decoder.forward equals
FlopCounterMode around a real forward (eager attention, eager experts, use_cache=False) at two shapes. Cache:
memory.kv_cache.decoder equals the bytes of the tensors transformers' own cache holds after a forward with
use_cache=True, layer by layer: keys and values of the attention layers (W − 1 tokens in a sliding one), the
convolution and recurrent states of the state-space and linear-attention layers (fixed, whatever s), nothing in a
layer without a mixer; in bf16 the convolution states follow the model's dtype and the recurrent states stay fp32.
"""

import pytest
import torch
from family_cases import ALL, RECURRENT, config_json
from family_oracle import cache_bytes, forward_flops, meta_count, tiny

from llm_formulas.formulas.vocabulary.catalogue import get
from llm_formulas.formulas.data.hf_config import read_config

SHAPES = [(2, 7)]  # past the windows of 4; the recurrent scans also at (1, 9): three chunks of 4, one padded
MORE = {family: [(1, 9)] for family in RECURRENT}
KIND_FORMULA = {"full": "memory.kv_cache.layer.full", "window": "memory.kv_cache.layer.window", "mamba": "memory.state.mamba",
                "mamba2": "memory.state.mamba2", "rglru": "memory.state.rglru", "gdn": "memory.state.gdn"}


def per_layer(architecture, **shape) -> list[int]:
    return [architecture.evaluate(get(KIND_FORMULA[kind]).dimensioned, **shape) if kind in KIND_FORMULA else 0
            for kind in architecture.layer_kinds]


@pytest.mark.parametrize("family, index", ALL)
def test_parameters_flops_and_cache_equal_transformers(family, index):
    config = config_json(family, index)
    architecture = read_config(config)
    assert architecture.evaluate(get("params.decoder.total").dimensioned) == meta_count(config)
    model = tiny(config)
    for batch, seq in SHAPES + MORE.get(family, []):
        assert architecture.evaluate(get("flops.decoder.forward").dimensioned, b=batch, s=seq) == forward_flops(model, config, batch, seq)
        measured = cache_bytes(model, config, batch, seq)
        assert measured == per_layer(architecture, b=batch, s=seq, q=4), (batch, seq)
        assert sum(measured) == architecture.evaluate(get("memory.kv_cache.decoder").dimensioned, b=batch, s=seq, q=4)


@pytest.mark.parametrize("family", sorted(RECURRENT))
def test_recurrent_states_in_bf16_keep_fp32_recurrences(family):
    config = config_json(family, 0)
    architecture = read_config(config)
    measured = cache_bytes(tiny(config, torch.bfloat16), config, 2, 7)
    assert measured == per_layer(architecture, b=2, s=7, q=2)


def test_the_cases_cover_every_new_kind():
    kinds = {kind for family, index in ALL for kind in read_config(config_json(family, index)).layer_kinds}
    assert kinds == {"full", "window", "mamba", "mamba2", "rglru", "gdn", "none"}
    # a state does not grow with the context: the same bytes at s = 5 and s = 7 per sequence
    architecture = read_config(config_json("mamba2", 0))
    assert per_layer(architecture, b=1, s=5, q=2) == per_layer(architecture, b=1, s=7000, q=2)
