"""``llm-formulas build [--out DIR] [--notebooks-dir DIR] [--no-pdf]``: render every artifact.

Writes into OUT (default ``site/``, not setuptools' ``build/``): reference.md, reference.html, the reference as a
site of pages under reference/ (index.html by topic, a page per topic, a search), reference.tex and reference.pdf (when pdflatex is on PATH, unless ``--no-pdf``), the user guide (guide.md,
guide.html), the generated NumPy module, calculator.html, the plots, the teaching notebooks (under
OUT/notebooks unless ``--notebooks-dir`` names another directory: the
repository's committed copies are refreshed with ``--notebooks-dir notebooks``)
and manifest.json listing every file written with its sha256. Everything is
a pure function of the catalogue: building twice writes identical bytes. ``Stages`` reports each
step (plots, reference, cheatsheet, guide, calculator, notebooks, slides, numeric, pdf): live on a terminal, one
line per stage (files, seconds) in a log. ``build(..., only=("reference", "slides"))`` builds a part. The numeric
module (the committed one while nothing it is printed from has changed, ``numeric.module_record``; else printed,
the longest stage) and the sizing page (beside the reference) are computed in child processes from the start
(``beside.Beside``) and written when the others are; the lessons are the committed executed copies where they match
(``notebooks.write_notebooks``), and a deck is made only from a notebook with its outputs.

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

from llm_formulas.derivations.reports.catalogue import Report
from llm_formulas.derivations.reports.check_record import catalogue_outcomes
from llm_formulas.render.documents.beside import Beside
from llm_formulas.render.documents.calculator import calculator_page
from llm_formulas.render.documents.guide import guide_html, guide_markdown
from llm_formulas.render.numeric.module_record import module_source_kept
from llm_formulas.render.printers.codegen import MODULE_NAME
from llm_formulas.render.documents.notebooks import LESSONS, executed, refuse_unrunnable, write_notebooks
from llm_formulas.render.documents.plots import FORMATS, PLOTS, render_plots, save_plots
from llm_formulas.formulas.vocabulary.bibliography import WORKS
from llm_formulas.render.documents.handbook import handbook_tex
from llm_formulas.render.documents.reference import build_reference, title_pictures
from llm_formulas.render.documents.reference_site import FOLDER as SITE
from llm_formulas.render.documents.reference_site import site, site_files
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
    pdf_failed: str = ""  # the PDF pdf_failure is about (the first that failed)

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


REFERENCE = ("reference.md", "reference.html", "reference.tex", "handbook.tex")
GUIDE = ("guide.md", "guide.html")
CHEATSHEET = ("cheatsheet.html", "cheatsheet.tex", "cheatsheet-plot.png", "handout-a4.tex", "handout-letter.tex")

# numeric and calculator are computed in child processes from the start (render/documents/beside.py)
STAGES = ("plots", "reference", "cheatsheet", "guide", "calculator", "notebooks", "slides", "numeric", "pdf")


class StageError(ValueError):
    """``--only`` named a stage the build does not have; the message lists the stages."""


def chosen_stages(names: str | None) -> tuple[str, ...]:
    """The stages ``--only a,b`` names, in the build's order (every stage when None); StageError for an unknown one."""
    if names is None:
        return STAGES
    asked = [name.strip().lower() for name in names.split(",") if name.strip()]
    unknown = [name for name in asked if name not in STAGES]
    if unknown or not asked:
        what = f"unknown stage {unknown[0]!r}" if unknown else "no stage named"
        raise StageError(f"{what}; the stages are {', '.join(STAGES)}")
    return tuple(stage for stage in STAGES if stage in asked)


def stage_files(out: Path, notebooks_dir: Path | None = None, stages: tuple[str, ...] = STAGES) -> dict[str, list[Path]]:
    """The files each stage may write besides the manifest, known before anything is rendered. The pdf stage compiles
    the TeX of the reference and the cheat sheet when they are built too (``compiled``)."""
    notebooks = notebooks_dir or out / "notebooks"
    return {
        "plots": [out / "plots" / f"{name}.{extension}" for name in PLOTS for extension in FORMATS],
        "reference": [out / name for name in REFERENCE] + [out / SITE / name for name in site_files()]
                     + [out / "titles" / f"{work.key}.pdf" for work in WORKS.values() if work.title_en],
        "guide": [out / name for name in GUIDE],
        "cheatsheet": [out / name for name in CHEATSHEET],
        "numeric": [out / f"{MODULE_NAME}.py"],
        "calculator": [out / "calculator.html"],
        "notebooks": [notebooks / f"{name}.ipynb" for name in LESSONS],
        "slides": [out / "slides" / f"{name}.html" for name in LESSONS],
        "pdf": [out / name for name in compiled(stages).values()],
    }


PDF_SOURCES = {"handbook": "reference", "reference": "reference", "cheatsheet": "cheatsheet",  # a TeX → the stage writing it
               "handout-a4": "cheatsheet", "handout-letter": "cheatsheet"}  # the workshop's two pages (handout.py)


def compiled(stages: tuple[str, ...]) -> dict[str, str]:
    """The PDFs the pdf stage makes in a build of ``stages``, by the TeX each is compiled from: the handbook and the
    reference (its second volume, the derivations) from the reference stage, the cheat sheet from its own."""
    return {source: f"{source}.pdf" for source, stage in PDF_SOURCES.items() if "pdf" in stages and stage in stages}


def planned_files(out: Path, notebooks_dir: Path | None = None, stages: tuple[str, ...] = STAGES) -> list[Path]:
    """Every file a build of ``stages`` may write besides the manifest, known before anything is rendered."""
    files = stage_files(out, notebooks_dir, stages)
    return [path for stage in stages for path in files[stage]]


class Stages:
    """``with stages("plots", manifest):`` reports a stage. On a terminal (``live``) it is announced on ``stream`` as
    it starts and its seconds are added when it ends; otherwise (a pipe, a log) one line is written when it ends:
    ``plots: 12 files, 2.1 s``. With no stream (``--json``) it says nothing."""

    def __init__(self, stream: TextIO | None, live: bool = False, count: int = len(STAGES)) -> None:
        self.stream, self.live, self.count = stream, live, count
        self.done = 0

    @contextmanager
    def __call__(self, name: str, manifest: "Manifest | None" = None) -> Iterator[None]:
        started = time.perf_counter()
        before = len(manifest.files) if manifest is not None else 0
        if self.stream is not None and self.live:
            self.stream.write(f"[{self.done + 1}/{self.count}] {name}…")
            self.stream.flush()
        yield
        self.done += 1
        if self.stream is None:
            return
        seconds = time.perf_counter() - started
        if self.live:
            self.stream.write(f" {seconds:.1f} s\n")
        else:
            files = len(manifest.files) - before if manifest is not None else 0
            self.stream.write(f"{name}: {files} file{'' if files == 1 else 's'}, {seconds:.1f} s\n")
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


def cheatsheet_files() -> dict[str, str | bytes]:
    """cheatsheet.html, cheatsheet.tex and its picture, and the two-page handout's TeX per paper size, by name."""
    import base64

    from llm_formulas.render.documents.cheatsheet import cheatsheet
    from llm_formulas.render.documents.handout import PAPERS, handout

    sheet = cheatsheet()
    context = {"sections": sheet.sections, "symbols": sheet.symbols, "contexts": sheet.contexts, "plot": sheet.plot,
               "plot_png": sheet.plot_png, "plot_caption": sheet.plot_caption}
    sections = handout()
    return {"cheatsheet.html": render("cheatsheet.html", **context), "cheatsheet.tex": render("cheatsheet.tex", **context),
            sheet.plot: base64.b64decode(sheet.plot_png)} | {
        f"handout-{key}.tex": render("handout.tex", sections=sections, paper=paper) for key, paper in PAPERS.items()}


def write_slides(manifest: Manifest, notebooks: list[Path]) -> None:
    """slides/<lesson>.html for every lesson, from its executed notebook as written (a notebook without outputs
    gets no deck; the reason is noted in ``skipped``)."""
    import nbformat

    from llm_formulas.render.documents.slides import can_render, deck, title_of

    reason = can_render()
    if reason is not None:
        manifest.skipped.append(f"slides: {reason}")
        return
    missing = [path for path in notebooks if not path.is_file()]
    if missing:
        raise OutputError(f"the slides are made from the notebooks, and {named(missing[0])} is not there: "
                          f"build them too (--only notebooks,slides)")
    for path in notebooks:
        nb = nbformat.reads(path.read_text(encoding="utf-8"), as_version=4)
        if not executed(nb):  # a deck without its equations and pictures is no deck: never written
            manifest.skipped.append(f"slides/{path.stem}.html: {named(path)} has no outputs (built with --no-execute)")
            continue
        manifest.write(f"slides/{path.stem}.html", deck(nb, title_of(nb)))


PARTIAL = re.compile(r"\.(?P<name>.+)\.[A-Za-z0-9_]+\.partial")  # tempfile.mkstemp(prefix=".NAME.", suffix=".partial")


def _by_folder(paths: list[Path]) -> dict[Path, set[str]]:
    folders: dict[Path, set[str]] = {}
    for path in paths:
        folders.setdefault(path.parent, set()).add(path.name)
    return folders


def build(out: Path, notebooks_dir: Path | None = None, force: bool = False, *, execute: bool = True,
          stages: Stages | None = None, pdf: bool = True, only: tuple[str, ...] = STAGES) -> Manifest:
    """Render the stages ``only`` names (every stage by default) into ``out``; OutputError when the folder can't take
    it. A stage another one needs is computed, not written (the PDF needs the reference's TeX); the slides are made
    from the notebooks in the notebooks folder. ``stages`` reports each step; ``pdf = False`` skips the PDFs. A TeX
    installation that cannot compile them leaves everything else written and listed: ``Manifest.pdf_failure`` says why.

    The previous manifest (complete, or the incomplete one of an interrupted build) says which files this build
    may replace. It is replaced at once by an incomplete one that names them and, before each new file is first
    written, that file too; the complete manifest is written last. An earlier build's files of the stages not
    built stay listed, with the bytes they hold."""
    for folder in (notebooks_dir, out):  # both checked before anything is written
        if folder is not None:
            ensure_folder(folder)
    previous = out / MANIFEST
    ownership = Ownership.previous(previous, force)
    manifest = Manifest(out, ownership)
    if notebooks_dir is not None:  # a folder the user named for the notebooks: its .ipynb files are ours
        ownership.owned |= {manifest.relative(path) for path in notebooks_dir.glob("*.ipynb")}
    planned = planned_files(out, notebooks_dir, only)
    for path in planned:  # refuse at once what no build could write, not after rendering
        ownership.precheck(manifest.relative(path), path)
    if os.path.lexists(previous) and previous.name not in ownership.owned and not force:
        raise OutputError(f"{named(previous)} is not a manifest this tool wrote; move it away or pass --force")
    if "notebooks" in only and execute:  # a lesson that must run and cannot: refused before anything is written
        refuse_unrunnable(notebooks_dir or out / "notebooks")
    clear_partials(planned + [previous])
    earlier = ownership.owned - {MANIFEST}  # what earlier builds wrote stays the tool's until this one ends
    manifest.claimed = set(earlier)
    manifest.write_claims()  # the incomplete manifest replaces the previous one
    report = stages or Stages(None, count=len(only))
    # on the second core, each in a fresh process: the numeric module (the committed one while nothing it is printed
    # from has changed), the catalogue's check for the reference (the committed one likewise) and, when this one
    # renders the reference meanwhile, the sizing page
    children = {"numeric": module_source_kept} | (
        {"reference": catalogue_outcomes, "calculator": calculator_page} if "reference" in only else {})
    beside = {name: Beside(function) for name, function in children.items() if name in only}
    try:
        _render(manifest, only, report, notebooks_dir or out / "notebooks", execute, pdf, beside)
    finally:
        for child in beside.values():
            child.stop()
    _settle(manifest, earlier, planned)
    # the manifest lists every other file; it is written last and not listed in itself
    write_atomically(previous, (json.dumps(manifest.as_json(), indent=1, sort_keys=True) + "\n").encode("utf-8"))
    return manifest


def _render(manifest: Manifest, only: tuple[str, ...], report: Stages, lessons: Path, execute: bool, pdf: bool,
            beside: dict[str, Beside]) -> None:
    """Every stage of ``only``, in order; the PDFs compiled in a thread while Python renders the rest."""
    out = manifest.out
    pdfs = compiled(only)
    compiling = pdf and shutil.which("pdflatex") is not None

    def stage(name: str):
        return report(name, manifest)

    plots = []
    if "plots" in only:
        with stage("plots"):
            plots = render_plots(manifest.skipped)
            save_plots(out / "plots", plots, manifest.write_path)
    elif "reference" in only:  # the reference shows them even when they are not written
        plots = render_plots([])
    sources: dict[str, tuple[str, dict[str, bytes]]] = {}  # the TeX of each PDF to make, with the files it includes
    if "reference" in only:
        with stage("reference"):
            reference = build_reference(plots, Report.from_outcomes(beside["reference"].result()))
            tex = render("reference.tex", ref=reference)
            manifest.write("reference.md", render("reference.md", ref=reference))
            manifest.write("reference.html", render("reference.html", ref=reference))
            manifest.write("reference.tex", tex)
            for relative, content in site(reference).items():
                manifest.write(f"{SITE}/{relative}", content)
            handbook = handbook_tex(reference)
            manifest.write("handbook.tex", handbook)
            titles = title_pictures()  # the seeds' titles in Chinese, for pdflatex
            for relative, data in titles.items():
                manifest.write(relative, data)
            sources["handbook"] = (handbook, titles)
            sources["reference"] = (tex, {f"plots/{plot.name}.pdf": plot.files["pdf"] for plot in plots} | titles)
    if "cheatsheet" in only:
        with stage("cheatsheet"):
            sheet = cheatsheet_files()
            for relative, content in sheet.items():
                manifest.write(relative, content)
            sources["cheatsheet"] = (str(sheet["cheatsheet.tex"]),
                                     {name: data for name, data in sheet.items() if isinstance(data, bytes)})
            for key in ("handout-a4", "handout-letter"):
                sources[key] = (str(sheet[f"{key}.tex"]), {})
    with ThreadPoolExecutor(max_workers=1) as background:  # pdflatex runs while Python renders the rest
        jobs = {pdfs[source]: background.submit(compile_pdf, tex, assets, source)
                for source, (tex, assets) in sources.items() if source in pdfs and compiling}
        _render_the_rest(manifest, only, stage, lessons, execute, beside)
        if "pdf" in only:
            with stage("pdf"):
                for name, job in jobs.items():
                    try:
                        manifest.write(name, job.result())
                    except PdfError as error:
                        if manifest.pdf_failure is None:
                            manifest.pdf_failure, manifest.pdf_failed = error, name
                        manifest.skipped.append(f"{name}: {error}")
                if not compiling:
                    why = "--no-pdf" if not pdf else "pdflatex is not on PATH"
                    manifest.skipped += [f"{name}: {why}" for name in pdfs.values()]


def _render_the_rest(manifest: Manifest, only: tuple[str, ...], stage, lessons: Path, execute: bool,
                     beside: dict[str, Beside]) -> None:
    """The stages that need no PDF: the guide, the calculator, the notebooks and their slides, the numeric module
    (the calculator's page and the numeric module computed ``beside``)."""
    if "guide" in only:
        with stage("guide"):
            manifest.write("guide.md", guide_markdown())
            manifest.write("guide.html", guide_html())
    if "calculator" in only:
        with stage("calculator"):
            page, left_out = beside["calculator"].result() if "calculator" in beside else calculator_page()
            manifest.write("calculator.html", page)
            manifest.skipped += [f"calculator: {reason}" for reason in left_out]
    if "notebooks" in only:
        with stage("notebooks"):
            write_notebooks(lessons, manifest.write_path, run=execute, reuse=True, skipped=manifest.skipped)
    if "slides" in only:
        with stage("slides"):
            write_slides(manifest, [lessons / f"{name}.ipynb" for name in LESSONS])
    if "numeric" in only:
        with stage("numeric"):
            manifest.write(f"{MODULE_NAME}.py", beside["numeric"].result())


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
