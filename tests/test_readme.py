"""The README's and the user guide's promises: two set-up commands, CI runs the test one verbatim, every example
runs (Python blocks executed, ``llm-formulas`` lines run and print the figures their comments state)."""

import json
import re
import shlex
from pathlib import Path

import pytest

from llm_formulas.render.cli.main import main
from llm_formulas.render.documents.guide import chapter_files

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text()
DOCUMENTS = {"README.md": README} | {f"guide/{path.name}": path.read_text() for path in chapter_files()}


def fenced(language, text=README):
    return re.findall(rf"```{language}\n(.*?)```", text, flags=re.S)


def test_two_setup_commands_and_ci_runs_the_test_one():
    setup = README.split("## Set up", 1)[1].split("\n## ", 1)[0]
    commands = re.findall(r"```sh\n(.*?)\n```", setup, flags=re.S)
    assert len(commands) == 2
    build, test = commands
    assert "pip install ." in build and build.rstrip().endswith("llm-formulas build")
    assert "'.[test]'" in test and test.rstrip().endswith("pytest")
    assert test.strip() in (ROOT / ".ci" / "run").read_text()


def test_the_readme_is_a_front_door():
    # what it is, the two set-up commands, a short tour of the commands and of the library, links; the manual,
    # the rejected-inputs table and the library reference live in the guide (issue 23: the README was 36 KB)
    headings = re.findall(r"^## (.+)$", README, flags=re.M)
    assert headings[:3] == ["Set up", "A short tour of the commands", "A short tour of the library"]
    assert len(README.encode()) < 12_000
    assert "## Rejected inputs" not in README and "guide.html" in README


PYTHON_BLOCKS = [(name, index, block) for name, text in DOCUMENTS.items()
                 for index, block in enumerate(fenced("python", text))]


@pytest.mark.parametrize("name, index, block", PYTHON_BLOCKS, ids=[f"{n}#{i}" for n, i, _ in PYTHON_BLOCKS])
def test_python_examples_run(name, index, block, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    namespace: dict = {}
    exec(compile(block, f"{name} block {index}", "exec"), namespace)


def _command_lines() -> list[str]:
    lines = [line for text in DOCUMENTS.values() for block in fenced("sh", text) for line in block.splitlines()
             if line.startswith("llm-formulas ")]
    return list(dict.fromkeys(lines))  # a line the README and the guide both show runs once


COMMAND_LINES = _command_lines()


def test_the_examples_are_read():
    assert len(COMMAND_LINES) >= 25
    assert len(PYTHON_BLOCKS) >= 8


@pytest.mark.parametrize("line", COMMAND_LINES)
def test_command_examples_succeed_and_print_what_they_say(line, capsys, tmp_path, monkeypatch):
    command, _, comment = line.partition("#")
    (tmp_path / "spec.toml").write_text(fenced("toml")[0])  # the sweep spec the README shows
    monkeypatch.chdir(tmp_path)
    preset = json.loads((ROOT / "formulas" / "data" / "models" / "llama2-7b.json").read_text())
    config = tmp_path / "config.json"
    config.write_text(json.dumps(preset["config"]))
    assert main(shlex.split(command.replace("path/to/config.json", str(config)))[1:]) == 0
    out = capsys.readouterr().out
    assert out
    for figure in re.findall(r"\d[\d,]{5,}\d", comment):  # a result the documents state must be printed
        assert figure in out, (figure, out[:500])
