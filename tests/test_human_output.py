"""What a person reads: human units first, the exact value beside, ``--unit`` conversions, aligned tables."""

import re

import pytest

from helpers import cli_json, run


def test_eval_prints_the_human_value_then_the_exact_one(capsys):
    code, out, err = run(capsys, "eval", "flops.training.approx", "P=7e9", "D=2e12")
    # 6 · 7e9 · 2e12 = 8.4e22 FLOP = 84 ZFLOP (Z = 10²¹)
    assert code == 0 and out.strip() == (
        "flops.training.approx = 84 ZFLOP   (exactly 84,000,000,000,000,000,000,000 FLOP)"
    )


def test_eval_shows_a_duration_in_days(capsys):
    # 6ΨD/(nXU) = 6·7e9·2e12 / (1024 · 312e12 · 0.4) s = 657,301.68 s = 7.61 days
    code, out, _ = run(capsys, "eval", "cluster.training_time", "P=7e9", "D=2e12", "X=312e12", "U=0.4", "n=1024")
    assert code == 0 and out.startswith("cluster.training_time = 7.61 days") and "68359375/104" in out


def test_gpu_hours_are_labelled_gpu_hours_not_1(capsys):
    # 6·7e9·2e12 / (312e12 · 0.4) / 3600 = 186,965.8 GPU-hours
    code, out, _ = run(capsys, "eval", "cluster.gpu_hours", "P=7e9", "D=2e12", "X=312e12", "U=0.4")
    assert code == 0 and "= 186,966 GPU-hours" in out and " 1\n" not in out
    doc = cli_json(capsys, "eval", "cluster.gpu_hours", "P=7e9", "D=2e12", "X=312e12", "U=0.4")
    assert doc["counts"] == "GPU-hours"


def test_eval_unit_shows_three_significant_digits_then_the_exact_value(capsys):
    # 16 bytes × 7e9 = 112e9 B = 104.308… GiB: three digits, as every figure a person reads, the exact count beside it
    code, out, _ = run(capsys, "eval", "memory.zero", "P=7e9", "t=1", "p=1", "--unit", "GiB")
    assert code == 0 and out.strip() == "memory.zero = 104 GiB   (exactly 112,000,000,000 byte)"


@pytest.mark.parametrize(
    "argv, unit, expected",
    [
        # 16 bytes × 7e9 = 112e9 B = 112e9 / 2³⁰ GiB = 104.308 GiB
        (["memory.zero", "P=7e9", "t=1", "p=1"], "GiB", 112e9 / 2**30),
        (["memory.zero", "P=7e9", "t=1", "p=1"], "GB", 112.0),
        (["flops.training.approx", "P=7e9", "D=2e12"], "PFLOP", 84e6),  # 8.4e22 / 1e15
        (["flops.training.approx", "P=7e9", "D=2e12"], "TFLOP", 84e9),
        (["cluster.training_time", "P=7e9", "D=2e12", "X=312e12", "U=0.4", "n=1024"], "hours", 657301.6826923077 / 3600),
        (["cluster.training_time", "P=7e9", "D=2e12", "X=312e12", "U=0.4", "n=1024"], "days", 657301.6826923077 / 86400),
    ],
)
def test_eval_unit_converts(capsys, argv, unit, expected):
    doc = cli_json(capsys, "eval", *argv, "--unit", unit)
    assert doc["converted"]["unit"] == unit
    assert doc["converted"]["value"] == pytest.approx(expected, rel=1e-12)
    assert isinstance(doc["value"], (int, float)) and doc["unit"] in ("byte", "FLOP", "second")  # the exact value stays
    code, out, _ = run(capsys, "eval", *argv, "--unit", unit)
    assert code == 0 and f" {unit}   (exactly " in out


@pytest.mark.parametrize(
    "argv, unit, message",
    [
        (["cluster.training_time", "P=7e9", "D=2e12", "X=312e12", "U=0.4", "n=1024"], "GB", "cannot show a value in second as GB"),
        (["memory.zero", "P=7e9", "t=1", "p=1"], "days", "cannot show a value in byte as days"),
        (["flops.training.approx", "P=7e9", "D=2e12"], "GiB", "cannot show a value in FLOP as GiB"),
        (["flops.training.approx", "P=7e9", "D=2e12"], "parsecs", "--unit 'parsecs': unknown unit"),
    ],
)
def test_eval_refuses_a_unit_of_another_dimension(capsys, argv, unit, message):
    code, out, err = run(capsys, "eval", *argv, "--unit", unit)
    assert code == 2 and out == "" and err.count("\n") == 1 and message in err


def test_flops_is_an_aligned_labelled_table_whose_columns_add_up(capsys):
    code, out, _ = run(capsys, "flops", "--model", "llama2-7b", "--batch", "8", "--seq", "4096")
    lines = out.splitlines()
    assert code == 0 and "one step of b=8 sequences of s=4096 tokens" in lines[0]
    table = lines[1:-1]
    assert table[0].split() == ["component", "forward", "backward", "training"]
    assert len({len(line) for line in table}) == 1  # every row as wide: the columns line up
    assert table[-1].split()[0] == "total"
    # FlopCounterMode's Llama-2-7B forward at b = 8, s = 4096 (tests/test_architecture_flops.py measures the formula):
    # 503,370,167,091,200 FLOP = 503 TFLOP; backward twice that, training three times
    assert re.sub(r"\s+", " ", table[-1]) == "total 503 TFLOP 1.01 PFLOP 1.51 PFLOP"
    doc = cli_json(capsys, "flops", "--model", "llama2-7b", "--batch", "8", "--seq", "4096")
    assert sum(doc["components"].values()) == doc["forward"] == 503_370_167_091_200
    assert doc["backward"] == 2 * doc["forward"] and doc["training"] == 3 * doc["forward"]


def test_estimate_states_its_assumptions_and_leaves_out_unused_dimensions(capsys):
    argv = ["estimate", "--model", "llama2-7b", "--gpu", "a100-80gb", "--dp", "64", "--zero", "3", "--global-batch", "512",
            "--seq", "4096"]
    code, out, _ = run(capsys, *argv, "--mfu", "0.5")
    assert code == 0
    assert "assumes: MFU U = 50 % (given), communication hidden under 50 % of compute, 135B tokens (20 per parameter)" in out
    assert "network 25 GB/s per GPU" in out and "2 bytes" in out  # 135B = 20 × 6.74B (Hoffmann et al. 2022)
    code, predicted, _ = run(capsys, *argv)
    assert code == 0 and "assumes: step time predicted from the GPU's performance constants" in predicted
    assert "  DP  " in out and "  TP  " not in out and "  PP  " not in out and "bubble" not in out
    step = next(line for line in predicted.splitlines() if line.startswith("  step "))  # no 0 s parts at t = p = 1
    assert "DP/ZeRO exposed" in step and "TP " not in step and "PP p2p" not in step and "bubble" not in step
    assert "GQA" not in out.splitlines()[1]  # Llama-2-7B has no GQA (Touvron et al. 2023 §2.2: 34B and 70B only)
    assert "per GPU 105M (ZeRO-3 shard)" in out  # 6,738,415,616 / 64 = 105.3M
    for figure in ("tokens/s per GPU", "MFU", "HFU", "GPU-hours", "left", "largest micro-batch that fits"):
        assert figure in out and figure in predicted


def test_a_layout_that_does_not_fit_is_a_verdict_exit_0(capsys):
    # GPT-3 175B on 8 A100-40GB without ZeRO: 16 bytes × 175e9 / 8 = 350 GB of model states per GPU
    code, out, _ = run(capsys, "estimate", "--model", "gpt3-175b", "--gpu", "a100-40gb", "--tp", "8", "--seq", "2048")
    assert code == 0 and "DOES NOT FIT" in out and "largest micro-batch that fits: 0" in out


def test_json_keeps_exact_values_and_names_their_units(capsys):
    # Done-when of issue 12: 6 · 7e9 · 2e12 = 8.4e22, exactly, with its unit
    doc = cli_json(capsys, "eval", "flops.training.approx", "P=7B", "D=2T")
    assert doc["value"] == 84 * 10**21 and doc["unit"] == "FLOP"
    report = cli_json(capsys, "estimate", "--model", "llama2-7b", "--gpu", "a100-80gb", "--seq", "4096")
    units = report["units"]
    assert (units["memory.total"], units["time.step_seconds"], units["time.gpu_hours"], units["flops.training"]) == (
        "byte", "second", "GPU-hour", "FLOP")
    assert report["params"]["total"] == 6_738_415_616  # an exact integer, not a rounded float
    assert cli_json(capsys, "flops", "--model", "llama2-7b", "--batch", "1", "--seq", "8")["unit"] == "FLOP"
    assert cli_json(capsys, "params", "--model", "llama2-7b")["unit"] == "parameter"


def test_estimate_and_plan_offer_flash_attention(capsys):
    for command in ("estimate", "plan"):
        code, out, _ = run(capsys, command, "--help")  # argparse prints the help; main returns 0
        assert code == 0 and "--attention {eager,flash}" in out and "FlashAttention" in out
    eager = cli_json(capsys, "plan", "--model", "llama2-7b", "--gpu", "a100-40gb", "--gpus", "8", "--global-batch", "64",
                     "--seq", "16384", "--top", "1")
    flash = cli_json(capsys, "plan", "--model", "llama2-7b", "--gpu", "a100-40gb", "--gpus", "8", "--global-batch", "64",
                     "--seq", "16384", "--top", "1", "--attention", "flash")
    # at s = 16k eager attention must recompute its s² scores to fit; flash stores none: no recompute, a faster step
    assert flash["attention"] == "flash" and flash["ranked"][0]["layout"]["recompute"] == "none"
    assert flash["ranked"][0]["step_seconds"] < eager["ranked"][0]["step_seconds"]
