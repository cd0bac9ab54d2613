"""The performance lesson's helper: one parallel layout of a model on a cluster of A100s, predicted.

``predict(t, p, ...)`` runs ``formulas.reports.estimate.estimate`` (the numeric path) for a model on n
A100 80 GB GPUs at the calibrated constants of ``formulas.data.calibration.a100`` and one framework of
``formulas.data.frameworks``, at interleaving degree v, or at the fastest v the layer count allows;
``row(name, report)`` prints it as one line: the step, its MFU, the memory per GPU and each term.
A lesson imports these two instead of the estimator's internals.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from fractions import Fraction

from llm_formulas.formulas.data.calibration import a100
from llm_formulas.formulas.reports.estimate import Inputs, Layout, estimate, model_values
from llm_formulas.formulas.data.frameworks import framework
from llm_formulas.formulas.data.gpus import NODE_SIZE, gpu
from llm_formulas.formulas.data.presets import preset
from llm_formulas.render.numeric.evaluator import NUMPY_OPS, numeric, numeric_inputs
from llm_formulas.render.numeric.plan import interleavings

PARTS = ("compute_seconds", "tp_seconds", "pp_seconds", "bubble_seconds", "dp_exposed_seconds", "optimizer_seconds")
NETWORK = 25 * 10**9  # bytes/s per GPU across nodes: Megatron's DGX A100 cluster, one 200 Gbit/s HDR link per GPU
OVERLAP = Fraction(1, 2)


@dataclass(frozen=True)
class Cluster:
    """A model on n A100 80 GB GPUs with a global batch of B sequences of s tokens, under one framework."""

    model: str
    n: int
    B: int
    s: int
    framework: str = "megatron-lm-2021"

    @property
    def sizes(self) -> dict[str, int]:
        return model_values(preset(self.model).architecture.values)

    def inputs(self, framework_name: str | None = None):
        return numeric_inputs(Inputs(model=self.sizes, gpu=gpu("a100-80gb").inputs(), network=NETWORK, tokens=None,
                                     utilization=None, overlap=OVERLAP, efficiency=a100(),
                                     node_size=NODE_SIZE["a100-80gb"], framework=framework(framework_name or self.framework)))

    def layout(self, t: int, p: int, b: int = 1, zero: int = 0, recompute: str = "full", sp: bool = False, v: int = 1) -> Layout:
        d = self.n // (t * p)
        return Layout(n=self.n, t=t, p=p, d=d, b=b, m=self.B // (b * d), s=self.s, v=v, zero=zero, recompute=recompute,
                      sequence_parallel=sp)

    def predict(self, t: int, p: int, *, b: int = 1, zero: int = 0, recompute: str = "full", sp: bool = False,
                v: int | None = None) -> dict:
        """The predicted report of one layout at interleaving degree v, or (v=None) at the fastest v allowed."""
        layout = self.layout(t, p, b, zero, recompute, sp)
        candidates = interleavings(layout, self.sizes) if v is None else (replace(layout, v=v),)
        reports = [estimate(candidate, self.inputs(), numeric, NUMPY_OPS) | {"v": candidate.v} for candidate in candidates]
        return min(reports, key=lambda r: float(r["time"]["step_seconds"]))


def terms(report: dict) -> dict[str, float]:
    """The predicted step's terms, in seconds, by name."""
    return {part: float(report["time"]["predicted"][part]) for part in PARTS}


def row(name: str, report: dict) -> tuple[dict[str, float], float]:
    """Print one layout's line (step, MFU, memory per GPU, each term) and return its terms and its GB per GPU."""
    parts = terms(report)
    memory = float(report["memory"]["total"]) / 1e9
    print(f"{name:<34} v={report['v']} step {float(report['time']['step_seconds']):7.2f} s  MFU {float(report['time']['mfu']):5.1%}  "
          f"memory {memory:6.1f} GB {'fits' if memory <= 80 else 'DOES NOT FIT'}  "
          + "  ".join(f"{part.split('_')[0]} {value:.2f}" for part, value in parts.items()))
    return parts, memory
