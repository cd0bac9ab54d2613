"""``llm-formulas build [--out DIR] [--notebooks-dir DIR] [--no-pdf]``: render every artifact.

Writes into OUT (default ``site/``, not setuptools' ``build/``): reference.md, reference.html,
reference.tex and reference.pdf (when pdflatex is on PATH, unless ``--no-pdf``), the user guide (guide.md,
guide.html), the generated NumPy module, calculator.html, the plots, the teaching notebooks (under
OUT/notebooks unless ``--notebooks-dir`` names another directory: the
repository's committed copies are refreshed with ``--notebooks-dir notebooks``)
and manifest.json listing every file written with its sha256. Everything is
a pure function of the catalogue: building twice writes identical bytes. ``Stages`` announces each
step (plots, reference, numeric code, calculator, notebooks, PDF) while it runs.

The manifest says which files are the tool's own. While a build runs it is an incomplete one
(``"complete": false``, paths without bytes) that claims each file before it is first written, so a build
interrupted at any point, by Ctrl-C, SIGTERM or SIGKILL, leaves a manifest by which the next build, with
any settings, knows its files (and never one that vouches for bytes it did not write); the complete
manifest replaces it last. A build clears the temporary ``.NAME.*.partial`` files a killed build leaves
beside the files it writes. A TeX installation that cannot compile the handout (pdflatex there, a font or a
package missing) leaves the rest of the build written and listed, the PDF skipped, and ``PdfError`` says
what to install, or to build with ``--no-pdf``.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
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
from llm_formulas.formulas.bibliography import WORKS
from llm_formulas.render.documents.reference import build_reference, title_pictures
from llm_formulas.render.documents.safe_write import Ownership, OutputError, ensure_folder, named, write_atomically
from llm_formulas.render.documents.templating import render

PDFLATEX_TIMEOUT = 120
MAX_LATEX_PASSES = 6  # the contents and cross-references settle in 2 or 3; more means they never will


class PdfError(RuntimeError):
    """pdflatex is there but cannot compile the handout; the message names what it missed and how to get it."""


MANIFEST = "manifest.json"


@dataclass
class Manifest:
    """The files a build wrote, relative to OUT; each written atomically, replacing only files it owns. Each file is
    claimed in OUT/manifest.json (an incomplete manifest) before it is first written."""

    out: Path
    ownership: Ownership = field(default_factory=Ownership)
    files: dict[str, Path] = field(default_factory=dict)
    skipped: list[str] = field(default_factory=list)
    claimed: set[str] = field(default_factory=set)  # the files the incomplete manifest names as the tool's
    pdf_failure: PdfError | None = None

    def write(self, relative: str, content: str | bytes) -> Path:
        return self.write_path(self.out / relative, content)

    def relative(self, path: Path) -> str:
        """``path`` as the manifest lists it: relative to OUT, with forward slashes."""
        return os.path.relpath(path, self.out).replace(os.sep, "/")

    def claim(self, relative: str) -> None:
        """Name ``relative`` in the incomplete manifest before anything is written there (a no-op once named)."""
        if relative not in self.claimed:
            self.claimed.add(relative)
            self.write_claims()

    def write_claims(self) -> None:
        """OUT/manifest.json as an incomplete manifest: the paths claimed, no bytes vouched for."""
        rows = [{"path": path} for path in sorted(self.claimed)]
        write_atomically(self.out / MANIFEST, (json.dumps({"complete": False, "files": rows}, indent=1) + "\n").encode("utf-8"))

    def write_path(self, path: Path, content: str | bytes) -> Path:
        """Write ``content`` at ``path`` (inside OUT, or in the notebooks folder) unless it already holds it."""
        data = content.encode("utf-8") if isinstance(content, str) else content
        relative = self.relative(path)
        if self.ownership.check(relative, path, data):
            self.claim(relative)
            write_atomically(path, data)
        else:
            self.claim(relative)  # it holds this build's bytes already: the tool's, whoever wrote them
        self.files[relative] = path
        return path

    def as_json(self) -> dict:
        rows = []
        for relative in sorted(self.files):
            data = self.files[relative].read_bytes()
            rows.append({"path": relative, "bytes": len(data), "sha256": hashlib.sha256(data).hexdigest()})
        return {"complete": True, "files": rows, "skipped": sorted(self.skipped)}


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
                raise PdfError(tex_problem(errors[0] if errors else run.stdout[-300:]))
            current = _auxiliary(work, name)
            if current == previous:
                return Path(work, f"{name}.pdf").read_bytes()
            previous = current
        raise PdfError(f"pdflatex: the contents did not settle in {MAX_LATEX_PASSES} passes")


LATIN_MODERN = "the Latin Modern fonts (Debian/Ubuntu: apt-get install lmodern; TeX Live: tlmgr install lm)"


def tex_problem(error: str) -> str:
    """pdflatex's first error line in words: what is missing and which package brings it (Debian's and TeX Live's
    names). Latin Modern (``\\usepackage{lmodern}``: its .sty, its ec-lm*/lm* fonts) is the handout's one font
    outside texlive-latex-base, the package that holds everything else it loads."""
    font = re.search(r"Font \S*?=?([A-Za-z0-9_-]+) at [0-9.]+(?:pt)? not", error)
    missing = re.search(r"File `([^']+)' not found", error)
    what = font[1] if font else missing[1] if missing else None
    if what is None:
        return f"pdflatex failed: {error.strip()[:160]}"
    kind = "font" if font else "file"
    if re.match(r"([a-z0-9]+-)?lm", what) or what == "lmodern.sty":
        needs = LATIN_MODERN
    else:
        needs = (f"the TeX package that holds {what} (Debian/Ubuntu: apt-get install texlive-latex-base "
                 f"texlive-fonts-recommended; TeX Live: tlmgr install {what.rsplit('.', 1)[0]})")
    return f"pdflatex is installed but lacks the {kind} {what}: install {needs}"


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


def clear_partials(paths: list[Path]) -> None:
    """Remove the temporary files a killed build left beside ``paths`` (safe_write's ``.NAME.XXXXXXXX.partial``)."""
    for folder, names in _by_folder(paths).items():
        if not folder.is_dir() or folder.is_symlink():
            continue
        for entry in os.scandir(folder):
            found = PARTIAL.fullmatch(entry.name)
            if found and found["name"] in names and entry.is_file(follow_symlinks=False):
                try:
                    os.unlink(entry.path)
                except OSError:
                    pass  # gone already, or not ours to remove: the build goes on


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




PARTIAL = re.compile(r"\.(?P<name>.+)\.[A-Za-z0-9_]+\.partial")  # tempfile.mkstemp(prefix=".NAME.", suffix=".partial")


def _by_folder(paths: list[Path]) -> dict[Path, set[str]]:
    folders: dict[Path, set[str]] = {}
    for path in paths:
        folders.setdefault(path.parent, set()).add(path.name)
    return folders


def build(out: Path, notebooks_dir: Path | None = None, force: bool = False, *, execute: bool = True,
          stages: Stages | None = None, pdf: bool = True) -> Manifest:
    """Render everything into ``out``; OutputError when the folder can't take it. ``stages`` announces each step;
    ``pdf = False`` skips the handout's PDF. A TeX installation that cannot compile it leaves everything else
    written and listed: ``Manifest.pdf_failure`` says why.

    The previous manifest (complete, or the incomplete one of an interrupted build) says which files this build
    may replace. It is replaced at once by an incomplete one that names them and, before each new file is first
    written, that file too; the complete manifest is written last."""
    for folder in (notebooks_dir, out):  # both checked before anything is written
        if folder is not None:
            ensure_folder(folder)
    previous = out / MANIFEST
    ownership = Ownership.previous(previous, force)
    manifest = Manifest(out, ownership)
    if notebooks_dir is not None:  # a folder the user named for the notebooks: its .ipynb files are ours
        ownership.owned |= {manifest.relative(path) for path in notebooks_dir.glob("*.ipynb")}
    planned = planned_files(out, notebooks_dir)
    for path in planned:  # refuse at once what no build could write, not after rendering
        ownership.precheck(manifest.relative(path), path)
    if os.path.lexists(previous) and previous.name not in ownership.owned and not force:
        raise OutputError(f"{named(previous)} is not a manifest this tool wrote; move it away or pass --force")
    clear_partials(planned + [previous])
    earlier = ownership.owned - {MANIFEST}  # what earlier builds wrote stays the tool's until this one ends
    manifest.claimed = set(earlier)
    manifest.write_claims()  # the incomplete manifest replaces the previous one
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
    compiling = pdf and shutil.which("pdflatex") is not None
    for relative, data in title_pictures().items():  # the seeds' titles in Chinese, for pdflatex
        manifest.write(relative, data)
        figures[relative] = data
    with ThreadPoolExecutor(max_workers=1) as background:  # pdflatex runs while Python renders the rest
        handout = background.submit(compile_pdf, tex, figures) if compiling else None
        with stage("guide"):
            manifest.write("guide.md", guide_markdown())
            manifest.write("guide.html", guide_html())
        with stage("cheat sheet"):
            sheet_tex, sheet_assets = write_cheatsheet(manifest)
            sheet_pdf = background.submit(compile_pdf, sheet_tex, sheet_assets, "cheatsheet") if compiling else None
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
            if handout is not None:
                for name, job in (("reference.pdf", handout), ("cheatsheet.pdf", sheet_pdf)):
                    try:
                        manifest.write(name, job.result())
                    except PdfError as error:
                        manifest.pdf_failure = error
                        manifest.skipped.append(f"{name}: {error}")
            else:
                why = "--no-pdf" if not pdf else "pdflatex is not on PATH"
                manifest.skipped += [f"reference.pdf: {why}", f"cheatsheet.pdf: {why}"]
    _settle(manifest, earlier, planned)
    # the manifest lists every other file; it is written last and not listed in itself
    write_atomically(previous, (json.dumps(manifest.as_json(), indent=1, sort_keys=True) + "\n").encode("utf-8"))
    return manifest


def _settle(manifest: Manifest, earlier: set[str], planned: list[Path]) -> None:
    """Before the complete manifest: a file of this plan an earlier build wrote and this one did not (the PDF of a
    build with pdflatex, now skipped) is removed, never left to disagree with the rest; an earlier build's file
    outside this plan (notebooks written elsewhere now) stays listed, as the tool's, with the bytes it holds."""
    planned_names = {manifest.relative(path): path for path in planned}
    inside = os.path.realpath(manifest.out) + os.sep
    for relative in sorted(earlier - set(manifest.files)):
        path = planned_names.get(relative, manifest.out / relative)
        if not os.path.isfile(path) or os.path.islink(path):
            continue
        if relative not in planned_names and not os.path.realpath(path).startswith(inside):
            continue  # a manifest names only the tool's files in OUT: anything else it says is not vouched for
        if relative in planned_names:
            try:
                os.unlink(path)
            except OSError as error:
                raise OutputError(f"cannot remove the earlier {named(path)}: {error.strerror}") from None
        else:
            manifest.files[relative] = path
