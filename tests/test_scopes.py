"""Name resolution (model/scopes.py) with every expected answer written out.

tests/test_scopes_positions.py holds the resolution against libcst's own
provider, which can only say that libcst's names are among ours; here each
name's full answer is pinned, and so is what a binding carries for the
fixes (its name, and the import statement and alias that made it)."""

from __future__ import annotations

import libcst as cst
import pytest

from vllm_spec_lint.model.scopes import Scopes
from vllm_spec_lint.model.syntax import parent_map

PROGRAM = """\
import vllm.v1.kv_cache_interface as kci
import vllm.config
from . import sibling
from .. import cousin
from ..pkg import Thing as Alias
from .mod import (First, Second)
from vllm.v1.kv_cache_interface import SlidingWindowMLASpec as SWMLA

del gone
seen = [kci, kci.MLAAttentionSpec, vllm, vllm.config.VllmConfig, sibling, cousin,
        Alias, First, Second, SWMLA, gone, len]

a = b = 0


def globals_declared_twice():
    global a
    global b
    a = b = 1
    return a, b


def unpacking(pairs):
    for head, *tail in pairs:
        pass
    [left, *rest] = pairs
    return head, tail, left, rest


def patterns(value):
    match value:
        case [*_]:
            pass
        case [one, *others]:
            return one, others
        case {"k": key, **extra}:
            return key, extra
        case {"k": key_only}:
            return key_only
"""


@pytest.fixture(scope="module")
def resolved():
    """Each Name/Attribute load's text -> its qualified names, per line."""
    module = cst.parse_module(PROGRAM)
    scopes = Scopes(module, parent_map(module))
    wrapper = cst.MetadataWrapper(module, unsafe_skip_copy=True)
    positions = wrapper.resolve(cst.metadata.PositionProvider)
    found: dict[tuple[int, str], set[str]] = {}
    for node, where in positions.items():
        if isinstance(node, (cst.Name, cst.Attribute)):
            key = (where.start.line, module.code_for_node(node))
            found.setdefault(key, scopes.qualified_names(node))
    return scopes, module, found


@pytest.mark.parametrize(
    "row, text, expected",
    [
        (10, "kci", {"vllm.v1.kv_cache_interface"}),
        (10, "kci.MLAAttentionSpec", {"vllm.v1.kv_cache_interface.MLAAttentionSpec"}),
        (10, "vllm", {"vllm"}),
        (10, "vllm.config.VllmConfig", {"vllm.config.VllmConfig"}),
        (10, "sibling", {".sibling"}),
        (10, "cousin", {"..cousin"}),
        (11, "Alias", {"..pkg.Thing"}),
        (11, "First", {".mod.First"}),
        (11, "Second", {".mod.Second"}),
        (11, "SWMLA", {"vllm.v1.kv_cache_interface.SlidingWindowMLASpec"}),
        # `del` binds the name in its scope, as libcst counts it.
        (11, "gone", {"gone"}),
        (11, "len", {"builtins.len"}),
        # Two `global` statements: both names are the module's.
        (20, "a", {"a"}),
        (20, "b", {"b"}),
        (27, "head", {"unpacking.<locals>.head"}),
        (27, "tail", {"unpacking.<locals>.tail"}),
        (27, "left", {"unpacking.<locals>.left"}),
        (27, "rest", {"unpacking.<locals>.rest"}),
        (35, "one", {"patterns.<locals>.one"}),
        (35, "others", {"patterns.<locals>.others"}),
        (37, "key", {"patterns.<locals>.key"}),
        (37, "extra", {"patterns.<locals>.extra"}),
        (39, "key_only", {"patterns.<locals>.key_only"}),
    ],
)
def test_each_name_resolves_to_exactly_its_bindings(resolved, row, text, expected):
    _, _, found = resolved
    assert found[(row, text)] == expected


def _function_scope(scopes, module, name):
    function = next(
        s
        for s in module.body
        if isinstance(s, cst.FunctionDef) and s.name.value == name
    )
    return scopes.scope(function.body)


def test_a_starred_wildcard_binds_nothing(resolved):
    scopes, module, _ = resolved
    scope = _function_scope(scopes, module, "patterns")
    assert scope.bindings.keys() == {
        "value", "one", "others", "key", "extra", "key_only",
    }  # fmt: skip


def test_a_plain_binding_carries_its_name_and_no_import(resolved):
    scopes, module, _ = resolved
    (binding,) = scopes.visible(scopes.scope(module.body[0]), "seen")
    assert (binding.name, binding.qualified) == ("seen", "seen")
    assert (binding.statement, binding.alias) == (None, None)


@pytest.mark.parametrize(
    "name, row, alias",
    [
        ("kci", 1, "vllm.v1.kv_cache_interface as kci"),
        ("vllm", 2, "vllm.config"),
        ("sibling", 3, "sibling"),
        ("Alias", 5, "Thing as Alias"),
        ("Second", 6, "Second"),
        ("SWMLA", 7, "SlidingWindowMLASpec as SWMLA"),
    ],
)
def test_an_import_binding_carries_its_statement_and_alias(resolved, name, row, alias):
    scopes, module, _ = resolved
    (binding,) = scopes.visible(scopes.scope(module.body[0]), name)
    assert binding.name == name
    assert binding.statement is module.body[row - 1].body[0]
    assert module.code_for_node(binding.alias).rstrip(", ") == alias


def test_visible_imports_are_the_import_bindings_of_every_enclosing_scope(resolved):
    scopes, module, _ = resolved
    inner = _function_scope(scopes, module, "unpacking")
    names = sorted(b.name for b in scopes.visible_imports(inner))
    assert names == [
        "Alias", "First", "SWMLA", "Second", "cousin", "kci", "sibling", "vllm",
    ]  # fmt: skip
