"""The catalogue's passing check, kept with the content of everything it read, and given again while that is
unchanged (``derivations/vocabulary/read_record.py``), so that neither ``check`` nor ``build`` proves 3,800 steps
that were proved against the very same files.

Two records answer, in this order: the one committed beside this module (``check_record.json``: the release's own
check, so a fresh install's first ``check`` and ``build`` replay it), then one in the user's cache (written by the
first passing run after any file changed). A changed byte in any formula, derivation or data file the check read, or
another SymPy, is a miss in both: the catalogue is proved again. Only a passing check is kept.

Like the records' reader, this module loads the catalogue only when it must prove: it may be imported, and a record
replayed, by a process that has not loaded the catalogue (the only kind that may replay, ``catalogue_unloaded``).
``python -m llm_formulas.derivations.reports.check_record`` proves the catalogue in a fresh process and rewrites the
committed record (``tests/test_check_record.py`` says when it no longer matches the files).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Callable

from llm_formulas.derivations.vocabulary.read_record import (Reads, cache_directory, catalogue_unloaded, dependencies,
                                                             kept, reading, record_path, unchanged)

COMMITTED = Path(__file__).with_name("check_record.json")
WHOLE = ("all",)  # the request of the whole catalogue's check, as ``check`` names it

Outcomes = dict  # {"ok": bool, "outcomes": [each Outcome as a dict]}, as a record holds it


def _proved(run: Callable[[], object]) -> Outcomes:
    """A report's outcomes as plain data."""
    from dataclasses import asdict

    report = run()
    return {"outcomes": [asdict(outcome) for outcome in report.outcomes], "ok": report.ok}


def _check_all():
    """The whole catalogue's check, proofs kept in the user's cache reused (``proof_cache``)."""
    from llm_formulas.derivations.reports.catalogue import check_all
    from llm_formulas.derivations.vocabulary.proof_cache import proofs_cached

    with proofs_cached(cache_directory()):
        return check_all()


def committed_outcomes() -> Outcomes | None:
    """The committed record's outcomes, when every file it names is unchanged."""
    try:
        record = json.loads(COMMITTED.read_text(encoding="utf-8"))
        if unchanged(record["dependencies"]):
            return record["value"]
    except (OSError, ValueError, TypeError, KeyError, AttributeError):
        pass
    return None


def kept_outcomes(request: tuple[str, ...], run: Callable[[], object], reads: Reads) -> Outcomes:
    """``run()``'s outcomes, or those of an earlier passing run of the same request while nothing it read has changed
    (the committed record first, for the whole catalogue). ``reads`` must have watched since before the catalogue
    was loaded."""
    if request == WHOLE:
        committed = committed_outcomes()
        if committed is not None:
            return committed
    value, _ = kept(record_path(cache_directory(), "reports", request), lambda: _proved(run), reads,
                    keep=lambda done: done["ok"])
    return value


def catalogue_outcomes() -> Outcomes:
    """The whole catalogue's check as plain data: replayed from a record in a process that has not loaded the
    catalogue, else proved. The build asks a fresh child process for it."""
    if not catalogue_unloaded():  # the catalogue in memory may differ from its files: prove what it holds
        return _proved(_check_all)
    with reading() as reads:
        return kept_outcomes(WHOLE, _check_all, reads)


def regenerate() -> bool:
    """Prove the catalogue (no kept proof used) and write the committed record; False, writing nothing, when the check
    fails."""
    if not catalogue_unloaded():
        raise RuntimeError("the check's record must be written by a process that has not loaded the catalogue")
    with reading() as reads:
        from llm_formulas.derivations.reports.catalogue import check_all
        from llm_formulas.derivations.vocabulary.proof_cache import proofs_cached

        with proofs_cached(None):  # every step proved afresh: a record is never made of kept proofs
            value = _proved(check_all)
    if not value["ok"]:
        return False
    lines = ",\n".join(json.dumps(outcome, sort_keys=True, ensure_ascii=False) for outcome in value["outcomes"])
    COMMITTED.write_text('{"dependencies": ' + json.dumps(dependencies(reads, COMMITTED), indent=1, sort_keys=True)
                         + ',\n "value": {"ok": true, "outcomes": [\n' + lines + "\n]}}\n", encoding="utf-8")
    return True


if __name__ == "__main__":
    if not regenerate():
        raise SystemExit(f"{COMMITTED}: not written, the catalogue's check fails (llm-formulas check says where)")
    print(f"{COMMITTED}: rewritten")
