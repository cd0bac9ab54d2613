"""The README's promises: two set-up commands, CI runs the test one verbatim, its examples run."""

import json
import re
import shlex
from pathlib import Path

import pytest

from llm_formulas.render.cli.main import main

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text()


def fenced(language):
    return re.findall(rf"```{language}\n(.*?)```", README, flags=re.S)


def test_two_setup_commands_and_ci_runs_the_test_one():
    setup = README.split("## Set up", 1)[1].split("\n## ", 1)[0]
    commands = re.findall(r"```sh\n(.*?)\n```", setup, flags=re.S)
    assert len(commands) == 2
    build, test = commands
    assert "pip install ." in build and build.rstrip().endswith("llm-formulas build")
    assert "'.[test]'" in test and test.rstrip().endswith("pytest")
    assert test.strip() in (ROOT / ".ci" / "run").read_text()


def test_python_examples_run():
    blocks = fenced("python")
    assert blocks
    for block in blocks:
        exec(compile(block, "README.md", "exec"), {})


COMMAND_LINES = [line for block in fenced("sh")[2:] for line in block.splitlines() if line.startswith("llm-formulas ")]


def test_the_examples_are_read():
    assert len(COMMAND_LINES) >= 10


@pytest.mark.parametrize("line", COMMAND_LINES)
def test_command_examples_succeed_and_print_what_the_readme_says(line, capsys, tmp_path, monkeypatch):
    command, _, comment = line.partition("#")
    (tmp_path / "spec.toml").write_text(fenced("toml")[0])  # the sweep spec the README shows
    monkeypatch.chdir(tmp_path)
    preset = json.loads((ROOT / "formulas" / "models" / "llama2-7b.json").read_text())
    config = tmp_path / "config.json"
    config.write_text(json.dumps(preset["config"]))
    assert main(shlex.split(command.replace("path/to/config.json", str(config)))[1:]) == 0
    out = capsys.readouterr().out
    assert out
    for figure in re.findall(r"\d[\d,]{5,}\d", comment):  # a result the README states must be printed
        assert figure in out, (figure, out[:500])
