"""The generated NumPy module's source without printing it again when nothing it is printed from has changed.

Printing ``llm_formulas_numeric.py`` (render/printers/codegen.py) reads the catalogue and takes the build's longest
stage of SymPy. The module is committed, and beside it ``llm_formulas_numeric.reads.json``: the hash of every file
printing it read (each module by name, each data file by its package: derivations/vocabulary/read_record.py) and of the module
itself. ``module_source_kept()`` gives the committed module when every one of those files is unchanged, else one
kept in the user's cache under the same rule, else prints it (and keeps it there). It must run in a process that
has not loaded the catalogue (the build runs it in a fresh child), or it prints.

``python -m llm_formulas.render.numeric.module_record`` rewrites the committed module and its record (the
command the staleness tests name).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from llm_formulas.derivations.vocabulary.read_record import (cache_directory, catalogue_unloaded, dependencies, kept, reading,
                                                  record_path, unchanged)

GENERATED_PATH = Path(__file__).with_name("llm_formulas_numeric.py")
RECORD_PATH = Path(__file__).with_name("llm_formulas_numeric.reads.json")


def _printed() -> str:
    from llm_formulas.render.printers.codegen import module_source

    return module_source()


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def committed_source() -> str | None:
    """The committed module, when its record names it (by hash) and every file it was printed from is unchanged."""
    try:
        record = json.loads(RECORD_PATH.read_text(encoding="utf-8"))
        source = GENERATED_PATH.read_text(encoding="utf-8")
        if record["module"] == _digest(source) and unchanged(record["dependencies"]):
            return source
    except (OSError, ValueError, TypeError, KeyError, AttributeError):
        pass
    return None


def module_source_kept() -> str:
    """``module_source()``: the committed module or a kept one while nothing it was printed from changed, else printed
    (and kept in the user's cache for the next build)."""
    if not catalogue_unloaded():  # the catalogue in memory may differ from its files: print what it holds
        return _printed()
    with reading() as reads:
        committed = committed_source()
        if committed is not None:
            return committed
        source, _ = kept(record_path(cache_directory(), "numeric", ()), _printed, reads)
    return str(source)


def regenerate() -> bool:
    """Print the module and write it and its record beside this file (in a process that has not loaded the
    catalogue); True when the module changed."""
    if not catalogue_unloaded():
        raise RuntimeError("the numeric module's record must be written by a process that has not loaded the catalogue")
    with reading() as reads:
        source = _printed()
    changed = GENERATED_PATH.read_text(encoding="utf-8") != source
    if changed:
        GENERATED_PATH.write_text(source, encoding="utf-8")
    record = {"dependencies": dependencies(reads), "module": _digest(source)}
    RECORD_PATH.write_text(json.dumps(record, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    return changed


if __name__ == "__main__":
    print(f"{GENERATED_PATH}: {'rewritten' if regenerate() else 'up to date'} (with {RECORD_PATH.name})")
