"""GPU presets: datasheet figures, and the sources' cases (S11, S14) recomputed from the presets.

Expected figures are NVIDIA's datasheet numbers written out here (sparse figures
halved where the datasheet prints only the 2:4-sparsity number) and 001's figures.
"""

from fractions import Fraction

import pytest
import sympy as sp

from llm_formulas.formulas.vocabulary.catalogue import get
from llm_formulas.formulas.data.gpus import PRESETS, gpu
from llm_formulas.formulas.vocabulary.symbols import M_gpu, W_link, W_mem, X, h, q, q_w

T, G = 10**12, 10**9


def test_every_requested_preset_exists_with_sources():
    assert {"a100-40gb", "a100-80gb", "a100-pcie", "a800", "h100-sxm", "h100-pcie", "h800", "h200", "rtx4090"} <= set(PRESETS)
    for preset in PRESETS.values():
        assert preset.sources, preset.key
        for figure in (preset.bf16, preset.fp16, preset.tf32, preset.fp32, preset.memory, preset.memory_bandwidth, preset.pcie):
            assert isinstance(figure, sp.Rational) and figure > 0, preset.key
        assert preset.fp32 <= preset.tf32 <= max(preset.bf16, preset.fp16), preset.key


@pytest.mark.parametrize("key, bf16, tf32, fp32, memory, bandwidth, nvlink, pcie", [
    # A100 datasheet: 312 / 156 / 19.5 TFLOPS; 40 GB at 1,555 GB/s, 80 GB at 2,039 GB/s; NVLink 600; PCIe Gen4 64 GB/s
    ("a100-40gb", 312 * T, 156 * T, Fraction(195, 10) * T, 40 * G, 1555 * G, 600 * G, 64 * G),
    ("a100-80gb", 312 * T, 156 * T, Fraction(195, 10) * T, 80 * G, 2039 * G, 600 * G, 64 * G),
    ("a800", 312 * T, 156 * T, Fraction(195, 10) * T, 80 * G, 2039 * G, 400 * G, 64 * G),
    # H100 datasheet: SXM BF16 1,979* and TF32 989* (sparse), FP32 67; 3.35 TB/s; NVLink 900; PCIe Gen5 128
    ("h100-sxm", Fraction(1979, 2) * T, Fraction(989, 2) * T, 67 * T, 80 * G, 3350 * G, 900 * G, 128 * G),
    # H100 PCIe: BF16 1,513*, TF32 756*, FP32 51; 2 TB/s; NVLink bridge 600
    ("h100-pcie", Fraction(1513, 2) * T, 378 * T, 51 * T, 80 * G, 2000 * G, 600 * G, 128 * G),
    ("h800", Fraction(1979, 2) * T, Fraction(989, 2) * T, 67 * T, 80 * G, 3350 * G, 400 * G, 128 * G),
    # H200: 141 GB HBM3e at 4.8 TB/s, Hopper compute
    ("h200", Fraction(1979, 2) * T, Fraction(989, 2) * T, 67 * T, 141 * G, 4800 * G, 900 * G, 128 * G),
    # Ada whitepaper: BF16 (FP32 accumulate) 165.2, TF32 82.6, FP32 82.6; 24 GB at 1,008 GB/s; no NVLink; PCIe Gen4
    ("rtx4090", Fraction(1652, 10) * T, Fraction(826, 10) * T, Fraction(826, 10) * T, 24 * G, 1008 * G, None, 64 * G),
])
def test_datasheet_figures(key, bf16, tf32, fp32, memory, bandwidth, nvlink, pcie):
    preset = gpu(key)
    assert (preset.bf16, preset.tf32, preset.fp32) == (bf16, tf32, fp32)
    assert (preset.memory, preset.memory_bandwidth, preset.nvlink, preset.pcie) == (memory, bandwidth, nvlink, pcie)


def test_the_sources_figures_agree_with_the_presets():
    # 001: 4090 "FP16 only 330 Tflops", H100 989 Tflops; 000/002: A100 312 TFLOPS; 001: H800 NVLink 400 GB/s.
    assert abs(gpu("rtx4090").flops("fp16") - 330 * T) / (330 * T) < Fraction(1, 1000)
    assert abs(gpu("h100-sxm").flops() - 989 * T) / (989 * T) < Fraction(1, 1000)
    assert gpu("a100-80gb").flops() == 312 * T
    assert gpu("h800").link() == 400 * G and gpu("h100-sxm").link("pcie") == 128 * G
    assert gpu("rtx4090").link() == 64 * G  # no NVLink: PCIe Gen4 x16
    assert gpu("rtx4090").values()[M_gpu] == 24 * G


@pytest.mark.parametrize("key, precision, link, sources_exact", [
    ("rtx4090", "fp16", "nvlink", "2.38"),  # SOURCES.md S11: 2.38 / 11.18 / 4.97 / 1.59
    ("h100-sxm", "bf16", "nvlink", "11.18"),
    ("h800", "bf16", "nvlink", "4.97"),
    ("h100-sxm", "bf16", "pcie", "1.59"),
])
def test_presets_reproduce_s11(key, precision, link, sources_exact):
    values = {**gpu(key).values(precision, link), h: 8192, q: 2}
    bound = get("comms.tp.max_degree").expr.subs(values)
    assert f"{float(bound):.2f}" == sources_exact


def test_presets_give_the_balance_batches_of_s14():
    balance = get("inference.balance_batch").expr
    h100 = balance.subs({**gpu("h100-sxm").values(), q_w: 2})
    assert round(h100) == 295  # 001: 989 / 3.35 = 295
    rtx = balance.subs({**gpu("rtx4090").values("fp16"), q_w: 2})
    assert rtx == Fraction(3303, 10) / Fraction(1008, 1000)  # 327.7: 001 rounds 1,008 GB/s to 1 TB/s and gets 330
    assert round(rtx) == 328


def test_values_feed_the_formulas_symbols():
    values = gpu("a100-80gb").values("tf32", "pcie")
    assert values == {X: 156 * T, W_mem: 2039 * G, W_link: 64 * G, M_gpu: 80 * G}


def test_unknown_gpu_names_the_known_ones():
    with pytest.raises(KeyError, match="h100-sxm"):
        gpu("h100")


def test_fp8_int8_fp64_and_board_power_as_the_datasheets_print_them():
    from llm_formulas.formulas.data.gpus import gpu

    # H100 SXM datasheet: FP8 3,958 TFLOPS and INT8 3,958 TOPS with sparsity (dense: half),
    # FP64 Tensor Core 67 TFLOPS, up to 700 W
    h100 = gpu("h100-sxm")
    assert h100.flops("fp8") == 1979 * 10**12 and h100.flops("int8") == 1979 * 10**12
    assert h100.flops("fp64") == 67 * 10**12 and h100.tdp == 700
    # A100 80 GB PCIe datasheet: the SXM's compute, 1,935 GB/s, 300 W; INT8 624 TOPS dense
    pcie = gpu("a100-pcie")
    assert pcie.memory_bandwidth == 1935 * 10**9 and pcie.tdp == 300 and pcie.flops("int8") == 624 * 10**12
    # Ampere has no FP8 tensor cores: asking for it is an error, not a silent number
    with pytest.raises(ValueError, match="no fp8 peak"):
        pcie.flops("fp8")
