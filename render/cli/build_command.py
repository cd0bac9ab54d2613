"""``llm-formulas build [--out DIR] [--notebooks-dir DIR] [--force]``: render every artifact (render.documents.build).

Problems with the output folder (read-only, full, a file where a folder must be,
a file the previous build did not write) are one line and exit code 2.
"""

from __future__ import annotations

import argparse
import time

from render.cli.numbers import InputError
from render.cli.result import Result


def run_build(args: argparse.Namespace) -> Result:
    from pathlib import Path

    from render.documents.build import build
    from render.documents.safe_write import OutputError

    out = Path(args.out)
    notebooks = Path(args.notebooks_dir) if args.notebooks_dir else None
    started = time.perf_counter()
    try:
        manifest = build(out, notebooks, force=args.force)
    except OutputError as error:
        raise InputError(str(error)) from None
    elapsed = time.perf_counter() - started
    document = manifest.as_json()
    lines = [f"  {row['path']}" for row in document["files"]]
    lines += [f"  skipped {reason}" for reason in document["skipped"]]
    lines.append(f"wrote {len(document['files'])} files to {out}/ in {elapsed:.1f} s; open {out / 'reference.html'} "
                 f"and {out / 'calculator.html'} in a browser")
    return Result(document, "\n".join(lines))


def register(add_command) -> None:
    built = add_command("build", "render the reference (md, html, tex, pdf), numeric code, calculator, plots and notebooks", run_build)
    built.add_argument("--out", default="build", help="output directory (default: build)")
    built.add_argument(
        "--notebooks-dir",
        default=None,
        help="where to write the teaching notebooks (default: OUT/notebooks; the repository's are in notebooks/)",
    )
    built.add_argument("--force", action="store_true",
                       help="replace files in OUT that the previous build's manifest does not list (never follows symlinks)")
