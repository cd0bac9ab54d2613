"""Issue 35 item 3: ``llm-formulas families`` lists every model type with the transformers release its counts were checked
against and the commands that price it; each claim is checked by running those commands on a config of that family
(tests/architecture_configs.py, tests/family_cases.py; a committed checkpoint for the multimodal ones)."""

import json

import pytest
import transformers
from architecture_configs import CONFIGS
from family_cases import CASES
from helpers import cli_json, run

from llm_formulas.formulas.data.families import CHECKED_AGAINST, FAMILIES, REFUSED
from llm_formulas.formulas.data.multimodal import MULTIMODAL

from test_checkpoints import COUNTS, HERE

ARGUMENTS = {"params": [], "flops": ["--batch", "1", "--seq", "8"], "kv-cache": ["--batch", "1", "--seq", "8"],
             "estimate": ["--gpu", "h100-sxm", "--seq", "8"],
             "serve": ["--gpu", "h100-sxm", "--batch", "1", "--input", "8", "--output", "4"]}
COMMITTED = {"gemma3": "google--medgemma-27b-it.json", "qwen3_vl": "Qwen--Qwen3-VL-2B-Instruct.json",
             "qwen3_vl_moe": "Qwen--Qwen3-VL-30B-A3B-Instruct.json", "kimi_k2": "moonshotai--Kimi-K2-Instruct.json",
             "qwen3_5_moe": "Qwen--Qwen3.5-35B-A3B.json", "kimi_k25": "moonshotai--Kimi-K2.5.json"}
MULTIMODAL_CHECKPOINTS = {name for name in COMMITTED if name in MULTIMODAL}
# model types without a tiny config of their own take the keys of the family they extend
LIKE = {"ministral": "mistral", "ministral3": "mistral", "qwen2_5_vl_text": "qwen2", "qwen3_vl_text": "qwen3",
        "qwen3_vl_moe_text": "qwen3_moe"}


@pytest.fixture(scope="module")
def table():
    import io
    from contextlib import redirect_stdout

    from llm_formulas.render.cli.main import main

    out = io.StringIO()
    with redirect_stdout(out):
        assert main(["families", "--json"]) == 0
    return {row["model_type"]: row for row in json.loads(out.getvalue())}


def test_every_model_type_is_listed_with_the_release_it_was_checked_against(table):
    assert set(table) == set(FAMILIES) | set(MULTIMODAL) | set(REFUSED)
    installed = ".".join(transformers.__version__.split(".")[:2])
    measured = ".".join(COUNTS["transformers"].split(".")[:2])  # the release tests/measure_checkpoints.py ran
    assert CHECKED_AGAINST == installed == measured == "5.24"
    assert {row["checked_against"] for row in table.values()} == {"transformers 5.24"}


def _config(model_type: str, tmp_path) -> str:
    if model_type in COMMITTED:
        return str(HERE / "checkpoints" / COMMITTED[model_type])
    like = LIKE.get(model_type, model_type)
    config = {"model_type": model_type, **(CASES.get(like) or CONFIGS[like])[0]}
    path = tmp_path / "config.json"
    path.write_text(json.dumps(config))
    return str(path)


@pytest.mark.parametrize("model_type", sorted(set(FAMILIES) | MULTIMODAL_CHECKPOINTS))
def test_the_listed_commands_price_it_and_the_others_refuse_it(table, model_type, tmp_path, capsys):
    config = _config(model_type, tmp_path)
    listed = table[model_type]["commands"]
    for command, extra in ARGUMENTS.items():
        code, _, err = run(capsys, command, "--hf-config", config, *extra)
        assert code == (0 if command in listed else 2), (command, err)


def test_a_switch_that_estimate_cannot_price_is_named(table, tmp_path, capsys):
    # GPT-2 is priced unless the config adds cross-attention
    assert table["gpt2"]["estimate"].startswith("unless add_cross_attention")
    path = tmp_path / "config.json"
    path.write_text(json.dumps({"model_type": "gpt2", **CONFIGS["gpt2"][0], "add_cross_attention": True}))
    code, _, err = run(capsys, "estimate", "--hf-config", str(path), *ARGUMENTS["estimate"])
    assert code == 2 and "cross-attention" in err


def test_the_text_table_names_each_type_once(capsys):
    code, out, _ = run(capsys, "families")
    assert code == 0
    names = [line.split()[0] for line in out.splitlines()[1:]]
    assert sorted(names) == sorted(set(FAMILIES) | set(MULTIMODAL) | set(REFUSED)) and len(names) == len(set(names))
    assert cli_json(capsys, "families")[0]["model_type"] == names[0]


@pytest.mark.parametrize("model_type", sorted(REFUSED))
def test_a_refused_type_is_one_line_naming_why_in_every_command(table, model_type, tmp_path, capsys):
    # transformers 5.24 knows the type (its config class exists), and every command refuses it with the reason
    assert model_type in transformers.models.auto.configuration_auto.CONFIG_MAPPING_NAMES
    assert table[model_type]["commands"] == []
    path = tmp_path / "config.json"
    path.write_text(json.dumps({"model_type": model_type, "hidden_size": 64}))
    for command, extra in ARGUMENTS.items():
        code, out, err = run(capsys, command, "--hf-config", str(path), *extra)
        assert code == 2 and out == "" and err.count("\n") == 1, (command, err)
        assert f"{model_type} is not counted: {REFUSED[model_type][:30]}" in err
