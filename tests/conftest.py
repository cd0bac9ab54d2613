"""One scratch folder for the whole test run, made by the process that starts it (the xdist controller, or the only
process with ``-n 0``) before any worker exists, so every worker finds it in its environment and shares one
``llm-formulas build`` (tests/build_session.py) instead of each running its own; removed when the run ends. The
proof cache (derivations/vocabulary/proof_cache.py, under ``$XDG_CACHE_HOME``) lives there too: the run shares its proofs between
workers and never reads or writes the user's own cache."""

from __future__ import annotations

import os
import shutil
import tempfile

SHARED = "LLM_FORMULAS_TEST_RUN"


def _hypothesis_profile() -> None:
    """One Hypothesis profile for every test (the README's and the guide's examples included). In CI (CI is set) it
    draws the same examples every run, so a failure there reproduces locally with CI=1. The run shares two cores with
    notebook kernels, Chromium and pdflatex, so how long drawing takes is no health of a test's: too_slow is off."""
    from hypothesis import HealthCheck, settings

    settings.register_profile("llm-formulas", suppress_health_check=[HealthCheck.too_slow],
                              derandomize=bool(os.environ.get("CI")))
    settings.load_profile("llm-formulas")


_hypothesis_profile()


def pytest_configure(config) -> None:
    if not hasattr(config, "workerinput") and SHARED not in os.environ:
        os.environ[SHARED] = tempfile.mkdtemp(prefix="llm-formulas-tests-")
        config._llm_formulas_run = os.environ[SHARED]  # this process made it: this process removes it
        os.environ["XDG_CACHE_HOME"] = os.path.join(os.environ[SHARED], "cache")


def pytest_unconfigure(config) -> None:
    made = getattr(config, "_llm_formulas_run", None)
    if made is not None:
        shutil.rmtree(made, ignore_errors=True)
        os.environ.pop(SHARED, None)
