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


def _resolved(program: str, key):
    """The program's scopes and module, and each Name/Attribute's qualified
    names by ``key(node, where)`` (the first node wins a shared key)."""
    module = cst.parse_module(program)
    scopes = Scopes(module, parent_map(module))
    wrapper = cst.MetadataWrapper(module, unsafe_skip_copy=True)
    positions = wrapper.resolve(cst.metadata.PositionProvider)
    found: dict = {}
    for node, where in positions.items():
        if isinstance(node, (cst.Name, cst.Attribute)):
            found.setdefault(key(module, node, where), scopes.qualified_names(node))
    return scopes, module, found


# Function-scoped fixtures: mutmut counts a test for the functions it reaches
# from its setup on, so each test resolves the names itself.
@pytest.fixture
def resolved():
    """Names by (row, text)."""
    return _resolved(
        PROGRAM,
        lambda module, node, where: (where.start.line, module.code_for_node(node)),
    )


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


SCOPING = """\
from vllm.v1.kv_cache_interface import MLAAttentionSpec as M


def defaults(a=M, *, b: M = None, M=M):
    return M


def outer():
    inner_m = 1

    def inner(x=inner_m, f=lambda y=inner_m: y):
        return x

    return inner


nested = [(a, c) for a in M for c in a]
walrus = [(total := total + n) for n in M]
calls = [g(seen := n) for n in M if [inner := n for n in M]]
shadow = [M for M in M]


class Holder:
    M = 2
    rows = [M for _ in range(3)]

    def method(self):
        return M
"""


@pytest.fixture
def scoping():
    """Plain names by (row, column): an Attribute starts where its base does."""
    return _resolved(
        SCOPING,
        lambda module, node, where: (
            (where.start.line, where.start.column)
            if isinstance(node, cst.Name)
            else None
        ),
    )


@pytest.mark.parametrize(
    "row, column, expected",
    [
        # Defaults and annotations are evaluated where the function is defined.
        (4, 15, {"vllm.v1.kv_cache_interface.MLAAttentionSpec"}),
        (4, 24, {"vllm.v1.kv_cache_interface.MLAAttentionSpec"}),
        (4, 36, {"vllm.v1.kv_cache_interface.MLAAttentionSpec"}),
        # The parameter's own name, and the name in the body, are the function's.
        (4, 34, {"defaults.<locals>.M"}),
        (5, 11, {"defaults.<locals>.M"}),
        # A nested function's and a lambda's defaults: the enclosing function's.
        (11, 16, {"outer.<locals>.inner_m"}),
        (11, 36, {"outer.<locals>.inner_m"}),
        (11, 45, {"outer.<locals>.<locals>.y"}),  # as libcst names it
        # Every `for` of a comprehension binds in it; the first iterable is
        # evaluated outside it, the later ones inside.
        (17, 11, {"<comprehension>.a"}),
        (17, 14, {"<comprehension>.c"}),
        (17, 26, {"vllm.v1.kv_cache_interface.MLAAttentionSpec"}),
        (17, 37, {"<comprehension>.a"}),
        # An assignment expression in a comprehension binds in the scope
        # around it (PEP 572; libcst binds it in the comprehension), also
        # from a comprehension nested in it.
        (18, 11, {"total"}),
        (18, 20, {"total"}),
        (19, 11, {"seen"}),
        (19, 37, {"inner"}),
        (20, 10, {"<comprehension>.M"}),
        (20, 21, {"vllm.v1.kv_cache_interface.MLAAttentionSpec"}),
        # A class body's names are not seen from its comprehensions or methods.
        (25, 12, {"vllm.v1.kv_cache_interface.MLAAttentionSpec"}),
        (28, 15, {"vllm.v1.kv_cache_interface.MLAAttentionSpec"}),
    ],
)
def test_each_scope_rule_of_python(scoping, row, column, expected):
    _, _, found = scoping
    assert found[(row, column)] == expected


def test_a_scope_is_collected_once_and_kept(scoping):
    scopes, module, _ = scoping
    function = module.body[1]
    assert scopes.scope(function.body) is scopes.scope(function.body)
    assert scopes.scope(module.body[0]) is scopes.scope(module.body[2])


BINDING_FORMS = """\
shared = 1


def lambdas():
    make = lambda: (made := 1) and made
    return make, made


def augmented():
    total += 1
    return total


def closures():
    a = b = c = d = 0

    def inner():
        nonlocal d, a
        a = 1

    def other():
        nonlocal c

    return a, b, c, d, shared
"""


@pytest.mark.parametrize(
    "row, column, expected",
    [
        # An assignment expression in a lambda binds in the lambda.
        (5, 20, {"lambdas.<locals>.<locals>.made"}),
        (5, 35, {"lambdas.<locals>.<locals>.made"}),
        (6, 17, set()),
        # An augmented assignment binds in its function.
        (10, 4, {"augmented.<locals>.total"}),
        (11, 11, {"augmented.<locals>.total"}),
    ],
)
def test_a_lambdas_walrus_and_an_augmented_assignment_bind_where_python_does(
    row, column, expected
):
    _, _, found = _resolved(
        BINDING_FORMS,
        lambda module, node, where: (
            (where.start.line, where.start.column)
            if isinstance(node, cst.Name)
            else None
        ),
    )
    assert found[(row, column)] == expected


def test_a_variable_is_rebound_elsewhere_when_an_inner_function_says_nonlocal():
    scopes, module, _ = _resolved(BINDING_FORMS, lambda module, node, where: None)
    returned = module.body[3].body.body[-1].body[0].value
    # Asked in this order: each name's answer is its own.
    answers = {
        element.value.value: scopes.rebound_elsewhere(
            element.value, element.value.value
        )
        for element in returned.elements
    }
    # a: one of two names declared nonlocal; b: in no declaration; c: the
    # only one; d: the first of two; a module-level name read in a function:
    # any call may rebind it.
    assert answers == {"a": True, "b": False, "c": True, "d": True, "shared": True}
