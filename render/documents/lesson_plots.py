"""The lessons' pictures: each curve is a catalogue formula evaluated at a real model and GPU.

``png(name, **options)`` draws one picture and returns its PNG bytes (Agg, fixed
metadata: the same inputs give the same bytes). The pictures:

- ``memory_vs_micro_batch``: memory per GPU of the first pipeline stage against b, one
  line per recompute mode, crossing the GPU's HBM line (``memory.zero`` +
  l × ``memory.activations.layer.general.*``);
- ``memory_breakdown``: weights, gradients, Adam states and activations per GPU, stacked,
  for several (t, p) layouts;
- ``memory_by_framework``: the same model and layout as Megatron Core, DeepSpeed and FSDP hold it
  (``estimate`` with each framework of formulas/data/frameworks.py);
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
- ``amdahl``: speed-up against workers for several serial fractions (``cluster.amdahl``);
- the schematics of ``render.documents.schematics``: ``pipeline_schedule``, ``ring_allreduce``,
  ``tp_sharding``, ``zero_partitioning``.
"""

from __future__ import annotations

import io
from fractions import Fraction
from typing import Callable

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from llm_formulas.formulas.reports import estimate  # noqa: E402
from llm_formulas.formulas.vocabulary.examples import example as _example  # noqa: E402
from llm_formulas.formulas.data.gpus import gpu  # noqa: E402
from llm_formulas.formulas.data.presets import preset  # noqa: E402
from llm_formulas.render.documents import schematics  # noqa: E402
from llm_formulas.render.documents.plots import curve  # noqa: E402

STYLE = {"figure.figsize": (6.4, 3.8), "figure.dpi": 80, "font.size": 9, "axes.grid": True, "grid.alpha": 0.3}
METADATA = {"Software": "llm-formulas lesson"}
DAY = 86400
GB = 1e9
ACTIVATIONS = {"none": "memory.activations.layer.decoder.tp", "selective": "memory.activations.layer.decoder.selective",
               "full": "memory.activations.layer.full_recompute"}  # at the model's own switches (Llama: no dropout masks)


def _model(name: str) -> dict[str, object]:
    values = estimate.model_values(preset(name).architecture.values)
    values["P"] = int(estimate.exact("params.decoder.total", **values))
    values["glu_fused"] = 0  # the classic recipe's blocks: Megatron-LM's unfused SwiGLU (formulas/data/frameworks.py MEGATRON_LM)
    return values


def _text(values: dict[str, object]) -> dict[str, str]:
    """Values as the exact strings ``plots.curve`` reads."""
    return {name: str(value) for name, value in values.items()}


def _at(formula_id: str, sweep: str, xs, values: dict[str, object]) -> np.ndarray:
    return curve(formula_id, sweep, np.asarray(xs, dtype=np.float64), **_text(values))


def first_stage_bytes(model: str, mode: str, b: int, t: int, p: int, s: int) -> int:
    """Bytes on the first pipeline stage's GPU: 16Ψ/(t·p) of states and, under 1F1B, l layers' worth of activations
    (``memory.zero`` + l × ``memory.activations.layer.decoder.*`` at the model's switches), exactly."""
    values = _model(model) | {"t": t, "p": p, "s": s, "b": b}
    return int(estimate.exact("memory.zero", **values) + values["l"] * estimate.exact(ACTIVATIONS[mode], **values))


def estimate_first_stage(model: str, gpu_key: str, framework_key: str, t: int, p: int, s: int, b: int = 1,
                         recompute: str = "selective") -> int:
    """The first stage's bytes as ``llm-formulas estimate`` prices them under ``framework_key`` (formulas.reports.estimate with
    m = p micro-batches, enough for 1F1B to hold p of them): the figure a lesson sets beside its own sketch."""
    from llm_formulas.formulas.data.frameworks import framework

    layout = estimate.Layout(n=t * p, t=t, p=p, d=1, b=b, m=p, s=s, recompute=recompute)
    inputs = estimate.Inputs(model=estimate.model_values(preset(model).architecture.values), gpu=gpu(gpu_key).inputs(),
                             network=25 * 10**9, tokens=None, utilization=Fraction(2, 5), overlap=Fraction(1, 2),
                             framework=framework(framework_key))
    return int(estimate.estimate(layout, inputs)["memory"]["first_stage"]["total"])


def largest_micro_batch(model: str, gpu_key: str, mode: str, t: int, p: int, s: int, most: int = 64) -> int:
    """The largest micro-batch (up to ``most``) whose first stage fits the GPU's memory; 0 when not even b = 1 fits."""
    capacity = gpu(gpu_key).memory
    return max((b for b in range(1, most + 1) if first_stage_bytes(model, mode, b, t, p, s) <= capacity), default=0)


def memory_vs_micro_batch(ax, model: str = "llama2-70b", gpu_key: str = "a100-80gb", t: int = 8, p: int = 8, s: int = 4096) -> None:
    values = _model(model) | {"t": t, "p": p, "s": s}
    capacity = float(gpu(gpu_key).memory) / GB
    b = np.arange(1, 17)
    states = float(estimate.exact("memory.zero", **values)) / GB
    top = capacity * 2.2
    for mode, formula_id in ACTIVATIONS.items():
        total = states + values["l"] * _at(formula_id, "b", b, values) / GB  # 1F1B: the first stage holds l layers' worth
        fits = largest_micro_batch(model, gpu_key, mode, t, p, s, most=len(b))
        note = (f"{total[0]:.0f} GB at b = 1, above the chart" if total[0] > top else f"fits up to b = {fits}" if fits
                else "does not fit at b = 1")
        (line,) = ax.plot(b, total, marker="o", markersize=3, label=f"recompute {mode}: {note}")
        if fits:
            ax.annotate(f"b ≤ {fits}", (fits, total[fits - 1]), textcoords="offset points", xytext=(4, -12),
                        fontsize=8, color=line.get_color())
    ax.axhline(states, color="grey", linestyle="--", linewidth=1, label=f"model states 16Ψ/(t·p) = {states:.1f} GB")
    ax.axhline(capacity, color="firebrick", linewidth=2, label=f"HBM {capacity:.0f} GB")
    ax.set(xlabel="micro-batch b (sequences)", ylabel="GB per GPU", ylim=(0, top), xlim=(0.5, b[-1] + 0.5),
           )
    ax.set_title(f"{preset(model).title}, tensor {t} × pipeline {p}, {s} tokens: the first stage", fontsize=8)
    ax.set_xticks(b[::2])
    ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.16), ncol=2, frameon=False)


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
    from llm_formulas.formulas.data.frameworks import framework

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
    ax.set(xscale="log", yscale="log", xlabel="tensor parallel degree t", ylabel="GB/s per GPU, one way")
    ax.set_title(f"Link bandwidth a tensor-parallel layer of hidden size {h} needs at {float(Fraction(U)):.0%} utilization,\n"
                 f"its all-reduces taking at most {float(Fraction(r)):g}× the compute time (the whole-layer rule)", fontsize=8)
    ax.set_xticks(t, [str(x) for x in t])
    ax.legend(fontsize=6, ncol=3, loc="upper center", bbox_to_anchor=(0.5, -0.16), frameon=False)


def tp_link_need(ax, cases: tuple[str, ...] = ("S11c", "S11d", "S11e", "S11f")) -> None:
    """Li Bojie's rule (001): the one-way link a TP rank needs to feed its Q, K, V projections, X·q·t/(6h), against t,
    for each of the essay's GPUs (its cases' X, h, q), beside each one's link one way; they cross at comms.tp.max_degree."""
    t = np.array([1, 2, 4, 8, 16, 32, 64])
    entries = [(_example(case), {name: value for name, value in _example(case).inputs}) for case in cases]
    colours: dict[object, str] = {}
    for flops in dict.fromkeys(values["X"] for _, values in entries):  # one line of need per compute figure
        names = "/".join(dict.fromkeys(e.title.split(", ", 1)[1].split(" on ")[0] for e, v in entries if v["X"] == flops))
        values = next(v for _, v in entries if v["X"] == flops)
        (line,) = ax.plot(t, _at("comms.tp.required_link", "t", t, values) / GB, marker="o",
                          label=f"{names} at {float(flops) / 1e12:.0f} TFLOPS needs")
        colours[flops] = line.get_color()
    for entry, values in entries:
        name = entry.title.split(", ", 1)[1].split(" (")[0]  # "RTX 4090 on PCIe Gen4"
        link = float(values["W_link"]) / 2 / GB
        t_max = float(estimate.exact("comms.tp.max_degree", **_text(values)))
        colour = colours[values["X"]]
        ax.axhline(link, color=colour, linestyle=":", linewidth=1)
        ax.annotate(f"{name}, {link:.0f} GB/s one way: t ≤ {t_max:.3g}", (t_max, link), textcoords="offset points",
                    xytext=(8, -10), fontsize=7, color=colour)
        ax.plot([t_max], [link], "o", color=colour, markersize=5, markerfacecolor="white")
    ax.set(xscale="log", yscale="log", xlabel="tensor parallel degree t", ylabel="GB/s per GPU, one way")
    ax.set_title("The essay's rule: the link must bring each rank's Q, K, V inputs as fast as it computes them\n"
                 "(X·q·t / 6h, h = 8192, 16-bit); it keeps up to the left of each circle", fontsize=8)
    ax.set_xticks(t, [str(x) for x in t])
    ax.legend(fontsize=7, loc="upper left")


def bubble_vs_m(ax, stages: tuple[int, ...] = (2, 4, 8, 12, 16), mark: tuple[int, int] | None = None) -> None:
    """The bubble against m, one line per stage count p; ``mark`` = (p, m) puts a run's point on its line."""
    most = max(256, 2 * mark[1] if mark else 0)
    m = np.unique(np.round(np.logspace(0, np.log2(most), 80, base=2)))
    for p in stages:
        ax.plot(m, 100 * _at("cluster.bubble", "m", m, {"p": p}), label=f"{p} stages")
    if mark:
        p, count = mark
        bubble = 100 * float(estimate.exact("cluster.bubble", p=p, m=count))
        ax.plot([count], [bubble], "k*", markersize=9)
        ax.annotate(f"{p} stages, m = {count}: {bubble:.1f} %", (count, bubble), textcoords="offset points", xytext=(-20, 10),
                    fontsize=8, ha="right")
    ax.axhline(10, color="grey", linestyle=":", linewidth=1, label="10 % of the compute time")
    ax.set(xscale="log", yscale="log", xlabel="micro-batches per iteration m", ylabel="bubble, % of compute time",
           title="Pipeline bubble (p − 1)/m of p stages")
    ax.legend(fontsize=7, loc="lower left")


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
    ax.set(xlabel="sequence length s (tokens)", ylabel="% of forward FLOPs", ylim=(0, 100),
           title=f"{preset(model).title}: who does the FLOPs of a forward pass")
    ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.16), ncol=4, frameon=False)


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


def waste_vs_interval(ax, n: int = 2048, M_fail: int = 30 * DAY, delta_ckpt: int = 60, R_restore: int = 600) -> None:
    """The share of the time lost to checkpoints, restarts and re-done work against the checkpoint interval
    (``reliability.wasted``), with Young's interval (``reliability.young_daly``) marked."""
    values = {"n": n, "M_fail": M_fail, "delta_ckpt": delta_ckpt, "R_restore": R_restore}
    tau = np.unique(np.round(np.logspace(np.log10(30), np.log10(4 * 3600), 90)))
    ax.plot(tau / 60, 100 * _at("reliability.wasted", "tau_ckpt", tau, values), label="lost: checkpoints + restarts + re-done work")
    ax.plot(tau / 60, 100 * delta_ckpt / tau, ":", label="writing checkpoints, δ/τ")
    ax.plot(tau / 60, 100 * n * (R_restore + tau / 2) / M_fail, ":", label="restarts and re-done work, n(R + τ/2)/M")
    best = float(estimate.exact("reliability.young_daly", **values))
    lost = 100 * float(estimate.exact("reliability.wasted", **values, tau_ckpt=sp_rational(best)))
    ax.plot([best / 60], [lost], "k*", markersize=9)
    ax.annotate(f"Young's interval {best / 60:.1f} min: {lost:.0f} % lost", (best / 60, lost), textcoords="offset points",
                xytext=(8, 8), fontsize=8)
    ax.set(xscale="log", xlabel="checkpoint interval τ (minutes)", ylabel="% of the run's time", ylim=(0, 150))
    ax.set_title(f"{n} GPUs, each failing once in {M_fail / DAY:.0f} days; {delta_ckpt} s to checkpoint, "
                 f"{R_restore / 60:.0f} minutes to restart", fontsize=8)
    ax.legend(fontsize=7, loc="upper right")


def onebit_vs_warmup(ax, k_cmp: int = 32, marks: tuple[str, ...] = ("0.15", "0.174")) -> None:
    """How many times less 1-bit Adam sends (``optimizations.onebit_adam.reduction``) against its warm-up share."""
    f = np.linspace(0.005, 0.6, 200)
    ax.plot(100 * f, _at("optimizations.onebit_adam.reduction", "f_w", f, {"k_cmp": k_cmp}), label=f"1/(f + (1 − f)/{k_cmp})")
    ax.plot(100 * f, 1 / f, ":", label="1/f: no compressor beats the warm-up")
    ax.axhline(k_cmp, color="grey", linestyle="--", linewidth=1, label=f"{k_cmp}×: the compression alone")
    for number, mark in enumerate(marks):
        value = float(estimate.exact("optimizations.onebit_adam.reduction", f_w=mark, k_cmp=k_cmp))
        ax.plot([100 * float(Fraction(mark))], [value], "ko", markersize=4)
        ax.annotate(f"{float(Fraction(mark)):.1%} warm-up: {value:.2f}×", (100 * float(Fraction(mark)), value),
                    textcoords="offset points", xytext=(10, 18 - 26 * number), fontsize=8,
                    arrowprops={"arrowstyle": "-", "linewidth": 0.5})
    ax.set(xlabel="warm-up share of the steps f (%)", ylabel="times less traffic", ylim=(0, k_cmp * 1.15),
           title="1-bit Adam: the uncompressed warm-up sets the gain")
    ax.legend(fontsize=7, loc="upper right")


def utilization_rows(ax, rows: tuple[str, ...] = ("megatron2021.t1.3.6B.peak", "megatron2021.t1.1T.peak", "korthikanti2022.t5.175B.mfu",
                                                  "korthikanti2022.t5.175B.hfu", "palm2022.b.mfu", "palm2022.t3.mtnlg.mfu")) -> None:
    """Published utilizations as printed (formulas/data/published), each beside the catalogue's value at the paper's inputs."""
    from llm_formulas.formulas.data.published import published_rows

    found = {row.id: row for row in published_rows()}
    names, printed, ours = [], [], []
    for key in rows:
        row = found[key]
        values = dict(row.inputs) | {m.name: m.value for m in row.measured}
        names.append(key.split(".", 1)[0].replace("2021", " 2021").replace("2022", " 2022") + "\n" + key.split(".", 2)[-1])
        printed.append(float(row.printed * row.scale) * 100)
        ours.append(float(estimate.exact(row.formula, **{k: str(v) for k, v in values.items()})) * 100)
    x = np.arange(len(rows))
    ax.bar(x - 0.2, printed, 0.4, label="as printed")
    ax.bar(x + 0.2, ours, 0.4, label="the catalogue, at the paper's inputs")
    ax.set_xticks(x, names, fontsize=6)
    ax.set(ylabel="% of peak", ylim=(0, 70), title="Utilizations the papers print, and their formulas evaluated")
    ax.legend(fontsize=7, loc="upper left")


def flops_conventions(ax, model: str = "gpt3-175b", B: int = 1536, s: int = 2048) -> None:
    """One iteration's FLOPs under each convention, as a share of the exact count (``flops.training``)."""
    values = _model(model) | {"B": B, "b": B, "s": s, "D": B * s}
    exact = float(estimate.exact("flops.training", **values))
    counts = {"6ΨD": "flops.training.approx", "exact\n(forward + backward)": "flops.training",
              "Megatron Eq. 3\n(full recompute)": "flops.megatron", "8ΨD\n(full recompute)": "flops.training.recompute.approx"}
    names = list(counts)
    shares = [100 * float(estimate.exact(formula_id, **values)) / exact for formula_id in counts.values()]
    bars = ax.bar(names, shares, color=["#9ecae1", "#3182bd", "#fdae6b", "#e6550d"])
    for bar, share in zip(bars, shares):
        ax.text(bar.get_x() + bar.get_width() / 2, share + 1, f"{share:.1f} %", ha="center", fontsize=8)
    ax.set_xticks(range(len(names)), names, fontsize=7)
    ax.set(ylabel="% of the exact count", ylim=(0, 150))
    ax.set_title(f"{preset(model).title}, {B} sequences of {s} tokens: one iteration's FLOPs by convention", fontsize=8)


def emissions_by_grid(ax, H_gpu: int = 1720320, W_gpu: int = 400, pues: tuple[str, ...] = ("1", "1.1", "1.5")) -> None:
    """A run's emissions (``energy.emissions``) against the grid's carbon intensity, one line per PUE."""
    intensity = np.linspace(20, 800, 100)
    for pue in pues:
        ax.plot(intensity, _at("energy.emissions", "I_co2", intensity, {"H_gpu": H_gpu, "W_gpu": W_gpu, "PUE": pue}) / 1e6,
                label=f"PUE {pue}")
    for name, grid in (("France", 57), ("US average", 385)):
        ax.axvline(grid, color="grey", linestyle=":", linewidth=1)
        ax.text(grid + 8, 0.97, name, fontsize=7, rotation=90, va="top", transform=ax.get_xaxis_transform())
    ax.set(xlabel="grid carbon intensity (g CO2e per kWh)", ylabel="tonnes of CO2e",
           title=f"{H_gpu:,} GPU-hours at {W_gpu} W: the grid decides")
    ax.legend(fontsize=7, loc="upper left")


def tokens_per_dollar(ax, gpus: tuple[str, ...] = ("a100-80gb", "h100-sxm"), U: str = "2/5") -> None:
    """Tokens one dollar of rent trains (``cost.tokens_per_dollar``) against the model's size, each GPU at its own
    rent (formulas.data.gpus: the preset's price per GPU-hour and its source)."""
    P = np.logspace(9, 12, 60)
    for key in gpus:
        values = {"X": str(gpu(key).flops("bf16")), "U": U, "c_rent": str(gpu(key).rent)}
        ax.plot(P / 1e9, _at("cost.tokens_per_dollar", "P", P, values), label=f"{gpu(key).name} at ${float(gpu(key).rent):.2f}/h")
    ax.set(xscale="log", yscale="log", xlabel="parameters (billions)", ylabel="tokens per dollar",
           title=f"Tokens a dollar trains at {float(Fraction(U)):.0%} of peak, each GPU at its rent ({gpu(gpus[0]).rent_source.ref})")
    ax.legend(fontsize=7)


def moe_params(ax, models: tuple[str, ...] = ("mixtral-8x7b", "mixtral-8x22b", "qwen3-235b-a22b", "deepseek-v3")) -> None:
    """Total and active parameters of MoE models (``params.decoder.total``, ``params.decoder.active``), each split into the
    part every token uses (attention, embeddings, shared experts, router) and the routed experts (``params.ep.experts``)."""
    x = np.arange(len(models))
    for offset, kind in ((-0.2, "total"), (0.2, "active")):
        shared, experts = [], []
        for name in models:
            values = _model(name)
            routed = float(estimate.exact("params.ep.experts", **values))
            count = float(values["P"]) if kind == "total" else float(estimate.exact("params.decoder.active", **values))
            used = routed if kind == "total" else routed * values["k"] / values["E"]
            shared.append((count - used) / 1e9)
            experts.append(used / 1e9)
        ax.bar(x + offset, shared, 0.4, color="#9ecae1" if kind == "total" else "#6baed6",
               label=f"{kind}: attention, embeddings, shared")
        ax.bar(x + offset, experts, 0.4, bottom=shared, color="#fdae6b" if kind == "total" else "#e6550d",
               label=f"{kind}: routed experts")
    ax.set_xticks(x, [preset(name).title for name in models], fontsize=7)
    ax.set(yscale="log", ylabel="parameters (billions)", ylim=(0.5, 2000),
           title="Mixture of experts: the parameters held, and those a token uses")
    ax.legend(fontsize=7, loc="upper left")


def precision_bytes(ax, model: str = "llama2-70b", r_lora: int = 16) -> None:
    """Bytes of training state per parameter of the model under each recipe: bf16 mixed precision (``memory.model_states``),
    FP8 (``memory.fp8.model_states``), LoRA and QLoRA (``memory.lora.states``), against serving in bf16."""
    values = _model(model) | {"r_lora": r_lora, "B_q": 64, "B_q2": 256}
    values |= {f"lora_{part}": 1 for part in ("q", "k", "v", "o", "gate", "up", "down")}
    psi = values["P"]
    keep = psi - estimate.exact("params.quantized.linear", **values)
    adapters = estimate.exact("params.lora.total", **values)
    nf4 = estimate.exact("memory.qlora.bytes_per_weight", **values)
    recipes = {
        "bf16 mixed precision": estimate.exact("memory.model_states", **values),
        "FP8 (Transformer Engine)": estimate.exact("memory.fp8.model_states", **values),
        f"LoRA r = {r_lora}, bf16 base": estimate.exact("memory.lora.states", P=psi, P_keep=keep, P_lora=adapters, q_base=2),
        f"QLoRA r = {r_lora}, NF4 base": estimate.exact("memory.lora.states", P=psi, P_keep=keep, P_lora=adapters, q_base=nf4),
        "serving, bf16 weights": estimate.exact("memory.model_states.inference", **values),
    }
    per = [float(total) / psi for total in recipes.values()]
    bars = ax.barh(list(recipes), per, color=["#3182bd", "#e6550d", "#74c476", "#31a354", "#969696"])
    for bar, value in zip(bars, per):
        ax.text(value + 0.2, bar.get_y() + bar.get_height() / 2, f"{value:.2f} B/param, {value * psi / 1e9:,.0f} GB",
                va="center", fontsize=7)
    ax.invert_yaxis()
    ax.set(xlabel="bytes per parameter of the model", xlim=(0, 26),
           title=f"{preset(model).title}: what each recipe stores per parameter")


def context_memory(ax, model: str = "llama2-70b", gpu_key: str = "h100-sxm", t: int = 8, p: int = 8,
                   cs: tuple[int, ...] = (1, 2, 4, 8, 16)) -> None:
    """The first stage's memory (16Ψ/(t·p) + l × ``memory.activations.layer.cp_sp``) against the sequence length, one
    line per context-parallel degree c, beside the GPU's memory."""
    values = _model(model) | {"t": t, "p": p, "b": 1}
    s = 2.0 ** np.arange(12, 19)
    states = float(estimate.exact("memory.zero", **values)) / GB
    for c in cs:
        ax.plot(s, states + values["l"] * _at("memory.activations.layer.cp_sp", "s", s, values | {"c": c}) / GB, marker="o",
                markersize=3, label=f"c = {c}")
    ax.axhline(float(gpu(gpu_key).memory) / GB, color="firebrick", linewidth=2, label=f"{gpu(gpu_key).name}")
    ax.axhline(states, color="grey", linestyle="--", linewidth=1, label=f"model states {states:.1f} GB")
    ax.set(xscale="log", yscale="log", xlabel="sequence length s (tokens)", ylabel="GB on the first stage's GPU")
    ax.set_title(f"{preset(model).title}, tensor {t} × pipeline {p}, flash attention and sequence parallelism:\n"
                 f"the first stage against s, for context-parallel degrees c", fontsize=8)
    ax.set_xticks(s, [f"{int(x) // 1024}k" for x in s])
    ax.legend(fontsize=7, loc="upper left", ncol=2)


def gemm_efficiency(ax, gpu_key: str = "a100-80gb", marks: tuple[tuple[int, int, int], ...] = ()) -> None:
    """The fraction of peak one GEMM reaches (``perf.gemm.efficiency`` at the A100's calibrated constants) against the size
    of a square GEMM, with given [M, K] × [K, N] shapes marked."""
    from llm_formulas.formulas.data.calibration import efficiency

    values = {name: str(value) for name, value in (gpu(gpu_key).inputs() | efficiency(gpu_key).values() | {"q": 2}).items()}
    size = np.unique(np.round(np.logspace(np.log2(64), np.log2(32768), 80, base=2)))
    shares = np.array([100 * float(estimate.exact("perf.gemm.efficiency", **values, M_rows=int(n), K_inner=int(n), N_cols=int(n)))
                       for n in size])
    ax.plot(size, shares, label="square GEMM, M = K = N")
    ax.axhline(100 * float(efficiency(gpu_key).eta_gemm), color="grey", linestyle="--", linewidth=1, label=f"η_gemm = {100 * float(efficiency(gpu_key).eta_gemm):.1f} %: the ceiling")
    shares = [100 * float(estimate.exact("perf.gemm.efficiency", **values, M_rows=rows, K_inner=inner, N_cols=cols))
              for rows, inner, cols in marks]
    ranked = sorted(range(len(marks)), key=lambda index: -shares[index])  # labels top to bottom as the marks: no crossing
    for line, index in enumerate(ranked):
        (rows, inner, cols), share = marks[index], shares[index]
        flops_size = (rows * inner * cols) ** (1 / 3)
        (dot,) = ax.plot([flops_size], [share], "o")
        # each label on its own line of a column at the left, in its mark's colour: marks close together never overprint
        ax.annotate(f"[{rows}, {inner}] × [{inner}, {cols}]: {share:.0f} %", (flops_size, share), textcoords="axes fraction",
                    xytext=(0.02, 0.68 - 0.075 * line), fontsize=7, va="center", color=dot.get_color(),
                    arrowprops={"arrowstyle": "-", "linewidth": 0.4, "color": dot.get_color()})
    ax.set(xscale="log", xlabel="GEMM size (the cube root of M·K·N)", ylabel="% of the dense peak", ylim=(0, 100))
    ax.set_title(f"{gpu(gpu_key).name}: what one GEMM reaches (constants fitted on Megatron-LM 2021)", fontsize=8)
    ax.legend(fontsize=7, loc="lower right")


def sp_rational(value: float):
    import sympy as sp

    return sp.nsimplify(value, rational=True)


PICTURES: dict[str, Callable] = {
    "memory_vs_micro_batch": memory_vs_micro_batch,
    "memory_breakdown": memory_breakdown,
    "roofline": roofline,
    "decode_latency": decode_latency,
    "bandwidth_vs_tp": bandwidth_vs_tp,
    "tp_link_need": tp_link_need,
    "bubble_vs_m": bubble_vs_m,
    "params_breakdown": params_breakdown,
    "flops_shares": flops_shares,
    "training_days": training_days,
    "amdahl": amdahl,
    "memory_by_framework": memory_by_framework,
    "waste_vs_interval": waste_vs_interval,
    "moe_params": moe_params,
    "precision_bytes": precision_bytes,
    "context_memory": context_memory,
    "gemm_efficiency": gemm_efficiency,
    "onebit_vs_warmup": onebit_vs_warmup,
    "utilization_rows": utilization_rows,
    "flops_conventions": flops_conventions,
    "emissions_by_grid": emissions_by_grid,
    "tokens_per_dollar": tokens_per_dollar,
    "pipeline_schedule": schematics.pipeline_schedule,
    "uneven_schedule": schematics.uneven_schedule,
    "ring_allreduce": schematics.ring_allreduce,
    "tp_sharding": schematics.tp_sharding,
    "zero_partitioning": schematics.zero_partitioning,
}
SIZES = {"pipeline_schedule": (7.2, 4.6), "uneven_schedule": (7.6, 4.0), "ring_allreduce": (7.2, 2.6), "tp_sharding": (7.6, 2.6), "zero_partitioning": (6.4, 4.2)}
SCHEMATIC_DPI = 110  # the schematics carry small labels


def _serving_pictures() -> dict[str, Callable]:
    """The serving lessons' pictures (render/documents/serving_figures.py), drawn from the numbers their prose quotes."""
    from llm_formulas.render.documents.serving_figures import PICTURES as SERVING

    return SERVING


def figure_png(figure, sharpness: int = 1) -> bytes:
    """A drawn figure as PNG bytes with fixed metadata, ``sharpness`` times as many pixels a side as it is shown
    (2 for the lessons: a notebook shows it at its size, a slide at the slide's width, still sharp)."""
    figure.tight_layout()
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", metadata=METADATA, dpi=figure.dpi * sharpness)
    return buffer.getvalue()


def png(name: str, sharpness: int = 1, **options: object) -> bytes:
    """One picture as PNG bytes; the same name and options give the same bytes."""
    with plt.rc_context(STYLE | ({"figure.figsize": SIZES[name], "figure.dpi": SCHEMATIC_DPI} if name in SIZES else {})):
        figure, ax = plt.subplots()
        (PICTURES.get(name) or _serving_pictures()[name])(ax, **options)
        data = figure_png(figure, sharpness)
        plt.close(figure)
    return data
