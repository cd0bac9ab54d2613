"""The library keeps the command line's contract (issue 37, items 1, 2, 3, 8, 9): the same checks from one place,
never a silently wrong number, and results and types that fit ordinary Python tooling."""

from __future__ import annotations

import subprocess
import sys

import pytest

import llm_formulas as lf
from llm_formulas.render.cli.main import main

GPT2 = {"l": 12, "h": 768, "V": 50257, "s": 1024}


def cli_error(capsys, *argv: str) -> str:
    """The one line the command line prints for bad input (exit 2), without its prefix."""
    assert main(list(argv)) == 2
    line = capsys.readouterr().err.strip()
    return line.split("error: ", 1)[1]


# --- 1. evaluate checks every value as the command line does, with the same words ----------------------------------

@pytest.mark.parametrize("formula_id, values", [
    ("params.total", {**GPT2, "l": 12.5}),  # the old library: 127,983,744
    ("params.total", {**GPT2, "l": -1}),  # the old library: 32,297,472
    ("memory.zero.stage1", {"P": 7e9, "t": 1, "p": 1, "d": 0}),  # the old library: zoo
    ("cluster.amdahl", {"n": 512, "f": 1.5}),  # the old library: 1024/1535
])
def test_evaluate_refuses_what_the_command_line_refuses_with_its_words(capsys, formula_id, values):
    with pytest.raises(lf.InputError) as refused:
        lf.evaluate(formula_id, **values)
    assert isinstance(refused.value, ValueError)
    typed = [f"{name}={value:g}" if isinstance(value, float) else f"{name}={value}" for name, value in values.items()]
    assert str(refused.value) == cli_error(capsys, "eval", formula_id, *typed)
