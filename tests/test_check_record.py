"""The release's own passing check, committed beside the catalogue (derivations/reports/check_record.py, issue 36):
a fresh install's ``check`` and ``build`` replay it instead of proving 3,800 steps, but only while every file the
check read hashes as it did; a changed dependency is proved again."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from llm_formulas.derivations.reports import check_record
from llm_formulas.derivations.reports.catalogue import Report
from llm_formulas.derivations.vocabulary.read_record import reading

COMMAND = [sys.executable, "-m", "llm_formulas"]


def test_the_committed_check_is_the_check_of_these_files():
    assert check_record.committed_outcomes() is not None, (
        "a formula, derivation or data file changed since derivations/reports/check_record.json was written: "
        "python -m llm_formulas.derivations.reports.check_record")
    record = json.loads(check_record.COMMITTED.read_text())
    read = set(record["dependencies"])
    # the check read every topic's formulas and derivations, and the model files its family proofs count
    assert {"module:llm_formulas.formulas.topics.params", "module:llm_formulas.derivations.topics.serving",
            "module:llm_formulas.derivations.data.families"} <= read
    assert any(key.startswith("data-in:llm_formulas.formulas.data/models/") for key in read)
    assert record["value"]["ok"] and all(outcome["ok"] for outcome in record["value"]["outcomes"])


def test_the_committed_record_answers_while_its_files_are_unchanged_and_never_after(tmp_path, monkeypatch):
    record = json.loads(check_record.COMMITTED.read_text())
    record["value"]["outcomes"][0]["label"] = "answered from the committed record"
    marked = tmp_path / "check_record.json"
    marked.write_text(json.dumps(record))
    monkeypatch.setattr(check_record, "COMMITTED", marked)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    proved = []

    def prove() -> Report:  # stands in for proving the catalogue
        proved.append(True)
        return Report(())

    with reading() as reads:
        answered = check_record.kept_outcomes(check_record.WHOLE, prove, reads)
    assert not proved and answered["outcomes"][0]["label"] == "answered from the committed record"
    # one module's content changed, as an edit of that file would: proved again, the record not answered
    record["dependencies"]["module:llm_formulas.formulas.topics.params"] = "0" * 64
    marked.write_text(json.dumps(record))
    with reading() as reads:
        answered = check_record.kept_outcomes(check_record.WHOLE, prove, reads)
    assert proved == [True] and answered == {"outcomes": [], "ok": True}


def test_a_fresh_install_checks_the_catalogue_without_proving_a_step(tmp_path):
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path)}
    done = subprocess.run([*COMMAND, "check", "--json"], capture_output=True, text=True, env=env, timeout=600)
    assert done.returncode == 0 and json.loads(done.stdout)["failed"] == [], done.stderr
    assert json.loads(done.stdout)["steps"] == len(json.loads(check_record.COMMITTED.read_text())["value"]["outcomes"])
    # nothing proved (no kept proof written) and nothing kept: the committed record answered
    assert not (tmp_path / "llm-formulas").exists()
