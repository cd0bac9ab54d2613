"""Nothing a user types is executed: no eval/exec anywhere, no sympify where input is read."""

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("formulas", "derivations", "render")
BUILTINS = {"eval", "exec", "compile", "__import__"}  # as bare names (re.compile is fine)
PARSERS = {"parse_expr", "sympify", "S"}
USER_FACING = ("render",)  # the command line and everything that reads input


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


def test_no_sympify_in_code_that_reads_input():
    offenders = [
        f"{path.relative_to(ROOT)}:{line}"
        for package in USER_FACING
        for path in sorted((ROOT / package).rglob("*.py"))
        for name, _, line in calls(path)
        if name in PARSERS
    ]
    assert offenders == []


def imported_packages(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(), filename=str(path))
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module.split(".")[0])
    return found


def test_dependencies_run_one_way():
    # DESIGN.md: formulas ← derivations ← render, never back; torch and transformers only in tests
    forbidden = {"formulas": {"derivations", "render", "torch", "transformers"},
                 "derivations": {"render", "torch", "transformers"},
                 "render": {"torch", "transformers"}}
    offenders = [
        f"{path.relative_to(ROOT)} imports {sorted(imported_packages(path) & banned)}"
        for package, banned in forbidden.items()
        for path in sorted((ROOT / package).rglob("*.py"))
        if imported_packages(path) & banned
    ]
    assert offenders == []
