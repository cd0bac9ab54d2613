"""The fewest GPUs that serve a request rate within an SLO: every layout at once, through the generated NumPy code.

The space: tensor degrees t that divide the heads (at most 8 × the node: beyond it the TP ring crosses the network),
pipeline degrees p that divide the layers (up to 16), batches b of 1, 2, 4, … 2048. Each (t, p, b) is one element of
the arrays formulas.reports.serving_report.report evaluates in one call (no Python loop per layout). A replica of t·p GPUs
meets the SLO when its batch fits and its TTFT (the batch's prefill; queueing left out) and TPOT are within the
targets; by Little's law R·T_e2e requests are in flight, so it needs ⌈R·T_e2e/(p·b)⌉ replicas (serving.replicas).
Ranking: GPUs, then TPOT, then t·p, then b, so that the order never depends on how the space was built.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from llm_formulas.formulas.reports.serving_report import ServeInputs, report
from llm_formulas.render.numeric.evaluator import NUMPY_OPS, _complete, numeric
from llm_formulas.render.numeric.plan import divisors

BATCHES = tuple(2**i for i in range(12))
MAX_STAGES = 16


def _floats(inputs: ServeInputs) -> ServeInputs:
    """The inputs with the model's values and the constants as floats (Rationals would make object arrays)."""
    from llm_formulas.formulas.data.serving_calibration import ServingConstants

    fitted = inputs.fitted
    constants = ServingConstants(*(float(v) for v in fitted.values().values()), provenance=fitted.provenance)
    return replace(inputs, model={k: float(v) for k, v in _complete(inputs.model).items()}, constants=constants)


def space(model: dict, node_size: int) -> dict[str, np.ndarray]:
    """Every (t, p, b) of the search as flat int64 arrays."""
    tensor = [t for t in divisors(int(model["a"])) if t <= 8 * node_size]
    stages = [p for p in divisors(int(model["l"])) if p <= MAX_STAGES]
    grid = np.array([(t, p, b) for t in tensor for p in stages for b in BATCHES], dtype=np.int64)
    return {"t": grid[:, 0], "p": grid[:, 1], "b": grid[:, 2]}


def search(inputs: ServeInputs, slo: dict, rate: object, s_in: int, s_out: int) -> dict:
    """Every layout's figures (arrays), its replicas and GPUs for ``rate``, whether it meets ``slo``, and the order."""
    layouts = space(inputs.model, inputs.node_size)
    t, p, b = (layouts[name].astype(np.float64) for name in ("t", "p", "b"))
    doc = report(t, p, 1, 1, b, s_in, s_out, _floats(inputs), numeric, NUMPY_OPS)
    in_flight = numeric("serving.replicas", R_req=float(rate), T_e2e=doc["e2e_seconds"], p=p, b=b)
    replicas = np.maximum(np.ceil(in_flight - 1e-9), 1)
    gpus = t * p * replicas
    fits = np.asarray(doc["memory"]["fits"], dtype=bool)
    ttft_ok = doc["ttft_seconds"] <= float(slo["ttft"])
    tpot_ok = doc["tpot_seconds"] <= float(slo["tpot"])
    meets = fits & ttft_ok & tpot_ok
    order = np.lexsort((b, t * p, doc["tpot_seconds"], gpus))
    # how far a layout that fits is from the SLO: the larger of its two latencies over their targets
    miss = np.maximum(doc["ttft_seconds"] / float(slo["ttft"]), doc["tpot_seconds"] / float(slo["tpot"]))
    return {"t": t, "p": p, "b": b, "replicas": replicas, "gpus": gpus, "fits": fits, "ttft_ok": ttft_ok, "tpot_ok": tpot_ok,
            "meets": meets, "order": order, "miss": np.where(fits, miss, np.inf), "doc": doc}
