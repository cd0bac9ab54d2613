"""Teaching notebooks (nbformat v4): one lesson per seed article and one per topic, executed.

Each lesson is a module of ``render.documents.lessons`` holding its cells (``CELLS``:
Markdown prose and short code cells that call ``render.documents.lesson``). This module
assembles them, runs them with nbclient (kernel ``python3``, the running checkout first on
its PYTHONPATH) and writes them with their outputs: text, LaTeX and PNG pictures. A build takes the
committed executed copy of a lesson (``EXECUTED``: notebooks/, in the wheel llm_formulas/notebooks/) when its cells
are the lesson's as it stands, and runs only the others; refreshing those copies runs every lesson.

Deterministic: cell ids come from the cell's position and text, timing metadata is
not recorded, the kernel's own metadata is replaced by a fixed one, and the pictures
carry fixed PNG metadata, so rebuilding writes the same bytes (a test compares the
committed copies with a fresh build). ``nbformat.validate`` runs before every write.
"""

from __future__ import annotations

import asyncio
import hashlib
import importlib
import os
import signal
import subprocess
import tempfile
from pathlib import Path
from typing import Callable

import nbformat
from nbformat.notebooknode import NotebookNode

from llm_formulas.render.documents.safe_write import OutputError

# In order: the articles as they were written (the sources are numbered 000, 001, 002, 004;
# no 003 was among them), then the topics from parameters to inference, then the lessons on
# mixture of experts, precision, long context and achievable FLOP/s (issue 26).
LESSONS = ("article_000", "article_001", "article_002", "article_004",
           "params", "flops", "memory", "comms", "cluster", "inference", "serving", "perf",
           "utilization", "conventions", "energy", "cost", "reliability", "pipeline", "optimizations", "own_formula",
           "moe", "precision", "long_context", "achievable")
KERNEL = "python3"
EXECUTION_TIMEOUT = 600
# The committed executed lessons: the checkout's notebooks/ folder, which the wheel installs as llm_formulas/notebooks/
EXECUTED = Path(__file__).resolve().parents[2] / "notebooks"
KERNELS = 2  # kernels at a time: each start-up is mostly imports, and the machines have two cores
METADATA = {
    "kernelspec": {"display_name": "Python 3", "language": "python", "name": KERNEL},
    "language_info": {"name": "python"},
}

SETUP = """\
from llm_formulas.render.documents.lesson import *

print("Ready: the catalogue, the derivation engine and the lesson helpers are loaded.")"""


def markdown(text: str) -> tuple[str, str]:
    return ("markdown", text)


def code(text: str) -> tuple[str, str]:
    return ("code", text)


def _cell(index: int, kind: str, text: str) -> NotebookNode:
    source = text.strip("\n")
    cell = nbformat.v4.new_markdown_cell(source) if kind == "markdown" else nbformat.v4.new_code_cell(source)
    digest = hashlib.sha256(f"{index}\0{kind}\0{source}".encode()).hexdigest()[:12]
    cell["id"] = f"c{index:03d}-{digest}"
    return cell


def lesson_notebook(name: str) -> NotebookNode:
    """The lesson's cells, the set-up cell after its opening question, not yet executed."""
    from llm_formulas.render.documents.slides import slide_types

    cells = list(importlib.import_module(f"llm_formulas.render.documents.lessons.{name}").CELLS)
    cells.insert(1, code(SETUP))
    nb = nbformat.v4.new_notebook(cells=[_cell(i, kind, text) for i, (kind, text) in enumerate(cells)])
    for cell, slide_type in zip(nb.cells, slide_types(cells)):  # nbconvert's and RISE's slide metadata
        cell.metadata["slideshow"] = {"slide_type": slide_type}
    nb.metadata = dict(METADATA)
    nbformat.validate(nb)
    return nb


def notebooks() -> dict[str, NotebookNode]:
    """Every lesson, unexecuted, by file name (``memory.ipynb``, ``article_001.ipynb``)."""
    return {f"{name}.ipynb": lesson_notebook(name) for name in LESSONS}


def can_execute() -> str | None:
    """None when nbclient and a python3 kernel are at hand, else why not."""
    try:
        import ipykernel  # noqa: F401
        import nbclient  # noqa: F401
    except ImportError as error:
        return f"{error.name} is not installed (pip install '.[notebooks]')"
    return None


async def _execute(nb: NotebookNode, directory: Path, slots: asyncio.Semaphore) -> NotebookNode:
    """Run every cell in a fresh kernel (this interpreter's, so it imports this llm_formulas; cwd ``directory``); normalise."""
    from nbclient import NotebookClient

    env = dict(os.environ)
    env["MPLBACKEND"] = "Agg"
    async with slots:
        client = NotebookClient(nb, kernel_name=KERNEL, timeout=EXECUTION_TIMEOUT, record_timing=False,
                                resources={"metadata": {"path": str(directory)}})
        await client.async_execute(env=env, stderr=subprocess.DEVNULL)  # the kernel's own log; cell errors still reach us
    return normalised(nb)


def execute_all(lessons: dict[str, NotebookNode], directory: Path, kernels: int = KERNELS) -> dict[str, NotebookNode]:
    """Every lesson executed, ``kernels`` at a time, in this thread (Ctrl-C stops the kernels and returns at once)."""

    async def run() -> list[NotebookNode]:
        slots = asyncio.Semaphore(kernels)
        loop, main = asyncio.get_running_loop(), asyncio.current_task()
        interrupted = []

        def stop() -> None:  # nbclient turns a cancelled cell into DeadKernelError: remember it was Ctrl-C
            interrupted.append(True)
            main.cancel()

        try:
            loop.add_signal_handler(signal.SIGINT, stop)
        except (NotImplementedError, RuntimeError, ValueError):  # not the main thread, or no signals here
            pass
        try:
            return await asyncio.gather(*(_execute(nb, directory, slots) for nb in lessons.values()))
        except BaseException:
            if interrupted:
                raise KeyboardInterrupt from None
            raise
        finally:
            loop.remove_signal_handler(signal.SIGINT)

    return dict(zip(lessons, asyncio.run(run())))


def normalised(nb: NotebookNode) -> NotebookNode:
    """Drop what changes from run to run or machine to machine: the kernel's metadata, execution timing,
    and where the kernel happened to flush a print (consecutive pieces of one stream become one output)."""
    nb.metadata = dict(METADATA)
    for cell in nb.cells:
        cell.metadata.pop("execution", None)
        if "outputs" in cell:
            cell.outputs = _joined_streams(cell.outputs)
        for output in cell.get("outputs", []):
            output.pop("transient", None)
    nbformat.validate(nb)
    return nb


def _joined_streams(outputs: list[NotebookNode]) -> list[NotebookNode]:
    """Each run of consecutive ``stream`` outputs of one name (stdout, stderr) as a single output, in order."""
    joined: list[NotebookNode] = []
    for output in outputs:
        previous = joined[-1] if joined else None
        if (output.get("output_type") == "stream" and previous is not None
                and previous.get("output_type") == "stream" and previous.get("name") == output.get("name")):
            previous["text"] += output["text"]
        else:
            joined.append(output)
    return joined


def notebook_text(nb: NotebookNode) -> str:
    return nbformat.writes(nb, version=4) + "\n"


def executed(nb: NotebookNode) -> bool:
    """Every code cell has run (a cell that printed nothing has run too: its execution count is set)."""
    return all(cell.get("execution_count") is not None for cell in nb.cells if cell.cell_type == "code")


def _same_cells(one: NotebookNode, two: NotebookNode) -> bool:
    """The same lesson: the same cells (kind, id, source, slide metadata) and notebook metadata, outputs aside."""
    def shape(nb: NotebookNode) -> list[tuple]:
        return [(cell.cell_type, cell.get("id"), cell.source, cell.metadata) for cell in nb.cells]

    return one.metadata == two.metadata and shape(one) == shape(two)


def committed_copy(name: str, fresh: NotebookNode) -> NotebookNode | None:
    """The committed executed copy of lesson ``name`` (``EXECUTED``) when it is the lesson ``fresh`` as it stands,
    run: its cells are the fresh cells and every code cell has its outputs; else None."""
    path = EXECUTED / name
    if not path.is_file():
        return None
    try:
        stored = nbformat.reads(path.read_text(encoding="utf-8"), as_version=4)
    except (OSError, ValueError):  # unreadable or not a notebook: run the lesson instead
        return None
    return stored if _same_cells(stored, fresh) and executed(stored) else None


class LessonsNotRun(OutputError):
    """Lessons whose committed executed copies are stale, and no kernel to run them; the message says what to install."""


def refuse_unrunnable(directory: Path) -> None:
    """LessonsNotRun when a build writing the lessons into ``directory`` has some to execute (changed since their
    executed copies were committed, or every one when it refreshes those copies) and no kernel to run them."""
    reason = can_execute()
    if reason is None:
        return
    lessons = notebooks()
    stale = [name for name, nb in lessons.items() if _refreshing(directory) or committed_copy(name, nb) is None]
    if stale:
        shown = ", ".join(name.removesuffix(".ipynb") for name in stale[:3]) + (", ..." if len(stale) > 3 else "")
        raise LessonsNotRun(f"{len(stale)} of {len(lessons)} lessons ({shown}) differ from their executed copies and "
                            f"cannot be run here: {reason}; or build with --no-execute")


def _refreshing(directory: Path) -> bool:
    return directory.resolve() == EXECUTED.resolve()


def write_notebooks(directory: Path, write: Callable[[Path, bytes], Path], *, run: bool = True, reuse: bool = False,
                    skipped: list[str] | None = None) -> list[Path]:
    """Every lesson, each file through ``write(path, data)``, with its outputs: with ``reuse``, the committed executed
    copy of each lesson that matches it (``committed_copy``; never when ``directory`` holds those copies), the others
    executed (two kernels at a time). A lesson that cannot be run (``run`` False, or no kernel) is written without
    outputs and the reason noted in ``skipped``."""
    lessons = notebooks()
    taken = {} if not reuse or _refreshing(directory) else {
        name: stored for name, nb in lessons.items() if (stored := committed_copy(name, nb)) is not None}
    rest = {name: nb for name, nb in lessons.items() if name not in taken}
    reason = can_execute() if run else "not executed (--no-execute)"
    if rest and reason is None:
        with tempfile.TemporaryDirectory(prefix="llm-formulas-lessons-") as work:
            rest = execute_all(rest, Path(work))
    elif rest and skipped is not None:
        skipped.append(f"{len(rest)} notebooks written without outputs: {reason}")
    done = taken | rest
    return [write(directory / name, notebook_text(done[name]).encode("utf-8")) for name in lessons]
