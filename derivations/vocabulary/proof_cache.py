"""Proved verdicts kept by the content of what was proved, within a run and between runs.

A step's proof depends only on what it claims (the claim, its expressions with the unit-carrying constants put in,
its condition) and on the code that proves it. The key is a SHA-256 of both: the printed structure of every
expression (``srepr``: symbols with their assumptions, exact numbers) and a version made of SymPy's version and the
source of the proving modules. A step whose key was proved before is not proved again (a part shared by many
formulas is proved once); a changed formula changes the key of every step that holds it, so it and whatever
concludes or reads it are proved afresh.

Only proofs are kept: a failed or unproved step is tried again on every run, so a cached verdict can never turn a
failure into a pass, and nothing but a hash-equal step ever reuses one.

On disk: ``$XDG_CACHE_HOME/llm-formulas/proofs/<version>.json`` (``~/.cache`` without ``XDG_CACHE_HOME``),
cleared by ``llm-formulas check --clear-cache`` and skipped by ``--no-cache``.
"""

from __future__ import annotations

import hashlib
import importlib
import inspect
import json
import os
import shutil
import tempfile
from contextlib import contextmanager
from functools import cache
from pathlib import Path
from typing import Callable, Iterator

import sympy as sp

from llm_formulas.derivations.vocabulary.proof import Verdict, valued
from llm_formulas.derivations.vocabulary.read_record import cache_directory

__all__ = ["ProofCache", "cache_directory", "cached_verdict", "clear", "proofs_cached"]

# The modules whose code decides a verdict: a change to any of them invalidates every kept proof.
_PROVING = ("llm_formulas.derivations.vocabulary.proof", "llm_formulas.derivations.vocabulary.engine",
            "llm_formulas.derivations.vocabulary.steps", "llm_formulas.derivations.vocabulary.proof_cache",
            "llm_formulas.formulas.vocabulary.dimensions", "llm_formulas.formulas.vocabulary.symbols")


@cache
def code_version() -> str:
    """SymPy's version and the proving modules' source, hashed."""
    digest = hashlib.sha256(sp.__version__.encode())
    for name in _PROVING:
        digest.update(inspect.getsource(importlib.import_module(name)).encode())
    return digest.hexdigest()[:20]


def step_key(content: tuple) -> str:
    """The hash of a step's content: expressions by their exact structure (constants put in), the rest as text."""
    digest = hashlib.sha256(code_version().encode())
    for part in content:
        digest.update(b"\x00")
        digest.update((sp.srepr(valued(part)) if isinstance(part, sp.Basic) else repr(part)).encode())
    return digest.hexdigest()


class ProofCache:
    """Proofs by step key: those of this run, and (with a directory) those of earlier runs of the same code."""

    def __init__(self, directory: Path | None) -> None:
        self.path = None if directory is None else directory / f"{code_version()}.json"
        self.proved: dict[str, tuple[str, str]] = self._load()
        self.added = 0
        self.reused = 0

    def _load(self) -> dict[str, tuple[str, str]]:
        if self.path is None or not self.path.is_file():
            return {}
        try:
            kept = json.loads(self.path.read_text())
            return {key: (method, detail) for key, (method, detail) in kept.items()}
        except (OSError, ValueError, TypeError):  # a damaged file is a cold cache, not an error
            return {}

    def get(self, key: str) -> Verdict | None:
        found = self.proved.get(key)
        if found is None:
            return None
        self.reused += 1
        return Verdict(True, *found)

    def keep(self, key: str, verdict: Verdict) -> None:
        if verdict.ok:
            self.proved[key] = (verdict.method, verdict.detail)
            self.added += 1

    def save(self) -> None:
        """Write the proofs back atomically (another run reading at the same time sees the old file or the new)."""
        if self.path is None or not self.added:
            return
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with tempfile.NamedTemporaryFile("w", dir=self.path.parent, delete=False, suffix=".tmp") as out:
                json.dump(self.proved, out)
            os.replace(out.name, self.path)
        except OSError:  # a read-only home: the run's verdicts stand, the next run proves again
            pass


_ACTIVE: list[ProofCache] = []


@contextmanager
def proofs_cached(directory: Path | None) -> Iterator[ProofCache]:
    """Within the block, identical steps are proved once; with a directory, proofs are read from and kept there."""
    kept = ProofCache(directory)
    _ACTIVE.append(kept)
    try:
        yield kept
    finally:
        _ACTIVE.remove(kept)
        kept.save()


def cached_verdict(content: Callable[[], tuple | None], prove: Callable[[], tuple[Verdict, str, str]]) -> tuple[Verdict, str, str]:
    """``prove()``'s (verdict, left, right), or a kept proof of the same content when a cache is active.
    ``content()`` gives what the verdict depends on (None: nothing to prove, nothing kept)."""
    if not _ACTIVE:
        return prove()
    kept = _ACTIVE[-1]
    try:
        described = content()
    except Exception:  # a step that cannot be described cannot be proved either: prove() says why
        described = None
    if described is None:
        return prove()
    key = step_key(described)
    found = kept.get(key)
    if found is not None:
        return found, "", ""
    verdict, lhs, rhs = prove()
    kept.keep(key, verdict)
    return verdict, lhs, rhs


def clear() -> Path:
    """Remove every kept proof; returns the directory that was cleared."""
    directory = cache_directory()
    shutil.rmtree(directory, ignore_errors=True)
    return directory
