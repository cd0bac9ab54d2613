"""``llm-formulas build [--out DIR] [--notebooks-dir DIR]``: render every artifact.

Writes into OUT (default ``site/``, not setuptools' ``build/``): reference.md, reference.html,
reference.tex and reference.pdf (when pdflatex is on PATH), the user guide (guide.md, guide.html), the generated
NumPy module, calculator.html, the plots, the teaching notebooks (under
OUT/notebooks unless ``--notebooks-dir`` names another directory: the
repository's committed copies are refreshed with ``--notebooks-dir notebooks``)
and manifest.json listing every file written with its sha256. Everything is
a pure function of the catalogue: building twice writes identical bytes. ``Stages`` announces each
step (plots, reference, numeric code, calculator, notebooks, PDF) while it runs.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator, TextIO

from llm_formulas.render.documents.calculator import calculator_page
from llm_formulas.render.documents.guide import guide_html, guide_markdown
from llm_formulas.render.printers.codegen import MODULE_NAME, module_source
from llm_formulas.render.documents.notebooks import LESSONS, write_notebooks
from llm_formulas.render.documents.plots import FORMATS, PLOTS, render_plots, save_plots
from llm_formulas.render.documents.reference import build_reference, title_pictures
from llm_formulas.formulas.bibliography import WORKS
from llm_formulas.render.documents.safe_write import Ownership, OutputError, ensure_folder, write_atomically
from llm_formulas.render.documents.templating import render

PDFLATEX_TIMEOUT = 120
MAX_LATEX_PASSES = 6  # the contents and cross-references settle in 2 or 3; more means they never will


@dataclass
class Manifest:
    """The files a build wrote, relative to OUT; each written atomically, replacing only files it owns."""

    out: Path
    ownership: Ownership = field(default_factory=Ownership)
    files: dict[str, Path] = field(default_factory=dict)
    skipped: list[str] = field(default_factory=list)

    def write(self, relative: str, content: str | bytes) -> Path:
        return self.write_path(self.out / relative, content)

    def relative(self, path: Path) -> str:
        """``path`` as the manifest lists it: relative to OUT, with forward slashes."""
        return os.path.relpath(path, self.out).replace(os.sep, "/")

    def write_path(self, path: Path, content: str | bytes) -> Path:
        """Write ``content`` at ``path`` (inside OUT, or in the notebooks folder) unless it already holds it."""
        data = content.encode("utf-8") if isinstance(content, str) else content
        relative = self.relative(path)
        if self.ownership.check(relative, path, data):
            write_atomically(path, data)
        self.files[relative] = path
        return path

    def as_json(self) -> dict:
        rows = []
        for relative in sorted(self.files):
            data = self.files[relative].read_bytes()
            rows.append({"path": relative, "bytes": len(data), "sha256": hashlib.sha256(data).hexdigest()})
        return {"files": rows, "skipped": sorted(self.skipped)}


def _auxiliary(work: str, name: str = "reference") -> dict[str, bytes]:
    """The files one LaTeX pass writes for the next: contents, cross-references, PDF bookmarks."""
    return {f"{name}.{kind}": Path(work, f"{name}.{kind}").read_bytes() for kind in ("aux", "toc", "out")
            if Path(work, f"{name}.{kind}").exists()}


def compile_pdf(tex: str, assets: dict[str, bytes] | None = None, name: str = "reference") -> bytes:
    """Run pdflatex on ``name``.tex in a temporary directory (with ``assets``, e.g. the plots) until its auxiliary
    files are stable."""
    env = dict(os.environ, SOURCE_DATE_EPOCH="0", FORCE_SOURCE_DATE="1")
    with tempfile.TemporaryDirectory(prefix="llm-formulas-tex-") as work:
        Path(work, f"{name}.tex").write_text(tex, encoding="utf-8")
        for relative, data in (assets or {}).items():
            Path(work, relative).parent.mkdir(parents=True, exist_ok=True)
            Path(work, relative).write_bytes(data)
        previous: dict[str, bytes] | None = None
        for _ in range(MAX_LATEX_PASSES):
            run = subprocess.run(
                ["pdflatex", "-interaction=nonstopmode", "-halt-on-error", f"{name}.tex"],
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
            current = _auxiliary(work, name)
            if current == previous:
                return Path(work, f"{name}.pdf").read_bytes()
            previous = current
        raise RuntimeError(f"pdflatex: the contents did not settle in {MAX_LATEX_PASSES} passes")


MANIFEST = "manifest.json"
REFERENCE = ("reference.md", "reference.html", "reference.tex", "reference.pdf")
GUIDE = ("guide.md", "guide.html")
CHEATSHEET = ("cheatsheet.html", "cheatsheet.tex", "cheatsheet-plot.png", "cheatsheet.pdf")


def planned_files(out: Path, notebooks_dir: Path | None = None) -> list[Path]:
    """Every file a build may write besides the manifest, known before anything is rendered."""
    notebooks = notebooks_dir or out / "notebooks"
    return ([out / "plots" / f"{name}.{extension}" for name in PLOTS for extension in FORMATS]
            + [out / name for name in (*REFERENCE, *GUIDE, *CHEATSHEET, f"{MODULE_NAME}.py", "calculator.html")]
            + [notebooks / f"{name}.ipynb" for name in LESSONS]
            + [out / "slides" / f"{name}.html" for name in LESSONS]
            + [out / "titles" / f"{work.key}.pdf" for work in WORKS.values() if work.title_en])


STAGES = ("plots", "reference", "guide", "cheat sheet", "numeric code", "calculator", "notebooks", "slides", "PDF")


class Stages:
    """``with stages("plots"):`` announces a stage on ``stream`` and, when it ends, the seconds it took;
    with no stream (piped output, ``--json``) it says nothing."""

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


def write_cheatsheet(manifest: Manifest) -> tuple[str, dict[str, bytes]]:
    """cheatsheet.html and cheatsheet.tex (and its picture); returns the TeX and the assets pdflatex needs."""
    import base64

    from llm_formulas.render.documents.cheatsheet import cheatsheet

    sheet = cheatsheet()
    context = {"sections": sheet.sections, "symbols": sheet.symbols, "contexts": sheet.contexts, "plot": sheet.plot,
               "plot_png": sheet.plot_png, "plot_caption": sheet.plot_caption}
    manifest.write("cheatsheet.html", render("cheatsheet.html", **context))
    tex = render("cheatsheet.tex", **context)
    manifest.write("cheatsheet.tex", tex)
    picture = base64.b64decode(sheet.plot_png)
    manifest.write(sheet.plot, picture)
    return tex, {sheet.plot: picture}


def write_slides(manifest: Manifest, notebooks: list[Path]) -> None:
    """slides/<lesson>.html for every lesson written, from the notebook as written (with its outputs when executed)."""
    import nbformat

    from llm_formulas.render.documents.slides import can_render, deck, title_of

    reason = can_render()
    if reason is not None:
        manifest.skipped.append(f"slides: {reason}")
        return
    for path in notebooks:
        nb = nbformat.reads(path.read_text(encoding="utf-8"), as_version=4)
        manifest.write(f"slides/{path.stem}.html", deck(nb, title_of(nb)))


def build(out: Path, notebooks_dir: Path | None = None, force: bool = False, *, execute: bool = True,
          stages: Stages | None = None) -> Manifest:
    """Render everything into ``out``; OutputError when the folder can't take it. ``stages`` announces each step.

    The previous manifest says which files this build may replace. It is moved aside
    first and the new one written last, so an interrupted build leaves no manifest
    (never one that lists files of two builds)."""
    for folder in (notebooks_dir, out):  # both checked before anything is written
        if folder is not None:
            ensure_folder(folder)
    previous = out / MANIFEST
    ownership = Ownership.previous(previous, force)
    manifest = Manifest(out, ownership)
    if notebooks_dir is not None:  # a folder the user named for the notebooks: its .ipynb files are ours
        ownership.owned |= {manifest.relative(path) for path in notebooks_dir.glob("*.ipynb")}
    for path in planned_files(out, notebooks_dir):  # refuse at once what no build could write, not after rendering
        ownership.precheck(manifest.relative(path), path)
    if os.path.lexists(previous):
        if previous.name not in ownership.owned and not force:
            raise OutputError(f"{previous} is not a manifest this tool wrote; move it away or pass --force")
        try:
            os.unlink(previous)
        except OSError as error:
            raise OutputError(f"cannot replace {previous}: {error.strerror}") from None
    stage = stages or Stages(None)
    with stage("plots"):
        plots = render_plots(manifest.skipped)
        save_plots(out / "plots", plots, manifest.write_path)
    with stage("reference"):
        reference = build_reference(plots)
        manifest.write("reference.md", render("reference.md", ref=reference))
        manifest.write("reference.html", render("reference.html", ref=reference))
        tex = render("reference.tex", ref=reference)
        manifest.write("reference.tex", tex)
    figures = {f"plots/{plot.name}.pdf": plot.files["pdf"] for plot in plots}
    for relative, data in title_pictures().items():  # the seeds' titles in Chinese, for pdflatex
        manifest.write(relative, data)
        figures[relative] = data
    with ThreadPoolExecutor(max_workers=1) as background:  # pdflatex runs while Python renders the rest
        pdf = background.submit(compile_pdf, tex, figures) if shutil.which("pdflatex") else None
        with stage("guide"):
            manifest.write("guide.md", guide_markdown())
            manifest.write("guide.html", guide_html())
        with stage("cheat sheet"):
            sheet_tex, sheet_assets = write_cheatsheet(manifest)
            sheet_pdf = background.submit(compile_pdf, sheet_tex, sheet_assets, "cheatsheet") if pdf is not None else None
        with stage("numeric code"):
            manifest.write(f"{MODULE_NAME}.py", module_source())
        with stage("calculator"):
            page, left_out = calculator_page()
            manifest.write("calculator.html", page)
            manifest.skipped += [f"calculator: {reason}" for reason in left_out]
        with stage("notebooks"):
            written = write_notebooks(notebooks_dir or out / "notebooks", manifest.write_path, run=execute,
                                      skipped=manifest.skipped)
        with stage("slides"):
            write_slides(manifest, written)
        with stage("PDF"):
            if pdf is not None:
                manifest.write("reference.pdf", pdf.result())
                manifest.write("cheatsheet.pdf", sheet_pdf.result())
            else:
                manifest.skipped += ["reference.pdf: pdflatex is not on PATH", "cheatsheet.pdf: pdflatex is not on PATH"]
    # the manifest lists every other file; it is written last and not listed in itself
    write_atomically(previous, (json.dumps(manifest.as_json(), indent=1, sort_keys=True) + "\n").encode("utf-8"))
    return manifest
