"""Issue 35 item 2: DeepSeek sparse attention (deepseek_v32, glm_moe_dsa) against transformers 5.24.

DeepseekV32Indexer (models/deepseek_v32/modeling_deepseek_v32.py) in every MLA layer: wq_b r_Q → n_idx·d_idx from the
query latent, wk h → d_idx with a LayerNorm, weights_proj h → n_idx; it scores every cached key (q·kᵀ per head,
weighted and summed over heads) and caches one d_idx-wide key per token beside MLA's latent. The shrunk copies'
parameters, forward FLOPs and cache are in test_families_new.py (family_cases.py); the published DeepSeek-V3.2 in
test_checkpoints.py.
"""

import json
from pathlib import Path

import pytest
import torch
from family_cases import config_json
from family_oracle import decode_step_flops, meta_count, tiny
from torch.utils.flop_counter import FlopCounterMode

from llm_formulas.formulas.vocabulary.catalogue import get
from llm_formulas.formulas.data.hf_config import ConfigError, read_config

V32 = json.loads((Path(__file__).parent / "checkpoints" / "deepseek-ai--DeepSeek-V3.2.json").read_text())
INDEX_KEYS = ("index_n_heads", "index_head_dim", "index_topk")


def test_the_indexer_of_deepseek_v32_by_hand():
    # per layer: wq_b 1536·64·128 + wk 7168·128 + k_norm 2·128 + weights_proj 7168·64 = 13,959,424; 61 layers
    architecture = read_config(V32)
    as_v3 = read_config({**{k: v for k, v in V32.items() if k not in INDEX_KEYS}, "model_type": "deepseek_v3"})
    total = get("params.decoder.total").dimensioned
    assert architecture.evaluate(total) - as_v3.evaluate(total) == 61 * 13_959_424 == 851_524_864
    # the cache per token: 61 layers × (latent 512 + rope key 64 + indexer key 128) values × 2 bytes
    assert architecture.evaluate(get("memory.kv_cache.decoder").dimensioned, b=1, s=1, q=2) == 61 * (512 + 64 + 128) * 2


def test_glm_layers_that_share_an_indexer_are_refused():
    # index_topk_freq 2 from the third layer: transformers builds no indexer in layers 3, 5, ... ("shared")
    config = {**config_json("glm_moe_dsa", 0), "num_hidden_layers": 4, "mlp_layer_types": ["dense"] + ["sparse"] * 3,
              "index_topk_freq": 2}
    with pytest.raises(ConfigError, match="shared"):
        read_config(config)
    assert meta_count(config) < meta_count({**config, "index_topk_freq": 1})  # the oracle: fewer indexers built


@pytest.mark.parametrize("family", ["deepseek_v32", "glm_moe_dsa"])
def test_a_decoding_step_scores_every_cached_key_with_the_indexer(family):
    config = config_json(family, 0)
    flops = decode_step_flops(tiny(config), config, batch=2, prompt=5)
    assert flops == read_config(config).evaluate(get("serving.decode.flops").dimensioned, b=2, s_ctx=6)


def test_the_indexer_has_no_backward():
    # DeepseekV32Indexer.forward runs under torch.no_grad: the backward is 2× the forward less the indexer's share
    config = config_json("deepseek_v32", 0)
    architecture, model = read_config(config), tiny(config)
    tokens = torch.randint(1, config["vocab_size"], (2, 7), generator=torch.Generator().manual_seed(7))
    output = model(tokens, use_cache=False)
    with FlopCounterMode(display=False) as counter:
        output.logits.sum().backward()
    assert counter.get_total_flops() == architecture.evaluate(get("flops.decoder.backward").dimensioned, b=2, s=7)
    # by hand, one layer's indexer (r_Q 24, h 32, 2 heads of 8, bs = 14): projections 2·14·(24·16 + 32·8 + 32·2) = 19,712,
    # scores 2·2·2·7²·(8 + 1) = 3,528; three layers
    assert architecture.evaluate(get("flops.decoder.indexer").dimensioned, b=2, s=7) == 19_712 + 3_528


def test_estimate_refuses_sparse_attention_in_one_line(capsys):
    # the training report's attention (activations, step times) has no top-k selection
    from helpers import run

    path = str(Path(__file__).parent / "checkpoints" / "deepseek-ai--DeepSeek-V3.2.json")
    code, out, err = run(capsys, "estimate", "--hf-config", path, "--gpu", "h100-sxm", "--seq", "8")
    assert code == 2 and out == "" and err.count("\n") == 1 and "DeepSeek sparse attention" in err


def _serve(capsys, tmp_path, **config) -> dict:
    from helpers import cli_json

    path = tmp_path / "config.json"
    path.write_text(json.dumps({"model_type": "deepseek_v32", **config_json("deepseek_v32", 0), **config}))
    return cli_json(capsys, "serve", "--hf-config", str(path), "--gpu", "h100-sxm", "--batch", "1", "--input", "8", "--output", "4")


def test_serve_prices_the_attention_at_the_indexers_top_k(capsys, tmp_path):
    # the shrunk DeepSeek-V3.2 (family_cases.py): 3 MLA layers, a = 4, r_KV 16, d_rope 4, d_nope 8, d_v 8, an indexer of
    # 2 heads of 8, index_topk 4; 8 prompt + 4 output tokens, bf16 cache, read at the mean context 8 + 4/2 = 10
    report = _serve(capsys, tmp_path)
    # the latents of min(10, 4) selected positions and all 10 indexer keys, per layer: 3·(4·(16 + 4) + 10·8)·2 bytes
    assert report["kv_read_bytes"] == 3 * (4 * 20 + 10 * 8) * 2 == 960
    # attention: absorbed MLA over 4 positions, 2a(2r_KV + d_rope) each, and the indexer's 2·n_idx(d_idx + 1) over 10
    architecture = read_config({"model_type": "deepseek_v32", **config_json("deepseek_v32", 0)})
    linear = architecture.evaluate(get("serving.decode.flops.linear").dimensioned, b=1)
    assert report["flops"]["decode_step"] - linear == 3 * (4 * 2 * 4 * (2 * 16 + 4) + 10 * 2 * 2 * 9) == 4536
    # prefill of 8: query i attends min(i, 4) keys (26 pairs, not 36), 2a(d_qk + d_v) = 160 FLOPs a pair; the indexer
    # scores all 36 at 2·2·9 = 36: the causal prefill less 3·(36·196 − 26·160 − 36·36) = 4,800
    causal = architecture.evaluate(get("serving.prefill.flops.causal").dimensioned, b=1, s_in=8)
    assert causal - report["flops"]["prefill"] == 4_800
    # the cache held is every position's latent and indexer key, as before: 3 layers × 16 blocks' tokens × (16 + 4 + 8) × 2
    assert report["memory"]["kv_cache_bytes"] == 3 * 16 * 28 * 2


def test_a_top_k_at_least_the_context_reads_every_position(capsys, tmp_path):
    # index_topk 4096 ≥ every context here: the step reads each cached position's latent and key, as a dense MLA cache
    report = _serve(capsys, tmp_path, index_topk=4096)
    assert report["kv_read_bytes"] == 3 * 10 * (16 + 4 + 8) * 2
