"""Issues 32 (item 1) and 36 (item 3): the build never writes a lesson's deck without its outputs, and does not run a
lesson again when its committed executed copy is the lesson as it stands; the numeric module is printed beside.

The committed copies (notebooks/, installed as llm_formulas/notebooks/) are taken when their cells are the fresh
lesson's; a lesson that changed is executed; one that changed where no kernel can run it is refused in one line
that says what to install, before anything is written. The generated module printed in a child process is the
same as printed in this one (tests/test_numeric.py), a failure there is raised here, and a killed build leaves no child running.
"""

from __future__ import annotations

import functools
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import nbformat
import pytest

from llm_formulas.render.cli.main import main
from llm_formulas.render.documents import notebooks as lessons_module
from llm_formulas.render.documents.beside import Beside, interrupts_held
from llm_formulas.render.documents.notebooks import LESSONS

COMMITTED = Path(__file__).resolve().parent.parent / "notebooks"
NO_KERNEL = "ipykernel is not installed (pip install '.[notebooks]')"


def _copies(folder: Path) -> Path:
    folder.mkdir()
    for name in LESSONS:
        shutil.copy(COMMITTED / f"{name}.ipynb", folder / f"{name}.ipynb")
    return folder


def _stale(folder: Path, name: str) -> None:
    """The committed copy of ``name`` as it was before its lesson's last edit: one prose cell differs."""
    path = folder / f"{name}.ipynb"
    nb = nbformat.read(path, as_version=4)
    nb.cells[0].source += "\n\nA sentence the lesson no longer has."
    nbformat.write(nb, path)


def test_the_copies_found_at_run_time_are_the_committed_ones():
    # in a checkout the folder itself; installed (CI's pip install), the wheel's copies of it, byte for byte
    for name in LESSONS:
        assert (lessons_module.EXECUTED / f"{name}.ipynb").read_bytes() == (COMMITTED / f"{name}.ipynb").read_bytes()


def test_a_build_without_a_kernel_writes_every_lesson_with_its_outputs(tmp_path, capsys, monkeypatch):
    # issue 32: the README's build (no ipykernel in the base install) wrote the notebooks without outputs
    monkeypatch.setattr(lessons_module, "can_execute", lambda: NO_KERNEL)
    out = tmp_path / "out"
    assert main(["build", "--out", str(out), "--only", "notebooks,slides", "--json"]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed["skipped"] == []
    for name in LESSONS:
        written = (out / "notebooks" / f"{name}.ipynb").read_bytes()
        assert written == (COMMITTED / f"{name}.ipynb").read_bytes(), name
        code = [cell for cell in nbformat.reads(written.decode(), as_version=4).cells if cell.cell_type == "code"]
        assert code and all(cell.outputs for cell in code[1:]), name  # every cell but the set-up shows something
        assert (out / "slides" / f"{name}.html").is_file()


def test_a_changed_lesson_without_a_kernel_is_refused_in_one_line_before_anything_is_written(tmp_path, capsys, monkeypatch):
    copies = _copies(tmp_path / "committed")
    _stale(copies, "memory")
    monkeypatch.setattr(lessons_module, "EXECUTED", copies)
    monkeypatch.setattr(lessons_module, "can_execute", lambda: NO_KERNEL)
    out = tmp_path / "out"
    assert main(["build", "--out", str(out), "--only", "notebooks,slides"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "memory" in err and "pip install '.[notebooks]'" in err and "--no-execute" in err
    assert "1 of 24 lessons" in err
    assert not (out / "notebooks").exists() and not (out / "slides").exists()


def test_only_the_changed_lesson_is_executed_and_every_one_when_the_copies_are_refreshed(tmp_path, monkeypatch):
    copies = _copies(tmp_path / "committed")
    _stale(copies, "cost")
    monkeypatch.setattr(lessons_module, "EXECUTED", copies)
    monkeypatch.setattr(lessons_module, "can_execute", lambda: None)
    ran: list[list[str]] = []

    def execute_all(lessons, directory, kernels=2):  # a kernel stand-in: every code cell "runs" and prints its name
        ran.append(sorted(lessons))
        for nb in lessons.values():
            for number, cell in enumerate(c for c in nb.cells if c.cell_type == "code"):
                cell.execution_count = number + 1
                cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text="ran\n")]
        return lessons

    monkeypatch.setattr(lessons_module, "execute_all", execute_all)
    written = lessons_module.write_notebooks(tmp_path / "site", lambda path, data: path.parent.mkdir(exist_ok=True)
                                             or path.write_bytes(data) and path, reuse=True)
    assert ran == [["cost.ipynb"]] and len(written) == len(LESSONS)
    assert (tmp_path / "site" / "memory.ipynb").read_bytes() == (copies / "memory.ipynb").read_bytes()
    lessons_module.write_notebooks(copies, lambda path, data: path.write_bytes(data) and path, reuse=True)
    assert ran[1] == sorted(f"{name}.ipynb" for name in LESSONS)  # refreshing the copies runs every lesson


def test_no_deck_is_written_from_a_lesson_without_outputs(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(lessons_module, "EXECUTED", tmp_path / "none")  # no executed copies at hand
    out = tmp_path / "out"
    assert main(["build", "--out", str(out), "--only", "notebooks,slides", "--no-execute", "--json"]) == 0
    skipped = json.loads(capsys.readouterr().out)["skipped"]
    assert not (out / "slides").exists() or not list((out / "slides").iterdir())
    assert sum(reason.startswith("slides/") and "no outputs" in reason for reason in skipped) == len(LESSONS)


def test_a_value_computed_beside_comes_back_and_so_does_its_failure():
    # the session build's numeric module, printed beside, is compared with the committed one in tests/test_numeric.py
    assert Beside(functools.partial(int, "12")).result() == 12
    with pytest.raises(ValueError, match="invalid literal"):
        Beside(functools.partial(int, "twelve")).result()


def _running(pid: int) -> bool:
    """Alive and not a zombie waiting for a reaper."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return False
    return state not in ("Z", "X")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the kernel's parent-death signal is Linux's")
def test_a_killed_build_leaves_no_child_running(tmp_path):
    script = ("import functools, time\n"
              "from llm_formulas.render.documents.beside import Beside\n"
              "child = Beside(functools.partial(time.sleep, 120))\n"
              "print(child._process.pid, flush=True)\n"
              "time.sleep(120)\n")
    parent = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    try:
        child = int(parent.stdout.readline())
        os.kill(parent.pid, signal.SIGKILL)
        parent.wait(timeout=60)
        for _ in range(300):  # the kernel kills the child with its parent (PR_SET_PDEATHSIG): gone within moments
            if not _running(child):
                break
            time.sleep(0.1)
        else:
            os.kill(child, signal.SIGKILL)
            pytest.fail("the child outlived its killed parent")
    finally:
        if parent.poll() is None:
            parent.kill()


def test_ctrl_c_at_the_terminal_is_the_builds_alone_from_the_childs_first_moment():
    # Ctrl-C reaches every process of the terminal's group: a child still starting up would die with a traceback
    child = Beside(functools.partial(sum, [1, 2]))
    os.kill(child._process.pid, signal.SIGINT)  # while the child's interpreter is still starting
    assert child.result() == 3


def test_a_ctrl_c_during_the_childs_start_reaches_the_build_once_it_has_started():
    # CI once sent Ctrl-C while the child was starting: ignored then, the interrupt was lost and the build exited 0
    reached_the_end_of_the_start = False
    outside = signal.signal(signal.SIGINT, signal.default_int_handler)  # as in a build (a test runner may ignore it)
    try:
        with pytest.raises(KeyboardInterrupt):
            with interrupts_held():
                os.kill(os.getpid(), signal.SIGINT)
                time.sleep(0.2)  # a signal not held would have interrupted this sleep
                reached_the_end_of_the_start = True
    finally:
        signal.signal(signal.SIGINT, outside)
    assert reached_the_end_of_the_start
