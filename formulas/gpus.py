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
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Literal

import sympy as sp

from llm_formulas.formulas.catalogue import Source
from llm_formulas.formulas.symbols import M_gpu, W_link, W_mem, X

Precision = Literal["bf16", "fp16", "tf32", "fp32", "fp8", "int8", "fp64"]
Link = Literal["nvlink", "pcie"]

TERA = 10**12
GIGA = 10**9

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
class GPU:
    """One GPU model. FLOP/s are dense; bandwidths count both directions."""

    key: str
    name: str
    bf16: sp.Rational
    fp16: sp.Rational
    tf32: sp.Rational
    fp32: sp.Rational
    memory: sp.Rational
    memory_bandwidth: sp.Rational
    nvlink: sp.Rational | None
    pcie: sp.Rational
    sources: tuple[Source, ...]
    notes: str = ""
    fp8: sp.Rational | None = None
    int8: sp.Rational | None = None
    fp64: sp.Rational | None = None
    tdp: sp.Rational | None = None  # watts
    rent: sp.Rational | None = None  # $ per GPU-hour, on demand (None: no cited price)
    rent_source: Source | None = None

    def flops(self, precision: Precision = "bf16") -> sp.Rational:
        """Peak dense FLOP/s of the tensor cores (CUDA cores for fp32) at ``precision`` (INT8: operations/s)."""
        peak = {"bf16": self.bf16, "fp16": self.fp16, "tf32": self.tf32, "fp32": self.fp32,
                "fp8": self.fp8, "int8": self.int8, "fp64": self.fp64}[precision]
        if peak is None:
            raise ValueError(f"the {self.name} has no {precision} peak on its datasheet")
        return peak

    def link(self, kind: Link = "nvlink") -> sp.Rational:
        """Bandwidth of the GPU-to-GPU link, both directions; PCIe when the GPU has no NVLink."""
        if kind == "nvlink" and self.nvlink is not None:
            return self.nvlink
        return self.pcie

    def values(self, precision: Precision = "bf16", link: Link = "nvlink") -> dict[sp.Symbol, sp.Rational]:
        """The symbols a formula takes from a GPU: X, W_mem, W_link, M_GPU."""
        return {X: self.flops(precision), W_mem: self.memory_bandwidth, W_link: self.link(link), M_gpu: self.memory}

    def inputs(self, precision: Precision = "bf16", link: Link = "nvlink") -> dict[str, sp.Rational]:
        """The same values keyed by symbol name, as evaluators and the report take them."""
        return {symbol.name: value for symbol, value in self.values(precision, link).items()}


def _tflops(value: str) -> sp.Rational:
    return sp.Rational(value) * TERA


def _gb(value: str) -> sp.Rational:
    return sp.Rational(value) * GIGA


def _ampere(key: str, name: str, memory: str, bandwidth: str, nvlink: str, sources: tuple[Source, ...], notes: str = "",
            tdp: str = "400") -> GPU:
    return GPU(key, name, _tflops("312"), _tflops("312"), _tflops("156"), _tflops("19.5"), _gb(memory), _gb(bandwidth),
               _gb(nvlink), _gb("64"), sources, notes, fp8=None, int8=_tflops("624"), fp64=_tflops("19.5"), tdp=sp.Integer(tdp))


def _hopper_sxm(key: str, name: str, memory: str, bandwidth: str, nvlink: str, sources: tuple[Source, ...], notes: str = "") -> GPU:
    return GPU(key, name, _tflops("1979") / 2, _tflops("1979") / 2, _tflops("989") / 2, _tflops("67"), _gb(memory),
               _gb(bandwidth), _gb(nvlink), _gb("128"), sources, notes, fp8=_tflops("3958") / 2, int8=_tflops("3958") / 2,
               fp64=_tflops("67"), tdp=sp.Integer(700))


PRESETS: dict[str, GPU] = {
    gpu.key: gpu
    for gpu in (
        _ampere("a100-40gb", "NVIDIA A100 40 GB SXM4", "40", "1555", "600", (A100_DATASHEET,)),
        _ampere("a100-80gb", "NVIDIA A100 80 GB SXM4", "80", "2039", "600", (A100_DATASHEET,)),
        _ampere("a100-pcie", "NVIDIA A100 80 GB PCIe", "80", "1935", "600", (A100_DATASHEET,), tdp="300",
                notes="NVLink only through a bridge joining 2 GPUs"),
        _ampere("a800", "NVIDIA A800 80 GB SXM4", "80", "2039", "400", (A100_DATASHEET, A800_NEWS)),
        _hopper_sxm("h100-sxm", "NVIDIA H100 SXM5 80 GB", "80", "3350", "900", (H100_DATASHEET, LI),
                    notes="001 rounds the dense 989.5 TFLOPS to 989"),
        GPU("h100-pcie", "NVIDIA H100 PCIe 80 GB", _tflops("1513") / 2, _tflops("1513") / 2, _tflops("756") / 2,
            _tflops("51"), _gb("80"), _gb("2000"), _gb("600"), _gb("128"), (H100_DATASHEET,),
            notes="NVLink only through a 2-GPU bridge; 001's 'H100 on PCIe Gen5' case uses the SXM's 989 TFLOPS",
            fp8=_tflops("3026") / 2, int8=_tflops("3026") / 2, fp64=_tflops("51"), tdp=sp.Integer(350)),
        _hopper_sxm("h800", "NVIDIA H800 SXM5 80 GB", "80", "3350", "400", (H100_DATASHEET, H800_NEWS, LI)),
        _hopper_sxm("h200", "NVIDIA H200 SXM 141 GB", "141", "4800", "900", (H200_DATASHEET,)),
        GPU("rtx4090", "NVIDIA GeForce RTX 4090 24 GB", _tflops("165.2"), _tflops("330.3"), _tflops("82.6"),
            _tflops("82.6"), _gb("24"), _gb("1008"), None, _gb("64"), (ADA_WHITEPAPER, LI),
            notes="GeForce tensor cores run FP16 with FP16 accumulation at 330.3 TFLOPS (001's 330) but BF16 and FP16 "
                  "with FP32 accumulation at half that; 001 rounds 1,008 GB/s to 1 TB/s",
            fp8=_tflops("1321.2") / 2, int8=_tflops("1321.2") / 2, fp64=None, tdp=sp.Integer(450)),
    )
}


RENT_2026 = Source("gpu-prices-2026", "the low end of the typical on-demand range, early 2026")
RENT_H800 = Source("deepseek2024v3", "Table 1, $2 per H800 GPU-hour")
_RENTS = {"a100-80gb": ("1.49", RENT_2026), "h100-sxm": ("2.49", RENT_2026), "h800": ("2", RENT_H800)}
PRESETS = {key: replace(gpu, rent=sp.Rational(_RENTS[key][0]), rent_source=_RENTS[key][1]) if key in _RENTS else gpu
           for key, gpu in PRESETS.items()}


def gpu(key: str) -> GPU:
    """A preset by key (``h100-sxm``); the error lists the known keys."""
    try:
        return PRESETS[key]
    except KeyError:
        raise KeyError(f"unknown GPU {key!r}; known: {', '.join(PRESETS)}") from None


NODE_SIZE: dict[str, int] = {"a100-40gb": 8, "a100-80gb": 8, "a100-pcie": 2, "a800": 8, "h100-sxm": 8, "h800": 8, "h200": 8, "h100-pcie": 2,
                             "rtx4090": 1}
"""GPUs one node's NVLink joins, per preset: HGX/DGX baseboards hold 8 SXM GPUs on NVSwitch (DGX A100 and DGX H100
user guides); A100 and H100 PCIe cards pair through an NVLink bridge; the RTX 4090 has no NVLink. The performance model
prices a group inside one node at NVLink speed and one across nodes at the network's (formulas/prediction.py)."""
