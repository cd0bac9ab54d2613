"""The pytest plugin of llm-formulas (registered through the ``pytest11`` entry point; imports nothing until used).

Fixtures:

- ``llm_catalogue``: a fresh ``llm_formulas.Catalogue``, active for the test; what the test registers (formulas,
  symbols, sources, models) lives in it and is gone after the test, so tests never see each other's entries, and
  a module that registers at import cannot clash with a test that registers the same ids.
- ``llm_assert``: the assertion helpers (``identity``, ``approximation``, ``derivation``), for tests that prefer a
  fixture to an import.
"""

from __future__ import annotations

from types import SimpleNamespace

import pytest


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    """Each test starts with an empty catalogue-read log: reads made by an earlier test are never a later test's
    derivation's reads (issue 37: a verdict must not depend on which tests ran before)."""
    import sys

    catalogue = sys.modules.get("llm_formulas.formulas.vocabulary.catalogue")
    if catalogue is not None:
        catalogue.take_reads()


@pytest.fixture
def llm_catalogue(request: pytest.FixtureRequest):
    """A fresh catalogue named after the test, active while it runs (the catalogue reads log starts empty)."""
    from llm_formulas.formulas.vocabulary.catalogue import Catalogue, take_reads

    take_reads()  # reads made by other tests are not this test's derivations' reads
    catalogue = Catalogue(request.node.nodeid)
    with catalogue:
        yield catalogue


@pytest.fixture
def llm_assert() -> SimpleNamespace:
    """``llm_assert.identity(a, b)``, ``llm_assert.approximation(...)``, ``llm_assert.derivation(d)``."""
    from llm_formulas.derivations.reports.testing import assert_approximation, assert_derivation, assert_identity

    return SimpleNamespace(identity=assert_identity, approximation=assert_approximation, derivation=assert_derivation)
