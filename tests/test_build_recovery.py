"""A build knows its own files after any interruption, clears what a killed build left, and survives a broken TeX
(issue 27, items 10 and 14), as real processes in real folders with the real pdflatex.

A broken TeX is made as a partly installed one is: pdflatex on PATH, the Latin Modern fonts out of its reach
(``TFMFONTS`` names only TeX Live's own font folder; Debian's lmodern package installs into /usr/share/texmf).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from build_session import built

COMMAND = [sys.executable, "-m", "llm_formulas"]
REPOSITORY = Path(__file__).resolve().parent.parent
TEX_LIVE_FONTS = Path("/usr/share/texlive/texmf-dist/fonts/tfm")
needs_tex = pytest.mark.skipif((shutil.which("pdflatex") is None or not TEX_LIVE_FONTS.is_dir()) and not os.environ.get("CI"),
                               reason="needs pdflatex and TeX Live's font tree (CI installs texlive)")
BROKEN_TEX = {"TFMFONTS": f".:{TEX_LIVE_FONTS}//"}  # pdflatex finds Computer Modern, not Latin Modern


def _row(out: Path, path: Path) -> dict:
    data = path.read_bytes()
    return {"path": path.relative_to(out).as_posix(), "bytes": len(data), "sha256": hashlib.sha256(data).hexdigest()}


def _one_line(result: subprocess.CompletedProcess, code: int) -> str:
    err = result.stderr.decode("utf-8", "replace")
    assert result.returncode == code, err
    assert err.count("\n") == 1 and err.startswith("llm-formulas: ") and "Traceback" not in err, err
    return err


@needs_tex
def test_the_pdfs_failure_names_what_to_install():
    # pdflatex's own words were "internal error (please report): RuntimeError: pdflatex failed: ...
    # Font ec-lmri10 at 600 not found", exit 3
    from llm_formulas.render.documents.build import PdfError, compile_pdf

    document = "\\documentclass{article}\\usepackage[T1]{fontenc}\\usepackage{lmodern}\\begin{document}x\\end{document}\n"
    previous = os.environ.get("TFMFONTS")
    os.environ["TFMFONTS"] = BROKEN_TEX["TFMFONTS"]
    try:
        with pytest.raises(PdfError) as failed:
            compile_pdf(document)
    finally:
        os.environ.pop("TFMFONTS") if previous is None else os.environ.update(TFMFONTS=previous)
    assert str(failed.value) == ("pdflatex is installed but lacks the font ec-lmr10: install the Latin Modern fonts "
                                 "(Debian/Ubuntu: apt-get install lmodern; TeX Live: tlmgr install lm)")


def test_tex_problems_in_words():
    from llm_formulas.render.documents.build import tex_problem

    assert "apt-get install lmodern" in tex_problem("! LaTeX Error: File `lmodern.sty' not found.")
    assert "lacks the file geometry.sty" in tex_problem("! LaTeX Error: File `geometry.sty' not found.")
    assert "tlmgr install geometry" in tex_problem("! LaTeX Error: File `geometry.sty' not found.")
    assert tex_problem("! Undefined control sequence.") == "pdflatex failed: ! Undefined control sequence."


def _executed_build(out: Path) -> dict:
    """``out`` as a complete executed build leaves it: the session's build, with the notebooks a build that runs
    them writes (the repository's, made by ``build --notebooks-dir notebooks``) listed in its manifest."""
    shutil.copytree(built().out, out)
    for notebook in (REPOSITORY / "notebooks").glob("*.ipynb"):
        shutil.copyfile(notebook, out / "notebooks" / notebook.name)
    document = json.loads((out / "manifest.json").read_text())
    document["files"] = [_row(out, out / row["path"]) for row in document["files"]]
    (out / "manifest.json").write_text(json.dumps(document, indent=1, sort_keys=True) + "\n")
    return document


@needs_tex
def test_a_build_after_a_killed_one_knows_its_files_and_keeps_all_but_a_pdf_tex_cannot_make(tmp_path):
    out = tmp_path / "out"
    before = _executed_build(out)
    (out / ".reference.html.k3j4h5g6.partial").write_bytes(b"<html>half a page")  # what a SIGKILL mid-write leaves
    (out / "plots" / ".roofline.png.a1b2c3d4.partial").write_bytes(b"\x89PNG half")
    (out / "plots" / "notes.partial").write_text("mine")  # not one of the tool's: it stays
    # a build killed (SIGKILL: nothing of it runs any more) once it has taken the manifest over
    killed = subprocess.Popen([*COMMAND, "build", "--out", str(out)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    original = (out / "manifest.json").read_bytes()
    deadline = time.monotonic() + 600  # a hang guard
    while time.monotonic() < deadline and (out / "manifest.json").exists() and (out / "manifest.json").read_bytes() == original:
        time.sleep(0.05)
    killed.send_signal(signal.SIGKILL)
    killed.wait(timeout=60)
    # then a build with other settings (notebooks not run; the cheap stages whose files it checks: the notebooks,
    # the cheat sheet and its PDF), on a TeX installation that lacks a font
    result = subprocess.run([*COMMAND, "build", "--out", str(out), "--no-execute", "--only", "notebooks,cheatsheet,pdf"],
                            capture_output=True, timeout=900, env=dict(os.environ, **BROKEN_TEX))
    err = _one_line(result, 2)  # was: "... exists and the previous build did not write it" (its own notebooks)
    assert "lacks the font ec-lmr10: install the Latin Modern fonts (Debian/Ubuntu: apt-get install lmodern" in err
    assert "or skip the PDF with --no-pdf" in err and "files are written" in err
    document = json.loads((out / "manifest.json").read_text())
    on_disk = {p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file()} - {"manifest.json", "plots/notes.partial"}
    assert document["complete"] and {row["path"] for row in document["files"]} == on_disk
    assert all(_row(out, out / row["path"]) == row for row in document["files"])
    assert "cheatsheet.pdf" not in on_disk and "cheatsheet.pdf" in {row["path"] for row in before["files"]}  # no stale PDF
    assert any(line.startswith("cheatsheet.pdf: pdflatex is installed but lacks") for line in document["skipped"])
    for row in document["files"]:  # the notebooks are this build's: written without outputs, as the session's
        if row["path"].startswith("notebooks/"):
            assert (out / row["path"]).read_bytes() == (built().out / row["path"]).read_bytes(), row["path"]
    assert sorted(p.name for p in out.rglob("*partial")) == ["notes.partial"]
    # the line's other way out, --no-pdf, is taken in tests/test_hostile_cli.py's rebuild of a session's folder
