"""The GPUs people serve and train on (issue 33 item 3, issue 34 item 6): each preset's figures against the numbers its
vendor prints, written out here with the document in a comment (dense: a figure printed only with sparsity, marked *,
is halved; bytes decimal; links both directions); FP8 and FP4 exactly where the datasheets give them; every command
accepts each new ``--gpu``, and a GPU without FP8 tensor cores refuses FP8 in one line.
"""

from fractions import Fraction

import pytest

from helpers import cli_json, run
from llm_formulas.formulas.data.gpus import NODE_SIZE, PRESETS, gpu

T, G = 10**12, 10**9
NEW = ("rtx3090", "rtx3090ti", "rtx5090", "rtx-a6000", "l4", "l40s", "a10", "h100-nvl", "h200-nvl", "b200", "gb200", "mi300x")

# key: bf16, fp16, tf32, fp32, fp8, fp4, int8, memory, bandwidth, nvlink (or other GPU-to-GPU link), pcie, board power W,
# GPUs one NVLink domain joins
FIGURES = {
    # NVIDIA GA102 whitepaper v2, Appendix A (RTX 3090): BF16 and FP16 with FP32 accumulate 71/142, FP16 with FP16
    # accumulate 142/284, TF32 35.6/71, FP32 35.6 TFLOPS, INT8 284/568 TOPS; 24 GB GDDR6X 936 GB/s; 350 W;
    # NVLink 112.5 GB/s total (2 cards); PCIe Gen4 x16 64 GB/s
    "rtx3090": (71 * T, 142 * T, Fraction(356, 10) * T, Fraction(356, 10) * T, None, None, 284 * T, 24 * G, 936 * G,
                Fraction(1125, 10) * G, 64 * G, 350, 2),
    # NVIDIA RTX 3090 Ti page: 40 shader TFLOPS, 320 tensor TFLOPS (FP16, sparse: 160 dense, 80 with FP32 accumulate
    # at GA102 GeForce's half rate), 1,008 GB/s (21 Gbps × 384 bits / 8), 450 W; no NVLink figure: PCIe Gen4 x16
    "rtx3090ti": (80 * T, 160 * T, 40 * T, 40 * T, None, None, 320 * T, 24 * G, 1008 * G, None, 64 * G, 450, 1),
    # NVIDIA RTX Blackwell whitepaper (RTX 5090): BF16/FP16 with FP32 accumulate 209.5/419, FP16 with FP16 accumulate
    # 419/838, TF32 104.8/209.5, FP32 104.8, FP8 838/1,676, FP4 1,676/3,352 TFLOPS, INT8 838/1,676 TOPS; 32 GB GDDR7
    # 1,792 GB/s; 575 W; PCIe Gen5 x16 128 GB/s; no NVLink
    "rtx5090": (Fraction(2095, 10) * T, 419 * T, Fraction(1048, 10) * T, Fraction(1048, 10) * T, 838 * T, 1676 * T,
                838 * T, 32 * G, 1792 * G, None, 128 * G, 575, 1),
    # NVIDIA RTX A6000 datasheet and GA102 whitepaper Appendix C: FP16/BF16 154.8/309.7, TF32 77.4/154.8, FP32 38.7
    # TFLOPS, INT8 309.7 TOPS; 48 GB GDDR6 768 GB/s; NVLink 112.5 GB/s bidirectional (2 cards); PCIe Gen4; 300 W
    "rtx-a6000": (Fraction(1548, 10) * T, Fraction(1548, 10) * T, Fraction(774, 10) * T, Fraction(387, 10) * T, None, None,
                  Fraction(3097, 10) * T, 48 * G, 768 * G, Fraction(1125, 10) * G, 64 * G, 300, 2),
    # NVIDIA L4 datasheet: FP16/BF16 242*, TF32 120*, FP32 30.3, FP8 485* TFLOPS, INT8 485* TOPS; 24 GB 300 GB/s; 72 W;
    # PCIe Gen4 x16 64 GB/s
    "l4": (121 * T, 121 * T, 60 * T, Fraction(303, 10) * T, Fraction(4850, 20) * T, None, Fraction(485, 2) * T, 24 * G,
           300 * G, None, 64 * G, 72, 1),
    # NVIDIA L40S datasheet: BF16/FP16 362.05 | 733*, TF32 183 | 366*, FP32 91.6, FP8 733 | 1,466* TFLOPS, INT8 733 TOPS;
    # 48 GB GDDR6 864 GB/s; PCIe Gen4 x16 64 GB/s; 350 W
    "l40s": (Fraction(36205, 100) * T, Fraction(36205, 100) * T, 183 * T, Fraction(916, 10) * T, 733 * T, None, 733 * T,
             48 * G, 864 * G, None, 64 * G, 350, 1),
    # NVIDIA A10 datasheet: BF16/FP16 125 | 250*, TF32 62.5 | 125*, FP32 31.2 TFLOPS, INT8 250 | 500* TOPS; 24 GB GDDR6
    # 600 GB/s; PCIe Gen4 64 GB/s; 150 W
    "a10": (125 * T, 125 * T, Fraction(625, 10) * T, Fraction(312, 10) * T, None, None, 250 * T, 24 * G, 600 * G, None,
            64 * G, 150, 1),
    # NVIDIA H100 datasheet, H100 NVL: BF16/FP16 1,671*, TF32 835*, FP32 60, FP8 3,341* TFLOPS, INT8 3,341* TOPS; 94 GB
    # 3.9 TB/s; NVLink 600 GB/s; PCIe Gen5 128 GB/s; 350-400 W
    "h100-nvl": (Fraction(1671, 2) * T, Fraction(1671, 2) * T, Fraction(835, 2) * T, 60 * T, Fraction(3341, 2) * T, None,
                 Fraction(3341, 2) * T, 94 * G, 3900 * G, 600 * G, 128 * G, 400, 2),
    # NVIDIA H200 datasheet, H200 NVL: the H100 NVL's compute; 141 GB 4.8 TB/s; 2- or 4-way NVLink bridge 900 GB/s;
    # PCIe Gen5 128 GB/s; up to 600 W
    "h200-nvl": (Fraction(1671, 2) * T, Fraction(1671, 2) * T, Fraction(835, 2) * T, 60 * T, Fraction(3341, 2) * T, None,
                 Fraction(3341, 2) * T, 141 * G, 4800 * G, 900 * G, 128 * G, 600, 4),
    # NVIDIA Blackwell technical brief, HGX B200 per GPU at 1,000 W: FP16/BF16 4.5*, TF32 2.2*, FP8 9*, FP4 18* PFLOPS,
    # FP32 80 TFLOPS, INT8 9* POPS, 8 TB/s, NVLink 1.8 TB/s; DGX B200 datasheet: 1,440 GB over 8 GPUs
    "b200": (2250 * T, 2250 * T, 1100 * T, 80 * T, 4500 * T, 9000 * T, 4500 * T, 180 * G, 8000 * G, 1800 * G, 128 * G, 1000,
             8),
    # NVIDIA GB200 NVL72 datasheet, one superchip (2 GPUs): FP16/BF16 10*, TF32 5*, FP8 20*, FP4 40* PFLOPS, 372 GB,
    # 16 TB/s, NVLink 3.6 TB/s; Blackwell brief, GB200 at 1,200 W: FP32 90 TFLOPS; 72 GPUs on one NVLink domain
    "gb200": (2500 * T, 2500 * T, 1250 * T, 90 * T, 5000 * T, 10000 * T, 5000 * T, 186 * G, 8000 * G, 1800 * G, 128 * G,
              1200, 72),
    # AMD Instinct MI300X data sheet (dense figures): FP16/BF16 1,307.4, TF32 653.7, FP32 163.4, FP8 2,614.9 TFLOPS, INT8
    # 2,614.9 TOPS; 192 GB HBM3 5.3 TB/s; Infinity Fabric 896 GB/s aggregate; PCIe Gen5 x16 128 GB/s; 750 W; 8 per platform
    "mi300x": (Fraction(13074, 10) * T, Fraction(13074, 10) * T, Fraction(6537, 10) * T, Fraction(1634, 10) * T,
               Fraction(26149, 10) * T, None, Fraction(26149, 10) * T, 192 * G, 5300 * G, 896 * G, 128 * G, 750, 8),
}


@pytest.mark.parametrize("key", NEW)
def test_each_new_preset_prints_its_datasheet(key):
    bf16, fp16, tf32, fp32, fp8, fp4, int8, memory, bandwidth, nvlink, pcie, tdp, node = FIGURES[key]
    preset = gpu(key)
    assert (preset.bf16, preset.fp16, preset.tf32, preset.fp32) == (bf16, fp16, tf32, fp32)
    assert (preset.fp8, preset.fp4, preset.int8) == (fp8, fp4, int8)
    assert (preset.memory, preset.memory_bandwidth, preset.nvlink, preset.pcie) == (memory, bandwidth, nvlink, pcie)
    assert preset.tdp == tdp and NODE_SIZE[key] == node
    assert preset.sources and all(source.where for source in preset.sources)


def test_existing_keys_stay_and_every_preset_has_a_node():
    assert set(NEW) | {"a100-40gb", "a100-80gb", "a100-pcie", "a800", "h100-sxm", "h100-pcie", "h800", "h200", "rtx4090"} \
        == set(PRESETS) == set(NODE_SIZE)


def test_fp4_exactly_where_a_datasheet_gives_it():
    # FP4 tensor cores are Blackwell's: the RTX Blackwell whitepaper (RTX 5090) and the Blackwell brief (B200, GB200)
    assert {key for key, preset in PRESETS.items() if preset.fp4 is not None} == {"rtx5090", "b200", "gb200"}
    with pytest.raises(ValueError, match="no fp4 peak"):
        gpu("h100-sxm").flops("fp4")
    assert gpu("b200").flops("fp4") == 2 * gpu("b200").flops("fp8")  # 18* against 9* PFLOPS


def test_fp8_exactly_where_a_datasheet_gives_it():
    # Ampere (A100, A800, RTX 3090/3090 Ti, RTX A6000, A10) has no FP8 tensor cores; Ada, Hopper, Blackwell, CDNA 3 do
    ampere = {"a100-40gb", "a100-80gb", "a100-pcie", "a800", "rtx3090", "rtx3090ti", "rtx-a6000", "a10"}
    assert {key for key, preset in PRESETS.items() if preset.fp8 is None} == ampere


def test_the_a10_says_why_it_is_not_the_a10g():
    assert "A10G" in gpu("a10").notes and "a10g" not in PRESETS


@pytest.mark.parametrize("key", NEW)
def test_serve_accepts_each_new_gpu(capsys, key):
    doc = cli_json(capsys, "serve", "--model", "llama2-7b", "--gpu", key, "--batch", "1", "--input", "500", "--output", "100")
    assert doc["gpu"] == key and doc["gpus"] == 1
    bandwidth = FIGURES[key][8]  # a decoding step cannot read its bytes faster than the datasheet's memory bandwidth
    assert bandwidth * Fraction(doc["tpot_seconds"]) >= doc["decode_bytes_per_step"]


@pytest.mark.parametrize("key", ["b200", "l40s", "rtx3090"])
def test_estimate_and_plan_accept_a_new_gpu(capsys, key):
    doc = cli_json(capsys, "estimate", "--model", "llama2-7b", "--gpu", key, "--seq", "2048", "--mfu", "0.4")
    assert gpu(key).name in str(doc)
    code, out, err = run(capsys, "plan", "--model", "llama2-7b", "--gpu", key, "--gpus", "8", "--global-batch", "64",
                         "--seq", "2048", "--mfu", "0.4")
    assert code == 0, err
    assert gpu(key).name in out


@pytest.mark.parametrize("key", ["rtx3090", "rtx-a6000", "a10"])
def test_a_gpu_without_fp8_refuses_fp8_in_one_line(capsys, key):
    code, out, err = run(capsys, "serve", "--model", "llama2-7b", "--gpu", key, "--batch", "1", "--input", "500",
                         "--output", "100", "--weights", "fp8")
    assert code == 2 and out == "" and err.count("\n") == 1
    assert gpu(key).name in err and "FP8" in err


def test_the_commands_guide_lists_every_preset():
    import re
    from pathlib import Path

    import llm_formulas.render.documents as documents

    guide = (Path(documents.__file__).parent / "guide" / "commands.md").read_text(encoding="utf-8")
    listing = guide[guide.index("GPU presets:"):guide.index("(dense FLOP/s at BF16")]
    assert set(re.findall(r"\b[a-z][a-z-]*\d[a-z0-9-]*\b", listing)) == set(PRESETS)


def test_the_sizing_page_offers_every_preset_with_its_node_and_fp8():
    from llm_formulas.render.documents.calculator import presets, serving_tables

    offered, tables = presets()["gpus"], serving_tables((), ())["gpus"]
    assert set(offered) == {preset.name for preset in PRESETS.values()} == set(tables)
    for key, preset in PRESETS.items():
        assert tables[preset.name]["node"] == NODE_SIZE[key] == FIGURES.get(key, (NODE_SIZE[key],))[-1]
        assert tables[preset.name]["fp8"] == (preset.fp8 is not None)
        assert float(offered[preset.name]["values"]["W_mem"]) == float(preset.memory_bandwidth)


@pytest.mark.parametrize("command", ["estimate", "plan"])
def test_fp8_training_on_a_gpu_without_fp8_is_refused_in_one_line(capsys, command):
    # the A10 and the A100 are Ampere: their datasheets give no FP8 tensor-core peak (an A100 FP8 run used to be priced)
    for key in ("a10", "a100-80gb"):
        argv = [command, "--model", "llama2-7b", "--gpu", key, "--seq", "2048", "--mfu", "0.4", "--precision", "fp8"]
        argv += ["--gpus", "8", "--global-batch", "64"] if command == "plan" else []
        code, out, err = run(capsys, *argv)
        assert code == 2 and out == "" and err.count("\n") == 1, err
        assert gpu(key).name in err and "no FP8 tensor cores" in err
