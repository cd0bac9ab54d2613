"""The wheel as a user installs it (issue 23), in a fresh virtual environment outside the checkout.

The checkout's sources are copied aside and built into a wheel; a new venv gets that wheel (``pip install
--no-deps``), and sees the dependencies of this test run's environment through a path file, never its copy of
llm-formulas (the fresh venv's own site-packages come first on sys.path, and the test asserts which copy it
imports). In it: the wheel puts nothing but ``llm_formulas`` at the top of site-packages; the Excel formula parser
published as ``formulas`` on PyPI (a test dependency) imports beside ours; the README's and the guide's library
examples run; and a sample user project with its own catalogue is proved by ``llm-formulas check --module`` and
tested by pytest through the plugin's fixture.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import sysconfig
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SOURCES = ("pyproject.toml", "README.md", "formulas", "derivations", "render", "notebooks")  # notebooks: the wheel ships them


def _run(command: list[str], cwd: Path, timeout: int = 300) -> subprocess.CompletedProcess:
    env = {key: value for key, value in os.environ.items() if key not in ("PYTHONPATH", "VIRTUAL_ENV")}
    done = subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=timeout, env=env)
    assert done.returncode == 0, (command, done.stdout[-2000:], done.stderr[-2000:])
    return done


@pytest.fixture(scope="module")
def fresh(tmp_path_factory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("fresh")
    source = root / "source"
    source.mkdir()
    for name in SOURCES:  # the tracked sources only: no build/, no caches, no egg-info of an earlier build
        origin = ROOT / name
        if origin.is_dir():
            shutil.copytree(origin, source / name, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        else:
            shutil.copy2(origin, source / name)
    _run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--quiet", str(source),
          "-w", str(root / "wheel")], cwd=root)
    (wheel,) = (root / "wheel").glob("llm_formulas-*.whl")
    venv = root / "venv"
    _run([sys.executable, "-m", "venv", "--without-pip", str(venv)], cwd=root)
    python = venv / "bin" / "python"
    purelib = Path(_run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"], cwd=root)
                   .stdout.strip())
    _run([sys.executable, "-m", "pip", "--python", str(python), "install", "--no-deps", "--quiet", str(wheel)],
         cwd=root)
    # Only now the path file: pip would otherwise see the test run's own copy (a non-editable install in CI)
    # through it and call the requirement satisfied, installing nothing.
    (purelib / "test-run-dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    return {"root": root, "python": python, "purelib": purelib, "bin": venv / "bin"}


def test_the_wheel_puts_only_llm_formulas_at_the_top_of_site_packages(fresh):
    (record,) = fresh["purelib"].glob("llm_formulas-*.dist-info/RECORD")
    tops = {line.split(",")[0].split("/")[0] for line in record.read_text().splitlines() if line}
    tops = {top for top in tops if not top.endswith(".dist-info") and top != ".."}  # ../../../bin/llm-formulas
    assert tops == {"llm_formulas"}
    # every source file once, under its one name: render/api is llm_formulas itself, never llm_formulas.render.api too
    installed = sorted(path for path in (line.split(",")[0] for line in record.read_text().splitlines())
                       if path.startswith("llm_formulas/") and "__pycache__" not in path)
    source = fresh["root"] / "source"
    expected = sorted(
        "llm_formulas/" + (str(path.relative_to(source / "render" / "api")) if path.is_relative_to(source / "render" / "api")
                           else str(path.relative_to(source)))
        for folder in ("formulas", "derivations", "render", "notebooks") for path in (source / folder).rglob("*")
        if path.is_file() and not any(part.endswith(".egg-info") for part in path.parts))  # pip's own, beside render/api
    assert installed == expected
    metadata = next(fresh["purelib"].glob("llm_formulas-*.dist-info/METADATA")).read_text()
    assert "License-Expression: MIT" in metadata  # SPDX, not the deprecated license table


def test_the_excel_formulas_package_and_ours_import_side_by_side(fresh):
    probe = ("import formulas, llm_formulas\n"
             "assert formulas.Parser().ast('=1+2')[1].compile()() == 3\n"  # the Excel parser's own API
             "assert llm_formulas.evaluate('params.total', l=12, h=768, V=50257, s=1024) == 124439808\n"
             "print(llm_formulas.__file__)")
    imported = _run([str(fresh["python"]), "-c", probe], cwd=fresh["root"]).stdout.strip()
    assert imported.startswith(str(fresh["purelib"])), imported  # the fresh install, not the test run's copy


def test_the_readme_and_guide_library_examples_run_from_the_fresh_venv(fresh):
    texts = [(ROOT / "README.md").read_text(), (ROOT / "render/documents/guide/library.md").read_text()]
    blocks = [block for text in texts for block in re.findall(r"```python\n(.*?)```", text, flags=re.S)]
    script = fresh["root"] / "examples.py"
    script.write_text("\n\n".join(f"exec(compile({block!r}, 'example {i}', 'exec'), {{}})" for i, block in enumerate(blocks)))
    _run([str(fresh["python"]), str(script)], cwd=fresh["root"])


SAMPLE_CATALOGUE = '''
import llm_formulas as lf
from llm_formulas.formulas.vocabulary.symbols import h, u_param

ACME = lf.Catalogue("acme")
ACME.source("acme2026", authors="A. Engineer", title="The Acme-13B model card", date="2026")
CARD = ACME.cite("acme2026", "§2")
n_img = ACME.symbol("n_img", "n_{img}", "image tokens per sample", "1", integer=True, source=CARD)
ADAPTER = ACME.formula("acme.adapter.params", 2 * n_img * h * u_param, "parameter",
                       "the vision adapter: two h-wide rows per image token", sources=[CARD])


@ACME.derivation
def adapter_rows() -> lf.Derivation:
    d = lf.Derivation("acme.adapter.params", "two rows per image token")
    d.defines("Ψ_in", n_img * h * u_param, "the projection in")
    d.defines("Ψ_out", n_img * h * u_param, "the projection out")
    d.defines("Ψ", 2 * n_img * h * u_param, "both", parts=("Ψ_in", "Ψ_out"))
    d.concludes("acme.adapter.params")
    return d
'''

SAMPLE_TESTS = '''
import llm_formulas as lf
from acme_formulas.catalogue import ACME, ADAPTER, adapter_rows


def test_adapter_count():
    assert lf.evaluate(ADAPTER, n_img=256, h=5120) == 2621440


def test_adapter_derivation():
    lf.assert_derivation(adapter_rows())


def test_scratch_formulas_stay_in_the_test(llm_catalogue, llm_assert):
    llm_catalogue.source("scratch", authors="Me", title="Scratch", date="2026")
    h = lf.symbol("h")
    lf.formula("scratch.layer", 12 * h**2 * lf.symbol("u_param"), "parameter", "a layer", sources=[lf.Source("scratch")])
    llm_assert.identity(lf.get("scratch.layer").expr, 12 * h**2)


def test_nothing_left_behind():
    try:
        lf.get("scratch.layer")
    except lf.UnknownFormula:
        return
    raise AssertionError("the previous test's formula leaked")
'''


def test_a_user_project_proves_and_tests_its_own_catalogue(fresh):
    project = fresh["root"] / "acme"
    (project / "acme_formulas").mkdir(parents=True)
    (project / "tests").mkdir()
    (project / "acme_formulas" / "__init__.py").write_text("")
    (project / "acme_formulas" / "catalogue.py").write_text(textwrap.dedent(SAMPLE_CATALOGUE))
    (project / "tests" / "test_acme.py").write_text(textwrap.dedent(SAMPLE_TESTS))
    checked = _run([str(fresh["bin"] / "llm-formulas"), "check", "--module", "acme_formulas.catalogue"], cwd=project)
    assert checked.stdout.strip().endswith("0 failed"), checked.stdout
    tested = _run([str(fresh["python"]), "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:xdist", "tests"],
                  cwd=project)
    assert "4 passed" in tested.stdout, tested.stdout
    version = _run([str(fresh["bin"] / "llm-formulas"), "--version"], cwd=project).stdout
    assert re.fullmatch(r"llm-formulas \d+\.\d+\.\d+\n", version)
