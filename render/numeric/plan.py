"""Search parallel layouts: every valid layout of n GPUs evaluated at once, ranked by step time.

The space follows formulas.estimate.check_layout: t·p·c·d = n; t divides a and g; c divides s; e divides d and E
(and t ≤ ``max_tp``: the report prices TP traffic at the NVLink bandwidth, which
holds inside one node); p·v divides l; b·m·d = B; v > 1 only with p > 1 and p | m;
every ZeRO stage and recompute mode; sequence parallelism only with t > 1 (at
t = 1 it is the same layout). The numeric part (t, p, d, b, m, v, c, e) is a set of
arrays (``Shapes``); crossed with the settings (ZeRO stage, recompute mode, sequence
parallelism: columns too, which pick formula ids element by element), every chunk of
65,536 layouts is one call of formulas.estimate.estimate through the generated NumPy
code: no Python loop per layout. Ranking: step time
(bubble and exposed communication included), then memory, then the layout itself,
so that the order never depends on how the space was split into chunks.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from formulas.estimate import GPUS_PER_NODE, RECOMPUTE_MODES, Evaluator, Inputs, Layout, estimate, layout_violation
from render.numeric.evaluator import NUMPY_OPS, numeric, numeric_inputs

SHAPE_FIELDS = ("t", "p", "d", "b", "m", "v", "c", "e")
SETTING_FIELDS = ("zero", "recompute", "sequence_parallel")
SETTINGS: tuple[tuple[int, str, bool], ...] = tuple(
    (zero, recompute, parallel) for zero in (0, 1, 2, 3) for recompute in RECOMPUTE_MODES for parallel in (False, True)
)
FIGURES = ("step_seconds", "compute_seconds", "bubble", "bubble_seconds", "exposed_comm_seconds", "memory_total",
           "training_days", "fits")


def divisors(n: int) -> list[int]:
    """The divisors of n in increasing order, found in O(√n)."""
    small = [k for k in range(1, int(n**0.5) + 1) if n % k == 0]
    return small + [n // k for k in reversed(small) if k * k != n]


@dataclass(frozen=True)
class Shapes:
    """The numeric part of a set of layouts: int64 arrays t, p, d, b, m, v, c, e of one length."""

    t: np.ndarray
    p: np.ndarray
    d: np.ndarray
    b: np.ndarray
    m: np.ndarray
    v: np.ndarray
    c: np.ndarray
    e: np.ndarray

    def __len__(self) -> int:
        return len(self.t)

    def take(self, index: np.ndarray | slice) -> Shapes:
        return Shapes(*(getattr(self, name)[index] for name in SHAPE_FIELDS))

    def chunks(self, size: int) -> list[Shapes]:
        return [self.take(slice(start, start + size)) for start in range(0, len(self), size)]


def shapes(model: dict[str, int], n: int, global_batch: int, max_tp: int | None = GPUS_PER_NODE, s: int = 1) -> Shapes:
    """Every (t, p, d, b, m, v, c, e) allowed for n GPUs, a global batch of B sequences and s tokens: the
    candidates t·p·c·d = n, b·m·d = B, v | l, c | s, e | d, kept when they break none of
    ``layout_violation``'s rules (e | E, and e = 1 for a dense model, among them)."""
    rows = []
    for t in divisors(n):
        if max_tp is not None and t > max_tp:
            continue
        for c in (c for c in divisors(n // t) if s % c == 0):
            for p in divisors(n // (t * c)):
                d = n // (t * c * p)
                if global_batch % d:
                    continue
                for e in divisors(d):
                    for b in divisors(global_batch // d):
                        m = global_batch // (d * b)
                        rows += [(t, p, d, b, m, v, c, e) for v in divisors(int(model["l"]))
                                 if layout_violation(Layout(n=n, t=t, p=p, d=d, b=b, m=m, s=s, v=v, c=c, e=e), model) is None]
    columns = np.array(rows, dtype=np.int64).reshape(-1, len(SHAPE_FIELDS)).T
    return Shapes(*columns)


def evaluate(space: Shapes, n: int, s: int, inputs: Inputs, progress: Callable[[int, int], None] | None = None,
             chunk: int = 1 << 16, ev: Evaluator = numeric) -> dict[str, np.ndarray]:
    """The figures of every layout of ``space`` under every setting, as columns (one row per layout).

    One call of the report per ``chunk`` layouts, settings included (they pick formula ids element
    by element); ``progress(done, total)`` after each chunk."""
    numeric_in = numeric_inputs(inputs)
    columns = _with_settings(space)
    size = len(columns["t"])
    total = -(-size // chunk)
    parts = []
    for done, start in enumerate(range(0, size, chunk), start=1):
        part = {name: column[start:start + chunk] for name, column in columns.items()}
        layout = Layout(n=n, s=s, zero=part["zero"], recompute=part["recompute"],
                        sequence_parallel=part["sequence_parallel"], **{name: part[name] for name in SHAPE_FIELDS})
        report = estimate(layout, numeric_in, ev, NUMPY_OPS)
        time = report["time"]
        figures = {
            "step_seconds": time["step_seconds"],
            "compute_seconds": time["compute_seconds"],
            "bubble": time["bubble"],
            "bubble_seconds": time["compute_seconds"] * time["bubble"],
            "exposed_comm_seconds": time["exposed_comm_seconds"],
            "memory_total": report["memory"]["total"],
            "training_days": time["training_days"],
            "fits": report["memory"]["fits"],
        }
        parts.append(part | {name: np.broadcast_to(value, len(part["t"])) for name, value in figures.items()})
        if progress is not None:
            progress(done, total)
    return {name: np.concatenate([part[name] for part in parts]) for name in parts[0]}


def _with_settings(space: Shapes) -> dict[str, np.ndarray]:
    """Every layout of ``space`` under every setting (sequence parallelism only where t > 1), as columns."""
    parts = []
    for zero, recompute, parallel in SETTINGS:
        group = space.take(space.t > 1) if parallel else space
        size = len(group)
        parts.append({name: getattr(group, name) for name in SHAPE_FIELDS}
                     | {"zero": np.full(size, zero), "recompute": np.full(size, RECOMPUTE_MODES.index(recompute)),
                        "sequence_parallel": np.full(size, parallel)})
    return {name: np.concatenate([part[name] for part in parts]) for name in parts[0]}


def rank(table: dict[str, np.ndarray], top: int) -> np.ndarray:
    """Indices of the ``top`` fastest layouts that fit, one per distinct (t, p, d, b, m, v) at its best setting."""
    keys = [table[name] for name in reversed(SHAPE_FIELDS + SETTING_FIELDS)] + [table["memory_total"], table["step_seconds"]]
    order = np.lexsort(keys)
    order = order[table["fits"][order]]
    shape_key = np.stack([table[name][order] for name in SHAPE_FIELDS], axis=1)
    _, first = np.unique(shape_key, axis=0, return_index=True)
    return order[np.sort(first)[:top]]


def row(table: dict[str, np.ndarray], index: int) -> dict:
    """One layout and its figures as plain Python values."""
    layout = {name: int(table[name][index]) for name in SHAPE_FIELDS}
    layout |= {"zero": int(table["zero"][index]), "recompute": RECOMPUTE_MODES[int(table["recompute"][index])],
               "sequence_parallel": bool(table["sequence_parallel"][index])}
    figures = {name: float(table[name][index]) for name in FIGURES if name != "fits"}
    return {"layout": layout} | figures


def reason(entry: dict, runner_up: dict | None) -> str:
    """Why ``entry`` ranks above ``runner_up``: the part of the step time where it saves most, then its strengths."""
    strengths = {
        "bubble_seconds": "no bubble" if entry["bubble"] == 0 else "",
        "exposed_comm_seconds": "no exposed communication" if entry["exposed_comm_seconds"] == 0 else "",
        "compute_seconds": "no recomputation" if entry["layout"]["recompute"] == "none" else "",
    }
    smaller = {"bubble_seconds": "a smaller bubble", "exposed_comm_seconds": "less exposed communication",
               "compute_seconds": "less recomputation"}
    if runner_up is None:
        return ", ".join(filter(None, strengths.values())) or "the last layout that fits"
    savings = {part: runner_up[part] - entry[part] for part in strengths}
    part = max(savings, key=savings.get)
    memory = (runner_up["memory_total"] - entry["memory_total"]) / 1e9
    if savings[part] > 0:
        lead = f"{strengths[part] or smaller[part]}: {savings[part]:.3g} s less than the next"
        strengths[part] = ""
    elif memory > 0:
        lead = f"as fast as the next with {memory:.3g} GB less memory"
    else:
        lead = "ties with the next on time and memory"
    return ", ".join(filter(None, [lead, *strengths.values()]))


def plan(model: dict[str, int], inputs: Inputs, n: int, global_batch: int, s: int, top: int = 5,
         max_tp: int | None = GPUS_PER_NODE, progress: Callable[[int, int], None] | None = None) -> dict:
    """The ranked best layouts (each with its reason) and the size of the space explored."""
    space = shapes(model, n, global_batch, max_tp, s)
    if not len(space):
        return {"explored": 0, "fitting": 0, "ranked": []}
    table = evaluate(space, n, s, inputs, progress)
    best = rank(table, top + 1)
    entries = [row(table, int(index)) for index in best]
    for place, entry in enumerate(entries[:top]):
        entry["reason"] = reason(entry, entries[place + 1] if place + 1 < len(entries) else None)
    return {"explored": len(table["fits"]), "fitting": int(np.count_nonzero(table["fits"])), "ranked": entries[:top]}
