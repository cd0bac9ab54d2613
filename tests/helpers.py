"""Small helpers the test modules share: exact evaluation of a catalogue formula and CLI runs."""

import json

import sympy as sp

from llm_formulas.formulas.vocabulary.catalogue import get
from llm_formulas.formulas.vocabulary.symbols import quantity
from llm_formulas.render.cli.main import main


def value(formula_id: str, **inputs) -> sp.Basic:
    """A catalogue formula evaluated exactly at inputs given by symbol name."""
    expr = get(formula_id).expr
    return expr.subs({quantity(name).symbol: sp.Rational(v) for name, v in inputs.items()})


def run(capsys, *argv) -> tuple[int, str, str]:
    """Run the command line in process: (exit code, stdout, stderr)."""
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def cli_json(capsys, *argv) -> object:
    """Run a command with --json; it must succeed."""
    code, out, err = run(capsys, *argv, "--json")
    assert code == 0, err
    return json.loads(out)
