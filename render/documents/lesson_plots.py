"""The lessons' pictures: each curve is a catalogue formula evaluated at a real model and GPU.

``png(name, **options)`` draws one picture and returns its PNG bytes (Agg, fixed
metadata: the same inputs give the same bytes). The pictures:

- ``memory_vs_micro_batch``: memory per GPU of the first pipeline stage against b, one
  line per recompute mode, crossing the GPU's HBM line (``memory.zero`` +
  l × ``memory.activations.layer.general.*``);
- ``memory_breakdown``: weights, gradients, Adam states and activations per GPU, stacked,
  for several (t, p) layouts;
- ``memory_by_framework``: the same model and layout as Megatron Core, DeepSpeed and FSDP hold it
  (``estimate`` with each framework of formulas/frameworks.py);
- ``roofline``: attainable FLOP/s of decoding against the batch, with each GPU's balance
  batch (``inference.roofline``, ``inference.balance_batch``);
- ``decode_latency``: time per decoding step against the batch, memory- against
  compute-bound (``inference.latency.*``);
- ``bandwidth_vs_tp``: the link bandwidth TP needs against t beside each GPU's link
  (``comms.bandwidth.tp``);
- ``bubble_vs_m``: the pipeline bubble against the number of micro-batches (``cluster.bubble``);
- ``params_breakdown``: where the parameters of real models sit (``params.decoder.*``);
- ``flops_shares``: which GEMMs take a forward pass's FLOPs as the sequence grows
  (``flops.decoder.*``);
- ``training_days``: days of training against the GPU count (``cluster.training_time``);
- ``amdahl``: speed-up against workers for several serial fractions (``cluster.amdahl``).
"""

from __future__ import annotations

import io
from fractions import Fraction
from typing import Callable

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from llm_formulas.formulas import estimate  # noqa: E402
from llm_formulas.formulas.gpus import gpu  # noqa: E402
from llm_formulas.formulas.presets import preset  # noqa: E402
from llm_formulas.render.documents.plots import curve  # noqa: E402

STYLE = {"figure.figsize": (6.4, 3.8), "figure.dpi": 80, "font.size": 9, "axes.grid": True, "grid.alpha": 0.3}
METADATA = {"Software": "llm-formulas lesson"}
DAY = 86400
GB = 1e9
ACTIVATIONS = {"none": "memory.activations.layer.general.tp", "selective": "memory.activations.layer.general.selective",
               "full": "memory.activations.layer.full_recompute"}


def _model(name: str) -> dict[str, object]:
    values = estimate.model_values(preset(name).architecture.values)
    values["P"] = int(estimate.exact("params.decoder.total", **values))
    return values


def _text(values: dict[str, object]) -> dict[str, str]:
    """Values as the exact strings ``plots.curve`` reads."""
    return {name: str(value) for name, value in values.items()}


def _at(formula_id: str, sweep: str, xs, values: dict[str, object]) -> np.ndarray:
    return curve(formula_id, sweep, np.asarray(xs, dtype=np.float64), **_text(values))


def memory_vs_micro_batch(ax, model: str = "llama2-70b", gpu_key: str = "a100-80gb", t: int = 8, p: int = 8, s: int = 4096) -> None:
    values = _model(model) | {"t": t, "p": p, "s": s}
    capacity = float(gpu(gpu_key).memory) / GB
    b = np.arange(1, 17)
    states = float(estimate.exact("memory.zero", **values)) / GB
    for mode, formula_id in ACTIVATIONS.items():
        total = states + values["l"] * _at(formula_id, "b", b, values) / GB  # 1F1B: the first stage holds l layers' worth
        (line,) = ax.plot(b, total, marker="o", markersize=3, label=f"recompute {mode}")
        fits = b[total <= capacity]
        if len(fits):
            ax.annotate(f"b ≤ {fits[-1]}", (fits[-1], total[fits[-1] - 1]), textcoords="offset points", xytext=(4, -12),
                        fontsize=8, color=line.get_color())
    ax.axhline(states, color="grey", linestyle="--", linewidth=1, label=f"model states 16Ψ/(t·p) = {states:.1f} GB")
    ax.axhline(capacity, color="firebrick", linewidth=2, label=f"HBM {capacity:.0f} GB")
    ax.set(xlabel="micro-batch b (sequences)", ylabel="GB per GPU", ylim=(0, capacity * 2.2),
           title=f"{preset(model).title}, t = {t}, p = {p}, s = {s}: first pipeline stage")
    ax.legend(fontsize=7, loc="upper left")


def memory_breakdown(ax, model: str = "llama2-70b", layouts: tuple[tuple[int, int], ...] = ((8, 1), (8, 2), (8, 4), (8, 8)),
                     gpu_key: str = "a100-80gb", b: int = 1, s: int = 4096, recompute: str = "selective") -> None:
    base = _model(model)
    names = [f"t={t} p={p}" for t, p in layouts]
    parts = {"16-bit weights (2Ψ)": [], "16-bit gradients (2Ψ)": [], "Adam fp32 states (12Ψ)": [], f"activations ({recompute})": []}
    for t, p in layouts:
        shard = base["P"] / (t * p)
        parts["16-bit weights (2Ψ)"].append(2 * shard / GB)
        parts["16-bit gradients (2Ψ)"].append(2 * shard / GB)
        parts["Adam fp32 states (12Ψ)"].append(12 * shard / GB)
        per_layer = float(estimate.exact(ACTIVATIONS[recompute], **(base | {"t": t, "b": b, "s": s})))
        parts[f"activations ({recompute})"].append(base["l"] * per_layer / GB)
    bottom = np.zeros(len(layouts))
    for label, heights in parts.items():
        ax.bar(names, heights, bottom=bottom, label=label)
        bottom += np.asarray(heights)
    ax.axhline(float(gpu(gpu_key).memory) / GB, color="firebrick", linewidth=2, label=f"{gpu(gpu_key).name}")
    ax.set(ylabel="GB per GPU", title=f"{preset(model).title}: memory per GPU, b = {b}, s = {s}")
    ax.legend(fontsize=7)


def memory_by_framework(ax, model: str = "llama2-7b", gpu_key: str = "a100-80gb", d: int = 8, s: int = 4096,
                        frameworks: tuple[tuple[str, int], ...] = (("default", 1), ("deepspeed", 3), ("fsdp", 3))) -> None:
    """The same model and layout priced as each framework holds it (estimate with ``Inputs.framework``): its weights,
    gradients and optimizer states, what it gathers for the passes, and the activations, stacked."""
    from llm_formulas.formulas.frameworks import framework

    values = estimate.model_values(preset(model).architecture.values)
    layout = estimate.Layout(n=d, t=1, p=1, d=d, b=1, m=1, s=s, recompute="full", attention="flash")
    names, parts = [], {"weights": [], "gradients": [], "optimizer states": [], "gathered for the passes": [],
                        "activations": []}
    for key, zero in frameworks:
        chosen = framework(key)
        inputs = estimate.Inputs(model=values, gpu=gpu(gpu_key).inputs(), network=25 * 10**9, tokens=None,
                                 utilization=Fraction(2, 5), overlap=Fraction(1, 2), framework=chosen)
        memory = estimate.estimate(estimate.Layout(**{**layout.__dict__, "zero": zero}), inputs)["memory"]
        names.append(f"{'Megatron Core' if key == 'default' else key}\nZeRO {zero}")
        parts["gathered for the passes"].append(float(memory["gathered"]) / GB)
        for part in ("weights", "gradients", "activations"):
            parts[part].append(float(memory[part]) / GB)
        parts["optimizer states"].append(float(memory["optimizer"]) / GB)
    bottom = np.zeros(len(names))
    for label, heights in parts.items():
        ax.bar(names, heights, bottom=bottom, label=label)
        bottom += np.asarray(heights)
    ax.axhline(float(gpu(gpu_key).memory) / GB, color="firebrick", linewidth=2, label=gpu(gpu_key).name)
    ax.set(ylabel="GB per GPU", title=f"{preset(model).title} on {d} GPUs, s = {s}, full recompute: three frameworks")
    ax.legend(fontsize=7)


def _gpu_values(key: str) -> dict[str, object]:
    return gpu(key).inputs() | {"q_w": 2, "q": 2}


def roofline(ax, gpus: tuple[str, ...] = ("rtx4090", "a100-80gb", "h100-sxm")) -> None:
    batch = np.unique(np.round(np.logspace(0, 11, 120, base=2)))
    for key in gpus:
        values = _gpu_values(key)
        (line,) = ax.plot(batch, _at("inference.roofline", "b", batch, values) / 1e12, label=gpu(key).name)
        balance = float(estimate.exact("inference.balance_batch", **values))
        ax.axvline(balance, color=line.get_color(), linestyle=":", linewidth=1)
        ax.annotate(f"b* = {balance:.0f}", (balance, float(values["X"]) / 1e12), textcoords="offset points",
                    xytext=(4, -14), fontsize=8, color=line.get_color())
    ax.set(xscale="log", yscale="log", xlabel="decode batch b (sequences)", ylabel="attainable TFLOP/s",
           title="Decoding roofline: memory slope, compute roof, balance batch b*")
    ax.legend(fontsize=7, loc="lower right")


def decode_latency(ax, model: str = "llama2-70b", gpu_key: str = "rtx4090", n: int = 8) -> None:
    values = _model(model) | _gpu_values(gpu_key) | {"n": n}
    batch = np.unique(np.round(np.logspace(0, 12, 100, base=2)))
    memory = _at("inference.latency.memory_bound", "b", batch, values) * 1e3
    compute = _at("inference.latency.compute_bound", "b", batch, values) * 1e3
    ax.plot(batch, memory, "--", label="memory-bound: read the weights once")
    ax.plot(batch, compute, "--", label="compute-bound: 2Ψ FLOPs per token")
    ax.plot(batch, np.maximum(memory, compute), "k", linewidth=2, label="step time: the slower of the two")
    ax.set(xscale="log", yscale="log", xlabel="decode batch b", ylabel="ms per decoding step",
           title=f"{preset(model).title} on {n} × {gpu(gpu_key).name}")
    ax.legend(fontsize=7)


def bandwidth_vs_tp(ax, h: int = 8192, gpus: tuple[str, ...] = ("rtx4090", "a100-80gb", "h100-sxm"), U: str = "1/2", r: str = "1") -> None:
    t = np.array([1, 2, 4, 8, 16, 32, 64])
    for key in gpus:
        values = _gpu_values(key) | {"h": h, "U": U, "r": r}
        (line,) = ax.plot(t, _at("comms.bandwidth.tp", "t", t, values) / GB, marker="o", label=f"needed, {gpu(key).name}")
        ax.axhline(float(gpu(key).link()) / 2 / GB, color=line.get_color(), linestyle=":", label="its link, one way")
    ax.set(xscale="log", yscale="log", xlabel="tensor parallel degree t", ylabel="GB/s per GPU, one way",
           title=f"Bandwidth TP needs, h = {h}, U = {U}, r = {r}")
    ax.set_xticks(t, [str(x) for x in t])
    ax.legend(fontsize=6, ncol=2, loc="upper left")


def bubble_vs_m(ax, stages: tuple[int, ...] = (2, 4, 8, 12, 16)) -> None:
    m = np.arange(1, 65)
    for p in stages:
        ax.plot(m, 100 * _at("cluster.bubble", "m", m, {"p": p}), label=f"p = {p}")
    ax.axhline(10, color="grey", linestyle=":", linewidth=1)
    ax.set(xscale="log", yscale="log", xlabel="micro-batches per iteration m", ylabel="bubble, % of compute time",
           title="Pipeline bubble (p − 1)/m")
    ax.legend(fontsize=8)


def params_breakdown(ax, models: tuple[str, ...] = ("llama2-7b", "llama2-13b", "llama2-70b", "gpt3-175b")) -> None:
    parts = {"embeddings": "params.decoder.embeddings", "attention": "params.decoder.attention", "MLP": "params.decoder.mlp",
             "norms": "params.decoder.norms", "output head": "params.decoder.head"}
    per_layer = {"attention", "MLP", "norms"}
    titles = [preset(name).title for name in models]
    bottom = np.zeros(len(models))
    for label, formula_id in parts.items():
        shares = []
        for name in models:
            values = _model(name)
            count = float(estimate.exact(formula_id, **values)) * (values["l"] if label in per_layer else 1)
            shares.append(100 * count / values["P"])
        ax.bar(titles, shares, bottom=bottom, label=label)
        bottom += np.asarray(shares)
    ax.set(ylabel="% of all parameters", title="Where the parameters are")
    ax.legend(fontsize=7, loc="lower right")


def flops_shares(ax, model: str = "llama2-7b", seqs: tuple[int, ...] = (512, 1024, 2048, 4096, 8192, 16384, 32768)) -> None:
    values = _model(model) | {"b": 1}
    parts = {"Q, K, V, O projections": "flops.decoder.attention.projections", "QKᵀ and scores·V": "flops.decoder.attention.scores",
             "MLP": "flops.decoder.mlp"}
    seq = np.asarray(seqs)
    total = _at("flops.decoder.forward", "s", seq, values)
    bottom = np.zeros(len(seqs))
    labels = [str(x) for x in seqs]
    for label, formula_id in parts.items():
        share = 100 * values["l"] * _at(formula_id, "s", seq, values) / total
        ax.bar(labels, share, bottom=bottom, label=label)
        bottom += share
    ax.bar(labels, 100 - bottom, bottom=bottom, label="logits")
    ax.set(xlabel="sequence length s", ylabel="% of forward FLOPs", title=f"{preset(model).title}: who does the FLOPs")
    ax.legend(fontsize=7, loc="lower left")


def training_days(ax, model: str = "llama2-70b", tokens: float = 2e12, gpu_key: str = "a100-80gb", U: str = "2/5") -> None:
    n = np.array([64, 128, 256, 512, 1024, 2048, 4096])
    values = _model(model) | _gpu_values(gpu_key) | {"D": int(tokens), "U": U}
    ax.plot(n, _at("cluster.training_time", "n", n, values) / DAY, marker="o", label="6ΨD / (n·X·U)")
    ax.plot(n, _at("cluster.training_time.recompute", "n", n, values) / DAY, marker="s", label="8ΨD / (n·X·U), full recompute")
    ax.axhline(30, color="grey", linestyle=":", label="one month")
    ax.set(xscale="log", yscale="log", xlabel="GPUs n", ylabel="days",
           title=f"{preset(model).title} on {tokens / 1e12:g}T tokens, {gpu(gpu_key).name}, U = {U}")
    ax.set_xticks(n, [str(x) for x in n])
    ax.legend(fontsize=8)


def amdahl(ax, fractions: tuple[str, ...] = ("1/2000", "1/200", "1/20")) -> None:
    n = np.unique(np.round(np.logspace(0, 14, 100, base=2)))
    for f in fractions:
        ax.plot(n, _at("cluster.amdahl", "n", n, {"f": f}), label=f"serial fraction f = {float(Fraction(f)):.2%}")
    ax.plot(n, n, "k:", linewidth=1, label="ideal: speed-up = n")
    ax.set(xscale="log", yscale="log", xlabel="workers n", ylabel="speed-up", title="Amdahl: the serial part caps the speed-up at 1/f")
    ax.legend(fontsize=8)


PICTURES: dict[str, Callable] = {
    "memory_vs_micro_batch": memory_vs_micro_batch,
    "memory_breakdown": memory_breakdown,
    "roofline": roofline,
    "decode_latency": decode_latency,
    "bandwidth_vs_tp": bandwidth_vs_tp,
    "bubble_vs_m": bubble_vs_m,
    "params_breakdown": params_breakdown,
    "flops_shares": flops_shares,
    "training_days": training_days,
    "amdahl": amdahl,
    "memory_by_framework": memory_by_framework,
}


def _serving_pictures() -> dict[str, Callable]:
    """The serving lessons' pictures (render/documents/serving_figures.py), drawn from the numbers their prose quotes."""
    from llm_formulas.render.documents.serving_figures import PICTURES as SERVING

    return SERVING


def figure_png(figure) -> bytes:
    """A drawn figure as PNG bytes with fixed metadata."""
    figure.tight_layout()
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", metadata=METADATA)
    return buffer.getvalue()


def png(name: str, **options: object) -> bytes:
    """One picture as PNG bytes; the same name and options give the same bytes."""
    with plt.rc_context(STYLE):
        figure, ax = plt.subplots()
        (PICTURES.get(name) or _serving_pictures()[name])(ax, **options)
        data = figure_png(figure)
        plt.close(figure)
    return data
