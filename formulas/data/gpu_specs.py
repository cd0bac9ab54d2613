"""The GPU presets' datasheet figures as plain numbers (exact Fractions), without SymPy: what ``plan`` and ``sweep``
read on their NumPy path. formulas/data/gpus.py makes each an exact SymPy GPU with its sources; the conventions (dense
FLOP/s, decimal bytes, bandwidths counting both directions) and the sources are stated there.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from fractions import Fraction
from typing import Literal

Precision = Literal["bf16", "fp16", "tf32", "fp32", "fp8", "int8", "fp64"]
Link = Literal["nvlink", "pcie"]

TERA = 10**12
GIGA = 10**9


@dataclass(frozen=True)
class GPUSpec:
    """One GPU model's figures. FLOP/s are dense; bandwidths count both directions; ``tdp`` in watts, ``rent`` in $
    per GPU-hour on demand (None: no cited price)."""

    key: str
    name: str
    bf16: Fraction
    fp16: Fraction
    tf32: Fraction
    fp32: Fraction
    memory: Fraction
    memory_bandwidth: Fraction
    nvlink: Fraction | None
    pcie: Fraction
    notes: str = ""
    fp8: Fraction | None = None
    int8: Fraction | None = None
    fp64: Fraction | None = None
    tdp: Fraction | None = None
    rent: Fraction | None = None

    def flops(self, precision: Precision = "bf16") -> Fraction:
        """Peak dense FLOP/s of the tensor cores (CUDA cores for fp32) at ``precision`` (INT8: operations/s)."""
        peak = {"bf16": self.bf16, "fp16": self.fp16, "tf32": self.tf32, "fp32": self.fp32,
                "fp8": self.fp8, "int8": self.int8, "fp64": self.fp64}[precision]
        if peak is None:
            raise ValueError(f"the {self.name} has no {precision} peak on its datasheet")
        return peak

    def link(self, kind: Link = "nvlink") -> Fraction:
        """Bandwidth of the GPU-to-GPU link, both directions; PCIe when the GPU has no NVLink."""
        if kind == "nvlink" and self.nvlink is not None:
            return self.nvlink
        return self.pcie

    def inputs(self, precision: Precision = "bf16", link: Link = "nvlink") -> dict[str, Fraction]:
        """The values a formula takes from a GPU, by symbol name: X, W_mem, W_link, M_gpu."""
        return {"X": self.flops(precision), "W_mem": self.memory_bandwidth, "W_link": self.link(link), "M_gpu": self.memory}


def _tflops(value: str) -> Fraction:
    return Fraction(value) * TERA


def _gb(value: str) -> Fraction:
    return Fraction(value) * GIGA


def _ampere(key: str, name: str, memory: str, bandwidth: str, nvlink: str, notes: str = "", tdp: str = "400") -> GPUSpec:
    return GPUSpec(key, name, _tflops("312"), _tflops("312"), _tflops("156"), _tflops("19.5"), _gb(memory), _gb(bandwidth),
                   _gb(nvlink), _gb("64"), notes, fp8=None, int8=_tflops("624"), fp64=_tflops("19.5"), tdp=Fraction(tdp))


def _hopper_sxm(key: str, name: str, memory: str, bandwidth: str, nvlink: str, notes: str = "") -> GPUSpec:
    return GPUSpec(key, name, _tflops("1979") / 2, _tflops("1979") / 2, _tflops("989") / 2, _tflops("67"), _gb(memory),
                   _gb(bandwidth), _gb(nvlink), _gb("128"), notes, fp8=_tflops("3958") / 2, int8=_tflops("3958") / 2,
                   fp64=_tflops("67"), tdp=Fraction(700))


SPECS: dict[str, GPUSpec] = {
    spec.key: spec
    for spec in (
        _ampere("a100-40gb", "NVIDIA A100 40 GB SXM4", "40", "1555", "600"),
        _ampere("a100-80gb", "NVIDIA A100 80 GB SXM4", "80", "2039", "600"),
        _ampere("a100-pcie", "NVIDIA A100 80 GB PCIe", "80", "1935", "600", tdp="300",
                notes="NVLink only through a bridge joining 2 GPUs"),
        _ampere("a800", "NVIDIA A800 80 GB SXM4", "80", "2039", "400"),
        _hopper_sxm("h100-sxm", "NVIDIA H100 SXM5 80 GB", "80", "3350", "900", notes="001 rounds the dense 989.5 TFLOPS to 989"),
        GPUSpec("h100-pcie", "NVIDIA H100 PCIe 80 GB", _tflops("1513") / 2, _tflops("1513") / 2, _tflops("756") / 2,
                _tflops("51"), _gb("80"), _gb("2000"), _gb("600"), _gb("128"),
                notes="NVLink only through a 2-GPU bridge; 001's 'H100 on PCIe Gen5' case uses the SXM's 989 TFLOPS",
                fp8=_tflops("3026") / 2, int8=_tflops("3026") / 2, fp64=_tflops("51"), tdp=Fraction(350)),
        _hopper_sxm("h800", "NVIDIA H800 SXM5 80 GB", "80", "3350", "400"),
        _hopper_sxm("h200", "NVIDIA H200 SXM 141 GB", "141", "4800", "900"),
        GPUSpec("rtx4090", "NVIDIA GeForce RTX 4090 24 GB", _tflops("165.2"), _tflops("330.3"), _tflops("82.6"),
                _tflops("82.6"), _gb("24"), _gb("1008"), None, _gb("64"),
                notes="GeForce tensor cores run FP16 with FP16 accumulation at 330.3 TFLOPS (001's 330) but BF16 and FP16 "
                      "with FP32 accumulation at half that; 001 rounds 1,008 GB/s to 1 TB/s",
                fp8=_tflops("1321.2") / 2, int8=_tflops("1321.2") / 2, fp64=None, tdp=Fraction(450)),
    )
}
RENTS = {"a100-80gb": Fraction("1.49"), "h100-sxm": Fraction("2.49"), "h800": Fraction(2)}  # sources in formulas/data/gpus.py
SPECS = {key: replace(spec, rent=RENTS[key]) if key in RENTS else spec for key, spec in SPECS.items()}

NODE_SIZE: dict[str, int] = {"a100-40gb": 8, "a100-80gb": 8, "a100-pcie": 2, "a800": 8, "h100-sxm": 8, "h800": 8, "h200": 8, "h100-pcie": 2,
                             "rtx4090": 1}
"""GPUs one node's NVLink joins, per preset: HGX/DGX baseboards hold 8 SXM GPUs on NVSwitch (DGX A100 and DGX H100
user guides); A100 and H100 PCIe cards pair through an NVLink bridge; the RTX 4090 has no NVLink. The performance model
prices a group inside one node at NVLink speed and one across nodes at the network's (formulas/reports/prediction.py)."""
