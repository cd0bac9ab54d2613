"""A progress bar on stderr that appears only on a terminal, once a job has run longer than a second."""

from __future__ import annotations

import sys
import time
from typing import TextIO


class Progress:
    """``update(done, total)`` redraws ``label [#####     ] done/total`` in place once ``delay`` seconds have passed."""

    def __init__(self, label: str, stream: TextIO | None = None, delay: float = 1.0, width: int = 30) -> None:
        self.label, self.delay, self.width = label, delay, width
        self.stream = sys.stderr if stream is None else stream
        self.start = time.perf_counter()
        self.shown = False
        self.on_terminal = bool(getattr(self.stream, "isatty", lambda: False)())

    def update(self, done: int, total: int) -> None:
        if not self.on_terminal:
            return
        if not self.shown and time.perf_counter() - self.start < self.delay:
            return
        self.shown = True
        filled = self.width * done // max(total, 1)
        self.stream.write(f"\r{self.label} [{'#' * filled}{' ' * (self.width - filled)}] {done}/{total}")
        self.stream.flush()

    def close(self) -> None:
        if self.shown:
            self.stream.write("\n")
            self.stream.flush()
