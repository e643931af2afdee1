"""The small contracts the semantic model and the settings rest on, each
with its expected value written out: relative names resolved as Python
resolves imports, keys equal for structurally equal targets, the longest
selector deciding, rule pages, and where an installed package lives."""

from __future__ import annotations

import json
from pathlib import Path

import libcst as cst
import pytest

from tests.conftest import REPO
from vllm_spec_lint.core.settings import Config, rule_url
from vllm_spec_lint.edges.hierarchy_sources import _importable
from vllm_spec_lint.model.hierarchy import ClassHierarchy, absolute_name
from vllm_spec_lint.model.syntax import assignment_targets, target_key


@pytest.mark.parametrize(
    "name, module_name, expected",
    [
        ("vllm.v1.x.C", "vllm.v1.core.y", "vllm.v1.x.C"),
        (".x.C", "vllm.v1.core.y", "vllm.v1.core.x.C"),
        ("..x.C", "vllm.v1.core.y", "vllm.v1.x.C"),
        ("...x.C", "vllm.v1.core.y", "vllm.x.C"),
        # Beyond the top-level package Python refuses the import: unchanged.
        ("....x.C", "vllm.v1.core.y", "....x.C"),
        (".....x.C", "vllm.v1.core.y", ".....x.C"),
        ("..", "vllm.v1.core.y", "vllm.v1"),
        (".", "vllm.v1.core.y", "vllm.v1.core"),
        (".x.C", "vllm.v1.__init__", "vllm.v1.x.C"),
        (".x.C", None, ".x.C"),
    ],
)
def test_a_relative_name_resolves_as_python_resolves_the_import(
    name, module_name, expected
):
    assert absolute_name(name, module_name) == expected


@pytest.mark.parametrize(
    "code, expected",
    [
        ("spec", "spec"),
        ("self.layer_spec", "self.layer_spec"),
        ("specs[i + 1]", "specs[i+1]"),
        ("specs[ i+1 ]", "specs[i+1]"),
        ("grid[i, j]", "grid[i,j]"),
        ("self.specs[name].kind", "self.specs[name].kind"),
        ("get_spec()", None),
        ("get_spec().kind", None),
        ("get_specs()[0]", None),
    ],
)
def test_target_keys_are_equal_for_structurally_equal_targets(code, expected):
    assert target_key(cst.parse_expression(code)) == expected


@pytest.mark.parametrize(
    "statement, bound",
    [
        ("a = b.c = d", [("a", "AssignTarget"), ("b.c", "AssignTarget")]),
        (
            "a, (b, *c) = d",
            [("a", "AssignTarget"), ("b", "AssignTarget"), ("c", "AssignTarget")],
        ),
        ("a: int = 1", [("a", "AnnAssign")]),
        ("a: int", []),  # an annotation alone binds nothing
        ("a += 1", [("a", "AugAssign")]),
        ("del a, b[0]", [("a", "Del"), ("b[0]", "Del")]),
        ("for k, v in d.items():\n    pass", [("k", "For"), ("v", "For")]),
        ("with f() as g:\n    pass", [("g", "AsName")]),
        ("import a.b", [("a", "ImportAlias")]),
        ("import a.b as c", [("c", "AsName")]),
        ("from a import b as c, d", [("c", "AsName"), ("d", "ImportAlias")]),
        ("x = (y := 1)", [("x", "AssignTarget"), ("y", "NamedExpr")]),
        # Names of their own: a lambda's, a function's, a comprehension's.
        ("f = lambda: (z := 1)", [("f", "AssignTarget")]),
        ("def f():\n    a = 1", []),
        ("a = [i for i in b]", [("a", "AssignTarget")]),
    ],
)
def test_what_a_statement_assigns(statement, bound):
    [node] = cst.parse_module(statement + "\n").body
    found = [
        (cst.Module([]).code_for_node(target), type(at).__name__)
        for target, at in assignment_targets(node)
    ]
    assert found == bound


@pytest.mark.parametrize(
    "safe, unsafe, expected",
    [
        ((), (), "safe"),
        ((), ("VSL001",), "unsafe"),
        (("VSL",), (), "safe"),
        (("VSL00",), ("VSL",), "safe"),
        (("VSL",), ("VSL00",), "unsafe"),
        (("VSL001",), ("VSL001",), "unsafe"),
        (("VSL002",), ("VSL003",), "safe"),
    ],
)
def test_the_longest_fix_safety_selector_decides_unsafe_on_a_tie(
    safe, unsafe, expected
):
    class SafeFix:
        applicability = "safe"

    config = Config(extend_safe_fixes=safe, extend_unsafe_fixes=unsafe)
    assert config.fix_applicability("VSL001", SafeFix()) == expected


def test_a_fix_keeps_its_own_applicability_when_no_selector_matches():
    class UnsafeFix:
        applicability = "unsafe"

    config = Config(extend_safe_fixes=("VSL002",), extend_unsafe_fixes=("VSL003",))
    assert config.fix_applicability("VSL001", UnsafeFix()) == "unsafe"


@pytest.mark.parametrize(
    "code, expected",
    [
        ("VSL001", "https://github.com/vllm-project/vllm-spec-lint/blob/main/docs/rules/VSL001.md"),
        ("VSL999", None),
        ("E501", None),
    ],
)  # fmt: skip
def test_only_known_codes_have_a_rule_page(code, expected):
    assert rule_url(code) == expected


def test_an_installed_package_is_found_where_it_lives():
    assert _importable("vllm_spec_lint") == [REPO / "vllm_spec_lint"]
    assert _importable("json") == [Path(json.__file__).parent]


@pytest.mark.parametrize("name", ["textwrap", "no_such_package_here", "..bad"])
def test_a_module_or_a_missing_package_has_no_folders(name):
    assert _importable(name) == []


@pytest.mark.parametrize(
    "cls, expected",
    [
        # A diamond: the shared base once.
        ("m.Child", {"m.Child", "m.Left", "m.Right", "m.Root"}),
        # Bases read from broken source can loop; the walk still ends.
        ("m.LoopA", {"m.LoopA", "m.LoopB", "m.Root"}),
        ("m.Unknown", {"m.Unknown"}),
    ],
)
def test_ancestors_are_every_class_reached_through_bases(cls, expected):
    hierarchy = ClassHierarchy(
        {
            "m.Root": (),
            "m.Left": ("m.Root",),
            "m.Right": ("m.Root",),
            "m.Child": ("m.Left", "m.Right"),
            "m.LoopA": ("m.LoopB",),
            "m.LoopB": ("m.LoopA", "m.Root"),
        }
    )
    assert hierarchy.ancestors(cls) == expected


def test_a_class_bodys_own_names_are_its_methods_and_attributes():
    import ast

    from vllm_spec_lint.model.hierarchy import body_names

    source = (
        "class Spec(Base):\n"
        "    page: int\n"
        "    size: int = 1\n"
        "    a = b = 2\n"
        "    self.c, (d, e) = 3, (4, 5)\n"
        "    def method(self): ...\n"
        "    async def later(self): ...\n"
        "    @property\n"
        "    def uses_layout(self): ...\n"
        "    class Inner: ...\n"
        "    if FLAG:\n"
        "        hidden = 1\n"
    )
    [node] = ast.parse(source).body
    assert body_names(node) == {
        "page",
        "size",
        "a",
        "b",
        "method",
        "later",
        "uses_layout",
    }


@pytest.mark.parametrize(
    "init, expected",
    [
        # __init__'s kv_cache_spec parameter, after self, among others.
        ("def __init__(self, layer, kv_cache_spec):", "m.Builder"),
        ("def __init__(self, kv_cache_spec, layer):", "m.Builder"),
        ("def __init__(self, *, kv_cache_spec):", "m.Builder"),
        # self itself named so is not the parameter; another method's is not.
        ("def __init__(kv_cache_spec, layer):", None),
        ("def build(self, kv_cache_spec):", None),
    ],
)
def test_a_builders_own_spec_is_its_init_parameter(init, expected):
    import libcst as cst

    from vllm_spec_lint.core.settings import Config
    from vllm_spec_lint.model.hierarchy import ClassHierarchy
    from vllm_spec_lint.model.own_spec import own_spec_class
    from vllm_spec_lint.model.semantic_model import SemanticModel
    from vllm_spec_lint.model.syntax import walk

    text = f"class Builder:\n    {init}\n        ok = kv_cache_spec\n"
    module = cst.parse_module(text)
    model = SemanticModel(
        module, text, families=Config().families, hierarchy=ClassHierarchy.default(),
        module_name="m",
    )  # fmt: skip
    read = [
        n
        for n in walk(module)
        if isinstance(n, cst.Name) and n.value == "kv_cache_spec"
    ][-1]
    assert own_spec_class(model, read) == expected


def test_a_walk_leaves_out_the_children_of_pruned_classes_only():
    from vllm_spec_lint.model.syntax import walk

    module = cst.parse_module(
        "def f(a=b):\n    c = 1\nd = lambda: e\ng = [h for h in i]\n"
    )
    pruned = frozenset({cst.FunctionDef, cst.ListComp})
    names = [n.value for n in walk(module, pruned) if isinstance(n, cst.Name)]
    # The pruned nodes themselves are walked (not their names, parameters
    # and body); a lambda is not pruned.
    assert names == ["d", "e", "g"]
    every = [n.value for n in walk(module) if isinstance(n, cst.Name)]
    assert every == ["f", "a", "b", "c", "d", "e", "g", "h", "h", "i"]


def _compared_by_exact_type() -> set[type]:
    """The libcst classes the package compares a node's class with:
    ``type(x) is cst.X``, the module-level sets of node classes looked up
    with ``type(x) in ...`` (or handed to walk() to prune) and the dicts
    looked up by a node's class."""
    import ast
    import importlib

    import vllm_spec_lint

    root = Path(vllm_spec_lint.__file__).parent
    found: set[type] = set()
    for path in sorted(root.rglob("*.py")):
        if path.name == "__main__.py":
            continue  # it runs the command line
        name = ".".join(path.relative_to(root.parent).with_suffix("").parts)
        module = importlib.import_module(name.removesuffix(".__init__"))
        for value in vars(module).values():
            # Sets of node classes, and dicts looked up by a node's class.
            if (
                isinstance(value, (frozenset, dict))
                and value
                and all(
                    isinstance(k, type) and issubclass(k, cst.CSTNode) for k in value
                )
            ):
                found |= set(value)
        tree = ast.parse(path.read_text())

        def is_type_call(node: ast.AST) -> bool:
            return (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Name)
                and node.func.id == "type"
            )

        # Names bound to a node's class (``kind = type(node)``).
        kinds = {
            target.id
            for node in ast.walk(tree)
            if isinstance(node, ast.Assign) and is_type_call(node.value)
            for target in node.targets
            if isinstance(target, ast.Name)
        }
        for node in ast.walk(tree):
            if isinstance(node, ast.Compare) and (
                is_type_call(node.left)
                or (isinstance(node.left, ast.Name) and node.left.id in kinds)
            ):
                for op, right in zip(node.ops, node.comparators, strict=True):
                    if isinstance(op, (ast.Is, ast.IsNot)) and (
                        isinstance(right, ast.Attribute)
                        and isinstance(right.value, ast.Name)
                        and right.value.id == "cst"
                    ):
                        found.add(getattr(cst, right.attr))
    return found


def test_every_libcst_class_compared_by_exact_type_has_no_subclass():
    # A node is an instance of a class only as that class itself: were
    # libcst to derive a node class from one of these, the exact comparison
    # would miss its nodes where isinstance() would not.
    compared = _compared_by_exact_type()
    assert {cst.FunctionDef, cst.Lambda, cst.ListComp, cst.Nonlocal} <= compared
    assert {cst.Param, cst.Call, cst.AssignTarget} <= compared
    assert [k.__name__ for k in compared if k.__subclasses__()] == []
