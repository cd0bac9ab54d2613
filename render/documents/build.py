"""``llm-formulas build [--out DIR] [--notebooks-dir DIR]``: render every artifact.

Writes into OUT (default ``site/``, not setuptools' ``build/``): reference.md, reference.html,
reference.tex and reference.pdf (when pdflatex is on PATH), the generated
NumPy module, calculator.html, the plots, the teaching notebooks (under
OUT/notebooks unless ``--notebooks-dir`` names another directory: the
repository's committed copies are refreshed with ``--notebooks-dir notebooks``)
and manifest.json listing every file written with its sha256. Everything is
a pure function of the catalogue: building twice writes identical bytes.

On a terminal, each stage (reference, PDF, numeric code, calculator, plots, notebooks) is announced on
stderr with the time it took; piped or with ``--json``, only the summary is printed.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterator, TextIO

from render.documents.calculator import calculator_page
from render.cli.catalogue_commands import Result
from render.printers.codegen import MODULE_NAME, module_source
from render.cli.inputs import InputError
from render.documents.notebooks import write_notebooks
from render.documents.plots import write_plots
from render.documents.reference import build_reference
from render.documents.templating import render

PDFLATEX_TIMEOUT = 120
DEFAULT_OUT = "site"  # setuptools fills build/ (build/lib, build/bdist.*) on pip install .
STAGES = ("reference", "numeric code", "calculator", "plots", "notebooks", "PDF")


class Stages:
    """``with stages("plots"):`` announces a stage and, when it ends, the seconds it took (on a terminal only)."""

    def __init__(self, stream: TextIO | None) -> None:
        self.stream = stream
        self.done = 0

    @contextmanager
    def __call__(self, name: str) -> Iterator[None]:
        started = time.perf_counter()
        if self.stream is not None:
            self.stream.write(f"[{self.done + 1}/{len(STAGES)}] {name}…")
            self.stream.flush()
        yield
        self.done += 1
        if self.stream is not None:
            self.stream.write(f" {time.perf_counter() - started:.1f} s\n")
            self.stream.flush()


@dataclass
class Manifest:
    out: Path
    files: dict[str, Path] = field(default_factory=dict)
    skipped: list[str] = field(default_factory=list)

    def write(self, relative: str, content: str | bytes) -> Path:
        path = self.out / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        data = content.encode("utf-8") if isinstance(content, str) else content
        path.write_bytes(data)
        self.add(path)
        return path

    def add(self, path: Path) -> None:
        self.files[os.path.relpath(path, self.out).replace(os.sep, "/")] = path

    def as_json(self) -> dict:
        rows = []
        for relative in sorted(self.files):
            data = self.files[relative].read_bytes()
            rows.append({"path": relative, "bytes": len(data), "sha256": hashlib.sha256(data).hexdigest()})
        return {"files": rows, "skipped": sorted(self.skipped)}


def compile_pdf(tex: str) -> bytes:
    """Run pdflatex twice (for the table of contents) in a temporary directory."""
    env = dict(os.environ, SOURCE_DATE_EPOCH="0", FORCE_SOURCE_DATE="1")
    with tempfile.TemporaryDirectory(prefix="llm-formulas-tex-") as work:
        Path(work, "reference.tex").write_text(tex, encoding="utf-8")
        for _ in range(2):
            run = subprocess.run(
                ["pdflatex", "-interaction=nonstopmode", "-halt-on-error", "reference.tex"],
                cwd=work,
                env=env,
                capture_output=True,
                text=True,
                errors="replace",
                timeout=PDFLATEX_TIMEOUT,
            )
            if run.returncode != 0:
                errors = [line for line in run.stdout.splitlines() if line.startswith("!")]
                raise RuntimeError(f"pdflatex failed: {errors[0] if errors else run.stdout[-300:]}")
        return Path(work, "reference.pdf").read_bytes()


def build(out: Path, notebooks_dir: Path | None = None, stages: Callable | None = None) -> Manifest:
    """Every artifact into ``out``; ``stages`` (a Stages) announces each step."""
    stage = stages or Stages(None)
    manifest = Manifest(out)
    out.mkdir(parents=True, exist_ok=True)
    with stage("reference"):
        reference = build_reference()
        manifest.write("reference.md", render("reference.md", ref=reference))
        manifest.write("reference.html", render("reference.html", ref=reference))
        tex = render("reference.tex", ref=reference)
        manifest.write("reference.tex", tex)
    with ThreadPoolExecutor(max_workers=1) as background:  # pdflatex runs while Python renders the rest
        pdf = background.submit(compile_pdf, tex) if shutil.which("pdflatex") else None
        with stage("numeric code"):
            manifest.write(f"{MODULE_NAME}.py", module_source())
        with stage("calculator"):
            page, left_out = calculator_page()
            manifest.write("calculator.html", page)
            manifest.skipped += [f"calculator: {reason}" for reason in left_out]
        with stage("plots"):
            for path in write_plots(out / "plots", manifest.skipped):
                manifest.add(path)
        with stage("notebooks"):
            for path in write_notebooks(notebooks_dir or out / "notebooks"):
                manifest.add(path)
        with stage("PDF"):
            if pdf is not None:
                manifest.write("reference.pdf", pdf.result())
            else:
                manifest.skipped.append("reference.pdf: pdflatex is not on PATH")
    # the manifest lists every other file; it is written last and not listed in itself
    (out / "manifest.json").write_text(json.dumps(manifest.as_json(), indent=1, sort_keys=True) + "\n", encoding="utf-8")
    return manifest


def run_build(args) -> Result:
    out = Path(args.out)
    notebooks = Path(args.notebooks_dir) if args.notebooks_dir else None
    directories = [(option, d) for option, d in (("--out", out), ("--notebooks-dir", notebooks)) if d is not None]
    for option, directory in directories:
        if directory.exists() and not directory.is_dir():
            raise InputError(f"{option} {directory}: not a directory")
    for option, directory in directories:
        try:
            directory.mkdir(parents=True, exist_ok=True)
        except OSError as error:
            raise InputError(f"{option} {directory}: {error.strerror}") from None
    started = time.perf_counter()
    manifest = build(out, notebooks, Stages(sys.stderr if sys.stderr.isatty() and not args.json else None))
    elapsed = time.perf_counter() - started
    document = manifest.as_json()
    lines = [f"  skipped {reason}" for reason in document["skipped"]]
    lines.append(f"wrote {len(document['files'])} files to {out}/ in {elapsed:.1f} s (listed in {out / 'manifest.json'}); "
                 f"open {out / 'reference.html'} and {out / 'calculator.html'} in a browser")
    return Result(document, "\n".join(lines))


def register(add_command) -> None:
    built = add_command("build", "render the reference (md, html, tex, pdf), numeric code, calculator, plots and notebooks", run_build)
    built.add_argument("--out", default=DEFAULT_OUT, help=f"output directory (default: {DEFAULT_OUT})")
    built.add_argument(
        "--notebooks-dir",
        default=None,
        help="where to write the teaching notebooks (default: OUT/notebooks; the repository's are in notebooks/)",
    )
