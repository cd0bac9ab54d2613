"""A passing ``check`` kept whole (derivations/vocabulary/read_record.py, issue 36 item 2): it is answered again only while
every file it read hashes the same; a changed formula module, data file or listed folder makes the next run prove
again (and fail when the change is wrong), a failing run is never kept, and a process that already holds the
catalogue in memory never replays."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import llm_formulas.formulas.vocabulary.catalogue  # noqa: F401  (this process holds the catalogue, as pytest's always does)
from llm_formulas.formulas.topics import params
from llm_formulas.derivations.vocabulary.read_record import catalogue_unloaded, kept, reading, record_path
from llm_formulas.render.cli.main import main

COMMAND = [sys.executable, "-m", "llm_formulas"]


class Prover:
    """A stand-in for the catalogue's check: reads its formula from a module file, a data file and a folder, counts
    its runs, and passes when the formula is the binomial (x + 1)² expanded."""

    def __init__(self, root: Path) -> None:
        self.root, self.runs = root, 0
        (root / "folder").mkdir()
        self.write("formula_of_mine.py", "COEFFICIENTS = (1, 2, 1)\n")
        self.write("data.json", '{"x": 3}')

    def write(self, name: str, text: str) -> None:
        (self.root / name).write_text(text)

    def __call__(self) -> list:
        self.runs += 1
        sys.modules.pop("formula_of_mine", None)
        sys.path.insert(0, str(self.root))
        try:
            import formula_of_mine
        finally:
            sys.path.remove(str(self.root))
        x = json.loads((self.root / "data.json").read_text())["x"]
        a, b, c = formula_of_mine.COEFFICIENTS
        listed = len(os.listdir(self.root / "folder"))
        passed = a * x * x + b * x + c == (x + 1) ** 2  # 16 at x = 3
        return [[{"x": x, "listed": listed, "ok": passed}], passed]

    def check(self, cache: Path) -> tuple[list[dict], bool]:
        with reading() as reads:
            value, _ = kept(record_path(cache, "demo", ()), lambda: self(), reads, keep=lambda done: done[1])
        return value[0], value[1]


@pytest.fixture
def prover(tmp_path):
    yield Prover(tmp_path)
    sys.modules.pop("formula_of_mine", None)


def test_a_passing_run_is_answered_again_while_nothing_it_read_changed(prover, tmp_path):
    cache = tmp_path / "cache"
    first = prover.check(cache)
    assert first == ([{"x": 3, "listed": 0, "ok": True}], True) and prover.runs == 1
    assert prover.check(cache) == first and prover.runs == 1  # replayed: not run again


def test_a_changed_formula_module_is_proved_again_and_its_slip_fails(prover, tmp_path):
    cache = tmp_path / "cache"
    prover.check(cache)
    prover.write("formula_of_mine.py", "COEFFICIENTS = (1, 3, 1)\n")  # a slip in the cross term: 9 + 9 + 1 = 19 ≠ 16
    for runs in (2, 3):  # a failure is never kept: every run proves it again
        outcomes, passed = prover.check(cache)
        assert not passed and outcomes[0]["ok"] is False and prover.runs == runs
    prover.write("formula_of_mine.py", "COEFFICIENTS = (1, 2, 1)\n")  # mended: the old record stands for it again
    assert prover.check(cache)[1] and prover.runs == 3


def test_a_changed_data_file_or_folder_is_read_again(prover, tmp_path):
    cache = tmp_path / "cache"
    prover.check(cache)
    prover.write("data.json", '{"x": 5}')
    assert prover.check(cache) == ([{"x": 5, "listed": 0, "ok": True}], True) and prover.runs == 2
    prover.write("folder/new.json", "{}")  # a file added to a folder the run listed
    assert prover.check(cache) == ([{"x": 5, "listed": 1, "ok": True}], True) and prover.runs == 3
    assert prover.check(cache)[0][0]["listed"] == 1 and prover.runs == 3


def test_a_process_holding_the_catalogue_neither_replays_nor_keeps(capsys, tmp_path, monkeypatch):
    # this process imported the catalogue (above), so an entry may have been changed in memory
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert not catalogue_unloaded()
    assert main(["check", "params.layer.norms"]) == 0
    capsys.readouterr()
    assert not (tmp_path / "llm-formulas" / "proofs" / "reports").exists()


def test_the_command_replays_its_record_and_proves_again_when_a_dependency_changed(tmp_path):
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path)}

    def check() -> dict:
        done = subprocess.run([*COMMAND, "check", "params.layer.norms", "--json"], capture_output=True, text=True,
                              env=env, timeout=600)
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout)

    proved = check()
    # derivations/topics/params.py: params.layer.norms is concluded by one derivation of 2 steps, with 1 unit and 1 coverage
    assert proved == {"derivations": 1, "steps": 4, "failed": []}
    [path] = (tmp_path / "llm-formulas" / "proofs" / "reports").iterdir()
    record = json.loads(path.read_text())
    read = record["dependencies"]  # each module by its name, each data file by its package and path there
    assert {"module:llm_formulas.formulas.topics.params", "module:llm_formulas.derivations.topics.params"} <= set(read)
    assert read["module:llm_formulas.formulas.topics.params"] == hashlib.sha256(Path(params.__file__).read_bytes()).hexdigest()
    # a kept record is what the next run answers: one marked by hand comes back as it is
    record["value"]["outcomes"][0]["label"] = "answered from the record"
    path.write_text(json.dumps(record))
    assert check() == proved  # the summary counts the same outcomes
    marked = subprocess.run([*COMMAND, "check", "params.layer.norms", "--verbose"], capture_output=True, text=True,
                            env=env, timeout=600)
    assert "(answered from the record)" in marked.stdout
    # the same record with one dependency's content changed (as an edit of that file would) is proved again
    record["dependencies"]["module:llm_formulas.formulas.topics.params"] = "0" * 64
    path.write_text(json.dumps(record))
    proved_again = subprocess.run([*COMMAND, "check", "params.layer.norms", "--verbose"], capture_output=True, text=True,
                                  env=env, timeout=600)
    assert proved_again.returncode == 0 and "answered from the record" not in proved_again.stdout
    assert "params.layer.norms step 1" in proved_again.stdout


def test_a_fresh_command_line_holds_no_catalogue_until_it_loads_one():
    probe = ("import llm_formulas.render.cli.main\n"
             "from llm_formulas.derivations.vocabulary.read_record import catalogue_unloaded\n"
             "print(catalogue_unloaded())\n"
             "import llm_formulas.formulas.vocabulary.catalogue\n"
             "print(catalogue_unloaded())\n")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=600)
    assert done.stdout.split() == ["True", "False"], done.stderr
