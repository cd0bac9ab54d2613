"""``llm-formulas sweep SPEC --out FILE``: ranked layouts of models × GPUs × cluster sizes (render.numeric.sweep).

SPEC is a JSON or TOML file::

    models = ["llama2-7b", "llama2-70b"]      # presets (llm-formulas params --model NAME)
    gpus = ["a100-80gb", "h100-sxm"]
    sizes = [64, 256]                          # cluster sizes n
    global_batch = 512                         # sequences
    seq = 4096                                 # tokens per sequence
    # optional: tokens, mfu, overlap, network (GB/s), top (layouts per case), max_tp (0: no limit)

Ranked as ``plan`` ranks (render.numeric.plan): by the predicted step time, with no TP limit by default; with ``mfu``
at that MFU, TP within a node by default. The table's ``ranked_by`` column says which.

It runs in process by default, on a local Dask cluster with ``--workers N``, or on
a running one with ``--scheduler tcp://HOST:PORT``; each gives the same table,
written to ``--out`` as CSV (``.csv``) or Parquet (``.parquet``, needs pyarrow).
A case without a valid layout (none both splits the model and the batch and fits in memory) keeps a row: its model,
gpu and n, an empty rank and layout, and the reason (``NO_LAYOUT``); the header is always written.
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import re
import tomllib
from fractions import Fraction
from pathlib import Path

from llm_formulas.render.cli.config_file import read_config_bytes, unique_keys
from llm_formulas.render.cli.numbers import InputError, parse_fraction, printable, quote
from llm_formulas.render.cli.result import Result

REQUIRED = ("models", "gpus", "sizes", "global_batch", "seq")
OPTIONAL = ("tokens", "mfu", "overlap", "network", "top", "max_tp")
MAX_CASES = 1000
NO_LAYOUT = "no valid layout: none of the case's layouts both splits the model and the batch and fits in memory"
SCHEDULER = re.compile(r"(tcp|tls|ucx)://(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9._-]+):[0-9]{1,5}", re.ASCII)


def _text(document: dict, key: str, value: object = None) -> str:
    """A spec value as the command line would have read it: a JSON/TOML number or a string of the number grammar."""
    value = document[key] if value is None else value
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise InputError(f"sweep spec: {key} must be a number, got {quote(json.dumps(value, default=str))}")
    return value if isinstance(value, str) else repr(value)  # 1e+100, 0.5; an int of 400 digits is refused by length


def _count(document: dict, key: str, name: str, value: object = None) -> int:
    """A count held to the symbol's rules and the shared bounds, exactly as ``plan``'s option would be."""
    from llm_formulas.render.cli.inputs import parse_count

    return parse_count(_text(document, key, value), name, f"sweep spec {key}")


def _whole(document: dict, key: str, least: int, most: int) -> int:
    value = parse_fraction(_text(document, key), f"sweep spec {key}")
    if value.denominator != 1 or not least <= value <= most:
        raise InputError(f"sweep spec: {key} must be a whole number from {least} to {most:,}, got {quote(_text(document, key))}")
    return int(value)


def _distinct(key: str, items: list) -> None:
    """A case listed twice would be swept twice and its counts doubled: refused."""
    seen = set()
    for item in items:
        if item in seen:
            raise InputError(f"sweep spec: {key} lists {quote(str(item))} twice")
        seen.add(item)


def _names(document: dict, key: str) -> tuple[str, ...]:
    value = document[key]
    if not isinstance(value, list) or not value or not all(isinstance(item, str) for item in value):
        raise InputError(f"sweep spec: {key} must be a non-empty list of names")
    _distinct(key, value)
    return tuple(value)


def read_spec(path: str):
    """The Spec in the file at ``path`` (JSON, or TOML when it ends in .toml); one line for anything wrong. Every value
    goes through the command line's number grammar and bounds (``plan``'s), a key given twice is refused."""
    from llm_formulas.formulas.vocabulary.bounds import MAX_GPUS, MAX_LAYOUTS
    from llm_formulas.formulas.data.calibration import NoCalibration, efficiency
    from llm_formulas.formulas.data.gpu_specs import SPECS
    from llm_formulas.formulas.reports.estimate import unpriced
    from llm_formulas.formulas.data.presets import names, preset
    from llm_formulas.render.cli.inputs import parse_exact
    from llm_formulas.render.numeric.sweep import Spec

    data, label = read_config_bytes(path)
    try:
        text = data.decode("utf-8")
        document = tomllib.loads(text) if path.endswith(".toml") else json.loads(text, object_pairs_hook=unique_keys)
    except (UnicodeDecodeError, ValueError, RecursionError) as error:
        first_line = str(error).splitlines()[0] if str(error) else type(error).__name__
        raise InputError(f"sweep spec {label} is not valid {'TOML' if path.endswith('.toml') else 'JSON'}: "
                         f"{printable(first_line, 100)}") from None
    if not isinstance(document, dict):
        raise InputError(f"sweep spec {label} must be a table/object")
    unknown = sorted(set(document) - set(REQUIRED) - set(OPTIONAL))
    missing = [key for key in REQUIRED if key not in document]
    if unknown or missing:
        raise InputError(f"sweep spec {label}: " + "; ".join(
            ([f"unknown keys {', '.join(map(quote, unknown[:5]))}"] if unknown else []) + ([f"missing {', '.join(missing)}"] if missing else [])))
    models, gpus = _names(document, "models"), _names(document, "gpus")
    for name in models:
        if name not in names():
            raise InputError(f"sweep spec: unknown model {quote(name)}; known: {', '.join(names())}")
        reason = unpriced(preset(name).read["values"])
        if reason is not None:
            raise InputError(f"sweep spec: model {quote(name)}: {reason}")
    for name in gpus:
        if name not in SPECS:
            raise InputError(f"sweep spec: unknown GPU {quote(name)}; known: {', '.join(sorted(SPECS))}")
    sizes = document["sizes"]
    if not isinstance(sizes, list) or not sizes:
        raise InputError("sweep spec: sizes must be a non-empty list of GPU counts")
    if len(models) * len(gpus) * len(sizes) > MAX_CASES:
        raise InputError(f"sweep spec: {len(models) * len(gpus) * len(sizes)} cases; at most {MAX_CASES}")
    sizes = tuple(_count(document, "sizes", "n", size) for size in sizes)
    _distinct("sizes", sizes)

    def ratio(key: str, default: str) -> Fraction:
        value = parse_fraction(_text(document, key) if key in document else default, f"sweep spec {key}")
        if not 0 < value <= 1:
            raise InputError(f"sweep spec: {key} must be in (0, 1], got {quote(_text(document, key))}")
        return value

    network = parse_fraction(_text(document, "network"), "sweep spec network") if "network" in document else Fraction(25)
    if network <= 0:
        raise InputError("sweep spec: network must be positive (GB/s)")
    tokens = None
    if "tokens" in document:
        tokens = parse_exact(_text(document, "tokens"), "D", "sweep spec tokens")
    max_tp = _whole(document, "max_tp", 0, MAX_GPUS) if "max_tp" in document else None  # None: plan's default
    utilization = ratio("mfu", "1/2") if "mfu" in document else None  # None: predicted, as plan without --mfu
    if utilization is None:
        for name in gpus:
            try:
                efficiency(name)
            except NoCalibration:
                raise InputError(f"sweep spec: {name} has no performance constants to predict a step time with; give mfu "
                                 f"in the spec to rank at an assumed utilization") from None
    return Spec(
        models=models, gpus=gpus, sizes=sizes, global_batch=_count(document, "global_batch", "B"),
        seq=_count(document, "seq", "s"), tokens=tokens,
        utilization=utilization, overlap=ratio("overlap", "1/2"), network=network * 10**9,
        top=_whole(document, "top", 1, MAX_LAYOUTS) if "top" in document else 1, max_tp=max_tp,
    )


def with_dropped_cases(spec, rows: list[dict]) -> list[dict]:
    """The ranked rows with a row in its place, in spec order, for each case that has none (NO_LAYOUT as its reason)."""
    by_case: dict[tuple, list[dict]] = {}
    for entry in rows:
        by_case.setdefault((entry["model"], entry["gpu"], entry["n"]), []).append(entry)
    return [entry for case in ((name, gpu_key, n) for name in spec.models for gpu_key in spec.gpus for n in spec.sizes)
            for entry in by_case.get(case) or [{"model": case[0], "gpu": case[1], "n": case[2], "rank": None, "reason": NO_LAYOUT}]]


def columns(rows: list[dict]) -> list[str]:
    """Every column the rows have: a ranked row's in its order, then any other (a dropped case's reason alone, an
    uneven pipeline's stages)."""
    ranked = [entry for entry in rows if entry["rank"] is not None][:1]
    names = dict.fromkeys(key for entry in ranked + rows for key in entry)
    return list(names)


def table_bytes(rows: list[dict], out: Path) -> bytes:
    """The table as CSV, or Parquet for a .parquet name; a cell a row lacks is empty (null)."""
    rows = [dict.fromkeys(columns(rows)) | entry for entry in rows]
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
    writer = csv.DictWriter(text, fieldnames=columns(rows), lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    return text.getvalue().encode("utf-8")


def read_scheduler(address: str) -> str:
    """``--scheduler``: a running Dask scheduler's address, PROTOCOL://HOST:PORT (Dask's own parser raises ValueError
    on anything else, and ``inproc://`` names a scheduler inside another process's memory)."""
    if not SCHEDULER.fullmatch(address) or not 0 < int(address.rsplit(":", 1)[1]) < 65536:
        raise InputError(f"--scheduler {quote(address)} is not a Dask scheduler address: give tcp://HOST:PORT "
                         "(or tls:// or ucx://)")
    return address


def run(args: argparse.Namespace) -> Result:
    from llm_formulas.render.cli.progress import Progress
    from llm_formulas.render.documents.safe_write import OutputError, write_atomically
    from llm_formulas.render.numeric.plan import SpaceTooLarge
    from llm_formulas.render.numeric.sweep import run_in_process, run_on_dask

    out = Path(args.out)
    if out.suffix not in (".csv", ".parquet"):
        raise InputError(f"--out {quote(args.out)}: the table is written as .csv or .parquet")
    spec = read_spec(args.spec)
    if args.workers is not None and args.scheduler is not None:
        raise InputError("give --workers (a local Dask cluster) or --scheduler (a running one), not both")
    workers = parse_fraction(args.workers, "--workers") if args.workers is not None else None
    if workers is not None and (workers.denominator != 1 or not 1 <= workers <= 256):
        raise InputError(f"--workers must be a whole number from 1 to 256, got {quote(args.workers)}")
    workers = None if workers is None else int(workers)
    scheduler = None if args.scheduler is None else read_scheduler(args.scheduler)
    try:
        if scheduler is None and workers is None:
            bar = Progress("sweep")
            rows = run_in_process(spec, progress=bar.update)
            bar.close()
        else:
            try:
                import dask.distributed  # noqa: F401
            except ImportError:
                raise InputError("--workers and --scheduler need Dask: pip install 'dask[distributed]'") from None
            try:
                rows = run_on_dask(spec, scheduler=scheduler, workers=workers or 2, processes=True)
            except SpaceTooLarge:
                raise
            except (OSError, ValueError) as error:  # unreachable, refused, timed out (TimeoutError is an OSError)
                raise InputError(f"cannot reach the Dask scheduler {quote(str(scheduler))}: {printable(str(error), 120)}") from None
    except SpaceTooLarge as error:
        raise InputError(f"sweep spec: {error}") from None
    table = with_dropped_cases(spec, rows)
    try:
        write_atomically(out, table_bytes(table, out))
    except OutputError as error:
        raise InputError(str(error)) from None
    dropped = [entry for entry in table if entry["rank"] is None]
    doc = {"out": str(out), "rows": len(rows), "cases": len(spec.models) * len(spec.gpus) * len(spec.sizes),
           "without_layout": [{"model": e["model"], "gpu": e["gpu"], "n": e["n"]} for e in dropped]}
    missing = "".join(f"\n{e['model']} on {e['n']} × {e['gpu']}: {NO_LAYOUT} (a row with an empty rank)" for e in dropped)
    return Result(doc, f"wrote {len(rows)} ranked layouts of {doc['cases']} cases to {printable(str(out), 200)}{missing}")


def register(add_command) -> None:
    command = add_command("sweep", "rank the layouts of many models × GPUs × cluster sizes, in process or on Dask", run)
    command.add_argument("spec", metavar="SPEC", help="a JSON or .toml file: models, gpus, sizes, global_batch, seq (and optional "
                                                      "tokens, mfu, overlap, network GB/s, top, max_tp)")
    command.add_argument("--out", required=True, metavar="FILE", help="the table: FILE.csv or FILE.parquet (a case without a "
                                                                     "valid layout: a row with an empty rank and the reason; "
                                                                     "always a header)")
    where = command.add_mutually_exclusive_group()
    where.add_argument("--workers", metavar="N", help="run on a local Dask cluster of N worker processes")
    where.add_argument("--scheduler", metavar="ADDR", help="run on a running Dask cluster, e.g. tcp://127.0.0.1:8786")
