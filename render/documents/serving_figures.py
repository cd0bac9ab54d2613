"""The serving lessons' numbers and pictures, from one set of calls: every figure a lesson's prose quotes is read from
the same arrays its picture draws (formulas/reports/serving_report.py through the generated NumPy code, or exactly).

Curves: ``decode_curve`` (TPOT and its terms against the batch), ``kv_wall`` (the largest batch against the context),
``experts_curve`` (experts a batch reaches), ``speculative_curve`` (speed-up against the acceptance rate);
``answer_users`` sizes a deployment for a number of concurrent users at a TPOT target (continuous batching in steady
state). The pictures (registered in render/documents/lesson_plots.py) draw them.
"""

from __future__ import annotations

import math
from functools import cache

import numpy as np

from llm_formulas.formulas.reports import estimate
from llm_formulas.formulas.data.gpus import gpu
from llm_formulas.formulas.data.hf_config import read_config
from llm_formulas.formulas.data.presets import preset
from llm_formulas.formulas.reports.serving_report import WORKSPACE_TOKENS, ServeInputs, base_values, compute_precision, report
from llm_formulas.render.numeric.evaluator import NUMPY_OPS, numeric
from llm_formulas.render.numeric.serving_plan import _floats

# meta-llama/Llama-3.1-70B, config.json (the shape of Llama-2-70B with a 128256-token vocabulary and a 128k window)
LLAMA31_70B = {"model_type": "llama", "hidden_size": 8192, "intermediate_size": 28672, "num_hidden_layers": 80,
               "num_attention_heads": 64, "num_key_value_heads": 8, "vocab_size": 128256, "max_position_embeddings": 131072,
               "tie_word_embeddings": False, "rms_norm_eps": 1e-05}
BATCHES = np.unique(np.round(np.logspace(0, 11, 45, base=2)))


@cache
def model(name: str) -> tuple[tuple[str, int], ...]:
    """A model's values: a preset by name, or ``llama3.1-70b`` from its config."""
    architecture = read_config(LLAMA31_70B) if name == "llama3.1-70b" else preset(name).architecture
    return tuple(estimate.model_values(architecture.values).items())


def title(name: str) -> str:
    return "Llama-3.1 70B" if name == "llama3.1-70b" else preset(name).title


def inputs(name: str, gpu_key: str, weights: str = "bf16", kv: str = "bf16") -> ServeInputs:
    return ServeInputs(dict(model(name)), gpu(gpu_key), weights, kv)


def decode_curve(name: str, gpu_key: str, t: int, s_in: int, s_out: int, weights: str = "bf16", kv: str = "bf16",
                 p: int = 1, batches: np.ndarray = BATCHES) -> dict[str, np.ndarray]:
    """Over the batches: TPOT and the decoding step's terms at the mean context, TTFT, whether it fits, tokens/s."""
    numeric_inputs = _floats(inputs(name, gpu_key, weights, kv))
    b = np.asarray(batches, dtype=np.float64)
    doc = report(np.full_like(b, t), np.full_like(b, p), 1, 1, b, s_in, s_out, numeric_inputs, numeric, NUMPY_OPS)
    step = doc["decode_step"]
    return {"batch": b, "tpot": doc["tpot_seconds"], "ttft": doc["ttft_seconds"], "weights": step["weights_seconds"],
            "kv": step["kv_seconds"], "compute": step["compute_seconds"], "fixed": step["fixed_seconds"],
            "link": step["link_seconds"], "fits": np.asarray(doc["memory"]["fits"], dtype=bool),
            "rate": doc["output_tokens_per_second"], "max_batch": doc["memory"]["max_batch"]}


def exact_report(name: str, gpu_key: str, t: int, b: int, s_in: int, s_out: int, weights: str = "bf16", kv: str = "bf16",
                 p: int = 1) -> dict:
    """The exact report of one layout (what ``llm-formulas serve`` prints)."""
    return report(t, p, 1, 1, b, s_in, s_out, inputs(name, gpu_key, weights, kv))


def kv_wall(name: str, gpu_key: str, t: int, contexts: np.ndarray, weights: str = "bf16", kv: str = "bf16") -> np.ndarray:
    """The largest batch whose cache fits beside the weights and a workspace at each context (serving.memory.max_batch)."""
    values = base_values(_floats(inputs(name, gpu_key, weights, kv)), t, 1, NUMPY_OPS)
    values |= {"P": float(estimate.exact("params.decoder.total", **dict(model(name))))}
    held = values | {"M_w": numeric("serving.memory.weights", **values),
                     "M_ws": numeric("serving.memory.workspace", **(values | {"n_chunk": WORKSPACE_TOKENS}))}
    return np.floor(numeric("serving.memory.max_batch", **(held | {"s_ctx": np.asarray(contexts, dtype=np.float64)})))


def experts_curve(name: str, batches: np.ndarray = BATCHES) -> dict[str, np.ndarray]:
    """Distinct experts per MoE layer a decoding step of b tokens reaches, and the share of the weights it reads."""
    values = dict(model(name))
    b = np.asarray(batches, dtype=np.float64)
    touched = numeric("serving.decode.experts_touched", E=values["E"], k=values["k"], b=b)
    floats = {k: float(v) for k, v in values.items()}
    read = numeric("serving.decode.params_read", **(floats | {"b": b, "E_hit": touched}))
    total = float(estimate.exact("params.decoder.total", **values))
    return {"batch": b, "touched": touched, "share": read / total, "experts": values["E"], "per_token": values["k"]}


def speculative_curve(alphas: np.ndarray, drafts: int, cost: float) -> np.ndarray:
    return numeric("serving.speculative.speedup", alpha_acc=np.asarray(alphas, dtype=np.float64), gamma_spec=float(drafts),
                   c_draft=cost)


def answer_users(name: str, gpu_key: str, users: int, target: float, s_in: int, s_out: int, weights: str = "bf16",
                 kv: str = "bf16") -> dict:
    """The fewest GPUs that keep ``users`` sequences in flight at a TPOT ≤ ``target``: continuous batching in steady
    state (each step also carries the prefill FLOPs of the b/s_out prompts that join it), replicas of t GPUs with b
    sequences each, ⌈users/b⌉ of them; then $ per million output tokens at the preset's price."""
    best = None
    values = dict(model(name))
    served = inputs(name, gpu_key, weights, kv)
    peak = float(served.gpu.flops(compute_precision(weights)))
    for t in (1, 2, 4, 8):
        if values["a"] % t:
            continue
        curve = decode_curve(name, gpu_key, t, s_in, s_out, weights, kv)
        one = report(np.full(1, float(t)), np.ones(1), 1, 1, np.ones(1), s_in, s_out, _floats(served), numeric, NUMPY_OPS)
        step = numeric("serving.batching.continuous.step", T_tok=curve["tpot"], b=curve["batch"], F_pf=one["flops"]["prefill"],
                       s_out=float(s_out), t=float(t), X=peak, eta_pf=float(served.fitted.eta_pf))
        for i in np.flatnonzero(curve["fits"] & (step <= target)):
            replicas = math.ceil(users / curve["batch"][i])
            gpus = t * replicas
            if best is None or (gpus, step[i]) < (best["gpus"], best["step"]):
                best = {"t": t, "batch": int(curve["batch"][i]), "replicas": replicas, "gpus": gpus, "step": float(step[i])}
    if best is None:
        return {"gpus": None}
    rate = users / best["step"]  # every user gets a token per step
    price = float(served.gpu.rent)
    best |= {"tokens_per_second": rate, "dollars_per_million": price * best["gpus"] / 3600 / rate * 1e6, "price": price}
    return best


__all__ = ["LLAMA31_70B", "answer_users", "decode_curve", "exact_report", "experts_curve", "kv_wall", "model",
           "speculative_curve", "title"]


# --- pictures (render.documents.lesson_plots draws them by name) -----------------------------------------------


def draw_phases(ax, name: str = "llama3.1-70b", gpu_key: str = "h100-sxm", t: int = 8, s_in: int = 2000,
                batches: tuple[int, ...] = (1, 8, 64, 512)) -> None:
    """Prefill and decoding steps on one roofline: FLOPs per byte read against the FLOP/s they can reach."""
    served = inputs(name, gpu_key)
    peak, bandwidth = float(served.gpu.flops("bf16")), float(served.gpu.memory_bandwidth)
    intensity = np.logspace(-0.5, 4.5, 200)
    ax.plot(intensity, np.minimum(peak, intensity * bandwidth) / 1e12, "k", linewidth=2, label=f"{served.gpu.name} roofline")
    phases = phase_intensities(name, gpu_key, t, s_in, np.array(batches, dtype=np.float64))
    for b, point in zip(batches, phases["decode"]):
        ax.plot(point, min(peak, point * bandwidth) / 1e12, "o", color="tab:blue")
        ax.annotate(f"decode b={b}", (point, min(peak, point * bandwidth) / 1e12), xytext=(4, -10), textcoords="offset points",
                    fontsize=7)
    ax.plot(phases["prefill"], peak / 1e12, "s", color="tab:red")
    ax.annotate(f"prefill of {s_in} tokens", (phases["prefill"], peak / 1e12), xytext=(-60, -14), textcoords="offset points",
                fontsize=7)
    ax.set(xscale="log", yscale="log", xlabel="FLOPs per byte read from HBM", ylabel="attainable TFLOP/s per GPU",
           title=f"{title(name)}, TP {t}: the prefill is compute-bound, decoding memory-bound")
    ax.legend(fontsize=7, loc="lower right")


def phase_intensities(name: str, gpu_key: str, t: int, s_in: int, batches: np.ndarray) -> dict:
    """FLOPs per byte read: of a decoding step at each batch (its weights and cache), and of one prompt's prefill."""
    b = np.asarray(batches, dtype=np.float64)
    doc = report(np.full_like(b, t), np.ones_like(b), 1, 1, b, s_in, 64, _floats(inputs(name, gpu_key)), numeric, NUMPY_OPS)
    decode = doc["flops"]["decode_step"] / (doc["weights_read_bytes"] + doc["kv_read_bytes"])
    prefill = doc["flops"]["prefill"][0] / (doc["weights_read_bytes"][0])  # batch 1: one prompt, the weights read once
    return {"decode": decode, "prefill": float(prefill)}


def draw_tpot(ax, name: str = "llama3.1-70b", gpu_key: str = "h100-sxm", t: int = 8, s_in: int = 2000, s_out: int = 500) -> None:
    """TPOT against the batch, stacked by term: the weights (flat), the KV cache (growing with b), compute, fixed, links."""
    curve = decode_curve(name, gpu_key, t, s_in, s_out)
    fits = curve["fits"]
    b = curve["batch"][fits]
    ax.stackplot(b, *(1e3 * np.broadcast_to(curve[key], curve["batch"].shape)[fits] for key in ("weights", "kv", "compute", "fixed", "link")),
                 labels=("weights read once", "KV cache of every sequence", "compute", "per-layer kernels", "TP all-reduces"), alpha=0.8)
    ax.plot(b, 1e3 * curve["tpot"][fits], "k", linewidth=2, label="TPOT (mean over the output)")
    ax.set(xscale="log", xlabel="batch b (sequences decoded together)", ylabel="ms per output token",
           title=f"{title(name)} on {t} × {gpu(gpu_key).name}, {s_in} + {s_out} tokens")
    ax.legend(fontsize=7, loc="upper left")


def draw_kv_wall(ax, name: str = "llama3.1-70b", gpu_key: str = "h100-sxm", t: int = 8) -> None:
    """The largest batch that fits against the context, 16-bit and FP8 cache."""
    contexts = np.unique(np.round(np.logspace(9, 17, 60, base=2)))
    for weights, kv in (("bf16", "bf16"), ("fp8", "fp8")):
        ax.plot(contexts, np.maximum(kv_wall(name, gpu_key, t, contexts, weights, kv), 0.5), label=f"weights {weights}, KV {kv}")
    ax.set(xscale="log", yscale="log", xlabel="context (tokens per sequence)", ylabel="largest batch that fits",
           title=f"The KV wall: {title(name)} on {t} × {gpu(gpu_key).name}")
    ax.legend(fontsize=7)


def draw_experts(ax, names: tuple[str, ...] = ("deepseek-v3", "mixtral-8x7b", "qwen3-235b-a22b")) -> None:
    """The share of a MoE model's weights a decoding step reads against the batch."""
    for name in names:
        curve = experts_curve(name)
        ax.plot(curve["batch"], 100 * curve["share"], label=f"{title(name)} (top-{curve['per_token']} of {curve['experts']})")
    ax.set(xscale="log", ylim=(0, 105), xlabel="batch b (tokens per step)", ylabel="% of the weights read per step",
           title="Experts touched: E(1 − (1 − k/E)^b) per MoE layer")
    ax.legend(fontsize=7)


def draw_fp8(ax, name: str = "llama3.1-70b", gpu_key: str = "h100-sxm", t: int = 8, s_in: int = 2000, s_out: int = 500) -> None:
    """TPOT against the batch for 16-bit, FP8-weight and FP8-weight-and-cache serving, up to each one's KV wall."""
    for weights, kv in (("bf16", "bf16"), ("fp8", "bf16"), ("fp8", "fp8")):
        curve = decode_curve(name, gpu_key, t, s_in, s_out, weights, kv)
        ax.plot(curve["batch"][curve["fits"]], 1e3 * curve["tpot"][curve["fits"]], label=f"weights {weights}, KV {kv}")
    ax.set(xscale="log", xlabel="batch b", ylabel="TPOT (ms)", title=f"What FP8 buys: {title(name)} on {t} × {gpu(gpu_key).name}")
    ax.legend(fontsize=7)


def draw_speculative(ax, drafts: tuple[int, ...] = (1, 2, 4, 8), cost: float = 0.05) -> None:
    """Speculative decoding's speed-up against the acceptance rate, one line per draft length."""
    alphas = np.linspace(0.05, 0.95, 91)
    for gamma in drafts:
        ax.plot(alphas, speculative_curve(alphas, gamma, cost), label=f"γ = {gamma}")
    ax.axhline(1, color="grey", linewidth=1)
    ax.set(xlabel="acceptance rate α", ylabel="speed-up over plain decoding",
           title=f"Speculative decoding, a draft of c = {cost} of the target's step")
    ax.legend(fontsize=7)


def draw_stage_and_token(ax, name: str = "llama2-70b", gpu_key: str = "rtx4090", p: int = 8, s_in: int = 512, s_out: int = 64) -> None:
    """A pipeline of p GPUs: a stage's step and a token's (the p stages in series) against the batch."""
    curve = decode_curve(name, gpu_key, 1, s_in, s_out, p=p)
    fits = curve["fits"]
    ax.plot(curve["batch"][fits], 1e3 * curve["tpot"][fits], "k", linewidth=2, label=f"a token: {p} stages in series")
    ax.plot(curve["batch"][fits], 1e3 * curve["tpot"][fits] / p, "--", label="a stage: 1/8 of the layers and weights")
    ax.set(xscale="log", yscale="log", xlabel="batch b", ylabel="ms per decoding step",
           title=f"{title(name)} on {p} × {gpu(gpu_key).name}, pipeline (KV, compute and links included)")
    ax.legend(fontsize=7)


PICTURES = {"serving_phases": draw_phases, "serving_tpot": draw_tpot, "serving_kv_wall": draw_kv_wall,
            "serving_experts": draw_experts, "serving_fp8": draw_fp8, "serving_speculative": draw_speculative,
            "serving_stage_and_token": draw_stage_and_token}
