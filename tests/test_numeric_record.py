"""The build's numeric stage takes the committed module only while nothing it was printed from has changed
(render/numeric/module_record.py, issue 36 item 3): its record names the hash of every file printing it read and of
the module itself; a changed file, a changed module or a process holding the catalogue in memory prints it anew."""

from __future__ import annotations

import json

import pytest

from llm_formulas.derivations.vocabulary.read_record import catalogue_unloaded
from llm_formulas.render.numeric import module_record
from llm_formulas.render.numeric.evaluator import GENERATED_PATH


@pytest.fixture
def record_copy(tmp_path, monkeypatch):
    """The committed record and module, copied where a test may change them."""
    record, module = tmp_path / "record.json", tmp_path / "module.py"
    record.write_text(module_record.RECORD_PATH.read_text())
    module.write_text(GENERATED_PATH.read_text())
    monkeypatch.setattr(module_record, "RECORD_PATH", record)
    monkeypatch.setattr(module_record, "GENERATED_PATH", module)
    return record, module


def test_the_committed_record_is_fresh_and_names_what_printing_reads():
    assert module_record.committed_source() == GENERATED_PATH.read_text(), \
        "stale record: run python -m llm_formulas.render.numeric.module_record"
    read = json.loads(module_record.RECORD_PATH.read_text())["dependencies"]
    # the printer, the formulas it prints and the SymPy it prints with
    assert {"module:llm_formulas.render.printers.codegen", "module:llm_formulas.formulas.topics.params",
            "module:llm_formulas.formulas.vocabulary.catalogue", "version:sympy"} <= set(read)


def test_a_changed_dependency_or_module_is_printed_anew(record_copy):
    record, module = record_copy
    assert module_record.committed_source() == module.read_text()
    original = record.read_text()
    kept = json.loads(original)
    kept["dependencies"]["module:llm_formulas.formulas.topics.params"] = "0" * 64  # as an edit of formulas/topics/params.py would
    record.write_text(json.dumps(kept))
    assert module_record.committed_source() is None
    record.write_text(original)
    module.write_text(module.read_text() + "# edited by hand\n")  # a module its record does not vouch for
    assert module_record.committed_source() is None


def test_a_process_holding_the_catalogue_prints_what_it_holds(monkeypatch):
    # this process loaded the catalogue (the tests' imports did), where an entry may have been changed in memory
    assert not catalogue_unloaded()
    monkeypatch.setattr(module_record, "_printed", lambda: "printed")
    assert module_record.module_source_kept() == "printed"

