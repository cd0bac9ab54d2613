"""The GPU presets' datasheet figures as plain numbers (exact Fractions), without SymPy: what ``plan`` and ``sweep``
read on their NumPy path. formulas/data/gpus.py makes each an exact SymPy GPU with its sources; the conventions (dense
FLOP/s, decimal bytes, bandwidths counting both directions) and the sources are stated there.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from fractions import Fraction
from typing import Literal

Precision = Literal["bf16", "fp16", "tf32", "fp32", "fp8", "int8", "fp64", "fp4"]
Link = Literal["nvlink", "pcie"]

TERA = 10**12
GIGA = 10**9


@dataclass(frozen=True)
class GPUSpec:
    """One GPU model's figures. FLOP/s are dense; bandwidths count both directions; ``tdp`` in watts, ``rent`` in $
    per GPU-hour on demand (None: no cited price); ``fp4`` the FP4 tensor-core peak where the datasheet gives one
    (Blackwell), None elsewhere."""

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
    fp4: Fraction | None = None
    rent: Fraction | None = None

    def flops(self, precision: Precision = "bf16") -> Fraction:
        """Peak dense FLOP/s of the tensor cores (CUDA cores for fp32) at ``precision`` (INT8: operations/s)."""
        peak = {"bf16": self.bf16, "fp16": self.fp16, "tf32": self.tf32, "fp32": self.fp32,
                "fp8": self.fp8, "int8": self.int8, "fp64": self.fp64, "fp4": self.fp4}[precision]
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


def _sparse(value: str) -> Fraction:
    """The dense peak of a figure the datasheet prints with sparsity (marked *): half of it."""
    return _tflops(value) / 2


def _ampere(key: str, name: str, memory: str, bandwidth: str, nvlink: str, notes: str = "", tdp: str = "400") -> GPUSpec:
    return GPUSpec(key, name, _tflops("312"), _tflops("312"), _tflops("156"), _tflops("19.5"), _gb(memory), _gb(bandwidth),
                   _gb(nvlink), _gb("64"), notes, fp8=None, int8=_tflops("624"), fp64=_tflops("19.5"), tdp=Fraction(tdp))


def _hopper_nvl(key: str, name: str, memory: str, bandwidth: str, nvlink: str, tdp: str, notes: str = "") -> GPUSpec:
    """The Hopper PCIe cards with NVLink bridges (H100 NVL, H200 NVL): FP64 Tensor Core 60, FP32 60, TF32 835*,
    BF16/FP16 1,671*, FP8 3,341* TFLOPS, INT8 3,341* TOPS; PCIe Gen5 128 GB/s."""
    return GPUSpec(key, name, _sparse("1671"), _sparse("1671"), _sparse("835"), _tflops("60"), _gb(memory), _gb(bandwidth),
                   _gb(nvlink), _gb("128"), notes, fp8=_sparse("3341"), int8=_sparse("3341"), fp64=_tflops("60"),
                   tdp=Fraction(tdp))


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
        GPUSpec("rtx3090", "NVIDIA GeForce RTX 3090 24 GB", _tflops("71"), _tflops("142"), _tflops("35.6"), _tflops("35.6"),
                _gb("24"), _gb("936"), _gb("112.5"), _gb("64"),
                notes="as the RTX 4090: bf16 is the FP16/BF16 peak with FP32 accumulation, fp16 the FP16-accumulate one; "
                      "NVLink only through a bridge joining 2 cards; no FP8 tensor cores (Ampere)",
                fp8=None, int8=_tflops("284"), fp64=None, tdp=Fraction(350)),
        GPUSpec("rtx3090ti", "NVIDIA GeForce RTX 3090 Ti 24 GB", _tflops("80"), _tflops("160"), _tflops("40"), _tflops("40"),
                _gb("24"), _gb("1008"), None, _gb("64"),
                notes="NVIDIA prints only 40 shader and 320 tensor TFLOPS (FP16 with FP16 accumulation, with sparsity) for "
                      "this card, which the GA102 whitepaper postdates: the other peaks follow the GA102 GeForce ratios of "
                      "the RTX 3090's table (FP32-accumulate and TF32 a quarter of the sparse FP16 figure, INT8 twice the "
                      "dense FP16); no NVLink figure (published accounts disagree on whether the card keeps the RTX "
                      "3090's bridge connector): priced over PCIe Gen4 x16; no FP8 tensor cores (Ampere)",
                fp8=None, int8=_tflops("320"), fp64=None, tdp=Fraction(450)),
        GPUSpec("rtx5090", "NVIDIA GeForce RTX 5090 32 GB", _tflops("209.5"), _tflops("419"), _tflops("104.8"),
                _tflops("104.8"), _gb("32"), _gb("1792"), None, _gb("128"),
                notes="as the RTX 4090: bf16 the FP32-accumulate peak, fp16 the FP16-accumulate one, fp8 the "
                      "FP16-accumulate one; no NVLink; PCIe Gen5 x16",
                fp8=_tflops("838"), int8=_tflops("838"), fp64=None, tdp=Fraction(575), fp4=_tflops("1676")),
        GPUSpec("rtx-a6000", "NVIDIA RTX A6000 48 GB", _tflops("154.8"), _tflops("154.8"), _tflops("77.4"), _tflops("38.7"),
                _gb("48"), _gb("768"), _gb("112.5"), _gb("64"),
                notes="professional cards run FP16/BF16 with FP32 accumulation at the full rate; NVLink only through a "
                      "bridge joining 2 cards; no FP8 tensor cores (Ampere)",
                fp8=None, int8=_tflops("309.7"), fp64=None, tdp=Fraction(300)),
        GPUSpec("l4", "NVIDIA L4 24 GB", _sparse("242"), _sparse("242"), _sparse("120"), _tflops("30.3"), _gb("24"),
                _gb("300"), None, _gb("64"), notes="no NVLink: PCIe Gen4 x16",
                fp8=_sparse("485"), int8=_sparse("485"), fp64=None, tdp=Fraction(72)),
        GPUSpec("l40s", "NVIDIA L40S 48 GB", _tflops("362.05"), _tflops("362.05"), _tflops("183"), _tflops("91.6"),
                _gb("48"), _gb("864"), None, _gb("64"),
                notes="the datasheet prints the dense figures (BF16/FP16 362.05, half of its 733* would be 366.5); "
                      "no NVLink: PCIe Gen4 x16",
                fp8=_tflops("733"), int8=_tflops("733"), fp64=None, tdp=Fraction(350)),
        GPUSpec("a10", "NVIDIA A10 24 GB", _tflops("125"), _tflops("125"), _tflops("62.5"), _tflops("31.2"), _gb("24"),
                _gb("600"), None, _gb("64"),
                notes="the A10, not AWS's A10G: neither NVIDIA nor AWS publishes the A10G's tensor-core peaks (AWS states "
                      "24 GB per GPU and nothing more), so the A10G has no preset; no NVLink: PCIe Gen4 x16; no FP8 "
                      "tensor cores (Ampere)",
                fp8=None, int8=_tflops("250"), fp64=None, tdp=Fraction(150)),
        _hopper_nvl("h100-nvl", "NVIDIA H100 NVL 94 GB", "94", "3900", "600", "400",
                    notes="a PCIe card; NVLink only through bridges joining 2 cards; 350-400 W configurable"),
        _hopper_nvl("h200-nvl", "NVIDIA H200 NVL 141 GB", "141", "4800", "900", "600",
                    notes="a PCIe card; NVLink through 2- or 4-way bridges (900 GB/s per GPU)"),
        GPUSpec("b200", "NVIDIA B200 180 GB (HGX)", _sparse("4500"), _sparse("4500"), _sparse("2200"), _tflops("80"),
                _gb("180"), _gb("8000"), _gb("1800"), _gb("128"),
                notes="HGX B200 at 1,000 W: 8 GPUs on NVSwitch; 180 GB as DGX B200 ships it (1,440 GB over 8 GPUs; the "
                      "architecture brief's 192 GB is the full part); FP32 80 TFLOPS as the brief prints it (NVIDIA's HGX page, 600 over "
                      "8 GPUs, gives 75); PCIe Gen5 x16 to the host",
                fp8=_sparse("9000"), int8=_sparse("9000"), fp64=_tflops("40"), tdp=Fraction(1000), fp4=_sparse("18000")),
        GPUSpec("gb200", "NVIDIA GB200 (one Blackwell GPU) 186 GB", _sparse("5000"), _sparse("5000"), _sparse("2500"),
                _tflops("90"), _gb("186"), _gb("8000"), _gb("1800"), _gb("128"),
                notes="one of the two GPUs of a GB200 superchip (the NVL72 datasheet's superchip figures halved; 372 GB "
                      "and 16 TB/s per superchip); 72 GPUs on one NVLink domain in a GB200 NVL72 rack; the GPU reaches "
                      "its Grace CPU over NVLink-C2C, not PCIe (the PCIe figure is Blackwell's Gen5 x16)",
                fp8=_sparse("10000"), int8=_sparse("10000"), fp64=_tflops("45"), tdp=Fraction(1200), fp4=_sparse("20000")),
        GPUSpec("mi300x", "AMD Instinct MI300X 192 GB", _tflops("1307.4"), _tflops("1307.4"), _tflops("653.7"),
                _tflops("163.4"), _gb("192"), _gb("5300"), _gb("896"), _gb("128"),
                notes="AMD prints the dense peaks (sparsity doubles them); the GPU-to-GPU link is Infinity Fabric, 7 links "
                      "of 128 GB/s (896 GB/s peak aggregate), each joining one of the 7 peers of an 8-GPU platform: "
                      "a ring over all 8 uses them together, a pair of GPUs only one; no FP4 (CDNA 3)",
                fp8=_tflops("2614.9"), int8=_tflops("2614.9"), fp64=_tflops("163.4"), tdp=Fraction(750)),
    )
}
RENTS = {"a100-80gb": Fraction("1.49"), "h100-sxm": Fraction("2.49"), "h800": Fraction(2)}  # sources in formulas/data/gpus.py
SPECS = {key: replace(spec, rent=RENTS[key]) if key in RENTS else spec for key, spec in SPECS.items()}

NODE_SIZE: dict[str, int] = {"a100-40gb": 8, "a100-80gb": 8, "a100-pcie": 2, "a800": 8, "h100-sxm": 8, "h800": 8, "h200": 8, "h100-pcie": 2,
                             "rtx4090": 1, "rtx3090": 2, "rtx3090ti": 1, "rtx5090": 1, "rtx-a6000": 2, "l4": 1, "l40s": 1,
                             "a10": 1, "h100-nvl": 2, "h200-nvl": 4, "b200": 8, "gb200": 72, "mi300x": 8}
"""GPUs one node's NVLink joins, per preset: HGX/DGX baseboards hold 8 SXM GPUs on NVSwitch (DGX A100, DGX H100 and
DGX B200 user guides); A100 and H100 PCIe cards, the H100 NVL, the RTX 3090 and RTX A6000 pair through an NVLink
bridge, the H200 NVL joins up to 4 through its 4-way bridge; a GB200 NVL72 rack joins 72 GPUs on NVLink switches; an
MI300X platform joins 8 on Infinity Fabric; the RTX 4090 and 5090, L4, L40S and A10 have no NVLink, and no source
states a bridge for the RTX 3090 Ti (priced alone). The performance model prices a group inside one node at NVLink
speed and one across nodes at the network's (formulas/reports/prediction.py)."""
