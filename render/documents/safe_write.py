"""Writing build output without damaging anything: atomic, no symlinks followed, nobody else's files.

- Every file is written to a temporary name in its target folder and renamed into
  place (``os.replace``), so a full disk or an interrupt never leaves a truncated file.
- A rename replaces a symlink found at the target; it never writes through it.
- A folder on the way must be a real folder: a file or a symlink there is an error.
- ``Ownership`` says which existing files a build may replace: those the previous
  build's manifest lists (or any, with ``--force``); other files are refused.

Every problem with the output folder is an OutputError with one readable line
(the command line turns it into exit code 2).
"""

from __future__ import annotations

import json
import os
import stat
import tempfile
from dataclasses import dataclass, field
from pathlib import Path


class OutputError(Exception):
    """The output folder cannot take the build: read-only, full, or in the way; the message says which file."""


def named(path: Path | str) -> str:
    """A path for a message: its last 80 characters at most (the file's name is at the end), control characters
    escaped, as every error line quotes what was typed."""
    from llm_formulas.render.cli.numbers import QUOTE_LENGTH, printable

    text = str(path)
    return printable(text if len(text) <= QUOTE_LENGTH else "…" + text[-(QUOTE_LENGTH - 1):], QUOTE_LENGTH)


def _problem(path: Path, error: OSError) -> OutputError:
    return OutputError(f"cannot write {named(path)}: {error.strerror or error}")


def ensure_folder(folder: Path) -> None:
    """Create ``folder`` and its parents; a non-folder (or a symlink) on the way is an OutputError."""
    for part in reversed([folder, *folder.parents]):
        try:
            status = os.lstat(part)
        except FileNotFoundError:
            try:
                os.mkdir(part)
            except OSError as error:
                raise _problem(part, error) from None
            continue
        except OSError as error:
            raise _problem(part, error) from None
        if stat.S_ISLNK(status.st_mode) and part == folder:
            raise OutputError(f"{named(part)} is a symlink; the build writes only into real folders")
        if not stat.S_ISLNK(status.st_mode) and not stat.S_ISDIR(status.st_mode):
            raise OutputError(f"{named(part)} is a file where a folder must be")


def _file_mode() -> int:
    """What ``open()`` would give a new file: 0o666 less the process's umask (0o644 under the usual 022)."""
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask


def write_atomically(path: Path, data: bytes) -> Path:
    """Write ``data`` to a temporary file beside ``path`` and rename it into place, readable as any file the user
    writes (a temporary file starts private, 0o600: a web server could not serve the site)."""
    ensure_folder(path.parent)
    if path.is_dir() and not path.is_symlink():
        raise OutputError(f"{named(path)} is a folder where a file must be")
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".partial")
    try:
        with os.fdopen(handle, "wb") as stream:
            stream.write(data)
            os.fchmod(stream.fileno(), _file_mode())
        os.replace(temporary, path)
    except OSError as error:
        _discard(temporary)
        raise _problem(path, error) from None
    except BaseException:  # an interrupt: leave no partial file behind
        _discard(temporary)
        raise
    return path


def _discard(temporary: str) -> None:
    try:
        os.unlink(temporary)
    except OSError:
        pass


@dataclass
class Ownership:
    """Which existing files a build may replace: the previous manifest's, or any with ``force``."""

    owned: set[str] = field(default_factory=set)
    force: bool = False

    @staticmethod
    def previous(manifest: Path, force: bool) -> "Ownership":
        """Read the previous build's manifest (a regular file, not a symlink); none means nothing is owned."""
        try:
            status = os.lstat(manifest)
        except OSError:
            return Ownership(force=force)
        if not stat.S_ISREG(status.st_mode) or status.st_size > 10_000_000:
            return Ownership(force=force)
        try:
            document = json.loads(manifest.read_text(encoding="utf-8"))
            owned = {row["path"] for row in document["files"]} | {manifest.name}
        except (OSError, ValueError, KeyError, TypeError):
            return Ownership(force=force)
        return Ownership(owned, force)

    def precheck(self, relative: str, path: Path) -> None:
        """Before anything is rendered: OutputError for what no content could make writable, a folder in
        a file's place, or a symlink or special file the previous build did not write (a regular file is
        judged by ``check``, when its content is known: the same bytes may stay)."""
        try:
            status = os.lstat(path)
        except OSError:
            return
        if stat.S_ISDIR(status.st_mode):
            raise OutputError(f"{named(path)} is a folder where a file must be")
        if not stat.S_ISREG(status.st_mode) and not (self.force or relative in self.owned):
            raise OutputError(f"{named(path)} exists and the previous build did not write it; move it away or pass --force")

    def check(self, relative: str, path: Path, data: bytes) -> bool:
        """True when ``path`` must be written; False when it already holds ``data``; OutputError when it isn't ours."""
        if not os.path.lexists(path):
            return True
        if not path.is_symlink() and path.is_file() and path.stat().st_size == len(data) and path.read_bytes() == data:
            return False
        if self.force or relative in self.owned:
            return True
        raise OutputError(f"{named(path)} exists and the previous build did not write it; move it away or pass --force")
