"""One computation in a child process, beside the build: the generated NumPy module's source (the build's longest
stage, pure SymPy, about as long as all the others together) is printed on a second core while the first renders the
rest, and the build writes it when it gets there.

The child is spawned (a fresh interpreter, no copy of the parent's threads), never sees Ctrl-C (the build that started
it handles that and stops it), and on Linux is killed with its parent, so a killed build leaves nothing running.
Its result is the same bytes as the function run in the parent: the function is pure.
"""

from __future__ import annotations

import multiprocessing
import signal
import sys
import threading
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
        with interrupts_held():  # inherited through exec: Ctrl-C never reaches the child, from its first instruction
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
def interrupts_held() -> Iterator[None]:
    """Ctrl-C held while the child starts, then delivered to the build.

    SIGINT is blocked in this thread, a mask the child inherits through fork and exec, so Ctrl-C (sent to the whole
    process group) never reaches the child, from its first instruction. A Ctrl-C that arrives meanwhile (another
    thread may take it) is only noted, and raised again once the child has started. Ignoring it instead lost it: one
    CI run's build, hit in that window, finished and exited 0.
    """
    if threading.current_thread() is not threading.main_thread():  # signals are the main thread's to handle
        yield
        return
    arrived: list[int] = []
    previous_handler = signal.signal(signal.SIGINT, lambda number, frame: arrived.append(number))
    previous_mask = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous_mask)
        signal.signal(signal.SIGINT, previous_handler)
    if arrived:
        signal.raise_signal(signal.SIGINT)


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
