"""Sweeps of models × GPU types × cluster sizes × layouts, in chunks, in process or on Dask.

Each case (model, GPU, n) has its layout space (render.numeric.plan.shapes) cut into
chunks of ``chunk_size`` (t, p, d, b, m, v); a task evaluates one chunk under every
setting (render.numeric.plan.evaluate, vectorised) and keeps its ``top`` + 1 best distinct
layouts; the cases' chunks are then merged by the same total order as plan's
ranking, so the table is the same however the space was chunked and wherever the
chunks ran. ``run_in_process`` maps the tasks here; ``run_on_dask`` sends them to a
Dask scheduler: a local cluster by default, or the one at ``scheduler``.
Dask is imported only there (it is in the test extra, not a runtime dependency).
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Callable, Iterable

from llm_formulas.formulas.reports.estimate import Inputs
from llm_formulas.formulas.data.gpu_specs import NODE_SIZE, SPECS
from llm_formulas.formulas.data.presets import preset
from llm_formulas.render.numeric.plan import (Shapes, best_rows, default_max_tp, evaluate, rank_key, reason, runs,
                                              search_space)
from llm_formulas.render.cli.progress import Progress

DEFAULT_CHUNK = 4096


@dataclass(frozen=True)
class Spec:
    """What to sweep: preset models, GPU presets, cluster sizes, and the fixed workload and assumptions.

    As ``plan``: without ``utilization`` (an MFU) every layout's step time is predicted (formulas/reports/prediction.py, the
    GPU's performance constants), with it the step is priced at that MFU; ``max_tp`` None is plan's default for the
    mode (``default_max_tp``), 0 no limit."""

    models: tuple[str, ...]
    gpus: tuple[str, ...]
    sizes: tuple[int, ...]
    global_batch: int
    seq: int
    tokens: Fraction | int | None = None
    utilization: Fraction | None = None
    overlap: Fraction = Fraction(1, 2)
    network: Fraction = Fraction(25 * 10**9)
    top: int = 1
    max_tp: int | None = None

    def __post_init__(self) -> None:
        for name in ("models", "gpus", "sizes"):  # a case listed twice would be swept twice, its counts doubled
            items = getattr(self, name)
            if len(set(items)) != len(items):
                raise ValueError(f"a sweep lists one of its {name} twice: {items}")

    @property
    def tp_limit(self) -> int | None:
        """The largest TP degree searched (None: no limit)."""
        return default_max_tp(self.utilization) if self.max_tp is None else self.max_tp or None

    @property
    def ranked_by(self) -> str:
        """How the table is ranked, as its ``ranked_by`` column says: predicted, or at the given MFU."""
        return "predicted step time" if self.utilization is None else f"given MFU {float(self.utilization):g}"


@dataclass(frozen=True)
class Task:
    model: str
    gpu: str
    n: int
    inputs: Inputs
    chunk: Shapes


def _inputs(spec: Spec, model: dict[str, int], gpu_key: str) -> Inputs:
    """plan's inputs for the case: predicted with the GPU's performance constants unless the spec gives an MFU."""
    from llm_formulas.formulas.data.calibration import efficiency

    return Inputs(model=model, gpu=SPECS[gpu_key].inputs(), network=spec.network, tokens=spec.tokens,
                  utilization=spec.utilization, overlap=spec.overlap, node_size=NODE_SIZE[gpu_key],
                  efficiency=efficiency(gpu_key) if spec.utilization is None else None)


def tasks(spec: Spec, chunk_size: int = DEFAULT_CHUNK) -> list[Task]:
    """One task per chunk of each case's layout space."""
    result = []
    for name in spec.models:
        model = preset(name).read["values"]  # the readers' values as plain numbers: no SymPy
        for gpu_key in spec.gpus:
            inputs = _inputs(spec, model, gpu_key)
            for n in spec.sizes:
                space = search_space(model, inputs, n, spec.global_batch, spec.seq, spec.tp_limit)
                result += [Task(name, gpu_key, n, inputs, chunk) for chunk in space.chunks(chunk_size)]
    return result


def run_task(task: Task, seq: int, top: int) -> tuple[tuple[str, str, int], int, int, list[dict]]:
    """A chunk's best ``top`` + 1 distinct layouts, with how many it explored and how many fit."""
    table = evaluate(task.chunk, task.n, seq, task.inputs)
    best = best_rows(table, top + 1, int(task.inputs.model["l"]))
    return (task.model, task.gpu, task.n), len(table["fits"]), int(runs(table).sum()), best


def merge(spec: Spec, results: Iterable[tuple]) -> list[dict]:
    """The table: for each case in spec order, its ``top`` best layouts (one row each, with the reason)."""
    cases: dict[tuple, dict] = {}
    for case, explored, fitting, best in results:
        entry = cases.setdefault(case, {"explored": 0, "fitting": 0, "best": []})
        entry["explored"] += explored
        entry["fitting"] += fitting
        entry["best"] += best
    table = []
    for name in spec.models:
        for gpu_key in spec.gpus:
            for n in spec.sizes:
                entry = cases.get((name, gpu_key, n), {"explored": 0, "fitting": 0, "best": []})
                best = sorted(entry["best"], key=rank_key)[: spec.top + 1]
                for place, chosen in enumerate(best[: spec.top], start=1):
                    runner_up = best[place] if place < len(best) else None
                    table.append({"model": name, "gpu": gpu_key, "n": n, "rank": place, **chosen["layout"],
                                  **{key: value for key, value in chosen.items() if key != "layout"},
                                  "reason": reason(chosen, runner_up),
                                  "explored": entry["explored"], "fitting": entry["fitting"], "ranked_by": spec.ranked_by})
    return table


def run_in_process(spec: Spec, chunk_size: int = DEFAULT_CHUNK, progress: Callable[[int, int], None] | None = None) -> list[dict]:
    results = []
    work = tasks(spec, chunk_size)
    for done, task in enumerate(work, start=1):
        results.append(run_task(task, spec.seq, spec.top))
        if progress is not None:
            progress(done, len(work))
    return merge(spec, results)


def run_on_dask(spec: Spec, scheduler: str | None = None, chunk_size: int = DEFAULT_CHUNK, workers: int = 2,
                processes: bool = False, show_progress: bool = True) -> list[dict]:
    """The same table, computed by Dask workers: a local cluster of ``workers`` unless ``scheduler`` is an address."""
    from dask.distributed import Client, LocalCluster, as_completed

    cluster = None if scheduler else LocalCluster(n_workers=workers, threads_per_worker=1, processes=processes,
                                                  dashboard_address=None)
    client = Client(scheduler or cluster)
    try:
        work = tasks(spec, chunk_size)
        futures = client.map(run_task, work, seq=spec.seq, top=spec.top, pure=False)
        bar = Progress("sweep") if show_progress else None
        results = []
        for done, future in enumerate(as_completed(futures), start=1):
            results.append(future.result())
            if bar is not None:
                bar.update(done, len(futures))
        if bar is not None:
            bar.close()
        return merge(spec, results)
    finally:
        client.close()
        if cluster is not None:
            cluster.close()
