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

from llm_formulas.formulas.vocabulary.catalogue import get
from llm_formulas.formulas.data.hf_config import read_config

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


# --- the latent terms in every sum that prices a MoE layer (review of issue 35 item 2) ---------------------------------

LATENT = config_json("nemotron_h", 1)  # moe_latent_size 6, h 16, E 4, k 2, d_moe 8, one shared expert of 8, two MoE layers


def test_quantized_matrices_are_the_linear_weights_transformers_builds():
    # the quantizer's inventory against the meta model: the routed experts' 3-D tensors at d_lat, and the two latent
    # projections (nn.Linear h→d_lat, d_lat→h) of each MoE layer
    from family_oracle import meta_model

    from llm_formulas.formulas.data.quantization import inventory

    values = read_config(LATENT).values
    matrices = inventory({symbol.name: number for symbol, number in values.items()})
    built = dict(meta_model(LATENT).named_parameters())

    def weights(part: str) -> int:
        return sum(p.numel() for name, p in built.items() if part in name and name.endswith(("weight", "up_proj", "down_proj")))

    def listed(part: str) -> int:
        return sum(m.d_in * m.d_out * m.count for m in matrices if any(part in name for name in m.names))

    assert listed("latent_proj") == weights("latent_proj") == 2 * 2 * 16 * 6  # 2 layers × (16·6 + 6·16), by hand
    assert listed("mlp.experts") == weights(".experts.") == 2 * 4 * 2 * 8 * 6  # 2 layers × 4 experts × (up 6→8, down 8→6)
    # params.quantized.linear: the latent changes a MoE layer's experts by E·2·d_moe·(d_lat − h) and adds 2·h·d_lat
    architecture, plain = read_config(LATENT), read_config({k: v for k, v in LATENT.items() if k != "moe_latent_size"})
    linear = get("params.quantized.linear").dimensioned
    assert architecture.evaluate(linear) - plain.evaluate(linear) == 2 * (4 * 2 * 8 * (6 - 16) + 2 * 16 * 6)


def test_stage_parameters_on_one_gpu_are_the_total():
    # params.stage.first at t = p = 1 without MTP is the whole model: the latent projections are in it
    architecture = read_config(LATENT)
    one_gpu = get("params.stage.first").dimensioned + get("params.stage.layers.experts").dimensioned
    assert architecture.evaluate(one_gpu, t=1, p=1, t_e=1, e=1, piped=0) == meta_count(LATENT)


def test_decoding_step_flops_and_parameters_read():
    from family_oracle import decode_step_flops, tiny

    architecture = read_config(LATENT)
    flops = decode_step_flops(tiny(LATENT), LATENT, batch=2, prompt=5)
    assert flops == architecture.evaluate(get("serving.decode.flops").dimensioned, b=2, s_ctx=6)
    # every expert hit (E_hit = E): a step reads every parameter but the V − b embedding rows not looked up (untied head)
    assert not hf_config(LATENT).tie_word_embeddings
    read = architecture.evaluate(get("serving.decode.params_read").dimensioned, b=2, E_hit=4)
    assert read == meta_count(LATENT) - (LATENT["vocab_size"] - 2) * 16


LAYER = dict(s=16, b=2, h=64, a=4, g=2, d_head=16, E=4, k=2, d_moe=48, d_sh=32)


@pytest.mark.parametrize("mode, suffix, tp, sequence_parallel", [("eager", "tp", 1, False), ("selective", "selective", 2, False),
                                                                 ("selective", "selective_sp", 2, True)])
def test_latent_moe_activations_equal_saved_bytes(mode, suffix, tp, sequence_parallel):
    from helpers import value
    from megatron_block import measure
    from moe_block import MoELayer
    from test_memory_activations_moe import CLASSIC_RUN, statistics

    shape = {name: LAYER[name] for name in ("g", "d_head", "E", "k", "d_moe", "d_sh")}
    measured = measure(LAYER["s"], LAYER["b"], LAYER["h"], LAYER["a"], block=MoELayer, mode=mode, tp=tp, d_lat=24,
                       sequence_parallel=sequence_parallel, **shape)
    named = {**LAYER, "gated": 1, "sh_gate": 0, "mla": 0, "t": tp, "t_e": tp, **CLASSIC_RUN, "moe_lat": 1, "d_lat": 24}
    assert measured == value(f"memory.activations.layer.decoder.moe.{suffix}", **named) \
        + statistics(LAYER["s"], LAYER["b"], router=True, shards=tp if sequence_parallel else 1)


def test_latent_moe_activations_by_hand():
    # tp = 1: T = s·b = 32 tokens, C = T·k = 64 copies; the copies are d_lat = 24 wide instead of h = 64 (2 bytes each),
    # and fc2_latent_proj keeps its [T, d_lat] input: 2·C·(24 − 64) + 2·T·24 = −5,120 + 1,536 = −3,584 bytes
    from megatron_block import measure
    from moe_block import MoELayer

    shape = {name: LAYER[name] for name in ("g", "d_head", "E", "k", "d_moe", "d_sh")}
    plain = measure(LAYER["s"], LAYER["b"], LAYER["h"], LAYER["a"], block=MoELayer, mode="selective", **shape)
    latent = measure(LAYER["s"], LAYER["b"], LAYER["h"], LAYER["a"], block=MoELayer, mode="selective", d_lat=24, **shape)
    assert latent - plain == -3584
