"""GPU presets: peak dense FLOP/s, memory and links, from the vendors' datasheets (NVIDIA's, and AMD's for the MI300X).

Every figure is dense (NVIDIA's datasheets print the 2:4-sparsity figure,
twice the dense one, and mark it with an asterisk: the dense figure here is that
number halved). Bytes are decimal (80 GB = 80e9), bandwidths are the totals
NVIDIA prints, both directions together (NVLink 900 GB/s = 450 each way; PCIe
Gen4 x16 64 GB/s = 32 each way; the MI300X's Infinity Fabric 896 GB/s aggregate in the
``nvlink`` field), which is what ``W_link`` means in ``comms.tp.max_degree``. The sources' own figures (001: RTX 4090 330 TFLOPS and
64 GB/s, H100 989 TFLOPS and 900 GB/s, H800 400 GB/s, H100 PCIe Gen5 128 GB/s;
000/002: A100 312 TFLOPS) agree with these to the digits they print.
FP8 and INT8 are tensor-core peaks (dense), FP64 the FP64 tensor-core peak, and
``tdp`` the board power the datasheet prints (the maximum where it gives a range);
a GPU without FP8 tensor cores (Ampere) has none. ``fp4`` is the FP4 tensor-core peak (dense) where the
datasheet prints one (Blackwell: B200, GB200, RTX 5090), None elsewhere.

GeForce cards (RTX 3090, 3090 Ti, 4090, 5090) run FP16 and BF16 with FP32 accumulation, the mode training and
inference frameworks use, at half their FP16-accumulate rate: ``bf16`` is that figure and ``fp16`` the FP16-accumulate
one the whitepapers headline; professional and data-center cards run both at one rate. Where a vendor prints the dense
figure itself (the L40S, the GeForce whitepapers' "dense/sparse" pairs, AMD's MI300X) that figure is taken as printed.
Presets cover every GPU with a citable datasheet; there is none for AWS's A10G (neither NVIDIA nor AWS publishes its
tensor-core peaks: the A10 stands in, its note says so) nor for the 96 GB / 500 W H100 some benchmarks ran (no
vendor datasheet found).

The figures themselves are plain numbers in formulas/data/gpu_specs.py (``plan`` and ``sweep`` read them without SymPy);
this module makes each preset's figures exact SymPy Rationals and gives it its sources.
"""

from __future__ import annotations

from dataclasses import dataclass, fields

import sympy as sp

from llm_formulas.formulas.vocabulary.catalogue import Source
from llm_formulas.formulas.data.gpu_specs import NODE_SIZE, SPECS, GPUSpec, Link, Precision
from llm_formulas.formulas.vocabulary.symbols import M_gpu, W_link, W_mem, X

__all__ = ["GPU", "NODE_SIZE", "PRESETS", "Link", "Precision", "gpu"]

A100_DATASHEET = Source(
    "nvidia-a100",
    "SXM4: FP64 Tensor Core 19.5, FP32 19.5, TF32 156 (312*), BF16/FP16 312 (624*) TFLOPS, INT8 624 (1,248*) TOPS; "
    "40 GB HBM2 1,555 GB/s; 80 GB HBM2e 2,039 GB/s; NVLink 600 GB/s; PCIe Gen4 64 GB/s; max TDP 400 W. "
    "PCIe 80 GB: the same compute, 1,935 GB/s, NVLink bridge for 2 GPUs 600 GB/s, 300 W",
)
A800_NEWS = Source(
    "reuters-a800",
    "an A100 80 GB whose NVLink is cut from 600 to 400 GB/s; compute and memory unchanged",
)
H100_DATASHEET = Source(
    "nvidia-h100",
    "SXM: FP64 Tensor Core 67, FP32 67, TF32 989*, BF16/FP16 1,979*, FP8 3,958* TFLOPS, INT8 3,958* TOPS, 80 GB 3.35 TB/s, "
    "NVLink 900 GB/s, PCIe Gen5 128 GB/s, up to 700 W; "
    "PCIe: FP64 Tensor Core 51, FP32 51, TF32 756*, BF16/FP16 1,513*, FP8 3,026* TFLOPS, INT8 3,026* TOPS, 80 GB 2 TB/s, "
    "NVLink bridge 600 GB/s, PCIe Gen5 128 GB/s, 300-350 W (* with sparsity)",
)
H800_NEWS = Source(
    "reuters-h800",
    "an H100 SXM with NVLink cut from 900 to 400 GB/s",
)
H200_DATASHEET = Source(
    "nvidia-h200",
    "SXM: 141 GB HBM3e at 4.8 TB/s, NVLink 900 GB/s, PCIe Gen5 128 GB/s, up to 700 W; Hopper compute as the H100 SXM",
)
ADA_WHITEPAPER = Source(
    "nvidia-ada",
    "FP32 82.6; TF32 82.6 (165.2*); FP16 with FP16 accumulate 330.3 (660.6*); BF16/FP16 with FP32 accumulate "
    "165.2 (330.4*) TFLOPS; FP8 with FP16 accumulate 660.6 (1,321.2*) TFLOPS; INT8 660.6 (1,321.2*) TOPS; "
    "24 GB GDDR6X 1,008 GB/s; no NVLink; PCIe Gen4 x16; total graphics power 450 W",
)
GA102_WHITEPAPER = Source(
    "nvidia-ga102",
    "Appendix A, GeForce RTX 3090: FP32 35.6; FP16 Tensor with FP16 Accumulate 142/284; FP16 and BF16 Tensor with FP32 "
    "Accumulate 71/142; TF32 Tensor 35.6/71 TFLOPS; INT8 Tensor 284/568 TOPS (dense/sparse); 24 GB GDDR6X 936 GB/s; TGP "
    "350 W; NVLink: four x4 links, 56.25 GB/s each direction, 112.5 GB/s total (2 cards); PCIe Gen4. Appendix C, RTX A6000: "
    "FP32 38.7; FP16 Tensor with FP16 or FP32 Accumulate and BF16 154.8/309.7; TF32 77.4/154.8 TFLOPS; INT8 309.7/619.4 TOPS",
)
RTX3090TI_SPECS = Source(
    "nvidia-rtx3090ti",
    "RTX 3090 Ti: 40 shader TFLOPS, 320 tensor TFLOPS (FP16, with sparsity), 24 GB GDDR6X at 21 Gbps on 384 bits "
    "(1,008 GB/s), 450 W total graphics power, PCIe Gen4",
)
RTX_BLACKWELL_WHITEPAPER = Source(
    "nvidia-rtx-blackwell",
    "GeForce RTX 5090: FP32 104.8; FP16 Tensor with FP16 Accumulate 419/838; FP16 and BF16 with FP32 Accumulate "
    "209.5/419; TF32 104.8/209.5; FP8 with FP16 Accumulate 838/1,676; FP4 1,676/3,352 TFLOPS (3,352 AI TOPS); INT8 "
    "838/1,676 TOPS (dense/sparse); 32 GB GDDR7 1,792 GB/s; total graphics power 575 W; PCIe Gen5 x16; no NVLink",
)
A6000_DATASHEET = Source(
    "nvidia-rtx-a6000",
    "48 GB GDDR6 with ECC, 768 GB/s; single-precision 38.7, tensor 309.7 TFLOPS (sparse FP16); NVLink 2-way, 112.5 GB/s "
    "(bidirectional); PCIe Gen4 x16; max power 300 W",
)
L4_DATASHEET = Source(
    "nvidia-l4",
    "FP32 30.3; TF32 Tensor Core 120*; FP16 and BF16 Tensor Core 242*; FP8 Tensor Core 485* TFLOPS; INT8 485* TOPS "
    "(* with sparsity); 24 GB, 300 GB/s; PCIe Gen4 x16 64 GB/s; max power 72 W",
)
L40S_DATASHEET = Source(
    "nvidia-l40s",
    "FP32 91.6; TF32 Tensor Core 183 | 366*; BFLOAT16 and FP16 Tensor Core 362.05 | 733*; FP8 Tensor Core 733 | 1,466* "
    "TFLOPS; INT8 733 | 1,466* TOPS (* with sparsity); 48 GB GDDR6 with ECC, 864 GB/s; PCIe Gen4 x16 64 GB/s "
    "bidirectional; max power 350 W; no NVLink",
)
A10_DATASHEET = Source(
    "nvidia-a10",
    "FP32 31.2; TF32 Tensor Core 62.5 | 125*; BFLOAT16 and FP16 Tensor Core 125 | 250* TFLOPS; INT8 250 | 500* TOPS "
    "(* with sparsity); 24 GB GDDR6, 600 GB/s; PCIe Gen4 64 GB/s; max power 150 W",
)
AWS_G5 = Source("aws-g5", "G5 instances use NVIDIA A10G Tensor Core GPUs with 24 GB each; no tensor-core peaks published")
H100_NVL_DATASHEET = Source(
    "nvidia-h100",
    "H100 NVL: FP64 Tensor Core 60, FP32 60, TF32 835*, BF16/FP16 1,671*, FP8 3,341* TFLOPS, INT8 3,341* TOPS, 94 GB, "
    "3.9 TB/s, NVLink 600 GB/s, PCIe Gen5 128 GB/s, 350-400 W (configurable) (* with sparsity)",
)
H200_NVL_DATASHEET = Source(
    "nvidia-h200",
    "H200 NVL: FP64 Tensor Core 60, FP32 60, TF32 835*, BF16/FP16 1,671*, FP8 3,341* TFLOPS, INT8 3,341* TOPS, 141 GB "
    "HBM3e, 4.8 TB/s, 2- or 4-way NVLink bridge 900 GB/s per GPU, PCIe Gen5 128 GB/s, up to 600 W (* with sparsity)",
)
BLACKWELL_BRIEF = Source(
    "nvidia-blackwell",
    "per GPU, HGX B200 at 1,000 W: FP4 18*, FP8/FP6 9*, INT8 9*, FP16/BF16 4.5*, TF32 2.2* PFLOPS, FP32 80, FP64 40 "
    "TFLOPS, 8 TB/s, NVLink 1.8 TB/s; GB200 at 1,200 W: FP4 20*, FP8/FP6 10*, INT8 10*, FP16/BF16 5*, TF32 2.5* PFLOPS, "
    "FP32 90, FP64 45 TFLOPS (* with sparsity)",
)
DGX_B200_DATASHEET = Source(
    "nvidia-dgx-b200",
    "8 B200 GPUs, 1,440 GB total GPU memory, 72 PFLOPS FP8 training and 144 PFLOPS FP4 inference, NVLink 14.4 TB/s "
    "aggregate over NVSwitch",
)
GB200_DATASHEET = Source(
    "nvidia-gb200",
    "GB200 Grace Blackwell Superchip (1 Grace, 2 Blackwell GPUs): FP4 40*, FP8/FP6 20*, FP16/BF16 10*, TF32 5* PFLOPS, "
    "FP64 90 TFLOPS; up to 372 GB HBM3e, 16 TB/s; NVLink 3.6 TB/s. GB200 NVL72: 72 GPUs, 13.4 TB, 576 TB/s, NVLink "
    "130 TB/s (* with sparsity)",
)
MI300X_DATASHEET = Source(
    "amd-mi300x",
    "peak FP64 matrix 163.4, FP32 163.4, TF32 653.7, FP16/BF16 1,307.4, FP8 2,614.9 TFLOPS, INT8 2,614.9 TOPS (dense; "
    "twice with sparsity); 192 GB HBM3, 5.3 TB/s; 7 Infinity Fabric links, 896 GB/s peak aggregate; PCIe Gen5 x16 "
    "128 GB/s; 750 W",
)
LI = Source("001", "GPU figures: 4090 330 TFLOPS, 1 TB/s, PCIe Gen4 64 GB/s; H100 989 TFLOPS, 3.35 TB/s, NVLink 900 GB/s")


@dataclass(frozen=True)
class GPU(GPUSpec):
    """One GPU model (formulas/data/gpu_specs.py's figures as exact SymPy Rationals) with its sources."""

    sources: tuple[Source, ...] = ()
    rent_source: Source | None = None

    def values(self, precision: Precision = "bf16", link: Link = "nvlink") -> dict[sp.Symbol, sp.Rational]:
        """The symbols a formula takes from a GPU: X, W_mem, W_link, M_GPU."""
        return {X: self.flops(precision), W_mem: self.memory_bandwidth, W_link: self.link(link), M_gpu: self.memory}


SOURCES: dict[str, tuple[Source, ...]] = {
    "a100-40gb": (A100_DATASHEET,), "a100-80gb": (A100_DATASHEET,), "a100-pcie": (A100_DATASHEET,),
    "a800": (A100_DATASHEET, A800_NEWS), "h100-sxm": (H100_DATASHEET, LI), "h100-pcie": (H100_DATASHEET,),
    "h800": (H100_DATASHEET, H800_NEWS, LI), "h200": (H200_DATASHEET,), "rtx4090": (ADA_WHITEPAPER, LI),
    "rtx3090": (GA102_WHITEPAPER,), "rtx3090ti": (RTX3090TI_SPECS, GA102_WHITEPAPER),
    "rtx5090": (RTX_BLACKWELL_WHITEPAPER,), "rtx-a6000": (A6000_DATASHEET, GA102_WHITEPAPER), "l4": (L4_DATASHEET,),
    "l40s": (L40S_DATASHEET,), "a10": (A10_DATASHEET, AWS_G5), "h100-nvl": (H100_NVL_DATASHEET,),
    "h200-nvl": (H200_NVL_DATASHEET,), "b200": (BLACKWELL_BRIEF, DGX_B200_DATASHEET),
    "gb200": (BLACKWELL_BRIEF, GB200_DATASHEET), "mi300x": (MI300X_DATASHEET,),
}
RENT_2026 = Source("gpu-prices-2026", "the low end of the typical on-demand range, early 2026")
RENT_H800 = Source("deepseek2024v3", "Table 1, $2 per H800 GPU-hour")
RENT_SOURCES = {"a100-80gb": RENT_2026, "h100-sxm": RENT_2026, "h800": RENT_H800}


def _exact(spec: GPUSpec) -> GPU:
    """The preset with every figure an exact SymPy number, and its sources."""
    def number(value: object) -> object:
        return sp.Rational(value) if isinstance(value, int | float) or hasattr(value, "denominator") else value

    figures = {field.name: number(getattr(spec, field.name)) for field in fields(GPUSpec)}
    return GPU(**figures, sources=SOURCES[spec.key], rent_source=RENT_SOURCES.get(spec.key))


PRESETS: dict[str, GPU] = {key: _exact(spec) for key, spec in SPECS.items()}


def gpu(key: str) -> GPU:
    """A preset by key (``h100-sxm``); the error lists the known keys."""
    try:
        return PRESETS[key]
    except KeyError:
        raise KeyError(f"unknown GPU {key!r}; known: {', '.join(PRESETS)}") from None
