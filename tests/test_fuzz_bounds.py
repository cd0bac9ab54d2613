"""Fuzz of the bounded inputs (issue 27): random sweep specs and configs with huge counts, in process.

Every case ends in exit 0 with a result or exit 2 with one line, never exit 3, and no accepted case runs long:
the bounds of formulas/vocabulary/bounds.py hold. The default run tries 60 sweep specs and 240 configs inside the suite's
time budget; ``LLM_FORMULAS_FUZZ=long`` tries 1,000 and 4,000. Each test prints its counts per outcome and the
longest run of an accepted case (``pytest -s``).
"""

from __future__ import annotations

import io
import json
import os
import random
import time
from collections import Counter
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

from llm_formulas.render.cli.main import main

LONG = os.environ.get("LLM_FORMULAS_FUZZ") == "long"
SPEC_CASES = 1000 if LONG else 60
CONFIG_CASES = 4000 if LONG else 240


def run(argv: list[str]) -> tuple[int, str, float]:
    out, err = io.StringIO(), io.StringIO()
    started = time.perf_counter()
    with redirect_stdout(out), redirect_stderr(err):
        code = main(argv)
    return code, err.getvalue(), time.perf_counter() - started


def judged(argv: list[str], outcomes: Counter, slowest: list) -> int:
    code, err, seconds = run(argv)
    assert code in (0, 2), (argv, code, err)
    assert "Traceback" not in err and "internal error" not in err, (argv, err)
    if code == 2:
        assert err.count("\n") == 1 and err.startswith("llm-formulas: error: ") and len(err) < 700, (argv, err)
    else:
        slowest[0] = max(slowest[0], seconds)  # printed, never asserted: speed belongs in tests/benchmarks
    outcomes[code] += 1
    return code


# --- sweep specs ---------------------------------------------------------------------------------------------

NUMBERS = [8, 16, 64, 512, 0, -8, 2.5, 1e7, 10**7, 10**7 + 1, 10**8, 10**18, 10**400, 2**63, float("nan"), float("inf"),
           "8", "64", "7B", "1e100", "1e-100", "1/2", "0x10", "", " 8 ", "1e999", "１２", "9" * 120, True, None, [8], {"n": 8}]
RATIOS = [0.5, "1/2", 1, 0, 1.5, "0.3", -1, "nan", None, "x"]


def _spec(rng: random.Random) -> dict:
    from llm_formulas.formulas.data.gpus import PRESETS
    from llm_formulas.formulas.data.presets import names

    spec = {"models": rng.sample(names(), rng.choice([1, 1, 2])), "gpus": rng.sample(sorted(PRESETS), 1),
            "sizes": rng.sample([8, 16, 32, 64], rng.choice([1, 2])), "global_batch": rng.choice([8, 16, 64]),
            "seq": rng.choice([1024, 2048])}
    for _ in range(rng.choice([0, 1, 1, 2, 3])):
        key = rng.choice(["models", "gpus", "sizes", "global_batch", "seq", "tokens", "mfu", "overlap", "network", "top",
                          "max_tp", "extra", "sizes", "sizes"])
        if key in ("models", "gpus"):
            spec[key] = rng.choice([spec[key] * 2, ["gpt-5"], [], "llama2-7b", [7], spec[key] + ["\x1b[31m" * 30]])
        elif key == "sizes":
            spec[key] = rng.choice([[rng.choice(NUMBERS)], [8, 8], [8, "8"], [], 8, [rng.choice(NUMBERS), 16]])
        elif key in ("mfu", "overlap"):
            spec[key] = rng.choice(RATIOS)
        elif key == "extra":
            spec["x" * rng.choice([1, 200])] = 1
        else:
            spec[key] = rng.choice(NUMBERS)
    return spec


def _spec_text(rng: random.Random, spec: dict) -> tuple[str, str]:
    """The spec as JSON (now and then a key given twice, or cut short) or TOML."""
    if rng.random() < 0.15:
        lines = []
        for key, value in spec.items():
            if isinstance(value, (int, str, list)) and not isinstance(value, bool) and not (isinstance(value, int) and abs(value) > 2**62):
                lines.append(f"{key} = {json.dumps(value)}" if not isinstance(value, list) or all(
                    isinstance(v, (int, str)) and not isinstance(v, bool) for v in value) else f"{key} = 1")
        return "\n".join(lines), ".toml"
    text = json.dumps(spec)
    if rng.random() < 0.1:
        text = text[:-1] + ', "seq": "1e100"}'  # a second seq: the last one used to win
    if rng.random() < 0.05:
        text = text[: rng.randint(0, len(text))]
    return text, ".json"


def test_random_sweep_specs_end_in_a_table_or_one_line(tmp_path):
    rng = random.Random(27_2027)
    outcomes, slowest = Counter(), [0.0]
    for case in range(SPEC_CASES):
        text, suffix = _spec_text(rng, _spec(rng))
        path = tmp_path / f"spec{case % 5}{suffix}"
        path.write_text(text)
        out = tmp_path / rng.choice(["table.csv", "table.csv", "table.xlsx", "dir\nname\x1b[2J.csv"])
        judged(["sweep", str(path), "--out", str(out)], outcomes, slowest)
    print(f"\nsweep-spec fuzz: {SPEC_CASES} specs, outcomes {dict(outcomes)}, longest accepted {slowest[0]:.2f} s")
    assert outcomes[0] and outcomes[2]


# --- configs with huge counts --------------------------------------------------------------------------------

PRESET_CONFIGS = sorted((Path(__file__).resolve().parent.parent / "formulas" / "data" / "models").glob("*.json"))
COUNT_KEYS = ["num_hidden_layers", "n_layer", "hidden_size", "num_attention_heads", "num_key_value_heads", "intermediate_size",
              "vocab_size", "num_local_experts", "n_routed_experts", "num_experts", "num_experts_per_tok", "sliding_window",
              "max_position_embeddings", "head_dim", "first_k_dense_replace", "moe_intermediate_size", "kv_lora_rank",
              "num_nextn_predict_layers", "decoder_sparse_step", "interleave_moe_layer_step", "sliding_window_pattern"]
HUGE = [2**31, 2**31 + 1, 2**63, 10**40, 10**7, 10**5, 10_000, 10_001, 9_999, 4096, 1, 0, -1, 2.0, 1e308, "4096", None]


def _config_text(rng: random.Random) -> str:
    entry = json.loads(rng.choice(PRESET_CONFIGS).read_text())["config"]
    for _ in range(rng.choice([1, 1, 2, 3])):
        key = rng.choice(COUNT_KEYS)
        entry[key] = rng.choice(HUGE)
    if rng.random() < 0.1:  # a layer list as long as it claims (within the 1 MB a config may hold)
        entry["layer_types"] = ["full_attention"] * rng.choice([10_000, 10_001, 60_000])
    if rng.random() < 0.1:
        entry["moe_layers"] = list(range(rng.choice([100, 20_000])))
    text = json.dumps(entry)
    if rng.random() < 0.1:
        text = text[:-1] + f', "num_hidden_layers": {rng.choice([2**31, 4])}}}'  # a key twice
    return text


def _argv(rng: random.Random, path: str) -> list[str]:
    command = rng.choice(["params", "params", "kv-cache", "kv-cache", "flops", "estimate"])
    argv = [command, "--hf-config", path]
    if command in ("kv-cache", "flops"):
        argv += ["--batch", rng.choice(["1", "8", "1e7", "1e8"]), "--seq", rng.choice(["8", "4096", "1e9", "1e10"])]
    if command == "kv-cache" and rng.random() < 0.3:
        argv += ["--layout", rng.choice(["paged:16", "paged:1e9", "mla-expanded"])]
    if command == "estimate":
        argv += ["--gpu", "h100-sxm", "--seq", rng.choice(["2048", "1e9"]), "--mfu", "0.5",
                 "--tp", rng.choice(["1", "8"]), "--pp", rng.choice(["1", "4", "1e5"])]
    return argv + (["--json"] if rng.random() < 0.6 else [])


def test_configs_with_huge_counts_end_in_a_result_or_one_line(tmp_path):
    rng = random.Random(27_2031)
    outcomes, slowest = Counter(), [0.0]
    for case in range(CONFIG_CASES):
        path = tmp_path / f"config{case % 7}.json"
        path.write_text(_config_text(rng))
        judged(_argv(rng, str(path)), outcomes, slowest)
    print(f"\nconfig fuzz: {CONFIG_CASES} configs, outcomes {dict(outcomes)}, longest accepted {slowest[0]:.2f} s")
    assert outcomes[0] and outcomes[2]
