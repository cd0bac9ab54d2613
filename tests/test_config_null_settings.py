"""A config key given as null is None, as transformers' config classes read it, not the class's default (issue 37's
"never a wrong number"): Mistral-7B-v0.3, Devstral and Mixtral publish "sliding_window": null and cache every token
of every layer. Before, the reader took MistralConfig's default window of 4096 and priced a 32k context's cache at an
eighth of its size (537 MB instead of 4.29 GB for Mistral-7B-Instruct-v0.3).

The oracle is transformers' own reading of each committed config.json; the bytes are hand arithmetic from its
attributes: K and V of num_key_value_heads heads of head_dim, 2 bytes each, in every layer, for every token.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import transformers

from helpers import cli_json

CHECKPOINTS = Path(__file__).parent / "checkpoints"
NULL_WINDOW = ("mistralai--Mistral-7B-Instruct-v0.3.json", "mistralai--Devstral-Small-2507.json",
               "mistralai--Mixtral-8x7B-v0.1.json")
CONTEXT = 32768  # eight times Mistral's default window: a window taken by mistake would cut the cache to 4095 tokens


@pytest.mark.parametrize("name", NULL_WINDOW)
def test_a_null_window_caches_every_token_as_transformers_reads_it(name, capsys):
    data = json.loads((CHECKPOINTS / name).read_text())
    config = transformers.AutoConfig.for_model(**data)
    assert config.sliding_window is None  # transformers' reading: no window at all
    head_dim = getattr(config, "head_dim", None) or config.hidden_size // config.num_attention_heads
    expected = config.num_hidden_layers * 2 * config.num_key_value_heads * head_dim * 2 * CONTEXT
    report = cli_json(capsys, "kv-cache", "--hf-config", CHECKPOINTS / name, "--seq", CONTEXT, "--batch", 1)
    assert report["bytes"] == expected
    assert set(report["kinds"]) == {"full"}


def test_a_window_left_out_takes_the_class_default(capsys, tmp_path):
    data = json.loads((CHECKPOINTS / NULL_WINDOW[0]).read_text())
    del data["sliding_window"]
    assert transformers.AutoConfig.for_model(**data).sliding_window == 4096  # MistralConfig's default
    path = tmp_path / "config.json"
    path.write_text(json.dumps(data))
    report = cli_json(capsys, "kv-cache", "--hf-config", path, "--seq", CONTEXT, "--batch", 1)
    assert set(report["kinds"]) == {"window"}
