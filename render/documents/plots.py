"""Plots of the catalogue's formulas (matplotlib, Agg), PNG, SVG and PDF, byte-identical per build.

- memory per GPU by component against the micro-batch size (``memory.zero``,
  ``memory.activations.1f1b``, total ``memory.per_gpu``), for a 13B model
  (LLaMA-13B's shape) on t = 8: the total crosses the 80 GB of an A100 at b ≈ 5.6,
  the largest micro-batch that fits is marked;
- the decode roofline against the batch, with each GPU's balance point
  (``inference.roofline``, ``inference.balance_batch``);
- the link bandwidth tensor parallelism needs against t (``comms.bandwidth.tp``),
  beside each GPU's link;
- training days against the GPU count (``cluster.training_time``, ``.recompute``).

Every curve is the formula evaluated (lambdified from its SymPy expression) at
the documented defaults of ``render.documents.defaults`` with one input swept. A plot
whose formulas are not in the catalogue is skipped and the reason recorded.
``render_plots()`` draws each once; the reference shows each beside the formula it
illustrates (inline SVG in HTML, the PDF file in LaTeX), ``save_plots`` writes the files.
"""

from __future__ import annotations

import io
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import sympy as sp  # noqa: E402

from llm_formulas.derivations.vocabulary.proof import valued  # noqa: E402
from llm_formulas.formulas.vocabulary.catalogue import catalogue, get  # noqa: E402
from llm_formulas.formulas.vocabulary.symbols import is_declared, quantity  # noqa: E402
from llm_formulas.render.documents.defaults import GPUS, InputPreset, default  # noqa: E402
from llm_formulas.render.cli.inputs import parse_number  # noqa: E402

STYLE = {
    "svg.hashsalt": "llm-formulas",
    "svg.fonttype": "path",
    "figure.figsize": (7.0, 4.2),
    "figure.dpi": 100,
    "font.size": 10,
    "axes.grid": True,
    "grid.alpha": 0.3,
}
METADATA = {
    "png": {"Software": "llm-formulas build"},
    "svg": {"Date": None, "Creator": "llm-formulas build"},
    "pdf": {"CreationDate": None, "ModDate": None, "Creator": "llm-formulas build", "Producer": "matplotlib"},
}
FORMATS = ("png", "svg", "pdf")
DAY = 86400


def curve(formula_id: str, sweep: str, xs: np.ndarray, **overrides: str) -> np.ndarray:
    """The formula at the defaults (and ``overrides``), as a function of one swept input."""
    formula = get(formula_id)
    swept = quantity(sweep).symbol
    fixed = {}
    for symbol in formula.inputs:
        if symbol == swept:
            continue
        fixed[symbol] = parse_number(overrides[symbol.name]) if symbol.name in overrides else default(symbol).value
    function = sp.lambdify(swept, valued(formula.expr).subs(fixed), modules="numpy")
    return np.broadcast_to(np.asarray(function(np.asarray(xs, dtype=np.float64)), dtype=np.float64), xs.shape)


def plotted_gpus() -> list[InputPreset]:
    """The GPUs the sources compare: A100 80 GB, H100 SXM, RTX 4090."""
    wanted = ("A100 80", "H100 SXM", "4090")
    return [gpu for gpu in GPUS if any(w in gpu.name for w in wanted)]


def _value(name: str) -> float:
    return float(default(quantity(name).symbol).value)


# LLaMA-13B's shape (Touvron et al. 2023, Table 2: h = 5120, 40 heads, 40 layers, 13B parameters),
# s = 2048, t = 8 on one node, no pipeline: the states take 26 GB, each sequence of the micro-batch 9.6 GB.
MEMORY_SCENARIO = {"P": "13e9", "h": "5120", "a": "40", "l": "40", "s": "2048", "t": "8", "p": "1"}


def memory_by_micro_batch(ax) -> None:
    b = np.arange(1, 13, dtype=np.float64)
    states = curve("memory.zero", "b", b, **MEMORY_SCENARIO)
    activations = curve("memory.activations.1f1b", "b", b, **MEMORY_SCENARIO)
    ax.stackplot(b, states / 1e9, activations / 1e9, labels=["model states / (t·p)  [memory.zero]", "activations, 1F1B first stage  [memory.activations.1f1b]"], alpha=0.75)
    total = curve("memory.per_gpu", "b", b, **MEMORY_SCENARIO)
    ax.plot(b, total / 1e9, "k--", marker="o", markersize=3, label="total  [memory.per_gpu]")
    if is_declared("M_gpu"):
        capacity = _value("M_gpu")
        ax.axhline(capacity / 1e9, color="firebrick", label=f"GPU memory M_GPU = {capacity / 1e9:.0f} GB")
        fits = b[total <= capacity]
        if fits.size:
            ax.axvline(fits[-1], color="firebrick", linestyle=":", linewidth=1)
            ax.annotate(f"largest micro-batch that fits: b = {fits[-1]:.0f}", (fits[-1], capacity / 1e9), textcoords="offset points",
                        xytext=(-150, 8), fontsize=8, color="firebrick")
    ax.set(xlabel="micro-batch size b", ylabel="GB per GPU", title="Memory per GPU: 13B model (LLaMA-13B shape), s = 2048, t = 8, p = 1")
    ax.legend(loc="upper left", fontsize=8)


def roofline(ax) -> None:
    batch = np.unique(np.round(np.logspace(0, 12, 200, base=2)))
    for gpu in plotted_gpus():
        peak = float(parse_number(gpu.values["X"]))
        (line,) = ax.plot(batch, curve("inference.roofline", "b", batch, **gpu.values) / 1e12, label=gpu.name)
        balance = float(curve("inference.balance_batch", "X", np.array([peak]), **gpu.values)[0])
        ax.axvline(balance, color=line.get_color(), linestyle=":", linewidth=1)
        ax.annotate(f"b* = {balance:.0f}", (balance, peak / 1e12), textcoords="offset points", xytext=(4, -12), fontsize=8, color=line.get_color())
    ax.set(xscale="log", yscale="log", xlabel="decode batch b (sequences)", ylabel="attainable TFLOP/s", title="Decode roofline and balance batch b* [inference.*]")
    ax.legend(loc="lower right", fontsize=8)


def bandwidth_by_tp(ax) -> None:
    t = np.array([1, 2, 4, 8, 16, 32, 64], dtype=np.float64)
    for gpu in plotted_gpus():
        (line,) = ax.plot(t, curve("comms.bandwidth.tp", "t", t, **gpu.values) / 1e9, marker="o", label=f"needed on {gpu.name}")
        ax.axhline(float(parse_number(gpu.values["W_link"])) / 1e9, color=line.get_color(), linestyle=":", label=f"{gpu.name} link")
    ax.set(xscale="log", yscale="log", xlabel="tensor parallel degree t", ylabel="GB/s per GPU", title="Link bandwidth TP needs, h = 12288 [comms.bandwidth.tp]")
    ax.set_xticks(t, [str(int(x)) for x in t])
    ax.legend(loc="upper left", fontsize=7, ncol=2)


def training_days(ax) -> None:
    n = np.array([64, 128, 256, 512, 1024, 2048, 4096, 8192], dtype=np.float64)
    ax.plot(n, curve("cluster.training_time", "n", n) / DAY, marker="o", label="6ΨD  [cluster.training_time]")
    if "cluster.training_time.recompute" in catalogue():
        ax.plot(n, curve("cluster.training_time.recompute", "n", n) / DAY, marker="s", label="8ΨD, full recompute  [cluster.training_time.recompute]")
    ax.set(xscale="log", yscale="log", xlabel="GPUs n", ylabel="days", title="Training time, GPT-3 175B on 300B tokens, A100 at U = 0.45")
    ax.set_xticks(n, [str(int(x)) for x in n])
    ax.legend(fontsize=8)


# name -> (the formulas it needs, the one it illustrates first, the drawing, its caption)
PLOTS: dict[str, tuple[tuple[str, ...], Callable, str]] = {
    "memory_by_micro_batch": (
        ("memory.per_gpu", "memory.zero", "memory.activations.1f1b"),
        memory_by_micro_batch,
        "Memory per GPU against the micro-batch: the states are fixed, the activations grow with b, "
        "and the total crosses the GPU's 80 GB; the largest micro-batch that fits is marked.",
    ),
    "roofline": (
        ("inference.roofline", "inference.balance_batch"),
        roofline,
        "The decode roofline: below the balance batch b* = X/W_mem a step is memory-bound, above it compute-bound.",
    ),
    "bandwidth_by_tp": (
        ("comms.bandwidth.tp",),
        bandwidth_by_tp,
        "Link bandwidth tensor parallelism needs against t, beside each GPU's link: it grows with t.",
    ),
    "training_days": (
        ("cluster.training_time",),
        training_days,
        "Training days against the GPU count, with and without full recompute.",
    ),
}


@dataclass(frozen=True)
class Plot:
    """One drawn plot: the formula it illustrates, its caption and its bytes in every format."""

    name: str
    formula_id: str
    caption: str
    files: dict[str, bytes]

    def inline_svg(self) -> str:
        """The SVG without its XML prologue, every id prefixed by the plot's name (several share one page)."""
        svg = self.files["svg"].decode("utf-8")
        svg = svg[svg.index("<svg"):]
        for identifier in sorted(set(re.findall(r'id="([^"]+)"', svg)), key=len, reverse=True):
            svg = re.sub(rf'(id="|#){re.escape(identifier)}(?=["\)])', rf"\g<1>{self.name}-{identifier}", svg)
        return svg


def render_plots(skipped: list[str]) -> list[Plot]:
    """Draw every plot whose formulas exist; note the others in ``skipped``."""
    present = catalogue()
    drawn = []
    with plt.rc_context(STYLE):
        for name, (needed, draw, caption) in PLOTS.items():
            missing = [fid for fid in needed if fid not in present]
            if missing:
                skipped.append(f"plot {name}: the catalogue has no {', '.join(missing)}")
                continue
            figure, ax = plt.subplots()
            draw(ax)
            figure.tight_layout()
            files = {}
            for extension in FORMATS:
                buffer = io.BytesIO()
                figure.savefig(buffer, format=extension, metadata=METADATA[extension])
                files[extension] = buffer.getvalue()
            plt.close(figure)
            drawn.append(Plot(name, needed[0], caption, files))
    return drawn


def save_plots(directory: Path, plots: list[Plot], write: Callable[[Path, bytes], Path]) -> list[Path]:
    """Write each plot as PNG, SVG and PDF into ``directory``, each file through ``write(path, data)``."""
    return [write(directory / f"{plot.name}.{extension}", data) for plot in plots for extension, data in plot.files.items()]
