"""One ``llm-formulas build`` per test run, shared by the rendering tests and by every xdist worker.

``built()`` runs the real command line (``build --out DIR --json``) once into the run's
scratch folder (tests/conftest.py) and returns the directory and the manifest it
printed; a worker that comes second waits on the lock and reads
the first one's record. ``calculator()`` is the sizing page alone: the run's build's when one was made, else
the page the build writes (``calculator_page``) written by itself, seconds instead of the whole build, for the
page's tests run on their own. The folder is removed when the run ends.
"""

from __future__ import annotations

import atexit
import contextlib
import io
import json
import os
import shutil
import tempfile
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from llm_formulas.render.cli.main import main


@dataclass(frozen=True)
class Build:
    out: Path
    printed: dict


def run_build(out: Path) -> dict:
    stdout = io.StringIO()
    with contextlib.redirect_stdout(stdout):
        code = main(["build", "--out", str(out), "--json", "--no-execute"])  # notebooks run in test_notebooks
    assert code == 0, stdout.getvalue()
    return json.loads(stdout.getvalue())


@cache
def built() -> Build:
    """The run's one build: the first process to get here builds under a lock, the others wait and read its manifest."""
    import fcntl

    root = _run_folder()
    with open(root / "build.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        record = root / "build.json"
        if not record.exists():
            record.write_text(json.dumps({"printed": run_build(root / "out")}))
        done = json.loads(record.read_text())
    return Build(root / "out", done["printed"])


@cache
def calculator() -> Path:
    """calculator.html as ``build`` writes it (render/documents/build.py writes ``calculator_page()``'s HTML there)."""
    import fcntl

    root = _run_folder()
    with open(root / "build.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if (root / "build.json").exists():
            return root / "out" / "calculator.html"
        page = root / "page" / "calculator.html"
        if not page.exists():
            from llm_formulas.render.documents.calculator import calculator_page

            page.parent.mkdir(exist_ok=True)
            page.write_text(calculator_page()[0], encoding="utf-8")
        return page


@cache
def reference_site() -> Path:
    """OUT/reference/, the reference as a site: the run's build's when one was made, else ``build --only reference``
    into a folder of its own (a minute instead of the whole build, for the site's tests run on their own)."""
    import fcntl

    root = _run_folder()
    with open(root / "build.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if (root / "build.json").exists():
            return root / "out" / "reference"
        out = root / "reference-only"
        if not (out / "reference" / "index.html").exists():
            stdout = io.StringIO()
            with contextlib.redirect_stdout(stdout):
                code = main(["build", "--out", str(out), "--only", "reference", "--json"])
            assert code == 0, stdout.getvalue()
        return out / "reference"


def _run_folder() -> Path:
    """The test run's scratch folder (tests/conftest.py makes it; a bare import makes one of its own)."""
    folder = os.environ.get("LLM_FORMULAS_TEST_RUN")
    if folder is None:
        folder = tempfile.mkdtemp(prefix="llm-formulas-build-")
        atexit.register(shutil.rmtree, folder, ignore_errors=True)
        os.environ["LLM_FORMULAS_TEST_RUN"] = folder
    return Path(folder)


def scratch(name: str) -> Path:
    """A folder of this process's own (xdist workers share the build, not their scratch), removed with the run's."""
    path = _run_folder() / f"scratch-{os.environ.get('PYTEST_XDIST_WORKER', 'main')}" / name
    path.mkdir(parents=True, exist_ok=True)
    return path
