"""The teaching notebooks: committed copies are fresh, valid nbformat v4, and run without error."""

from __future__ import annotations

import ast
import re
from concurrent.futures import ThreadPoolExecutor
from fractions import Fraction
from functools import cache
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

from formulas.catalogue import all_formulas
from formulas.examples import all_examples
from render.documents.notebooks import notebook_text, notebooks

COMMITTED = Path(__file__).resolve().parent.parent / "notebooks"
ARTICLES = ("000", "001", "002", "004")


@cache
def fresh() -> dict[str, str]:
    return {name: notebook_text(nb) for name, nb in notebooks().items()}


def test_one_notebook_per_topic_and_per_article():
    topics = {f.id.split(".")[0] for f in all_formulas()}
    assert set(fresh()) == {f"{t}.ipynb" for t in topics} | {f"article_{a}.ipynb" for a in ARTICLES} | {"lesson_megatron_1t.ipynb"}


def test_committed_notebooks_equal_a_fresh_build():
    # regenerate with: llm-formulas build --notebooks-dir notebooks
    committed = {p.name for p in COMMITTED.glob("*.ipynb")}
    assert committed == set(fresh()), "notebooks/ is stale: run llm-formulas build --notebooks-dir notebooks"
    for name, text in fresh().items():
        assert (COMMITTED / name).read_text(encoding="utf-8") == text, f"notebooks/{name} is stale"


def test_regenerating_gives_the_same_bytes():
    assert {name: notebook_text(nb) for name, nb in notebooks().items()} == fresh()


@pytest.mark.parametrize("name", sorted(p.name for p in COMMITTED.glob("*.ipynb")))
def test_committed_notebook_is_valid_nbformat_v4(name):
    nb = nbformat.read(COMMITTED / name, as_version=4)
    nbformat.validate(nb)
    kinds = [cell.cell_type for cell in nb.cells]
    assert "markdown" in kinds and "code" in kinds
    assert _exercises(nb), "the notebook ends with exercises whose answers are checked"


_SOLUTION = re.compile(r"^answer = (?P<arithmetic>.+?)  # a solution")
_CHECK = re.compile(r'^expected = evaluate\("(?P<id>[^"]+)", (?P<values>.*)\)$', re.MULTILINE)


def _exercises(nb) -> list[tuple[str | None, dict[str, Fraction], str]]:
    """(formula id, inputs, the solution's arithmetic) of each exercise: a solution cell, then a cell that checks it
    and prints "correct:" (against a formula evaluated at inputs, or, in a lesson, a published figure: id None)."""
    cells = [cell.source for cell in nb.cells if cell.cell_type == "code"]
    found = []
    for solution, check in zip(cells, cells[1:]):
        written, checked = _SOLUTION.match(solution), _CHECK.search(check)
        if written and checked:
            values = {name: Fraction(value) for name, value in re.findall(r'(\w+)="([^"]+)"', checked["values"])}
            found.append((checked["id"], values, written["arithmetic"]))
        elif written and 'print("correct:"' in check:
            found.append((None, {}, written["arithmetic"]))
    return found


_OPERATORS = {ast.Add: lambda x, y: x + y, ast.Sub: lambda x, y: x - y, ast.Mult: lambda x, y: x * y,
              ast.Div: lambda x, y: x / y, ast.Pow: lambda x, y: x**y}


def _arithmetic_value(node: ast.AST) -> Fraction:
    """Exact value of a solution's arithmetic (numbers, + − × ÷ and powers only; nothing is executed)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)):
        return Fraction(node.value)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return -_arithmetic_value(node.operand)
    if isinstance(node, ast.BinOp) and type(node.op) in _OPERATORS:
        return _OPERATORS[type(node.op)](_arithmetic_value(node.left), _arithmetic_value(node.right))
    raise ValueError(f"not plain arithmetic: {ast.dump(node)}")


def _last_digit(printed: Fraction) -> Fraction:
    """The place of the last significant digit of a printed figure: 196e12 → 1e12, 407.8 → 0.1."""
    place = Fraction(1)
    while printed % (place * 10) == 0:
        place *= 10
    while printed % place != 0:
        place /= 10
    return place


def test_exercise_solutions_agree_with_the_articles_printed_figures():
    # The oracle is the article's own printed figure (formulas/examples.py, SOURCES.md), not the toolkit's formula:
    # the notebook's worked solution must land within one unit of the figure's last printed digit.
    printed = {(e.formula_id, tuple(sorted((k, Fraction(str(v))) for k, v in e.inputs))): Fraction(str(e.claimed))
               for e in all_examples() if e.claimed is not None and not e.slip}
    compared = 0
    for name in sorted(p.name for p in COMMITTED.glob("article_*.ipynb")):
        for formula_id, values, arithmetic in _exercises(nb := nbformat.read(COMMITTED / name, as_version=4)):
            figure = printed.get((formula_id, tuple(sorted(values.items()))))
            if figure is None:
                continue
            solution = _arithmetic_value(ast.parse(arithmetic, mode="eval").body)
            assert abs(solution - figure) <= _last_digit(figure), (name, formula_id, solution, float(figure))
            compared += 1
    assert compared >= 4, "the article notebooks' exercises are worked examples with a printed figure"


def _execute(name: str) -> nbformat.NotebookNode:
    nb = nbformat.reads(fresh()[name], as_version=4)
    client = NotebookClient(nb, kernel_name="python3", timeout=300, record_timing=False,
                            resources={"metadata": {"path": str(COMMITTED)}})
    client.execute()
    return nb


@cache
def executed() -> dict[str, nbformat.NotebookNode | Exception]:
    """Every fresh notebook run by nbclient, two kernels at a time (each start-up is mostly imports)."""

    def run(name: str):
        try:
            return _execute(name)
        except Exception as error:  # reported by the notebook's own test below
            return error

    with ThreadPoolExecutor(max_workers=2) as pool:
        return dict(zip(sorted(fresh()), pool.map(run, sorted(fresh()))))


@pytest.mark.parametrize("name", sorted(fresh()))
def test_notebook_executes_without_error(name):
    nb = executed()[name]
    if isinstance(nb, Exception):
        raise nb
    outputs = [o for cell in nb.cells if cell.cell_type == "code" for o in cell.outputs]
    assert not [o for o in outputs if o.output_type == "error"]
    checked = sum(o.get("text", "").count("correct:") for o in outputs)
    assert checked == len(_exercises(nb)), "every exercise's check cell ran and accepted the worked solution"
