"""Fit the per-op time formulas (formulas/topics/kernels.py) per GPU on AIConfigurator's measured per-op tables.

``python -m llm_formulas.render.numeric.kernel_calibrate`` needs the calibration extra (``pip install
'llm-formulas[calibration]'``: ``aiconfigurator-core`` 0.12.0, Apache-2.0, with pandas and pyarrow to read its parquet
tables and SciPy to fit); nothing else in the project imports it. It reads, for each system, the newest TensorRT-LLM
version of the GEMM, attention and quantize tables and the newest NCCL table under
``aiconfigurator_core/systems/data/<system>/<op>/<backend>/<version>/``, fits each op's constants on the log of the
measured over the predicted latency (SciPy's least squares, soft-L1 loss, the constants bounded by their symbols'
ranges, deterministic), and writes formulas/data/published/kernel_constants.json: per system the table each op was fitted
on (path, backend, version, the rows kept and why), its constants, its agreement (median and worst |error| by regime),
and a small sample of measured rows the tests reproduce without the wheel. Each prediction is the catalogue formula
itself, evaluated by ``numpy_function``: the fit prices exactly what the catalogue states.
"""

from __future__ import annotations

import json
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import numpy as np

from llm_formulas.formulas.data.gpu_specs import SPECS
from llm_formulas.formulas.data.kernel_calibration import CONSTANTS_FILE, SYSTEMS

PACKAGE = "aiconfigurator-core"
SAMPLE_PER_OP = 2  # measured rows per op and system kept for the tests (a few dozen in all)
SIGNIFICANT = 4  # digits of each stored constant
GPU_COUNTS = (2, 4, 8)


@dataclass(frozen=True)
class Op:
    """One op kind: the formula that times it, the tables it is fitted on and how a row becomes the formula's inputs."""

    key: str
    formula: str
    folder: str  # <op> under the system's data; the backend's folder follows
    backends: tuple[str, ...]  # each fitted on its own: an engine's kernels are its own
    table: str  # the file's stem (parquet or csv)
    kept: str  # the rows fitted, in words
    select: Callable  # (DataFrame, backend) -> DataFrame of the rows kept
    inputs: Callable  # (DataFrame, GPUSpec) -> dict of NumPy arrays by symbol name
    regime: Callable  # DataFrame -> array of regime names
    fitted: tuple[str, ...]  # the constants fitted
    start: dict[str, float]
    fixed_from: tuple[str, ...] = ()  # ops whose fitted constants this one's formula also needs ("nccl/…" or same backend)
    per_gpu_count: tuple[str, ...] = ()  # constants fitted at each GPU count of the table
    needs: tuple[str, ...] = field(default=())  # GPU figures it needs (fp8: the FP8 peak)


ENGINES = ("trtllm", "vllm")
CUSTOM_KERNEL = {"trtllm": "TRTLLM", "vllm": "vLLM_custom_graph"}  # the all-reduce the engine serves with (CUDA graphs)
DECODE_KERNEL = {"trtllm": "torch_flow", "vllm": "vllm_flash_attn_fa3"}
PREFILL_KERNEL = DECODE_KERNEL


def _gemm_inputs(dtype: str) -> Callable:
    def inputs(rows, spec) -> dict:
        fp8 = dtype == "fp8"
        return {"M_rows": rows.m.to_numpy(float), "N_cols": rows.n.to_numpy(float), "K_inner": rows.k.to_numpy(float),
                "q": 1.0 if fp8 else 2.0, "X": float(spec.flops("fp8" if fp8 else "bf16")),
                "W_mem": float(spec.memory_bandwidth)}
    return inputs


def _gemm_regime(rows) -> np.ndarray:
    m = rows.m.to_numpy()
    return np.where(m <= 16, "m ≤ 16", np.where(m <= 256, "16 < m ≤ 256", "m > 256"))


def _full(rows):
    """Rows without a sliding window (a table without the column has none)."""
    return rows.window_size == 0 if "window_size" in rows else np.ones(len(rows), dtype=bool)


def _grouped(rows):
    return (rows.num_heads > rows.num_key_value_heads) & (rows.num_heads <= 32 * rows.num_key_value_heads)


def _kernel(rows, names: dict, backend: str):
    """The rows of the kernel the engine runs (a table may hold several: vLLM's FA3 and FA4)."""
    wanted = names.get(backend)
    return rows if wanted is None or wanted not in set(rows.kernel_source) else rows[rows.kernel_source == wanted]


def _decode_inputs(rows, spec) -> dict:
    return {"b": rows.batch_size.to_numpy(float), "s_ctx": (rows.isl + rows.step).to_numpy(float),
            "a": rows.num_heads.to_numpy(float), "g": rows.num_key_value_heads.to_numpy(float),
            "d_head": rows.head_dim.to_numpy(float), "q_kv": 2.0, "X": float(spec.bf16), "W_mem": float(spec.memory_bandwidth)}


def _decode_regime(rows) -> np.ndarray:
    b, s = rows.batch_size.to_numpy(), (rows.isl + rows.step).to_numpy()
    return np.where((b <= 8) & (s <= 2048), "b ≤ 8, s ≤ 2k", np.where(b * s <= 65536, "b·s ≤ 64k", "b·s > 64k"))


def _prefill_inputs(rows, spec) -> dict:
    return {"b": rows.batch_size.to_numpy(float), "s": rows.isl.to_numpy(float), "a": rows.num_heads.to_numpy(float),
            "g": rows.num_key_value_heads.to_numpy(float), "d_head": rows.head_dim.to_numpy(float), "q": 2.0,
            "X": float(spec.bf16), "W_mem": float(spec.memory_bandwidth)}


def _prefill_regime(rows) -> np.ndarray:
    s = rows.isl.to_numpy()
    return np.where(s <= 512, "s ≤ 512", np.where(s <= 4096, "512 < s ≤ 4k", "s > 4k"))


def _element_bytes(rows) -> np.ndarray:
    return np.where(rows.nccl_dtype.to_numpy() == "int8", 1.0, 2.0) if "nccl_dtype" in rows else 2.0


def _collective_inputs(rows, spec) -> dict:
    return {"x_msg": rows.message_size.to_numpy(float) * _element_bytes(rows), "n": rows.num_gpus.to_numpy(float)}


def _size_regime(rows) -> np.ndarray:
    size = rows.message_size.to_numpy() * _element_bytes(rows)
    return np.where(size < 2**20, "x < 1 MiB", "x ≥ 1 MiB")


def _collective(key: str, nccl_name: str) -> Op:
    return Op(key, f"perf.op.{key}.time", "comm", ("nccl",), "nccl_perf", f"op_name == {nccl_name}, half and int8",
              lambda t, backend: t[t.op_name == nccl_name], _collective_inputs, _size_regime,
              ("alpha_c", "beta_c", "tau_p", "W_bus"), {"alpha_c": 6e-6, "beta_c": 1e-6, "tau_p": 3e-6, "W_bus": 3e11},
              per_gpu_count=("W_bus",))


OPS: tuple[Op, ...] = (
    Op("gemm.bf16", "perf.op.gemm.time", "gemm", ENGINES, "gemm_perf", "gemm_dtype == bfloat16",
       lambda t, backend: t[t.gemm_dtype == "bfloat16"], _gemm_inputs("bf16"), _gemm_regime,
       ("tau_mm", "eta_mm", "eta_mmb"), {"tau_mm": 4e-6, "eta_mm": 0.7, "eta_mmb": 0.7}),
    Op("elementwise", "perf.op.elementwise.time", "quantize", ENGINES, "scale_matrix_perf",
       "scale_matrix: a 16-bit m×k matrix cast to fp8, 3mk bytes",
       lambda t, backend: t, lambda rows, spec: {"x_ew": 3.0 * rows.m.to_numpy(float) * rows.k.to_numpy(float),
                                                 "W_mem": float(spec.memory_bandwidth)},
       lambda rows: np.where(3 * rows.m * rows.k < 2**22, "x < 4 MiB", "x ≥ 4 MiB"), ("tau_ew", "eta_ew"),
       {"tau_ew": 2e-6, "eta_ew": 0.8}),
    # vLLM's CUTLASS FP8 rows scatter beyond any closed form of the shape (20-35 % median even with a free cast term,
    # tried): TensorRT-LLM's only
    Op("gemm.fp8", "perf.op.gemm.fp8.time", "gemm", ("trtllm",), "gemm_perf", "gemm_dtype == fp8, per-tensor scaling",
       lambda t, backend: t[t.gemm_dtype == "fp8"], _gemm_inputs("fp8"), _gemm_regime,
       ("tau_mm", "eta_mm", "eta_mmb"), {"tau_mm": 6e-6, "eta_mm": 0.6, "eta_mmb": 0.7}, fixed_from=("elementwise",),
       needs=("fp8",)),
    Op("attention.decode", "perf.op.attention.decode.time", "attention", ENGINES, "generation_attention_perf",
       "window_size == 0, kv_cache_dtype == bfloat16, g < a ≤ 32g",
       lambda t, backend: _kernel(t[_full(t) & (t.kv_cache_dtype == "bfloat16") & _grouped(t)],
                                  DECODE_KERNEL, backend),
       _decode_inputs, _decode_regime, ("tau_da", "eta_da", "eta_dax", "c_blk", "c_pos"),
       {"tau_da": 1e-5, "eta_da": 0.8, "eta_dax": 0.1, "c_blk": 3e-8, "c_pos": 2e-12}),
    Op("attention.prefill", "perf.op.attention.prefill.time", "attention", ENGINES, "context_attention_perf",
       "window_size == 0, attn_dtype == kv_cache_dtype == bfloat16, g < a ≤ 32g",
       lambda t, backend: _kernel(t[_full(t) & (t.kv_cache_dtype == "bfloat16") & (t.attn_dtype == "bfloat16")
                                    & _grouped(t)], PREFILL_KERNEL, backend),
       _prefill_inputs, _prefill_regime, ("tau_ca", "eta_ca", "eta_cab", "s_half", "d_half", "c_head"),
       {"tau_ca": 1.5e-5, "eta_ca": 0.6, "eta_cab": 0.4, "s_half": 500.0, "d_half": 30.0, "c_head": 2e-8}),
    _collective("allreduce", "all_reduce"),
    _collective("allgather", "all_gather"),
    _collective("reducescatter", "reduce_scatter"),
    _collective("alltoall", "alltoall"),
    Op("allreduce.custom", "perf.op.allreduce.custom.time", "comm", ENGINES, "custom_allreduce_perf",
       "the engine's all-reduce (bfloat16, CUDA graphs), one-shot below its switch size",
       lambda t, backend: _kernel(t, CUSTOM_KERNEL, backend), _collective_inputs, _size_regime, ("tau_os", "W_os"),
       {"tau_os": 3e-6, "W_os": 2e11}, fixed_from=("nccl/allreduce",)),
)
BOUNDS = {"eta": (1e-3, 1.0), "tau": (1e-8, 1e-3), "c": (1e-15, 1e-5), "s": (1e-2, 1e5), "d": (1e-2, 1e4), "W": (1e9, 1e14),
          "alpha": (1e-8, 1e-3), "beta": (1e-10, 1e-4)}


def _bounds(name: str) -> tuple[float, float]:
    return BOUNDS[re.match(r"[a-zA-Z]+?(?=_|$)", name).group(0)]


def data_root() -> Path:
    """The wheel's data folder: ``aiconfigurator_core/systems/data``."""
    try:
        import aiconfigurator_core
    except ImportError:
        raise SystemExit(f"the calibration extra is not installed: pip install 'llm-formulas[calibration]' ({PACKAGE})") from None
    return Path(aiconfigurator_core.__file__).parent / "systems" / "data"


def _version_key(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in re.findall(r"\d+", version))


def table_path(system: str, op: Op, backend: str) -> Path | None:
    """The newest version of ``op``'s table for ``system`` and ``backend`` (parquet, else csv), or None when the wheel
    has none."""
    folder = data_root() / system / op.folder / backend
    if not folder.is_dir():
        return None
    for version in sorted((v.name for v in folder.iterdir() if v.is_dir()), key=_version_key, reverse=True):
        for suffix in (".parquet", ".csv", ".txt"):
            path = folder / version / f"{op.table}{suffix}"
            if path.is_file():
                return path
    return None


def read_table(path: Path):
    import pandas as pd

    return pd.read_parquet(path) if path.suffix == ".parquet" else pd.read_csv(path)


def predict(op: Op, constants: dict, inputs: dict) -> np.ndarray:
    """The catalogue formula at the rows' inputs and the constants (one W_bus per GPU count where fitted so)."""
    from llm_formulas.render.library import numpy_function

    values = dict(inputs)
    for name, value in constants.items():
        values[name] = np.select([inputs["n"] == count for count in GPU_COUNTS], [value[str(count)] for count in GPU_COUNTS]) \
            if isinstance(value, dict) else value
    function = numpy_function(op.formula)
    wanted = {parameter for parameter in function.__signature__.parameters}
    return np.asarray(function(**{name: value for name, value in values.items() if name in wanted}), dtype=float)


def _unpack(op: Op, vector: np.ndarray) -> dict:
    constants, position = {}, 0
    for name in op.fitted:
        if name in op.per_gpu_count:
            constants[name] = {str(count): float(vector[position + i]) for i, count in enumerate(GPU_COUNTS)}
            position += len(GPU_COUNTS)
        else:
            constants[name] = float(vector[position])
            position += 1
    return constants


def fit(op: Op, inputs: dict, measured: np.ndarray, fixed: dict) -> dict:
    """The constants minimising the soft-L1 loss of log(predicted/measured), within their symbols' ranges."""
    from scipy.optimize import least_squares

    start, lower, upper = [], [], []
    for name in op.fitted:
        copies = len(GPU_COUNTS) if name in op.per_gpu_count else 1
        start += [np.log(op.start[name])] * copies
        low, high = _bounds(name)
        lower += [np.log(low)] * copies
        upper += [np.log(high)] * copies
    result = least_squares(lambda v: np.log(predict(op, {**fixed, **_unpack(op, np.exp(v))}, inputs) / measured),
                           np.clip(start, lower, upper), bounds=(lower, upper), loss="soft_l1", f_scale=0.1)
    return _rounded(_unpack(op, np.exp(result.x)))


def _rounded(constants: dict) -> dict:
    def round_(value: float) -> str:
        return f"{value:.{SIGNIFICANT - 1}e}"
    return {name: ({count: round_(v) for count, v in value.items()} if isinstance(value, dict) else round_(value))
            for name, value in constants.items()}


def _floats(constants: dict) -> dict:
    return {name: ({count: float(v) for count, v in value.items()} if isinstance(value, dict) else float(value))
            for name, value in constants.items()}


def agreement(errors: np.ndarray, regimes: np.ndarray) -> dict:
    """Median and worst |error| over all rows and per regime."""
    def summary(selected: np.ndarray) -> dict:
        return {"median": round(float(np.median(selected)), 4), "worst": round(float(selected.max()), 4), "rows": int(selected.size)}
    result = {"all": summary(errors)}
    for regime in sorted(set(regimes.tolist())):
        result[regime] = summary(errors[regimes == regime])
    return result


def _sample(key: str, rows, inputs: dict, measured: np.ndarray, relative: str) -> list[dict]:
    """A few measured rows spread over the table (a fixed seed), each with the formula's inputs and its latency."""
    chosen = np.random.default_rng(0).choice(len(measured), size=min(SAMPLE_PER_OP, len(measured)), replace=False)
    sample = []
    for index in sorted(chosen.tolist()):
        values = {name: (float(value[index]) if np.ndim(value) else float(value)) for name, value in inputs.items()}
        sample.append({"op": key, "table": relative, "row": int(rows.index[index]), "inputs": values,
                       "measured_s": float(measured[index])})
    return sample


@dataclass(frozen=True)
class Measured:
    """The rows of one table an op is fitted on, as the formula's inputs and the measured latencies in seconds."""

    rows: object  # the DataFrame of the rows kept
    inputs: dict
    seconds: np.ndarray
    table: str  # the path under the wheel's data folder
    version: str


def measured(system: str, op: Op, backend: str) -> Measured | None:
    """``op``'s rows for ``system`` and ``backend`` from the newest table, or None when the wheel has none."""
    spec = SPECS[SYSTEMS[system]]
    path = table_path(system, op, backend)
    if path is None or any(getattr(spec, need) is None for need in op.needs):
        return None
    rows = op.select(read_table(path), backend)
    rows = rows[rows.latency > 0]
    if rows.empty:
        return None
    seconds = rows.latency.to_numpy(float) * 1e-3  # the tables' latencies are in milliseconds
    return Measured(rows, op.inputs(rows, spec), seconds, path.relative_to(data_root()).as_posix(), path.parts[-2])


def _fixed(op: Op, backend: str) -> list[str]:
    """The keys of the fits whose constants ``op``'s formula also uses."""
    return [other if "/" in other else f"{backend}/{other}" for other in op.fixed_from]


def calibrate_system(system: str) -> dict:
    """Every op the wheel has a table of for ``system``, per backend, fitted in order (an op's fixed constants first).
    An entry's key is ``<backend>/<op>``."""
    result: dict = {"gpu": SYSTEMS[system], "ops": {}}
    samples: list[dict] = []
    for op in OPS:
        for backend in op.backends:
            key, fixed_keys = f"{backend}/{op.key}", _fixed(op, backend)
            table = measured(system, op, backend)
            if table is None or any(other not in result["ops"] for other in fixed_keys):
                continue
            fixed = {name: value for other in fixed_keys for name, value in _floats(result["ops"][other]["constants"]).items()}
            constants = fit(op, table.inputs, table.seconds, fixed)
            errors = np.abs(predict(op, {**fixed, **_floats(constants)}, table.inputs) / table.seconds - 1)
            result["ops"][key] = {
                "formula": op.formula, "table": table.table, "backend": backend, "version": table.version,
                "device": str(table.rows.device.iloc[0]) if "device" in table.rows else "", "rows": op.kept,
                "constants": constants, "fixed_from": fixed_keys, "agreement": agreement(errors, op.regime(table.rows)),
            }
            samples += _sample(key, table.rows, table.inputs, table.seconds, table.table)
    result["sample"] = samples
    return result


def recheck(document: dict) -> dict:
    """The stored constants against the installed wheel's tables, refitting nothing: per system and op, the agreement
    as ``agreement`` gives it (the benchmark prints it beside the stored one)."""
    checked: dict = {"systems": {}}
    for system, fitted in document["systems"].items():
        ops = {}
        for key, entry in fitted["ops"].items():
            backend, kind = key.split("/")
            op = next(candidate for candidate in OPS if candidate.key == kind)
            table = measured(system, op, backend)
            if table is None or table.table != entry["table"]:
                continue  # another version of the wheel: its tables are not the ones fitted
            stored = {}
            for other in [*entry["fixed_from"], key]:
                stored.update(_floats(document["systems"][system]["ops"][other]["constants"]))
            errors = np.abs(predict(op, stored, table.inputs) / table.seconds - 1)
            ops[key] = {"agreement": agreement(errors, op.regime(table.rows))}
        checked["systems"][system] = {"ops": ops}
    return checked


def calibrate(systems: tuple[str, ...] = tuple(SYSTEMS)) -> dict:
    from importlib.metadata import version

    return {
        "source": {"package": PACKAGE, "version": version(PACKAGE), "license": "Apache-2.0",
                   "attribution": "Measured per-op latencies from NVIDIA AIConfigurator (aiconfigurator-core, "
                                  "Copyright (c) NVIDIA CORPORATION & AFFILIATES, Apache License 2.0); the sample rows "
                                  "are copied from the tables named beside them, latencies converted from ms to s."},
        "fitted_by": "python -m llm_formulas.render.numeric.kernel_calibrate",
        "systems": {system: calibrate_system(system) for system in systems},
    }


def table(document: dict) -> str:
    """The agreement of every fitted op, one line per GPU, op kind and regime."""
    lines = [f"{'GPU':<9} {'op':<25} {'regime':<15} {'rows':>6} {'median':>7} {'worst':>7}"]
    for system, fitted in document["systems"].items():
        for key, op in fitted["ops"].items():
            for regime, summary in op["agreement"].items():
                lines.append(f"{system:<9} {key:<25} {regime:<15} {summary['rows']:>6} {summary['median']:>7.1%} "
                             f"{summary['worst']:>7.1%}")
    return "\n".join(lines)


def write(document: dict) -> None:
    CONSTANTS_FILE.write_text(json.dumps(document, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    systems = tuple(argv if argv else sys.argv[1:]) or tuple(SYSTEMS)
    unknown = [system for system in systems if system not in SYSTEMS]
    if unknown:
        print(f"unknown system {unknown[0]!r}: one of {', '.join(SYSTEMS)}", file=sys.stderr)
        return 2
    document = calibrate(systems)
    write(document)
    print(table(document))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
