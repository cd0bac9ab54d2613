"""A passing ``check`` kept whole, with the content of everything it read, and answered again while that is unchanged.

Each proof is kept by its own content (``proof_cache``), but a warm run must still build every derivation and hash
every step to find those proofs. This keeps one level above them: a run of ``check`` (the whole catalogue, or a
slice named by ids and topics) that passed is recorded with the SHA-256 of every file it read: the source of every
``llm_formulas`` module and of every other module it imported from outside the interpreter's own libraries, each
data file it opened (a model's config, the presets), and the names in each folder it listed. A later run of the
same request whose files all hash the same, under the same Python, SymPy, mpmath, gmpy2 and NumPy, is answered with the
kept outcomes without building a derivation. Any changed byte (a formula edited, a config changed, a file added to a
listed folder) is a miss: the run proves again, every unchanged step answered by ``proof_cache`` and each step that
holds the changed formula proved afresh.

Only a process whose catalogue is still unloaded may replay (``catalogue_unloaded``): there the catalogue can hold
nothing but what its files say, while a process that loaded it may have changed an entry in memory. Only a passing
run is kept, so a kept report can never turn a failure into a pass. Records live beside the kept proofs, so
``check --clear-cache`` forgets them too.
"""

from __future__ import annotations

import hashlib
import importlib
import json
import os
import sys
import sysconfig
import tempfile
from contextlib import contextmanager
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Iterator

if TYPE_CHECKING:
    from llm_formulas.derivations.catalogue import Report

__all__ = ["Reads", "catalogue_unloaded", "kept_outcomes", "kept_report", "reading"]

# Third-party code a verdict can depend on, named by its installed version (its files are not hashed one by one).
_LIBRARIES = ("sympy", "mpmath", "gmpy2", "numpy")
# Modules whose loading means the catalogue, or a derivation built from it, may already be held in memory.
_HOLDERS = ("llm_formulas.formulas.", "llm_formulas.derivations.")
_UNHOLDING = {"llm_formulas.formulas.errors", __name__}


def catalogue_unloaded() -> bool:
    """Whether no formula module and no derivation module (but this one and the error types) is loaded yet."""
    return not any(name.startswith(_HOLDERS) and name not in _UNHOLDING for name in list(sys.modules))


def _installed() -> list[Path]:
    """The interpreter's own libraries and the installed third-party ones: versioned, not hashed."""
    paths = sysconfig.get_paths()
    return [Path(paths[key]).resolve() for key in ("stdlib", "platstdlib", "purelib", "platlib")]


@dataclass
class Reads:
    """The files opened and the folders listed while a run was watched."""

    opened: set[str] = field(default_factory=set)
    listed: set[str] = field(default_factory=set)
    loaded_before: set[str] = field(default_factory=lambda: set(sys.modules))


_WATCHING: list[Reads] = []
# Folders listed by the import system (a module is read by name, and its file is hashed) or by this module itself.
_NOT_READING = ("<frozen importlib", os.path.dirname(importlib.__file__), __file__)


def _audit(event: str, args: tuple) -> None:
    if not _WATCHING:
        return
    if event == "open" and isinstance(args[0], (str, bytes, os.PathLike)):
        _WATCHING[-1].opened.add(os.fsdecode(args[0]))
    elif event in ("os.listdir", "os.scandir") and isinstance(args[0], (str, bytes, os.PathLike)):
        if not sys._getframe(1).f_code.co_filename.startswith(_NOT_READING):
            _WATCHING[-1].listed.add(os.fsdecode(args[0]))


sys.addaudithook(_audit)  # inert but for a watched run


@contextmanager
def reading() -> Iterator[Reads]:
    """Within the block, every file opened and every folder listed is noted."""
    reads = Reads()
    _WATCHING.append(reads)
    try:
        yield reads
    finally:
        _WATCHING.remove(reads)


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _content(path: str, listed: bool) -> str | None:
    """A file's hash, or a folder's listing's; None for what no longer exists."""
    try:
        if listed:
            return _digest("\x00".join(sorted(os.listdir(path))).encode())
        return _digest(Path(path).read_bytes())
    except OSError:
        return None


def _dependencies(reads: Reads, ignored: Path) -> dict[str, str | None]:
    """What a watched run depended on, ``"file:PATH"`` / ``"folder:PATH"`` to its content's hash: the source of every
    ``llm_formulas`` module and of each other module first loaded during the run outside the installed libraries,
    every other file opened there (compiled bytecode stands for its source, which is hashed instead), and every
    folder listed. ``ignored`` (the cache itself) is left out."""
    installed = _installed()

    def ours(path: str) -> bool:
        resolved = Path(path).resolve()
        return not any(resolved.is_relative_to(root) for root in [*installed, ignored])

    files = {
        module.__file__ for name, module in list(sys.modules.items())
        if getattr(module, "__file__", None) and (name.startswith("llm_formulas") or name not in reads.loaded_before)
        and ours(module.__file__)
    }
    files |= {path for path in reads.opened if not path.endswith(".pyc") and os.path.isfile(path) and ours(path)}
    folders = {path for path in reads.listed if os.path.isdir(path) and ours(path)}
    kept = {f"file:{path}": _content(path, False) for path in sorted(files)}
    kept.update({f"folder:{path}": _content(path, True) for path in sorted(folders)})
    return kept


def _unchanged(dependencies: dict[str, str | None]) -> bool:
    for key, content in dependencies.items():
        kind, _, path = key.partition(":")
        if _content(path, kind == "folder") != content:
            return False
    return True


def _record_path(directory: Path, request: tuple[str, ...]) -> Path:
    """One record per request, Python and library versions, and location of this package (two checkouts sharing
    one cache never answer for each other)."""
    versions = []
    for library in _LIBRARIES:
        try:
            versions.append(f"{library}={metadata.version(library)}")
        except metadata.PackageNotFoundError:
            versions.append(f"{library}=absent")
    here = str(Path(__file__).resolve().parent)
    key = _digest("\x00".join([sys.version, here, *versions, *request]).encode())[:24]
    return directory / "reports" / f"{key}.json"


def kept_outcomes(directory: Path, request: tuple[str, ...], run: Callable[[], tuple[list[dict], bool]],
                  reads: Reads) -> tuple[list[dict], bool]:
    """``run()``'s (outcomes as plain data, passed), or the kept ones of an earlier passing run of ``request`` whose
    every dependency is unchanged. ``reads`` must have watched since before the catalogue was loaded (a run that
    passes is kept with what ``reads`` saw)."""
    path = _record_path(directory, request)
    try:
        record = json.loads(path.read_text())
        if _unchanged(record["dependencies"]):
            return record["outcomes"], True
    except (OSError, ValueError, TypeError, KeyError, AttributeError):  # none kept, or damaged: run it
        pass
    outcomes, passed = run()
    if passed:
        _keep(path, {"dependencies": _dependencies(reads, directory.resolve()), "outcomes": outcomes})
    return outcomes, passed


def _keep(path: Path, record: dict) -> None:
    """Written atomically; a cache that cannot be written costs the next run its speed, nothing else."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile("w", dir=path.parent, delete=False, suffix=".tmp") as out:
            json.dump(record, out)
        os.replace(out.name, path)
    except OSError:
        pass


def kept_report(directory: Path, request: tuple[str, ...], run: Callable[[], Report], reads: Reads) -> Report:
    """``run()``'s report, or the kept one of ``request`` (``kept_outcomes``)."""
    from dataclasses import asdict

    from llm_formulas.derivations.catalogue import Report
    from llm_formulas.derivations.engine import Outcome

    def fresh() -> tuple[list[dict], bool]:
        report = run()
        return [asdict(outcome) for outcome in report.outcomes], report.ok

    outcomes, _ = kept_outcomes(directory, request, fresh, reads)
    return Report(tuple(Outcome(**outcome) for outcome in outcomes))
