"""A value kept with the content of everything computing it read, and given again while that is unchanged.

A computation of this package (a whole ``check``, the generated NumPy module's source) is a function of the files it
reads: the source of every module it imports and each data file it opens (a model's config, the presets), and the
names in each folder it lists. Watched (``reading``), its result is kept with the SHA-256 of each of them and the
versions of the libraries it loaded (SymPy, mpmath, gmpy2, NumPy); a later computation whose every such file hashes
the same is answered with the kept value. Any changed byte (a formula edited, a config changed, a file added to a
listed folder, another SymPy) is a miss: it computes again.

Files are named portably: a module by its dotted name, resolved where this process would import it; a file inside
one of this package's folders by that package and its path there; anything else by its absolute path. A record
written by one checkout (or committed beside a generated file) thus holds for another exactly when their files are
the same.

Only a process whose catalogue is still unloaded may record or replay (``catalogue_unloaded``): there the catalogue
can hold nothing but what its files say, while a process that loaded it may have changed an entry in memory.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import json
import os
import sys
import sysconfig
import tempfile
from contextlib import contextmanager
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Callable, Iterator

__all__ = ["Reads", "cache_directory", "catalogue_unloaded", "dependencies", "kept", "reading", "unchanged"]

# Third-party code a result can depend on, named by its installed version (its files are not hashed one by one).
_LIBRARIES = ("sympy", "mpmath", "gmpy2", "numpy")
_PACKAGE = "llm_formulas"
# Modules whose loading means the catalogue, or a derivation built from it, may already be held in memory: any
# module of these packages but a package's own __init__, the error types (which the command line loads to start),
# this one and the catalogue check's record (which loads the catalogue only to prove it), named by their last part so
# that they keep their meaning wherever the modules move.
_HOLDERS = (f"{_PACKAGE}.formulas.", f"{_PACKAGE}.derivations.")
_UNHOLDING = (".errors", f".{__name__.rpartition('.')[2]}", ".check_record")


def cache_directory() -> Path:
    """Where kept proofs and records live: ``$XDG_CACHE_HOME/llm-formulas/proofs`` (``~/.cache/...`` by default)."""
    root = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(root) / "llm-formulas" / "proofs"


def catalogue_unloaded() -> bool:
    """Whether no formula module and no derivation module (but this one and the error types) is loaded yet."""
    return not any(name.startswith(_HOLDERS) and not name.endswith(_UNHOLDING) and not hasattr(module, "__path__")
                   for name, module in list(sys.modules.items()))


@dataclass
class Reads:
    """The files opened and the folders listed while a computation was watched, and the modules loaded before."""

    opened: set[str] = field(default_factory=set)
    listed: set[str] = field(default_factory=set)
    loaded_before: set[str] = field(default_factory=lambda: set(sys.modules))


_WATCHING: list[Reads] = []
# Folders listed by the import system (a module is read by name, and its file is hashed) or by this module itself.
_NOT_READING = ("<frozen importlib", os.path.dirname(importlib.__file__), __file__)


def _audit(event: str, args: tuple) -> None:
    if not _WATCHING or not args or not isinstance(args[0], (str, bytes, os.PathLike)):
        return
    if event == "open":
        _WATCHING[-1].opened.add(os.path.abspath(os.fsdecode(args[0])))
    elif event in ("os.listdir", "os.scandir") and not sys._getframe(1).f_code.co_filename.startswith(_NOT_READING):
        _WATCHING[-1].listed.add(os.path.abspath(os.fsdecode(args[0])))


sys.addaudithook(_audit)  # inert but for a watched computation


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


def _installed() -> list[Path]:
    """The interpreter's own libraries and the installed third-party ones: versioned, not hashed."""
    paths = sysconfig.get_paths()
    return [Path(paths[key]).resolve() for key in ("stdlib", "platstdlib", "purelib", "platlib")]


def _package_folders() -> dict[Path, str]:
    """Each loaded package of ours by its folder."""
    return {Path(folder).resolve(): name for name, module in list(sys.modules.items())
            if (name == _PACKAGE or name.startswith(f"{_PACKAGE}.")) and getattr(module, "__path__", None)
            for folder in module.__path__}


def _portable(path: str, packages: dict[Path, str], kind: str) -> str:
    """``data:PKG/REL`` inside one of our package folders (the deepest), else ``file:ABS`` (``folder:`` alike)."""
    resolved = Path(path).resolve()
    for folder in sorted(packages, key=lambda f: len(f.parts), reverse=True):
        if resolved.is_relative_to(folder):
            return f"{kind}-in:{packages[folder]}/{resolved.relative_to(folder).as_posix()}"
    return f"{kind}:{resolved}"


def _located(key: str) -> Path | None:
    """The file or folder a key names in this process (None when it cannot be found)."""
    kind, _, name = key.partition(":")
    try:
        if kind == "module":
            module = sys.modules.get(name)
            spec = None if module is not None else importlib.util.find_spec(name)
            origin = getattr(module, "__file__", None) if module is not None else spec and spec.origin
            return Path(origin) if origin else None
        if kind.endswith("-in"):
            package, _, relative = name.partition("/")
            spec = importlib.util.find_spec(package)
            folders = list(spec.submodule_search_locations or []) if spec is not None else []
            return Path(folders[0]) / relative if folders else None
        return Path(name)
    except (ImportError, AttributeError, ValueError):
        return None


def _content(key: str) -> str | None:
    """What a key names, hashed now: a file's bytes, a folder's sorted names, a library's version; None when absent."""
    kind, _, name = key.partition(":")
    if kind == "version":
        try:
            return metadata.version(name)
        except metadata.PackageNotFoundError:
            return None
    path = _located(key)
    try:
        if path is None:
            return None
        if kind.startswith("folder"):
            return _digest("\x00".join(sorted(os.listdir(path))).encode())
        return _digest(path.read_bytes())
    except OSError:
        return None


def dependencies(reads: Reads, ignored: Path | None = None) -> dict[str, str | None]:
    """What a watched computation depended on, each named portably with its content's hash: every module of ours and
    each other one first loaded while watched outside the installed libraries (by its source; compiled bytecode is
    not read for it), every other file opened and folder listed outside those libraries, and the versions of the
    libraries loaded. The cache's folder and ``ignored`` (a record's own) are left out."""
    skipped = [cache_directory().resolve(), *([ignored.resolve()] if ignored is not None else [])]
    installed = [*_installed(), *skipped]
    packages = _package_folders()

    def outside(path: str) -> bool:
        resolved = Path(path).resolve()
        return not any(resolved.is_relative_to(root) for root in installed)

    def inside_ours(path: str) -> bool:
        resolved = Path(path).resolve()
        return any(resolved.is_relative_to(folder) for folder in packages) and not any(
            resolved.is_relative_to(folder) for folder in skipped)

    keys = set()
    for name, module in list(sys.modules.items()):
        source = getattr(module, "__file__", None)
        if not source:
            continue
        if name == __name__:  # the watcher itself decides nothing a watched computation gives
            continue
        if name == _PACKAGE or name.startswith(f"{_PACKAGE}."):
            keys.add(f"module:{name}")
        elif name not in reads.loaded_before and outside(source):
            keys.add(f"file:{Path(source).resolve()}")
    module_files = {Path(str(m.__file__)).resolve() for m in list(sys.modules.values()) if getattr(m, "__file__", None)}
    for path in reads.opened:
        if path.endswith(".pyc") or Path(path).resolve() in module_files or not os.path.isfile(path):
            continue
        if inside_ours(path) or outside(path):
            keys.add(_portable(path, packages, "data") if inside_ours(path) else f"file:{Path(path).resolve()}")
    for path in reads.listed:
        if os.path.isdir(path) and (inside_ours(path) or outside(path)):
            keys.add(_portable(path, packages, "folder"))
    keys |= {f"version:{library}" for library in _LIBRARIES if library in sys.modules}
    return {key: _content(key) for key in sorted(keys)}


def unchanged(recorded: dict[str, str | None]) -> bool:
    """Whether every dependency a record names still has the content it had."""
    return all(_content(key) == content for key, content in recorded.items())


def kept(path: Path, compute: Callable[[], object], reads: Reads, keep: Callable[[object], bool] = bool) -> tuple[object, bool]:
    """(``compute()``, False), or (the value kept at ``path``, True) when a record is there whose every dependency is
    unchanged. ``reads`` must have watched since before the catalogue was loaded; a value ``keep`` accepts is kept
    there with what ``reads`` saw (a failed check is never kept: it is computed again on every run)."""
    try:
        record = json.loads(path.read_text())
        if unchanged(record["dependencies"]):
            return record["value"], True
    except (OSError, ValueError, TypeError, KeyError, AttributeError):  # none kept, or damaged: compute it
        pass
    value = compute()
    if keep(value):
        write_record(path, {"dependencies": dependencies(reads, path.parent), "value": value})
    return value, False


def write_record(path: Path, record: dict) -> None:
    """Written atomically; a record that cannot be written costs the next run its speed, nothing else."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile("w", dir=path.parent, delete=False, suffix=".tmp") as out:
            json.dump(record, out, indent=None, sort_keys=True)
        os.replace(out.name, path)
    except OSError:
        pass


def record_path(directory: Path, kind: str, request: tuple[str, ...]) -> Path:
    """Where the record of one request lives (one per request and Python)."""
    return directory / kind / f"{_digest(chr(0).join([sys.version, *request]).encode())[:24]}.json"
