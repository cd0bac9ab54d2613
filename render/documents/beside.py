"""One computation in a child process, beside the build: the generated NumPy module's source (the build's longest
stage, pure SymPy, about as long as all the others together) is printed on a second core while the first renders the
rest, and the build writes it when it gets there.

The child is spawned (a fresh interpreter, no copy of the parent's threads), ignores Ctrl-C (the build that started
it handles that and stops it), and on Linux is killed with its parent, so a killed build leaves nothing running.
Its result is the same bytes as the function run in the parent: the function is pure.
"""

from __future__ import annotations

import multiprocessing
import signal
import sys
from contextlib import contextmanager
from typing import Callable, Generic, Iterator, TypeVar

T = TypeVar("T")


class Beside(Generic[T]):
    """``Beside(function)`` starts ``function()`` in a child process; ``result()`` waits for its value (or raises its
    exception); ``stop()`` ends it if it still runs."""

    def __init__(self, function: Callable[[], T]) -> None:
        context = multiprocessing.get_context("spawn")
        self._receive, send = context.Pipe(duplex=False)
        self._process = context.Process(target=_run, args=(function, send), daemon=True, name="llm-formulas-beside")
        with _interrupts_ignored():  # inherited through exec: the child ignores Ctrl-C from its first instruction
            self._process.start()
        send.close()  # the child holds the only sending end: its death is an end of file here

    def result(self) -> T:
        try:
            succeeded, value = self._receive.recv()
        except EOFError:
            self._process.join()
            raise RuntimeError(f"the build's child process ended without a result (exit code {self._process.exitcode})") from None
        self._process.join()
        if not succeeded:
            raise value
        return value

    def stop(self) -> None:
        if self._process.is_alive():
            self._process.kill()
        self._process.join()
        self._receive.close()


@contextmanager
def _interrupts_ignored() -> Iterator[None]:
    """SIGINT ignored while the child starts (Ctrl-C reaches the whole process group: it is the parent's to handle)."""
    try:
        previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    except ValueError:  # not the main thread: signals are not ours to set
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


def _run(function: Callable[[], object], send) -> None:
    _die_with_parent()
    try:
        outcome = (True, function())
    except Exception as error:  # noqa: BLE001 - handed to the parent, which raises it
        outcome = (False, error)
    try:
        send.send(outcome)
    except (BrokenPipeError, OSError):
        pass  # the build stopped waiting (it was interrupted): nothing to hand over


def _die_with_parent() -> None:
    """On Linux, have the kernel kill this process when its parent dies (a SIGKILLed build leaves no child)."""
    if not sys.platform.startswith("linux"):
        return
    import ctypes

    PR_SET_PDEATHSIG = 1
    try:
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    except (OSError, AttributeError):
        pass  # no prctl here: the child then ends when it finds the pipe closed
    if multiprocessing.parent_process() is not None and not multiprocessing.parent_process().is_alive():
        sys.exit(0)  # the parent died before the request took effect
