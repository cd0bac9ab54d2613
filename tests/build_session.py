"""One ``llm-formulas build`` per test session, shared by the rendering tests.

``built()`` runs the real command line (``build --out DIR --json``) once into a
temporary directory, times it, and returns the directory, the manifest it
printed and the elapsed seconds; the directory is removed at exit.
"""

from __future__ import annotations

import atexit
import contextlib
import io
import json
import shutil
import tempfile
import time
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from render.cli.main import main


@dataclass(frozen=True)
class Build:
    out: Path
    printed: dict
    seconds: float


def run_build(out: Path) -> tuple[dict, float]:
    stdout = io.StringIO()
    started = time.perf_counter()
    with contextlib.redirect_stdout(stdout):
        code = main(["build", "--out", str(out), "--json", "--no-execute"])  # notebooks run in test_notebooks
    seconds = time.perf_counter() - started
    assert code == 0, stdout.getvalue()
    return json.loads(stdout.getvalue()), seconds


@cache
def built() -> Build:
    root = Path(tempfile.mkdtemp(prefix="llm-formulas-build-"))
    atexit.register(shutil.rmtree, root, ignore_errors=True)
    printed, seconds = run_build(root / "out")
    return Build(root / "out", printed, seconds)


def scratch(name: str) -> Path:
    """A directory beside the session build, removed with it."""
    path = built().out.parent / name
    path.mkdir(parents=True, exist_ok=True)
    return path
