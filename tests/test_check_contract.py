"""``check --module``'s contract with a user's module (issue 37, items 7 and 17): whatever the user's code does, the
answer is a verdict (exit 1, naming the user's file and line) or one line of bad input (exit 2), never an internal
error (exit 3), never a silent exit 0, and never a print of theirs inside ``--json``."""

from __future__ import annotations

import json
import sys
import uuid

import pytest

from llm_formulas.render.cli.main import main

HEADER = ("import llm_formulas as lf\n"
          "from llm_formulas.formulas.vocabulary.symbols import h, u_param\n")


@pytest.fixture
def user_module(tmp_path, monkeypatch):
    """Write a module of the user's into a fresh directory (the working directory, as ``python -m`` would have it)
    under a fresh name, so no test imports another's."""
    monkeypatch.chdir(tmp_path)
    written = []

    def write(source: str) -> str:
        name = f"user_{uuid.uuid4().hex[:10]}"
        (tmp_path / f"{name}.py").write_text(source)
        written.append(name)
        return name

    yield write
    for name in written:
        sys.modules.pop(name, None)


def test_a_type_error_in_the_users_derivation_is_a_failed_check_at_their_file_and_line(user_module, capsys):
    name = user_module(HEADER +
                       "def broken():\n"                             # line 3
                       "    d = lf.Derivation('mine.broken', 'x')\n"  # line 4
                       "    d.defines('x', h + 'one', 'a slip')\n"     # line 5: Symbol + str raises TypeError
                       "    return d\n"
                       "DERIVATIONS = [broken]\n")
    code = main(["check", "--module", name, "--json"])
    captured = capsys.readouterr()
    assert code == 1, captured.err  # was 3: "internal error (please report)"
    assert "internal error" not in captured.err
    failed = json.loads(captured.out)["failed"]
    assert len(failed) == 1
    assert f"{name}.py:5" in failed[0]["detail"] and "TypeError" in failed[0]["detail"]


def test_sys_exit_at_import_is_bad_input_not_proved(user_module, capsys):
    name = user_module("import sys\nsys.exit(0)\n")
    code = main(["check", "--module", name, "--json"])
    captured = capsys.readouterr()
    assert code == 2  # was 0 with no output: CI read "proved"
    assert captured.out == ""
    assert len(captured.err.strip().splitlines()) == 1 and "sys.exit(0)" in captured.err


def test_a_print_of_the_user_does_not_corrupt_json(user_module, capsys):
    name = user_module(HEADER +
                       "print('hello from import')\n"
                       "def rows():\n"
                       "    print('hello from the derivation')\n"
                       "    d = lf.Derivation('mine.rows', 'rows')\n"
                       "    x = d.defines('x', 2 * h * u_param, 'two rows')\n"
                       "    d.equals('y', h * u_param + h * u_param, 'the same', aside=True)\n"
                       "    return d\n"
                       "DERIVATIONS = [rows]\n")
    code = main(["check", "--module", name, "--json"])
    captured = capsys.readouterr()
    assert code == 0, captured
    doc = json.loads(captured.out)  # raised on the old code: the prints came first on stdout
    assert doc["failed"] == [] and doc["steps"] == 2
    assert "hello from import" in captured.err and "hello from the derivation" in captured.err


@pytest.mark.parametrize("listed, expected", [
    ("DERIVATIONS = 7\n", "DERIVATIONS must be a list of functions"),
    ("DERIVATIONS = ['not callable']\n", "DERIVATIONS[0] is a str"),
    ("def nothing():\n    pass\nDERIVATIONS = [nothing]\n", "nothing returned NoneType, not a Derivation"),
])
def test_a_malformed_derivations_list_is_one_line_of_bad_input(user_module, capsys, listed, expected):
    name = user_module(HEADER + listed)
    code = main(["check", "--module", name])
    captured = capsys.readouterr()
    assert code == 2, captured  # each was 3, an internal error
    assert len(captured.err.strip().splitlines()) == 1 and expected in captured.err
