"""GPU presets: peak dense FLOP/s, memory and links, from NVIDIA's datasheets.

Every figure is dense (NVIDIA's datasheets print the 2:4-sparsity figure,
twice the dense one, and mark it with an asterisk: the dense figure here is that
number halved). Bytes are decimal (80 GB = 80e9), bandwidths are the totals
NVIDIA prints, both directions together (NVLink 900 GB/s = 450 each way; PCIe
Gen4 x16 64 GB/s = 32 each way), which is what ``W_link`` means in
``comms.tp.max_degree``. The sources' own figures (001: RTX 4090 330 TFLOPS and
64 GB/s, H100 989 TFLOPS and 900 GB/s, H800 400 GB/s, H100 PCIe Gen5 128 GB/s;
000/002: A100 312 TFLOPS) agree with these to the digits they print.
FP8 and INT8 are tensor-core peaks (dense), FP64 the FP64 tensor-core peak, and
``tdp`` the board power the datasheet prints (the maximum where it gives a range);
a GPU without FP8 tensor cores (Ampere) has none.

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
