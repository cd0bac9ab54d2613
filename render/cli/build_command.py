"""``llm-formulas build [--out DIR] [--notebooks-dir DIR] [--no-execute] [--no-pdf] [--force] [--only STAGE,...]``:
render every artifact, or the stages ``--only`` names (render.documents.build).

The default folder is ``site/``: ``build/`` is setuptools' (``pip install .`` fills build/lib and
build/bdist.*). On a terminal each stage is announced on stderr as it runs; when the output is a pipe or a log,
each stage is one line on stdout as it ends (``reference: 3 files, 41.2 s``); with ``--json`` only the document is
printed (the files are listed in OUT/manifest.json). An unknown stage in ``--only`` is one line listing the stages,
exit code 2.
Problems with the output folder (read-only, full, a file where a folder must be,
a file the previous build did not write) are one line and exit code 2; so is a TeX installation
that cannot compile the PDF, once everything else is written and listed: the line says what to
install, or to pass ``--no-pdf``.
"""

from __future__ import annotations

import argparse
import sys
import time

from llm_formulas.render.cli.numbers import InputError, printable
from llm_formulas.render.cli.result import Result


DEFAULT_OUT = "site"


def run_build(args: argparse.Namespace) -> Result:
    from pathlib import Path

    from llm_formulas.render.documents.build import StageError, build, chosen_stages
    from llm_formulas.render.documents.safe_write import OutputError

    try:
        only = chosen_stages(args.only)
    except StageError as error:
        raise InputError(f"--only: {error}") from None
    out = Path(args.out)
    notebooks = Path(args.notebooks_dir) if args.notebooks_dir else None
    started = time.perf_counter()
    try:
        manifest = build(out, notebooks, force=args.force, execute=not args.no_execute, stages=_reporter(args.json, len(only)),
                         pdf=not args.no_pdf, only=only)
    except OutputError as error:
        raise InputError(str(error)) from None
    elapsed = time.perf_counter() - started
    document = manifest.as_json()
    shown = printable(str(out), 200)
    if manifest.pdf_failure is not None:
        raise InputError(f"{manifest.pdf_failed} not made: {manifest.pdf_failure}; or skip the PDF with --no-pdf. The other "
                         f"{len(document['files'])} files are written (listed in {shown}/manifest.json)")
    lines = [f"  skipped {reason}" for reason in document["skipped"]]
    lines.append(f"wrote {len(document['files'])} files to {shown}/ in {elapsed:.1f} s (listed in {shown}/manifest.json); "
                 f"open {shown}/reference.html and {shown}/calculator.html in a browser")
    return Result(document, "\n".join(lines))


def _reporter(as_json: bool, count: int):
    """Live progress on stderr when stdout is a terminal; a line per stage on stdout in a pipe or a log; none for --json."""
    from llm_formulas.render.documents.build import Stages

    if as_json:
        return Stages(None, count=count)
    if sys.stdout.isatty():
        return Stages(sys.stderr, live=True, count=count)
    return Stages(sys.stdout, count=count)


def register(add_command) -> None:
    built = add_command("build", "render the reference (md, html, tex, pdf), numeric code, calculator, plots and notebooks", run_build)
    built.add_argument("--out", default=DEFAULT_OUT, help=f"output directory (default: {DEFAULT_OUT}; build/ is setuptools')")
    built.add_argument(
        "--notebooks-dir",
        default=None,
        help="where to write the teaching notebooks (default: OUT/notebooks; the repository's are in notebooks/)",
    )
    built.add_argument("--no-execute", action="store_true",
                       help="run no lesson: one whose committed executed copy no longer matches it is written "
                            "without outputs, and gets no slide deck")
    built.add_argument("--no-pdf", action="store_true",
                       help="skip reference.pdf (pdflatex is otherwise run when it is on PATH)")
    built.add_argument("--only", default=None, metavar="STAGE,...",
                       help="build only these stages (plots, reference, guide, cheatsheet, numeric, calculator, "
                            "notebooks, slides, pdf); an earlier build's other files stay as they are")
    built.add_argument("--force", action="store_true",
                       help="replace files in OUT that the previous build's manifest does not list (never follows symlinks)")
