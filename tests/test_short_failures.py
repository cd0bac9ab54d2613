"""A failed assertion helper shows the user's test, not the library's source (issue 37 item 9): before, a failed
identity printed 51 lines, 30 of them derivations/reports/testing.py and engine code."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

USER_TEST = '''
import llm_formulas as lf

def test_wrong():
    h = lf.symbol("h")
    lf.assert_identity(12 * h**2 + 13 * h, 12 * h**2 + 12 * h)
'''


def test_a_failed_identity_shows_no_line_of_the_library(tmp_path):
    (tmp_path / "test_user.py").write_text(USER_TEST)
    run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:xdist",
                          str(tmp_path / "test_user.py")], capture_output=True, text=True, cwd=tmp_path, timeout=300)
    assert "not an identity" in run.stdout
    library_files = [str(p) for p in (ROOT / "derivations").rglob("*.py")] + [str(p) for p in (ROOT / "formulas").rglob("*.py")]
    assert [line for line in run.stdout.splitlines() if any(f in line for f in library_files)] == []
    assert "__tracebackhide__" not in run.stdout and "def assert_identity" not in run.stdout


TWO_TESTS = '''
import llm_formulas as lf
from llm_formulas.formulas.vocabulary.catalogue import take_reads

def test_a():
    lf.get("params.layer")

def test_b():
    assert take_reads() == []  # the plugin reset the read log between the tests
'''


def test_the_plugin_resets_the_read_log_per_test(tmp_path):
    (tmp_path / "test_order.py").write_text(TWO_TESTS)
    run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:xdist",
                          str(tmp_path / "test_order.py")], capture_output=True, text=True, cwd=tmp_path, timeout=300)
    assert "2 passed" in run.stdout, run.stdout[-2000:]
