"""``llm-formulas sweep SPEC --out FILE``: ranked layouts of models × GPUs × cluster sizes (render.numeric.sweep).

SPEC is a JSON or TOML file::

    models = ["llama2-7b", "llama2-70b"]      # presets (llm-formulas params --model NAME)
    gpus = ["a100-80gb", "h100-sxm"]
    sizes = [64, 256]                          # cluster sizes n
    global_batch = 512                         # sequences
    seq = 4096                                 # tokens per sequence
    # optional: tokens, mfu, overlap, network (GB/s), top (layouts per case), max_tp (0: no limit)

It runs in process by default, on a local Dask cluster with ``--workers N``, or on
a running one with ``--scheduler tcp://HOST:PORT``; each gives the same table,
written to ``--out`` as CSV (``.csv``) or Parquet (``.parquet``, needs pyarrow).
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import tomllib
from pathlib import Path

from llm_formulas.render.cli.config_file import read_config_bytes
from llm_formulas.render.cli.numbers import InputError, parse_fraction, quote
from llm_formulas.render.cli.result import Result
from llm_formulas.render.numeric import GPUS_PER_NODE

REQUIRED = ("models", "gpus", "sizes", "global_batch", "seq")
OPTIONAL = ("tokens", "mfu", "overlap", "network", "top", "max_tp")
MAX_CASES = 1000


def _number(document: dict, key: str, suffix_allowed: bool = True):
    value = document[key]
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise InputError(f"sweep spec: {key} must be a number, got {quote(str(value))}")
    return parse_fraction(str(value), f"sweep spec {key}", suffix_allowed=suffix_allowed)


def _whole(document: dict, key: str, least: int = 1) -> int:
    value = _number(document, key)
    if value.denominator != 1 or value < least:
        raise InputError(f"sweep spec: {key} must be a whole number of at least {least}, got {quote(str(document[key]))}")
    return int(value)


def _names(document: dict, key: str) -> tuple[str, ...]:
    value = document[key]
    if not isinstance(value, list) or not value or not all(isinstance(item, str) for item in value):
        raise InputError(f"sweep spec: {key} must be a non-empty list of names")
    return tuple(value)


def read_spec(path: str):
    """The Spec in the file at ``path`` (JSON, or TOML when it ends in .toml); one line for anything wrong."""
    import sympy as sp

    from llm_formulas.formulas.gpus import PRESETS
    from llm_formulas.formulas.presets import names
    from llm_formulas.render.numeric.sweep import Spec

    data, label = read_config_bytes(path)
    try:
        text = data.decode("utf-8")
        document = tomllib.loads(text) if path.endswith(".toml") else json.loads(text)
    except (UnicodeDecodeError, ValueError, RecursionError) as error:
        raise InputError(f"sweep spec {label} is not valid {'TOML' if path.endswith('.toml') else 'JSON'}: {str(error)[:100]}") from None
    if not isinstance(document, dict):
        raise InputError(f"sweep spec {label} must be a table/object")
    unknown = sorted(set(document) - set(REQUIRED) - set(OPTIONAL))
    missing = [key for key in REQUIRED if key not in document]
    if unknown or missing:
        raise InputError(f"sweep spec {label}: " + "; ".join(
            ([f"unknown keys {', '.join(map(quote, unknown))}"] if unknown else []) + ([f"missing {', '.join(missing)}"] if missing else [])))
    models, gpus = _names(document, "models"), _names(document, "gpus")
    for name in models:
        if name not in names():
            raise InputError(f"sweep spec: unknown model {quote(name)}; known: {', '.join(names())}")
    for name in gpus:
        if name not in PRESETS:
            raise InputError(f"sweep spec: unknown GPU {quote(name)}; known: {', '.join(sorted(PRESETS))}")
    sizes = document["sizes"]
    if not isinstance(sizes, list) or not sizes:
        raise InputError("sweep spec: sizes must be a non-empty list of GPU counts")
    sizes = tuple(_whole({"sizes": size}, "sizes") for size in sizes)
    if len(models) * len(gpus) * len(sizes) > MAX_CASES:
        raise InputError(f"sweep spec: {len(models) * len(gpus) * len(sizes)} cases; at most {MAX_CASES}")

    def ratio(key: str, default: str) -> sp.Rational:
        value = _number(document, key, suffix_allowed=False) if key in document else parse_fraction(default)
        if not 0 < value <= 1:
            raise InputError(f"sweep spec: {key} must be in (0, 1], got {quote(str(document.get(key)))}")
        return sp.Rational(value.numerator, value.denominator)

    network = _number(document, "network", suffix_allowed=False) if "network" in document else parse_fraction("25")
    if network <= 0:
        raise InputError("sweep spec: network must be positive (GB/s)")
    max_tp = _whole(document, "max_tp", least=0) if "max_tp" in document else GPUS_PER_NODE
    return Spec(
        models=models, gpus=gpus, sizes=sizes, global_batch=_whole(document, "global_batch"), seq=_whole(document, "seq"),
        tokens=_whole(document, "tokens") if "tokens" in document else None,
        utilization=ratio("mfu", "1/2"), overlap=ratio("overlap", "1/2"),
        network=sp.Rational(network.numerator, network.denominator) * 10**9,
        top=_whole(document, "top") if "top" in document else 1, max_tp=max_tp or None,
    )


def table_bytes(rows: list[dict], out: Path) -> bytes:
    """The table as CSV, or Parquet for a .parquet name."""
    if out.suffix == ".parquet":
        try:
            import pyarrow as pa
            import pyarrow.parquet as pq
        except ImportError:
            raise InputError("writing .parquet needs pyarrow (pip install pyarrow); or write a .csv") from None
        buffer = pa.BufferOutputStream()
        pq.write_table(pa.Table.from_pylist(rows), buffer)
        return buffer.getvalue().to_pybytes()
    text = io.StringIO()
    if rows:
        writer = csv.DictWriter(text, fieldnames=list(rows[0]), lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
    return text.getvalue().encode("utf-8")


def run(args: argparse.Namespace) -> Result:
    from llm_formulas.render.cli.progress import Progress
    from llm_formulas.render.documents.safe_write import OutputError, write_atomically
    from llm_formulas.render.numeric.sweep import run_in_process, run_on_dask

    out = Path(args.out)
    if out.suffix not in (".csv", ".parquet"):
        raise InputError(f"--out {quote(args.out)}: the table is written as .csv or .parquet")
    spec = read_spec(args.spec)
    if args.workers is not None and args.scheduler is not None:
        raise InputError("give --workers (a local Dask cluster) or --scheduler (a running one), not both")
    workers = int(parse_fraction(args.workers, "--workers")) if args.workers is not None else None
    if workers is not None and not 1 <= workers <= 256:
        raise InputError("--workers must be a whole number from 1 to 256")
    if args.scheduler is None and workers is None:
        bar = Progress("sweep")
        rows = run_in_process(spec, progress=bar.update)
        bar.close()
    else:
        try:
            import dask.distributed  # noqa: F401
        except ImportError:
            raise InputError("--workers and --scheduler need Dask: pip install 'dask[distributed]'") from None
        try:
            rows = run_on_dask(spec, scheduler=args.scheduler, workers=workers or 2, processes=True)
        except OSError as error:
            raise InputError(f"cannot reach the Dask scheduler {quote(str(args.scheduler))}: {str(error)[:120]}") from None
    try:
        write_atomically(out, table_bytes(rows, out))
    except OutputError as error:
        raise InputError(str(error)) from None
    doc = {"out": str(out), "rows": len(rows), "cases": len(spec.models) * len(spec.gpus) * len(spec.sizes)}
    return Result(doc, f"wrote {len(rows)} ranked layouts of {doc['cases']} cases to {out}")


def register(add_command) -> None:
    command = add_command("sweep", "rank the layouts of many models × GPUs × cluster sizes, in process or on Dask", run)
    command.add_argument("spec", metavar="SPEC", help="a JSON or .toml file: models, gpus, sizes, global_batch, seq (and optional "
                                                      "tokens, mfu, overlap, network GB/s, top, max_tp)")
    command.add_argument("--out", required=True, metavar="FILE", help="the table: FILE.csv or FILE.parquet")
    where = command.add_mutually_exclusive_group()
    where.add_argument("--workers", metavar="N", help="run on a local Dask cluster of N worker processes")
    where.add_argument("--scheduler", metavar="ADDR", help="run on a running Dask cluster, e.g. tcp://127.0.0.1:8786")
