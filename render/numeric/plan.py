"""Search parallel layouts: every valid layout of n GPUs evaluated at once, ranked by step time.

The space follows formulas.reports.estimate.check_layout: t·p·c·d = n; t divides a and g; c divides s;
e divides d and E (c = e = 1 when the step time is predicted: the performance model does not time them)
(and t ≤ ``max_tp`` when given: a predicted step time prices a TP group beyond a node
at the network, a given MFU at NVLink); p·v divides l; b·m·d = B; v > 1 only with
p > 1 and p | m; every ZeRO stage and recompute mode; sequence parallelism only with t > 1 (at
t = 1 it is the same layout). The numeric part (t, p, d, b, m, v, c, e) is a set of
arrays (``Shapes``); crossed with the settings (ZeRO stage, recompute mode, sequence
parallelism: columns too, which pick formula ids element by element), every chunk of
65,536 layouts is one call of formulas.reports.estimate.estimate through the generated NumPy
code: no Python loop per layout. Ranking: step time (predicted by
formulas/reports/prediction.py unless the MFU is given; bubble and exposed communication
included), then memory, then the layout itself, so that the order never depends on how the space was split into chunks.
The framework of the inputs (formulas/data/frameworks.py) restricts the settings and the interleaving to
the features it has: ``megatron-lm-2021`` searches ZeRO 0, recompute none or full, no sequence
parallelism, the comparison with Narayanan et al. 2021 on the paper's own feature set.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Callable

import numpy as np

from llm_formulas.formulas.vocabulary.bounds import MAX_HFU, MAX_LAYOUTS  # layouts × settings: beyond it plan asks for a narrower search
from llm_formulas.formulas.reports.estimate import RECOMPUTE_MODES, Evaluator, Inputs, Layout, estimate, layout_violation
from llm_formulas.formulas.data.frameworks import DEFAULT, Framework
from llm_formulas.formulas.data.layouts import balanced_stages
from llm_formulas.render.numeric import GPUS_PER_NODE
from llm_formulas.render.numeric.evaluator import NUMPY_OPS, numeric, numeric_inputs

SHAPE_FIELDS = ("t", "p", "d", "b", "m", "v", "c", "e")
SETTING_FIELDS = ("zero", "recompute", "sequence_parallel")
SETTINGS: tuple[tuple[int, str, bool], ...] = tuple(
    (zero, recompute, parallel) for zero in (0, 1, 2, 3) for recompute in RECOMPUTE_MODES for parallel in (False, True)
)
FIGURES = ("step_seconds", "compute_seconds", "bubble", "bubble_seconds", "exposed_comm_seconds", "memory_total",
           "training_days", "mfu", "fits", "within_peak")
PREDICTED = ("tp_seconds", "pp_seconds", "dp_exposed_seconds", "optimizer_seconds", "compute_efficiency", "hfu")  # predicted mode


def divisors(n: int) -> list[int]:
    """The divisors of n in increasing order, found in O(√n)."""
    small = [k for k in range(1, int(n**0.5) + 1) if n % k == 0]
    return small + [n // k for k in reversed(small) if k * k != n]


def interleavings(layout: Layout, model: dict[str, int]) -> tuple[Layout, ...]:
    """``layout`` at every v the layout rules allow (formulas.reports.estimate.layout_violation: p·v divides l, and v > 1 needs
    p > 1 and m a multiple of p, as Megatron-LM's train_step asserts)."""
    candidates = (replace(layout, v=v) for v in divisors(model["l"]))
    return tuple(candidate for candidate in candidates if layout_violation(candidate, model) is None)


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


class SpaceTooLarge(ValueError):
    """A layout space too large to evaluate within plan's bounds; the message says how to narrow it."""


def _divisor_table(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For each distinct value, its divisors: (value repeated per divisor, divisor), as int64 columns."""
    owners, divs = [], []
    for value in np.unique(values):
        found = divisors(int(value))
        owners += [int(value)] * len(found)
        divs += found
    return np.array(owners, dtype=np.int64), np.array(divs, dtype=np.int64)


def _expand(keys: np.ndarray, owners: np.ndarray, divs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Rows × their key's divisors: (index of the row, divisor), without a Python loop per row."""
    order = np.argsort(owners, kind="stable")
    owners, divs = owners[order], divs[order]
    starts = np.searchsorted(owners, keys, side="left")
    counts = np.searchsorted(owners, keys, side="right") - starts
    rows = np.repeat(np.arange(len(keys)), counts)
    offsets = np.arange(len(rows)) - np.repeat(np.cumsum(counts) - counts, counts)
    return rows, divs[np.repeat(starts, counts) + offsets]


def shapes(model: dict[str, int], n: int, global_batch: int, max_tp: int | None = GPUS_PER_NODE, s: int = 1,
           split: bool = True, uneven: bool = False, framework: Framework = DEFAULT) -> Shapes:
    """Every (t, p, d, b, m, v, c, e) allowed for n GPUs, a global batch of B sequences of s tokens, as arrays.

    The rules are layout_violation's (t·p·c·d = n; t | a, g; p·v | l; c | s; e | d, e | E, e = 1 for a dense
    model; v > 1 only with p > 1 and p | m), applied column-wise; with ``uneven``, a p that does not divide l is
    allowed too, at v = 1, its stages balanced as formulas.data.layouts.balanced_stages splits them; a ``framework``
    without interleaving keeps v = 1, one without a pipeline p = 1, one without tensor parallelism t = 1. The space is counted before it is built, and SpaceTooLarge says so when
    its layouts × settings would exceed MAX_LAYOUTS."""
    a, g, l = int(model["a"]), int(model["g"]), int(model["l"])
    experts = int(model["E"]) if model.get("l_moe") and split else 1  # split = False: no expert or context parallelism
    s = s if split else 1
    all_divisors = np.array(divisors(n), dtype=np.int64)
    t = all_divisors[(a % all_divisors == 0) & (g % all_divisors == 0)]
    if max_tp is not None:
        t = t[t <= max_tp]
    c = all_divisors[s % all_divisors == 0]
    t, c, p = (column.ravel() for column in np.meshgrid(t, c, all_divisors, indexing="ij"))
    splittable = np.array([uneven and balanced_stages(l, int(q)) is not None for q in p], dtype=bool)
    keep = (n % (t * c * p) == 0) & ((l % p == 0) | splittable) & (framework.pipeline | (p == 1)) & (framework.tensor | (t == 1))
    t, c, p = t[keep], c[keep], p[keep]
    d = n // (t * c * p)
    keep = global_batch % d == 0
    t, c, p, d = t[keep], c[keep], p[keep], d[keep]
    row, e = _expand(d, *_divisor_table(d))
    keep = experts % e == 0
    row, e = row[keep], e[keep]
    t, c, p, d = t[row], c[row], p[row], d[row]
    row, b = _expand(global_batch // d, *_divisor_table(global_batch // d))
    t, c, p, d, e = t[row], c[row], p[row], d[row], e[row]
    m = global_batch // (d * b)
    interleaved = (p > 1) & (m % p == 0) & framework.interleaving & (l % p == 0)
    degrees = np.unique(p)
    chunk_counts = np.array([len(divisors(l // int(q))) for q in degrees])  # v ranges over the divisors of l/p
    per_row = np.where(interleaved, chunk_counts[np.searchsorted(degrees, p)], 1)
    settings = len(SETTINGS) // 2 * np.where(t > 1, 2, 1)
    size = int(np.sum(per_row * settings))
    if size > MAX_LAYOUTS:
        raise SpaceTooLarge(f"the layout space holds {size:,} layouts with their settings, more than plan evaluates "
                            f"({MAX_LAYOUTS:,}): lower --max-tp, or plan fewer GPUs or a smaller global batch")
    row, v = _expand(np.where(interleaved, l // p, 1), *_divisor_table(np.where(interleaved, l // p, 1)))
    return Shapes(t[row], p[row], d[row], b[row], m[row], v, c[row], e[row])


def default_max_tp(utilization: object | None) -> int | None:
    """The largest TP degree plan and sweep search unless told: no limit when the step time is predicted (a TP group
    beyond a node is priced at the network), a node's GPUs with a given MFU (TP is priced at NVLink speed)."""
    return None if utilization is None else GPUS_PER_NODE


def search_space(model: dict[str, int], inputs: Inputs, n: int, global_batch: int, s: int,
                 max_tp: int | None, uneven: bool = False) -> Shapes:
    """The layouts plan and sweep rank for these inputs: ``shapes`` with context and expert parallelism only at a
    given MFU (the performance model does not time them) and the features of the inputs' framework."""
    return shapes(model, n, global_batch, max_tp, s, split=inputs.utilization is not None, uneven=uneven,
                  framework=inputs.framework or DEFAULT)


def _groups(columns: dict[str, np.ndarray], layers: int, chunk: int) -> list[tuple[tuple[int, ...] | None, np.ndarray]]:
    """The rows in calls of at most ``chunk``: the balanced ones (p | l), then one stage partition at a time."""
    p = columns["p"]
    groups = [(None, np.flatnonzero(layers % p == 0))]
    groups += [(balanced_stages(layers, int(q)), np.flatnonzero(p == q)) for q in np.unique(p[layers % p != 0])]
    return [(stages, rows[start:start + chunk]) for stages, rows in groups for start in range(0, len(rows), chunk) if len(rows)]


def evaluate(space: Shapes, n: int, s: int, inputs: Inputs, progress: Callable[[int, int], None] | None = None,
             chunk: int = 1 << 16, ev: Evaluator = numeric, attention: str = "eager") -> dict[str, np.ndarray]:
    """The figures of every layout of ``space`` under every setting its framework offers, as columns (one row per layout).

    One call of the report per ``chunk`` layouts, settings included (they pick formula ids element
    by element), and per stage partition of the uneven ones; ``progress(done, total)`` after each call.
    Each call evaluates a grid: the call's shapes as a column (t, p, d, b, m, v, c, e of shape (S, 1)) against its
    settings as a row (ZeRO stage, recompute mode, sequence parallelism of shape (1, K)), so that a figure no setting
    changes (parameters, FLOPs, most traffic, inference) is computed once per shape and NumPy broadcasts the rest; each
    row of the table is then its cell of the grid (the same arithmetic, element by element, as on full columns)."""
    numeric_in = numeric_inputs(inputs)
    chosen = inputs.framework or DEFAULT
    offered = settings(chosen)
    setting_of, shape_of = _cells(space, offered, chosen)
    calls = _groups({"p": space.p[shape_of]}, int(inputs.model["l"]), chunk)
    parts = []
    for done, (stages, rows) in enumerate(calls, start=1):
        shape_ids, shape_cell = np.unique(shape_of[rows], return_inverse=True)
        setting_ids, setting_cell = np.unique(setting_of[rows], return_inverse=True)
        codes = _setting_codes([offered[index] for index in setting_ids])  # the call's settings, as a row each
        part = ({name: getattr(space, name)[shape_of[rows]] for name in SHAPE_FIELDS}
                | {name: row[0, setting_cell] for name, row in codes.items()})
        uneven = {} if stages is None else {"stages": stages, "embedding_stages": (0, len(stages) - 1)}
        layout = Layout(n=n, s=s, attention=attention, **codes,
                        **{name: getattr(space, name)[shape_ids][:, None] for name in SHAPE_FIELDS}, **uneven)
        report = estimate(layout, numeric_in, ev, NUMPY_OPS)
        time = report["time"]
        figures = {
            "step_seconds": time["step_seconds"],
            "compute_seconds": time["compute_seconds"],
            "bubble": time["bubble"],
            "bubble_seconds": time["bubble_seconds"],
            "exposed_comm_seconds": time["exposed_comm_seconds"],
            "memory_total": report["memory"]["total"],
            "training_days": time["training_days"],
            "mfu": time["mfu"],
            "fits": report["memory"]["fits"],
            # an assumed MFU with recomputation on top may need more than the GPU's peak (HFU > 1): no such layout runs
            "hfu": time["hfu"],
            "within_peak": time["hfu"] <= MAX_HFU,
        } | {name: time["predicted"][name] for name in PREDICTED if "predicted" in time}
        grid, cell = (len(shape_ids), len(setting_ids)), shape_cell * len(setting_ids) + setting_cell
        parts.append(part | {name: np.ravel(np.broadcast_to(value, grid))[cell] for name, value in figures.items()})
        if progress is not None:
            progress(done, len(calls))
    return parts[0] if len(parts) == 1 else {name: np.concatenate([part[name] for part in parts]) for name in parts[0]}


def settings(framework: Framework | None) -> tuple[tuple[int, str, bool], ...]:
    """The (ZeRO stage, recompute, sequence parallelism) settings a framework offers (None: the default, all of them)."""
    chosen = framework or DEFAULT
    return tuple(setting for setting in SETTINGS if chosen.lacks(*setting, v=1) is None)


def _setting_codes(offered: list[tuple[int, str, bool]]) -> dict[str, np.ndarray]:
    """The settings as rows of shape (1, K): ZeRO stages, recompute modes as indices into RECOMPUTE_MODES, sequence
    parallelism as booleans."""
    return {"zero": np.array([[zero for zero, _, _ in offered]]),
            "recompute": np.array([[RECOMPUTE_MODES.index(mode) for _, mode, _ in offered]]),
            "sequence_parallel": np.array([[parallel for _, _, parallel in offered]], dtype=bool)}


def _cells(space: Shapes, offered: tuple[tuple[int, str, bool], ...], framework: Framework) -> tuple[np.ndarray, np.ndarray]:
    """The table's rows as (setting, shape) indices, setting by setting and each setting's shapes in order: every layout
    of ``space`` under every offered setting, sequence parallelism only where t > 1, and under a pipeline only the
    ZeRO stages the framework's pipeline engine runs (DeepSpeed's: 0 and 1)."""
    zero = np.array([setting[0] for setting in offered])[:, None]
    parallel = np.array([setting[2] for setting in offered], dtype=bool)[:, None]
    valid = (~parallel | (space.t > 1)) & ((space.p == 1) | (zero <= framework.pipeline_zero))
    return np.nonzero(valid)


def runs(table: dict[str, np.ndarray]) -> np.ndarray:
    """The layouts that can run: their memory fits and their hardware FLOPs stay within the GPU's peak (HFU ≤ 1)."""
    return table["fits"] & table["within_peak"]


RANK_ORDER = ("step_seconds", "memory_total", *SHAPE_FIELDS, *SETTING_FIELDS)  # fastest, least memory, then the layout


def rank_key(entry: dict) -> tuple:
    """RANK_ORDER on one row (``row``'s form), the key a sweep merges its chunks' rows by: the same total order as
    ``rank``, so a table never depends on how the space was chunked."""
    values = entry | entry["layout"] | {"recompute": RECOMPUTE_MODES.index(entry["layout"]["recompute"])}
    return tuple(values[name] for name in RANK_ORDER)


def rank(table: dict[str, np.ndarray], top: int) -> np.ndarray:
    """Indices of the ``top`` fastest layouts that fit, one per distinct (t, p, d, b, m, v) at its best setting.

    Only the layouts that run are sorted; a shape has at most one row per setting, so the first ``top`` distinct
    shapes lie among the first len(SETTINGS)·top rows of the order, and only those are searched for them (all of the
    order where they are not found there)."""
    running = np.flatnonzero(runs(table))
    order = running[np.lexsort([table[name][running] for name in reversed(RANK_ORDER)])]
    for size in (len(SETTINGS) * top, len(order)):
        shape_key = np.stack([table[name][order[:size]] for name in SHAPE_FIELDS], axis=1)
        _, first = np.unique(shape_key, axis=0, return_index=True)
        if len(first) >= top or size >= len(order):
            break
    return order[np.sort(first)[:top]]


def row(table: dict[str, np.ndarray], index: int, layers: int) -> dict:
    """One layout and its figures as plain Python values; an uneven pipeline names its stages."""
    layout = {name: int(table[name][index]) for name in SHAPE_FIELDS}
    if layers % layout["p"]:
        layout["stages"] = list(balanced_stages(layers, layout["p"]))
    layout |= {"zero": int(table["zero"][index]), "recompute": RECOMPUTE_MODES[int(table["recompute"][index])],
               "sequence_parallel": bool(table["sequence_parallel"][index])}
    figures = {name: float(table[name][index]) for name in FIGURES + PREDICTED if name not in ("fits", "within_peak") and name in table}
    return {"layout": layout} | figures


def best_rows(table: dict[str, np.ndarray], top: int, layers: int) -> list[dict]:
    """The ``top`` best distinct layouts of an evaluated table, best first (``rank``), as rows (``row``): the one
    ranking of plan and of each chunk of a sweep."""
    return [row(table, int(index), layers) for index in rank(table, top)]


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
         max_tp: int | None = GPUS_PER_NODE, progress: Callable[[int, int], None] | None = None,
         attention: str = "eager", uneven: bool = False) -> dict:
    """The ranked best layouts (each with its reason) and the size of the space explored, under one attention kernel;
    ``uneven``: pipeline degrees that do not divide the layers too, at balanced stages."""
    space = search_space(model, inputs, n, global_batch, s, max_tp, uneven)
    if not len(space):
        return {"explored": 0, "fitting": 0, "ranked": []}
    table = evaluate(space, n, s, inputs, progress, attention=attention)
    entries = best_rows(table, top + 1, int(model["l"]))
    for place, entry in enumerate(entries[:top]):
        entry["reason"] = reason(entry, entries[place + 1] if place + 1 < len(entries) else None)
    return {"explored": len(table["fits"]), "fitting": int(np.count_nonzero(runs(table))), "ranked": entries[:top]}


class NotRanked(ValueError):
    """An --explain layout that plan cannot rank: it breaks a rule or does not fit; the message says which."""


TERMS = {  # the parts of the step time --explain compares, and how a person calls them
    "compute_seconds": "compute (GEMM efficiency, recompute)",
    "bubble_seconds": "pipeline bubble",
    "tp_seconds": "TP communication (blocking)",
    "pp_seconds": "PP point-to-point",
    "dp_exposed_seconds": "DP / ZeRO collectives exposed",
    "optimizer_seconds": "optimizer step",
}


def explain(model: dict[str, int], inputs: Inputs, layout: Layout, max_tp: int | None = None, uneven: bool = False) -> dict:
    """Where ``layout`` ranks among the layouts of its n GPUs and global batch (``uneven``: pipeline degrees that do not
    divide the layers too), and the terms that separate it from the first. NotRanked when it breaks a layout rule or
    does not fit (one line, the reason)."""
    from dataclasses import replace

    from llm_formulas.formulas.reports.estimate import layout_violation

    layers = int(model["l"])
    if uneven and layers % layout.p and layout.stages is None and balanced_stages(layers, layout.p) is not None:
        layout = replace(layout, stages=balanced_stages(layers, layout.p), embedding_stages=(0, layout.p - 1))
    violation = layout_violation(layout, model)
    if violation is not None:
        raise NotRanked(f"invalid layout: {violation}")
    chosen = inputs.framework or DEFAULT
    missing = chosen.lacks(layout.zero, layout.recompute, layout.sequence_parallel and layout.t > 1, layout.v, layout.p)
    if missing is not None:
        raise NotRanked(f"invalid layout for the framework: {missing}")
    space = search_space(model, inputs, layout.n, layout.global_batch, layout.s, max_tp, uneven)
    table = evaluate(space, layout.n, layout.s, inputs, attention=layout.attention)
    wanted = {"t": layout.t, "p": layout.p, "d": layout.d, "b": layout.b, "m": layout.m, "v": layout.v, "c": layout.c, "e": layout.e,
              "zero": layout.zero,
              "recompute": RECOMPUTE_MODES.index(layout.recompute), "sequence_parallel": layout.sequence_parallel and layout.t > 1}
    match = np.flatnonzero(np.logical_and.reduce([table[name] == value for name, value in wanted.items()]))
    if not len(match):
        raise NotRanked(f"invalid layout: t = {layout.t} is beyond --max-tp {max_tp}" if max_tp and layout.t > max_tp
                        else "invalid layout: not in plan's search space")
    index = int(match[0])
    mine = row(table, index, layers)
    if not table["fits"][index]:
        raise NotRanked(f"layout does not fit: {mine['memory_total'] / 1e9:.1f} GB per GPU of "
                        f"{float(inputs.gpu['M_gpu']) / 1e9:.0f} GB")
    if not table["within_peak"][index]:
        raise NotRanked(f"layout cannot run at the assumed MFU: its recomputation needs HFU {100 * mine['hfu']:.1f} %, "
                        f"above the GPU's peak")
    ranked = rank(table, len(table["fits"]))
    steps = table["step_seconds"][ranked]
    place = int(np.count_nonzero(steps < table["step_seconds"][index])) + 1
    first = row(table, int(ranked[0]), layers)
    terms = [{"term": name, "meaning": meaning, "layout": mine[name], "first": first[name], "difference": mine[name] - first[name]}
             for name, meaning in TERMS.items() if name in mine]
    terms.sort(key=lambda term: -abs(term["difference"]))
    return {"rank": place, "of": len(ranked), "layout": mine, "first": first, "terms": terms,
            "memory_difference": mine["memory_total"] - first["memory_total"],
            "framework": {"name": chosen.key, "features": chosen.features()}}
