"""The layout shows the architecture: imports run one way, between the three folders and between the sub-packages of
`formulas/` and `derivations/`, and no module imports itself back through others.

DESIGN.md: formulas ← derivations ← render, never back. Issue 31 item 7: inside `formulas/` (and mirrored in
`derivations/`) the vocabulary is at the bottom, the data and the topic formulas stand beside each other on it, and the
reports sit on top. The graph is read from the sources (runtime imports: those under ``if TYPE_CHECKING:`` only name
types), so a test fails on the first import that goes the wrong way.
"""

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FOLDERS = ("formulas", "derivations", "render")
KINDS = ("vocabulary", "data", "topics", "reports")
# what a sub-package may import of its own folder (its own modules always)
ALLOWED = {"vocabulary": {"vocabulary"}, "data": {"vocabulary", "data"}, "topics": {"vocabulary", "topics"},
           "reports": set(KINDS)}


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[:2] == ["render", "api"]:  # render/api is llm_formulas itself (pyproject's package-dir)
        parts = parts[2:]
    if parts and parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(["llm_formulas", *parts])


MODULES = {module_name(path): path for folder in FOLDERS for path in sorted((ROOT / folder).rglob("*.py"))}


def runtime_imports(path: Path) -> set[str]:
    """The modules ``path`` imports when it runs (at its top or inside a function), ``TYPE_CHECKING`` blocks aside."""
    found: set[str] = set()

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING":
            for child in node.orelse:
                visit(child)
            return
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.update({node.module, *(f"{node.module}.{alias.name}" for alias in node.names)})
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(ast.parse(path.read_text(), filename=str(path)))
    return found


GRAPH = {name: {imported for imported in runtime_imports(path) if imported in MODULES} - {name}
         for name, path in MODULES.items()}


def folder_of(module: str) -> str:
    """formulas, derivations, render, or api (llm_formulas and its own modules, render/api)."""
    second = module.split(".")[1] if module.count(".") else ""
    return second if second in FOLDERS else "api"


def kind_of(module: str) -> str:
    return module.split(".")[2]


def test_the_three_folders_depend_one_way():
    below = {"formulas": set(), "derivations": {"formulas"}, "render": {"formulas", "derivations", "api"}}
    below["api"] = {"formulas", "derivations", "render"}
    wrong = [f"{module} imports {imported}" for module, imports in GRAPH.items() for imported in sorted(imports)
             if folder_of(imported) != folder_of(module) and folder_of(imported) not in below[folder_of(module)]]
    assert wrong == []


def test_torch_and_transformers_are_only_in_the_tests():
    wrong = [f"{module} imports {imported}" for module, path in MODULES.items() for imported in runtime_imports(path)
             if imported.split(".")[0] in {"torch", "transformers"}]
    assert wrong == []


def test_every_module_of_formulas_and_derivations_sits_in_one_of_the_four_kinds():
    loose = [name for name in MODULES if folder_of(name) in ("formulas", "derivations")
             and name.count(".") != 3 and name not in ("llm_formulas.formulas", "llm_formulas.derivations")
             and name.rpartition(".")[2] not in KINDS]
    assert loose == []
    assert {kind_of(name) for name in MODULES if folder_of(name) in ("formulas", "derivations") and name.count(".") == 3} \
        == set(KINDS)


def test_inside_formulas_and_derivations_the_vocabulary_is_below_data_and_topics_and_reports_on_top():
    wrong = [f"{module} ({kind_of(module)}) imports {imported}"
             for module, imports in GRAPH.items() if folder_of(module) in ("formulas", "derivations")
             and module.count(".") == 3
             for imported in sorted(imports)
             if folder_of(imported) == folder_of(module) and imported.count(".") == 3
             and kind_of(imported) not in ALLOWED[kind_of(module)]]
    assert wrong == []


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected groups of more than one module (Tarjan's algorithm, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                group = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    group.append(member)
                    if member == node:
                        break
                if len(group) > 1:
                    found.append(sorted(group))
    return found


def test_the_circle_finder_finds_a_circle():
    assert circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert circles({"a": {"b"}, "b": set()}) == []


def test_no_module_imports_itself_back_through_others():
    # the catalogue and its printer, the engine and its printer, the exercises and their bank were such circles
    assert circles(GRAPH) == []


def test_the_guide_lists_every_module_under_the_sub_package_it_sits_in():
    # render/documents/guide/layout.md: a "### `formulas/vocabulary/`" heading, then its modules as `name`
    text = (ROOT / "render" / "documents" / "guide" / "layout.md").read_text()
    listed: dict[str, set[str]] = {}
    for heading, body in re.findall(r"^### `(\w+/\w+)/`\n(.*?)(?=^#|\Z)", text, flags=re.M | re.S):
        listed[heading] = set(re.findall(r"`(\w+)`", body))
    actual: dict[str, set[str]] = {}
    for name in MODULES:
        if folder_of(name) in ("formulas", "derivations") and name.count(".") == 3:
            _, folder, kind, module = name.split(".")
            actual.setdefault(f"{folder}/{kind}", set()).add(module)
    assert {key: listed.get(key, set()) & actual[key] for key in actual} == actual
    assert set(listed) == set(actual)
