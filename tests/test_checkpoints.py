"""The most-used open checkpoints of 2025–26, each config.json as published, counted exactly against transformers.

tests/checkpoints_manifest.json lists each checkpoint and where its config.json was copied from (repository,
path, commit); the files themselves are committed in tests/checkpoints/ (256 kB of published config.json files). For each,
params.decoder.total must equal the parameters transformers 5.24 builds on the meta device for the text decoder,
and the vision tower with its projector those of a multimodal checkpoint, as tests/measure_checkpoints.py
measured them into tests/checkpoint_counts.json (re-measured live for two of them below). Quantization keys are
read too: the count is the same, the stored bytes come with it.
"""

import json
from pathlib import Path

import pytest

from llm_formulas.formulas.vocabulary.catalogue import get
from llm_formulas.formulas.data.hf_config import ConfigError, read_config

HERE = Path(__file__).parent
SHARED = HERE / "checkpoints"
MANIFEST = json.loads((HERE / "checkpoints_manifest.json").read_text())
COUNTS = json.loads((HERE / "checkpoint_counts.json").read_text())
# copies that are not the config.json as released: counted only as far as they go, and why
NOT_AS_PUBLISHED = {
    "meta-llama/Llama-4-Scout-17B-16E-Instruct": "'vision_config'",  # the vendored copy dropped the vision tower's config
    "meta-llama/Llama-4-Maverick-17B-128E-Instruct": "'vision_config'",
}


def published(entry: dict) -> dict:
    path = SHARED / entry["file"]
    assert path.exists(), f"{path} missing: the published config.json files are in tests/checkpoints (see the manifest)"
    return json.loads(path.read_text())


@pytest.mark.parametrize("entry", MANIFEST, ids=[entry["checkpoint"] for entry in MANIFEST])
def test_checkpoint_is_counted_as_published(entry):
    config = published(entry)
    name = entry["checkpoint"]
    if name in NOT_AS_PUBLISHED:
        with pytest.raises(ConfigError, match=NOT_AS_PUBLISHED[name]):
            read_config(config)
        return
    architecture = read_config(config)
    measured = COUNTS["checkpoints"][name]
    assert architecture.evaluate(get("params.decoder.total").dimensioned) == measured["text"]
    assert sum(architecture.tower_parameters().values()) == measured["towers"]
    stored = architecture.stored_weight_bytes()
    assert stored["parameters"] == measured["text"] + measured["towers"]
    assert (stored["scheme"] is None) == ("quantization_config" not in config)


def test_at_least_55_of_the_checkpoints_are_counted_as_published():
    assert len(MANIFEST) - len(NOT_AS_PUBLISHED) >= 55
    assert all(entry["repository"] and entry["path"] and len(entry["commit"]) == 40 for entry in MANIFEST)


@pytest.mark.parametrize("name", ["Qwen/Qwen3-0.6B", "Qwen/Qwen3-VL-2B-Instruct"])
def test_the_measured_counts_are_transformers_own(name):
    import transformers
    from measure_checkpoints import measure

    assert COUNTS["transformers"] == transformers.__version__
    entry = next(entry for entry in MANIFEST if entry["checkpoint"] == name)
    assert measure(published(entry)) == COUNTS["checkpoints"][name]
