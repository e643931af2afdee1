"""The package's layers, from its import statements: every import counts,
lazy ones inside functions too. Imports go one way, from the faces down to
the semantic model, and there are no cycles."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import vllm_spec_lint

# Lowest first: a module may import from its own layer and the ones before.
LAYERS = ("model", "repair", "rules", "core", "edges", "faces")
PACKAGE = "vllm_spec_lint"


def import_graph(root: Path, package: str) -> dict[str, set[str]]:
    """``{module: {package modules it imports}}`` for every module under
    ``root`` (the package folder)."""
    modules = {}
    for path in sorted(root.rglob("*.py")):
        parts = path.relative_to(root.parent).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        modules[".".join(parts)] = path
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        imported = set()
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                imported |= {a.name for a in node.names}
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                imported.add(node.module)
                # `from package.sub import module` imports that module
                imported |= {f"{node.module}.{a.name}" for a in node.names}
            elif isinstance(node, ast.ImportFrom):
                raise AssertionError(f"{path}: relative import")
        graph[name] = {m for m in imported if m in modules and m != name}
    return graph


def layer_of(module: str) -> int | None:
    """The module's layer; None for the package root (only ``__version__``)
    and ``__main__``, which sit outside the layers."""
    parts = module.split(".")
    if len(parts) == 1 or parts[1] == "__main__":
        return None
    return LAYERS.index(parts[1])


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """One cycle through each strongly connected group (Tarjan)."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for other in sorted(graph[node]):
            if other not in index:
                visit(other)
                low[node] = min(low[node], low[other])
            elif other in on_stack:
                low[node] = min(low[node], index[other])
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

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def upward_imports(graph: dict[str, set[str]]) -> list[tuple[str, str]]:
    wrong = []
    for module, imported in sorted(graph.items()):
        for other in sorted(imported):
            here, there = layer_of(module), layer_of(other)
            if there is None and other == PACKAGE:
                continue  # the root holds only __version__
            if here is not None and (there is None or there > here):
                wrong.append((module, other))
    return wrong


@pytest.fixture(scope="module")
def graph():
    return import_graph(Path(vllm_spec_lint.__file__).parent, PACKAGE)


def test_every_module_sits_in_a_layer(graph):
    outside = [m for m in graph if layer_of(m) is None]
    assert sorted(outside) == ["vllm_spec_lint", "vllm_spec_lint.__main__"]


def test_the_package_root_imports_nothing_of_its_own(graph):
    assert graph[PACKAGE] == set()


def test_no_import_cycles(graph):
    assert cycles(graph) == []


def test_imports_go_down_the_layers(graph):
    assert upward_imports(graph) == []


def test_the_graph_holds_lazy_imports(graph):
    # analysis imports the rules only when a file is parsed.
    assert "vllm_spec_lint.rules" in graph["vllm_spec_lint.core.analysis"]


def write_package(root: Path, files: dict[str, str]) -> Path:
    package = root / PACKAGE
    for name, text in files.items():
        path = package / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return package


def test_a_lazy_import_cycle_is_found(tmp_path):
    package = write_package(
        tmp_path,
        {
            "__init__.py": "",
            "core/__init__.py": "",
            "core/a.py": "from vllm_spec_lint.core import b\n",
            "core/b.py": "def f():\n    from vllm_spec_lint.core.a import x\n",
        },
    )
    graph = import_graph(package, PACKAGE)
    assert cycles(graph) == [["vllm_spec_lint.core.a", "vllm_spec_lint.core.b"]]


def test_a_lower_layer_importing_a_higher_one_is_found(tmp_path):
    package = write_package(
        tmp_path,
        {
            "__init__.py": "",
            "model/__init__.py": "",
            "model/m.py": "import vllm_spec_lint.faces.cli\n",
            "faces/__init__.py": "",
            "faces/cli.py": "from vllm_spec_lint.model.m import y\n",
        },
    )
    graph = import_graph(package, PACKAGE)
    assert upward_imports(graph) == [
        ("vllm_spec_lint.model.m", "vllm_spec_lint.faces.cli")
    ]
