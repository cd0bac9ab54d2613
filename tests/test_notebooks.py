"""The teaching notebooks: committed copies are fresh, valid nbformat v4, and run without error."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from functools import cache
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

from formulas.catalogue import all_formulas
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
    assert any("assert" in cell.source for cell in nb.cells if cell.cell_type == "code"), "an exercise checks its answer"


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
    assert any("correct:" in o.get("text", "") for o in outputs), "the exercise check cells ran"
