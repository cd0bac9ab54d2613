"""Every row of the user guide's "Rejected inputs" table, run: one line on stderr, exit 2, no traceback."""

import json
import re
import shlex
from pathlib import Path

import pytest

from llm_formulas.render.cli.main import main

TABLE = (Path(__file__).resolve().parent.parent / "render" / "documents" / "guide" / "rejected-inputs.md").read_text()
ROWS = re.findall(r"^\| ([^|]+?) \| `([^`]+)` \| `([^`]+)` \|$", TABLE, flags=re.M)

LLAMA = {"model_type": "llama", "hidden_size": 64, "num_attention_heads": 4, "num_hidden_layers": 2,
         "intermediate_size": 128, "vocab_size": 100}
CONFIGS = {
    "broken.json": '{"model_type": "llama", "hidden_size": 64,',
    "nested.json": "[" * 100_000 + "]" * 100_000,
    "huge.json": json.dumps(LLAMA | {"padding": "x" * 1_100_000}),
    "list.json": json.dumps([LLAMA]),
    "t5.json": json.dumps({"model_type": "t5", "d_model": 512}),
    "no-hidden.json": json.dumps({k: v for k, v in LLAMA.items() if k != "hidden_size"}),
    "negative.json": json.dumps(LLAMA | {"hidden_size": -64}),
    "fraction.json": json.dumps(LLAMA | {"hidden_size": 64.5}),
    "nan.json": json.dumps(LLAMA | {"hidden_size": float("nan")}),
    "huge-size.json": json.dumps(LLAMA | {"hidden_size": 10**40}),
    "mixtral.json": json.dumps(LLAMA | {"model_type": "mixtral", "num_key_value_heads": 4, "num_local_experts": 8,
                                        "num_experts_per_tok": 2}),
    "vision.json": json.dumps(LLAMA | {"model_type": "gemma3_text", "vision_config": {"hidden_size": 1152}}),
    "quanto.json": json.dumps(LLAMA | {"quantization_config": {"quant_method": "quanto", "weights": "int4"}}),
    "linear.json": json.dumps(LLAMA | {"model_type": "gemma2", "layer_types": ["full_attention", "linear_attention"]}),
    "banded.json": json.dumps(LLAMA | {"model_type": "gemma2", "layer_types": ["banded", "full_attention"]}),
    "hybrid.json": json.dumps(LLAMA | {"model_type": "nemotron_h", "hybrid_override_pattern": "M*-"}),
    # 720,720 = 2⁴·3²·5·7·11·13 heads and layers: a layout space of 169 million layouts on 720,720 GPUs
    "divisible.json": json.dumps(LLAMA | {"hidden_size": 1441440, "num_attention_heads": 720720, "num_hidden_layers": 5040}),
    "guide.md": "notes of my own, where a build would write",
}


def test_the_table_is_read():
    assert len(ROWS) >= 25


@pytest.mark.parametrize("what, command, message", ROWS, ids=[row[0] for row in ROWS])
def test_rejected(tmp_path, monkeypatch, capsys, what, command, message):
    for name, text in CONFIGS.items():
        (tmp_path / name).write_text(text)
    monkeypatch.chdir(tmp_path)
    code = main(shlex.split(command))
    out, err = capsys.readouterr()
    assert code == 2, (what, err)
    # nothing on stdout but, from a build refused midway, the line of each stage it finished (its log in a pipe)
    assert all(command.startswith("build") and re.fullmatch(r"[a-z]+: \d+ files?, \d+\.\d s", line)
               for line in out.splitlines()), out
    assert err.count("\n") == 1 and err.startswith("llm-formulas: error: ")
    assert message in err, err
    assert "Traceback" not in err
