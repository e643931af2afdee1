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
from vllm_spec_lint.model.syntax import target_key


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
