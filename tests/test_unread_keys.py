"""Issue 35 item 1: a structural key the family does not read is never counted silently.

Every committed checkpoint (tests/checkpoints) as published reads without refusal (test_checkpoints.py counts each
against transformers); here each gets one extra key whose name says it shapes the model, and the reader must name
it: a ConfigError by default, a count with the key listed under allow_unread_keys (the CLI: exit 2, or a caveat
under --allow-unread-keys). Nemotron-3-Super's moe_latent_size was the case that passed silently (458.6 B counted
for transformers' 120.7 B).
"""

import json
import subprocess
import sys

import pytest
from test_checkpoints import COUNTS, MANIFEST, NOT_AS_PUBLISHED, published

from llm_formulas.formulas.vocabulary.catalogue import get
from llm_formulas.formulas.data.hf_config import ConfigError, read_config
from llm_formulas.formulas.data.multimodal import MULTIMODAL

COUNTED = [entry for entry in MANIFEST if entry["checkpoint"] not in NOT_AS_PUBLISHED]


def with_key(config: dict, key: str, value: object) -> dict:
    """The config with one more key where its family reads (a multimodal config: in its text_config)."""
    if config["model_type"] in MULTIMODAL:
        return {**config, "text_config": {**config["text_config"], key: value}}
    return {**config, key: value}


@pytest.mark.parametrize("key, value", [("foo_hidden_size", 7), ("moe_latent_size", 1024), ("num_bar_layers", 3),
                                         ("extra_experts", 4)])
@pytest.mark.parametrize("entry", COUNTED, ids=[entry["checkpoint"] for entry in COUNTED])
def test_an_unread_structural_key_is_named(entry, key, value):
    config = published(entry)
    if key in read_config(config).keys_read or key in read_config(config).defaults:  # Nemotron-H's moe_latent_size
        assert read_config(with_key(config, key, value)).values != read_config(config).values  # read, so it counts
        return
    with pytest.raises(ConfigError, match=repr(key)):
        read_config(with_key(config, key, value))


@pytest.mark.parametrize("entry", COUNTED[::7], ids=[entry["checkpoint"] for entry in COUNTED[::7]])
def test_allowed_it_counts_as_published_and_lists_the_key(entry):
    architecture = read_config(with_key(published(entry), "foo_hidden_size", 7), allow_unread_keys=True)
    assert architecture.unread_keys == ("foo_hidden_size",)
    assert architecture.evaluate(get("params.decoder.total").dimensioned) == COUNTS["checkpoints"][entry["checkpoint"]]["text"]


def test_runtime_keys_and_nulls_are_not_structural():
    config = published(COUNTED[0])
    quiet = with_key(with_key(with_key(config, "hidden_act", "gelu"), "moe_latent_size", None), "num_logits_to_keep", 1)
    assert read_config(quiet).unread_keys == ()


def _cli(path, *extra):
    return subprocess.run([sys.executable, "-m", "llm_formulas", "params", "--hf-config", str(path), *extra],
                          capture_output=True, text=True, timeout=600)


def test_the_cli_refuses_in_one_line_or_counts_with_a_caveat(tmp_path):
    entry = next(entry for entry in MANIFEST if entry["checkpoint"] == "Qwen/Qwen3-0.6B")
    path = tmp_path / "config.json"
    path.write_text(json.dumps(with_key(published(entry), "moe_latent_size", 64)))
    refused = _cli(path)
    assert refused.returncode == 2 and refused.stderr.count("\n") == 1 and "'moe_latent_size'" in refused.stderr
    allowed = _cli(path, "--allow-unread-keys")
    assert allowed.returncode == 0 and "caveat" in allowed.stdout and "moe_latent_size" in allowed.stdout
    assert f"({COUNTS['checkpoints']['Qwen/Qwen3-0.6B']['text']:,})" in allowed.stdout
