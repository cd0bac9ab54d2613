"""Nothing a user types is executed: no eval/exec/sympify/parse_expr anywhere in the package (strings are read by
formulas/vocabulary/expressions.py's own grammar)."""

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("formulas", "derivations", "render")
BUILTINS = {"eval", "exec", "compile", "__import__"}  # as bare names (re.compile is fine)
PARSERS = {"parse_expr", "sympify", "S"}  # sympy.S(x) is sympify(x)


def calls(path: Path):
    tree = ast.parse(path.read_text(), filename=str(path))
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            func = node.func
            if isinstance(func, ast.Name):
                yield func.id, True, node.lineno
            elif isinstance(func, ast.Attribute):
                yield func.attr, False, node.lineno


def package_files():
    for package in PACKAGES:
        yield from sorted((ROOT / package).rglob("*.py"))


def test_the_scan_sees_the_package():
    assert len(list(package_files())) >= 15


def test_no_eval_exec_anywhere():
    offenders = [
        f"{path.relative_to(ROOT)}:{line} {name}"
        for path in package_files()
        for name, bare, line in calls(path)
        if (bare and name in BUILTINS) or name == "parse_expr"
    ]
    assert offenders == []


def test_no_sympify_in_any_package():
    # formulas and derivations too (issue 37): Derivation.defines, assert_identity and Catalogue.formula sympified
    # the strings they were given, so "__import__('os').system(...)" ran
    offenders = [
        f"{path.relative_to(ROOT)}:{line}"
        for path in package_files()
        for name, _, line in calls(path)
        if name in PARSERS
    ]
    assert offenders == []
