"""Issue 35 item 2: Nemotron-H's latent MoE (Nemotron-3-Super's moe_latent_size) and its layers listed in
layers_block_type (Nemotron-3-Ultra's form, no num_hidden_layers), exact against transformers 5.24 on the meta device.

transformers' NemotronHMoE (models/nemotron_h/modeling_nemotron_h.py) puts fc1_latent_proj (h→d_lat) before the routed
experts and fc2_latent_proj (d_lat→h) after; NemotronHExperts' up and down projections are d_moe×d_lat (the router and
the shared expert still read h). NemotronHConfig takes the depth from len(layers_block_type) and ignores
num_hidden_layers beside it. The shrunk copies' forward FLOPs and cache bytes are checked by test_families_new.py
(family_cases.py's second nemotron_h case).
"""

import pytest
from family_cases import config_json
from family_oracle import hf_config, meta_count

from llm_formulas.formulas.catalogue import get
from llm_formulas.formulas.hf_config import read_config

PATTERNED = {**config_json("nemotron_h", 0), "moe_latent_size": 6}  # the old form: num_hidden_layers + hybrid_override_pattern


def total(config: dict) -> int:
    return read_config(config).evaluate(get("params.decoder.total").dimensioned)


@pytest.mark.parametrize("latent", [6, 12, 40])
def test_latent_experts_count_as_transformers_builds_them(latent):
    config = {**PATTERNED, "moe_latent_size": latent}
    assert total(config) == meta_count(config)
    # one MoE layer (pattern M*-EM), h = 16, E = 4, d_moe = 8, no biases: the latent changes E·2·d_moe·(h − d_lat) of
    # the experts and adds 2·h·d_lat of projections, by hand
    without = {key: value for key, value in config.items() if key != "moe_latent_size"}
    assert total(config) - total(without) == 4 * 2 * 8 * (latent - 16) + 2 * 16 * latent


def test_a_null_latent_is_none():
    assert total({**PATTERNED, "moe_latent_size": None}) == meta_count({**PATTERNED, "moe_latent_size": None})


def test_layers_block_type_gives_the_depth():
    listed = config_json("nemotron_h", 1)
    assert "num_hidden_layers" not in listed
    assert hf_config(listed).num_hidden_layers == 5
    assert total(listed) == meta_count(listed)
    # a stale num_hidden_layers beside the list is ignored, as transformers ignores it (with a warning)
    stale = {**listed, "num_hidden_layers": 52}
    assert total(stale) == meta_count(stale) == total(listed)
    assert read_config(listed).layer_kinds == ("mamba2", "none", "full", "none", "none")


def test_latent_flops_by_hand():
    # b = 1, s = 3: the two latent projections 2·3·2·16·6 = 1,152 FLOP per MoE layer; each routed copy's experts read
    # d_lat = 6: 2·3·k·2·d_moe·d_lat = 2·3·2·2·8·6 = 1,152
    architecture = read_config(PATTERNED)
    assert architecture.evaluate(get("flops.decoder.moe_latent").dimensioned, b=1, s=3) == 1152
    assert architecture.evaluate(get("flops.decoder.experts").dimensioned, b=1, s=3) == 1152
